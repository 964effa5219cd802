//! The pause log of a real node: what `cluster::pauses` reads from a node headroom started
//! and loaded, on the node's own clock.

use std::time::{Duration, SystemTime};

use headroom::cluster::pauses::PauseLog;
use headroom::cluster::LocalCluster;

use crate::support::{self, headroom};

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
    let run = headroom(&[
        "run",
        "keyvalue",
        "--rate",
        "2k",
        "--duration",
        "8s",
        "--hosts",
        &support::hosts(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success());
    let run_end = SystemTime::now();

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
}
