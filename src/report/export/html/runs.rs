//! The runs compared: one line per run given, `headroom compare`'s tables for them, and
//! the charts across runs (latency against throughput, and against concurrency).

use super::page::{put_tables, table, Page};
use crate::compare::render as compare_render;
use crate::format::format_number;
use crate::format::format_rate;
use crate::report::charts::{self, Chart};
use crate::report::compared::Compared;
use crate::results::run_dir::RunData;

/// The runs compared, when the runs given make chart 2 or chart 5: one line per run,
/// `headroom compare`'s tables when there are two or more, and the charts.
pub(super) fn compared_section(
    page: &mut Page,
    runs: &[RunData],
    compared: &Compared,
) -> anyhow::Result<()> {
    let charts_compared: Vec<Chart> = charts::latency_vs_throughput(&[], runs)
        .into_iter()
        .chain(charts::concurrency(runs))
        .collect();
    if !charts_compared.is_empty() {
        page.section("compared", "Runs compared");
        page.para(
            "The runs given side by side: open-loop runs at fixed rates, closed-loop runs at \
             fixed concurrencies (their latency is service time).",
        );
        runs_table(page, runs);
        if runs.len() >= 2 {
            run_comparison_tables(page, compared);
        }
        for chart in charts_compared {
            page.figure(chart)?;
        }
    }
    Ok(())
}

/// The runs compared (`headroom compare`'s tables for runs).
fn run_comparison_tables(page: &mut Page, compared: &Compared) {
    match &compared.runs {
        Some(Ok(c)) => {
            page.h3(&format!("Against {}", c.baseline));
            put_tables(page, &compare_render::run_tables(c), &c.notes);
        }
        Some(Err(e)) => page.note(&format!("The runs could not be compared: {e}")),
        None => {}
    }
}

/// One line per run given, to compare them.
fn runs_table(page: &mut Page, runs: &[RunData]) {
    let header = [
        "Run",
        "Loop",
        "Attempted/s",
        "Achieved/s",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "SLA",
    ];
    let rows: Vec<(Vec<String>, &str)> = runs
        .iter()
        .map(|run| {
            let ms = |f: fn(&crate::results::run_dir::Percentiles) -> f64| {
                run.whole
                    .as_ref()
                    .map_or("-".to_string(), |w| format_number(f(w)))
            };
            let sla = run.summary.as_ref().and_then(|s| s.sla.as_ref());
            let fail = sla.is_some_and(|s| !s.verdict.pass);
            (
                vec![
                    run.label.clone(),
                    match (run.attempted_rate(), run.concurrency()) {
                        (Some(_), _) => "open".to_string(),
                        (None, Some(c)) => format!("closed, {c} in flight"),
                        _ => "-".to_string(),
                    },
                    run.attempted_rate().map_or("-".to_string(), format_rate),
                    run.achieved_rate().map_or("-".to_string(), format_rate),
                    ms(|w| w.p50_ms),
                    ms(|w| w.p99_ms),
                    ms(|w| w.p999_ms),
                    ms(|w| w.max_ms),
                    match sla.map(|s| s.verdict.judgement()) {
                        Some(crate::sla::Judgement::Pass) => "pass".to_string(),
                        Some(crate::sla::Judgement::Fail) => "FAIL".to_string(),
                        Some(crate::sla::Judgement::NoVerdict(_)) => "no verdict".to_string(),
                        None => "-".to_string(),
                    },
                ],
                if fail { "fail" } else { "" },
            )
        })
        .collect();
    let numeric = [false, false, true, true, true, true, true, true, false];
    page.body.push_str(&table(&header, &rows, &numeric));
}
