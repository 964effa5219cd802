//! Tests of the figures model: a timeline built from the engine's intervals and one read back
//! from the files those intervals write hold the same figures; a recorded directory's
//! timeline holds what its files say.

use std::time::{Duration, SystemTime};

use super::*;
use crate::catalogue::{HISTOGRAMS_HLOG, INTERVALS_CSV};
use crate::fixtures::run_fixture;
use crate::metrics::ErrorClass;
use crate::results::hlog::HlogWriter;
use crate::results::interval_files::write_interval;
use crate::results::intervals_csv::IntervalsCsv;
use crate::results::run_dir::RunData;

fn ops() -> Vec<String> {
    vec!["write".to_string(), "ann".to_string()]
}

/// Interval `i` of a made-up run: 2 s of warmup, then measured; `ann` judged for recall;
/// a timeout in interval 3.
fn interval(i: u64) -> Interval {
    let phase = if i < 2 { Phase::Warmup } else { Phase::Measure };
    let mut write = OpHistograms::default();
    let mut ann = OpHistograms::default();
    for k in 0..(50 + 10 * i) {
        write.record_ok(1_000_000 + 37_000 * k * (i + 1), 800_000 + 11_000 * k);
        write.record_wait(1_000 + 500 * k);
        ann.record_ok(3_000_000 + 91_000 * k, 2_500_000 + 50_000 * k);
        ann.record_wait(2_000 + 300 * k);
        ann.record_recall(0.9 + (k % 10) as f64 / 100.0);
    }
    if i == 3 {
        write.record_error(ErrorClass::Timeout, || "timed out".to_string());
        write.record_wait(7_000_000);
        ann.record_recall(0.0);
    }
    let pair = |stats: OpHistograms| {
        let mut both = [OpHistograms::default(), OpHistograms::default()];
        both[phase.index()] = stats;
        both
    };
    let (write, ann) = (pair(write), pair(ann));
    let mut hiccups = new_histogram();
    let _ = hiccups.record(50_000 * (i + 1));
    Interval {
        index: i,
        start_ns: i * 1_000_000_000,
        length_ns: 1_000_000_000,
        ops: vec![write, ann],
        hiccups: Some(hiccups),
        backlog: i * 3,
        in_flight: i + 1,
    }
}

/// Writes the intervals as a run writes them (every tag, `<op>.wt` included).
fn write_run(dir: &std::path::Path, intervals: &[Interval]) {
    let mut hlog = HlogWriter::create(&dir.join(HISTOGRAMS_HLOG), SystemTime::now()).unwrap();
    let mut csv = IntervalsCsv::create(&dir.join(INTERVALS_CSV)).unwrap();
    for interval in intervals {
        write_interval(&mut hlog, &mut csv, &ops(), interval, true).unwrap();
    }
}

#[test]
fn a_timeline_from_the_engine_and_one_from_its_files_hold_the_same_figures() {
    let intervals: Vec<Interval> = (0..6).map(interval).collect();
    let mut live = Timeline::new(ops(), 2.0, None);
    for interval in &intervals {
        live.push(interval, Some(0.5));
    }
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), &intervals);
    let run = RunData::load(dir.path(), "run".into());
    let read = Timeline::load(&run);

    assert_eq!(read.ops, live.ops);
    assert_eq!(read.intervals.len(), 6);
    for (from_files, from_engine) in read.intervals.iter().zip(&live.intervals) {
        // The files keep neither the failures' classes per interval, nor the requests in
        // flight, nor the client's CPU.
        let kept = Figures {
            errors_by_class: None,
            in_flight: None,
            cpu_cores: None,
            ..from_engine.clone()
        };
        assert_eq!(from_files, &kept);
    }
    // The figures are those of the intervals, not all alike.
    let third = &live.intervals[3];
    assert_eq!((third.requests, third.errors), (161, 1));
    assert_eq!(
        third.errors_by_class,
        Some([("timeout".to_string(), 1)].into())
    );
    assert_eq!(
        third.send_lag.unwrap().max,
        live.intervals[3].send_lag.unwrap().max
    );
    assert!(third.send_lag.unwrap().max >= 7_000_000);
    assert_eq!((third.backlog, third.in_flight), (Some(9), Some(4)));
    assert!(live.intervals[0].warmup && !live.intervals[2].warmup);
    // Recall is the measured answers' only: none in the warmup.
    assert_eq!(live.intervals[1].recall, None);
    assert!(live.intervals[1].ops[1].recall.is_some());
    assert!(live.intervals[3].recall.as_ref().unwrap().min == 0.0);
    assert_ne!(live.intervals[4].latency, live.intervals[5].latency);
}

#[test]
fn a_recorded_run_reads_back_as_its_files_say() {
    let run = RunData::load(&run_fixture(), "run".into());
    let timeline = Timeline::load(&run);
    assert_eq!(timeline.ops, ["write", "read"]);
    assert_eq!(timeline.intervals.len(), run.logged_intervals);
    assert_eq!(timeline.warmup_s, 5.0);
    assert_eq!(timeline.attempted_per_s, Some(1000.0));
    for (i, figures) in timeline.intervals.iter().enumerate() {
        // One interval per second, each with hiccups; every request answered.
        assert_eq!(figures.end_s, i as f64 + 1.0);
        assert!(figures.hiccup.is_some());
        assert_eq!(figures.latency.unwrap().count, 1000);
        assert_eq!(figures.requests, 1000);
        assert_eq!(figures.requests_per_s(), 1000.0);
        let write = &figures.ops[0];
        assert_eq!((write.op.as_str(), write.requests), ("write", 800));
        assert!(write.response.unwrap().p99 >= write.response.unwrap().p50);
    }
    assert!(timeline.intervals[0].warmup && !timeline.intervals[9].warmup);
    assert_eq!(timeline.windows.len(), 1);
    assert!(timeline.windows[0].pass);
    assert_eq!(timeline.failing().count(), 0);
}

#[test]
fn quantiles_convert_without_loss() {
    let mut h = new_histogram();
    for v in [1_234_567u64, 2_000_000, 9_999_999] {
        h.record(v).unwrap();
    }
    let q = Quantiles::of(&h).unwrap();
    assert_eq!(Some(q.ms()), Percentiles::of(&h));
    assert_eq!(q.seconds()[3], h.max() as f64 / 1e9);
    assert_eq!(Quantiles::of(&new_histogram()), None);
}

/// A long log is read one interval at a time, an entry that comes a little late still
/// counted in its own interval; without intervals.csv the op types come from the log.
#[test]
fn a_long_log_is_read_interval_by_interval() {
    let mut log = HlogWriter::new(Vec::new(), std::time::UNIX_EPOCH).unwrap();
    let second = Duration::from_secs(1);
    let with = |n: u64| {
        let mut h = new_histogram();
        h.record_n(1_000_000, n).unwrap();
        h
    };
    for i in 0..200u64 {
        let at = second * i as u32;
        log.write_interval(Some("write.rt"), at, second, &with(i + 1))
            .unwrap();
        if i == 101 {
            // Interval 100's reads, written after interval 101 began.
            log.write_interval(Some("read.rt"), second * 100, second, &with(1000))
                .unwrap();
        }
    }
    let bytes = log.into_inner().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let run = RunData::load(empty.path(), "empty".into());
    let timeline = Timeline::of_files(&run, &bytes);
    assert_eq!(timeline.ops, ["write", "read"]);
    assert_eq!(timeline.intervals.len(), 200);
    for (i, f) in timeline.intervals.iter().enumerate() {
        assert_eq!(f.start_s, i as f64);
        let expected = i as u64 + 1 + if i == 100 { 1000 } else { 0 };
        assert_eq!(f.latency.unwrap().count, expected, "interval {i}");
        assert_eq!(f.ops.len(), if i == 100 { 2 } else { 1 }, "interval {i}");
    }
}

/// The measured intervals' recall tags are read as recall (every op type's merged), a
/// warmup's are not, and a log without them has none.
#[test]
fn recall_is_read_from_the_measured_recall_tags() {
    use crate::metrics::RECALL_SCALE;
    let mut log = HlogWriter::new(Vec::new(), std::time::UNIX_EPOCH).unwrap();
    let second = Duration::from_secs(1);
    let of = |values: &[f64]| {
        let mut h = new_histogram();
        for v in values {
            h.record((v * RECALL_SCALE) as u64).unwrap();
        }
        h
    };
    let mut latency = new_histogram();
    latency.record(1_000_000).unwrap();
    // Interval 0 is warmup; 1 and 2 are measured, 2 with a second op type judged.
    let mut write = |tag: &str, at: u32, h: &Histogram<u64>| {
        log.write_interval(Some(tag), second * at, second, h)
            .unwrap();
    };
    write("warmup.ann.rt", 0, &latency);
    write("warmup.ann.recall", 0, &of(&[0.1]));
    write("ann.rt", 1, &latency);
    let first: Vec<f64> = [1.0; 99].into_iter().chain([0.5]).collect();
    write("ann.recall", 1, &of(&first));
    write("ann.rt", 2, &latency);
    write("ann.recall", 2, &of(&[0.8, 0.9]));
    write("knn.recall", 2, &of(&[0.4]));
    let bytes = log.into_inner().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let timeline = Timeline::of_files(&RunData::load(empty.path(), "e".into()), &bytes);
    let t = &timeline.intervals;
    assert_eq!(t.len(), 3);
    assert_eq!(t[0].recall, None, "the warmup's recall is not shown");
    assert!(
        t[0].ops[0].recall.is_some(),
        "but the op's own holds both phases"
    );
    let first = t[1].recall.as_ref().unwrap();
    assert_eq!(first.requests, 100);
    assert!((first.mean - 0.995).abs() < 1e-3, "{first:?}");
    // One answer in a hundred at 0.5: exactly 1 % fell below 1, so p1 is 1 (as the SLA's
    // p1(recall)>=1 would pass); the minimum shows the one.
    assert_eq!(first.p1, 1.0, "{first:?}");
    assert_eq!(first.min, 0.5);
    let second = t[2].recall.as_ref().unwrap();
    assert_eq!(second.requests, 3, "both op types' answers");
    assert!((second.mean - 0.7).abs() < 1e-3, "{second:?}");
    assert_eq!(second.min, 0.4);
    // Recall histograms are not response times.
    assert_eq!(t[2].latency.unwrap().count, 1);
    // A run without recall has none.
    let run = RunData::load(&run_fixture(), "run".into());
    assert!(Timeline::load(&run)
        .intervals
        .iter()
        .all(|i| i.recall.is_none()));
}
