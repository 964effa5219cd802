//! Sweeps against a real local node: in-process through the library, a short sweep of
//! fixed-length steps whose table, sweep.json, step directories and report agree, and steps
//! that end once stable; from the command line, its output and report, Ctrl-C in the
//! middle, no node to reach, and a bad range.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use headroom::cluster::LocalCluster;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use crate::support::{self, headroom, in_process, read_json, stderr, stdout};

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

    // 1. In-process, fixed-length steps: 2, 3, 5, 7 requests in flight.
    let out = runs.path().join("fixed");
    let mut settings = in_process::keyvalue_sweep_settings();
    settings.run.workload.populate = 1000;
    let (file, seen) = in_process::sweep(&settings, &out);
    let file = file.unwrap();
    assert_eq!(
        seen.runs.populates, 1,
        "populated once, before the first step: {:?}",
        seen.runs.notes
    );
    assert_eq!(seen.started, [2, 3, 5, 7]);
    assert_eq!(
        seen.done, file.steps,
        "the observer hears every step's record"
    );
    // sweep.json as written is what the sweep returned.
    let written = read_json(&out.join("sweep.json"));
    assert_eq!(written, serde_json::to_value(&file).unwrap());
    assert_eq!(written["status"], "completed", "{written}");
    let concurrencies: Vec<u64> = steps(&written)
        .iter()
        .map(|s| s["concurrency"].as_u64().unwrap())
        .collect();
    // Four steps are the fewest the stop rule needs, so all four ran whatever it said.
    assert_eq!(concurrencies, [2, 3, 5, 7], "{written}");
    let rule = written["stop"]["rule"].as_str().unwrap();
    assert!(
        ["last_concurrency", "no_improvement"].contains(&rule),
        "{written}"
    );

    // The table the terminal prints: a header, then one line per step with its rate and
    // percentiles.
    let table = headroom::sweep::table::render(&file.steps);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].contains("service time (closed loop), ms"),
        "{table}"
    );
    assert!(lines[1].trim_start().starts_with("concurrency"), "{table}");
    assert_eq!(lines.len(), 2 + 4, "{table}");
    for (line, step) in lines[2..].iter().zip(steps(&written)) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[0], step["concurrency"].to_string(), "{line}");
        assert_eq!(step["end"], "fixed");
        assert!(line.ends_with("fixed"), "{line}");
        let rate = step["achieved_per_s"].as_f64().unwrap();
        assert!(rate > 50.0, "{step}");
        // A step sends for its length (4 s); its measured part ends with its last answer,
        // which a node slowed by this busy machine may give up to the request timeout later.
        let measured = step["measured_s"].as_f64().unwrap();
        let longest = settings.step_duration_s.unwrap() + settings.run.request_timeout_s;
        assert!((3.9..longest).contains(&measured), "{step}");
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

    // The report of the directory, as `headroom sweep` writes it at the end.
    let page = runs.path().join("fixed.html");
    headroom::report::write_report(std::slice::from_ref(&out), &page).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Concurrency sweep of keyvalue"), "title");
    assert!(html.contains("sweep-throughput-vs-concurrency-fixed"));
    assert!(html.contains("sweep-latency-vs-throughput-fixed"));
    assert_eq!(html.matches("<figure").count(), 2);

    // 2. In-process, until stable: a loose target ends a step long before its longest
    // length.
    let out = runs.path().join("stable");
    let mut settings = in_process::keyvalue_sweep_settings();
    settings.concurrency = "4,8".to_string();
    settings.concurrencies = vec![4, 8];
    settings.step_duration_s = None;
    settings.stable_error = 0.25;
    settings.step_min_s = 3.0;
    settings.step_max_s = 30.0;
    let (file, _) = in_process::sweep(&settings, &out);
    let file = serde_json::to_value(file.unwrap()).unwrap();
    assert_eq!(file["stop"]["rule"], "last_concurrency", "{file}");
    for step in steps(&file) {
        assert_eq!(step["end"], "stable", "{step}");
        assert!(step["measured_s"].as_f64().unwrap() < 15.0, "{step}");
        assert!(step["intervals"].as_u64().unwrap() >= 3, "{step}");
        assert!(step["relative_error"].as_f64().unwrap() < 0.25, "{step}");
    }

    // 3. The command line: its table and lines, the report, and `headroom report` of the
    // directory.
    let out = runs.path().join("cli");
    let sweep = headroom(&[
        "sweep",
        "keyvalue",
        "--concurrency",
        "2,4",
        "--step-duration",
        "2s",
        "--warmup",
        "0s",
        "--hosts",
        &hosts,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(sweep.status.success(), "{}", stderr(&sweep));
    let text = stdout(&sweep);
    assert!(text.contains("service time (closed loop), ms"), "{text}");
    assert!(text.contains("Highest throughput:"), "{text}");
    assert!(out.join("report.html").is_file());
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
        .contains("Throughput against concurrency: cli"));
    support::assert_catalogued(&out);

    // 4. Ctrl-C during the second step: exit 130, the first step kept.
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
    support::assert_catalogued(&out);

    // 5. No node at the contact point: exit code 2, as for `run`; nothing but error.txt,
    // which says why, stays in --out, so the same command may run again.
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
    let names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["error.txt"]);
    let note = std::fs::read_to_string(out.join("error.txt")).unwrap();
    assert!(
        note.starts_with("The sweep did not start: cannot connect"),
        "{note}"
    );
    support::assert_catalogued(&out);

    // 6. A range that goes down is the user's mistake: exit code 2, before connecting.
    let bad = headroom(&["sweep", "keyvalue", "--concurrency", "64..8"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("--concurrency: '64..8': the range goes down"),
        "{}",
        stderr(&bad)
    );
}
