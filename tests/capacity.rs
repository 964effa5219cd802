//! `headroom capacity` and `headroom quickstart` against real local nodes: a short search
//! whose files must agree with each other, and the quickstart from nothing to an answer.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use headroom::cluster::LocalCluster;
use serde_json::Value;

use crate::support::{self, headroom, read_json, stderr, stdout};

/// The rows of a run's intervals.csv that are judged SLA windows, as fields.
fn window_rows(run_dir: &Path) -> Vec<Vec<String>> {
    support::interval_rows(run_dir)
        .into_iter()
        .filter(|f| f[2] == "window")
        .collect()
}

/// Two rates, one repeat, short trials: capacity.jsonl, capacity.json and each trial's own
/// run directory tell the same story.
#[test]
fn a_short_search_leaves_files_that_agree() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("capacity");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let hosts = support::hosts();
    // The search must find its capacity: one that a client stall on this busy machine made
    // client-bound (exit 4) is run again in a fresh directory.
    let (search, out) = support::until_judged(3, &runs.path().join("search"), |out| {
        headroom(&[
            "capacity",
            "keyvalue",
            "--hosts",
            &hosts,
            "--rates",
            "300,600",
            "--duration",
            "4s",
            "--warmup",
            "1s",
            "--window",
            "2s",
            // Met on an idle node at these rates; a trial fails only on a stall of seconds.
            "--sla",
            "p99<3s",
            "--fresh",
            "truncate",
            "--populate",
            "500",
            "--out",
            out.to_str().unwrap(),
        ])
    });
    assert!(search.status.success(), "{}", stderr(&search));
    let text = stdout(&search);
    assert!(text.contains("Capacity: 600/s"), "{text}");

    let summary = read_json(&out.join("capacity.json"));
    assert_eq!(summary["status"], "complete");
    assert_eq!(summary["capacity_per_s"], 600.0);
    let records: Vec<Value> = std::fs::read_to_string(out.join("capacity.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "one record per trial: {records:?}");
    let rows = summary["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);

    for (record, row) in records.iter().zip(rows) {
        assert_eq!(record["kind"], "trial");
        let mut trial = record.clone();
        trial.as_object_mut().unwrap().remove("kind");
        assert_eq!(row["trials"][0], trial, "capacity.json repeats the record");
        assert_eq!(record["pass"], true, "{record}");
        let rate = record["rate_per_s"].as_f64().unwrap();
        let run_dir = out.join(record["dir"].as_str().unwrap());
        let run = read_json(&run_dir.join("summary.json"));
        assert_eq!(run["attempted_rate_per_s"].as_f64().unwrap(), rate);
        assert_eq!(run["achieved_rate_per_s"], record["achieved_per_s"]);
        assert_eq!(
            record["requests"].as_u64().unwrap(),
            (rate * 4.0) as u64,
            "4 s at {rate}/s"
        );
        // Fresh data each trial: the populate ran before both.
        assert_eq!(run["populate"]["written"], 500);

        // The worst window's p99 in the record is the highest p99 among the trial's
        // window rows, which are two 2 s windows after the 1 s warmup.
        let windows = window_rows(&run_dir);
        assert_eq!(windows.len(), 2, "{windows:?}");
        let worst_ms = windows
            .iter()
            .map(|w| w[9].parse::<f64>().unwrap())
            .fold(0.0, f64::max);
        let term = &record["terms"][0];
        assert_eq!(term["term"], "p99<3s");
        assert_eq!(term["unit"], "ms");
        assert!(
            (term["value"].as_f64().unwrap() - worst_ms).abs() < 0.001,
            "{term} vs {worst_ms}"
        );
        assert_eq!(run["sla"]["verdict"]["windows"], 2);
    }
    assert!(
        out.join("report.html").is_file(),
        "the search writes its report"
    );
    let config = read_json(&out.join("search.json"));
    assert_eq!(config["rates"], "300,600");
    assert_eq!(config["fresh"], "truncate");
    support::assert_catalogued(&out);

    // A second search into the same directory is refused; restarting an external cluster
    // is refused before anything runs.
    let again = headroom(&["capacity", "keyvalue", "--out", out.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--resume"), "{}", stderr(&again));
    let restart = headroom(&[
        "capacity",
        "keyvalue",
        "--hosts",
        "127.0.0.1",
        "--fresh",
        "restart",
        "--out",
        runs.path().join("refused").to_str().unwrap(),
    ]);
    assert_eq!(restart.status.code(), Some(2), "{}", stderr(&restart));
    assert!(
        stderr(&restart).contains("--fresh restart restarts a local cluster"),
        "{}",
        stderr(&restart)
    );
    assert!(!runs.path().join("refused").exists());
}

/// `--goal interval` on a real node, made short (1 s windows, a probe with few requests in
/// flight, so that the ladder stays within what the node carries): the answer is a bound at
/// a confidence, capacity.json carries it with the windows it rests on, and every trial
/// records its windows.
#[test]
fn an_interval_search_states_its_bounds() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("capacity-interval");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let hosts = support::hosts();
    let out = runs.path().join("interval");
    let args = [
        "capacity",
        "keyvalue",
        "--hosts",
        &hosts,
        "--goal",
        "interval",
        "--exceed-ratio",
        "50%",
        "--resolution",
        "40%",
        "--duration",
        "3s",
        "--warmup",
        "1s",
        "--window",
        "1s",
        "--sla",
        "p99<3s",
        "--probe-concurrency",
        "2",
        "--probe-duration",
        "2s",
        "--populate",
        "500",
        "--out",
        out.to_str().unwrap(),
    ];
    // Ctrl-C in its second trial: exit 130, the first trial kept, the bounds so far said.
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut trials_started = 0;
    for line in lines.by_ref() {
        if line.unwrap().starts_with("== Trial: ") {
            trials_started += 1;
            if trials_started == 2 {
                break;
            }
        }
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let rest = rest.join("\n");
    assert_eq!(child.wait().unwrap().code(), Some(130), "{rest}");
    assert!(rest.contains("Interrupted with "), "{rest}");
    assert!(rest.contains("headroom capacity --resume"), "{rest}");
    let interrupted = read_json(&out.join("capacity.json"));
    assert_eq!(interrupted["status"], "interrupted", "{interrupted}");
    assert_eq!(
        interrupted["interval"]["method"], "interval",
        "{interrupted}"
    );
    let kept = std::fs::read_to_string(out.join("capacity.jsonl")).unwrap();
    assert_eq!(
        kept.lines().count(),
        2,
        "the probe and the first trial: {kept}"
    );

    // Resumed, it goes on from what it kept and ends with an interval, although its second
    // trial is made client-bound: the client is frozen for 1.5 s (SIGSTOP, by its own pid)
    // in the trial's measured part. That trial is run again, after a word and a pause.
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["capacity", "--resume", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut before = Vec::new();
    let mut trials_started = 0;
    for line in lines.by_ref() {
        let line = line.unwrap();
        trials_started += usize::from(line.starts_with("== Trial: "));
        let measuring = trials_started == 2 && line.trim_start().starts_with("2.0s");
        before.push(line);
        if measuring {
            break;
        }
    }
    let frozen = before
        .iter()
        .rev()
        .find(|l| l.starts_with("== Trial: "))
        .cloned();
    let printed = std::thread::spawn(move || lines.map(Result::unwrap).collect::<Vec<_>>());
    headroom::cluster::process::signal(child.id(), Signal::SIGSTOP).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    headroom::cluster::process::signal(child.id(), Signal::SIGCONT).unwrap();
    let code = child.wait().unwrap().code();
    before.extend(printed.join().unwrap());
    let text = before.join("\n");
    let resumed = std::fs::read_to_string(out.join("capacity.jsonl")).unwrap();
    assert!(resumed.starts_with(&kept), "{resumed}");
    let frozen = frozen.unwrap_or_else(|| panic!("no second trial\n{text}"));
    let rate = frozen["== Trial: ".len()..].split('/').next().unwrap();
    assert!(
        text.contains(&format!("The last trial at {rate}/s was client-bound")),
        "{frozen} is run again after a word: {text}"
    );
    // Exit 4: a trial the client could not keep, twice, capped the search (a busy machine);
    // the answer is then a lower bound and says where the client stopped.
    assert!(matches!(code, Some(0) | Some(4)), "{text}");
    assert!(
        text.contains("at 95% confidence") || text.contains("at 90% confidence"),
        "{text}"
    );
    assert!(
        text.contains("at most 50% of the SLA's windows fail"),
        "{text}"
    );

    let summary = read_json(&out.join("capacity.json"));
    let interval = &summary["interval"];
    assert_eq!(interval["method"], "interval");
    assert_eq!(interval["confidence"], 0.9);
    assert_eq!(interval["goal"]["exceed_ratio"], 0.5);
    assert_eq!(interval["goal"]["windows_per_trial"], 3);
    let lower = interval["lower_bound_per_s"]
        .as_f64()
        .expect("a lower bound");
    assert_eq!(summary["capacity_per_s"].as_f64(), Some(lower));
    assert_eq!(
        interval["evidence"]["lower"]["rate_per_s"].as_f64(),
        Some(lower)
    );
    assert!(interval["load_time_s"].as_f64().unwrap() > 0.0);
    let config = read_json(&out.join("search.json"));
    assert_eq!(config["interval"]["width"], 0.4);
    // Every trial records its windows: 2 for a short one, 3 for a full one.
    let records: Vec<Value> = std::fs::read_to_string(out.join("capacity.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let trials: Vec<&Value> = records.iter().filter(|r| r["kind"] == "trial").collect();
    assert!(!trials.is_empty());
    for trial in &trials {
        let windows = trial["windows"].as_u64().unwrap();
        // Fewer when a failing window decided a full trial before its end.
        assert!((1..=3).contains(&windows), "{trial}");
        assert!(
            trial["failed_windows"].as_u64().unwrap() <= windows,
            "{trial}"
        );
    }
    assert!(
        trials.iter().any(|t| t["windows"] == 2),
        "the search climbs in short trials"
    );
    support::assert_catalogued(&out);
}

/// The README's main command, made short: a node of its own, an automatic search, the
/// capacity printed, the node gone afterwards.
#[test]
fn the_quickstart_goes_from_nothing_to_a_capacity() {
    let _machine = support::exclusive();
    let cluster_dir = support::cluster_dir("quickstart");
    // The quickstart removes its node itself; this stops it should the test fail first.
    let _guard = support::StopOnDrop(cluster_dir.clone());
    let runs = tempfile::tempdir().unwrap();
    let out = runs.path().join("quickstart");

    let quickstart = headroom(&[
        "quickstart",
        "--cluster-dir",
        cluster_dir.to_str().unwrap(),
        "--heap",
        "768M",
        "--duration",
        "10s",
        "--warmup",
        "2s",
        // Five windows a trial, and a goal that a few dozen windows settle.
        "--sla",
        "p99.9<100ms@2s",
        "--exceed-ratio",
        "25%",
        "--confidence",
        "80%",
        "--resolution",
        "30%",
        "--populate",
        "2k",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = stdout(&quickstart);
    assert!(text.contains("It takes about"), "{text}");
    // The machine split between the node and the client (from 4 cores), or shared with the
    // node after the client, said before it starts.
    let machine = headroom::cpus::machine();
    let expected = match headroom::cpus::default_split(machine) {
        Some(split) => format!(
            "Cores: the node on {}, the client on {} (of {machine}); the node at niceness 10, \
             after the client.",
            cores_words(&split.nodes),
            cores_words(&split.client)
        ),
        None => format!(
            "Cores: the node on any core, the client on any core (of {machine}); the node at \
             niceness 10, after the client; this machine gives headroom {}",
            if machine.len() == 1 {
                "one core".to_string()
            } else {
                format!("{} cores", machine.len())
            }
        ),
    };
    assert!(text.contains(&expected), "{expected}\n{text}");
    let config = read_json(&out.join("search.json"));
    let split = headroom::cpus::default_split(machine);
    assert_eq!(
        config["run"]["client_cpus"].as_str(),
        split.as_ref().map(|s| s.client.to_string()).as_deref(),
        "the search's trials bind the client to its share"
    );
    let summary = read_json(&out.join("capacity.json"));
    assert!(summary["probe"]["achieved_per_s"].as_f64().unwrap() > 0.0);
    // The answer is an interval: its bounds at the confidence asked, the capacity the lower
    // bound, and the words and the exit code that go with what was confirmed.
    let interval = &summary["interval"];
    assert_eq!(interval["method"], "interval", "{summary}");
    assert_eq!(interval["confidence"].as_f64(), Some(0.8), "{summary}");
    assert_eq!(
        summary["capacity_per_s"], interval["lower_bound_per_s"],
        "{summary}"
    );
    let lower = interval["lower_bound_per_s"].as_f64();
    let upper = interval["upper_bound_per_s"].as_f64();
    let words = match (lower, upper) {
        (Some(_), Some(_)) => "between",
        (Some(_), None) => "Capacity: at least",
        (None, Some(_)) => "Capacity: below",
        (None, None) => "Capacity: no bound",
    };
    let answer = text
        .lines()
        .rev()
        .find(|l| l.starts_with("Capacity: "))
        .unwrap_or_else(|| panic!("no answer line\n{text}"));
    assert!(answer.contains(words), "{words}: {answer}");
    assert!(
        text.contains("On this machine, under SLA p99.9<100ms"),
        "{text}"
    );
    assert!(text.contains("minutes in all."), "{text}");
    if let (Some(lower), Some(upper)) = (lower, upper) {
        assert!(lower < upper, "{summary}");
        assert!(answer.contains("at 80% confidence"), "{answer}");
    }
    let expected = match (summary["status"].as_str(), lower) {
        // Client-bound twice at some rate: the answer is incomplete, whatever lies below.
        (Some("invalid"), _) => 4,
        (Some("complete"), Some(_)) => 0,
        (Some("complete"), None) => 3,
        (status, _) => panic!("status {status:?}\n{text}\n{}", stderr(&quickstart)),
    };
    assert_eq!(
        quickstart.status.code(),
        Some(expected),
        "{text}\n{}",
        stderr(&quickstart)
    );
    assert!(
        !cluster_dir.exists(),
        "the quickstart removes its node and its data"
    );
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<svg"), "the report has its charts");
    assert!(
        report.contains("Failing windows against rate"),
        "and the interval's"
    );
    support::assert_catalogued(&out);
}

/// "core 1" or "cores 1-3".
fn cores_words(cores: &headroom::cpus::Cores) -> String {
    if cores.len() == 1 {
        format!("core {cores}")
    } else {
        format!("cores {cores}")
    }
}
