//! `headroom sweep` against a real local node: a short sweep of fixed-length steps whose
//! table, sweep.json, step directories and report agree; steps that end once stable; Ctrl-C
//! in the middle; no node to reach; and a bad range.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use headroom::cluster::LocalCluster;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use crate::support::{self, headroom, read_json, stderr, stdout};

fn steps(sweep: &Value) -> &Vec<Value> {
    sweep["steps"].as_array().unwrap()
}

#[test]
fn a_sweep_steps_up_prints_its_table_and_reports() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("sweep");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let hosts = support::hosts();
    let runs = tempfile::tempdir().unwrap();

    // 1. Fixed-length steps: 2, 3, 5, 7 requests in flight.
    let out = runs.path().join("fixed");
    let sweep = headroom(&[
        "sweep",
        "keyvalue",
        "--concurrency",
        "2..8",
        "--step-duration",
        "4s",
        "--warmup",
        "1s",
        "--populate",
        "1000",
        "--hosts",
        &hosts,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(sweep.status.success(), "{}", stderr(&sweep));
    let text = stdout(&sweep);
    assert_eq!(
        text.matches("Populated 1000 rows").count(),
        1,
        "populated once, before the first step:\n{text}"
    );
    let file = read_json(&out.join("sweep.json"));
    assert_eq!(file["status"], "completed", "{file}");
    let concurrencies: Vec<u64> = steps(&file)
        .iter()
        .map(|s| s["concurrency"].as_u64().unwrap())
        .collect();
    // Four steps are the fewest the stop rule needs, so all four ran whatever it said.
    assert_eq!(concurrencies, [2, 3, 5, 7], "{file}");
    let rule = file["stop"]["rule"].as_str().unwrap();
    assert!(
        ["last_concurrency", "no_improvement"].contains(&rule),
        "{file}"
    );

    // The final table: a header, then one line per step with its rate and percentiles.
    let table_start = text.rfind("service time (closed loop), ms").unwrap();
    let table: Vec<&str> = text[table_start..].lines().skip(1).take(5).collect();
    assert!(table[0].trim_start().starts_with("concurrency"), "{text}");
    for (line, step) in table[1..].iter().zip(steps(&file)) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[0], step["concurrency"].to_string(), "{line}");
        assert_eq!(step["end"], "fixed");
        assert!(line.ends_with("fixed"), "{line}");
        let rate = step["achieved_per_s"].as_f64().unwrap();
        assert!(rate > 50.0, "{step}");
        let measured = step["measured_s"].as_f64().unwrap();
        assert!((3.9..5.0).contains(&measured), "{step}");
        let latency = &step["service_time"];
        let p50 = latency["p50_ms"].as_f64().unwrap();
        let p99 = latency["p99_ms"].as_f64().unwrap();
        assert!(p50 > 0.0 && p50 <= p99, "{step}");
        // The step's own run directory agrees with its record.
        let run_dir = out.join(step["dir"].as_str().unwrap());
        let summary = read_json(&run_dir.join("summary.json"));
        assert_eq!(summary["mode"]["concurrency"], step["concurrency"]);
        assert_eq!(summary["achieved_rate_per_s"], step["achieved_per_s"]);
        assert!(run_dir.join("histograms.hlog").exists());
        let ops = summary["ops"].as_array().unwrap();
        let count = |field: &str| -> u64 { ops.iter().map(|o| o[field].as_u64().unwrap()).sum() };
        assert_eq!(step["requests"], count("requests"));
        assert_eq!(step["errors"], count("requests") - count("ok"), "{step}");
        ops.iter().for_each(support::assert_succeeded);
    }
    assert!(text.contains("Highest throughput:"), "{text}");

    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Concurrency sweep of keyvalue"), "title");
    assert!(html.contains("sweep-throughput-vs-concurrency-fixed"));
    assert!(html.contains("sweep-latency-vs-throughput-fixed"));
    assert_eq!(html.matches("<figure").count(), 2);
    // `headroom report` makes the same page from the directory.
    let again = runs.path().join("again.html");
    let report = headroom(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert!(report.status.success(), "{}", stderr(&report));
    assert!(std::fs::read_to_string(&again)
        .unwrap()
        .contains("Throughput against concurrency: fixed"));

    // 2. Until stable: a loose target ends a step long before its longest length.
    let out = runs.path().join("stable");
    let sweep = headroom(&[
        "sweep",
        "keyvalue",
        "--concurrency",
        "4,8",
        "--stable-error",
        "25%",
        "--step-min",
        "3s",
        "--step-max",
        "30s",
        "--warmup",
        "1s",
        "--hosts",
        &hosts,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(sweep.status.success(), "{}", stderr(&sweep));
    let file = read_json(&out.join("sweep.json"));
    assert_eq!(file["stop"]["rule"], "last_concurrency", "{file}");
    for step in steps(&file) {
        assert_eq!(step["end"], "stable", "{step}");
        assert!(step["measured_s"].as_f64().unwrap() < 15.0, "{step}");
        assert!(step["intervals"].as_u64().unwrap() >= 3, "{step}");
        assert!(step["relative_error"].as_f64().unwrap() < 0.25, "{step}");
    }
    assert!(stdout(&sweep).contains("stable after"));

    // 3. Ctrl-C during the second step: exit 130, the first step kept.
    let out = runs.path().join("interrupted");
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "sweep",
            "keyvalue",
            "--concurrency",
            "2,4,8",
            "--step-duration",
            "3s",
            "--warmup",
            "0s",
            "--hosts",
            &hosts,
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if line.starts_with("Running") && line.contains("4 in flight") {
            break;
        }
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{}", rest.join("\n"));
    let file = read_json(&out.join("sweep.json"));
    assert_eq!(file["status"], "interrupted", "{file}");
    assert_eq!(file["stop"]["rule"], "interrupted");
    let ends: Vec<&str> = steps(&file)
        .iter()
        .map(|s| s["end"].as_str().unwrap())
        .collect();
    assert_eq!(ends, ["fixed", "interrupted"], "{file}");
    assert!(Path::new(&out.join("report.html")).exists());

    // 4. No node at the contact point: exit code 2, as for `run`, and sweep.json says why.
    let out = runs.path().join("unreachable");
    let unreachable = headroom(&[
        "sweep",
        "keyvalue",
        "--concurrency",
        "2,4",
        "--step-duration",
        "2s",
        "--hosts",
        &format!("{}:9", support::address()),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        unreachable.status.code(),
        Some(2),
        "{}",
        stderr(&unreachable)
    );
    let file = read_json(&out.join("sweep.json"));
    assert_eq!(file["status"], "failed", "{file}");
    assert_eq!(file["stop"]["rule"], "step_failed");
    assert_eq!(steps(&file).len(), 1);

    // 5. A range that goes down is the user's mistake: exit code 2, before connecting.
    let bad = headroom(&["sweep", "keyvalue", "--concurrency", "64..8"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("--concurrency: '64..8': the range goes down"),
        "{}",
        stderr(&bad)
    );
}
