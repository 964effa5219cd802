//! The searches: the capacity section (chart 1 across configurations, the configurations
//! compared, each search's capacity table and chart 2), and each search's own section
//! of trials (spectra, timelines, pauses per rate, whole-run latencies, errors,
//! settings).

use std::fmt::Write as _;

use super::page::{escape, put_tables, table, Page};
use super::prose::search_sentence;
use super::run::pause_part;
use super::tables::{errors_table, settings_table};
use crate::capacity::dir::SearchData;
use crate::capacity::table;
use crate::compare::render as compare_render;
use crate::figures::Timeline;
use crate::format::{self, format_number, format_rate};
use crate::report::charts::{self, Chart};
use crate::report::compared::Compared;
use crate::report::load::Input;
use crate::results::run_dir::RunData;

/// The capacity section: chart 1 across configurations, the configurations compared,
/// then each search's table and chart 2.
pub(super) fn capacity_section(
    page: &mut Page,
    input: &Input,
    compared: &Compared,
) -> anyhow::Result<()> {
    let sla_charts = charts::sla_vs_rate(&input.searches, &input.runs);
    if !input.searches.is_empty() || !sla_charts.is_empty() {
        page.section("capacity", "Capacity");
        page.para(
            "The load-carrying capacity is the highest attempted rate at which every window of \
             every repeat met the SLA and the cluster achieved at least 99% of the rate, and \
             every lower rate passed too (a pass above a failure is unstable, not capacity).",
        );
        if input.searches.iter().any(|s| s.summary.interval.is_some()) {
            page.para(
                "A search with --goal interval states it otherwise: a lower and an upper bound, \
                 at a stated confidence, on the highest rate at which at most a stated share of \
                 the windows (the exceed ratio) fail, from every window of every trial; its \
                 capacity is the lower bound (docs/capacity.md).",
            );
        }
        for chart in sla_charts {
            page.figure(chart)?;
        }
        if input.searches.len() >= 2 {
            comparison_tables(page, compared);
        }
        let throughput_charts = charts::latency_vs_throughput(&input.searches, &[]);
        for search in &input.searches {
            page.h3(&format!("Configuration {}", search.label));
            page.para(&search_sentence(search));
            capacity_table(page, search);
            if let Some(chart) = charts::windows_vs_rate(search) {
                page.figure(chart)?;
            }
            if let Some(chart) = throughput_charts
                .iter()
                .find(|c| c.title.ends_with(&format!(": {}", search.label)))
            {
                page.figure(chart.clone())?;
            }
        }
    }
    Ok(())
}

/// The configurations compared (`headroom compare`'s tables): capacity and throughput
/// against the baseline, the worst window per rate, the change per rate and the cost.
fn comparison_tables(page: &mut Page, compared: &Compared) {
    let comparison = match &compared.searches {
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            page.note(&format!("The configurations could not be compared: {e}"));
            return;
        }
        None => return,
    };
    page.h3(&format!(
        "Configurations compared, against {}",
        comparison.baseline
    ));
    put_tables(page, &compare_render::tables(comparison), &comparison.notes);
    for chart in charts::capacity_vs_nodes(comparison) {
        if let Err(e) = page.figure(chart) {
            page.note(&format!(
                "The capacity-against-nodes chart could not be drawn: {e:#}"
            ));
        }
    }
}

/// The capacity table of a search, as the terminal prints it, and the lines under it.
fn capacity_table(page: &mut Page, search: &SearchData) {
    let terms: Vec<String> = search
        .sla
        .iter()
        .flat_map(|sla| sla.terms.iter().map(|t| t.name()))
        .collect();
    let cells = table::cells(&search.summary.outcome, &terms);
    let Some((header, rows)) = cells.split_first() else {
        return;
    };
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let numeric: Vec<bool> = (0..header.len()).map(|i| i + 1 < header.len()).collect();
    let rows: Vec<(Vec<String>, &str)> = rows
        .iter()
        .map(|cells| {
            let fail = cells.last().is_some_and(|v| v.starts_with("FAIL"));
            (cells.clone(), if fail { "fail" } else { "" })
        })
        .collect();
    if rows.is_empty() {
        page.note("No trial has finished yet.");
    } else {
        page.body.push_str(&table(&header, &rows, &numeric));
    }
    page.body.push_str("<div class=\"lines\">\n");
    let lines = match &search.summary.interval {
        Some(interval) => {
            table::interval_lines(&search.summary.outcome, &search.records(), &interval.goal)
        }
        None => table::summary_lines(&search.summary.outcome),
    };
    for line in lines {
        let _ = writeln!(page.body, "<p>{}</p>", escape(&line));
    }
    page.body.push_str("</div>\n");
}

/// A search's own section: spectra per rate, the timelines of the trials that tell the most,
/// each trial's whole-run latencies, its errors and its settings.
pub(super) fn search_section(page: &mut Page, search: &SearchData, n: usize) -> anyhow::Result<()> {
    page.section(
        &format!("search-{}", n + 1),
        &format!("Trials of {}", search.label),
    );
    if let Some(probe) = &search.summary.outcome.probe {
        page.para(&format!(
            "The probe kept {} requests in flight (closed loop) and achieved {}/s: the ceiling \
             the automatic rates were chosen from. Its latencies are service times and are not \
             judged.",
            probe.concurrency,
            format_rate(probe.achieved_per_s)
        ));
    }
    let spectra: Vec<Chart> = charts::spectrum(std::slice::from_ref(search), &[]);
    for chart in spectra {
        page.figure(chart)?;
    }
    let picked = charts::timeline_trials(search);
    let capacity = search.summary.outcome.capacity_per_s;
    for index in picked {
        let trial = &search.trials[index];
        let Some(run) = &trial.run else { continue };
        let why = if Some(trial.record.rate_per_s) == capacity {
            "at the capacity"
        } else if trial.record.pass {
            "the lowest rate"
        } else {
            "the first failing rate"
        };
        let heading = format!(
            "Timeline of the trial at {}/s, repeat {} ({why})",
            format_rate(trial.record.rate_per_s),
            trial.record.repeat
        );
        page.h3(&heading);
        if let Some(reason) = &trial.record.reason {
            page.para(&format!("Verdict: FAIL: {reason}."));
        } else {
            page.para("Verdict: pass.");
        }
        let title = format!(
            "{} at {}/s #{}",
            search.label,
            format_rate(trial.record.rate_per_s),
            trial.record.repeat
        );
        let figures = Timeline::load(run);
        for chart in charts::timeline(run, &figures, &title) {
            page.figure(chart)?;
        }
        if let Some(chart) = charts::recall_timeline(run, &figures, &title) {
            page.figure(chart)?;
        }
        pause_part(page, run, &figures, &title)?;
    }
    search_pause_table(page, search);

    page.h3("Each trial's whole-run latency");
    page.para(
        "Response time of every measured request of each trial, all operation types together \
         (from its histogram log): the SLA is judged per window, so these can pass while a \
         window failed.",
    );
    // The ANN queries' mean recall, when some trial measured it (its record in capacity.jsonl).
    let recall = search.trials.iter().any(|t| t.record.recall.is_some());
    let mut header = vec![
        "Attempted/s",
        "Repeat",
        "Achieved/s",
        "Requests",
        "Errors",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
    ];
    if recall {
        header.push("Mean recall");
    }
    header.push("Verdict");
    let rows: Vec<(Vec<String>, &str)> = search
        .trials
        .iter()
        .map(|t| {
            let r = &t.record;
            let whole = t.run.as_ref().and_then(|run| run.whole);
            let ms = |f: fn(&crate::results::run_dir::Percentiles) -> f64| {
                whole
                    .as_ref()
                    .map_or("-".to_string(), |w| format_number(f(w)))
            };
            let mut cells = vec![
                format_rate(r.rate_per_s),
                r.repeat.to_string(),
                format_rate(r.achieved_per_s),
                format::group_thousands(r.requests),
                format::group_thousands(r.errors),
                ms(|w| w.p50_ms),
                ms(|w| w.p99_ms),
                ms(|w| w.p999_ms),
                ms(|w| w.max_ms),
            ];
            if recall {
                cells.push(r.recall.map_or("-".to_string(), |v| format!("{v:.3}")));
            }
            cells.push(if r.pass { "pass" } else { "FAIL" }.to_string());
            (cells, if r.pass { "" } else { "fail" })
        })
        .collect();
    let mut numeric = vec![true; header.len()];
    numeric[header.len() - 1] = false;
    page.body.push_str(&table(&header, &rows, &numeric));

    let runs: Vec<&RunData> = search
        .trials
        .iter()
        .filter_map(|t| t.run.as_ref())
        .collect();
    errors_table(page, &runs, true);

    page.h3("Settings of the search");
    // The trial's rate, length and SLA are set per trial from the search's own settings.
    settings_table(
        page,
        &search.summary.config,
        &[
            "run.mode.rate_per_s",
            "run.duration_s",
            "run.warmup_s",
            "run.sla",
        ],
    );
    Ok(())
}

/// A search's server pauses per attempted rate and over every trial, when its trials have
/// pause figures.
fn search_pause_table(page: &mut Page, search: &SearchData) {
    let Some(found) = crate::capacity::pauses::search_pauses(search) else {
        return;
    };
    page.h3("Server pauses per attempted rate");
    page.para(
        "Every trial's stop-the-world pauses, all nodes together: pauses per node and minute, \
         the share of the nodes' measured time they were stopped, and the pause lengths of \
         every repeat at that rate merged.",
    );
    let header = [
        "Attempted/s",
        "Trials",
        "Pauses",
        "Per node-minute",
        "Stopped %",
        "p99 ms",
        "max ms",
        "To safepoint, max ms",
    ];
    let ms = |v: Option<f64>| v.map_or("-".to_string(), format_number);
    let cells = |what: String, f: &crate::capacity::pauses::PauseFigures| {
        vec![
            what,
            f.runs.to_string(),
            format::group_thousands(f.pauses),
            format_number(f.per_minute),
            format_number(f.stopped_percent),
            ms(f.p99_ms),
            ms(f.max_ms),
            ms(f.longest_time_to_safepoint_ms),
        ]
    };
    let mut rows: Vec<(Vec<String>, &str)> = found
        .rates
        .iter()
        .map(|r| (cells(format_rate(r.rate_per_s), &r.figures), ""))
        .collect();
    rows.push((cells("all trials".to_string(), &found.overall), "sub"));
    let numeric = [true, true, true, true, true, true, true, true];
    page.body.push_str(&table(&header, &rows, &numeric));
    if found.trials_without > 0 {
        page.note(&format!(
            "{} trials have no pause figures (no pauses.json in their directories).",
            found.trials_without
        ));
    }
}
