//! The page's prose: the sentences that say what a run, a search or a sweep did, and the
//! headline cards of the page's header (a search's capacity, a run's verdict).

use std::fmt::Write as _;

use super::page::escape;
use crate::capacity::table::format_rate;
use crate::report::charts::{self, format_number};
use crate::report::load::{RunData, SearchData, SweepData};

/// "80% writes, 20% reads" from a workload configuration.
fn mix(workload: &serde_json::Value) -> Option<String> {
    let reads = workload.get("read_ratio")?.as_f64()?;
    let deletes = workload
        .get("delete_ratio")
        .and_then(|d| d.as_f64())
        .unwrap_or(0.0);
    let writes = (1.0 - reads - deletes).max(0.0);
    let mut parts = Vec::new();
    for (share, what) in [(writes, "writes"), (reads, "reads"), (deletes, "deletes")] {
        if share > 0.0 {
            parts.push(format!("{}% {what}", format_number(share * 100.0)));
        }
    }
    Some(parts.join(", "))
}

/// One sentence on what a run configuration sends where.
fn workload_sentence(config: &serde_json::Value) -> String {
    let workload = config.get("workload");
    let name = workload
        .and_then(|w| w.get("name"))
        .and_then(|n| n.as_str())
        .unwrap_or("an unknown workload");
    let mut text = format!("The {name} workload");
    if let Some(mix) = workload.and_then(mix) {
        let _ = write!(text, " ({mix})");
    }
    if let Some(consistency) = workload
        .and_then(|w| w.get("consistency"))
        .and_then(|c| c.as_str())
    {
        let _ = write!(text, " at consistency {consistency}");
    }
    if let Some(hosts) = config.get("hosts").and_then(|h| h.as_array()) {
        let hosts: Vec<&str> = hosts.iter().filter_map(|h| h.as_str()).collect();
        let _ = write!(text, " against {}", hosts.join(", "));
    }
    text
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
    let config = &search.summary.config;
    let mut text = config
        .get("run")
        .map(workload_sentence)
        .unwrap_or_else(|| "A workload".to_string());
    if search.sla.is_some() {
        let _ = write!(
            text,
            ": a capacity search under the SLA {}",
            charts::sla_words(&search.sla)
        );
    }
    let number = |key: &str| config.get(key).and_then(|v| v.as_f64());
    if let (Some(duration), Some(warmup)) = (number("duration_s"), number("warmup_s")) {
        let _ = write!(
            text,
            ", trials of {} s after {} s of warmup",
            format_number(duration),
            format_number(warmup)
        );
    }
    let _ = write!(text, ", {} repeat(s) per rate", search.repeats());
    if let Some(rates) = config.get("rates").and_then(|r| r.as_str()) {
        let _ = write!(text, ", rates {rates}");
    }
    text.push('.');
    text
}

/// What a sweep did, in a sentence.
pub(super) fn sweep_sentence(sweep: &SweepData) -> String {
    let settings = &serde_json::to_value(&sweep.file.settings).unwrap_or_default();
    let mut text = settings
        .get("run")
        .map(workload_sentence)
        .unwrap_or_else(|| format!("The {} workload", sweep.file.workload));
    let _ = write!(
        text,
        ": a concurrency sweep (closed loop: latency is service time, which under-counts \
         stalls) of {} steps",
        sweep.file.steps.len()
    );
    let number = |key: &str| settings.get(key).and_then(|v| v.as_f64());
    match (number("step_duration_s"), number("stable_error")) {
        (Some(d), _) => {
            let _ = write!(text, " of {} s each", format_number(d));
        }
        (None, Some(e)) => {
            let _ = write!(
                text,
                ", each until its throughput was stable to ±{}%",
                format_number(e * 100.0)
            );
        }
        _ => {}
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
    let sla = charts::sla_words(&search.sla);
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
        Some(sla) if sla.verdict.windows == 0 => (
            "FAIL".to_string(),
            "fail",
            format!("{}: no complete window to judge {}", run.label, sla.spec),
        ),
        Some(sla) => (
            "FAIL".to_string(),
            "fail",
            format!(
                "{}: {} failed in {} of {} windows",
                run.label,
                sla.spec,
                sla.verdict.failing.len(),
                sla.verdict.windows
            ),
        ),
        None if run.summary.is_none() => (
            "no summary".to_string(),
            "",
            format!(
                "{}: summary.json {}, so the run's verdict is unknown; what it recorded is shown",
                run.label,
                if run.dir.join("summary.json").exists() {
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
