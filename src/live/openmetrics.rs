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

/// One family: its descriptor once, then each sample with its labels.
struct Family<'e, 'a> {
    encoder: prometheus_client::encoding::MetricEncoder<'e>,
    base: &'a LabelSet<'a>,
}

impl<'a> Family<'_, 'a> {
    fn gauge(&mut self, extra: LabelSet<'_>, value: f64) -> fmt::Result {
        let labels: LabelSet = self.base.iter().cloned().chain(extra).collect();
        ConstGauge::new(value).encode(self.encoder.encode_family(&labels)?)
    }

    fn counter(&mut self, extra: LabelSet<'_>, value: f64) -> fmt::Result {
        let labels: LabelSet = self.base.iter().cloned().chain(extra).collect();
        ConstCounter::new(value).encode(self.encoder.encode_family(&labels)?)
    }
}

fn family<'e, 'a>(
    encoder: &'e mut DescriptorEncoder,
    base: &'a LabelSet<'a>,
    name: &'e str,
    help: &str,
    unit: Option<&'e Unit>,
    kind: prometheus_client::metrics::MetricType,
) -> Result<Family<'e, 'a>, fmt::Error> {
    Ok(Family {
        encoder: encoder.encode_descriptor(name, help, unit, kind)?,
        base,
    })
}

use prometheus_client::metrics::MetricType::{Counter as COUNTER, Gauge as GAUGE};

const SECONDS: Unit = Unit::Seconds;
const BYTES: Unit = Unit::Bytes;

impl Collector for Families {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let base: LabelSet = vec![
            ("run", Cow::Borrowed(state.labels.run.as_str())),
            ("workload", Cow::Borrowed(state.labels.workload.as_str())),
            ("worker", Cow::Borrowed(state.labels.worker.as_str())),
        ];
        let e = &mut encoder;

        let mut f = family(e, &base, "headroom_requests", "Requests answered (ok or failed), by op type and phase.", None, COUNTER)?;
        for ((op, phase), n) in &state.requests {
            f.counter(vec![("op", op.into()), ("phase", (*phase).into())], *n as f64)?;
        }
        let mut f = family(e, &base, "headroom_errors", "Failed requests, by op type, phase and error class.", None, COUNTER)?;
        for ((op, phase, class), n) in &state.errors {
            f.counter(
                vec![("op", op.into()), ("phase", (*phase).into()), ("class", class.into())],
                *n as f64,
            )?;
        }

        let latest = state.latest.as_ref();
        for (name, help, pick) in [
            ("headroom_response_time", "The latest interval's response time (from each request's intended start), by op type.", 0),
            ("headroom_service_time", "The latest interval's service time (from each request's send), by op type.", 1),
        ] {
            let mut f = family(e, &base, name, help, Some(&SECONDS), GAUGE)?;
            for op in latest.iter().flat_map(|l| &l.ops) {
                let q = if pick == 0 { op.response_s } else { op.service_s };
                if let Some(values) = q {
                    for ((label, _), v) in QUANTILES.iter().zip(values) {
                        f.gauge(vec![("op", op.op.as_str().into()), ("quantile", (*label).into())], v)?;
                    }
                }
            }
        }
        for (name, help, pick) in [
            ("headroom_window_response_time", "The current SLA window's response time so far, by op type (measured requests).", 0),
            ("headroom_window_service_time", "The current SLA window's service time so far, by op type (measured requests).", 1),
        ] {
            let mut f = family(e, &base, name, help, Some(&SECONDS), GAUGE)?;
            for (op, response, service) in &state.window {
                let h = if pick == 0 { response } else { service };
                if let Some(values) = super::state::quantiles_s(h) {
                    for ((label, _), v) in QUANTILES.iter().zip(values) {
                        f.gauge(vec![("op", op.as_str().into()), ("quantile", (*label).into())], v)?;
                    }
                }
            }
        }
        for (name, help, values) in [
            ("headroom_send_lag", "The latest interval's wait in the client before each send (send − intended start), every op type.", latest.and_then(|l| l.send_lag_s)),
            ("headroom_hiccup", "The latest interval's client hiccups: how late the client's own timers woke it.", latest.and_then(|l| l.hiccup_s)),
        ] {
            let mut f = family(e, &base, name, help, Some(&SECONDS), GAUGE)?;
            for ((label, _), v) in QUANTILES.iter().zip(values.into_iter().flatten()) {
                f.gauge(vec![("quantile", (*label).into())], v)?;
            }
        }

        let rate = state.run().and_then(|r| r.rate_per_s);
        let mut f = family(e, &base, "headroom_attempted_requests_per_second", "The schedule's rate (this worker's share in a fleet); absent in a closed loop.", None, GAUGE)?;
        if let Some(rate) = rate {
            f.gauge(vec![], rate)?;
        }
        let mut f = family(e, &base, "headroom_achieved_requests_per_second", "Requests answered per second in the latest interval.", None, GAUGE)?;
        if let Some(l) = latest {
            f.gauge(vec![], l.achieved_per_s)?;
        }
        let mut f = family(e, &base, "headroom_backlog_requests", "Requests due and not yet sent at the latest interval's end.", None, GAUGE)?;
        if let Some(l) = latest {
            f.gauge(vec![], l.backlog as f64)?;
        }
        let mut f = family(e, &base, "headroom_in_flight_requests", "Requests sent and not yet answered at the latest interval's end.", None, GAUGE)?;
        if let Some(l) = latest {
            f.gauge(vec![], l.in_flight as f64)?;
        }

        let mut f = family(e, &base, "headroom_client_cpu", "The client process's CPU time.", Some(&SECONDS), COUNTER)?;
        f.counter(vec![], state.cpu_s)?;
        let mut f = family(e, &base, "headroom_client_resident_memory", "The client process's resident memory at the latest interval.", Some(&BYTES), GAUGE)?;
        f.gauge(vec![], state.rss_bytes as f64)?;

        let mut f = family(e, &base, "headroom_sla_windows", "SLA windows judged, by window length and verdict.", None, COUNTER)?;
        for ((window, verdict), n) in &state.windows_judged {
            f.counter(vec![("window", window.into()), ("verdict", (*verdict).into())], *n as f64)?;
        }
        let mut f = family(e, &base, "headroom_validity", "1 for the current run's validity: pending while it runs, valid, client_bound (no verdict), none.", None, GAUGE)?;
        f.gauge(vec![("verdict", state.validity().into())], 1.0)?;
        let mut f = family(e, &base, "headroom_intervals", "Intervals collected.", None, COUNTER)?;
        f.counter(vec![], state.intervals as f64)?;
        let mut f = family(e, &base, "headroom_phase", "1 for where the process is: starting, populate, warmup, measure, between (a search's runs), ended.", None, GAUGE)?;
        for stage in Stage::ALL {
            f.gauge(vec![("phase", stage.name().into())], f64::from(u8::from(stage == state.stage)))?;
        }

        if state.search {
            let run = state.run();
            let mut f = family(e, &base, "headroom_trial_rate_requests_per_second", "A search's current trial (or probe): its attempted rate.", None, GAUGE)?;
            if let Some(rate) = run.and_then(|r| r.rate_per_s) {
                f.gauge(vec![], rate)?;
            }
            let mut f = family(e, &base, "headroom_trial_repeat", "A search's current trial: its repeat at this rate, from 1.", None, GAUGE)?;
            if let Some(repeat) = run.and_then(|r| r.repeat) {
                f.gauge(vec![], f64::from(repeat))?;
            }
            let mut f = family(e, &base, "headroom_capacity_bracket_requests_per_second", "A search's bracket so far: the highest rate that passed with every lower one (low), the lowest that failed (high).", None, GAUGE)?;
            if let Some((low, high)) = state.outcome.as_ref().map(super::ladder::bracket) {
                if let Some(low) = low {
                    f.gauge(vec![("bound", "low".into())], low)?;
                }
                if let Some(high) = high {
                    f.gauge(vec![("bound", "high".into())], high)?;
                }
            }
        }
        Ok(())
    }
}
