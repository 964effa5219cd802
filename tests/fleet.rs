//! A fleet of client processes against a real local node: workers of one schedule
//! (`run --worker K/N --start-at`), `headroom merge` (exact counts, the merged distribution
//! as Java's HistogramLogProcessor makes it of the workers' logs, its refusals), and a
//! capacity search whose trials two local workers run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use headroom::cluster::java::Java;
use headroom::cluster::LocalCluster;
use headroom::figures::Timeline;
use headroom::results::config::rfc3339;
use headroom::results::run_dir::{read_hlog, RunData};
use serde_json::Value;

use crate::hdr_tools::{assert_same_lines, hdr_histogram_jar, run_java};
use crate::support::{self, headroom, op, read_json, stderr, stdout};

/// Starts `n` workers of `args` (a `run` command line without --worker, --start-at and
/// --out) at once, all starting their schedule `lead` from now, each writing `dirs/wK`;
/// returns each one's output, in worker order.
fn run_workers(n: u32, args: &[&str], dirs: &Path, lead: Duration) -> Vec<(PathBuf, Output)> {
    let start_at = rfc3339(SystemTime::now() + lead);
    let children: Vec<(PathBuf, std::process::Child)> = (1..=n)
        .map(|k| {
            let out = dirs.join(format!("w{k}"));
            let child = Command::new(env!("CARGO_BIN_EXE_headroom"))
                .arg("run")
                .args(args)
                .args(["--worker", &format!("{k}/{n}"), "--start-at", &start_at])
                .arg("--out")
                .arg(&out)
                .env_remove("HEADROOM_CLUSTER_DIR")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (out, child)
        })
        .collect();
    children
        .into_iter()
        .map(|(out, child)| {
            let output = child.wait_with_output().unwrap();
            eprintln!(
                "$ headroom run {} --worker ?/{n} --start-at {start_at} --out {}\n{}{}",
                args.join(" "),
                out.display(),
                stdout(&output),
                stderr(&output)
            );
            (out, output)
        })
        .collect()
}

/// A worker's exit: 0, or 4 when this shared machine kept it from its schedule (its
/// requests are still all accounted for, which is what the counts check).
fn finished(output: &Output) {
    assert!(
        matches!(output.status.code(), Some(0 | 4)),
        "{}{}",
        stdout(output),
        stderr(output)
    );
}

fn requests(summary: &Value, name: &str) -> u64 {
    op(summary, name)["requests"].as_u64().unwrap()
}

/// Three workers of one schedule send exactly its requests, each its own share; the merge
/// counts them all, its distribution is the one HistogramLogProcessor makes of the workers'
/// logs together, and it refuses what is not one fleet. Then two workers of an earlier
/// run's config.json (`run --config`) beside that single run.
#[test]
fn workers_send_one_schedule_and_merge_exactly() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("fleet");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let hosts = support::hosts();
    let (rate, seconds) = (900u64, 4u64);

    let workers = run_workers(
        3,
        &[
            "keyvalue",
            "--hosts",
            &hosts,
            "--rate",
            &rate.to_string(),
            "--duration",
            &format!("{seconds}s"),
            "--arrivals",
            "poisson",
            "--populate",
            "300",
        ],
        runs.path(),
        Duration::from_secs(8),
    );
    let all = rate * seconds;
    let mut starts = Vec::new();
    for (k, (out, output)) in workers.iter().enumerate() {
        finished(output);
        let summary = read_json(&out.join("summary.json"));
        // Poisson arrivals: the schedule's count over 4 s is random; each worker's share is
        // within one of a third of it.
        let share = requests(&summary, "write");
        assert!(
            share.abs_diff(all / 3) < all / 10,
            "worker {}: {share}",
            k + 1
        );
        assert_eq!(
            summary["populate"]["written"], 100,
            "a third of the rows each"
        );
        let config = read_json(&out.join("config.json"));
        assert_eq!(config["worker"]["index"], k as u64 + 1);
        assert_eq!(config["worker"]["count"], 3);
        starts.push(summary["started_at"].as_str().unwrap().to_string());
    }
    assert!(
        starts.windows(2).all(|s| s[0] == s[1]),
        "one start: {starts:?}"
    );

    // One process at the same rate and seed sends the same schedule.
    let single = runs.path().join("single");
    let one = headroom(&[
        "run",
        "keyvalue",
        "--hosts",
        &hosts,
        "--rate",
        &rate.to_string(),
        "--duration",
        &format!("{seconds}s"),
        "--arrivals",
        "poisson",
        "--phase",
        "run",
        "--out",
        single.to_str().unwrap(),
    ]);
    finished(&one);
    let single_summary = read_json(&single.join("summary.json"));
    let scheduled = requests(&single_summary, "write");

    let dirs: Vec<&str> = workers.iter().map(|(d, _)| d.to_str().unwrap()).collect();
    let merged = runs.path().join("merged");
    let merge = headroom(
        &[
            &["merge"][..],
            &dirs[..],
            &["--out", merged.to_str().unwrap()][..],
        ]
        .concat(),
    );
    finished(&merge);
    let text = stdout(&merge);
    assert!(text.contains("Merged 3 workers"), "{text}");
    assert!(text.contains("3 workers:"), "the per-worker lines: {text}");
    let summary = read_json(&merged.join("summary.json"));
    let shares: u64 = workers
        .iter()
        .map(|(d, _)| requests(&read_json(&d.join("summary.json")), "write"))
        .sum();
    assert_eq!(
        shares, scheduled,
        "the workers together sent the single process's schedule"
    );
    let write = op(&summary, "write");
    assert_eq!(write["requests"].as_u64().unwrap(), scheduled);
    let errors: u64 = write["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(
        write["ok"].as_u64().unwrap() + errors,
        scheduled,
        "every one answered or counted"
    );
    assert_eq!(
        summary["attempted_rate_per_s"].as_f64().unwrap(),
        rate as f64
    );
    assert_eq!(summary["populate"]["written"], 300);
    let per_worker = summary["workers"].as_array().unwrap();
    assert_eq!(per_worker.len(), 3);
    for (k, w) in per_worker.iter().enumerate() {
        assert_eq!(w["index"], k as u64 + 1);
        assert_eq!(
            w["attempted_rate_per_s"].as_f64().unwrap(),
            rate as f64 / 3.0
        );
    }
    let config = read_json(&merged.join("config.json"));
    assert_eq!(config["fleet"]["workers"], 3);
    assert!(config.get("worker").is_none());
    support::assert_catalogued(&merged);
    for (out, _) in &workers {
        support::assert_catalogued(out);
    }
    eprintln!(
        "single process: {} requests, p99 {} ms, p99.9 {} ms; three workers merged: {} requests, p99 {} ms, p99.9 {} ms",
        scheduled,
        op(&single_summary, "write")["response_time"]["p99_ms"],
        op(&single_summary, "write")["response_time"]["p999_ms"],
        write["requests"],
        write["response_time"]["p99_ms"],
        write["response_time"]["p999_ms"],
    );

    // Interval by interval, the merged log holds what the workers' logs hold together.
    let mut notes = Vec::new();
    let (_, whole) = read_hlog(
        &fs::read(merged.join("histograms.hlog")).unwrap(),
        &mut notes,
    );
    assert!(notes.is_empty(), "{notes:?}");
    let figures = |dir: &std::path::Path| Timeline::load(&RunData::load(dir, "run".into()));
    let timeline = figures(&merged).intervals;
    let mut counts = vec![0u64; timeline.len()];
    for (out, _) in &workers {
        for interval in figures(out).intervals {
            let i = timeline
                .iter()
                .position(|m| (m.start_s - interval.start_s).abs() < 0.01)
                .expect("every worker interval has its merged one");
            counts[i] += interval.latency.map_or(0, |p| p.count);
        }
    }
    let merged_counts: Vec<u64> = timeline
        .iter()
        .map(|i| i.latency.map_or(0, |p| p.count))
        .collect();
    assert_eq!(merged_counts, counts);
    assert_eq!(whole.unwrap().count, write["ok"].as_u64().unwrap());

    // HistogramLogProcessor of the workers' logs added together gives the merged
    // distribution, line for line.
    let combined = runs.path().join("combined.hlog");
    combine_logs(
        &workers
            .iter()
            .map(|(d, _)| d.join("histograms.hlog"))
            .collect::<Vec<_>>(),
        "write.rt",
        &combined,
    );
    let java = Java::find().expect("a JDK").path;
    let jar = hdr_histogram_jar();
    let prefix = runs.path().join("java-write");
    run_java(
        &java,
        &jar,
        &[
            "-i",
            combined.to_str().unwrap(),
            "-o",
            prefix.to_str().unwrap(),
            "-tag",
            "write.rt",
            "-outputValueUnitRatio",
            "1000000",
            "-percentilesOutputTicksPerHalf",
            "5",
        ],
    );
    let java_hgrm = fs::read_to_string(format!("{}.hgrm", prefix.display())).unwrap();
    let java_distribution = &java_hgrm[java_hgrm.find("       Value     Percentile").unwrap()..];
    let ours = fs::read_to_string(merged.join("write.hgrm")).unwrap();
    assert_same_lines(java_distribution, &ours, "write (merged)");

    refusals(&workers, &single, runs.path());
    two_workers_of_a_config(&single, &single_summary, runs.path());
}

/// The workers' `tag` lines in one log, in time order, under the first log's header.
fn combine_logs(logs: &[PathBuf], tag: &str, into: &Path) {
    let texts: Vec<String> = logs
        .iter()
        .map(|l| fs::read_to_string(l).unwrap())
        .collect();
    let header: String = texts[0]
        .lines()
        .take_while(|l| !l.starts_with("Tag="))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut lines: Vec<(f64, &str)> = texts
        .iter()
        .flat_map(|t| t.lines())
        .filter(|l| l.starts_with(&format!("Tag={tag},")))
        .map(|l| (l.split(',').nth(1).unwrap().parse().unwrap(), l))
        .collect();
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    let body: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    fs::write(into, header + &body).unwrap();
}

/// What `merge` refuses (exit 2, nothing written), and the skew it only warns of.
fn refusals(workers: &[(PathBuf, Output)], single: &Path, root: &Path) {
    let dir = |k: usize| workers[k].0.to_str().unwrap().to_string();
    let out = root.join("refused");
    let refused = |dirs: &[String], expect: &str| {
        let mut args = vec!["merge".to_string()];
        args.extend_from_slice(dirs);
        args.extend(["--out".to_string(), out.to_str().unwrap().to_string()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = headroom(&args);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(
            stderr(&output).contains(expect),
            "{expect}: {}",
            stderr(&output)
        );
        assert_eq!(stderr(&output).lines().count(), 1, "one line");
        assert!(!out.exists(), "nothing written");
    };
    refused(&[dir(0), dir(1)], "worker(s) 3 of 3 missing");
    refused(
        &[dir(0), dir(1), dir(1), dir(2)],
        "worker 2 of 3 is given twice",
    );
    refused(
        &[dir(0), single.to_str().unwrap().to_string()],
        "not a fleet worker's run",
    );
    // A worker of another workload.
    let other = root.join("other-workload");
    copy_dir(&workers[2].0, &other);
    edit_json(&other.join("config.json"), |c| {
        c["workload"]["read_ratio"] = 0.5.into()
    });
    refused(
        &[dir(0), dir(1), other.to_str().unwrap().to_string()],
        "different workloads",
    );
    // A worker of another interval length.
    let other = root.join("other-interval");
    copy_dir(&workers[2].0, &other);
    edit_json(&other.join("config.json"), |c| c["interval_s"] = 2.0.into());
    refused(
        &[dir(0), dir(1), other.to_str().unwrap().to_string()],
        "different interval lengths",
    );

    // A worker whose start time is 3 s later: merged on absolute time, with a warning.
    let late = root.join("late");
    copy_dir(&workers[2].0, &late);
    edit_json(&late.join("config.json"), |c| {
        let start = c["worker"]["start_at"].as_str().unwrap();
        let time = headroom::results::config::parse_rfc3339(start).unwrap();
        c["worker"]["start_at"] = rfc3339(time + Duration::from_secs(3)).into();
    });
    let skewed = root.join("skewed");
    let output = headroom(&[
        "merge",
        &dir(0),
        &dir(1),
        late.to_str().unwrap(),
        "--out",
        skewed.to_str().unwrap(),
    ]);
    assert!(
        matches!(output.status.code(), Some(0 | 4)),
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("start times differ by 3.000 s"),
        "{}",
        stderr(&output)
    );
    let rows = support::interval_rows(&skewed);
    let last_start: f64 = rows
        .iter()
        .filter(|r| r[2] == "measure")
        .map(|r| r[0].parse().unwrap())
        .fold(0.0, f64::max);
    assert!(
        last_start >= 6.0,
        "the late worker's intervals 3 s on: {last_start}"
    );
}

/// Two workers running an earlier run's config.json (`run --config DIR`) send what that
/// run sent.
fn two_workers_of_a_config(single: &Path, single_summary: &Value, root: &Path) {
    let dirs = root.join("pair");
    fs::create_dir_all(&dirs).unwrap();
    let config = single.to_str().unwrap();
    let workers = run_workers(2, &["--config", config], &dirs, Duration::from_secs(6));
    for (_, output) in &workers {
        finished(output);
    }
    let merged = dirs.join("merged");
    let merge = headroom(&[
        "merge",
        workers[0].0.to_str().unwrap(),
        workers[1].0.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    finished(&merge);
    let summary = read_json(&merged.join("summary.json"));
    let (one, two) = (op(single_summary, "write"), op(&summary, "write"));
    assert_eq!(two["requests"], one["requests"], "the same schedule");
    eprintln!(
        "one process | two workers merged: achieved {:.1} | {:.1}/s; p50 {} | {} ms; p99 {} | {} ms; p99.9 {} | {} ms; max {} | {} ms; CPU {:.1} | {:.1} µs per request",
        single_summary["achieved_rate_per_s"].as_f64().unwrap(),
        summary["achieved_rate_per_s"].as_f64().unwrap(),
        one["response_time"]["p50_ms"],
        two["response_time"]["p50_ms"],
        one["response_time"]["p99_ms"],
        two["response_time"]["p99_ms"],
        one["response_time"]["p999_ms"],
        two["response_time"]["p999_ms"],
        one["response_time"]["max_ms"],
        two["response_time"]["max_ms"],
        single_summary["client"]["cpu_us_per_request"].as_f64().unwrap(),
        summary["client"]["cpu_us_per_request"].as_f64().unwrap(),
    );
    // Flags that would change the file's settings are refused with --config.
    let refused = headroom(&["run", "--config", config, "--rate", "5"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("--rate cannot come with it"),
        "{}",
        stderr(&refused)
    );
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// A port whose next two are free too (a local fleet's workers serve the ports above the
/// coordinator's).
fn three_free_ports() -> u16 {
    for _ in 0..50 {
        let first = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = first.local_addr().unwrap().port();
        let next = |k: u16| std::net::TcpListener::bind(("127.0.0.1", port.checked_add(k)?)).ok();
        if port < u16::MAX - 2 && next(1).is_some() && next(2).is_some() {
            return port;
        }
    }
    panic!("no three free ports in a row");
}

/// The requests an OpenMetrics text counts in `headroom_requests_total`, every series summed.
fn requests_sent(body: &str) -> f64 {
    body.lines()
        .filter(|l| l.starts_with("headroom_requests_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

/// A capacity search whose probe-less trials two local workers run: the trial directories
/// hold the merged run and each worker's, and the counts add up.
#[test]
fn a_fleet_capacity_search_of_two_local_workers() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("fleet-capacity");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let hosts = support::hosts();
    // Watched live: the coordinator serves its metrics at `port`, worker K at `port` + K,
    // and a scrape of worker 1's sees its requests grow while a trial runs.
    let port = three_free_ports();
    let listen = format!("127.0.0.1:{port}");
    let worker_1: std::net::SocketAddr = format!("127.0.0.1:{}", port + 1).parse().unwrap();
    let scraping = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let scraper = {
        let scraping = scraping.clone();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while scraping.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok((200, body)) = support::prometheus::http_get(worker_1, "/metrics") {
                    seen.push(requests_sent(&body));
                }
                std::thread::sleep(Duration::from_millis(300));
            }
            seen
        })
    };
    // Both trials must pass: a search that a client stall on this busy machine made
    // client-bound (exit 4) is run again in a fresh directory.
    let (search, out) = support::until_judged(3, &runs.path().join("search"), |out| {
        headroom(&[
            "capacity",
            "keyvalue",
            "--hosts",
            &hosts,
            "--metrics-listen",
            &listen,
            "--rates",
            "300,600",
            "--duration",
            "4s",
            "--warmup",
            "1s",
            "--window",
            "2s",
            "--sla",
            "p99<3s, p99.9<3s@4s",
            "--populate",
            "400",
            "--workers",
            "2",
            "--launcher",
            "local",
            "--out",
            out.to_str().unwrap(),
        ])
    });
    scraping.store(false, std::sync::atomic::Ordering::Relaxed);
    let seen = scraper.join().unwrap();
    let text = stdout(&search);
    assert!(search.status.success(), "{text}{}", stderr(&search));
    assert!(
        seen.windows(2).any(|w| w[1] > w[0] && w[0] > 0.0),
        "worker 1's requests, scraped as they grew: {seen:?}"
    );
    assert!(text.contains("2 processes on this machine"), "{text}");
    assert!(text.contains("worker 2: achieved"), "{text}");
    let summary = read_json(&out.join("capacity.json"));
    assert_eq!(summary["status"], "complete", "{summary}");
    let search_json = read_json(&out.join("search.json"));
    assert_eq!(search_json["fleet"]["workers"], 2);
    assert_eq!(search_json["fleet"]["launcher"], "local");
    let records: Vec<Value> = fs::read_to_string(out.join("capacity.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{records:?}");
    for (i, record) in records.iter().enumerate() {
        let rate = record["rate_per_s"].as_f64().unwrap();
        let trial = out.join(record["dir"].as_str().unwrap());
        assert_eq!(
            record["requests"].as_u64().unwrap(),
            (rate * 4.0) as u64,
            "{record}"
        );
        let merged = read_json(&trial.join("summary.json"));
        assert_eq!(merged["workers"].as_array().unwrap().len(), 2);
        // The merge judges each term over its own windows: two of 2 s, one of 4 s.
        let verdict = &merged["sla"]["verdict"];
        assert_eq!(verdict["windows"], 2, "{verdict}");
        assert_eq!(verdict["worst"][1]["term"], "p99.9<3s@4s", "{verdict}");
        assert_eq!(verdict["worst"][1]["windows"], 1, "{verdict}");
        assert_eq!(merged["achieved_rate_per_s"], record["achieved_per_s"]);
        let mut sent = 0;
        for k in 1..=2 {
            let worker = read_json(&trial.join(format!("workers/worker-{k}/summary.json")));
            sent += requests(&worker, "write");
            assert_eq!(worker["attempted_rate_per_s"].as_f64().unwrap(), rate / 2.0);
        }
        assert_eq!(sent, (rate * 4.0) as u64);
        // The data is made once, by the first trial's workers, each its share.
        let populated = trial.join("populate").is_dir();
        assert_eq!(populated, i == 0, "{}", trial.display());
    }
    assert!(out.join("report.html").is_file());
    support::assert_catalogued(&out);
}
