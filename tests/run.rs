//! `headroom run` against a real local node: the files it leaves, bad input, and the stall
//! test of METHOD.md §2.

use std::io::{BufRead, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use headroom::cluster::LocalCluster;
use nix::sys::signal::Signal;

use crate::support::{self, headroom, op, read_json, stderr, stdout};

/// Starts `headroom run ARGS` and returns once its load begins (the "Running" line), with
/// the rest of its standard output still to read.
fn spawn_run(args: &[&str]) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .arg("run")
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().starts_with("Running") {
            break;
        }
    }
    (child, lines)
}

/// The issue's example, shortened, then every kind of bad input.
#[test]
fn a_run_leaves_its_files_and_bad_input_is_refused() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("run");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = runs.path().join("ts");
    let out_text = out.to_str().unwrap();

    let run = headroom(&[
        "run",
        "timeseries",
        "--rate",
        "500",
        "--duration",
        "6s",
        "--warmup",
        "2s",
        "-r",
        "0.2",
        "--populate",
        "1000",
        "--sla",
        "p99.9 < 5s, errors < 1%",
        "--window",
        "2s",
        "--out",
        out_text,
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let text = stdout(&run);
    assert!(text.contains("Populated 1000 rows"), "{text}");
    assert!(text.contains("response time (open loop"), "{text}");
    assert!(
        text.lines().filter(|l| l.contains("write:")).count() >= 7,
        "a live line per second:\n{text}"
    );

    for file in [
        "config.json",
        "histograms.hlog",
        "intervals.csv",
        "summary.json",
        "write.hgrm",
        "read.hgrm",
        "report.html",
    ] {
        assert!(out.join(file).is_file(), "{file} is missing");
    }
    let summary = read_json(&out.join("summary.json"));
    let (writes, reads) = (op(&summary, "write"), op(&summary, "read"));
    assert_eq!(
        writes["requests"].as_u64().unwrap() + reads["requests"].as_u64().unwrap(),
        3000,
        "6 s at 500/s"
    );
    assert_eq!(
        reads["requests"].as_u64().unwrap(),
        600,
        "exactly 20% reads"
    );
    assert_eq!(
        summary["warmup"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["requests"].as_u64().unwrap())
            .sum::<u64>(),
        1000
    );
    assert_eq!(summary["populate"]["written"], 1000);
    assert!(summary["client"]["cpu_us_per_request"].as_f64().unwrap() > 0.0);
    let config = read_json(&out.join("config.json"));
    assert_eq!(config["workload"]["read_ratio"], 0.2);
    assert_eq!(config["mode"]["rate_per_s"], 500.0);

    // intervals.csv and the histogram log agree with the summary.
    let rows = support::interval_rows(&out);
    let measured_writes: u64 = rows
        .iter()
        .filter(|f| f[2] == "measure" && f[3] == "write")
        .map(|f| f[4].parse::<u64>().unwrap())
        .sum();
    assert_eq!(measured_writes, writes["requests"].as_u64().unwrap());

    // The achieved rate counts the answers within the scheduled 6 s: all 3000 when the node
    // keeps up. Requests still in flight as the schedule ends are the only shortfall allowed,
    // and those are at most the ones sent in the last second's longest response time (a
    // node that stalls at the end, as a loaded machine makes it, answers them later).
    let late_s = rows
        .iter()
        .filter(|f| f[2] == "measure" && f[3] != "all" && f[0].parse::<f64>().unwrap() >= 7.0)
        .map(|f| f[12].parse::<f64>().unwrap() / 1e3)
        .fold(0.0, f64::max);
    let achieved = summary["achieved_rate_per_s"].as_f64().unwrap();
    let floor = 500.0 * (1.0 - late_s.max(0.02) / 6.0);
    assert!(
        achieved >= floor && achieved <= 501.0,
        "achieved {achieved}/s; at least {floor:.1}/s with {late_s:.3} s responses at the end: {summary}"
    );

    // The SLA: three 2 s windows after the warmup, each a row of intervals.csv, all passing
    // (p99.9 of 5 s holds on an idle node), the worst p99.9 the highest of the windows'.
    let sla = &summary["sla"];
    assert_eq!(sla["spec"], "p99.9<5s, errors<1%, window=2s");
    assert_eq!(sla["verdict"]["pass"], true, "{sla}");
    assert_eq!(sla["verdict"]["windows"], 3, "{sla}");
    let windows: Vec<&Vec<String>> = rows.iter().filter(|f| f[2] == "window").collect();
    assert_eq!(windows.len(), 3, "{rows:?}");
    assert_eq!(
        windows.iter().map(|w| w[0].as_str()).collect::<Vec<_>>(),
        ["2.000", "4.000", "6.000"],
        "windows start at the end of the warmup"
    );
    assert!(windows.iter().all(|w| w[14] == "pass" && w[15].is_empty()));
    assert_eq!(
        windows
            .iter()
            .map(|w| w[4].parse::<u64>().unwrap())
            .sum::<u64>(),
        3000,
        "the windows hold every measured request"
    );
    let worst_p999_ms = windows
        .iter()
        .map(|w| w[10].parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    let reported_ns = sla["verdict"]["worst"][0]["value"]["latency_ns"]
        .as_u64()
        .unwrap();
    assert!(
        (reported_ns as f64 / 1e6 - worst_p999_ms).abs() < 0.001,
        "worst p99.9 {reported_ns} ns vs the windows' {worst_p999_ms} ms"
    );
    assert!(
        text.contains("SLA p99.9<5s, errors<1%, window=2s: PASS"),
        "{text}"
    );

    let hlog = std::fs::read_to_string(out.join("histograms.hlog")).unwrap();
    assert!(hlog.contains("#[Histogram log format version 1.3]"));
    for tag in [
        "Tag=write.rt,",
        "Tag=write.st,",
        "Tag=read.rt,",
        "Tag=warmup.write.rt,",
        "Tag=client.hiccup,",
    ] {
        assert!(hlog.contains(tag), "{tag} missing from the hlog");
    }

    // SIGTERM ends a run cleanly: a summary of what ran, exit code 130.
    let interrupted = runs.path().join("interrupted");
    let interrupted_text = interrupted.to_str().unwrap();
    let (mut child, lines) = spawn_run(&[
        "keyvalue",
        "--rate",
        "200",
        "--duration",
        "60s",
        "--out",
        interrupted_text,
    ]);
    std::thread::sleep(Duration::from_secs(3));
    headroom::cluster::process::signal(child.id(), Signal::SIGTERM).unwrap();
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(rest.iter().any(|l| l.starts_with("Summary")), "{rest:?}");
    let summary = read_json(&interrupted.join("summary.json"));
    assert_eq!(summary["stop"], "interrupted");
    let sent = op(&summary, "write")["requests"].as_u64().unwrap();
    assert!((400..=1000).contains(&sent), "about 3 s at 200/s: {sent}");

    // Bad input: one clear line, exit code 2, nothing half-written.
    let bad = |args: &[&str], expected: &str| {
        let out = headroom(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(expected),
            "{args:?}: '{err}' should say '{expected}'"
        );
    };
    let nowhere = runs.path().join("nowhere");
    let nowhere_text = nowhere.to_str().unwrap();
    bad(
        &["run", "nosuchworkload", "--out", nowhere_text],
        "unknown workload 'nosuchworkload'",
    );
    bad(
        &["run", "keyvalue", "--rate", "lots", "--out", nowhere_text],
        "rate 'lots' is not valid",
    );
    bad(
        &[
            "run",
            "keyvalue",
            "--duration",
            "1 fortnight",
            "--out",
            nowhere_text,
        ],
        "duration '1 fortnight' is not valid",
    );
    bad(
        &[
            "run",
            "keyvalue",
            "--sla",
            "p99<10ms, p99.9<1O0ms",
            "--out",
            nowhere_text,
        ],
        "SLA 'p99<10ms, p99.9<1O0ms' is not valid",
    );
    bad(
        &[
            "run",
            "keyvalue",
            "--sla",
            "scan:p99<10ms",
            "--out",
            nowhere_text,
        ],
        "scan",
    );
    assert!(!nowhere.exists(), "bad flags create no run directory");

    let unreachable = runs.path().join("unreachable");
    let started = Instant::now();
    bad(
        &[
            "run",
            "keyvalue",
            "--hosts",
            "127.0.0.77:9042",
            "--rate",
            "10",
            "--out",
            unreachable.to_str().unwrap(),
        ],
        "cannot connect to 127.0.0.77:9042",
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "an unreachable contact point fails within seconds"
    );
    let left: Vec<_> = std::fs::read_dir(&unreachable)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["error.txt"], "only a note of what failed");

    let node = std::net::SocketAddr::from(([127, 0, 0, 1], 9042));
    support::query(node, "CREATE KEYSPACE IF NOT EXISTS clash WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    support::query(
        node,
        "CREATE TABLE IF NOT EXISTS clash.keyvalue (key int PRIMARY KEY, other int)",
    );
    let clash = runs.path().join("clash");
    bad(
        &[
            "run",
            "keyvalue",
            "--keyspace",
            "clash",
            "--rate",
            "10",
            "--out",
            clash.to_str().unwrap(),
        ],
        "table clash.keyvalue exists with columns key int, other int",
    );
}

/// METHOD.md §2, against a real node: freeze the Cassandra JVM (SIGSTOP, by its own pid) for
/// about two seconds during a fixed-rate run. Requests intended during the freeze wait up to
/// S, so p(q) = S − (1 − q)·T: the reported p99, p99.9 and max must match, S being the
/// effective stall (the freeze until the node answers again, at most 0.25 s longer).
///
/// The formula assumes the freeze is the only stall. On a machine loaded hard enough that the
/// client itself stops for over 100 ms, or the node stalls for over 250 ms away from the
/// freeze, the run measures those stalls too (correctly, but not the formula's case): such a
/// run is reported and repeated once, and the repeat must be undisturbed and pass.
#[test]
fn stall_test_a_frozen_node_shows_in_full() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("stall");
    let cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let pid = cluster.running_pids()[0];
    let runs = tempfile::tempdir().unwrap();
    let (rate, measured_s) = (250.0, 20.0);

    for attempt in 1..=2 {
        let run = stall_run(
            pid,
            &runs.path().join(format!("stall-{attempt}")),
            rate,
            measured_s,
        );
        if let Some(disturbance) = &run.disturbed {
            eprintln!("attempt {attempt} disturbed: {disturbance}");
            assert!(
                attempt < 2,
                "the machine was too loaded to test the formula twice: {disturbance}"
            );
            continue;
        }
        let writes = op(&run.summary, "write");
        assert_eq!(
            writes["requests"].as_u64().unwrap(),
            (rate * measured_s) as u64,
            "nothing skipped"
        );
        let t = measured_s;
        let s = run.stall_s;
        let got = |q: &str| writes["response_time"][q].as_f64().unwrap() / 1e3;
        let (p99, p999, max) = (got("p99_ms"), got("p999_ms"), got("max_ms"));
        // The server is stalled from the SIGSTOP until it answers again, which takes it a
        // little longer than the SIGCONT (about 0.1 s when a collection or the backlog
        // follows): the longest response is that effective stall, and the formula takes it as S.
        let effective = max;
        let (e99, e999) = (effective - 0.01 * t, effective - 0.001 * t);
        eprintln!("stall {s:.3} s (effective {effective:.3} s): p99 {p99:.3} (formula {e99:.3}), p99.9 {p999:.3} ({e999:.3}), max {max:.3} ({s:.3})");
        assert!(
            (p99 - e99).abs() < 0.05 * e99,
            "p99 {p99:.3} s, formula {e99:.3} s"
        );
        assert!(
            (p999 - e999).abs() < 0.05 * e999,
            "p99.9 {p999:.3} s, formula {e999:.3} s"
        );
        // The node's resume after SIGCONT is the server's, not the client's: measured 87 and
        // 110 ms in CI. The longest response is the freeze plus at most a quarter second of it.
        assert!(
            max >= s - 0.01 && max - s < 0.25,
            "max {max:.3} s, stall {s:.3} s"
        );
        // At this rate every request was sent on time (no in-flight limit reached), so
        // service time sees the freeze as well, and never exceeds response time.
        let service = |q: &str| writes["service_time"][q].as_f64().unwrap() / 1e3;
        assert!(service("p99_ms") <= p99 && service("max_ms") <= max);
        return;
    }
}

/// One run of the stall test: its summary, the freeze's length, and what disturbed it if
/// anything besides the freeze stalled the client or the node.
struct StallRun {
    summary: serde_json::Value,
    stall_s: f64,
    disturbed: Option<String>,
}

/// Runs keyvalue at `rate` for a 5 s warmup and `measured_s`, freezing the node 10 s in.
fn stall_run(pid: u32, out: &std::path::Path, rate: f64, measured_s: f64) -> StallRun {
    let (rate_text, duration_text) = (rate.to_string(), format!("{measured_s}s"));
    let (mut child, lines) = spawn_run(&[
        "keyvalue",
        "--rate",
        &rate_text,
        "--warmup",
        "5s",
        "--duration",
        &duration_text,
        "--out",
        out.to_str().unwrap(),
    ]);
    let run_started = Instant::now();
    // Freeze the node 10 s in: 5 s into the measured part.
    std::thread::sleep(Duration::from_secs(10));
    headroom::cluster::process::signal(pid, Signal::SIGSTOP).unwrap();
    let frozen = Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    headroom::cluster::process::signal(pid, Signal::SIGCONT).unwrap();
    let stall_s = frozen.elapsed().as_secs_f64();
    let frozen_at_s = frozen.duration_since(run_started).as_secs_f64();
    eprintln!("froze the node at {frozen_at_s:.2} s for {stall_s:.3} s");
    for line in lines {
        eprintln!("{}", line.unwrap());
    }
    assert!(child.wait().unwrap().success());

    let summary = read_json(&out.join("summary.json"));
    let hiccup_ms = summary["client"]["hiccup_max_ms"].as_f64().unwrap();
    // Measured intervals wholly before the freeze or starting a second after it ends see no
    // stall unless something else stalled.
    let elsewhere_ms = support::interval_rows(out)
        .iter()
        .filter(|f| f[2] == "measure")
        .filter(|f| {
            let start: f64 = f[0].parse().unwrap();
            let end = start + f[1].parse::<f64>().unwrap();
            end <= frozen_at_s - 0.5 || start >= frozen_at_s + stall_s + 1.0
        })
        .map(|f| f[12].parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    let disturbed = if hiccup_ms > 100.0 {
        Some(format!("the client stalled for {hiccup_ms:.0} ms"))
    } else if elsewhere_ms > 250.0 {
        Some(format!(
            "a response took {elsewhere_ms:.0} ms away from the freeze"
        ))
    } else {
        None
    };
    StallRun {
        summary,
        stall_s,
        disturbed,
    }
}

/// A cluster that requires a password: one line naming the flags to give, exit code 2.
#[test]
fn a_cluster_that_requires_authentication_says_which_flags_to_give() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("auth");
    let config = headroom::cluster::ClusterConfig {
        yaml: vec![("authenticator".into(), "PasswordAuthenticator".into())],
        ..support::small_cluster(1)
    };
    let _cluster = LocalCluster::start(&dir, config, &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = runs.path().join("auth");
    let run = headroom(&[
        "run",
        "keyvalue",
        "--rate",
        "10",
        "--duration",
        "1s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    let err = stderr(&run);
    assert!(
        err.contains("127.0.0.1:9042 requires authentication"),
        "{err}"
    );
    assert!(err.contains("--username and --password"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["error.txt"]);
}
