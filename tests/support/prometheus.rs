//! A real Prometheus and a real Pushgateway (Debian's `prometheus` and
//! `prometheus-pushgateway`, which .ci/run installs), each started by a test on a free
//! loopback port with its files in a directory of its own, and stopped by pid when dropped;
//! and the few calls of their HTTP APIs the tests make.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

const PROMETHEUS: &str = "/usr/bin/prometheus";
const PUSHGATEWAY: &str = "/usr/bin/prometheus-pushgateway";

/// How long a server may take to answer that it is ready: a busy 2-core machine with a node
/// starting beside it makes Prometheus's start slow.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// A free port on 127.0.0.1: bound, read and let go (nothing else on this machine is
/// expected to take it in between).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// A sample of a query's answer: its labels and value.
pub type Sample = (BTreeMap<String, String>, f64);

/// A series of a range vector: its labels and its samples, (seconds since the epoch, value).
pub type Series = (BTreeMap<String, String>, Vec<(f64, f64)>);

/// One target as Prometheus sees it.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL it scrapes.
    pub scrape_url: String,
    /// `up`, `down` or `unknown`.
    pub health: String,
    /// The last scrape's error, empty when it succeeded.
    pub last_error: String,
    /// When it last scraped, RFC 3339.
    pub last_scrape: String,
}

/// A Prometheus scraping the given targets every second, until dropped.
pub struct Prometheus {
    server: Server,
}

impl Prometheus {
    /// Starts Prometheus with one job, `headroom`, scraping `targets` every second; returns
    /// once it is ready and has tried each target once.
    pub fn start(targets: &[SocketAddr]) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let list = targets
            .iter()
            .map(|t| format!("'{t}'"))
            .collect::<Vec<_>>()
            .join(", ");
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: headroom\n    honor_labels: true\n    \
             static_configs:\n      - targets: [{list}]\n"
        );
        let file = dir.path().join("prometheus.yml");
        std::fs::write(&file, &config).unwrap();
        let port = free_port();
        let mut command = Command::new(PROMETHEUS);
        command
            .arg(format!("--config.file={}", file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"));
        let server = Server::start("prometheus", command, dir, port);
        let prometheus = Prometheus { server };
        prometheus.wait_for_first_scrapes(targets.len());
        prometheus
    }

    /// Waits until each of the `n` targets has been scraped once, whether or not anything
    /// answered: Prometheus hands its scrapers their targets some seconds after it is
    /// ready (its discovery sends updates at most every 5 s), and a run started before
    /// would go unscraped for its first seconds.
    fn wait_for_first_scrapes(&self, n: usize) {
        let scraped = |t: &Target| !t.last_scrape.is_empty() && !t.last_scrape.starts_with("0001-");
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            let targets = self.targets();
            if targets.len() == n && targets.iter().all(scraped) {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "Prometheus did not scrape its {n} targets within {} s: {targets:?}\n{}",
                    READY_WITHIN.as_secs(),
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Where its HTTP API listens.
    pub fn address(&self) -> SocketAddr {
        self.server.address
    }

    /// The instant query `promql` at the present: each series of the vector it answers, with
    /// its labels and value. Panics on an error, with Prometheus's reason.
    pub fn query(&self, promql: &str) -> Vec<Sample> {
        let data = self.api(&format!("/api/v1/query?query={}", percent_encode(promql)));
        match data["resultType"].as_str() {
            Some("vector") => data["result"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| (labels(&s["metric"]), number(&s["value"][1])))
                .collect(),
            Some("scalar") => vec![(BTreeMap::new(), number(&data["result"][1]))],
            other => panic!("{promql}: a {other:?}, not an instant vector: {data}"),
        }
    }

    /// The instant query `promql` (a range vector selector, e.g. `up[10m]`): each series with
    /// its labels and its samples, (seconds since the epoch, value), oldest first.
    pub fn query_range_vector(&self, promql: &str) -> Vec<Series> {
        let data = self.api(&format!("/api/v1/query?query={}", percent_encode(promql)));
        assert_eq!(data["resultType"], "matrix", "{promql}: {data}");
        data["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let samples = s["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| (v[0].as_f64().unwrap(), number(&v[1])))
                    .collect();
                (labels(&s["metric"]), samples)
            })
            .collect()
    }

    /// Its active targets.
    pub fn targets(&self) -> Vec<Target> {
        let data = self.api("/api/v1/targets?state=active");
        data["activeTargets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| Target {
                scrape_url: t["scrapeUrl"].as_str().unwrap_or_default().to_string(),
                health: t["health"].as_str().unwrap_or_default().to_string(),
                last_error: t["lastError"].as_str().unwrap_or_default().to_string(),
                last_scrape: t["lastScrape"].as_str().unwrap_or_default().to_string(),
            })
            .collect()
    }

    /// Whether every target's last scrape succeeded (there is at least one target).
    pub fn targets_up(&self) -> bool {
        let targets = self.targets();
        !targets.is_empty()
            && targets
                .iter()
                .all(|t| t.health == "up" && t.last_error.is_empty())
    }

    /// Its log so far, for a failing test's message.
    pub fn log(&self) -> String {
        self.server.log()
    }

    /// The `data` of an API answer whose status is `success`.
    fn api(&self, path: &str) -> Value {
        let (status, body) = http_get(self.server.address, path)
            .unwrap_or_else(|e| panic!("GET {path}: {e}\n{}", self.log()));
        let answer: Value = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("GET {path}: {status}, not JSON ({e}): {body}"));
        assert!(
            status == 200 && answer["status"] == "success",
            "GET {path}: {status} {answer}"
        );
        answer["data"].clone()
    }
}

/// A Pushgateway keeping what is pushed to it in memory, until dropped.
pub struct Pushgateway {
    server: Server,
}

/// One group of a Pushgateway: its grouping labels and its metric families, as its JSON API
/// gives them.
#[derive(Debug, Clone)]
pub struct Group {
    /// The grouping key: `job` and the labels of the push's path.
    pub labels: BTreeMap<String, String>,
    /// Whether the group's last push was accepted.
    pub last_push_successful: bool,
    /// The whole group, as the API gives it.
    pub json: Value,
}

impl Group {
    /// The samples of metric family `name` in this group (the gateway names a counter's
    /// family by its samples' name: `headroom_requests_total`), with their labels.
    pub fn samples(&self, name: &str) -> Vec<Sample> {
        self.json[name]["metrics"]
            .as_array()
            .map(|metrics| {
                metrics
                    .iter()
                    .map(|m| (labels(&m["labels"]), number(&m["value"])))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The type the gateway gives family `name` (`COUNTER`, `GAUGE`, `UNTYPED`).
    pub fn kind(&self, name: &str) -> Option<String> {
        self.json[name]["type"].as_str().map(str::to_string)
    }
}

impl Pushgateway {
    /// Starts a Pushgateway that persists nothing; returns once it answers that it is ready.
    pub fn start() -> Pushgateway {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut command = Command::new(PUSHGATEWAY);
        command
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            // Debian's default keeps the groups in /var/lib/prometheus: nothing of a test's
            // should outlive it.
            .arg("--persistence.file=");
        Pushgateway {
            server: Server::start("pushgateway", command, dir, port),
        }
    }

    /// Its URL, for `--metrics-push`.
    pub fn url(&self) -> String {
        format!("http://{}", self.server.address)
    }

    /// Its groups, from its JSON API (`/api/v1/metrics`).
    pub fn groups(&self) -> Vec<Group> {
        let (status, body) = http_get(self.server.address, "/api/v1/metrics")
            .unwrap_or_else(|e| panic!("GET /api/v1/metrics: {e}\n{}", self.log()));
        let answer: Value = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{status}, not JSON ({e}): {body}"));
        assert!(
            status == 200 && answer["status"] == "success",
            "{status} {answer}"
        );
        answer["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| Group {
                labels: labels(&g["labels"]),
                last_push_successful: g["last_push_successful"].as_bool().unwrap_or(false),
                json: g.clone(),
            })
            .collect()
    }

    /// What it serves at `/metrics`: every group's metrics in the Prometheus text format.
    pub fn metrics_text(&self) -> String {
        let (status, body) = http_get(self.server.address, "/metrics").unwrap();
        assert_eq!(status, 200, "{body}");
        body
    }

    /// Its log so far, for a failing test's message.
    pub fn log(&self) -> String {
        self.server.log()
    }
}

/// A server process with its directory (its log, its files), stopped when dropped.
struct Server {
    name: &'static str,
    child: Child,
    address: SocketAddr,
    dir: tempfile::TempDir,
}

impl Server {
    /// Starts `command` (listening on 127.0.0.1:`port`), its output into `dir`'s log, and
    /// waits until `/-/ready` answers 200.
    fn start(
        name: &'static str,
        mut command: Command,
        dir: tempfile::TempDir,
        port: u16,
    ) -> Server {
        assert!(
            Path::new(command.get_program()).is_file(),
            "{} is missing: install Debian's {name} package (.ci/run does)",
            command.get_program().to_string_lossy()
        );
        let log = std::fs::File::create(dir.path().join("log")).unwrap();
        let child = command
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{name} does not start: {e}"));
        let mut server = Server {
            name,
            child,
            address: SocketAddr::from(([127, 0, 0, 1], port)),
            dir,
        };
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            if let Ok((200, _)) = http_get(server.address, "/-/ready") {
                eprintln!(
                    "{name} ready at http://{} (pid {})",
                    server.address,
                    server.child.id()
                );
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "{name} exited ({status}) before it was ready:\n{}",
                    server.log()
                );
            }
            if Instant::now() >= deadline {
                panic!(
                    "{name} was not ready within {} s:\n{}",
                    READY_WITHIN.as_secs(),
                    server.log()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let pid = Pid::from_raw(self.child.id() as i32);
        let _ = kill(pid, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("{} did not stop on SIGTERM within 10 s: killed", self.name);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` over HTTP/1.1 with `Connection: close`: the status and the body (a chunked body
/// decoded).
pub fn http_get(address: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    http_get_with_headers(address, path).map(|(status, _, body)| (status, body))
}

/// `GET path`: the status, the headers (names in lower case) and the body.
pub fn http_get_with_headers(
    address: SocketAddr,
    path: &str,
) -> std::io::Result<(u16, BTreeMap<String, String>, String)> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(5))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nAccept: application/json, */*\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let bad = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string());
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of the headers"))?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let body = &raw[split + 4..];
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status"))?;
    let headers: BTreeMap<String, String> = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .get("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(body).ok_or_else(|| bad("a malformed chunked body"))?
    } else {
        body.to_vec()
    };
    Ok((status, headers, String::from_utf8_lossy(&body).into_owned()))
}

/// A chunked body's content.
fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&body[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(body.get(..size)?);
        body = body.get(size + 2..)?;
    }
}

/// `text` percent-encoded for a query string: everything but unreserved characters.
pub fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn labels(metric: &Value) -> BTreeMap<String, String> {
    metric
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// A value as the APIs write them: a string ("12", "NaN", "+Inf").
fn number(value: &Value) -> f64 {
    match value {
        Value::String(s) => s.parse().unwrap_or_else(|_| panic!("not a number: {s}")),
        Value::Number(n) => n.as_f64().unwrap(),
        other => panic!("not a number: {other}"),
    }
}
