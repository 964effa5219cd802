//! headroom's live metrics as the real tools read them: a run scraped every second by
//! Prometheus (its own OpenMetrics parser, its PromQL), a fleet's workers summed in PromQL,
//! and a short run's pushes to a Pushgateway. Each count is held against the summary.json of
//! the same run.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use headroom::cluster::LocalCluster;
use headroom::results::config::rfc3339;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use crate::support::prometheus::{
    free_port, http_get_with_headers, Prometheus, Pushgateway, Sample,
};
use crate::support::{self, read_json};

/// The runs' interval (the default), seconds: the most a scrape can lag behind a count.
const INTERVAL_S: f64 = 1.0;

/// `headroom run ARGS` in the background, its output read as it comes; stopped by pid when
/// dropped before it ended.
struct Running {
    name: String,
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    readers: Vec<JoinHandle<()>>,
    stderr: Arc<Mutex<String>>,
}

impl Running {
    fn spawn(name: &str, args: &[&str]) -> Running {
        let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
            .arg("run")
            .args(args)
            .env_remove("HEADROOM_CLUSTER_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the headroom binary runs");
        eprintln!(
            "$ headroom run {} ({name}, pid {})",
            args.join(" "),
            child.id()
        );
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        let lines = stdout.clone();
        let text = stderr.clone();
        let readers = vec![
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    lines.lock().unwrap().push(line);
                }
            }),
            std::thread::spawn(move || {
                let mut all = String::new();
                let _ = BufReader::new(err).read_to_string(&mut all);
                *text.lock().unwrap() = all;
            }),
        ];
        Running {
            name: name.to_string(),
            child,
            stdout,
            readers,
            stderr,
        }
    }

    /// Whether a line of its standard output so far starts with `prefix`.
    fn said(&self, prefix: &str) -> bool {
        self.stdout
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.starts_with(prefix))
    }

    /// Waits (at most `limit`) for a line starting with `prefix`; false when it exited first
    /// or the time ran out.
    fn wait_for_line(&mut self, prefix: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self.said(prefix) {
                return true;
            }
            if Instant::now() >= deadline || matches!(self.child.try_wait(), Ok(Some(_))) {
                // One more look: the line may have come with the exit.
                std::thread::sleep(Duration::from_millis(200));
                return self.said(prefix);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for its exit (at most `limit`, then stops it): its status, standard output and
    /// standard error, which are also printed for a failing test's log.
    fn finish(mut self, limit: Duration) -> (ExitStatus, String, String) {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() >= deadline {
                self.stop();
                panic!(
                    "{} did not end within {} s:\n{}",
                    self.name,
                    limit.as_secs(),
                    self.stdout.lock().unwrap().join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        let out = self.stdout.lock().unwrap().join("\n");
        let err = self.stderr.lock().unwrap().clone();
        eprintln!("--- {} ({status}):\n{out}\n{err}", self.name);
        (status, out, err)
    }

    /// Ends its `--linger` with SIGTERM, sent again every 10 s in case one came before the
    /// linger listened (as live_page.rs does); the run's exit code stands.
    fn end_linger(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let _ = kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM);
            let sent = Instant::now();
            while sent.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            assert!(
                Instant::now() < deadline,
                "{} went on lingering after SIGTERM",
                self.name
            );
        }
    }

    /// SIGTERM, then SIGKILL when it is still there 20 s later.
    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let _ = kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A run's exit: 0, or 4 when this shared machine kept it from its schedule (every request
/// it sent is still counted, which is all these tests compare).
fn assert_finished(status: ExitStatus, out: &str, err: &str) {
    assert!(
        matches!(status.code(), Some(0 | 4)),
        "{status}\n{out}\n{err}"
    );
}

/// Requests of a summary.json's phase (`ops`: measured, `warmup`) by op type.
fn summary_requests(summary: &Value, phase: &str) -> BTreeMap<String, u64> {
    summary[phase]
        .as_array()
        .unwrap_or_else(|| panic!("no {phase} in {summary}"))
        .iter()
        .map(|o| {
            (
                o["op"].as_str().unwrap().to_string(),
                o["requests"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Failed requests of a summary.json's phase by (op type, class).
fn summary_errors(summary: &Value, phase: &str) -> BTreeMap<(String, String), u64> {
    summary[phase]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| {
            let op = o["op"].as_str().unwrap().to_string();
            o["errors"]
                .as_object()
                .unwrap()
                .iter()
                .map(move |(class, n)| ((op.clone(), class.clone()), n.as_u64().unwrap()))
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The one value of a query that sums to a single series; 0 for an empty answer.
fn single(samples: &[Sample], what: &str) -> f64 {
    assert!(samples.len() <= 1, "{what}: {samples:?}");
    samples.first().map_or(0.0, |s| s.1)
}

/// Polls Prometheus's view of its targets while `run` goes, every half second until the run
/// ends or `limit` passes: every error it saw (connection refused is expected before the
/// run listens; a scrape too slow on a busy machine is the machine's doing), and whether
/// it saw every target up with no error.
fn watch_targets(
    prometheus: &Prometheus,
    runs: &mut [&mut Running],
    until_line: &str,
    limit: Duration,
) -> (Vec<String>, bool) {
    let deadline = Instant::now() + limit;
    let mut errors = Vec::new();
    let mut all_up = false;
    while Instant::now() < deadline {
        for target in prometheus.targets() {
            if !target.last_error.is_empty() && !errors.contains(&target.last_error) {
                errors.push(target.last_error.clone());
            }
        }
        all_up |= prometheus.targets_up();
        if runs.iter_mut().all(|r| r.said(until_line)) {
            break;
        }
        if runs
            .iter_mut()
            .any(|r| matches!(r.child.try_wait(), Ok(Some(_))))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    (errors, all_up)
}

/// Errors a scrape may meet that say nothing of the text: the endpoint not yet (or no
/// longer) listening, a scrape the busy machine made too slow.
fn harmless(error: &str) -> bool {
    error.contains("connection refused") || error.contains("context deadline exceeded")
}

/// Once the runs serve their final state (`--linger`): every target up, its last scrape
/// made after the end, with no error. Waits up to 2.5 scrape intervals for a scrape of the
/// final state.
fn assert_final_state_scraped(prometheus: &Prometheus, ended_at: SystemTime) {
    let ok = support::wait_for(Duration::from_millis(2500), || {
        let targets = prometheus.targets();
        !targets.is_empty()
            && targets.iter().all(|t| {
                t.health == "up"
                    && t.last_error.is_empty()
                    && headroom::results::config::parse_rfc3339(&t.last_scrape)
                        .is_ok_and(|at| at > ended_at)
            })
    });
    assert!(
        ok,
        "a scrape of the final state, every target up with no error: {:?}\n{}",
        prometheus.targets(),
        prometheus.log()
    );
}

/// The checks every scraped run shares: the endpoint speaks OpenMetrics; no counter of
/// `run` ever went down between scrapes; a quantile gauge was scraped.
fn assert_scraped_series(prometheus: &Prometheus, run: &str) {
    // Every sample Prometheus kept of the run's counters, each series never lower than the
    // sample before it; and PromQL's own resets() says the same of each family.
    let counters = prometheus.query_range_vector(&format!(
        "{{__name__=~\"headroom_.+_total\",run=\"{run}\"}}[10m]"
    ));
    let mut families = std::collections::BTreeSet::new();
    for (labels, samples) in &counters {
        assert!(
            samples.windows(2).all(|w| w[1].1 >= w[0].1),
            "a counter went down between scrapes: {labels:?} {samples:?}"
        );
        families.insert(labels["__name__"].clone());
    }
    for needed in [
        "headroom_requests_total",
        "headroom_intervals_total",
        "headroom_client_cpu_seconds_total",
    ] {
        assert!(
            families.contains(needed),
            "{needed} of run {run} was scraped: {families:?}"
        );
    }
    for family in &families {
        for (labels, n) in prometheus.query(&format!("resets({family}{{run=\"{run}\"}}[10m])")) {
            assert_eq!(n, 0.0, "PromQL sees {family} reset: {labels:?}");
        }
    }
    let samples: usize = counters.iter().map(|(_, s)| s.len()).sum();
    eprintln!(
        "{} counter series of run {run} ({samples} samples, families {families:?}), none ever went down",
        counters.len()
    );

    let p99 = prometheus.query(&format!(
        "max_over_time(headroom_response_time_seconds{{run=\"{run}\",quantile=\"0.99\"}}[10m])"
    ));
    assert!(!p99.is_empty(), "a quantile gauge of run {run}");
    for (labels, v) in &p99 {
        assert!(
            *v > 0.0 && *v < 10.0,
            "a p99 response time in seconds: {labels:?} {v}"
        );
    }
    let ops: Vec<&str> = p99.iter().map(|(l, _)| l["op"].as_str()).collect();
    eprintln!("p99 response time scraped for {ops:?}");
}

/// The sum over a run's series of `metric`'s highest value scraped, per phase.
fn scraped_count(prometheus: &Prometheus, metric: &str, run: &str, phase: &str) -> f64 {
    let query = format!("sum(max_over_time({metric}{{run=\"{run}\",phase=\"{phase}\"}}[10m]))");
    single(&prometheus.query(&query), &query)
}

/// A 20 s run scraped every second: the measured requests Prometheus last saw are those
/// summary.json counts (at most one interval apart), none of its counters ever went down,
/// and every scrape of its OpenMetrics text was parsed.
#[test]
fn a_run_scraped_by_prometheus_counts_what_its_summary_counts() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("prometheus");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let started = Instant::now();
    let runs = tempfile::tempdir().unwrap();
    let out = runs.path().join("scraped");
    let hosts = support::hosts();
    let endpoint = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let prometheus = Prometheus::start(&[endpoint]);
    let (label, rate) = ("scraped-run", 400.0);

    let mut run = Running::spawn(
        "the scraped run",
        &[
            "keyvalue",
            "--hosts",
            &hosts,
            "--rate",
            &rate.to_string(),
            "--duration",
            "20s",
            "--warmup",
            "2s",
            "-r",
            "0.2",
            "--validate",
            "--label",
            label,
            "--metrics-listen",
            &endpoint.to_string(),
            // Long enough for a busy machine's slow look at its start; ended below by SIGTERM.
            "--linger",
            "60s",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (errors, up) = watch_targets(
        &prometheus,
        &mut [&mut run],
        "Serving the final state",
        Duration::from_secs(90),
    );
    assert!(
        run.wait_for_line("Serving the final state", Duration::from_secs(5)),
        "the run lingers"
    );
    let ended_at = SystemTime::now() - Duration::from_millis(200);
    // The endpoint speaks OpenMetrics, so Prometheus read it with its OpenMetrics parser.
    let (status, headers, text) = http_get_with_headers(endpoint, "/metrics").unwrap();
    assert_eq!(status, 200);
    assert!(
        headers["content-type"].starts_with("application/openmetrics-text"),
        "{headers:?}"
    );
    assert!(text.ends_with("# EOF\n"), "{}", support::cut(&text, 2000));
    assert_final_state_scraped(&prometheus, ended_at);
    // Three more seconds of the final state are scraped, as a 3 s linger had them; then
    // SIGTERM ends the linger, the run's exit code standing.
    std::thread::sleep(Duration::from_secs(3));
    run.end_linger();
    let (status, out_text, err) = run.finish(Duration::from_secs(30));
    assert_finished(status, &out_text, &err);
    assert!(up, "the target was seen up while the run went");
    assert!(
        errors.iter().all(|e| harmless(e)),
        "scrape errors other than the endpoint's absence or a slow scrape: {errors:?}"
    );
    eprintln!("scrape errors seen while polling: {errors:?}");

    let summary = read_json(&out.join("summary.json"));
    let measured: u64 = summary_requests(&summary, "ops").values().sum();
    let warmup: u64 = summary_requests(&summary, "warmup").values().sum();
    let scraped = scraped_count(&prometheus, "headroom_requests_total", label, "measure");
    let scraped_warmup = scraped_count(&prometheus, "headroom_requests_total", label, "warmup");
    let slack = rate * INTERVAL_S + 5.0;
    eprintln!(
        "measured: PromQL {scraped} vs summary.json {measured}; warmup: PromQL {scraped_warmup} vs {warmup} (slack {slack})"
    );
    assert!(
        measured as f64 > rate * 15.0,
        "the run measured about 20 s: {measured}"
    );
    assert!(
        (scraped - measured as f64).abs() <= slack,
        "PromQL counts {scraped} measured requests, summary.json {measured}"
    );
    assert!(
        (scraped_warmup - warmup as f64).abs() <= slack,
        "PromQL counts {scraped_warmup} warmup requests, summary.json {warmup}"
    );
    // Per op type too.
    for (op, n) in summary_requests(&summary, "ops") {
        let query = format!(
            "max_over_time(headroom_requests_total{{run=\"{label}\",phase=\"measure\",op=\"{op}\"}}[10m])"
        );
        let v = single(&prometheus.query(&query), &query);
        assert!(
            (v - n as f64).abs() <= slack,
            "{op}: PromQL {v}, summary.json {n}"
        );
    }
    // --validate's counts: the final state, scraped while the run lingered, is its summary's.
    let validation = &summary["validation"];
    for (metric, labels, expected) in [
        ("headroom_validation_writes_total", "outcome=\"acknowledged\"", &validation["writes_acknowledged"]),
        ("headroom_validation_writes_total", "outcome=\"unknown\"", &validation["writes_unknown"]),
    ] {
        let query = format!("max_over_time({metric}{{run=\"{label}\",{labels}}}[10m])");
        let v = single(&prometheus.query(&query), &query);
        assert_eq!(Some(v as u64), expected.as_u64(), "{query}: {validation}");
    }
    let query = format!(
        "max_over_time(headroom_validation_reads_total{{run=\"{label}\",class=\"current\"}}[10m])"
    );
    let checked = validation["reads"]["checked"].as_u64().unwrap();
    assert!(checked > 0, "{validation}");
    assert_eq!(single(&prometheus.query(&query), &query) as u64, checked, "{validation}");
    assert_scraped_series(&prometheus, label);
    // Every scrape from the run's first answer to its last was parsed: `up` never fell to 0
    // in between but for a slow scrape, which the polling above would have seen.
    let up = prometheus.query_range_vector(&format!("up{{instance=\"{endpoint}\"}}[10m]"));
    let samples = &up.first().expect("the target's up series").1;
    let first = samples
        .iter()
        .position(|s| s.1 == 1.0)
        .expect("a scrape succeeded");
    let last = samples.iter().rposition(|s| s.1 == 1.0).unwrap();
    let failed_between = samples[first..=last].iter().filter(|s| s.1 != 1.0).count();
    eprintln!(
        "{} successful scrapes over {:.1} s, {failed_between} failed between the first and the last; up: {:?}",
        last - first + 1 - failed_between,
        samples[last].0 - samples[first].0,
        samples.iter().map(|s| (s.0 - samples[0].0, s.1)).collect::<Vec<_>>()
    );
    // Scraped from before its warmup to its linger: 2 + 20 + 3 s, a scrape a second.
    assert!(
        samples[last].0 - samples[first].0 >= 23.0 && last - first >= 20,
        "a scrape a second for the run's 25 s: {samples:?}"
    );
    assert!(
        failed_between == 0 || errors.iter().all(|e| e.contains("deadline")),
        "scrapes failed in the middle of the run: {samples:?}, {errors:?}"
    );
    if let Some(docs) = std::env::var_os("HEADROOM_DOCS_SCREENSHOTS") {
        screenshot_graph(&prometheus, label, Path::new(&docs));
    }
    eprintln!(
        "test wall time after the node started: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The docs' picture of Prometheus: its own graph page of the run's achieved rate by op
/// type, drawn by headless Chromium (the Debian package serves Prometheus's classic UI,
/// from files of its own: nothing is fetched from elsewhere).
fn screenshot_graph(prometheus: &Prometheus, label: &str, docs: &Path) {
    let Some(chromium) = support::chromium() else {
        return;
    };
    std::fs::create_dir_all(docs).unwrap();
    let expr = format!("sum by (op) (rate(headroom_requests_total{{run=\"{label}\",phase=\"measure\"}}[5s]))");
    let encoded: String = expr
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let url = format!(
        "http://{}/classic/graph?g0.expr={encoded}&g0.tab=0&g0.range_input=1m&g0.stacked=0",
        prometheus.address()
    );
    let file = docs.join("prometheus-graph.png");
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,900",
            "--virtual-time-budget=8000",
        ])
        .arg(format!("--screenshot={}", file.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(file.is_file(), "no screenshot of {url}: {}", String::from_utf8_lossy(&output.stderr));
    eprintln!("Prometheus's graph page copied to {}", file.display());
}

/// Two workers of one schedule, each serving its own endpoint with the same run label, both
/// scraped by one Prometheus: summed in PromQL, their measured requests are the merged run's
/// (at most one interval apart per worker).
#[test]
fn a_fleet_of_two_workers_sums_in_promql_to_the_merged_count() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("prometheus-fleet");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let started = Instant::now();
    let runs = tempfile::tempdir().unwrap();
    let hosts = support::hosts();
    let endpoints: Vec<SocketAddr> = (0..2)
        .map(|_| SocketAddr::from(([127, 0, 0, 1], free_port())))
        .collect();
    assert_ne!(endpoints[0], endpoints[1]);
    let prometheus = Prometheus::start(&endpoints);
    let (label, rate) = ("scraped-fleet", 600.0);
    // Both workers connect and make the schema on two cores before it: one ready more than
    // 1 s after it refuses to run.
    let start_at = rfc3339(SystemTime::now() + Duration::from_secs(15));

    let dirs: Vec<PathBuf> = (1..=2).map(|k| runs.path().join(format!("w{k}"))).collect();
    let mut workers: Vec<Running> = (1..=2)
        .map(|k| {
            let endpoint = endpoints[k - 1].to_string();
            let worker = format!("{k}/2");
            Running::spawn(
                &format!("worker {worker}"),
                &[
                    "keyvalue",
                    "--hosts",
                    &hosts,
                    "--rate",
                    &rate.to_string(),
                    "--duration",
                    "10s",
                    "--warmup",
                    "2s",
                    "-r",
                    "0.2",
                    "--label",
                    label,
                    "--metrics-listen",
                    &endpoint,
                    // Long enough for both, whichever ended first, until the final state is
                    // scraped; ended below by SIGTERM.
                    "--linger",
                    "60s",
                    "--worker",
                    &worker,
                    "--start-at",
                    &start_at,
                    "--out",
                    dirs[k - 1].to_str().unwrap(),
                ],
            )
        })
        .collect();
    let (errors, up) = {
        let [a, b] = &mut workers[..] else {
            unreachable!()
        };
        watch_targets(
            &prometheus,
            &mut [a, b],
            "Serving the final state",
            Duration::from_secs(90),
        )
    };
    for w in &mut workers {
        assert!(
            w.wait_for_line("Serving the final state", Duration::from_secs(5)),
            "{} lingers",
            w.name
        );
    }
    let ended_at = SystemTime::now() - Duration::from_millis(200);
    assert_final_state_scraped(&prometheus, ended_at);
    // SIGTERM ends the lingers; each worker's exit code stands.
    for w in &mut workers {
        w.end_linger();
    }
    for w in workers {
        let (status, out, err) = w.finish(Duration::from_secs(30));
        assert_finished(status, &out, &err);
    }
    assert!(up, "both targets were seen up while the workers ran");
    assert!(
        errors.iter().all(|e| harmless(e)),
        "scrape errors other than an endpoint's absence or a slow scrape: {errors:?}"
    );

    let merged = runs.path().join("merged");
    let dir_args: Vec<&str> = dirs.iter().map(|d| d.to_str().unwrap()).collect();
    let merge = support::headroom(
        &[
            &["merge"][..],
            &dir_args[..],
            &["--out", merged.to_str().unwrap()][..],
        ]
        .concat(),
    );
    assert!(
        matches!(merge.status.code(), Some(0 | 4)),
        "{}",
        support::stderr(&merge)
    );
    let summary = read_json(&merged.join("summary.json"));
    let measured: u64 = summary_requests(&summary, "ops").values().sum();
    let scraped = scraped_count(&prometheus, "headroom_requests_total", label, "measure");
    let slack = 2.0 * (rate / 2.0 * INTERVAL_S + 5.0);
    eprintln!(
        "fleet measured: PromQL sum {scraped} vs merged summary.json {measured} (slack {slack})"
    );
    assert!(
        measured as f64 > rate * 8.0,
        "the fleet measured about 10 s: {measured}"
    );
    assert!(
        (scraped - measured as f64).abs() <= slack,
        "PromQL sums {scraped} measured requests over the workers, the merge {measured}"
    );
    // Each worker's own series against its own summary.
    let by_worker = prometheus.query(&format!(
        "sum by (worker) (max_over_time(headroom_requests_total{{run=\"{label}\",phase=\"measure\"}}[10m]))"
    ));
    assert_eq!(by_worker.len(), 2, "two workers' series: {by_worker:?}");
    for (k, d) in dirs.iter().enumerate() {
        let own: u64 = summary_requests(&read_json(&d.join("summary.json")), "ops")
            .values()
            .sum();
        let worker = format!("{}/2", k + 1);
        let v = by_worker
            .iter()
            .find(|(l, _)| l.get("worker") == Some(&worker))
            .unwrap_or_else(|| panic!("no series of worker {worker}: {by_worker:?}"))
            .1;
        eprintln!("worker {worker}: PromQL {v} vs its summary.json {own}");
        assert!(
            (v - own as f64).abs() <= slack / 2.0,
            "worker {worker}: PromQL {v}, summary.json {own}"
        );
    }
    assert_scraped_series(&prometheus, label);
    eprintln!(
        "test wall time after the node started: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// A 3 s run pushing to a Pushgateway: once it has ended, its group holds the final push,
/// whose request and error counters are summary.json's exactly.
#[test]
fn a_short_runs_final_push_equals_its_summary() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("pushgateway");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let started = Instant::now();
    let runs = tempfile::tempdir().unwrap();
    let out = runs.path().join("pushed");
    let gateway = Pushgateway::start();
    let label = "pushed-run";

    let run = Running::spawn(
        "the pushing run",
        &[
            "keyvalue",
            "--hosts",
            &support::hosts(),
            "--rate",
            "400",
            "--duration",
            "3s",
            "--warmup",
            "1s",
            "-r",
            "0.2",
            "--label",
            label,
            "--metrics-push",
            &gateway.url(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (status, text, err) = run.finish(Duration::from_secs(90));
    assert_finished(status, &text, &err);
    assert!(
        text.contains(&format!("Pushing the metrics to {}", gateway.url())),
        "{text}"
    );
    assert!(
        !err.contains("push to") && !err.contains("final push"),
        "every push was accepted: {err}"
    );

    let groups = gateway.groups();
    let group = groups
        .iter()
        .find(|g| g.labels.get("run").map(String::as_str) == Some(label))
        .unwrap_or_else(|| panic!("no group of run {label}: {groups:?}\n{}", gateway.log()));
    let expected: BTreeMap<String, String> =
        [("job", "headroom"), ("run", label), ("worker", "single")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    assert_eq!(group.labels, expected);
    assert!(group.last_push_successful, "{}", group.json);
    assert_eq!(
        group.kind("headroom_requests_total").as_deref(),
        Some("COUNTER")
    );
    // The final push: the run had ended when it was made.
    let ended = group
        .samples("headroom_phase")
        .into_iter()
        .find(|(l, _)| l["phase"] == "ended")
        .map(|s| s.1);
    assert_eq!(ended, Some(1.0), "the group holds the push made at the end");

    let summary = read_json(&out.join("summary.json"));
    let pushed = group.samples("headroom_requests_total");
    for (phase, key) in [("measure", "ops"), ("warmup", "warmup")] {
        let expected = summary_requests(&summary, key);
        let got: BTreeMap<String, u64> = pushed
            .iter()
            .filter(|(l, _)| l["phase"] == phase)
            .map(|(l, v)| (l["op"].clone(), *v as u64))
            .collect();
        eprintln!("{phase}: pushed {got:?}, summary.json {expected:?}");
        assert_eq!(got, expected, "{phase} requests per op type");
    }
    let expected_errors = summary_errors(&summary, "ops");
    let got_errors: BTreeMap<(String, String), u64> = group
        .samples("headroom_errors_total")
        .iter()
        .filter(|(l, _)| l["phase"] == "measure")
        .map(|(l, v)| ((l["op"].clone(), l["class"].clone()), *v as u64))
        .filter(|(_, n)| *n > 0)
        .collect();
    eprintln!("measured errors: pushed {got_errors:?}, summary.json {expected_errors:?}");
    assert_eq!(
        got_errors, expected_errors,
        "measured errors per op type and class"
    );
    eprintln!(
        "test wall time after the node started: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
