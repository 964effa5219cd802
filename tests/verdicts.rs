//! Verdicts against a real node: a search whose every request fails finds no capacity, a
//! client that cannot keep its schedule gives no verdict and stops the search, and a
//! password given on the command line is written nowhere.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use headroom::cluster::LocalCluster;
use nix::sys::signal::Signal;

use crate::support::{self, headroom, read_json, stderr, stdout};

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                all.push(path);
            }
        }
    }
    all
}

#[test]
fn failures_fail_a_client_bound_search_stops_and_secrets_stay_secret() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("verdicts");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let hosts = support::hosts();

    // Three replicas wanted of a one-node cluster at ALL: every request is unavailable. The
    // search tries both rates (a ladder goes on after a failure) and names no capacity; each
    // trial fails on its failed requests, whose share is in the table.
    // Trials of 2 s judge whether the client kept its schedule too: on a busy machine one
    // may be client-bound, which stops the search before it can find that every rate fails.
    let (search, out) = support::until_judged(3, &runs.path().join("all-failing"), |out| {
        headroom(&[
            "capacity",
            "keyvalue",
            "--hosts",
            &hosts,
            "--keyspace",
            "unavailable",
            "--replication",
            "simple:3",
            "--consistency",
            "ALL",
            "--rates",
            "100,200",
            "--duration",
            "2s",
            "--warmup",
            "0s",
            "--window",
            "2s",
            "--sla",
            "p99<1s",
            "--out",
            out.to_str().unwrap(),
        ])
    });
    let text = stdout(&search);
    // A search that finds no rate meeting its SLA ends as a failed SLA does.
    assert_eq!(search.status.code(), Some(3), "{text}\n{}", stderr(&search));
    assert!(
        text.contains("Capacity: none — the SLA failed at every rate tried"),
        "{text}"
    );
    assert!(text.contains("all failed ✗"), "{text}");
    let summary = read_json(&out.join("capacity.json"));
    assert_eq!(summary["status"], "complete");
    assert!(summary["capacity_per_s"].is_null(), "{summary}");
    for row in summary["rows"].as_array().unwrap() {
        let trial = &row["trials"][0];
        assert_eq!(trial["pass"], false, "{trial}");
        assert_eq!(
            trial["achieved_per_s"], 0.0,
            "failures carry no load: {trial}"
        );
        assert_eq!(trial["terms"][0]["failed_percent"], 100.0, "{trial}");
    }

    // The same as a run: an SLA failure, exit code 3, nothing achieved.
    let (run, run_out) =
        support::until_judged(3, &runs.path().join("all-failing-run"), |run_out| {
            headroom(&[
                "run",
                "keyvalue",
                "--hosts",
                &hosts,
                "--keyspace",
                "unavailable",
                "--replication",
                "simple:3",
                "--consistency",
                "ALL",
                "--rate",
                "50",
                "--duration",
                "2s",
                "--window",
                "2s",
                "--sla",
                "p99.9<100ms",
                "--out",
                run_out.to_str().unwrap(),
            ])
        });
    assert_eq!(run.status.code(), Some(3), "{}", stderr(&run));
    let text = stdout(&run);
    assert!(text.contains("achieved 0/s"), "{text}");
    assert!(text.contains("all 100 requests failed"), "{text}");
    let summary = read_json(&run_out.join("summary.json"));
    assert_eq!(summary["achieved_rate_per_s"], 0.0);
    assert!(summary["failed_rate_per_s"].as_f64().unwrap() > 40.0);
    assert_eq!(summary["sla"]["verdict"]["pass"], false);
    assert_eq!(summary["sla"]["verdict"]["failing_by_failures"], 1);
    assert_eq!(summary["validity"]["verdict"], "valid");

    // One client thread asked for 400 000 requests a second, with in-flight slots to
    // spare: it cannot send them. The trial is invalid, the search stops there and names no
    // capacity, and the exit code says there is no verdict.
    let out = runs.path().join("client-bound");
    let search = headroom(&[
        "capacity",
        "keyvalue",
        "--hosts",
        &hosts,
        "--threads",
        "1",
        "--max-in-flight",
        "1000000",
        "--rates",
        "400k,800k",
        "--duration",
        "2s",
        "--warmup",
        "0s",
        "--window",
        "2s",
        "--sla",
        "p99.9<100ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&search);
    assert_eq!(search.status.code(), Some(4), "{text}\n{}", stderr(&search));
    assert!(text.contains("INVALID: client-bound"), "{text}");
    assert!(
        text.contains(
            "Capacity: none — the search stopped at 400 000/s (repeat 1): invalid: client-bound"
        ),
        "{text}"
    );
    assert!(
        !text.contains("Trial: 800000/s"),
        "the search stopped: {text}"
    );
    let summary = read_json(&out.join("capacity.json"));
    assert_eq!(summary["status"], "invalid");
    assert!(summary["capacity_per_s"].is_null());
    assert_eq!(summary["invalid"]["rate_per_s"], 400_000.0);
    let trial = read_json(&out.join("trials/rate-400000-repeat-1/summary.json"));
    assert_eq!(trial["validity"]["verdict"], "client-bound", "{trial}");
    assert_eq!(trial["validity"]["figures"]["limit_waits"], 0);

    // The client itself stalls: its process is stopped for 1.5 s in the middle of a run
    // (SIGSTOP, by its own pid), as a client machine that swaps or is descheduled would be.
    // The node answered every request at once; the window that holds the stall fails on the
    // client's own wait, so the run has no verdict (exit code 4), and says why.
    let out = runs.path().join("client-stall");
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "run",
            "keyvalue",
            "--hosts",
            &hosts,
            "--rate",
            "500",
            "--duration",
            "8s",
            "--window",
            "2s",
            "--sla",
            "p99<1s",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The first interval's line: the measured run is under way.
    for line in lines.by_ref() {
        if line.unwrap().trim_start().starts_with("1.0s") {
            break;
        }
    }
    let printed = std::thread::spawn(move || lines.map(Result::unwrap).collect::<Vec<_>>());
    std::thread::sleep(Duration::from_secs(2));
    headroom::cluster::process::signal(child.id(), Signal::SIGSTOP).unwrap();
    let stopped = std::time::Instant::now();
    std::thread::sleep(Duration::from_millis(1500));
    headroom::cluster::process::signal(child.id(), Signal::SIGCONT).unwrap();
    // What was applied: at least 1.5 s, more when this thread was late to wake.
    let applied_ms = stopped.elapsed().as_secs_f64() * 1e3;
    let status = child.wait().unwrap();
    let text = printed.join().unwrap().join("\n");
    assert_eq!(status.code(), Some(4), "{text}");
    assert!(text.contains("INVALID: client-bound"), "{text}");
    assert!(
        text.contains("the client's own wait before sending decided it"),
        "the failing window says whose it was: {text}"
    );
    let summary = read_json(&out.join("summary.json"));
    let validity = &summary["validity"];
    assert_eq!(validity["verdict"], "client-bound", "{validity}");
    assert!(
        validity["figures"]["client_decided_windows"]
            .as_u64()
            .unwrap()
            >= 1
    );
    assert!(
        validity["figures"]["late_sends"].as_u64().unwrap() > 500,
        "{validity}"
    );
    // The client's thread was held for the whole stop: its wake-up came that late (less the
    // tick it had not reached yet), and so did the request waiting to be sent. The two are
    // measured apart, the first by the timer, the second by the request's own send time.
    let hiccup_ms = validity["figures"]["hiccup_max_ms"].as_f64().unwrap();
    let wait_ms = validity["figures"]["wait_max_ms"].as_f64().unwrap();
    assert!(
        hiccup_ms > 1000.0 && hiccup_ms <= applied_ms + 500.0,
        "hiccup {hiccup_ms} ms for a stop of {applied_ms:.0} ms: {validity}"
    );
    assert!(
        wait_ms > 1000.0,
        "longest wait {wait_ms} ms for a stop of {applied_ms:.0} ms: {validity}"
    );
    assert_eq!(validity["figures"]["limit_waits"], 0);

    // A password on the command line is written nowhere and printed nowhere.
    let secret = "Zq9-not-to-be-written-7Wp";
    let out = runs.path().join("secret");
    let run = headroom(&[
        "run",
        "keyvalue",
        "--hosts",
        &hosts,
        "--username",
        "cassandra",
        &format!("--password={secret}"),
        "--rate",
        "20",
        "--duration",
        "1s",
        "--out",
        out.to_str().unwrap(),
    ]);
    // 20 requests: one sent 100 ms late on a busy machine makes the run client-bound, and
    // what is checked here is written either way.
    support::assert_ran_or_client_bound(&run, &out, 0);
    assert!(!stdout(&run).contains(secret) && !stderr(&run).contains(secret));
    assert!(
        stderr(&run).contains("can be read by other users of this machine"),
        "{}",
        stderr(&run)
    );
    let written = files(&out);
    assert!(written.len() >= 5, "{written:?}");
    for file in written {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{} holds the password",
            file.display()
        );
    }
    let config = read_json(&out.join("config.json"));
    let line: Vec<&str> = config["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(line.contains(&"--password=<redacted>"), "{line:?}");
}
