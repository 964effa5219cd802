//! The merged run's summary from its workers': requests, errors by class, rates and client
//! cost summed, each worker's own figures beside them, the validity judged for the fleet;
//! and the populate's summary, when the workers populated.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

use anyhow::Context;
use hdrhistogram::Histogram;

use crate::engine::{LoadMode, StopReason};
use crate::metrics::{OpHistograms, Phase};
use crate::results::hlog::encoded_intervals;
use crate::results::summary::{
    ClientCost, Latency, OpSummary, PopulateSummary, RunSummary, SlaSummary, WorkerFigures,
};
use crate::run::policy::run_threads;
use crate::sla::{ClientFigures, Validity, ValidityVerdict};
use crate::stats::new_histogram;

use super::workers::fleet_mode;
use super::workers::Worker;

/// The workers' populates added: rows and errors summed, over the longest one's time; the
/// writes' histograms added from each worker's populate.hlog, and written as the merged
/// populate.hgrm and populate.service.hgrm.
pub(super) fn merge_populate(
    workers: &[Worker],
    out: &Path,
) -> anyhow::Result<Option<PopulateSummary>> {
    let populates: Vec<(&Worker, &PopulateSummary)> = workers
        .iter()
        .filter_map(|w| w.summary.populate.as_ref().map(|p| (w, p)))
        .collect();
    let Some((_, first)) = populates.first() else {
        return Ok(None);
    };
    let seconds = populates.iter().map(|(_, p)| p.seconds).fold(0.0, f64::max);
    let written: u64 = populates.iter().map(|(_, p)| p.written).sum();
    let mut merged = PopulateSummary {
        rows: populates.iter().map(|(_, p)| p.rows).sum(),
        written,
        errors: populates.iter().map(|(_, p)| p.errors).sum(),
        seconds,
        rate_per_s: written as f64 / seconds.max(1e-9),
        writes: None,
    };
    // Summaries written before the writes were measured have none to add.
    let Some(op) = first.writes.as_ref().map(|w| w.op.clone()) else {
        return Ok(Some(merged));
    };
    if populates.iter().any(|(_, p)| p.writes.is_none()) {
        return Ok(Some(merged));
    }
    let mut histograms = [new_histogram(), new_histogram(), new_histogram()];
    let tags = ["rt", "st", "wt"].map(|t| format!("{op}.{t}"));
    let mut writes = OpSummary::of(&op, &OpHistograms::default(), seconds);
    let mut notes = Vec::new();
    for (worker, populate) in &populates {
        let path = worker.dir.join(crate::catalogue::POPULATE_HLOG);
        let bytes = crate::usage::read_bounded(&path, crate::usage::MAX_DATA_FILE_BYTES)
            .with_context(|| format!("reading {}", path.display()))?;
        let label = path.display().to_string();
        crate::results::hlog::for_each_interval(
            &bytes,
            &label,
            &mut notes,
            |tag| tags.iter().any(|t| t == tag),
            |interval| {
                let i = tags.iter().position(|t| t == interval.tag).expect("kept");
                histograms[i]
                    .add(&interval.histogram)
                    .expect("auto-resizing histograms always add");
            },
        );
        let w = populate.writes.as_ref().expect("checked above");
        writes.requests += w.requests;
        writes.ok += w.ok;
        for (class, n) in &w.errors {
            *writes.errors.entry(class.clone()).or_default() += n;
        }
        for (class, example) in &w.error_examples {
            writes
                .error_examples
                .entry(class.clone())
                .or_insert_with(|| example.clone());
        }
    }
    if let Some(note) = notes.first() {
        anyhow::bail!("{note}");
    }
    let [response, service, wait] = &histograms;
    writes.rate_per_s = writes.requests as f64 / seconds.max(1e-9);
    writes.response_time = Latency::of(response);
    writes.service_time = Latency::of(service);
    writes.wait_time = Latency::of(wait);
    if writes.ok > 0 {
        for (name, histogram) in [
            crate::catalogue::POPULATE_HGRM,
            crate::catalogue::POPULATE_SERVICE_HGRM,
        ]
        .iter()
        .zip([response, service])
        {
            crate::results::hgrm::write_file(&out.join(name), histogram)?;
        }
    }
    merged.writes = Some(writes);
    Ok(Some(merged))
}

/// summary.json of the merged run.
#[allow(clippy::too_many_arguments)]
pub(super) fn summarize(
    workers: &[Worker],
    op_names: &[String],
    totals: &[[OpHistograms; 2]],
    hiccups: &Histogram<u64>,
    max_backlog: u64,
    client_decided: u64,
    verdict: Option<(crate::sla::Sla, crate::sla::RunVerdict)>,
    t0: SystemTime,
) -> RunSummary {
    let first = &workers[0].summary;
    let measured_s = workers
        .iter()
        .map(|w| w.summary.measured_s)
        .fold(0.0, f64::max)
        .max(1e-9);
    let rate_sum = |rate: fn(&RunSummary) -> f64| {
        workers
            .iter()
            .map(|w| rate(&w.summary) * w.summary.measured_s)
            .sum::<f64>()
            / measured_s
    };
    let phase = |p: Phase, seconds: f64| -> Vec<OpSummary> {
        op_names
            .iter()
            .enumerate()
            .filter_map(|(i, name)| {
                let of_workers = workers.iter().filter_map(|w| {
                    let list = if p == Phase::Measure {
                        &w.summary.ops
                    } else {
                        &w.summary.warmup
                    };
                    list.iter().find(|o| o.op == *name)
                });
                let mut ok = 0;
                let mut errors: BTreeMap<String, u64> = BTreeMap::new();
                let mut examples: BTreeMap<String, String> = BTreeMap::new();
                for op in of_workers {
                    ok += op.ok;
                    for (class, n) in &op.errors {
                        *errors.entry(class.clone()).or_insert(0) += n;
                    }
                    for (class, example) in &op.error_examples {
                        examples
                            .entry(class.clone())
                            .or_insert_with(|| example.clone());
                    }
                }
                let requests = ok + errors.values().sum::<u64>();
                if requests == 0 {
                    return None;
                }
                let mut summary = OpSummary::of(name, &totals[i][p.index()], seconds);
                summary.requests = requests;
                summary.ok = ok;
                summary.errors = errors;
                summary.error_examples = examples;
                summary.rate_per_s = if seconds > 0.0 {
                    requests as f64 / seconds
                } else {
                    0.0
                };
                Some(summary)
            })
            .collect()
    };
    let ops = phase(Phase::Measure, measured_s);
    let sent: f64 = workers
        .iter()
        .map(|w| {
            let c = &w.summary.client;
            if c.cpu_us_per_request > 0.0 {
                c.cpu_s * 1e6 / c.cpu_us_per_request
            } else {
                0.0
            }
        })
        .sum();
    let cpu_s: f64 = workers.iter().map(|w| w.summary.client.cpu_s).sum();
    let hiccup = Latency::of(hiccups);
    let validity = validity(workers, totals, &hiccup, max_backlog, client_decided, cpu_s);
    let stop = workers
        .iter()
        .map(|w| w.summary.stop)
        .find(|s| *s != StopReason::Completed)
        .unwrap_or(StopReason::Completed);
    RunSummary {
        headroom_version: first.headroom_version.clone(),
        workload: first.workload.clone(),
        mode: fleet_mode(workers[0].settings.mode, workers.len()),
        latency_kind: first.latency_kind.clone(),
        stop,
        started_at: humantime::format_rfc3339_millis(t0).to_string(),
        warmup_s: first.warmup_s,
        measured_s,
        // The fleet attempted the whole schedule.
        attempted_rate_per_s: workers[0].settings.whole_rate(),
        achieved_rate_per_s: rate_sum(|s| s.achieved_rate_per_s),
        failed_rate_per_s: rate_sum(|s| s.failed_rate_per_s),
        max_backlog,
        unsent_requests: workers.iter().map(|w| w.summary.unsent_requests).sum(),
        validity: Some(validity),
        ops,
        warmup: phase(Phase::Warmup, first.warmup_s),
        // Added by `merge_populate`, which reads the workers' populate.hlog.
        populate: None,
        client: ClientCost {
            cpu_s,
            cpu_us_per_request: if sent > 0.0 { cpu_s * 1e6 / sent } else { 0.0 },
            peak_rss_bytes: workers
                .iter()
                .map(|w| w.summary.client.peak_rss_bytes)
                .max()
                .unwrap_or(0),
            hiccup_max_ms: hiccup.max_ms,
            hiccup_p999_ms: hiccup.p999_ms,
        },
        sla: verdict.map(|(sla, verdict)| SlaSummary {
            spec: sla.to_string(),
            window_s: sla.window.as_secs_f64(),
            verdict,
        }),
        workers: workers.iter().map(worker_figures).collect(),
        validation: None,
    }
}

/// One worker's own figures: its rates, its send lag (from its `.wt` tags), its cost.
fn worker_figures(worker: &Worker) -> WorkerFigures {
    let mut lag = new_histogram();
    let mut notes = Vec::new();
    for entry in encoded_intervals(&worker.hlog, crate::catalogue::HISTOGRAMS_HLOG, &mut notes) {
        if entry.tag.ends_with(".wt") && !entry.tag.starts_with("warmup.") {
            if let Some(h) = entry.decode() {
                lag.add(&h).expect("auto-resizing histograms always add");
            }
        }
    }
    let lag = Latency::of(&lag);
    let s = &worker.summary;
    WorkerFigures {
        index: worker.slot.index,
        dir: worker.dir.display().to_string(),
        attempted_rate_per_s: s.attempted_rate_per_s.unwrap_or(0.0),
        achieved_rate_per_s: s.achieved_rate_per_s,
        failed_rate_per_s: s.failed_rate_per_s,
        send_lag_p99_ms: lag.p99_ms,
        send_lag_max_ms: lag.max_ms,
        cpu_us_per_request: s.client.cpu_us_per_request,
        valid: s.is_valid(),
        stop: s.stop,
    }
}

/// The merged run's validity: decided again on the fleet's figures (summed counts, merged
/// waits, the windows judged on the merged histograms); client-bound, too, when any worker
/// was, naming it.
#[allow(clippy::too_many_arguments)]
fn validity(
    workers: &[Worker],
    totals: &[[OpHistograms; 2]],
    hiccup: &Latency,
    max_backlog: u64,
    client_decided: u64,
    cpu_s: f64,
) -> Validity {
    let figures: Vec<&ClientFigures> = workers
        .iter()
        .filter_map(|w| w.summary.validity.as_ref().map(|v| &v.figures))
        .collect();
    let mut wait = new_histogram();
    for stats in totals {
        wait.add(&stats[Phase::Measure.index()].wait_ns)
            .expect("auto-resizing histograms always add");
    }
    let wait = Latency::of(&wait);
    let threads: usize = workers.iter().map(|w| run_threads(&w.settings)).sum();
    let wall_s = workers
        .iter()
        .map(|w| w.summary.warmup_s + w.summary.measured_s)
        .fold(0.0, f64::max)
        .max(1e-9);
    let merged = ClientFigures {
        threads,
        cpu_share_of_threads: cpu_s / (wall_s * threads.max(1) as f64),
        wait_p99_ms: wait.p99_ms,
        wait_p999_ms: wait.p999_ms,
        wait_max_ms: wait.max_ms,
        lag_limit_ms: figures.first().map_or(0.0, |f| f.lag_limit_ms),
        hiccup_p999_ms: hiccup.p999_ms,
        hiccup_max_ms: hiccup.max_ms,
        max_backlog,
        unsent: figures.iter().map(|f| f.unsent).sum(),
        unsent_held: figures.iter().any(|f| f.unsent_held),
        limit_waits: figures.iter().map(|f| f.limit_waits).sum(),
        late_sends: figures.iter().map(|f| f.late_sends).sum(),
        measured_requests: figures.iter().map(|f| f.measured_requests).sum(),
        client_decided_windows: client_decided,
        // A worker's overflow, or a merged backlog that saturated: summed from workers whose
        // own backlogs did (summaries from before the overflow was noted carry no mark).
        overflowed: figures.iter().any(|f| f.overflowed) || max_backlog == u64::MAX,
    };
    let open = matches!(workers[0].settings.mode, LoadMode::Open { .. });
    let mut validity = Validity::decide(merged, open);
    let bound: Vec<String> = workers
        .iter()
        .filter_map(|w| {
            let v = w.summary.validity.as_ref()?;
            (!v.is_valid()).then(|| {
                let why: Vec<&str> = v
                    .reasons
                    .iter()
                    .filter(|r| !r.starts_with("figures:"))
                    .map(String::as_str)
                    .collect();
                format!(
                    "worker {} could not keep its schedule: {}",
                    w.slot.index,
                    why.join("; ")
                )
            })
        })
        .collect();
    if !bound.is_empty() {
        if validity.is_valid() {
            validity.advice = Some(
                "give that worker more --threads (and cores), a machine of its own, or add \
                 workers; the server was not the limit, so this run says nothing about it"
                    .to_string(),
            );
        }
        validity.verdict = ValidityVerdict::ClientBound;
        let mut reasons = bound;
        reasons.append(&mut validity.reasons);
        validity.reasons = reasons;
    }
    validity
}
