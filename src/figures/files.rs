//! A run's timeline read back from its directory: the counts and backlog of intervals.csv
//! (through [`RunData`]) joined by interval start to the histograms of histograms.hlog, each
//! interval's figures taken as the engine's interval gives them ([`super::Figures::of_interval`]).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::{Figures, OpFigures, Quantiles, Timeline, Window};
use crate::results::hlog::{for_each_interval, HICCUP_TAG};
use crate::results::run_dir::RunData;
use crate::results::summary::Recall;
use crate::stats::histogram::new_histogram;

/// One op type's histograms of one interval, both phases added.
#[derive(Default)]
struct OpLog {
    response: Option<Histogram<u64>>,
    service: Option<Histogram<u64>>,
    wait: Option<Histogram<u64>>,
    recall: Option<Histogram<u64>>,
}

/// One interval of histograms.hlog.
struct Slot {
    start_s: f64,
    length_s: f64,
    ops: BTreeMap<String, OpLog>,
    /// The measured recall of every op type.
    recall: Option<Histogram<u64>>,
    hiccup: Option<Histogram<u64>>,
}

/// One interval of intervals.csv, its rows added up.
struct Counts {
    start_s: f64,
    length_s: f64,
    warmup: bool,
    /// Requests and failures by op type, both phases.
    ops: BTreeMap<String, (u64, u64)>,
    backlog: Option<u64>,
}

fn add(into: &mut Option<Histogram<u64>>, h: &Histogram<u64>) {
    // Histograms that cannot be added (another precision) are rare enough to skip.
    let _ = into.get_or_insert_with(new_histogram).add(h);
}

/// The key of an interval: its start in whole milliseconds.
fn key(start_s: f64) -> i64 {
    (start_s * 1000.0).round() as i64
}

impl Timeline {
    /// The timeline of a run directory already read (`run`), its histograms read from the
    /// directory's histograms.hlog. What cannot be read is left out: [`RunData::load`] has
    /// already noted it.
    pub fn load(run: &RunData) -> Timeline {
        let hlog = std::fs::read(run.dir.join("histograms.hlog")).unwrap_or_default();
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
                warmup: false,
                ops: BTreeMap::new(),
                backlog: None,
            });
            c.warmup |= row.phase == "warmup";
            let op = c.ops.entry(row.op.clone()).or_default();
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
            done.insert(k, figures(ops, counts.get(&k), Some(&slot)));
        };
        let mut notes = Vec::new();
        for_each_interval(
            hlog,
            "histograms.hlog",
            &mut notes,
            |_| true,
            |interval| {
                let slot = slots.entry(key(interval.start_s)).or_insert_with(|| Slot {
                    start_s: interval.start_s,
                    length_s: interval.length_s,
                    ops: BTreeMap::new(),
                    recall: None,
                    hiccup: None,
                });
                let h = &interval.histogram;
                if interval.tag == HICCUP_TAG {
                    add(&mut slot.hiccup, h);
                    return;
                }
                let measured = !interval.tag.starts_with("warmup.");
                let tag = interval.tag.trim_start_matches("warmup.");
                let Some((op, kind)) = tag.rsplit_once('.') else {
                    return;
                };
                let log = slot.ops.entry(op.to_string()).or_default();
                match kind {
                    "rt" => add(&mut log.response, h),
                    "st" => add(&mut log.service, h),
                    "wt" => add(&mut log.wait, h),
                    "recall" => {
                        add(&mut log.recall, h);
                        if measured {
                            add(&mut slot.recall, h);
                        }
                    }
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
        let intervals = done.into_values().collect();
        Timeline {
            ops,
            warmup_s: run.warmup_s,
            attempted_per_s: run.attempted_rate(),
            planned_end_s: run.planned_end_s,
            intervals,
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

/// One interval's figures from its rows of intervals.csv and its histograms.
fn figures(ops: &[String], counts: Option<&Counts>, slot: Option<&Slot>) -> Figures {
    let (start_s, length_s) = match (counts, slot) {
        (Some(c), _) => (c.start_s, c.length_s),
        (None, Some(s)) => (s.start_s, s.length_s),
        (None, None) => (0.0, 0.0),
    };
    let mut latency: Option<Histogram<u64>> = None;
    let mut send_lag: Option<Histogram<u64>> = None;
    let mut op_figures = Vec::new();
    let (mut requests, mut errors) = (0, 0);
    for op in ops {
        let (n, failed) = counts
            .and_then(|c| c.ops.get(op).copied())
            .unwrap_or((0, 0));
        let log = slot.and_then(|s| s.ops.get(op));
        if let Some(log) = log {
            if let Some(h) = &log.response {
                add(&mut latency, h);
            }
            if let Some(h) = &log.wait {
                add(&mut send_lag, h);
            }
        }
        requests += n;
        errors += failed;
        if n > 0 || log.is_some_and(|l| l.response.is_some()) {
            let quantiles = |h: Option<&Histogram<u64>>| h.and_then(Quantiles::of);
            op_figures.push(OpFigures {
                op: op.clone(),
                requests: n,
                errors: failed,
                response: quantiles(log.and_then(|l| l.response.as_ref())),
                service: quantiles(log.and_then(|l| l.service.as_ref())),
                recall: log.and_then(|l| l.recall.as_ref()).and_then(Recall::of),
            });
        }
    }
    Figures {
        start_s,
        length_s,
        end_s: start_s + length_s,
        warmup: counts.is_some_and(|c| c.warmup),
        requests,
        errors,
        errors_by_class: None,
        ops: op_figures,
        latency: latency.as_ref().and_then(Quantiles::of),
        send_lag: send_lag.as_ref().and_then(Quantiles::of),
        hiccup: slot.and_then(|s| s.hiccup.as_ref()).and_then(Quantiles::of),
        recall: slot.and_then(|s| s.recall.as_ref()).and_then(Recall::of),
        backlog: counts.and_then(|c| c.backlog),
        in_flight: None,
        cpu_cores: None,
    }
}
