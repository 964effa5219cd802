//! What answers at a contact point that the driver could not connect to: asked once, with a
//! CQL OPTIONS frame, so that a server of another protocol (an HTTP server, a node's JMX or
//! storage port) is named as such, not reported as silent.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// OPTIONS, protocol v4, stream 0, no body: every CQL server answers it with SUPPORTED.
const OPTIONS_V4: [u8; 9] = [0x04, 0, 0, 0, 0x05, 0, 0, 0, 0];

/// What the server at `host` (host:port) is, when it is not a CQL server: `Some` reason
/// when it answered in something other than CQL or closed the connection without a word;
/// `None` when it answered CQL, nothing listens, or it stayed silent within `timeout`.
pub async fn not_cql(host: &str, timeout: Duration) -> Option<String> {
    let attempt = async {
        let address = tokio::net::lookup_host(host).await.ok()?.next()?;
        let mut socket = tokio::net::TcpStream::connect(address).await.ok()?;
        socket.write_all(&OPTIONS_V4).await.ok()?;
        let mut answer = [0u8; 64];
        let n = socket.read(&mut answer).await.ok()?;
        Some(answer[..n].to_vec())
    };
    let answer = tokio::time::timeout(timeout, attempt).await.ok()??;
    describe(host, &answer)
}

/// What `answer`, the first bytes `host` sent back to OPTIONS, says about it.
fn describe(host: &str, answer: &[u8]) -> Option<String> {
    match answer.first() {
        None => Some(format!(
            "{host} took the connection and closed it without a CQL answer; give the node's \
             CQL port (9042 by default)"
        )),
        // A response frame of protocol v3 to v6 (0x80 | version): CQL.
        Some(0x83..=0x86) => None,
        Some(_) => {
            let text: String = answer
                .iter()
                .take(24)
                .map(|&b| {
                    if b.is_ascii_graphic() || b == b' ' {
                        b as char
                    } else {
                        '.'
                    }
                })
                .collect();
            Some(format!(
                "{host} answered at once, but not in CQL (it sent \"{text}\"): it is another \
                 kind of server; give the node's CQL port (9042 by default)"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_told_apart() {
        assert_eq!(describe("h:1", &[0x84, 0, 0, 0, 0x06]), None);
        let http = describe("h:80", b"HTTP/1.0 400 Bad request\r\n").unwrap();
        assert!(
            http.contains("not in CQL (it sent \"HTTP/1.0 400 Bad reque"),
            "{http}"
        );
        let closed = describe("h:1", b"").unwrap();
        assert!(
            closed.contains("closed it without a CQL answer"),
            "{closed}"
        );
    }

    #[tokio::test]
    async fn a_server_of_another_protocol_is_named() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let host = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 9];
            let _ = socket.read_exact(&mut request).await;
            socket
                .write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n")
                .await
                .unwrap();
        });
        let why = not_cql(&host, Duration::from_secs(2)).await.unwrap();
        assert!(why.contains("answered at once, but not in CQL"), "{why}");
        // Nothing listens: not this module's to say.
        assert_eq!(not_cql("127.0.0.1:1", Duration::from_secs(1)).await, None);
    }
}
