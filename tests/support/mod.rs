//! Helpers shared by the integration tests: one local cluster at a time, a directory per
//! test, and guards that stop the nodes a test started even when the test panics.

#![allow(dead_code)]

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use headroom::cluster::{probe, ClusterConfig, LocalCluster, StartOptions};
use headroom::units::ByteSize;

pub mod catalogued;
pub mod in_process;
pub mod kubernetes;
pub mod prometheus;

pub use catalogued::assert_catalogued;

static ONE_CLUSTER_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Holds the machine for one test: the tests share ports and two cores, so they run one by
/// one. A test that panicked while holding it does not block the others.
pub fn exclusive() -> MutexGuard<'static, ()> {
    ONE_CLUSTER_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A fresh, empty directory for one test's cluster, under target/test-clusters (where
/// .ci/run looks for nodes left behind by a test process that was killed).
pub fn cluster_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("test-clusters")
        .join(name);
    if let Ok(cluster) = LocalCluster::open(&dir) {
        // Left by an earlier run that was killed: stop it before starting again.
        let _ = cluster_stop(cluster);
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn cluster_stop(mut cluster: LocalCluster) -> Result<(), headroom::cluster::ClusterError> {
    cluster.stop(Duration::from_secs(30))
}

/// Stops the cluster recorded in a directory when dropped: for clusters started by the
/// `headroom` binary, which outlive the command that started them.
pub struct StopOnDrop(pub PathBuf);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Ok(cluster) = LocalCluster::open(&self.0) {
            if let Err(e) = cluster_stop(cluster) {
                eprintln!("could not stop the cluster in {}: {e}", self.0.display());
            }
        }
    }
}

/// Options for tests: quiet would hide useful progress in a failing test's output.
pub fn start_options() -> StartOptions {
    StartOptions {
        node_timeout: Duration::from_secs(180),
        ..StartOptions::default()
    }
}

/// The first node's address for tests that use [`small_cluster`] and [`hosts`]:
/// `HEADROOM_TEST_ADDRESS` (e.g. 127.0.0.3, to test beside another node on this machine),
/// else 127.0.0.1.
pub fn address() -> Ipv4Addr {
    std::env::var("HEADROOM_TEST_ADDRESS")
        .ok()
        .and_then(|a| a.parse().ok())
        .unwrap_or(Ipv4Addr::LOCALHOST)
}

/// `--hosts` for the first node of [`small_cluster`].
pub fn hosts() -> String {
    format!("{}:9042", address())
}

/// A small-heap configuration of `nodes` nodes, from [`address`] on.
pub fn small_cluster(nodes: u32) -> ClusterConfig {
    ClusterConfig {
        nodes,
        heap: ByteSize::mib(768),
        first_address: address(),
        ..ClusterConfig::default()
    }
}

/// Runs the headroom binary.
pub fn headroom(args: &[&str]) -> Output {
    headroom_with_env(args, &[])
}

/// The rows of a run's intervals.csv after its header, as fields.
pub fn interval_rows(run_dir: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(run_dir.join("intervals.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// `headroom run ARGS` against the test's local cluster in `cluster_dir` (its nodes as
/// --hosts, the cluster for server pauses and nodetool), writing into `out`.
pub fn run_against(cluster_dir: &Path, out: &Path, args: &[&str]) -> Output {
    let hosts = hosts();
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&[
        "--hosts",
        &hosts,
        "--cluster-dir",
        cluster_dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    headroom(&all)
}

/// Runs the headroom binary with extra environment variables.
pub fn headroom_with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_headroom"));
    for (key, value) in env {
        command.env(key, value);
    }
    spawn(command, args)
}

/// Runs the headroom binary in the working directory `cwd`, for relative paths.
pub fn headroom_in(cwd: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_headroom"));
    command.current_dir(cwd);
    spawn(command, args)
}

fn spawn(mut command: Command, args: &[&str]) -> Output {
    command.args(args).env_remove("HEADROOM_CLUSTER_DIR");
    let output = command.output().expect("the headroom binary runs");
    eprintln!(
        "$ headroom {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Asserts that a run ended with `expected`, or was judged client-bound (exit 4) with its
/// directory `out` whole: for a test that checks what a run wrote or counted, not whether this
/// shared 2-core machine let the client keep its schedule. On such a machine a client stall of
/// 100 ms + 1% of the measured part (a JVM's GC threads, a browser starting) makes a run
/// client-bound whatever its rate, and headroom is right to refuse its verdict then; the
/// files and counts a run writes hold either way. Returns the exit code.
pub fn assert_ran_or_client_bound(output: &Output, out: &Path, expected: i32) -> i32 {
    let code = output.status.code();
    if code == Some(4) {
        let summary = read_json(&out.join("summary.json"));
        assert_eq!(
            summary["validity"]["verdict"], "client-bound",
            "exit 4 without a client-bound verdict: {}\n{}",
            summary["validity"],
            stderr(output)
        );
        eprintln!("client-bound on a busy machine: {}", summary["validity"]["reasons"]);
        return 4;
    }
    assert_eq!(
        code,
        Some(expected),
        "{}\n{}",
        stdout(output),
        stderr(output)
    );
    expected
}

/// Runs `attempt` (given a fresh output directory: `out`, then `out.2`, ...) until it ends
/// with anything but a client-bound verdict (exit 4), at most `tries` times: for a test whose
/// point needs a valid measurement (a stall's figures, a search's passing rate) on a machine
/// that sometimes takes the client's CPU for longer than the validity rule allows. Returns
/// the last output and its directory.
pub fn until_judged(
    tries: u32,
    out: &Path,
    mut attempt: impl FnMut(&Path) -> Output,
) -> (Output, PathBuf) {
    let mut dir = out.to_path_buf();
    for n in 1..=tries {
        let output = attempt(&dir);
        if output.status.code() != Some(4) || n == tries {
            return (output, dir);
        }
        eprintln!("client-bound on a busy machine (try {n} of {tries}): once more");
        dir = out.with_extension(format!("{}", n + 1));
    }
    unreachable!("tries is at least 1")
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `cql` on exactly one node and returns the rows as text.
pub fn query(node: SocketAddr, cql: &str) -> Vec<Vec<Option<String>>> {
    query_as(node, cql, None)
}

/// Runs `cql` on exactly one node, logged in with `credentials`, and returns the rows as text.
pub fn query_as(
    node: SocketAddr,
    cql: &str,
    credentials: Option<&headroom::cluster::auth::Credentials>,
) -> Vec<Vec<Option<String>>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let session = probe::connect(
            &[node],
            Duration::from_secs(10),
            credentials.map(|c| c.user_and_password()),
            None,
        )
        .await
        .unwrap();
        probe::query_node(&session, node, cql).await.unwrap()
    })
}

/// Whether a process with this pid exists (zombies count as gone).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            !stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// A JSON file a command wrote, parsed; panics with the path when it is missing.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Asserts that an entry of a summary.json's `ops` succeeded. A node on a shared host that
/// takes most of the CPU away for a while may time a write out by its own limit (2 s; seen in
/// a concurrency sweep while the host took 60% of the CPU): that much is the machine's doing.
/// Any other error, or timeouts in over 1% of the requests, fail.
pub fn assert_succeeded(op: &serde_json::Value) {
    let requests = op["requests"].as_u64().unwrap();
    let ok = op["ok"].as_u64().unwrap();
    let errors = op["errors"].as_object().unwrap();
    let timeouts = errors.get("timeout").map_or(0, |n| n.as_u64().unwrap());
    assert!(
        errors.keys().all(|class| class == "timeout")
            && ok + timeouts == requests
            && timeouts * 100 <= requests,
        "failed requests: {op}"
    );
}

/// The entry of op type `name` in a summary.json's `ops`.
pub fn op<'a>(summary: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    summary["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == name)
        .unwrap_or_else(|| panic!("no {name} in {summary}"))
}

/// Text cut to its first `max` characters, for a failing test's message.
pub fn cut(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Polls `done` every 100 ms until it holds or `limit` has passed; says whether it held.
pub fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Chromium, for the tests that open a page in a browser; `None` (with a message) when it is
/// missing outside CI, where a missing browser fails the test.
pub fn chromium() -> Option<PathBuf> {
    match which::which("chromium") {
        Ok(path) => Some(path),
        Err(_) if std::env::var_os("CI").is_some() => {
            panic!("chromium is missing: CI must have it (apt-get install chromium; .ci/run does)")
        }
        Err(_) => {
            eprintln!(
                "SKIPPED: chromium is not installed; `apt-get install chromium` to run the \
                 browser tests"
            );
            None
        }
    }
}

/// Writes node `node` of `cluster` coordinated for the `headroom` keyspace since it started
/// (`system_views.coordinator_write_latency`).
pub fn coordinated_writes(cluster: &LocalCluster, node: u32) -> u64 {
    let rows = query(
        cluster.node(node).unwrap().native_addr(),
        "SELECT keyspace_name, table_name, count FROM system_views.coordinator_write_latency",
    );
    rows.iter()
        .filter(|r| r[0].as_deref() == Some("headroom"))
        .filter_map(|r| r[2].as_deref()?.parse::<u64>().ok())
        .sum()
}
