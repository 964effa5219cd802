//! The tables of a run: its summary per operation type, whether the client limited it,
//! its SLA's worst windows, its errors by class (also over a search's trials), and its
//! settings with its command line.

use std::fmt::Write as _;

use super::page::{escape, table, Page};
use crate::format::{self, format_number, format_rate};
use crate::results::run_dir::RunData;
use crate::results::summary::{Latency, RunSummary};
use crate::sla::Value;

/// Per operation type: requests, errors, rate, and the latency percentiles of response,
/// service and wait time.
pub(super) fn summary_table(page: &mut Page, s: &RunSummary) {
    let header = [
        "Operation",
        "Latency",
        "Requests",
        "Errors",
        "Rate/s",
        "mean ms",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "p99.9 ms",
        "p99.99 ms",
        "max ms",
    ];
    let latency = |l: &Latency| {
        [
            l.mean_ms, l.p50_ms, l.p95_ms, l.p99_ms, l.p999_ms, l.p9999_ms, l.max_ms,
        ]
        .map(format_number)
        .to_vec()
    };
    let mut rows = Vec::new();
    for op in &s.ops {
        let errors: u64 = op.errors.values().sum();
        let mut cells = vec![
            op.op.clone(),
            "response time".to_string(),
            format::group_thousands(op.requests),
            format::group_thousands(errors),
            format_rate(op.rate_per_s),
        ];
        cells.extend(latency(&op.response_time));
        rows.push((cells, ""));
        for (what, l) in [
            ("service time", &op.service_time),
            ("wait in client", &op.wait_time),
        ] {
            let mut cells = vec![
                String::new(),
                what.to_string(),
                String::new(),
                String::new(),
                String::new(),
            ];
            cells.extend(latency(l));
            rows.push((cells, "sub"));
        }
    }
    let numeric = [
        false, false, true, true, true, true, true, true, true, true, true, true,
    ];
    page.body.push_str(&table(&header, &rows, &numeric));
    let c = &s.client;
    let failed = if s.failed_rate_per_s > 0.0 {
        format!(
            " Successful answers came at {}/s, failed requests at {}/s (failures carry no \
             load, so the achieved rate counts successes only).",
            format_rate(s.achieved_rate_per_s),
            format_rate(s.failed_rate_per_s)
        )
    } else {
        String::new()
    };
    let unsent = if s.unsent_requests > 0.0 {
        format!(
            " {} requests of the schedule were never sent: the client was still behind it a \
             second after its end.",
            if s.unsent_requests < 1e9 {
                format::group_thousands(s.unsent_requests as u64)
            } else {
                format!("{:.3e}", s.unsent_requests)
            }
        )
    } else {
        String::new()
    };
    page.para(&format!(
        "Latency is {}.{failed}{unsent} The client used {} s of CPU ({} µs per request) and at \
         most {} MiB of memory; its largest hiccup was {} ms (p99.9 {} ms). The largest backlog \
         in the client was {} requests. The run ended: {}.",
        s.latency_kind,
        format_number(c.cpu_s),
        format_number(c.cpu_us_per_request),
        c.peak_rss_bytes >> 20,
        format_number(c.hiccup_max_ms),
        format_number(c.hiccup_p999_ms),
        s.max_backlog,
        serde_json::to_value(s.stop)
            .ok()
            .and_then(|v| v.as_str().map(|t| t.replace('_', " ")))
            .unwrap_or_default()
    ));
}

/// Whether the client limited the run: a sentence when valid, the reasons and what to do when
/// not.
pub(super) fn validity_part(page: &mut Page, s: &RunSummary) {
    let Some(v) = &s.validity else { return };
    let f = &v.figures;
    if v.is_valid() {
        page.para(&format!(
            "Measurement: valid. The client kept its schedule: {} of {} measured requests left \
             more than {} ms late by its own doing (wait before the send p99 {} ms); {} waited \
             for a free in-flight slot, which is the server's doing.",
            format::group_thousands(f.late_sends),
            format::group_thousands(f.measured_requests),
            format_number(f.lag_limit_ms),
            format_number(f.wait_p99_ms),
            format::group_thousands(f.limit_waits)
        ));
        return;
    }
    page.h3("Measurement: INVALID (client-bound)");
    let mut text = String::from(
        "<p class=\"fail\">The client, not the server, limited this run, so it has no verdict:</p><ul>",
    );
    for reason in &v.reasons {
        let _ = write!(text, "<li>{}</li>", escape(reason));
    }
    text.push_str("</ul>");
    page.body.push_str(&text);
    if let Some(advice) = &v.advice {
        page.para(&format!("What to do: {advice}."));
    }
}

/// A merged run's workers: what each was asked and achieved, and how late it sent, so that
/// a slow worker shows.
pub(super) fn workers_part(page: &mut Page, s: &RunSummary) {
    if s.workers.is_empty() {
        return;
    }
    page.h3(&format!("Workers ({})", s.workers.len()));
    page.para(
        "The run was sent by a fleet of client processes, each its share of one schedule, \
         and merged by adding their histograms interval by interval. A worker that could not \
         keep its schedule makes the whole run client-bound.",
    );
    let header = [
        "Worker",
        "Attempted/s",
        "Achieved/s",
        "Failed/s",
        "Send lag p99 ms",
        "Send lag max ms",
        "CPU µs/request",
        "Kept its schedule",
    ];
    let rows: Vec<(Vec<String>, &str)> = s
        .workers
        .iter()
        .map(|w| {
            let kept = match w.stop {
                crate::engine::StopReason::Completed if w.valid => "yes".to_string(),
                crate::engine::StopReason::Completed => "no".to_string(),
                stop => format!("stopped: {stop:?}"),
            };
            let class = if w.valid { "" } else { "fail" };
            (
                vec![
                    w.index.to_string(),
                    if w.attempted_rate_per_s > 0.0 {
                        format_rate(w.attempted_rate_per_s)
                    } else {
                        "—".to_string()
                    },
                    format_rate(w.achieved_rate_per_s),
                    format_rate(w.failed_rate_per_s),
                    format_number(w.send_lag_p99_ms),
                    format_number(w.send_lag_max_ms),
                    format_number(w.cpu_us_per_request),
                    kept,
                ],
                class,
            )
        })
        .collect();
    let numeric = [true, true, true, true, true, true, true, false];
    page.body.push_str(&table(&header, &rows, &numeric));
}

/// Each SLA term's worst window.
pub(super) fn sla_table(page: &mut Page, s: &RunSummary) {
    let Some(sla) = &s.sla else { return };
    let v = &sla.verdict;
    let header = [
        "Term",
        "Worst window",
        "In window",
        "Windows failed",
        "Judged on max",
    ];
    let rows: Vec<(Vec<String>, &str)> = v
        .worst
        .iter()
        .map(|w| {
            let mut value = match w.value {
                Some(Value::LatencyNs(ns)) => format!("{} ms", format_number(ns as f64 / 1e6)),
                Some(Value::Fraction(f)) => format!("{}%", format_number(f * 100.0)),
                Some(recall @ Value::Recall(_)) if w.requests != Some(0) => recall.to_string(),
                Some(Value::Recall(_)) => "no recall recorded".to_string(),
                None => "-".to_string(),
            };
            if matches!(w.value, Some(Value::LatencyNs(_))) && w.failed_share > 0.0 {
                value = if w.failed_share >= 1.0 {
                    "every request failed".to_string()
                } else {
                    format!("{value}, {}% failed", format_number(w.failed_share * 100.0))
                };
            }
            let value = if w.failing_windows > 0 {
                format!("{value} ✗")
            } else {
                value
            };
            (
                vec![
                    w.term.clone(),
                    value,
                    w.window_index
                        .map_or("-".to_string(), |i| (i + 1).to_string()),
                    format!("{} of {}", w.failing_windows, v.windows_of(w)),
                    w.judged_on_max_windows.to_string(),
                ],
                if w.failing_windows > 0 { "fail" } else { "" },
            )
        })
        .collect();
    page.body
        .push_str(&table(&header, &rows, &[false, true, true, true, true]));
    let own: Vec<String> = v
        .worst
        .iter()
        .filter_map(|w| {
            let ms = w.window_ms?;
            Some(format!(
                "{} over its own {} s windows, {} judged",
                w.term,
                format_number(ms as f64 / 1e3),
                v.windows_of(w)
            ))
        })
        .collect();
    let own = if own.is_empty() {
        String::new()
    } else {
        format!(
            " Terms with a window of their own are judged over tumbling windows of that \
             length, on the same histograms: {}.",
            own.join("; ")
        )
    };
    page.para(&format!(
        "Windows of {} s after the warmup, {} judged.{own} A failed request counts as slower than any \
         threshold: a latency term's value is that of the answered requests, with the failed \
         share beside it. \"Judged on max\" counts windows with too few requests to resolve the \
         percentile, judged on their largest value instead.",
        format_number(sla.window_s),
        v.windows
    ));
}

/// Failed requests by class, with the first message of each, over `runs` (labelled by run
/// when `by_run`).
pub(super) fn errors_table(page: &mut Page, runs: &[&RunData], by_run: bool) {
    let mut rows: Vec<(Vec<String>, &str)> = Vec::new();
    let mut total = 0;
    // Runs whose failures are not known: no summary.json could be read.
    let mut unknown = Vec::new();
    for run in runs {
        let Some(summary) = &run.summary else {
            unknown.push(run.label.as_str());
            continue;
        };
        for op in &summary.ops {
            for (class, count) in &op.errors {
                total += count;
                let share = if op.requests > 0 {
                    format!(
                        "{}%",
                        format_number(*count as f64 * 100.0 / op.requests as f64)
                    )
                } else {
                    "-".to_string()
                };
                let mut cells = Vec::new();
                if by_run {
                    cells.push(run.label.clone());
                }
                cells.extend([
                    op.op.clone(),
                    class.clone(),
                    format::group_thousands(*count),
                    share,
                    op.error_examples.get(class).cloned().unwrap_or_default(),
                ]);
                rows.push((cells, ""));
            }
        }
    }
    page.h3("Errors by class");
    if !unknown.is_empty() {
        page.para(&format!(
            "Failed requests are not known for {}: no summary.json could be read.",
            unknown.join(", ")
        ));
    }
    if total == 0 {
        if unknown.len() < runs.len() {
            page.para(if unknown.is_empty() {
                "No request failed in the measured part."
            } else {
                "No request failed in the measured part of the others."
            });
        }
        return;
    }
    let mut header = Vec::new();
    let mut numeric = Vec::new();
    if by_run {
        header.push("Trial");
        numeric.push(false);
    }
    header.extend(["Operation", "Class", "Failed", "Share", "Example message"]);
    numeric.extend([false, false, true, true, false]);
    page.body.push_str(&table(&header, &rows, &numeric));
}

/// A configuration file as a grid of settings (nested keys joined with dots), leaving out
/// `skip`, and its command line as code.
pub(super) fn settings_table(page: &mut Page, config: &serde_json::Value, skip: &[&str]) {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut command: Option<String> = None;
    flatten(config, "", &mut rows, &mut command);
    page.body.push_str("<dl class=\"settings\">\n");
    for (key, value) in rows.iter().filter(|(k, _)| !skip.contains(&k.as_str())) {
        let _ = writeln!(
            page.body,
            "<dt>{}</dt><dd>{}</dd>",
            escape(key),
            escape(value)
        );
    }
    page.body.push_str("</dl>\n");
    if let Some(command) = command {
        let _ = writeln!(
            page.body,
            "<p>Command line:</p>\n<pre><code>{}</code></pre>",
            escape(&command)
        );
    }
}

fn flatten(
    value: &serde_json::Value,
    prefix: &str,
    rows: &mut Vec<(String, String)>,
    command: &mut Option<String>,
) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                if key == "command_line" {
                    if let Some(args) = v.as_array() {
                        let args: Vec<&str> = args.iter().filter_map(|a| a.as_str()).collect();
                        command.get_or_insert_with(|| shell_words(&args));
                    }
                    continue;
                }
                flatten(v, &path, rows, command);
            }
        }
        other => {
            let text = match other {
                serde_json::Value::Null => "-".to_string(),
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(", "),
                v => v.to_string(),
            };
            rows.push((prefix.to_string(), text));
        }
    }
}

/// A command line as a shell would take it back: arguments with spaces or quotes quoted.
fn shell_words(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,%@+".contains(c))
            {
                a.to_string()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
