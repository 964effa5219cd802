//! A run's timeline read back from its directory: each interval of histograms.hlog (its
//! response, service and wait times, recall and hiccups per op type and phase) joined by its
//! start to the counts and backlog of intervals.csv (through [`RunData`]), made into the
//! engine's [`Interval`] again and its figures taken by the one rule,
//! [`Figures::of_interval`]. A new figure of data the files already hold needs no change here.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::{Figures, Timeline, Window};
use crate::catalogue::HISTOGRAMS_HLOG;
use crate::engine::Interval;
use crate::metrics::{ErrorClass, OpHistograms, Phase};
use crate::results::hlog::{for_each_interval, HICCUP_TAG};
use crate::results::run_dir::RunData;
use crate::stats::histogram::new_histogram;

/// One interval of histograms.hlog: per op type, its two phases' histograms.
struct Slot {
    start_s: f64,
    length_s: f64,
    ops: BTreeMap<String, [OpHistograms; 2]>,
    hiccups: Option<Histogram<u64>>,
}

/// One interval of intervals.csv, its rows added up.
struct Counts {
    start_s: f64,
    length_s: f64,
    /// Requests and failures by op type and phase.
    ops: BTreeMap<(String, usize), (u64, u64)>,
    backlog: Option<u64>,
}

/// Adds `h` into `into`; a histogram that cannot be added (another precision) is rare enough
/// to skip.
fn add(into: &mut Histogram<u64>, h: &Histogram<u64>) {
    let _ = into.add(h);
}

/// The key of an interval: its start in whole milliseconds.
fn key(start_s: f64) -> i64 {
    (start_s * 1000.0).round() as i64
}

fn phase_of(name: &str) -> usize {
    if name == Phase::Warmup.name() {
        Phase::Warmup.index()
    } else {
        Phase::Measure.index()
    }
}

impl Timeline {
    /// The timeline of a run directory already read (`run`), its histograms read from the
    /// directory's histograms.hlog. What cannot be read is left out: [`RunData::load`] has
    /// already noted it.
    pub fn load(run: &RunData) -> Timeline {
        let hlog = std::fs::read(run.dir.join(HISTOGRAMS_HLOG)).unwrap_or_default();
        Timeline::of_files(run, &hlog)
    }

    /// The timeline of a run directory read back: `run` for its settings, intervals.csv and
    /// windows, `hlog` the bytes of its histograms.hlog.
    pub fn of_files(run: &RunData, hlog: &[u8]) -> Timeline {
        let mut ops: Vec<String> = Vec::new();
        let mut counts: BTreeMap<i64, Counts> = BTreeMap::new();
        for row in &run.intervals {
            if !ops.contains(&row.op) {
                ops.push(row.op.clone());
            }
            let c = counts.entry(key(row.start_s)).or_insert_with(|| Counts {
                start_s: row.start_s,
                length_s: row.length_s,
                ops: BTreeMap::new(),
                backlog: None,
            });
            let op = c
                .ops
                .entry((row.op.clone(), phase_of(&row.phase)))
                .or_default();
            op.0 += row.requests;
            op.1 += row.errors;
            c.backlog = c.backlog.or(row.backlog);
        }
        // The log holds each interval's tags together, in time order: an interval's figures
        // are taken and its histograms dropped once two later ones have begun, so that a long
        // run's log is read holding a few histograms, not all of them (the margin keeps an
        // entry that comes a little out of order in its interval).
        let mut slots: BTreeMap<i64, Slot> = BTreeMap::new();
        let mut done: BTreeMap<i64, Figures> = BTreeMap::new();
        let mut sum_up = |k: i64, slot: Slot, ops: &mut Vec<String>| {
            for op in slot.ops.keys() {
                if !ops.contains(op) {
                    ops.push(op.clone());
                }
            }
            done.insert(k, figures(ops, counts.get(&k), Some(slot)));
        };
        let mut notes = Vec::new();
        for_each_interval(
            hlog,
            HISTOGRAMS_HLOG,
            &mut notes,
            |_| true,
            |interval| {
                let slot = slots.entry(key(interval.start_s)).or_insert_with(|| Slot {
                    start_s: interval.start_s,
                    length_s: interval.length_s,
                    ops: BTreeMap::new(),
                    hiccups: None,
                });
                let h = &interval.histogram;
                if interval.tag == HICCUP_TAG {
                    add(slot.hiccups.get_or_insert_with(new_histogram), h);
                    return;
                }
                let (phase, tag) = match interval.tag.strip_prefix("warmup.") {
                    Some(tag) => (Phase::Warmup, tag),
                    None => (Phase::Measure, interval.tag),
                };
                let Some((op, kind)) = tag.rsplit_once('.') else {
                    return;
                };
                let stats = &mut slot.ops.entry(op.to_string()).or_default()[phase.index()];
                match kind {
                    "rt" => add(&mut stats.response_ns, h),
                    "st" => add(&mut stats.service_ns, h),
                    "wt" => add(&mut stats.wait_ns, h),
                    "recall" => add(stats.recall.get_or_insert_with(new_histogram), h),
                    _ => {}
                }
                while slots.len() > 2 {
                    let (k, slot) = slots.pop_first().expect("more than two");
                    sum_up(k, slot, &mut ops);
                }
            },
        );
        while let Some((k, slot)) = slots.pop_first() {
            sum_up(k, slot, &mut ops);
        }
        // Intervals of intervals.csv without histograms (a log cut short).
        for (k, c) in &counts {
            done.entry(*k)
                .or_insert_with(|| figures(&ops, Some(c), None));
        }
        Timeline {
            ops,
            warmup_s: run.warmup_s,
            attempted_per_s: run.attempted_rate(),
            planned_end_s: run.planned_end_s,
            intervals: done.into_values().collect(),
            windows: run
                .windows
                .iter()
                .map(|w| Window {
                    start_s: w.start_s,
                    length_s: w.length_s,
                    pass: w.pass,
                    failures: w.failed.clone(),
                })
                .collect(),
        }
    }
}

/// One interval's figures from its rows of intervals.csv and its histograms: the engine's
/// interval they were written from, as far as the files keep it.
fn figures(ops: &[String], counts: Option<&Counts>, slot: Option<Slot>) -> Figures {
    let (start_s, length_s) = match (counts, &slot) {
        (Some(c), _) => (c.start_s, c.length_s),
        (None, Some(s)) => (s.start_s, s.length_s),
        (None, None) => (0.0, 0.0),
    };
    let (mut logged, hiccups) = slot.map_or((BTreeMap::new(), None), |s| (s.ops, s.hiccups));
    let ns = |s: f64| (s * 1e9).round() as u64;
    let interval = Interval {
        index: 0,
        start_ns: ns(start_s),
        length_ns: ns(length_s),
        ops: ops
            .iter()
            .map(|op| {
                let mut phases = logged.remove(op).unwrap_or_default();
                for (i, stats) in phases.iter_mut().enumerate() {
                    let counted = counts.and_then(|c| c.ops.get(&(op.clone(), i)));
                    // The files keep how many failed, not of which class. Without
                    // intervals.csv, the log's answers are counted (recall counts them all).
                    let logged = stats
                        .response_ns
                        .len()
                        .max(stats.recall.as_ref().map_or(0, |r| r.len()));
                    let (requests, failed) = counted.copied().unwrap_or((logged, 0));
                    stats.ok = requests.saturating_sub(failed);
                    if failed > 0 {
                        stats.errors.insert(ErrorClass::Other, failed);
                    }
                }
                phases
            })
            .collect(),
        hiccups,
        backlog: counts.and_then(|c| c.backlog).unwrap_or(0),
        in_flight: 0,
    };
    Figures {
        start_s,
        length_s,
        end_s: start_s + length_s,
        errors_by_class: None,
        backlog: counts.and_then(|c| c.backlog),
        in_flight: None,
        ..Figures::of_interval(&interval, ops)
    }
}
