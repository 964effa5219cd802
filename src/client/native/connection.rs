//! One connection of the native sender.
//!
//! A request is framed straight into the connection's output buffer under a short lock, with
//! a stream id from a free list; the connection's writer task sends whatever the buffer holds
//! in one write, so a burst of requests leaves in one system call. The reader task reads
//! answers in large chunks, matches them to their requests by stream id, and wakes the
//! requests it completed once per read. No allocation, channel or timer per request.
//!
//! A request dropped before its answer (the engine's own timeout) leaves its stream id
//! abandoned until the answer comes, so that a late answer never completes a newer request.
//! When the connection breaks, every request waiting on it ends with a connection error, and
//! new ones fail at once.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use scylla::errors::{ConnectionError, ConnectionPoolError, ExecutionError, RequestAttemptError};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

use super::frame::{self, opcode, Header, HEADER};
use crate::client::tls::TlsClient;

/// Stream ids a v4 connection has (0..=32767; negative ones are the server's events).
const STREAMS: usize = 32_768;

/// What became of a request: for a request that asked for it, the body of its RESULT (after
/// the tracing id, warnings and custom payload).
type Outcome = Result<Option<Vec<u8>>, Box<ExecutionError>>;

/// An answer as read, before it is handed to its request: a RESULT's body proper (where it
/// lies in the read buffer), or an error.
enum Raw {
    Result(std::ops::Range<usize>),
    Failed(Box<ExecutionError>),
}

/// One stream id's state.
enum Slot {
    Free,
    /// Sent; the waker of the request's last poll, and whether the request reads the
    /// answer's body (only then is it copied out of the read buffer).
    Waiting(Option<Waker>, bool),
    /// The request was dropped before its answer: the id is reused once the answer comes.
    Abandoned,
    /// Answered; the request takes the outcome at its next poll.
    Done(Outcome),
}

struct Shared {
    /// Frames not yet handed to the writer.
    out: Vec<u8>,
    /// By stream id; grows up to [`STREAMS`] as more requests are in flight at once.
    slots: Vec<Slot>,
    free: Vec<i16>,
    /// Why the connection ended, once it has.
    broken: Option<String>,
}

/// A CQL connection to one node.
pub(crate) struct Connection {
    address: SocketAddr,
    /// Whether the node asked for credentials when the connection started.
    pub(crate) asked_for_credentials: bool,
    shared: Mutex<Shared>,
    /// Wakes the writer when the output buffer stops being empty.
    flush: Notify,
}

/// Why a connection could not be opened.
pub(crate) type OpenError = String;

impl Connection {
    /// Connects to `address` (over TLS with `tls`), starts CQL (v4, no compression) and
    /// authenticates with `credentials` when the node asks for them; spawns the reader and
    /// writer on the current tokio runtime.
    pub(crate) async fn open(
        address: SocketAddr,
        credentials: Option<&(String, String)>,
        tls: Option<&TlsClient>,
        connect_timeout: Duration,
    ) -> Result<Arc<Connection>, OpenError> {
        let set_up = async {
            let socket = TcpStream::connect(address)
                .await
                .map_err(|e| format!("connecting to {address}: {e}"))?;
            socket
                .set_nodelay(true)
                .map_err(|e| format!("TCP_NODELAY on {address}: {e}"))?;
            match tls {
                None => {
                    let mut socket = socket;
                    let asked = start(&mut socket, address, credentials).await?;
                    Ok::<_, String>((Opened::Plain(socket), asked))
                }
                Some(tls) => {
                    let mut socket = tls
                        .connect(address, socket)
                        .await
                        .map_err(|e| format!("TLS handshake with {address}: {e}"))?;
                    let asked = start(&mut socket, address, credentials).await?;
                    Ok((Opened::Tls(Box::new(socket)), asked))
                }
            }
        };
        let (opened, asked_for_credentials) = tokio::time::timeout(connect_timeout, set_up)
            .await
            .map_err(|_| format!("{address}: no answer within {connect_timeout:?}"))??;
        let connection = Arc::new(Connection {
            address,
            asked_for_credentials,
            shared: Mutex::new(Shared {
                out: Vec::with_capacity(1 << 16),
                slots: Vec::new(),
                free: Vec::new(),
                broken: None,
            }),
            flush: Notify::new(),
        });
        match opened {
            Opened::Plain(socket) => {
                let (reader, writer) = socket.into_split();
                tokio::spawn(read(connection.clone(), reader));
                tokio::spawn(write(connection.clone(), writer));
            }
            Opened::Tls(socket) => {
                let (reader, writer) = tokio::io::split(*socket);
                tokio::spawn(read(connection.clone(), reader));
                tokio::spawn(write(connection.clone(), writer));
            }
        }
        Ok(connection)
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // A panic while holding the lock leaves nothing half-done that a request could see.
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends one request: `build` appends its frame for the given stream id. The returned
    /// future ends with the answer; with `wants_body`, with a RESULT's body.
    pub(crate) fn send(
        self: &Arc<Self>,
        wants_body: bool,
        build: impl FnOnce(&mut Vec<u8>, i16) -> Result<(), Box<ExecutionError>>,
    ) -> Result<Pending, Box<ExecutionError>> {
        let mut shared = self.lock();
        if let Some(why) = &shared.broken {
            return Err(Box::new(broken(self.address, why)));
        }
        let stream = match shared.free.pop() {
            Some(stream) => stream,
            None if shared.slots.len() < STREAMS => {
                shared.slots.push(Slot::Free);
                (shared.slots.len() - 1) as i16
            }
            None => {
                return Err(Box::new(ExecutionError::LastAttemptError(
                    RequestAttemptError::UnableToAllocStreamId,
                )))
            }
        };
        let was_empty = shared.out.is_empty();
        let mark = shared.out.len();
        if let Err(e) = build(&mut shared.out, stream) {
            shared.out.truncate(mark);
            shared.free.push(stream);
            return Err(e);
        }
        shared.slots[stream as usize] = Slot::Waiting(None, wants_body);
        drop(shared);
        if was_empty {
            self.flush.notify_one();
        }
        Ok(Pending {
            connection: self.clone(),
            stream,
            finished: false,
        })
    }

    /// Closes the connection: the writer stops and shuts its side down; the node then
    /// closes its side, which ends the reader.
    pub(crate) fn close(&self) {
        self.fail("closed at the end of the run".into());
    }

    /// Whether the connection has ended.
    pub(crate) fn is_broken(&self) -> bool {
        self.lock().broken.is_some()
    }

    /// Ends the connection: every waiting request fails with `why`, and so will new ones.
    fn fail(&self, why: String) {
        let mut wakers = Vec::new();
        let mut shared = self.lock();
        let Shared {
            slots,
            free,
            broken: was,
            ..
        } = &mut *shared;
        if was.is_some() {
            return;
        }
        for (stream, slot) in slots.iter_mut().enumerate() {
            match slot {
                Slot::Waiting(waker, _) => {
                    wakers.extend(waker.take());
                    *slot = Slot::Done(Err(Box::new(broken(self.address, &why))));
                }
                Slot::Abandoned => {
                    *slot = Slot::Free;
                    free.push(stream as i16);
                }
                Slot::Free | Slot::Done(_) => {}
            }
        }
        *was = Some(why);
        drop(shared);
        self.flush.notify_one();
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Hands answers to their requests; a RESULT's body is copied out of `buffer` for the
    /// requests that read it.
    fn complete(&self, answers: &mut Vec<(i16, Raw)>, buffer: &[u8], wakers: &mut Vec<Waker>) {
        let mut shared = self.lock();
        let Shared { slots, free, .. } = &mut *shared;
        for (stream, raw) in answers.drain(..) {
            let Some(slot) = slots.get_mut(stream as usize) else {
                continue;
            };
            match slot {
                Slot::Waiting(waker, wants_body) => {
                    wakers.extend(waker.take());
                    let outcome = match raw {
                        Raw::Result(body) => Ok(wants_body.then(|| buffer[body].to_vec())),
                        Raw::Failed(e) => Err(e),
                    };
                    *slot = Slot::Done(outcome);
                }
                Slot::Abandoned => {
                    *slot = Slot::Free;
                    free.push(stream);
                }
                // An answer for no request (a protocol error on the server's side): ignored.
                Slot::Free | Slot::Done(_) => {}
            }
        }
        drop(shared);
        wakers.drain(..).for_each(Waker::wake);
    }
}

/// The error of a request on a broken connection.
fn broken(address: SocketAddr, why: &str) -> ExecutionError {
    ExecutionError::ConnectionPoolError(ConnectionPoolError::Broken {
        last_connection_error: ConnectionError::IoError(Arc::new(std::io::Error::other(format!(
            "the connection to {address} ended: {why}"
        )))),
    })
}

/// A connection whose CQL set-up is done, over plain TCP or TLS.
enum Opened {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

/// Starts CQL on `socket`: STARTUP, and the credentials when the node asks for them;
/// whether it asked.
async fn start<S: AsyncRead + AsyncWrite + Unpin>(
    socket: &mut S,
    address: SocketAddr,
    credentials: Option<&(String, String)>,
) -> Result<bool, String> {
    let mut out = Vec::new();
    frame::startup(&mut out);
    let (header, body) = exchange(socket, &out).await?;
    match header.opcode {
        opcode::READY => Ok(false),
        opcode::AUTHENTICATE => {
            let Some((user, password)) = credentials else {
                return Err(format!(
                    "{address} requires authentication: give --username and --password"
                ));
            };
            out.clear();
            frame::auth_response(&mut out, user, password);
            let (header, body) = exchange(socket, &out).await?;
            if header.opcode != opcode::AUTH_SUCCESS {
                return Err(refused(address, "the credentials", header, &body));
            }
            Ok(true)
        }
        _ => Err(refused(address, "STARTUP", header, &body)),
    }
}

/// Why a node's answer to `what` was not the one set-up needs: its error, or its opcode.
fn refused(address: SocketAddr, what: &str, header: Header, body: &[u8]) -> String {
    match header.opcode {
        opcode::ERROR => format!("{address} refused {what}: {}", frame::error_message(body)),
        other => format!("{address} answered {what} with opcode {other:#04x}"),
    }
}

/// Writes a set-up request and reads its answer.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    socket: &mut S,
    request: &[u8],
) -> Result<(Header, Vec<u8>), String> {
    socket
        .write_all(request)
        .await
        .map_err(|e| format!("writing to the node: {e}"))?;
    let mut head = [0u8; HEADER];
    socket
        .read_exact(&mut head)
        .await
        .map_err(|e| format!("reading from the node: {e}"))?;
    let header = Header::parse(&head);
    let mut body = vec![0; header.length];
    socket
        .read_exact(&mut body)
        .await
        .map_err(|e| format!("reading from the node: {e}"))?;
    let body = frame::body_proper(header.flags, &body).to_vec();
    Ok((header, body))
}

/// Sends what the requests framed, one write per batch.
async fn write(connection: Arc<Connection>, mut socket: impl AsyncWrite + Unpin) {
    let mut batch = Vec::with_capacity(1 << 16);
    loop {
        connection.flush.notified().await;
        {
            let mut shared = connection.lock();
            if shared.broken.is_some() {
                return;
            }
            std::mem::swap(&mut shared.out, &mut batch);
        }
        if batch.is_empty() {
            continue;
        }
        if let Err(e) = socket.write_all(&batch).await {
            connection.fail(format!("writing: {e}"));
            return;
        }
        batch.clear();
    }
}

/// Reads answers and completes their requests until the connection ends.
async fn read(connection: Arc<Connection>, mut socket: impl AsyncRead + Unpin) {
    let mut buffer = vec![0u8; 1 << 16];
    let (mut start, mut end) = (0usize, 0usize);
    let mut answers = Vec::new();
    let mut wakers = Vec::new();
    let why = loop {
        // Room for the frame being read (its header says how long it is).
        let need = if end - start >= HEADER {
            HEADER + Header::parse(&buffer[start..]).length
        } else {
            HEADER
        };
        if start + need > buffer.len() || end == buffer.len() {
            buffer.copy_within(start..end, 0);
            end -= start;
            start = 0;
            if need > buffer.len() {
                buffer.resize(need.next_power_of_two(), 0);
            }
        }
        match socket.read(&mut buffer[end..]).await {
            Ok(0) => break "the node closed it".to_string(),
            Ok(n) => end += n,
            Err(e) => break format!("reading: {e}"),
        }
        while end - start >= HEADER {
            let header = Header::parse(&buffer[start..]);
            let frame_end = start + HEADER + header.length;
            if frame_end > end {
                break;
            }
            // Negative stream ids carry events the sender did not register for.
            if header.stream >= 0 {
                let whole = &buffer[start + HEADER..frame_end];
                let body = frame::body_proper(header.flags, whole);
                let raw = match header.opcode {
                    opcode::RESULT => Raw::Result(frame_end - body.len()..frame_end),
                    opcode::ERROR => Raw::Failed(Box::new(frame::error_of(body))),
                    other => Raw::Failed(Box::new(frame::protocol_error(format!(
                        "an answer with opcode {other:#04x} to a request"
                    )))),
                };
                answers.push((header.stream, raw));
            }
            start = frame_end;
        }
        if !answers.is_empty() {
            connection.complete(&mut answers, &buffer, &mut wakers);
        }
        if start == end {
            (start, end) = (0, 0);
        }
    };
    connection.fail(why);
}

/// A request sent on a connection, until its answer.
pub(crate) struct Pending {
    connection: Arc<Connection>,
    stream: i16,
    finished: bool,
}

impl Future for Pending {
    type Output = Result<Option<Vec<u8>>, ExecutionError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut shared = this.connection.lock();
        let Shared { slots, free, .. } = &mut *shared;
        let slot = &mut slots[this.stream as usize];
        match slot {
            Slot::Waiting(waker, _) => {
                if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
            Slot::Done(_) => {
                let Slot::Done(outcome) = std::mem::replace(slot, Slot::Free) else {
                    unreachable!("matched Done");
                };
                free.push(this.stream);
                this.finished = true;
                Poll::Ready(outcome.map_err(|e| *e))
            }
            Slot::Free | Slot::Abandoned => unreachable!("a pending request owns its slot"),
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let mut shared = self.connection.lock();
        let Shared { slots, free, .. } = &mut *shared;
        let slot = &mut slots[self.stream as usize];
        match slot {
            Slot::Waiting(..) => *slot = Slot::Abandoned,
            Slot::Done(_) => {
                *slot = Slot::Free;
                free.push(self.stream);
            }
            Slot::Free | Slot::Abandoned => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::ErrorClass;
    use scylla::statement::Consistency;
    use tokio::net::TcpListener;

    /// Reads one frame from a stand-in node's socket: (header, body); None at the end.
    async fn next_frame(socket: &mut TcpStream) -> Option<(Header, Vec<u8>)> {
        let mut head = [0u8; HEADER];
        socket.read_exact(&mut head).await.ok()?;
        let header = Header::parse(&head);
        let mut body = vec![0; header.length];
        socket.read_exact(&mut body).await.ok()?;
        Some((header, body))
    }

    /// An answer frame (a response's version byte is 0x84).
    fn answer(stream: i16, opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let at = frame::begin(&mut out, stream, opcode);
        out[0] = 0x84;
        out.extend_from_slice(body);
        frame::end(&mut out, at);
        out
    }

    /// A RESULT of kind Void.
    fn void(stream: i16) -> Vec<u8> {
        answer(stream, opcode::RESULT, &1u32.to_be_bytes())
    }

    /// An ERROR Overloaded.
    fn overloaded(stream: i16) -> Vec<u8> {
        let mut body = 0x1001u32.to_be_bytes().to_vec();
        body.extend_from_slice(&4u16.to_be_bytes());
        body.extend_from_slice(b"busy");
        answer(stream, opcode::ERROR, &body)
    }

    /// A stand-in node on loopback that answers STARTUP with READY, then hands the socket to
    /// `script`.
    async fn node<F, Fut>(script: F) -> SocketAddr
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let (header, _) = next_frame(&mut socket).await.unwrap();
            assert_eq!(header.opcode, opcode::STARTUP);
            socket
                .write_all(&answer(0, opcode::READY, &[]))
                .await
                .unwrap();
            script(socket).await;
        });
        address
    }

    async fn open(address: SocketAddr) -> Arc<Connection> {
        Connection::open(address, None, None, Duration::from_secs(5))
            .await
            .unwrap()
    }

    fn execute(connection: &Arc<Connection>) -> Pending {
        connection
            .send(false, |out, stream| {
                let body = frame::execute_begin(out, stream, b"id", Consistency::One, None, None);
                out.extend_from_slice(&[0, 0]);
                frame::end(out, body);
                Ok(())
            })
            .unwrap()
    }

    fn class(result: Result<Option<Vec<u8>>, ExecutionError>) -> Option<ErrorClass> {
        result.err().map(|e| ErrorClass::of(&e))
    }

    #[tokio::test]
    async fn answers_find_their_requests_whatever_their_order() {
        let address = node(|mut socket| async move {
            let mut streams = Vec::new();
            for _ in 0..3 {
                let (header, body) = next_frame(&mut socket).await.unwrap();
                assert_eq!(header.opcode, opcode::EXECUTE);
                assert_eq!(&body[..4], &[0, 2, b'i', b'd']);
                streams.push(header.stream);
            }
            // Last first; the second request fails.
            let mut out = void(streams[2]);
            out.extend(overloaded(streams[1]));
            out.extend(void(streams[0]));
            socket.write_all(&out).await.unwrap();
            let _ = next_frame(&mut socket).await;
        })
        .await;
        let connection = open(address).await;
        let (a, b, c) = (
            execute(&connection),
            execute(&connection),
            execute(&connection),
        );
        let (a, b, c) = tokio::join!(a, b, c);
        assert_eq!(class(a), None);
        assert_eq!(class(b), Some(ErrorClass::Overloaded));
        assert_eq!(class(c), None);
        connection.close();
    }

    #[tokio::test]
    async fn a_dropped_request_keeps_its_stream_id_until_its_answer_comes() {
        let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
        let address = node(move |mut socket| async move {
            let (first, _) = next_frame(&mut socket).await.unwrap();
            let (second, _) = next_frame(&mut socket).await.unwrap();
            seen_tx.send((first.stream, second.stream)).unwrap();
            // The dropped request's answer (an error) comes first: it must not end the other.
            let mut out = overloaded(first.stream);
            out.extend(void(second.stream));
            socket.write_all(&out).await.unwrap();
            let (third, _) = next_frame(&mut socket).await.unwrap();
            seen_tx.send((third.stream, third.stream)).unwrap();
            socket.write_all(&void(third.stream)).await.unwrap();
            let _ = next_frame(&mut socket).await;
        })
        .await;
        let connection = open(address).await;
        let mut dropped = execute(&connection);
        // Polled once, as the engine does before a request times out, then dropped.
        assert!(futures::poll!(&mut dropped).is_pending());
        drop(dropped);
        let second = execute(&connection);
        assert_eq!(
            class(second.await),
            None,
            "the late error is not the new request's"
        );
        let (first, second) = seen.recv().await.unwrap();
        assert_ne!(
            first, second,
            "an abandoned stream id is not reused before its answer"
        );
        assert_eq!(class(execute(&connection).await), None);
        let (third, _) = seen.recv().await.unwrap();
        assert!(
            third == first || third == second,
            "answered stream ids are reused"
        );
        connection.close();
    }

    #[tokio::test]
    async fn a_broken_connection_fails_its_requests_and_the_next_ones() {
        let address = node(|mut socket| async move {
            next_frame(&mut socket).await.unwrap();
            // Closed with the request unanswered.
        })
        .await;
        let connection = open(address).await;
        assert_eq!(
            class(execute(&connection).await),
            Some(ErrorClass::Connection)
        );
        let next = connection.send(false, |_, _| Ok(()));
        let error = next.err().expect("a broken connection takes no request");
        assert_eq!(ErrorClass::of(&error), ErrorClass::Connection);
        assert!(
            error.to_string().contains(&address.to_string()),
            "names the node: {error}"
        );
    }

    #[tokio::test]
    async fn password_authentication() {
        let listen = || async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            tokio::spawn(async move {
                loop {
                    let (mut socket, _) = listener.accept().await.unwrap();
                    tokio::spawn(async move {
                        next_frame(&mut socket).await.unwrap();
                        let mut body = Vec::new();
                        let class = "org.apache.cassandra.auth.PasswordAuthenticator";
                        body.extend_from_slice(&(class.len() as u16).to_be_bytes());
                        body.extend_from_slice(class.as_bytes());
                        socket
                            .write_all(&answer(0, opcode::AUTHENTICATE, &body))
                            .await
                            .unwrap();
                        let Some((header, body)) = next_frame(&mut socket).await else {
                            return;
                        };
                        assert_eq!(header.opcode, opcode::AUTH_RESPONSE);
                        let reply = if body[4..] == *b"\0alice\0secret" {
                            answer(0, opcode::AUTH_SUCCESS, &(-1i32).to_be_bytes())
                        } else {
                            let mut error = 0x0100u32.to_be_bytes().to_vec();
                            error.extend_from_slice(&5u16.to_be_bytes());
                            error.extend_from_slice(b"wrong");
                            answer(0, opcode::ERROR, &error)
                        };
                        socket.write_all(&reply).await.unwrap();
                        let _ = next_frame(&mut socket).await;
                    });
                }
            });
            address
        };
        let address = listen().await;
        let timeout = Duration::from_secs(5);
        let missing = Connection::open(address, None, None, timeout)
            .await
            .err()
            .unwrap();
        assert!(missing.contains("--username"), "{missing}");
        let wrong = ("alice".to_string(), "guess".to_string());
        let refused = Connection::open(address, Some(&wrong), None, timeout)
            .await
            .err()
            .unwrap();
        assert!(refused.contains("refused the credentials"), "{refused}");
        let right = ("alice".to_string(), "secret".to_string());
        let connection = Connection::open(address, Some(&right), None, timeout)
            .await
            .unwrap();
        connection.close();
    }
}
