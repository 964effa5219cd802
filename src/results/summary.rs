//! The summary of one run: totals per operation type, the client's own cost, and how the run
//! went. Printed at the end of a run and written as summary.json.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::engine::{LoadMode, StopReason};
use crate::metrics::OpHistograms;
use crate::stats::percentiles_and_mean;

/// Latency percentiles of one histogram, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Mean.
    pub mean_ms: f64,
    /// Median.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// 99.9th percentile.
    pub p999_ms: f64,
    /// 99.99th percentile.
    pub p9999_ms: f64,
    /// Largest.
    pub max_ms: f64,
}

impl Latency {
    /// Percentiles of a histogram of nanoseconds.
    pub fn of(h: &Histogram<u64>) -> Latency {
        let ([p50, p95, p99, p999, p9999], mean) =
            percentiles_and_mean(h, [50.0, 95.0, 99.0, 99.9, 99.99]);
        let ms = |v: u64| v as f64 / 1e6;
        Latency {
            mean_ms: mean / 1e6,
            p50_ms: ms(p50),
            p95_ms: ms(p95),
            p99_ms: ms(p99),
            p999_ms: ms(p999),
            p9999_ms: ms(p9999),
            max_ms: ms(if h.is_empty() { 0 } else { h.max() }),
        }
    }
}

/// What one operation type did over a phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpSummary {
    /// The operation type.
    pub op: String,
    /// Requests sent, successful or not.
    pub requests: u64,
    /// Successful requests.
    pub ok: u64,
    /// Failed requests by class.
    pub errors: BTreeMap<String, u64>,
    /// The first message of each class.
    pub error_examples: BTreeMap<String, String>,
    /// Requests per second over the phase.
    pub rate_per_s: f64,
    /// Response time of successful requests (from the intended start).
    pub response_time: Latency,
    /// Service time of successful requests (from the send).
    pub service_time: Latency,
    /// Time every request waited in the client before it was sent (send lag).
    pub wait_time: Latency,
    /// The recall of the answers, for an operation judged for it (an ANN query).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<Recall>,
}

/// The recall of an ANN query's answers over a phase: each request's share of the exact k
/// nearest neighbours that its answer held, a failed request's 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recall {
    /// Requests whose recall was recorded (every request of the type, failed or not).
    pub requests: u64,
    /// Mean recall.
    pub mean: f64,
    /// The recall that 1 % of the requests fell below (the first percentile).
    pub p1: f64,
    /// The fifth percentile.
    pub p5: f64,
    /// The median.
    pub p50: f64,
    /// The lowest.
    pub min: f64,
}

impl Recall {
    /// The recall figures of a histogram of ten-thousandths
    /// ([`RECALL_SCALE`](crate::metrics::RECALL_SCALE)); `None` when it is empty.
    pub fn of(h: &Histogram<u64>) -> Option<Recall> {
        if h.is_empty() {
            return None;
        }
        use crate::metrics::op_histograms::{recall_below, recall_mean};
        let scale = crate::metrics::RECALL_SCALE;
        // As the SLA's judge takes them: each bucket at its lowest value.
        let at = |percent: f64| recall_below(h, percent) as f64 / scale;
        Some(Recall {
            requests: h.len(),
            mean: recall_mean(h) as f64 / scale,
            p1: at(1.0),
            p5: at(5.0),
            p50: at(50.0),
            min: h.min() as f64 / scale,
        })
    }
}

impl OpSummary {
    /// The summary of `stats` over `seconds`.
    pub fn of(op: &str, stats: &OpHistograms, seconds: f64) -> OpSummary {
        OpSummary {
            op: op.to_string(),
            requests: stats.total(),
            ok: stats.ok,
            errors: stats
                .errors
                .iter()
                .map(|(c, n)| (c.name().to_string(), *n))
                .collect(),
            error_examples: stats
                .error_examples
                .iter()
                .map(|(c, m)| (c.name().to_string(), m.clone()))
                .collect(),
            rate_per_s: if seconds > 0.0 {
                stats.total() as f64 / seconds
            } else {
                0.0
            },
            response_time: Latency::of(&stats.response_ns),
            service_time: Latency::of(&stats.service_ns),
            wait_time: Latency::of(&stats.wait_ns),
            recall: stats.recall.as_ref().and_then(Recall::of),
        }
    }
}

/// The client's own cost over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientCost {
    /// CPU time (user + system) of the headroom process during the run, seconds.
    pub cpu_s: f64,
    /// CPU time per request, microseconds.
    pub cpu_us_per_request: f64,
    /// Peak resident memory of the headroom process, bytes.
    pub peak_rss_bytes: u64,
    /// The largest client hiccup (how much later than asked a worker woke), ms.
    pub hiccup_max_ms: f64,
    /// 99.9th percentile of client hiccups, ms.
    pub hiccup_p999_ms: f64,
}

/// The populate phase, reported on its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PopulateSummary {
    /// Rows asked for.
    pub rows: u64,
    /// Rows written.
    pub written: u64,
    /// Failed writes.
    pub errors: u64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Rows per second.
    pub rate_per_s: f64,
    /// The writes measured as any request (response, service and wait times; errors by
    /// class): YCSB's load-phase INSERT. `None` in summaries written before headroom
    /// measured them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<OpSummary>,
}

/// summary.json: the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// headroom's version.
    pub headroom_version: String,
    /// The workload's name.
    pub workload: String,
    /// Open or closed loop, and its settings.
    pub mode: LoadMode,
    /// What the latencies measure.
    pub latency_kind: String,
    /// Why the run ended.
    pub stop: StopReason,
    /// Start of the run (after populate), RFC 3339.
    pub started_at: String,
    /// Warmup length, seconds.
    pub warmup_s: f64,
    /// The measured part's length, seconds: a completed open-loop run's scheduled period,
    /// otherwise until the last answer.
    pub measured_s: f64,
    /// Requests per second the schedule asked for (open loop).
    pub attempted_rate_per_s: Option<f64>,
    /// Successful requests per second in the measured part (a completed open-loop run:
    /// successful answers that arrived within its scheduled period, whatever their phase;
    /// otherwise the measured part's successful requests over `measured_s`). Failed requests
    /// carry no load: they are in `failed_rate_per_s`.
    pub achieved_rate_per_s: f64,
    /// Requests per second that failed in the measured part, counted like the achieved rate
    /// (which counts successful answers only); by class in `ops`.
    #[serde(default)]
    pub failed_rate_per_s: f64,
    /// The largest number of requests waiting in the client at an interval end.
    pub max_backlog: u64,
    /// Open loop: requests of the schedule never sent, because the client was still behind
    /// it a second after its end (each also counted as an `unsent` error of its op type; an
    /// estimate beyond a million per client thread).
    #[serde(default)]
    pub unsent_requests: f64,
    /// Whether the client, not the server, limited the run; see [`crate::sla::validity`].
    /// `None` in summaries written before headroom judged it.
    #[serde(default)]
    pub validity: Option<crate::sla::Validity>,
    /// Per operation type, measured part.
    pub ops: Vec<OpSummary>,
    /// Per operation type, warmup.
    pub warmup: Vec<OpSummary>,
    /// The populate phase, when there was one.
    pub populate: Option<PopulateSummary>,
    /// The client's own cost.
    pub client: ClientCost,
    /// The SLA judged per window, and its verdict, when the run had one.
    pub sla: Option<SlaSummary>,
    /// A run merged from a fleet's workers: each one's figures, in worker order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<WorkerFigures>,
    /// `--validate`: what the reads returned and whether the acknowledged writes were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<crate::validation::Validation>,
}

/// One worker of a merged run: what it was asked, what it achieved, and how late it sent,
/// so that a slow worker shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerFigures {
    /// K, from 1.
    pub index: u32,
    /// Its run directory, as given to the merge.
    pub dir: String,
    /// Its share of the attempted rate, requests per second (0 for a closed loop, which has
    /// none).
    pub attempted_rate_per_s: f64,
    /// Its successful answers per second in the measured part.
    pub achieved_rate_per_s: f64,
    /// Its failed requests per second in the measured part.
    pub failed_rate_per_s: f64,
    /// Its send lag (wait before the send, measured requests), 99th percentile, ms.
    pub send_lag_p99_ms: f64,
    /// Its longest send lag, ms.
    pub send_lag_max_ms: f64,
    /// Its CPU time per request sent, µs.
    pub cpu_us_per_request: f64,
    /// Whether its own measurement stood (it kept its schedule).
    pub valid: bool,
    /// Why its run ended.
    pub stop: StopReason,
}

/// A run's SLA verdict: the spec, whether every window passed, the worst window of each
/// term, and every failing window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlaSummary {
    /// The SLA in canonical form.
    pub spec: String,
    /// Window length, seconds.
    pub window_s: f64,
    /// The verdict, window by window.
    pub verdict: crate::sla::RunVerdict,
}

impl RunSummary {
    /// Reads a run directory's summary.json.
    pub fn read(dir: &std::path::Path) -> anyhow::Result<RunSummary> {
        super::read_json(&dir.join(crate::catalogue::SUMMARY_JSON))
    }

    /// Writes summary.json into `dir`.
    pub fn write(&self, dir: &std::path::Path) -> anyhow::Result<()> {
        super::write_json(&dir.join(crate::catalogue::SUMMARY_JSON), self)
    }

    /// Whether the run's measurement stands (a summary without a validity verdict, written
    /// before headroom judged one, counts as valid).
    pub fn is_valid(&self) -> bool {
        self.validity
            .as_ref()
            .is_none_or(crate::sla::Validity::is_valid)
    }
}
