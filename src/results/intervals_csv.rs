//! intervals.csv: one row per interval, phase and operation type, flushed as each interval
//! ends; with an SLA, also one row per judged window (phase `window`, op `all`) with its
//! verdict and failing terms. Written by hand: every field is a number, a fixed identifier
//! or SLA terms (which never hold a comma), so no quoting is ever needed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::Context;

use crate::engine::Interval;
use crate::metrics::{OpHistograms, Phase};
use crate::sla::{WindowStats, WindowVerdict};
use crate::stats::percentiles_and_mean;

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
        stats: &OpHistograms,
    ) -> anyhow::Result<()> {
        self.write_row(
            interval.start_ns,
            interval.length_ns,
            phase.name(),
            op,
            stats,
            &interval.backlog.to_string(),
            "",
        )
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
        let mut all = OpHistograms::default();
        for (_, stats) in &window.ops {
            all.add(stats);
        }
        let failed: Vec<&str> = verdict
            .outcomes
            .iter()
            .filter(|o| !o.pass)
            .map(|o| o.term.as_str())
            .collect();
        let sla = format!(
            "{},{}",
            if verdict.pass { "pass" } else { "fail" },
            failed.join(";")
        );
        self.write_row(
            offset_ns + window.start_ns,
            window.length_ns,
            "window",
            "all",
            &all,
            "",
            &sla,
        )
    }

    /// The columns of one row; `sla` is the last two (`,` for none).
    #[allow(clippy::too_many_arguments)]
    fn write_row(
        &mut self,
        start_ns: u64,
        length_ns: u64,
        phase: &str,
        op: &str,
        stats: &OpHistograms,
        backlog: &str,
        sla: &str,
    ) -> anyhow::Result<()> {
        let h = &stats.response_ns;
        let (values, _) = percentiles_and_mean(h, [50.0, 90.0, 99.0, 99.9, 99.99]);
        let [p50, p90, p99, p999, p9999] = values.map(|v| v as f64 / 1e6);
        let length_s = length_ns as f64 / 1e9;
        let sla = if sla.is_empty() { "," } else { sla };
        writeln!(
            self.out,
            "{:.3},{:.3},{phase},{op},{},{},{:.1},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{backlog},{sla}",
            start_ns as f64 / 1e9,
            length_s,
            stats.total(),
            stats.error_count(),
            stats.total() as f64 / length_s.max(1e-9),
            p50,
            p90,
            p99,
            p999,
            p9999,
            if h.is_empty() {
                0.0
            } else {
                h.max() as f64 / 1e6
            },
        )?;
        Ok(())
    }

    /// Makes every row so far reach the file.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        self.out.flush().context("writing intervals.csv")
    }
}

/// One row of intervals.csv for one interval, phase and operation type.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRow {
    /// Start, seconds since the start of the run.
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    /// `warmup` or `measure`.
    pub phase: String,
    /// The operation type.
    pub op: String,
    /// Requests that ended in the interval, successful or not.
    pub requests: u64,
    /// Failed requests.
    pub errors: u64,
    /// Requests due but not yet sent at the interval's end, when the row has the column.
    pub backlog: Option<u64>,
}

/// One judged SLA window (an intervals.csv row of phase `window`).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRow {
    /// Start, seconds since the start of the run (warmup included).
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    /// Whether every term held.
    pub pass: bool,
    /// The terms that failed.
    pub failed: Vec<String>,
}

/// intervals.csv: its interval rows and its window rows. Rows that do not parse are skipped
/// with one note (a crash can tear the last line).
pub fn parse_intervals(text: &str, notes: &mut Vec<String>) -> (Vec<IntervalRow>, Vec<WindowRow>) {
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return (Vec::new(), Vec::new());
    };
    let columns: Vec<&str> = header.split(',').collect();
    let col = |name: &str| columns.iter().position(|c| *c == name);
    let (Some(start), Some(length), Some(phase), Some(op), Some(requests), Some(errors)) = (
        col("start_s"),
        col("length_s"),
        col("phase"),
        col("op"),
        col("requests"),
        col("errors"),
    ) else {
        notes.push("intervals.csv has an unknown header.".to_string());
        return (Vec::new(), Vec::new());
    };
    let (sla, failed, backlog) = (col("sla"), col("sla_failed"), col("backlog"));
    let mut rows = Vec::new();
    let mut windows = Vec::new();
    let mut skipped = 0;
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let get = |i: usize| cells.get(i).copied().unwrap_or("");
        let parsed = (|| {
            let start_s: f64 = get(start).parse().ok()?;
            let length_s: f64 = get(length).parse().ok()?;
            if get(phase) == "window" {
                let pass = sla.map(get) == Some("pass");
                let failed = failed
                    .map(get)
                    .unwrap_or("")
                    .split(';')
                    .filter(|t| !t.is_empty())
                    .map(str::to_string)
                    .collect();
                windows.push(WindowRow {
                    start_s,
                    length_s,
                    pass,
                    failed,
                });
                return Some(());
            }
            rows.push(IntervalRow {
                start_s,
                length_s,
                phase: get(phase).to_string(),
                op: get(op).to_string(),
                requests: get(requests).parse().ok()?,
                errors: get(errors).parse().ok()?,
                backlog: backlog.and_then(|b| get(b).parse().ok()),
            });
            Some(())
        })();
        if parsed.is_none() {
            skipped += 1;
        }
    }
    if skipped > 0 {
        notes.push(format!(
            "intervals.csv: {skipped} row(s) could not be read and were left out."
        ));
    }
    (rows, windows)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::ErrorClass;
    use crate::sla::{judge_window, Sla};

    /// Interval rows and window rows have the header's columns, in its order.
    #[test]
    fn rows_fit_the_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("intervals.csv");
        let mut csv = IntervalsCsv::create(&path).unwrap();
        let mut stats = OpHistograms::default();
        for ms in 1..=100u64 {
            stats.record_ok(ms * 1_000_000, ms * 900_000);
        }
        stats.record_error(ErrorClass::Timeout, || "slow".into());
        let interval = Interval {
            index: 2,
            start_ns: 2_000_000_000,
            length_ns: 1_000_000_000,
            ops: vec![[OpHistograms::default(), stats.clone()]],
            hiccups: None,
            backlog: 7,
            in_flight: 0,
        };
        csv.row(&interval, Phase::Measure, "write", &stats).unwrap();
        let window = WindowStats {
            index: 0,
            start_ns: 0,
            length_ns: 2_000_000_000,
            ops: vec![("write".to_string(), stats)],
        };
        let sla = Sla::parse("p99<50ms, errors<5%", Duration::from_secs(2)).unwrap();
        let verdict = judge_window(&sla, &window);
        csv.window_row(1_000_000_000, &window, &verdict).unwrap();
        csv.flush().unwrap();

        let text = std::fs::read_to_string(&path).unwrap();
        let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
        let columns = HEADER.split(',').count();
        assert!(rows.iter().all(|r| r.len() == columns), "{text}");
        assert_eq!(
            rows[1][..6],
            ["2.000", "1.000", "measure", "write", "101", "1"]
        );
        assert_eq!(rows[1][13..], ["7", "", ""]);
        assert_eq!(
            rows[2][..6],
            ["1.000", "2.000", "window", "all", "101", "1"]
        );
        // p99.9 of 1..=100 ms: the top bucket, reported as its highest equivalent value.
        assert_eq!(rows[2][10], "100.008");
        assert_eq!(rows[2][13..], ["", "fail", "p99<50ms"]);
    }

    #[test]
    fn the_reader_takes_the_rows_the_writer_writes() {
        let mut notes = Vec::new();
        let (rows, windows) = parse_intervals(
            "start_s,length_s,phase,op,requests,errors,rate_per_s,p50_ms,p90_ms,p99_ms,p999_ms,p9999_ms,max_ms,backlog,sla,sla_failed\n\
             0.000,1.000,measure,write,10,2,10.0,1,1,1,1,1,1,0,,\n\
             0.000,1.000,window,all,10,2,10.0,1,1,1,1,1,1,,fail,p99<1ms;errors<1%\n\
             1.000,oops\n",
            &mut notes,
        );
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].requests, rows[0].errors), (10, 2));
        assert_eq!(windows[0].failed, ["p99<1ms", "errors<1%"]);
        assert_eq!(notes.len(), 1);
    }
}
