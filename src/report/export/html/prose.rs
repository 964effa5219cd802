//! The page's prose: the sentences that say what a run, a search or a sweep did, and the
//! headline cards of the page's header (a search's capacity, a run's verdict).

use std::fmt::Write as _;

use super::page::escape;
use crate::capacity::dir::SearchData;
use crate::format::format_number;
use crate::format::format_rate;
use crate::report::charts;
use crate::results::config::RunSettings;
use crate::results::run_dir::RunData;
use crate::sla::Judgement;
use crate::sweep::dir::SweepData;
use crate::workload::WorkloadConfig;

/// "80% writes, 20% reads" from a workload configuration.
fn mix(workload: &WorkloadConfig) -> String {
    let (reads, deletes) = (workload.read_ratio, workload.delete_ratio);
    let writes = (1.0 - reads - deletes).max(0.0);
    let mut parts = Vec::new();
    for (share, what) in [(writes, "writes"), (reads, "reads"), (deletes, "deletes")] {
        if share > 0.0 {
            parts.push(format!("{}% {what}", format_number(share * 100.0)));
        }
    }
    parts.join(", ")
}

/// One sentence on what a run configuration sends where.
fn workload_sentence<M>(config: &RunSettings<M>) -> String {
    let workload = &config.workload;
    format!(
        "The {} workload ({}) at consistency {} against {}",
        workload.name,
        mix(workload),
        workload.consistency,
        config.hosts.join(", ")
    )
}

/// What a run did, in a sentence.
pub(super) fn run_sentence(run: &RunData) -> String {
    let mut text = run
        .config
        .as_ref()
        .map(workload_sentence)
        .unwrap_or_else(|| format!("The {} workload", run.workload().unwrap_or_default()));
    match (run.attempted_rate(), run.concurrency()) {
        (Some(rate), _) => {
            let _ = write!(
                text,
                ", at a fixed rate of {}/s (open loop: latency is response time, from each \
                 request's intended start)",
                format_rate(rate)
            );
        }
        (None, Some(c)) => {
            let _ = write!(
                text,
                ", with {c} requests in flight (closed loop: latency is service time, which \
                 under-counts stalls)"
            );
        }
        _ => {}
    }
    if let Some(s) = &run.summary {
        let _ = write!(
            text,
            "; {} s of warmup, then {} s measured, from {}",
            format_number(s.warmup_s),
            format_number(s.measured_s),
            s.started_at
        );
    }
    text.push('.');
    text
}

/// What a search did, in a sentence.
pub(super) fn search_sentence(search: &SearchData) -> String {
    let Some(settings) = &search.settings else {
        return format!(
            "A capacity search, {} repeat(s) per rate.",
            search.repeats()
        );
    };
    let down = settings.degraded.as_ref().map_or(String::new(), |d| {
        format!(
            " Every probe and trial ran {}: it was stopped before the warmup and started \
             again after the run, its hints delivered before the next.",
            d.describe()
        )
    });
    let goal = match &settings.interval {
        Some(goal) => format!(
            "bounds at {}% confidence on the highest rate at which at most {}% of the windows \
             fail (short trials far from it, full ones near it)",
            format_number(goal.confidence * 100.0),
            format_number(goal.exceed_ratio * 100.0)
        ),
        None => format!("{} repeat(s) per rate", settings.repeats),
    };
    format!(
        "{}: a capacity search under the SLA {}, trials of {} s after {} s of warmup, {goal}, \
         rates {}.{down}",
        workload_sentence(&settings.run),
        charts::sla_words(&settings.sla),
        format_number(settings.duration_s),
        format_number(settings.warmup_s),
        settings.rates.text()
    )
}

/// What a sweep did, in a sentence.
pub(super) fn sweep_sentence(sweep: &SweepData) -> String {
    let settings = &sweep.file.settings;
    let mut text = workload_sentence(&settings.run);
    let _ = write!(
        text,
        ": a concurrency sweep (closed loop: latency is service time, which under-counts \
         stalls) of {} steps",
        sweep.file.steps.len()
    );
    match settings.step_duration_s {
        Some(d) => {
            let _ = write!(text, " of {} s each", format_number(d));
        }
        None => {
            let _ = write!(
                text,
                ", each until its throughput was stable to ±{}%",
                format_number(settings.stable_error * 100.0)
            );
        }
    }
    if let Some(stop) = &sweep.file.stop {
        let _ = write!(text, "; it stopped because {}", stop.describe());
    } else {
        text.push_str("; it had not finished when these files were read");
    }
    text.push('.');
    text
}

/// The headline card of a search: its capacity.
pub(super) fn search_card(search: &SearchData) -> String {
    let outcome = &search.summary.outcome;
    let (big, class) = match outcome.capacity_per_s {
        Some(c) => (format!("{}/s", format_rate(c)), "pass"),
        None if outcome.invalid.is_some() => ("none: client-bound".to_string(), "fail"),
        None if outcome.rows.is_empty() => ("not known yet".to_string(), ""),
        None => ("none".to_string(), "fail"),
    };
    let sla = search
        .sla
        .as_ref()
        .map(charts::sla_words)
        .unwrap_or_default();
    let mut sub = Vec::new();
    if outcome.highest_achieved_per_s > 0.0 {
        sub.push(format!(
            "highest achieved throughput {}/s",
            format_rate(outcome.highest_achieved_per_s)
        ));
    }
    if !outcome.unstable.is_empty() {
        let rates: Vec<String> = outcome
            .unstable
            .iter()
            .map(|r| format!("{}/s", format_rate(*r)))
            .collect();
        sub.push(format!("unstable at {}", rates.join(", ")));
    }
    if let Some(invalid) = &outcome.invalid {
        sub.push(format!(
            "stopped at {}/s: the client, not the server, limited that trial",
            format_rate(invalid.rate_per_s)
        ));
    }
    // --validate: a defect marks the search whatever its capacity.
    let class = match &outcome.data {
        Some(data) => {
            sub.push(format!("the data: {}", data.describe()));
            if data.defects > 0 {
                "fail"
            } else {
                class
            }
        }
        None => class,
    };
    let status = serde_json::to_value(search.summary.status)
        .ok()
        .and_then(|s| s.as_str().map(str::to_string))
        .unwrap_or_default();
    if status != "complete" {
        sub.push(format!("search {status}"));
    }
    format!(
        "<div class=\"card {class}\"><div class=\"big\">{}</div><div class=\"what\">capacity of \
         {} under {}</div><div class=\"sub\">{}</div></div>",
        escape(&big),
        escape(&search.label),
        escape(&sla),
        escape(&sub.join(" · "))
    )
}

/// The headline card of a run: its SLA verdict, or its throughput.
pub(super) fn run_card(run: &RunData) -> String {
    let achieved = run.achieved_rate();
    let rate_line = match (achieved, run.attempted_rate()) {
        (Some(a), Some(t)) => format!(
            "achieved {}/s of {}/s attempted",
            format_rate(a),
            format_rate(t)
        ),
        (Some(a), None) => format!("achieved {}/s", format_rate(a)),
        _ => String::new(),
    };
    let sla = run.summary.as_ref().and_then(|s| s.sla.as_ref());
    let invalid = run
        .summary
        .as_ref()
        .and_then(|s| s.validity.as_ref())
        .filter(|v| !v.is_valid());
    let (big, class, what) = match sla {
        _ if invalid.is_some() => (
            "INVALID".to_string(),
            "fail",
            format!(
                "{}: client-bound — the client, not the server, limited this run: no verdict",
                run.label
            ),
        ),
        Some(sla) if sla.verdict.pass => (
            "PASS".to_string(),
            "pass",
            format!(
                "{}: every one of {} windows met {}",
                run.label, sla.verdict.windows, sla.spec
            ),
        ),
        Some(sla) if matches!(sla.verdict.judgement(), Judgement::NoVerdict(_)) => (
            "NO VERDICT".to_string(),
            "fail",
            format!(
                "{}: {} has no verdict: {}",
                run.label,
                sla.spec,
                match sla.verdict.judgement() {
                    Judgement::NoVerdict(why) => why,
                    _ => String::new(),
                }
            ),
        ),
        Some(sla) => (
            "FAIL".to_string(),
            "fail",
            format!(
                "{}: {} failed in {}",
                run.label,
                sla.spec,
                sla.verdict.failing_in_words()
            ),
        ),
        None if run.summary.is_none() => (
            "no summary".to_string(),
            "",
            format!(
                "{}: summary.json {}, so the run's verdict is unknown; what it recorded is shown",
                run.label,
                if run.dir.join(crate::catalogue::SUMMARY_JSON).exists() {
                    "could not be read"
                } else {
                    "is missing"
                }
            ),
        ),
        None => (
            achieved.map_or("-".to_string(), |a| format!("{}/s", format_rate(a))),
            "",
            format!("{}: throughput (no SLA was given)", run.label),
        ),
    };
    format!(
        "<div class=\"card {class}\"><div class=\"big\">{}</div><div class=\"what\">{}</div>\
         <div class=\"sub\">{}</div></div>",
        escape(&big),
        escape(&what),
        escape(&rate_line)
    )
}
