//! A sweep's section: its table as the terminal prints it, its two charts, its settings.

use super::page::{table, Page};
use super::prose::sweep_sentence;
use super::tables::settings_table;
use crate::report::charts;
use crate::sweep::dir::SweepData;
use crate::sweep::{table as sweep_table, StepEnd};

/// A sweep's section: its table as the terminal prints it, its two charts, its settings.
pub(super) fn sweep_section(page: &mut Page, sweep: &SweepData, n: usize) -> anyhow::Result<()> {
    page.section(
        &format!("sweep-{}", n + 1),
        &format!("Concurrency sweep {}", sweep.label),
    );
    page.para(&sweep_sentence(sweep));
    let rows: Vec<(Vec<String>, &str)> = sweep
        .file
        .steps
        .iter()
        .map(|step| {
            let class = if step.end == StepEnd::Failed {
                "fail"
            } else {
                ""
            };
            (sweep_table::cells(step), class)
        })
        .collect();
    if rows.is_empty() {
        page.note("No step has finished yet.");
    } else {
        let mut header: Vec<String> = sweep_table::HEADER.iter().map(|h| h.to_string()).collect();
        for cell in &mut header[3..9] {
            cell.push_str(" ms");
        }
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let numeric: Vec<bool> = (0..header.len()).map(|i| i + 1 < header.len()).collect();
        page.body.push_str(&table(&header, &rows, &numeric));
        page.note(
            "Latencies are service times of the successful requests of each step's measured \
             part, every operation type together: in a closed loop they equal the response \
             time, and they under-count stalls (coordinated omission).",
        );
    }
    for step in sweep.file.steps.iter().filter(|s| s.error.is_some()) {
        page.note(&format!(
            "The step at concurrency {} failed: {}",
            step.concurrency,
            step.error.as_deref().unwrap_or_default()
        ));
    }
    for chart in charts::sweep(sweep) {
        page.figure(chart)?;
    }
    page.h3("Settings of the sweep");
    // Each step's concurrency, warmup and length are set from the sweep's own settings.
    settings_table(
        page,
        &sweep.settings_written,
        &[
            "run.mode.concurrency",
            "run.mode.loop",
            "run.duration_s",
            "run.warmup_s",
        ],
    );
    Ok(())
}
