//! Where a request's time is recorded: the histograms of one operation type over one span
//! of time (response time and service time), its counts and its error classes. Workers keep
//! their own and the collector adds them up at interval ends, so recording takes no lock.
//!
//! A request's time, from its send to the run's files:
//! 1. `engine/worker.rs` stamps each request (intended start, send, answer) and records it
//!    into the worker's own [`OpHistograms`] (this file);
//! 2. `engine/collector.rs` adds the workers' histograms up at each interval's end into an
//!    `engine::Interval`;
//! 3. `run/files.rs` writes each interval (`results/hlog.rs` the histogram log,
//!    `results/intervals_csv.rs` the table) and judges the SLA's windows on it.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::ErrorClass;
use crate::stats::new_histogram;

/// Whether a request belongs to the warmup (excluded from results) or the measured run, by
/// its intended start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Before the end of `--warmup`.
    Warmup,
    /// The measured run.
    Measure,
}

impl Phase {
    /// Both phases, by index.
    pub const ALL: [Phase; 2] = [Phase::Warmup, Phase::Measure];

    /// The phase's name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Warmup => "warmup",
            Phase::Measure => "measure",
        }
    }

    /// Index into per-phase arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What one operation type did in one span of time.
#[derive(Debug, Clone)]
pub struct OpHistograms {
    /// Response time of successful requests (completion − intended start), ns.
    pub response_ns: Histogram<u64>,
    /// Service time of successful requests (completion − send), ns.
    pub service_ns: Histogram<u64>,
    /// Wait in the client of every request, failed or not (send − intended start), ns.
    pub wait_ns: Histogram<u64>,
    /// Successful requests.
    pub ok: u64,
    /// Failed requests by class.
    pub errors: BTreeMap<ErrorClass, u64>,
    /// The first message seen for each class.
    pub error_examples: BTreeMap<ErrorClass, String>,
    /// The recall of every request of a type whose answers are judged for it (an ANN
    /// query), in [`RECALL_SCALE`]ths, a failed request's 0; `None` for other types.
    pub recall: Option<Histogram<u64>>,
}

/// Recall is recorded in ten-thousandths: 1.0 is 10 000. (A histogram holds integers; at
/// three significant digits, a recall of 0.9 is kept within 0.0005.)
pub const RECALL_SCALE: f64 = 10_000.0;

/// The mean of a recall histogram, in ten-thousandths rounded down, each bucket counted at its
/// lowest value: never above the mean of the values recorded (the histogram's own mean takes
/// each bucket's middle). 0 when empty. The SLA's judge and summary.json both use it.
pub fn recall_mean(h: &Histogram<u64>) -> u64 {
    if h.is_empty() {
        return 0;
    }
    let sum: u128 = h
        .iter_recorded()
        .map(|v| u128::from(h.lowest_equivalent(v.value_iterated_to())) * u128::from(v.count_at_value()))
        .sum();
    (sum / u128::from(h.len())) as u64
}

/// The recall that `percent` % of the requests fell below, in ten-thousandths: the value at
/// rank ⌊percent/100 · n⌋ + 1 from the lowest, at its bucket's lowest value, so that exactly
/// `percent` % below a bound still meets it (as `pQ<T` allows 100 − Q % above T). 0 when
/// empty.
pub fn recall_below(h: &Histogram<u64>, percent: f64) -> u64 {
    if h.is_empty() {
        return 0;
    }
    let below = (percent / 100.0 * h.len() as f64).floor() as u64;
    let rank = (below + 1).min(h.len());
    h.lowest_equivalent(crate::stats::value_at_rank(h, rank))
}

impl Default for OpHistograms {
    fn default() -> Self {
        OpHistograms {
            response_ns: new_histogram(),
            service_ns: new_histogram(),
            wait_ns: new_histogram(),
            ok: 0,
            errors: BTreeMap::new(),
            error_examples: BTreeMap::new(),
            recall: None,
        }
    }
}

impl OpHistograms {
    /// Records a successful request.
    #[inline]
    pub fn record_ok(&mut self, response_ns: u64, service_ns: u64) {
        self.ok += 1;
        // Auto-resizing histograms accept any value; a zero is recorded as the lowest value.
        let _ = self.response_ns.record(response_ns.max(1));
        let _ = self.service_ns.record(service_ns.max(1));
    }

    /// Records how long a request waited in the client before it was sent.
    #[inline]
    pub fn record_wait(&mut self, wait_ns: u64) {
        let _ = self.wait_ns.record(wait_ns.max(1));
    }

    /// Records a failed request; `message` is asked for only for the first of its class.
    pub fn record_error(&mut self, class: ErrorClass, message: impl FnOnce() -> String) {
        *self.errors.entry(class).or_insert(0) += 1;
        self.error_examples.entry(class).or_insert_with(message);
    }

    /// Records one request's recall (0 to 1; a failed request's is 0).
    #[inline]
    pub fn record_recall(&mut self, recall: f64) {
        let scaled = (recall.clamp(0.0, 1.0) * RECALL_SCALE).round() as u64;
        let _ = self
            .recall
            .get_or_insert_with(new_histogram)
            .record(scaled);
    }

    /// Failed requests of every class.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// All requests, successful or not.
    pub fn total(&self) -> u64 {
        self.ok + self.error_count()
    }

    /// Adds another span's statistics to these.
    pub fn add(&mut self, other: &OpHistograms) {
        self.ok += other.ok;
        self.response_ns
            .add(&other.response_ns)
            .expect("auto-resizing histograms always add");
        self.wait_ns
            .add(&other.wait_ns)
            .expect("auto-resizing histograms always add");
        self.service_ns
            .add(&other.service_ns)
            .expect("auto-resizing histograms always add");
        if let Some(theirs) = &other.recall {
            self.recall
                .get_or_insert_with(new_histogram)
                .add(theirs)
                .expect("auto-resizing histograms always add");
        }
        for (class, n) in &other.errors {
            *self.errors.entry(*class).or_insert(0) += n;
        }
        for (class, message) in &other.error_examples {
            self.error_examples
                .entry(*class)
                .or_insert_with(|| message.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_add_up() {
        let mut a = OpHistograms::default();
        a.record_ok(1_000_000, 900_000);
        a.record_error(ErrorClass::Timeout, || "first".into());
        a.record_error(ErrorClass::Timeout, || {
            panic!("only the first message is built")
        });
        let mut b = OpHistograms::default();
        b.record_ok(3_000_000, 2_000_000);
        b.record_error(ErrorClass::Timeout, || "second".into());
        b.record_error(ErrorClass::Overloaded, || "busy".into());
        a.add(&b);
        assert_eq!(a.ok, 2);
        assert_eq!(a.errors[&ErrorClass::Timeout], 3);
        assert_eq!(a.error_examples[&ErrorClass::Timeout], "first");
        assert_eq!(a.error_examples[&ErrorClass::Overloaded], "busy");
        assert_eq!(a.total(), 6, "2 successes and 4 failures");
        assert_eq!(a.response_ns.len(), 2);
        assert!(a.response_ns.max() >= 3_000_000);
    }
}
