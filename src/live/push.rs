//! `--metrics-push URL`: the Pushgateway protocol, for runs too short to scrape. Each push is
//! an HTTP `PUT` of the whole state in the Prometheus text format to
//! `URL/metrics/job/headroom/run/<run>/worker/<worker>` (the label values base64url-encoded,
//! as the gateway reads `@base64`), so each worker of a fleet keeps a group of its own and
//! a push replaces its group's previous one. Plain HTTP only: a gateway behind TLS is
//! reached through a proxy of the user's.

use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{CONTENT_TYPE, HOST};
use hyper::Request;
use hyper_util::rt::TokioIo;

use super::openmetrics::PROMETHEUS_TEXT_TYPE;
use super::state::Labels;
use crate::usage::UsageError;

/// How long one push may take.
pub const PUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// Where pushes go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushTarget {
    /// Host name or address, as given.
    pub host: String,
    /// The port (80 when the URL names none).
    pub port: u16,
    /// The group's path: the URL's own path, then `/metrics/job/headroom/...`.
    pub path: String,
    /// The URL as given, for messages.
    pub url: String,
}

impl PushTarget {
    /// Reads `--metrics-push`'s URL: `http://HOST[:PORT][/PATH]`.
    pub fn parse(url: &str, labels: &Labels) -> Result<PushTarget, UsageError> {
        let bad = |why: &str| {
            UsageError::new(format!(
                "--metrics-push {url}: {why}; give the Pushgateway's address, e.g. http://127.0.0.1:9091"
            ))
        };
        let rest = match url.split_once("://") {
            Some(("http", rest)) => rest,
            Some(("https", _)) => return Err(bad("https is not supported (plain HTTP only)")),
            Some((scheme, _)) => return Err(bad(&format!("{scheme}:// is not HTTP"))),
            None => return Err(bad("not a URL")),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(bad("no host"));
        }
        if path.contains(['?', '#']) {
            return Err(bad("a query or fragment has no place here"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
                let port: u16 = port
                    .parse()
                    .map_err(|_| bad(&format!("port {port:?} is not a port")))?;
                (host.to_string(), port)
            }
            _ => (authority.to_string(), 80),
        };
        if host.is_empty() || port == 0 {
            return Err(bad("no host or port"));
        }
        if host.chars().any(|c| c.is_whitespace() || c.is_control())
            || path.contains(char::is_whitespace)
        {
            return Err(bad("a space has no place in a URL"));
        }
        let encode = |v: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        Ok(PushTarget {
            host,
            port,
            path: format!(
                "{path}/metrics/job/headroom/run@base64/{}/worker@base64/{}",
                encode(&labels.run),
                encode(&labels.worker)
            ),
            url: url.to_string(),
        })
    }

    /// For messages.
    pub fn describe(&self) -> String {
        self.url.clone()
    }

    /// One push of `body`: replaces the group's metrics.
    pub async fn push(&self, body: String) -> Result<(), String> {
        tokio::time::timeout(PUSH_TIMEOUT, self.put(body))
            .await
            .map_err(|_| format!("no answer within {} s", PUSH_TIMEOUT.as_secs()))?
    }

    async fn put(&self, body: String) -> Result<(), String> {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        let stream = tokio::net::TcpStream::connect((host, self.port))
            .await
            .map_err(|e| format!("cannot connect to {}:{}: {e}", self.host, self.port))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        let request = Request::put(self.path.as_str())
            .header(HOST, format!("{}:{}", self.host, self.port))
            .header(CONTENT_TYPE, PROMETHEUS_TEXT_TYPE)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let text = response
            .into_body()
            .collect()
            .await
            .map(|b| String::from_utf8_lossy(&b.to_bytes()).trim().to_string())
            .unwrap_or_default();
        Err(format!("the gateway answered {status}: {text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Labels {
        Labels {
            run: "trial one".to_string(),
            workload: "keyvalue".to_string(),
            worker: "1/2".to_string(),
        }
    }

    #[test]
    fn a_url_becomes_the_groups_path() {
        let t = PushTarget::parse("http://127.0.0.1:9091", &labels()).unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 9091));
        assert_eq!(
            t.path,
            "/metrics/job/headroom/run@base64/dHJpYWwgb25l/worker@base64/MS8y"
        );
        let t = PushTarget::parse("http://gw.example/prefix/", &labels()).unwrap();
        assert_eq!((t.host.as_str(), t.port), ("gw.example", 80));
        assert!(t.path.starts_with("/prefix/metrics/job/headroom/"));
        let t = PushTarget::parse("http://[::1]:9091", &labels()).unwrap();
        assert_eq!((t.host.as_str(), t.port), ("[::1]", 9091));
    }

    #[test]
    fn what_is_not_an_http_url_is_refused() {
        for url in [
            "127.0.0.1:9091",
            "https://gw:9091",
            "ftp://gw",
            "http://",
            "http://gw:x",
            "http://gw:0",
            "http://gw/a?b=1",
            "http://g w:9091",
            "http://gw:9091/a b",
        ] {
            assert!(PushTarget::parse(url, &labels()).is_err(), "{url}");
        }
    }
}
