//! A run's summary once it has ended: totals per operation type and phase, the achieved
//! and failed rates, the client's own cost and validity, and the SLA's verdict
//! (summary.json); and each operation type's percentile distributions (`<op>.hgrm`).

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::catalogue::HGRM;
use crate::engine::{self, LoadMode, StopReason};
use crate::metrics::{self, Phase};
use crate::results::config::RunSettings;
use crate::results::hgrm;
use crate::results::summary::{
    ClientCost, Latency, OpSummary, PopulateSummary, RunSummary, SlaSummary,
};
use crate::sla::{ClientFigures, RunVerdict, Sla, Validity};

/// What the run's sink knew of the client, for its validity.
pub(crate) struct Client<'a> {
    /// Each op type's share: those with none are steps of compound requests, whose waits are
    /// their request's.
    pub(crate) op_weights: &'a [f64],
    /// Failing SLA windows the client's own wait decided.
    pub(crate) client_decided: u64,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn summarize(
    config: &RunSettings,
    op_names: &[String],
    outcome: &engine::Outcome,
    started_at: SystemTime,
    cpu: Duration,
    populate: Option<PopulateSummary>,
    sla: Option<(Sla, RunVerdict)>,
    client: Client,
) -> RunSummary {
    let warmup_s = config.warmup_s;
    // A completed open-loop run is measured over its scheduled period (see
    // `engine::MeasuredPeriod`); a closed loop or a run cut short, until its last answer.
    let period = outcome
        .measured_period
        .filter(|_| outcome.stop == StopReason::Completed);
    let measured_s = match period {
        Some(p) => p.seconds(),
        None => (outcome.elapsed_ns as f64 / 1e9 - warmup_s).max(1e-9),
    };
    let phase = |p: Phase, seconds: f64| -> Vec<OpSummary> {
        op_names
            .iter()
            .enumerate()
            .map(|(i, name)| OpSummary::of(name, &outcome.totals[i][p.index()], seconds))
            .filter(|s| s.requests > 0)
            .collect()
    };
    let ops = phase(Phase::Measure, measured_s);
    let measured_ok: u64 = ops.iter().map(|o| o.ok).sum();
    let measured_failed: u64 = ops.iter().map(|o| o.requests - o.ok).sum();
    let hiccups = Latency::of(&outcome.hiccups);
    let validity = validity(config, outcome, cpu, &hiccups, &client);
    RunSummary {
        headroom_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: config.workload.name.clone(),
        mode: config.mode,
        latency_kind: config.mode.latency_kind().to_string(),
        stop: outcome.stop,
        started_at: humantime::format_rfc3339_millis(started_at).to_string(),
        warmup_s,
        measured_s,
        // A fleet's worker attempted its share of the schedule.
        attempted_rate_per_s: config.process_rate(),
        achieved_rate_per_s: match period {
            Some(p) => p.achieved_per_s(),
            None => measured_ok as f64 / measured_s,
        },
        failed_rate_per_s: match period {
            Some(p) => p.failed_per_s(),
            None => measured_failed as f64 / measured_s,
        },
        max_backlog: outcome.max_backlog,
        unsent_requests: outcome.unsent,
        validity: Some(validity),
        ops,
        warmup: phase(Phase::Warmup, warmup_s),
        populate,
        client: ClientCost {
            cpu_s: cpu.as_secs_f64(),
            // Per request sent: unsent requests cost nothing.
            cpu_us_per_request: if outcome.sent > 0 {
                cpu.as_secs_f64() * 1e6 / outcome.sent as f64
            } else {
                0.0
            },
            peak_rss_bytes: metrics::process::peak_rss_bytes(),
            hiccup_max_ms: hiccups.max_ms,
            hiccup_p999_ms: hiccups.p999_ms,
        },
        sla: sla.map(|(sla, verdict)| SlaSummary {
            spec: sla.to_string(),
            window_s: sla.window.as_secs_f64(),
            verdict,
        }),
        workers: Vec::new(),
        validation: None,
    }
}

/// Whether the client limited the run: its figures over the measured part and the verdict
/// (see [`crate::sla::validity`]).
fn validity(
    config: &RunSettings,
    outcome: &engine::Outcome,
    cpu: Duration,
    hiccups: &Latency,
    client: &Client,
) -> Validity {
    let mut wait = crate::stats::new_histogram();
    let mut measured_requests = 0;
    for (stats, weight) in outcome.totals.iter().zip(client.op_weights) {
        if *weight > 0.0 {
            let measured = &stats[Phase::Measure.index()];
            let _ = wait.add(&measured.wait_ns);
            measured_requests += measured.total();
        }
    }
    let wait = Latency::of(&wait);
    let wall_s = (outcome.elapsed_ns as f64 / 1e9).max(1e-9);
    let figures = ClientFigures {
        threads: super::policy::run_threads(config),
        cpu_share_of_threads: cpu.as_secs_f64()
            / (wall_s * super::policy::run_threads(config) as f64),
        wait_p99_ms: wait.p99_ms,
        wait_p999_ms: wait.p999_ms,
        wait_max_ms: wait.max_ms,
        lag_limit_ms: crate::sla::validity::lag_limit(Duration::from_secs_f64(
            config.send_resolution_s,
        ))
        .as_secs_f64()
            * 1e3,
        hiccup_p999_ms: hiccups.p999_ms,
        hiccup_max_ms: hiccups.max_ms,
        max_backlog: outcome.max_backlog,
        unsent: outcome.unsent,
        unsent_held: outcome.unsent_held,
        limit_waits: outcome.limit_waits,
        late_sends: outcome.client_late,
        measured_requests,
        client_decided_windows: client.client_decided,
        overflowed: outcome.overflowed,
    };
    Validity::decide(figures, matches!(config.mode, LoadMode::Open { .. }))
}

/// Writes `<op>.hgrm` and `<op>.service.hgrm` for every op type with answers in its
/// measured part.
pub(crate) fn write_distributions(
    out: &Path,
    op_names: &[String],
    outcome: &engine::Outcome,
) -> anyhow::Result<()> {
    for (i, name) in op_names.iter().enumerate() {
        let stats = &outcome.totals[i][Phase::Measure.index()];
        if stats.ok > 0 {
            hgrm::write_file(&out.join(format!("{name}{HGRM}")), &stats.response_ns)?;
            hgrm::write_file(
                &out.join(format!("{name}.service{HGRM}")),
                &stats.service_ns,
            )?;
        }
    }
    Ok(())
}
