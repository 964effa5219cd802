//! The live [`State`] as metric families, encoded by `prometheus-client` at every scrape
//! (decision 0017): OpenMetrics text for `/metrics`, and the Prometheus text format (0.0.4)
//! for the Pushgateway, which reads no OpenMetrics. The families are described once, here;
//! docs/live.md lists them, and dashboards/headroom.json queries them.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Mutex};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

use super::state::{Stage, State, QUANTILES};

/// The `Content-Type` of `/metrics`.
pub const OPENMETRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The `Content-Type` of a push.
pub const PROMETHEUS_TEXT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Reads the shared state at each scrape.
#[derive(Debug, Clone)]
pub struct Families(pub Arc<Mutex<State>>);

type LabelSet<'a> = Vec<(&'static str, Cow<'a, str>)>;

impl Families {
    fn registry(&self) -> Registry {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(self.clone()));
        registry
    }

    /// The state as OpenMetrics text, `# EOF` included.
    pub fn openmetrics(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry())
            .expect("writing to a String cannot fail");
        text
    }

    /// The state in the Prometheus text format, for the Pushgateway.
    pub fn prometheus_text(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry())
            .expect("writing to a String cannot fail");
        text
    }
}

/// One family: its samples gathered, then written with its descriptor, or not at all when it
/// has none (an empty family is allowed by OpenMetrics, but not every parser takes it).
struct Family<'a> {
    name: &'static str,
    help: &'static str,
    unit: Option<&'static Unit>,
    kind: MetricType,
    base: &'a LabelSet<'a>,
    samples: Vec<(LabelSet<'a>, f64)>,
}

impl<'a> Family<'a> {
    /// One sample, with the labels it has besides the run's; written as the family's kind.
    fn sample(&mut self, extra: LabelSet<'a>, value: f64) {
        self.samples.push((extra, value));
    }

    fn write(self, encoder: &mut DescriptorEncoder) -> fmt::Result {
        if self.samples.is_empty() {
            return Ok(());
        }
        let mut metric = encoder.encode_descriptor(self.name, self.help, self.unit, self.kind)?;
        for (extra, value) in self.samples {
            let labels: LabelSet = self.base.iter().cloned().chain(extra).collect();
            let sample = metric.encode_family(&labels)?;
            match self.kind {
                MetricType::Counter => ConstCounter::new(value).encode(sample)?,
                _ => ConstGauge::new(value).encode(sample)?,
            }
        }
        Ok(())
    }
}

fn family<'f, 'a>(
    families: &'f mut Vec<Family<'a>>,
    base: &'a LabelSet<'a>,
    name: &'static str,
    help: &'static str,
    unit: Option<&'static Unit>,
    kind: MetricType,
) -> &'f mut Family<'a> {
    families.push(Family {
        name,
        help,
        unit,
        kind,
        base,
        samples: Vec::new(),
    });
    families.last_mut().expect("pushed")
}

use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::MetricType::{Counter as COUNTER, Gauge as GAUGE};

static SECONDS: Unit = Unit::Seconds;
static BYTES: Unit = Unit::Bytes;

impl Collector for Families {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let base: LabelSet = vec![
            ("run", Cow::Borrowed(state.labels.run.as_str())),
            ("workload", Cow::Borrowed(state.labels.workload.as_str())),
            ("worker", Cow::Borrowed(state.labels.worker.as_str())),
        ];
        let mut families = Vec::new();
        let e = &mut families;

        let f = family(
            e,
            &base,
            "headroom_requests",
            "Requests answered (ok or failed), by op type and phase.",
            None,
            COUNTER,
        );
        for ((op, phase), n) in &state.requests {
            f.sample(
                vec![("op", op.into()), ("phase", (*phase).into())],
                *n as f64,
            );
        }
        let f = family(
            e,
            &base,
            "headroom_errors",
            "Failed requests, by op type, phase and error class.",
            None,
            COUNTER,
        );
        for ((op, phase, class), n) in &state.errors {
            f.sample(
                vec![
                    ("op", op.into()),
                    ("phase", (*phase).into()),
                    ("class", class.into()),
                ],
                *n as f64,
            );
        }

        let latest = state.latest.as_ref();
        for (name, help, pick) in [
            ("headroom_response_time", "The latest interval's response time (from each request's intended start), by op type.", 0),
            ("headroom_service_time", "The latest interval's service time (from each request's send), by op type.", 1),
        ] {
            let f = family(e, &base, name, help, Some(&SECONDS), GAUGE);
            for op in latest.iter().flat_map(|l| &l.ops) {
                let q = if pick == 0 { op.response_s } else { op.service_s };
                if let Some(values) = q {
                    for ((label, _), v) in QUANTILES.iter().zip(values) {
                        f.sample(vec![("op", op.op.as_str().into()), ("quantile", (*label).into())], v);
                    }
                }
            }
        }
        for (name, help, pick) in [
            (
                "headroom_window_response_time",
                "The current SLA window's response time so far, by op type (measured requests).",
                0,
            ),
            (
                "headroom_window_service_time",
                "The current SLA window's service time so far, by op type (measured requests).",
                1,
            ),
        ] {
            let f = family(e, &base, name, help, Some(&SECONDS), GAUGE);
            for (op, response, service) in &state.window {
                let h = if pick == 0 { response } else { service };
                if let Some(values) = super::state::quantiles_s(h) {
                    for ((label, _), v) in QUANTILES.iter().zip(values) {
                        f.sample(
                            vec![("op", op.as_str().into()), ("quantile", (*label).into())],
                            v,
                        );
                    }
                }
            }
        }
        recall_families(e, &base, &state);
        validation_families(e, &base, &state);
        for (name, help, values) in [
            ("headroom_send_lag", "The latest interval's wait in the client before each send (send − intended start), every op type.", latest.and_then(|l| l.send_lag_s)),
            ("headroom_hiccup", "The latest interval's client hiccups: how late the client's own timers woke it.", latest.and_then(|l| l.hiccup_s)),
        ] {
            let f = family(e, &base, name, help, Some(&SECONDS), GAUGE);
            for ((label, _), v) in QUANTILES.iter().zip(values.into_iter().flatten()) {
                f.sample(vec![("quantile", (*label).into())], v);
            }
        }

        let rate = state.run().and_then(|r| r.rate_per_s);
        let f = family(
            e,
            &base,
            "headroom_attempted_requests_per_second",
            "The schedule's rate (this worker's share in a fleet); absent in a closed loop.",
            None,
            GAUGE,
        );
        if let Some(rate) = rate {
            f.sample(vec![], rate);
        }
        let f = family(
            e,
            &base,
            "headroom_achieved_requests_per_second",
            "Successful answers per second in the latest interval (failed requests carry no load).",
            None,
            GAUGE,
        );
        if let Some(l) = latest {
            f.sample(vec![], l.achieved_per_s);
        }
        let f = family(
            e,
            &base,
            "headroom_backlog_requests",
            "Requests due and not yet sent at the latest interval's end.",
            None,
            GAUGE,
        );
        if let Some(l) = latest {
            f.sample(vec![], l.backlog as f64);
        }
        let f = family(
            e,
            &base,
            "headroom_in_flight_requests",
            "Requests sent and not yet answered at the latest interval's end.",
            None,
            GAUGE,
        );
        if let Some(l) = latest {
            f.sample(vec![], l.in_flight as f64);
        }

        let f = family(
            e,
            &base,
            "headroom_client_cpu",
            "The client process's CPU time.",
            Some(&SECONDS),
            COUNTER,
        );
        f.sample(vec![], state.cpu_s);
        let f = family(
            e,
            &base,
            "headroom_client_resident_memory",
            "The client process's resident memory at the latest interval.",
            Some(&BYTES),
            GAUGE,
        );
        f.sample(vec![], state.rss_bytes as f64);

        let f = family(
            e,
            &base,
            "headroom_sla_windows",
            "SLA windows judged, by window length and verdict.",
            None,
            COUNTER,
        );
        for ((window, verdict), n) in &state.windows_judged {
            f.sample(
                vec![("window", window.into()), ("verdict", (*verdict).into())],
                *n as f64,
            );
        }
        let f = family(e, &base, "headroom_validity", "1 for the current run's validity: pending while it runs, valid, client_bound (no verdict), none.", None, GAUGE);
        f.sample(vec![("verdict", state.validity().into())], 1.0);
        let f = family(
            e,
            &base,
            "headroom_intervals",
            "Intervals collected.",
            None,
            COUNTER,
        );
        f.sample(vec![], state.intervals as f64);
        let f = family(e, &base, "headroom_phase", "1 for where the process is: starting, populate, warmup, measure, between (a search's runs), ended.", None, GAUGE);
        for stage in Stage::ALL {
            f.sample(
                vec![("phase", stage.name().into())],
                f64::from(u8::from(stage == state.stage)),
            );
        }

        if state.search {
            let run = state.run();
            let f = family(
                e,
                &base,
                "headroom_trial_rate_requests_per_second",
                "A search's current trial (or probe): its attempted rate.",
                None,
                GAUGE,
            );
            if let Some(rate) = run.and_then(|r| r.rate_per_s) {
                f.sample(vec![], rate);
            }
            let f = family(
                e,
                &base,
                "headroom_trial_repeat",
                "A search's current trial: its repeat at this rate, from 1.",
                None,
                GAUGE,
            );
            if let Some(repeat) = run.and_then(|r| r.repeat) {
                f.sample(vec![], f64::from(repeat));
            }
            let f = family(e, &base, "headroom_capacity_bracket_requests_per_second", "A search's bracket so far: the highest rate that passed with every lower one (low), the lowest that failed (high); with --goal interval, the lower and upper bound at headroom_capacity_confidence.", None, GAUGE);
            let (low, high) = state.bracket();
            if let Some(low) = low {
                f.sample(vec![("bound", "low".into())], low);
            }
            if let Some(high) = high {
                f.sample(vec![("bound", "high".into())], high);
            }
            if let Some(bounds) = &state.bounds {
                let f = family(e, &base, "headroom_capacity_confidence", "With --goal interval: the probability that the bracket's bounds hold the capacity.", None, GAUGE);
                f.sample(vec![], bounds.confidence);
            }
        }
        for family in families {
            family.write(&mut encoder)?;
        }
        Ok(())
    }
}

/// What `--validate` has found so far (docs/validation.md): reads by class and writes by
/// outcome over every run of the process, and the last finished run's defects and lost
/// writes. None without `--validate`.
fn validation_families<'a>(e: &mut Vec<Family<'a>>, base: &'a LabelSet<'a>, state: &'a State) {
    let Some(v) = &state.validation else {
        return;
    };
    let total = v.total();
    let f = family(
        e,
        base,
        "headroom_validation_reads",
        "Reads --validate judged, by class: current, corrupt (no write produced it), stale (older than a write acknowledged before the read; a defect where W + R > RF), unchecked (another run's value).",
        None,
        COUNTER,
    );
    for (class, n) in [
        ("current", total.reads.current),
        ("corrupt", total.reads.corrupt),
        ("stale", total.reads.stale),
        ("unchecked", total.reads.unchecked),
    ] {
        f.sample(vec![("class", class.into())], n as f64);
    }
    let f = family(
        e,
        base,
        "headroom_validation_writes",
        "Writes --validate recorded, by outcome: acknowledged, or unknown (failed or timed out: may or may not have applied, never counted as lost).",
        None,
        COUNTER,
    );
    for (outcome, n) in [
        ("acknowledged", total.writes_acknowledged),
        ("unknown", total.writes_unknown),
    ] {
        f.sample(vec![("outcome", outcome.into())], n as f64);
    }
    for (name, help, pick) in [
        ("headroom_validation_defects", "The last finished validated run's defects in the data: acknowledged writes lost, corrupt values, stale reads the levels forbid.", 0),
        ("headroom_validation_lost_writes", "The last finished validated run's acknowledged writes its final check did not find.", 1),
    ] {
        let f = family(e, base, name, help, None, GAUGE);
        if let Some((defects, lost)) = v.last_run {
            f.sample(vec![], if pick == 0 { defects } else { lost } as f64);
        }
    }
}

/// The recall of the latest interval's and the current SLA window's answers, for each op type
/// judged for it (an ANN query): its low quantiles and its mean, as fractions. A run without
/// such an op type has none of these families.
fn recall_families<'a>(e: &mut Vec<Family<'a>>, base: &'a LabelSet<'a>, state: &'a State) {
    use super::state::{recall_quantiles, RECALL_QUANTILES};
    use crate::results::summary::Recall;
    let latest: Vec<(&str, Recall)> = state
        .latest
        .iter()
        .flat_map(|l| &l.ops)
        .filter_map(|o| Some((o.op.as_str(), o.recall.clone()?)))
        .collect();
    let window: Vec<(&str, Recall)> = state
        .window_recall
        .iter()
        .filter_map(|(op, h)| Some((op.as_str(), Recall::of(h)?)))
        .collect();
    for (ops, quantiles, mean) in [
        (
            latest,
            ("headroom_recall", "The latest interval's recall@k by op type (a failed request's 0): the recall that a quantile of the answers fell below."),
            ("headroom_recall_mean", "The latest interval's mean recall@k by op type (a failed request's 0)."),
        ),
        (
            window,
            ("headroom_window_recall", "The current SLA window's recall@k so far by op type (measured requests): the recall that a quantile of the answers fell below."),
            ("headroom_window_recall_mean", "The current SLA window's mean recall@k so far by op type (measured requests)."),
        ),
    ] {
        let f = family(e, base, quantiles.0, quantiles.1, None, GAUGE);
        for (op, r) in &ops {
            for (label, v) in RECALL_QUANTILES.iter().zip(recall_quantiles(r)) {
                f.sample(vec![("op", (*op).into()), ("quantile", (*label).into())], v);
            }
        }
        let f = family(e, base, mean.0, mean.1, None, GAUGE);
        for (op, r) in &ops {
            f.sample(vec![("op", (*op).into())], r.mean);
        }
    }
}

#[cfg(test)]
#[path = "openmetrics_tests.rs"]
mod tests;
