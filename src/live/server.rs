//! The live thread: one thread of its own with a current-thread runtime, serving `/metrics`
//! and the live page over HTTP/1.1 (hyper) and pushing to a Pushgateway, so that neither a
//! slow scraper nor a slow gateway ever holds up the run's control thread. It reads the
//! shared [`State`] under its lock, one request at a time; the page is rendered outside it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::{mpsc, oneshot, watch};

use super::openmetrics::{Families, OPENMETRICS_TYPE, PROMETHEUS_TEXT_TYPE};
use super::push::PushTarget;
use super::state::State;

/// What a listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Routes {
    /// `/metrics`.
    pub metrics: bool,
    /// The live page: `/`, `/live/body` and `/report`.
    pub page: bool,
}

/// A listener bound before anything connects, and what it serves.
#[derive(Debug)]
pub struct Listener {
    /// The bound socket.
    pub socket: std::net::TcpListener,
    /// What it serves.
    pub routes: Routes,
}

/// A push to make: the body, and whom to tell when it is done.
struct Push {
    body: String,
    done: Option<oneshot::Sender<Result<(), String>>>,
}

/// The running live thread.
pub struct Server {
    thread: Option<JoinHandle<()>>,
    shutdown: Option<watch::Sender<bool>>,
    pushes: Option<mpsc::UnboundedSender<Push>>,
    /// The addresses served, as bound.
    pub addresses: Vec<(SocketAddr, Routes)>,
}

impl Server {
    /// Starts the thread serving `listeners` and pushing to `push`.
    pub fn start(
        state: Arc<Mutex<State>>,
        listeners: Vec<Listener>,
        push: Option<PushTarget>,
    ) -> anyhow::Result<Server> {
        let addresses = listeners
            .iter()
            .map(|l| Ok((l.socket.local_addr()?, l.routes)))
            .collect::<std::io::Result<Vec<_>>>()?;
        for l in &listeners {
            l.socket.set_nonblocking(true)?;
        }
        let (shutdown, shutdown_rx) = watch::channel(false);
        let (pushes, pushes_rx) = mpsc::unbounded_channel::<Push>();
        let thread = std::thread::Builder::new()
            .name("headroom-live".to_string())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("Warning: the live endpoint could not start: {e}");
                        return;
                    }
                };
                runtime.block_on(serve(state, listeners, push, pushes_rx, shutdown_rx));
            })?;
        Ok(Server {
            thread: Some(thread),
            shutdown: Some(shutdown),
            pushes: Some(pushes),
            addresses,
        })
    }

    /// Queues a push of `body`; a push still waiting is replaced (the gateway keeps only the
    /// latest anyway).
    pub fn push(&self, body: String) {
        if let Some(tx) = &self.pushes {
            let _ = tx.send(Push { body, done: None });
        }
    }

    /// Pushes `body` and waits for the gateway's answer, at most `timeout`.
    pub fn push_and_wait(&self, body: String, timeout: Duration) -> Result<(), String> {
        let Some(tx) = &self.pushes else {
            return Ok(());
        };
        let (done, answer) = oneshot::channel();
        tx.send(Push {
            body,
            done: Some(done),
        })
        .map_err(|_| "the live thread has stopped".to_string())?;
        let deadline = std::time::Instant::now() + timeout;
        let mut answer = answer;
        loop {
            match answer.try_recv() {
                Ok(result) => return result,
                Err(oneshot::error::TryRecvError::Closed) => {
                    return Err("the live thread has stopped".to_string())
                }
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            if std::time::Instant::now() >= deadline {
                return Err(format!("no answer within {} s", timeout.as_secs()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(true);
        }
        self.pushes.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(
    state: Arc<Mutex<State>>,
    listeners: Vec<Listener>,
    push: Option<PushTarget>,
    mut pushes: mpsc::UnboundedReceiver<Push>,
    mut shutdown: watch::Receiver<bool>,
) {
    for listener in listeners {
        let socket = match tokio::net::TcpListener::from_std(listener.socket) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("Warning: the live endpoint could not listen: {e}");
                continue;
            }
        };
        let state = state.clone();
        let routes = listener.routes;
        let mut stop = shutdown.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    accepted = socket.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        let state = state.clone();
                        tokio::spawn(async move {
                            let service = hyper::service::service_fn(move |request| {
                                let state = state.clone();
                                let accept = request
                                    .headers()
                                    .get(ACCEPT)
                                    .and_then(|a| a.to_str().ok())
                                    .unwrap_or("")
                                    .to_string();
                                let method = request.method().clone();
                                let path = request.uri().path().to_string();
                                async move { Ok::<_, Infallible>(answer(&state, routes, &method, &path, &accept)) }
                            });
                            let _ = hyper::server::conn::http1::Builder::new()
                                .keep_alive(true)
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        });
                    }
                    _ = stop.changed() => break,
                }
            }
        });
    }
    let pusher = async {
        while let Some(mut next) = pushes.recv().await {
            // Only the latest waiting push matters; those it replaces are answered with it.
            let mut waiting = Vec::new();
            while let Ok(newer) = pushes.try_recv() {
                waiting.extend(next.done.take());
                next = newer;
            }
            let result = match &push {
                Some(target) => target.push(next.body).await,
                None => Ok(()),
            };
            if let Err(e) = &result {
                if next.done.is_none() {
                    eprintln!("Warning: the push to {} failed: {e}", push.as_ref().map_or(String::new(), |p| p.describe()));
                }
            }
            for done in waiting.into_iter().chain(next.done) {
                let _ = done.send(result.clone());
            }
        }
    };
    tokio::select! {
        _ = pusher => {
            // Every sender is gone: serve until told to stop.
            let _ = shutdown.changed().await;
        }
        _ = shutdown.changed() => {}
    }
}

/// The answer to one request.
fn answer(
    state: &Arc<Mutex<State>>,
    routes: Routes,
    method: &Method,
    path: &str,
    accept: &str,
) -> Response<Full<Bytes>> {
    if method != Method::GET && method != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "only GET\n");
    }
    match path {
        "/metrics" if routes.metrics => {
            // OpenMetrics unless the scraper asks for the older text format alone (as an
            // older Prometheus or another agent may).
            if accept.contains("text/plain") && !accept.contains("application/openmetrics-text") {
                let text = Families(state.clone()).prometheus_text();
                respond(StatusCode::OK, PROMETHEUS_TEXT_TYPE, text)
            } else {
                let text = Families(state.clone()).openmetrics();
                respond(StatusCode::OK, OPENMETRICS_TYPE, text)
            }
        }
        "/" if routes.page => respond(StatusCode::OK, "text/html; charset=utf-8", super::page::page(&snapshot(state))),
        "/live/body" if routes.page => respond(StatusCode::OK, "text/html; charset=utf-8", super::page::body(&snapshot(state))),
        "/report" if routes.page => match report_of(state) {
            Some(path) => match std::fs::read(&path) {
                Ok(html) => Response::builder()
                    .status(StatusCode::OK)
                    .header(CONTENT_TYPE, "text/html; charset=utf-8")
                    .body(Full::new(Bytes::from(html)))
                    .expect("a valid response"),
                Err(e) => plain(StatusCode::NOT_FOUND, &format!("{}: {e}\n", path.display())),
            },
            None => plain(StatusCode::NOT_FOUND, "no report yet: it is written when the run or search ends\n"),
        },
        "/" if routes.metrics => plain(StatusCode::OK, "headroom: metrics at /metrics\n"),
        _ => plain(StatusCode::NOT_FOUND, "not found\n"),
    }
}

/// What the page is drawn from, copied out of the lock.
fn snapshot(state: &Arc<Mutex<State>>) -> super::page::Snapshot {
    let state = state.lock().unwrap_or_else(|e| e.into_inner());
    super::page::Snapshot::of(&state)
}

fn report_of(state: &Arc<Mutex<State>>) -> Option<PathBuf> {
    let state = state.lock().unwrap_or_else(|e| e.into_inner());
    state.ended.as_ref().and_then(|(_, report)| report.clone())
}

fn respond(status: StatusCode, kind: &str, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(CONTENT_TYPE, kind)
        .header(CACHE_CONTROL, "no-store")
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}

fn plain(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    respond(status, "text/plain; charset=utf-8", text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::state::Labels;

    fn state() -> Arc<Mutex<State>> {
        let labels = Labels {
            run: "r".to_string(),
            workload: "keyvalue".to_string(),
            worker: "single".to_string(),
        };
        Arc::new(Mutex::new(State::new(labels, false)))
    }

    fn kind(response: &Response<Full<Bytes>>) -> &str {
        response.headers()[CONTENT_TYPE].to_str().unwrap()
    }

    #[test]
    fn metrics_are_openmetrics_unless_the_older_text_format_alone_is_asked() {
        let (state, routes) = (state(), Routes { metrics: true, page: false });
        let get = |accept| answer(&state, routes, &Method::GET, "/metrics", accept);
        for accept in ["", "*/*", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"] {
            assert_eq!(kind(&get(accept)), OPENMETRICS_TYPE, "{accept}");
        }
        assert_eq!(kind(&get("text/plain;version=0.0.4")), PROMETHEUS_TEXT_TYPE);
    }

    #[test]
    fn only_what_a_listener_serves_is_answered() {
        let state = state();
        let metrics_only = Routes { metrics: true, page: false };
        let page_only = Routes { metrics: false, page: true };
        let status = |routes, method: &Method, path| answer(&state, routes, method, path, "").status();
        assert_eq!(status(metrics_only, &Method::GET, "/live/body"), StatusCode::NOT_FOUND);
        assert_eq!(status(page_only, &Method::GET, "/metrics"), StatusCode::NOT_FOUND);
        assert_eq!(status(page_only, &Method::GET, "/"), StatusCode::OK);
        assert_eq!(status(page_only, &Method::GET, "/report"), StatusCode::NOT_FOUND);
        assert_eq!(status(metrics_only, &Method::POST, "/metrics"), StatusCode::METHOD_NOT_ALLOWED);
    }
}
