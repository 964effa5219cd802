//! The pause log of a real node: what `cluster::pauses` reads from a node headroom started
//! and loaded, on the node's own clock; and the pauses.hlog and pauses.json a run against that
//! node writes, read back by Java's HistogramLogProcessor and against the log itself.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use headroom::cluster::java::Java;
use headroom::cluster::pauses::PauseLog;
use headroom::cluster::LocalCluster;
use headroom::metrics::server_pauses::PausesFile;

use crate::hdr_tools::{hdr_histogram_jar, parse_interval_rows, run_java};
use crate::support;

#[test]
fn a_loaded_node_logs_pauses_that_the_parser_reads() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("pauses");
    let before_start = SystemTime::now();
    let cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = runs.path().join("kv");
    let run_start = SystemTime::now();
    let run = support::run_against(
        &dir,
        &out,
        &[
            "keyvalue",
            "--rate",
            "2k",
            "--duration",
            "8s",
            "--warmup",
            "2s",
        ],
    );
    // pauses.json and pauses.hlog are written whether or not this busy machine made the run
    // client-bound (exit 4); they are what is checked.
    support::assert_ran_or_client_bound(&run, &out, 0);
    let run_end = SystemTime::now();
    assert!(
        support::stdout(&run).contains("server pauses in the measured part (pauses.json)"),
        "{}",
        support::stdout(&run)
    );

    let node = cluster.node(1).unwrap();
    let log = PauseLog::read_node(&node).unwrap();
    assert_eq!(log.files, vec![node.gc_log_path()]);
    assert_eq!((log.jvm_runs, log.unrecognised_lines), (1, 0));
    // The JVM collected at least once while starting and loading (G1, 768M heap).
    assert!(log.events.iter().any(|e| e.is_gc()), "{:#?}", log.events);
    // The log's wall clock is this machine's: every pause lies within the node's life.
    let now = SystemTime::now();
    for event in &log.events {
        assert!(
            event.start() >= before_start && event.end <= now,
            "{event:?} outside {before_start:?}..{now:?}"
        );
    }
    // Safepoints happen every second or so under load.
    let during: Vec<_> = log.events_between(run_start, run_end).collect();
    assert!(!during.is_empty(), "no pause during the run");
    let timeline = log.timeline(run_start, run_end, Duration::from_secs(1));
    assert!(timeline.len() >= 8, "{timeline:?}");
    assert_eq!(
        timeline.iter().sum::<u64>(),
        log.stopped_ns(run_start, run_end)
    );
    assert!(log.stopped_ns(run_start, run_end) > 0);
    let histogram = log.histogram(run_start, run_end);
    assert_eq!(histogram.len(), during.len() as u64);
    let longest = during.iter().map(|e| e.duration_ns).max().unwrap();
    assert_eq!(histogram.max(), histogram.highest_equivalent(longest));
    eprintln!(
        "{} pauses in all, {} during the run, {} of them GC; stopped {:.1} ms in the run, \
         longest {:.2} ms ({})",
        log.events.len(),
        during.len(),
        during.iter().filter(|e| e.is_gc()).count(),
        log.stopped_ns(run_start, run_end) as f64 / 1e6,
        longest as f64 / 1e6,
        during
            .iter()
            .max_by_key(|e| e.duration_ns)
            .map(|e| e.kind())
            .unwrap_or_default(),
    );
    check_run_pauses(&out, &log);
}

/// pauses.json counts what the node's log holds for the run's measured part, and Java's
/// HistogramLogProcessor reads the same count, one row per interval, from pauses.hlog.
fn check_run_pauses(out: &Path, log: &PauseLog) {
    let text = fs::read_to_string(out.join("pauses.json")).unwrap();
    let pauses: PausesFile = serde_json::from_str(&text).unwrap();
    assert!(pauses.notes.is_empty(), "{:?}", pauses.notes);
    assert_eq!(pauses.nodes.len(), 1);
    let node = &pauses.nodes[0];
    assert_eq!(
        (
            node.node.as_str(),
            node.tag.as_str(),
            node.collector.as_deref()
        ),
        ("node1", "node1.pause", Some("g1"))
    );
    assert_eq!(node.address, support::hosts());
    assert_eq!(pauses.measured_from_s, 2.0);
    // The measured part ends with the last answer, which comes after the last request's
    // intended start: 10 s less one request's spacing at 2000/s.
    assert!(
        pauses.measured_to_s >= 10.0 - 1.0 / 2000.0,
        "{}",
        pauses.measured_to_s
    );

    // The same pauses, straight from the log: those that began in the measured part.
    let start = humantime::parse_rfc3339(&pauses.run_start).unwrap();
    let from = start + Duration::from_secs_f64(pauses.measured_from_s);
    let to = start + Duration::from_secs_f64(pauses.measured_to_s);
    let began: Vec<_> = log
        .events
        .iter()
        .filter(|e| e.start() >= from && e.start() < to)
        .collect();
    assert!(!began.is_empty(), "no pause in the measured part");
    assert_eq!(node.count, began.len() as u64);
    assert_eq!(node.events.len(), began.len());
    let longest = began.iter().map(|e| e.duration_ns).max().unwrap();
    assert_eq!(node.max_ms, longest as f64 / 1e6);
    let stopped = log.stopped_ns(from, to) as f64 / 1e6;
    assert!(
        (node.stopped_ms - stopped).abs() < 1e-6,
        "{} vs {stopped}",
        node.stopped_ms
    );

    // The run's histograms.hlog and pauses.hlog share their StartTime.
    let start_line = |name: &str| {
        fs::read_to_string(out.join(name))
            .unwrap()
            .lines()
            .find(|l| l.starts_with("#[StartTime: "))
            .unwrap()
            .to_string()
    };
    assert_eq!(start_line("pauses.hlog"), start_line("histograms.hlog"));

    let jar = hdr_histogram_jar();
    let java = Java::find().expect("a JDK").path;
    let hlog = out.join("pauses.hlog");
    let listed = run_java(&java, &jar, &["-i", hlog.to_str().unwrap(), "-listtags"]);
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        ["Tags found in input file:", "node1.pause"],
        "{listed}"
    );
    let prefix = out.join("node1.pause");
    run_java(
        &java,
        &jar,
        &[
            "-i",
            hlog.to_str().unwrap(),
            "-o",
            prefix.to_str().unwrap(),
            "-tag",
            "node1.pause",
            "-outputValueUnitRatio",
            "1000000",
        ],
    );
    let rows = parse_interval_rows(&fs::read_to_string(&prefix).unwrap());
    // One row per interval of the measured part: from second 2 to the last answer.
    let intervals = (pauses.measured_to_s.ceil() - pauses.measured_from_s) as usize;
    assert!(
        rows.len().abs_diff(intervals) <= 1,
        "{} rows for {intervals} intervals",
        rows.len()
    );
    assert_eq!(rows.first().unwrap().end_seconds, 3.0);
    let per_interval: u64 = rows.iter().map(|r| r.interval_count).sum();
    assert_eq!(per_interval, node.count);
    assert_eq!(rows.last().unwrap().total_count, node.count);
    let java_max = rows.last().unwrap().total[5];
    assert!(
        (java_max - node.max_ms).abs() <= node.max_ms * 0.001 + 0.0005,
        "Java's max {java_max} ms, ours {} ms",
        node.max_ms
    );
    eprintln!(
        "pauses.json: {} pauses in {:.1} s measured, stopped {:.2} ms ({:.3}%), p99 {:?} ms, \
         max {:.3} ms; Java read {} intervals",
        node.count,
        pauses.measured_s(),
        node.stopped_ms,
        node.stopped_percent,
        node.p99_ms,
        node.max_ms,
        rows.len()
    );
}
