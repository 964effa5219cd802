//! Tests of the figures model: a timeline built from the engine's intervals and one read back
//! from the files those intervals write hold the same figures; a recorded directory's
//! timeline holds what its files say.

use std::time::{Duration, SystemTime};

use super::*;
use crate::fixtures::run_fixture;
use crate::metrics::ErrorClass;
use crate::results::hlog::{HlogWriter, HICCUP_TAG};
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

/// Writes the intervals as a run writes them: each op's phases into histograms.hlog and
/// intervals.csv, then the hiccups.
fn write_run(dir: &std::path::Path, intervals: &[Interval]) {
    let mut hlog = HlogWriter::create(&dir.join("histograms.hlog"), SystemTime::now()).unwrap();
    let mut csv = IntervalsCsv::create(&dir.join("intervals.csv")).unwrap();
    for interval in intervals {
        let offset = Duration::from_nanos(interval.start_ns);
        let length = Duration::from_nanos(interval.length_ns);
        for (i, name) in ops().iter().enumerate() {
            for phase in Phase::ALL {
                let stats = &interval.ops[i][phase.index()];
                if stats.total() == 0 {
                    continue;
                }
                let prefix = if phase == Phase::Warmup {
                    "warmup."
                } else {
                    ""
                };
                let mut tag = |kind: &str, h: &Histogram<u64>| {
                    let tag = format!("{prefix}{name}.{kind}");
                    hlog.write_interval(Some(&tag), offset, length, h).unwrap();
                };
                tag("rt", &stats.response_ns);
                tag("st", &stats.service_ns);
                tag("wt", &stats.wait_ns);
                if let Some(recall) = &stats.recall {
                    tag("recall", recall);
                }
                csv.row(interval, phase, name, stats).unwrap();
            }
        }
        if let Some(h) = &interval.hiccups {
            hlog.write_interval(Some(HICCUP_TAG), offset, length, h)
                .unwrap();
        }
    }
    csv.flush().unwrap();
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
    assert_eq!(timeline.intervals.len(), run.timeline.len());
    assert_eq!(timeline.warmup_s, 5.0);
    assert_eq!(timeline.attempted_per_s, Some(1000.0));
    for (figures, logged) in timeline.intervals.iter().zip(&run.timeline) {
        // The report's own reader of histograms.hlog takes the same percentiles.
        assert_eq!(figures.latency.map(|q| q.ms()), logged.latency);
        assert_eq!(figures.hiccup.map(|q| q.ms()), logged.hiccup);
        assert_eq!(figures.end_s, logged.start_s + logged.length_s);
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
