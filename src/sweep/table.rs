//! The sweep's table, as Mark Price's load-testing article reads cassandra-stress's summaries: one
//! row per step with the op rate and the latency percentiles (closed loop: service time, in
//! milliseconds). The terminal prints it line by line as steps finish; the report shows the same
//! cells.

use super::record::StepRecord;
use crate::format::{format_ms, format_rate, group_thousands};

/// The header cells.
pub const HEADER: [&str; 11] = [
    "concurrency",
    "op rate/s",
    "errors",
    "mean",
    "median",
    "p95",
    "p99",
    "p99.9",
    "max",
    "measured",
    "step",
];

/// The widths of the terminal's columns.
const WIDTHS: [usize; 11] = [11, 10, 7, 8, 8, 8, 8, 8, 8, 8, 0];

/// The cells of a step's row.
pub fn cells(step: &StepRecord) -> Vec<String> {
    let l = &step.service_time;
    let measured = step.requests > step.errors;
    let ms = |v: f64| {
        if measured {
            format_ms(v)
        } else {
            "-".to_string()
        }
    };
    let end = match (step.end, step.relative_error) {
        (super::StepEnd::Stable | super::StepEnd::Longest, Some(e)) => {
            format!("{} (±{:.1}%)", step.end.word(), e * 100.0)
        }
        _ => step.end.word().to_string(),
    };
    vec![
        step.concurrency.to_string(),
        format_rate(step.achieved_per_s),
        group_thousands(step.errors),
        ms(l.mean_ms),
        ms(l.p50_ms),
        ms(l.p95_ms),
        ms(l.p99_ms),
        ms(l.p999_ms),
        ms(l.max_ms),
        format!("{:.0} s", step.measured_s),
        end,
    ]
}

fn line(cells: &[String]) -> String {
    let mut out = String::new();
    for (i, (cell, width)) in cells.iter().zip(WIDTHS).enumerate() {
        if i > 0 {
            out.push_str("  ");
        }
        if width == 0 {
            out.push_str(cell);
        } else {
            out.push_str(&format!("{cell:>width$}"));
        }
    }
    out.trim_end().to_string()
}

/// The header line, with the unit of the latencies above it.
pub fn header() -> String {
    let header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    format!(
        "{:>w$}service time (closed loop), ms\n{}",
        "",
        line(&header),
        w = WIDTHS[0] + WIDTHS[1] + WIDTHS[2] + 6
    )
}

/// A step's line.
pub fn row(step: &StepRecord) -> String {
    line(&cells(step))
}

/// The whole table.
pub fn render(steps: &[StepRecord]) -> String {
    let mut out = header();
    for step in steps {
        out.push('\n');
        out.push_str(&row(step));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::summary::Latency;
    use crate::sweep::StepEnd;

    fn step(concurrency: usize, rate: f64, end: StepEnd) -> StepRecord {
        StepRecord {
            concurrency,
            end,
            achieved_per_s: rate,
            requests: 120_000,
            errors: 3,
            measured_s: 30.2,
            intervals: 30,
            relative_error: Some(0.0123),
            drift: Some(0.01),
            service_time: Latency {
                mean_ms: 0.912,
                p50_ms: 0.8,
                p95_ms: 1.5,
                p99_ms: 3.3,
                p999_ms: 8.8,
                p9999_ms: 20.0,
                max_ms: 87.8,
            },
            dir: format!("steps/concurrency-{concurrency}"),
            wall_s: 40.0,
            error: None,
        }
    }

    #[test]
    fn rows_line_up_under_the_header() {
        let table = render(&[
            step(4, 4119.4, StepEnd::Stable),
            step(913, 74949.0, StepEnd::Fixed),
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        assert!(lines[0].contains("service time (closed loop), ms"));
        assert!(lines[1].starts_with("concurrency   op rate/s"), "{table}");
        assert_eq!(
            lines[2],
            "          4       4 119        3     0.912     0.800      1.50      3.30      8.80      87.8      30 s  stable (±1.2%)"
        );
        assert!(lines[3].contains("74 949"));
        assert!(lines[3].ends_with("fixed"));
        // The columns end where the header's do.
        let end_of = |line: &str, word: &str| line.find(word).unwrap() + word.len();
        assert_eq!(end_of(lines[1], "p99.9"), end_of(lines[2], "8.80"));
    }

    #[test]
    fn a_step_without_answers_has_no_latencies() {
        let mut failed = step(8, 0.0, StepEnd::Failed);
        failed.requests = 10;
        failed.errors = 10;
        let cells = cells(&failed);
        assert_eq!(cells[3..9], ["-", "-", "-", "-", "-", "-"]);
        assert_eq!(cells[10], "FAILED");
        assert_eq!(format_ms(123.4), "123");
        assert_eq!(format_ms(0.0456), "0.046");
    }
}
