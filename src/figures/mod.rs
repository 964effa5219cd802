//! One run's figures, per interval: the model every view of a run draws. The terminal's live
//! line, the live page and the report each read a run's timeline from here, built once: from
//! the engine's intervals while the run goes ([`Figures::of_interval`], [`Timeline::push`])
//! or from the run directory's files afterwards ([`Timeline::load`], in `files`). A figure
//! is computed once, in this model; views only draw it.
//!
//! Per interval ([`Figures`]): its requests and failures, failures by class, each op type's
//! latencies and recall, every op's latencies merged, the send lag, the client's hiccups and
//! CPU, the backlog and the requests in flight. Latency quantiles are kept in whole
//! nanoseconds ([`Quantiles`]), as the histograms hold them, so that each view converts them
//! to its own unit with nothing lost. What the files do not hold (failures by class, the
//! requests in flight, the client's CPU) is `None` in a timeline read back.

mod files;

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::engine::Interval;
use crate::metrics::{OpHistograms, Phase};
use crate::results::run_dir::Percentiles;
use crate::results::summary::Recall;
use crate::stats::histogram::{new_histogram, percentiles_and_mean};

/// Quantiles of a histogram of nanoseconds, by the rule every output takes them (Java
/// HdrHistogram's: see [`crate::stats::histogram::value_at_percentile`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantiles {
    /// Values recorded.
    pub count: u64,
    /// Median, ns.
    pub p50: u64,
    /// 99th percentile, ns.
    pub p99: u64,
    /// 99.9th percentile, ns.
    pub p999: u64,
    /// 99.99th percentile, ns.
    pub p9999: u64,
    /// Largest, ns.
    pub max: u64,
}

impl Quantiles {
    /// A histogram's quantiles; `None` when it is empty.
    pub fn of(h: &Histogram<u64>) -> Option<Quantiles> {
        if h.is_empty() {
            return None;
        }
        let ([p50, p99, p999, p9999], _) = percentiles_and_mean(h, [50.0, 99.0, 99.9, 99.99]);
        Some(Quantiles {
            count: h.len(),
            p50,
            p99,
            p999,
            p9999,
            max: h.max(),
        })
    }

    /// In milliseconds, as the report and the files show latencies.
    pub fn ms(&self) -> Percentiles {
        let ms = |v: u64| v as f64 / 1e6;
        Percentiles {
            count: self.count,
            p50_ms: ms(self.p50),
            p99_ms: ms(self.p99),
            p999_ms: ms(self.p999),
            p9999_ms: ms(self.p9999),
            max_ms: ms(self.max),
        }
    }

    /// p50, p99, p99.9 and max in seconds, as the live gauges show them.
    pub fn seconds(&self) -> [f64; 4] {
        [self.p50, self.p99, self.p999, self.max].map(|ns| ns as f64 / 1e9)
    }
}

/// One op type in one interval, both phases together.
#[derive(Debug, Clone, PartialEq)]
pub struct OpFigures {
    /// The op type.
    pub op: String,
    /// Answered requests, failed or not.
    pub requests: u64,
    /// Failed requests.
    pub errors: u64,
    /// Response times of the successful requests.
    pub response: Option<Quantiles>,
    /// Service times of the successful requests.
    pub service: Option<Quantiles>,
    /// The recall of its answers, for an op type judged for it (an ANN query).
    pub recall: Option<Recall>,
}

/// Everything a view shows of one interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    /// Start, seconds since the run's start.
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    /// End, seconds since the run's start (where a chart plots the interval).
    pub end_s: f64,
    /// Whether some of its answers were of the warmup.
    pub warmup: bool,
    /// Answered requests of every op type and phase, failed or not.
    pub requests: u64,
    /// Failed requests.
    pub errors: u64,
    /// Failed requests by class; `None` when read back from the files, which do not keep
    /// them per interval.
    pub errors_by_class: Option<BTreeMap<String, u64>>,
    /// Each op type with at least one answer, in the run's order of op types.
    pub ops: Vec<OpFigures>,
    /// Response times of every op type and phase merged.
    pub latency: Option<Quantiles>,
    /// How long requests waited in the client before they were sent, every op type (read
    /// back only from a log that keeps the waits).
    pub send_lag: Option<Quantiles>,
    /// The client's hiccups.
    pub hiccup: Option<Quantiles>,
    /// The recall of the measured answers of every op type judged for it.
    pub recall: Option<Recall>,
    /// Requests due and not yet sent at the interval's end.
    pub backlog: Option<u64>,
    /// Requests sent and not yet answered at the interval's end (not in the files).
    pub in_flight: Option<u64>,
    /// The client's CPU over the interval, in cores (not in the files).
    pub cpu_cores: Option<f64>,
}

impl Figures {
    /// `n` of the interval's requests per second.
    pub fn per_s(&self, n: u64) -> f64 {
        n as f64 / self.length_s.max(1e-9)
    }

    /// Answered requests per second, failed or not.
    pub fn requests_per_s(&self) -> f64 {
        self.per_s(self.requests)
    }

    /// Successful answers per second (a failed request carries no load).
    pub fn achieved_per_s(&self) -> f64 {
        self.per_s(self.requests - self.errors)
    }

    /// Failed requests per second.
    pub fn errors_per_s(&self) -> f64 {
        self.per_s(self.errors)
    }

    /// The figures of an engine's interval whose op types are `ops`, in the engine's order.
    pub fn of_interval(interval: &Interval, ops: &[String]) -> Figures {
        let mut op_figures = Vec::new();
        let mut latency = new_histogram();
        let mut send_lag = new_histogram();
        let mut recall = new_histogram();
        let mut by_class: BTreeMap<String, u64> = BTreeMap::new();
        let (mut requests, mut errors) = (0, 0);
        let mut warmup = false;
        for (name, phases) in ops.iter().zip(&interval.ops) {
            let mut both = OpHistograms::default();
            for phase in [Phase::Warmup, Phase::Measure] {
                let stats = &phases[phase.index()];
                if stats.total() == 0 {
                    continue;
                }
                warmup |= phase == Phase::Warmup;
                for (class, n) in &stats.errors {
                    *by_class.entry(class.name().to_string()).or_default() += n;
                }
                if phase == Phase::Measure {
                    if let Some(r) = &stats.recall {
                        let _ = recall.add(r);
                    }
                }
                both.add(stats);
            }
            // Requests of every op, whether or not they were answered in time, waited.
            let _ = send_lag.add(&both.wait_ns);
            let _ = latency.add(&both.response_ns);
            requests += both.total();
            errors += both.error_count();
            if both.total() > 0 {
                op_figures.push(OpFigures {
                    op: name.clone(),
                    requests: both.total(),
                    errors: both.error_count(),
                    response: Quantiles::of(&both.response_ns),
                    service: Quantiles::of(&both.service_ns),
                    recall: both.recall.as_ref().and_then(Recall::of),
                });
            }
        }
        Figures {
            start_s: interval.start_ns as f64 / 1e9,
            length_s: interval.length_ns as f64 / 1e9,
            end_s: (interval.start_ns + interval.length_ns) as f64 / 1e9,
            warmup,
            requests,
            errors,
            errors_by_class: Some(by_class),
            ops: op_figures,
            latency: Quantiles::of(&latency),
            send_lag: Quantiles::of(&send_lag),
            hiccup: interval.hiccups.as_ref().and_then(Quantiles::of),
            recall: Recall::of(&recall),
            backlog: Some(interval.backlog),
            in_flight: Some(interval.in_flight),
            cpu_cores: None,
        }
    }
}

/// A judged SLA window.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// Start, seconds since the run's start (the warmup included).
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    /// Whether every term passed.
    pub pass: bool,
    /// The failing terms, as the verdict words them.
    pub failures: Vec<String>,
}

/// One run's timeline: its intervals' figures and its judged windows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    /// The op types, in the engine's order.
    pub ops: Vec<String>,
    /// The warmup, seconds.
    pub warmup_s: f64,
    /// The attempted rate, per second, when the run has a schedule.
    pub attempted_per_s: Option<f64>,
    /// When the schedule ends, seconds since the start: intervals from then on only collect
    /// late answers. `None` while unknown.
    pub planned_end_s: Option<f64>,
    /// Every interval, in time order.
    pub intervals: Vec<Figures>,
    /// Every judged window, in the order judged.
    pub windows: Vec<Window>,
}

impl Timeline {
    /// A run about to start: nothing measured yet.
    pub fn new(ops: Vec<String>, warmup_s: f64, attempted_per_s: Option<f64>) -> Timeline {
        Timeline {
            ops,
            warmup_s,
            attempted_per_s,
            ..Timeline::default()
        }
    }

    /// One more interval of the engine, with the client's CPU over it when it was read.
    pub fn push(&mut self, interval: &Interval, cpu_cores: Option<f64>) -> &Figures {
        let mut figures = Figures::of_interval(interval, &self.ops);
        figures.cpu_cores = cpu_cores;
        self.intervals.push(figures);
        self.intervals.last().expect("pushed")
    }

    /// The intervals the schedule covers (those after its end only hold late answers).
    pub fn scheduled(&self) -> impl Iterator<Item = &Figures> {
        self.intervals
            .iter()
            .filter(|f| self.planned_end_s.is_none_or(|end| f.start_s < end - 1e-6))
    }

    /// The failing windows.
    pub fn failing(&self) -> impl Iterator<Item = &Window> {
        self.windows.iter().filter(|w| !w.pass)
    }
}

#[cfg(test)]
mod tests;
