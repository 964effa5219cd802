//! intervals.csv: one row per interval, phase and operation type, flushed as each interval
//! ends; with an SLA, also one row per judged window (phase `window`, op `all`) with its
//! verdict and failing terms. Written by hand: every field is a number, a fixed identifier
//! or SLA terms (which never hold a comma), so no quoting is ever needed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::Context;

use crate::engine::Interval;
use crate::metrics::{value_at_percentile, OpStats, Phase};
use crate::sla::{WindowStats, WindowVerdict};

/// The header row.
pub const HEADER: &str =
    "start_s,length_s,phase,op,requests,errors,rate_per_s,p50_ms,p90_ms,p99_ms,p999_ms,p9999_ms,max_ms,backlog,sla,sla_failed";

/// An open intervals.csv.
pub struct IntervalsCsv {
    out: BufWriter<File>,
}

impl IntervalsCsv {
    /// Creates the file and writes the header.
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut out = BufWriter::new(file);
        writeln!(out, "{HEADER}")?;
        Ok(IntervalsCsv { out })
    }

    /// One row: response-time percentiles of successful requests, in ms.
    pub fn row(
        &mut self,
        interval: &Interval,
        phase: Phase,
        op: &str,
        stats: &OpStats,
    ) -> anyhow::Result<()> {
        let h = &stats.response_ns;
        let ms = |p: f64| value_at_percentile(h, p) as f64 / 1e6;
        let length_s = interval.length_ns as f64 / 1e9;
        writeln!(
            self.out,
            "{:.3},{:.3},{},{},{},{},{:.1},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{},,",
            interval.start_ns as f64 / 1e9,
            length_s,
            phase.name(),
            op,
            stats.total(),
            stats.error_count(),
            stats.total() as f64 / length_s,
            ms(50.0),
            ms(90.0),
            ms(99.0),
            ms(99.9),
            ms(99.99),
            if h.is_empty() {
                0.0
            } else {
                h.max() as f64 / 1e6
            },
            interval.backlog
        )?;
        Ok(())
    }

    /// One row for a judged SLA window: its start and length from the start of the run
    /// (`offset_ns` is the warmup), all op types together, the verdict and the failing
    /// terms separated by `;`.
    pub fn window_row(
        &mut self,
        offset_ns: u64,
        window: &WindowStats,
        verdict: &WindowVerdict,
    ) -> anyhow::Result<()> {
        let mut all = OpStats::default();
        for (_, stats) in &window.ops {
            all.add(stats);
        }
        let h = &all.response_ns;
        let ms = |p: f64| value_at_percentile(h, p) as f64 / 1e6;
        let length_s = window.length_ns as f64 / 1e9;
        let failed: Vec<&str> = verdict
            .outcomes
            .iter()
            .filter(|o| !o.pass)
            .map(|o| o.term.as_str())
            .collect();
        writeln!(
            self.out,
            "{:.3},{:.3},window,all,{},{},{:.1},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},,{},{}",
            (offset_ns + window.start_ns) as f64 / 1e9,
            length_s,
            all.total(),
            all.error_count(),
            all.total() as f64 / length_s.max(1e-9),
            ms(50.0),
            ms(90.0),
            ms(99.0),
            ms(99.9),
            ms(99.99),
            if h.is_empty() {
                0.0
            } else {
                h.max() as f64 / 1e6
            },
            if verdict.pass { "pass" } else { "fail" },
            failed.join(";")
        )?;
        Ok(())
    }

    /// Makes every row so far reach the file.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        self.out.flush().context("writing intervals.csv")
    }
}
