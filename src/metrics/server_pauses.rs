//! The server pauses of one run: the stop-the-world pauses of the nodes a run loaded, read
//! from their GC logs ([`crate::cluster::pauses`]) when the run ends, for the run directory
//! to hold beside the client's latencies (written by [`crate::results::pauses`]):
//!
//! - `pauses.hlog`: an HdrHistogram interval log on the time base of `histograms.hlog` (the
//!   same StartTime, the same intervals), one tag per node (`node1.pause`, `node2.pause`,
//!   ...): each entry holds the lengths, in nanoseconds, of the pauses that *began* in that
//!   interval. Java's `HistogramLogProcessor -tag node1.pause` reads it.
//! - `pauses.json` ([`PausesFile`]): per node its address, collector, count, stopped time,
//!   percentiles of pause length, time to safepoint, the longest pauses and every pause
//!   (offset from the start of the run, length, kind), and notes on anything that could not
//!   be read.
//!
//! Only the measured part counts: pauses that began from the end of the warmup until the
//! last answer. The stopped time is the part of every pause that falls inside that range
//! (a pause that began in the warmup counts for what reaches past its end).
//!
//! Which nodes: the local nodes behind the run's `--hosts`, as the run found them
//! ([`LocalNodes`]: those of a local cluster headroom started, given by the caller or found in
//! a cluster directory); [`PauseNode::all_of`] makes them pause nodes. A log that is missing or
//! unreadable never fails the run: it becomes a note in pauses.json.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::cluster::pauses::{PauseEvent, PauseLog};
use crate::cluster::{GcKind, LocalNodes, NodeSpec};
use crate::stats::{new_histogram, value_at_percentile};

/// How many of the longest pauses each node lists on their own.
pub const LONGEST: usize = 10;

/// One node whose GC log gives pauses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PauseNode {
    /// Its name in tags and tables: `node1`, `node2`, ...
    pub name: String,
    /// Its CQL endpoint.
    pub address: SocketAddr,
    /// The directory with `gc.log` and its rotated files.
    pub logs_dir: PathBuf,
    /// The garbage collector the node was started with, e.g. `g1`.
    pub collector: Option<String>,
}

impl PauseNode {
    /// A node of a local cluster started with `collector`.
    pub fn of(spec: &NodeSpec, collector: GcKind) -> PauseNode {
        PauseNode {
            name: format!("node{}", spec.index),
            address: spec.native_addr(),
            logs_dir: spec.logs_dir(),
            collector: Some(collector.name().to_string()),
        }
    }

    /// Every node of `local`, in order.
    pub fn all_of(local: &LocalNodes) -> Vec<PauseNode> {
        match local.gc() {
            Some(gc) => local.nodes().iter().map(|n| PauseNode::of(n, gc)).collect(),
            None => Vec::new(),
        }
    }

    /// The node's tag in pauses.hlog.
    pub fn tag(&self) -> String {
        format!("{}.pause", self.name)
    }
}

/// The time base and ranges of a run, as its histograms.hlog has them.
#[derive(Debug, Clone, Copy)]
pub struct RunSpan<'a> {
    /// The StartTime of histograms.hlog: interval offsets count from here.
    pub start: SystemTime,
    /// Where the measured part begins (the end of the warmup), ns after `start`.
    pub measured_from_ns: u64,
    /// Where it ends (the last answer), ns after `start`.
    pub measured_to_ns: u64,
    /// The run's intervals as (start, length) in ns after `start`, in order.
    pub intervals: &'a [(u64, u64)],
}

impl RunSpan<'_> {
    fn at(&self, ns: u64) -> SystemTime {
        self.start + Duration::from_nanos(ns)
    }

    /// The intervals that overlap the measured part, with their indexes.
    pub fn measured_intervals(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.intervals
            .iter()
            .copied()
            .filter(|&(start, length)| start + length > self.measured_from_ns)
    }

    fn measured_s(&self) -> f64 {
        self.measured_to_ns.saturating_sub(self.measured_from_ns) as f64 / 1e9
    }
}

/// pauses.json: the server pauses of one run's measured part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PausesFile {
    /// The StartTime of histograms.hlog and pauses.hlog, RFC 3339 with nanoseconds: every
    /// offset counts from here.
    pub run_start: String,
    /// Where the measured part begins, seconds after `run_start`.
    pub measured_from_s: f64,
    /// Where it ends, seconds after `run_start`.
    pub measured_to_s: f64,
    /// Each node whose log was read, in node order.
    pub nodes: Vec<NodePauses>,
    /// What could not be read or may be incomplete, said plainly.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl PausesFile {
    /// The measured part's length, seconds.
    pub fn measured_s(&self) -> f64 {
        (self.measured_to_s - self.measured_from_s).max(0.0)
    }
}

/// One node's pauses in the measured part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePauses {
    /// `node1`, `node2`, ...
    pub node: String,
    /// Its CQL endpoint.
    pub address: String,
    /// The collector it was started with, e.g. `g1`.
    pub collector: Option<String>,
    /// Its tag in pauses.hlog.
    pub tag: String,
    /// The GC log files read.
    pub log_files: Vec<String>,
    /// Pauses that began in the measured part.
    pub count: u64,
    /// Time the application was stopped within the measured part, ms.
    pub stopped_ms: f64,
    /// That time as a percentage of the measured part.
    pub stopped_percent: f64,
    /// The longest pause, ms (exact, from the log); 0 without pauses.
    pub max_ms: f64,
    /// Median pause length, ms (HdrHistogram, 3 significant digits).
    pub p50_ms: Option<f64>,
    /// 99th percentile of pause length, ms.
    pub p99_ms: Option<f64>,
    /// 99.9th percentile of pause length, ms.
    pub p999_ms: Option<f64>,
    /// The longest time threads took to reach a safepoint, ms, when the log says.
    pub time_to_safepoint_max_ms: Option<f64>,
    /// The 99th percentile of that time, ms.
    pub time_to_safepoint_p99_ms: Option<f64>,
    /// The longest pauses, longest first (at most [`LONGEST`]).
    pub longest: Vec<Pause>,
    /// Every pause, in the order they began.
    pub events: Vec<Pause>,
}

/// One pause, for tables and the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pause {
    /// When it began, seconds after the run's start.
    pub offset_s: f64,
    /// How long the application was stopped, ms.
    pub length_ms: f64,
    /// What it was: the GC pause names (`Pause Young (Normal) (G1 Evacuation Pause)`) or the
    /// safepoint's VM operation (`Cleanup`, `ICBufferFull`, ...).
    pub kind: String,
    /// Whether a garbage collection ran in it.
    pub gc: bool,
    /// Time to bring the threads to the safepoint, ms, when the log says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_safepoint_ms: Option<f64>,
}

/// What the nodes' logs say of one run: pauses.json's figures, and the pause lengths of each
/// node per measured interval (pauses.hlog's entries).
pub struct RunPauses {
    /// pauses.json.
    pub file: PausesFile,
    /// Per node, its tag and one histogram per measured interval of the span.
    pub per_interval: Vec<(String, Vec<hdrhistogram::Histogram<u64>>)>,
}

/// Reads the nodes' logs for the measured part of `span`. Never fails: what cannot be read
/// becomes a note.
pub fn read_run_pauses(nodes: &[PauseNode], span: &RunSpan) -> RunPauses {
    let mut file = PausesFile {
        run_start: humantime::format_rfc3339_nanos(span.start).to_string(),
        measured_from_s: span.measured_from_ns as f64 / 1e9,
        measured_to_s: span.measured_to_ns as f64 / 1e9,
        nodes: Vec::new(),
        notes: Vec::new(),
    };
    let mut per_interval = Vec::new();
    // A file last written before the measured part began holds none of its pauses; a second
    // of slack for the file system's time stamps.
    let since = span.at(span.measured_from_ns) - Duration::from_secs(1);
    for node in nodes {
        match PauseLog::read_dir_since(&node.logs_dir, since) {
            Ok(log) => {
                file.notes.extend(log_notes(node, &log));
                let (pauses, histograms) = node_pauses(node, &log, span);
                file.nodes.push(pauses);
                per_interval.push((node.tag(), histograms));
            }
            Err(e) => file.notes.push(format!(
                "{} ({}): no pauses recorded: {e}",
                node.name, node.address
            )),
        }
    }
    RunPauses { file, per_interval }
}

/// Notes on a log that may not hold every pause.
fn log_notes(node: &PauseNode, log: &PauseLog) -> Vec<String> {
    let mut notes = Vec::new();
    if log.unrecognised_lines > 0 {
        notes.push(format!(
            "{}: {} safepoint lines in a format other than Java 17's were not read; stopped \
             time may be missing",
            node.name, log.unrecognised_lines
        ));
    }
    if log.jvm_runs > 1 {
        notes.push(format!(
            "{}: its log covers {} JVM runs (the node restarted)",
            node.name, log.jvm_runs
        ));
    }
    notes
}

/// One node's figures, and the histogram of pause lengths of each measured interval.
fn node_pauses(
    node: &PauseNode,
    log: &PauseLog,
    span: &RunSpan,
) -> (NodePauses, Vec<hdrhistogram::Histogram<u64>>) {
    let from = span.at(span.measured_from_ns);
    let to = span.at(span.measured_to_ns);
    let mut events: Vec<&PauseEvent> = log
        .events
        .iter()
        .filter(|e| e.start() >= from && e.start() < to)
        .collect();
    events.sort_by_key(|e| e.start());

    let measured: Vec<(u64, u64)> = span.measured_intervals().collect();
    let mut per_interval = vec![new_histogram(); measured.len()];
    let mut lengths = new_histogram();
    let mut reaching = new_histogram();
    for event in &events {
        lengths
            .record(event.duration_ns)
            .expect("the histogram grows to any value");
        if let Some(ns) = event.reaching_ns {
            reaching
                .record(ns)
                .expect("the histogram grows to any value");
        }
        // The interval it began in; a pause after the last interval's end (an answer
        // that came later than the engine's last interval) goes into the last.
        let offset = offset_ns(span.start, event.start());
        let slot = measured
            .iter()
            .rposition(|&(start, _)| start <= offset)
            .unwrap_or(0);
        if let Some(h) = per_interval.get_mut(slot) {
            h.record(event.duration_ns)
                .expect("the histogram grows to any value");
        }
    }
    let pause = |e: &PauseEvent| Pause {
        offset_s: (offset_ns(span.start, e.start()) as f64 / 1e3).round() / 1e6,
        length_ms: e.duration_ns as f64 / 1e6,
        kind: e.kind(),
        gc: e.is_gc(),
        time_to_safepoint_ms: e.reaching_ns.map(|ns| ns as f64 / 1e6),
    };
    let mut longest = events.clone();
    longest.sort_by_key(|e| std::cmp::Reverse(e.duration_ns));
    let stopped_ns = log.stopped_ns(from, to);
    let measured_s = span.measured_s();
    // A percentile is the highest value of its HdrHistogram bucket, which can lie above the
    // longest value recorded: no percentile is shown above the exact max.
    let ms = |h: &hdrhistogram::Histogram<u64>, p: f64, max_ns: u64| {
        (!h.is_empty()).then(|| value_at_percentile(h, p).min(max_ns) as f64 / 1e6)
    };
    let max_ns = events.iter().map(|e| e.duration_ns).max().unwrap_or(0);
    let max_reaching_ns = events.iter().filter_map(|e| e.reaching_ns).max();
    let figures = NodePauses {
        node: node.name.clone(),
        address: node.address.to_string(),
        collector: node.collector.clone(),
        tag: node.tag(),
        log_files: log.files.iter().map(|p| p.display().to_string()).collect(),
        count: events.len() as u64,
        stopped_ms: stopped_ns as f64 / 1e6,
        stopped_percent: if measured_s > 0.0 {
            stopped_ns as f64 / 1e9 / measured_s * 100.0
        } else {
            0.0
        },
        max_ms: max_ns as f64 / 1e6,
        p50_ms: ms(&lengths, 50.0, max_ns),
        p99_ms: ms(&lengths, 99.0, max_ns),
        p999_ms: ms(&lengths, 99.9, max_ns),
        time_to_safepoint_max_ms: max_reaching_ns.map(|ns| ns as f64 / 1e6),
        time_to_safepoint_p99_ms: max_reaching_ns.and_then(|m| ms(&reaching, 99.0, m)),
        longest: longest.iter().take(LONGEST).map(|e| pause(e)).collect(),
        events: events.iter().map(|e| pause(e)).collect(),
    };
    (figures, per_interval)
}

/// `at − start` in ns, 0 when `at` is earlier.
fn offset_ns(start: SystemTime, at: SystemTime) -> u64 {
    at.duration_since(start).map_or(0, |d| d.as_nanos() as u64)
}

/// Lines for the end of a run's output: one per node, then the notes.
pub fn describe(file: &PausesFile) -> Vec<String> {
    let mut lines = Vec::new();
    for n in &file.nodes {
        let longest = n
            .longest
            .first()
            .map(|p| {
                format!(
                    ", longest {:.2} ms at {:.1} s ({})",
                    p.length_ms, p.offset_s, p.kind
                )
            })
            .unwrap_or_default();
        let ttsp = n
            .time_to_safepoint_max_ms
            .map(|t| format!(", time to safepoint max {t:.2} ms"))
            .unwrap_or_default();
        lines.push(format!(
            "  {} ({}, {}): {} pauses, stopped {:.1} ms ({:.2}% of the measured time), \
             p99 {:.2} ms, max {:.2} ms{ttsp}{longest}",
            n.node,
            n.address,
            n.collector.as_deref().unwrap_or("collector unknown"),
            n.count,
            n.stopped_ms,
            n.stopped_percent,
            n.p99_ms.unwrap_or(0.0),
            n.max_ms,
        ));
    }
    for note in &file.notes {
        lines.push(format!("  note: {note}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fs;
    use std::path::Path;

    use crate::catalogue::{PAUSES_HLOG, PAUSES_JSON};
    use base64::Engine as _;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::Histogram;

    /// What a run does with its nodes' pauses: reads them, and writes the run directory's
    /// pauses.hlog and pauses.json.
    fn write_run_pauses(out: &Path, nodes: &[PauseNode], span: &RunSpan) -> PausesFile {
        crate::results::pauses::write(out, span, read_run_pauses(nodes, span))
    }

    use super::*;

    /// A node whose logs directory holds the G1 fixture as its gc.log.
    fn g1_node(dir: &Path) -> PauseNode {
        let logs = dir.join("node1").join("logs");
        fs::create_dir_all(&logs).unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gc/g1.log");
        fs::copy(&fixture, logs.join("gc.log")).unwrap();
        PauseNode {
            name: "node1".into(),
            address: "127.0.0.5:9042".parse().unwrap(),
            logs_dir: logs,
            collector: Some("g1".into()),
        }
    }

    fn stamp(text: &str) -> SystemTime {
        humantime::parse_rfc3339(text).unwrap()
    }

    /// Each tag's intervals of an hlog: (start s, length s, histogram).
    fn read_back(path: &Path) -> BTreeMap<String, Vec<(f64, f64, Histogram<u64>)>> {
        let bytes = fs::read(path).unwrap();
        let mut deserializer = Deserializer::new();
        let mut tags: BTreeMap<String, Vec<_>> = BTreeMap::new();
        for entry in IntervalLogIterator::new(&bytes) {
            let LogEntry::Interval(i) = entry.unwrap() else {
                continue;
            };
            let raw = base64::engine::general_purpose::STANDARD
                .decode(i.encoded_histogram())
                .unwrap();
            let h: Histogram<u64> = deserializer.deserialize(&mut &raw[..]).unwrap();
            tags.entry(i.tag().unwrap().as_str().to_string())
                .or_default()
                .push((
                    i.start_timestamp().as_secs_f64(),
                    i.duration().as_secs_f64(),
                    h,
                ));
        }
        tags
    }

    /// The fixture's run: 30 one-second intervals from 07:03:57, the first second warmup.
    fn span_of(start: SystemTime, intervals: &[(u64, u64)]) -> RunSpan<'_> {
        RunSpan {
            start,
            measured_from_ns: 1_000_000_000,
            measured_to_ns: 30_000_000_000,
            intervals,
        }
    }

    fn seconds(n: u64) -> Vec<(u64, u64)> {
        (0..n).map(|i| (i * 1_000_000_000, 1_000_000_000)).collect()
    }

    #[test]
    fn the_fixture_log_gives_both_files_on_the_runs_time_base() {
        let dir = tempfile::tempdir().unwrap();
        let node = g1_node(dir.path());
        let start = stamp("2026-11-22T07:03:57.000Z");
        let intervals = seconds(30);
        let span = span_of(start, &intervals);
        let file = write_run_pauses(dir.path(), std::slice::from_ref(&node), &span);
        assert!(file.notes.is_empty(), "{:?}", file.notes);
        assert_eq!(file.nodes.len(), 1);
        let n = &file.nodes[0];

        // Independently: the events of the parsed fixture that began in [58 s, 27 s + 60).
        let log = PauseLog::read_dir(&node.logs_dir).unwrap();
        let from = stamp("2026-11-22T07:03:58.000Z");
        let to = stamp("2026-11-22T07:04:27.000Z");
        let began: Vec<&PauseEvent> = log
            .events
            .iter()
            .filter(|e| e.start() >= from && e.start() < to)
            .collect();
        assert!(began.len() > 20, "{}", began.len());
        assert_eq!(n.count, began.len() as u64);
        assert_eq!(n.events.len(), began.len());
        // The young collection at 07:03:57.6 fell in the warmup: not counted. GC(5), from
        // 07:04:02.1, is the first counted.
        assert!(n.events.iter().all(|p| p.offset_s >= 1.0));
        let young = n
            .events
            .iter()
            .find(|p| p.gc && p.kind.starts_with("Pause Young (Normal)"))
            .unwrap();
        assert!((5.0..5.2).contains(&young.offset_s), "{young:?}");
        assert!(young.length_ms > 60.25, "{young:?}");

        // The longest: threads took 206 ms to reach a cleanup safepoint, 281 ms stopped in
        // all, ending at 07:04:18.958.
        let longest = &n.longest[0];
        assert_eq!(longest.kind, "Cleanup");
        assert!(!longest.gc);
        assert_eq!(longest.length_ms, 281.443464);
        assert!((longest.offset_s - 21.676556).abs() < 1e-6, "{longest:?}");
        assert_eq!(longest.time_to_safepoint_ms, Some(205.583014));
        assert_eq!(n.max_ms, 281.443464);
        assert_eq!(n.time_to_safepoint_max_ms, Some(205.583014));
        assert_eq!(n.longest.len(), LONGEST);
        assert!(n
            .longest
            .windows(2)
            .all(|w| w[0].length_ms >= w[1].length_ms));
        assert!(n.events.windows(2).all(|w| w[0].offset_s <= w[1].offset_s));
        // The percentiles never pass the exact max (HdrHistogram's bucket top would).
        let p99 = n.p99_ms.unwrap();
        assert!(p99 <= n.max_ms && p99 > 0.0, "{p99}");
        assert_eq!(n.p999_ms, Some(281.443464));
        assert!(n.p50_ms.unwrap() < p99);
        assert!(n.time_to_safepoint_p99_ms.unwrap() <= 205.583014);

        // Stopped time: clipped to the measured part, as a share of its 29 s.
        let stopped = log.stopped_ns(from, to) as f64 / 1e6;
        assert_eq!(n.stopped_ms, stopped);
        assert!((n.stopped_percent - stopped / 29_000.0 * 100.0).abs() < 1e-9);
        assert_eq!(
            (n.collector.as_deref(), n.tag.as_str()),
            (Some("g1"), "node1.pause")
        );

        // pauses.hlog: one entry per measured interval (seconds 1 to 29), each pause in the
        // second it began, on the histograms.hlog time base.
        let hlog = read_back(&dir.path().join(PAUSES_HLOG));
        let entries = &hlog["node1.pause"];
        assert_eq!(entries.len(), 29);
        assert_eq!((entries[0].0, entries[0].1), (1.0, 1.0));
        let total: u64 = entries.iter().map(|e| e.2.len()).sum();
        assert_eq!(total, n.count);
        let (at, _, second_21) = &entries[20];
        assert_eq!(*at, 21.0);
        assert_eq!(second_21.max(), second_21.highest_equivalent(281_443_464));
        for (at, length, h) in entries {
            let inside = n
                .events
                .iter()
                .filter(|p| p.offset_s >= *at && p.offset_s < at + length)
                .count();
            assert_eq!(h.len(), inside as u64, "second {at}");
        }
        let text = fs::read_to_string(dir.path().join(PAUSES_HLOG)).unwrap();
        assert!(text.contains("#[StartTime: 1795331037.000 "), "{text}");

        // pauses.json holds what was returned.
        let json: PausesFile =
            serde_json::from_str(&fs::read_to_string(dir.path().join(PAUSES_JSON)).unwrap())
                .unwrap();
        assert_eq!(json, file);
        assert_eq!(json.run_start, "2026-11-22T07:03:57.000000000Z");
        assert_eq!(json.measured_s(), 29.0);
        let lines = describe(&file);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with(&format!(
                "  node1 (127.0.0.5:9042, g1): {} pauses, stopped {:.1} ms",
                n.count, n.stopped_ms
            )),
            "{lines:?}"
        );
        assert!(
            lines[0].ends_with("longest 281.44 ms at 21.7 s (Cleanup)"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_missing_or_foreign_log_is_a_note_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let good = g1_node(dir.path());
        let missing = PauseNode {
            name: "node2".into(),
            address: "127.0.0.6:9042".parse().unwrap(),
            logs_dir: dir.path().join("node2/logs"),
            collector: Some("g1".into()),
        };
        let intervals = seconds(30);
        let span = span_of(stamp("2026-11-22T07:03:57.000Z"), &intervals);
        let file = write_run_pauses(dir.path(), &[good, missing], &span);
        assert_eq!(file.nodes.len(), 1);
        assert_eq!(file.notes.len(), 1);
        assert!(file.notes[0].starts_with("node2 (127.0.0.6:9042): no pauses recorded"));
        let hlog = read_back(&dir.path().join(PAUSES_HLOG));
        assert_eq!(hlog.keys().collect::<Vec<_>>(), ["node1.pause"]);

        // Java 11's safepoint lines: read as none, and said so.
        let java11 = dir.path().join("node3/logs");
        fs::create_dir_all(&java11).unwrap();
        fs::write(
            java11.join("gc.log"),
            "[2026-11-22T07:03:59.631+0000][3.050s][info][safepoint] Total time for which \
             application threads were stopped: 0.0348 seconds, Stopping threads took: \
             0.0000064 seconds\n",
        )
        .unwrap();
        let node = PauseNode {
            name: "node3".into(),
            address: "127.0.0.7:9042".parse().unwrap(),
            logs_dir: java11,
            collector: None,
        };
        let file = write_run_pauses(dir.path(), &[node], &span);
        assert_eq!(file.nodes[0].count, 0);
        assert_eq!(file.nodes[0].p99_ms, None);
        assert!(
            file.notes[0].contains("1 safepoint lines"),
            "{:?}",
            file.notes
        );
    }
}
