//! The capacity search's result for the terminal, after the tables of Azul's capacity and cost
//! article: one line per attempted rate and repeat with the achieved rate, the worst window's value
//! of each SLA term (Azul's capacity and cost article's "P99.9 max"), errors and verdict, then the
//! highest achieved throughput, the capacity and any unstable rates.

use super::interval::{self, IntervalGoal};
use super::record::Record;
use super::search::{Outcome, Verdict};
use crate::format::{format_rate, format_value, group_thousands};

/// Marks an SLA term that failed in some window.
const FAILED: &str = "✗";

/// The table and the lines under it, for the SLA terms `terms` (canonical spellings; a trial
/// without a value for a term shows "-"). Ends with a newline.
pub fn render(outcome: &Outcome, terms: &[String]) -> String {
    let mut out = table_text(outcome, terms);
    for line in summary_lines(outcome) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// An interval search's table and the lines under it: the highest achieved throughput and
/// the bounds (decision 0019) instead of the strict capacity. Ends with a newline.
pub fn render_interval(
    outcome: &Outcome,
    terms: &[String],
    records: &[Record],
    goal: &IntervalGoal,
) -> String {
    let mut out = table_text(outcome, terms);
    for line in interval_lines(outcome, records, goal) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The lines under an interval search's table: the highest achieved throughput, then the
/// bounds and what they rest on.
pub fn interval_lines(outcome: &Outcome, records: &[Record], goal: &IntervalGoal) -> Vec<String> {
    let mut lines = summary_lines(outcome);
    lines.retain(|line| line.starts_with("Highest achieved throughput"));
    lines.extend(interval::describe(records, goal));
    lines
}

/// The table alone, then an empty line.
fn table_text(outcome: &Outcome, terms: &[String]) -> String {
    let lines = cells(outcome, terms);

    let columns = lines[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            lines
                .iter()
                .map(|cells| cells[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for cells in &lines {
        let mut line = String::new();
        for (c, cell) in cells.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            if c + 1 == columns {
                // The verdict, left-aligned and unpadded.
                line.push_str(cell);
            } else {
                let pad = widths[c] - cell.chars().count();
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The table's cells: the header first, then one line per attempted rate and repeat, each
/// with the same number of cells; a `Recall` column (the ANN queries' mean recall) when some
/// trial measured it. The terminal table and the HTML report show these.
///
/// A term's cell ends in two spaces when it passed and in " ✗" when it failed in some
/// window, so that the numbers line up in a terminal; the last cell is the verdict.
pub fn cells(outcome: &Outcome, terms: &[String]) -> Vec<Vec<String>> {
    let mut header: Vec<String> = ["Attempted/s", "Repeat", "Achieved/s"]
        .map(String::from)
        .to_vec();
    header.extend(terms.iter().cloned());
    // The ANN queries' mean recall, when some trial measured it.
    let recall = outcome
        .rows
        .iter()
        .flat_map(|row| &row.trials)
        .any(|t| t.recall.is_some());
    if recall {
        header.push("Recall".to_string());
    }
    header.extend(["Errors", "Verdict"].map(String::from));

    let mut lines = vec![header];
    for row in &outcome.rows {
        for (i, trial) in row.trials.iter().enumerate() {
            let mut cells = vec![
                format_rate(row.rate_per_s),
                trial.repeat.to_string(),
                format_rate(trial.achieved_per_s),
            ];
            for term in terms {
                cells.push(match trial.terms.iter().find(|t| &t.term == term) {
                    // Passing values keep the mark's room, so that the numbers line up.
                    Some(v) if v.pass => format!("{}  ", term_value(v)),
                    Some(v) => format!("{} {FAILED}", term_value(v)),
                    None => "-  ".to_string(),
                });
            }
            if recall {
                cells.push(trial.recall.map_or("-".to_string(), |r| format!("{r:.3}")));
            }
            cells.push(group_thousands(trial.errors));
            let last = i + 1 == row.trials.len();
            cells.push(if trial.invalid.is_some() {
                "INVALID: client-bound (no verdict; see below)".to_string()
            } else if !trial.pass {
                match &trial.reason {
                    Some(reason) => format!("FAIL: {reason}"),
                    None => "FAIL".to_string(),
                }
            } else if last && row.verdict == Verdict::Incomplete {
                "pass (more repeats to run)".to_string()
            } else {
                "pass".to_string()
            });
            lines.push(cells);
        }
    }

    lines
}

/// The lines under the table: the highest achieved throughput, the capacity and any
/// unstable rates.
pub fn summary_lines(outcome: &Outcome) -> Vec<String> {
    let mut lines = Vec::new();
    let highest = outcome.highest_achieved_per_s;
    let source = match &outcome.probe {
        Some(probe) if probe.achieved_per_s >= highest => Some("probe".to_string()),
        _ => outcome
            .rows
            .iter()
            .find(|row| row.trials.iter().any(|t| t.achieved_per_s >= highest))
            .map(|row| format!("trial at {}/s", format_rate(row.rate_per_s))),
    };
    if let Some(source) = source {
        lines.push(format!(
            "Highest achieved throughput: {}/s ({source})",
            format_rate(highest)
        ));
    }

    if let Some(invalid) = &outcome.invalid {
        lines.push(format!(
            "Capacity: none — the search stopped at {}/s (repeat {}): invalid: client-bound. \
             The client, not the server, limited that trial:",
            format_rate(invalid.rate_per_s),
            invalid.repeat
        ));
        for reason in invalid.invalid.iter().flatten() {
            lines.push(format!("  - {reason}"));
        }
        lines.push(
            "  Give the client more --threads (and cores) or a machine of its own, then search \
             again; the rates below it passed or failed on the server's account, but no \
             capacity can be named until the client keeps up with every rate tried."
                .to_string(),
        );
        return lines;
    }
    let lowest = outcome.rows.first().map(|row| row.verdict);
    lines.push(match (outcome.capacity_per_s, lowest) {
        (Some(capacity), _) => format!(
            "Capacity: {}/s — the highest rate at which every repeat passed (and every lower \
             rate)",
            format_rate(capacity)
        ),
        (None, None) => "Capacity: not known yet — no trial has finished".to_string(),
        (None, Some(Verdict::Incomplete)) => {
            "Capacity: not known yet — the lowest rate has repeats to run".to_string()
        }
        (None, _) if outcome.rows.iter().all(|row| row.verdict == Verdict::Fail) => {
            "Capacity: none — the SLA failed at every rate tried".to_string()
        }
        (None, _) => "Capacity: none — the lowest rate tried failed".to_string(),
    });

    if !outcome.unstable.is_empty() {
        let rates: Vec<String> = outcome
            .unstable
            .iter()
            .map(|&rate| format!("{}/s", format_rate(rate)))
            .collect();
        lines.push(format!(
            "Unstable: passes above a failing rate at {}",
            rates.join(", ")
        ));
    }
    lines
}

/// A term's cell: its worst window's value, with that window's failed share beside a latency
/// (`12.3 ms, 2.0% failed`), or `all failed` when no request of it was answered.
fn term_value(v: &crate::capacity::TermValue) -> String {
    if v.failed_percent >= 100.0 {
        "all failed".to_string()
    } else if v.failed_percent > 0.0 {
        format!(
            "{}, {} failed",
            format_value(v.value, &v.unit),
            format_value(v.failed_percent, "%")
        )
    } else {
        format_value(v.value, &v.unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::record::Record;
    use crate::capacity::search::{outcome, RatePlan, SearchPlan};
    use crate::capacity::sim::{run_in_memory, Simulated, TERM};

    /// A table line's cells: separated by two spaces or more.
    fn cells(line: &str) -> Vec<&str> {
        line.split("  ")
            .map(str::trim)
            .filter(|cell| !cell.is_empty())
            .collect()
    }

    fn terms() -> Vec<String> {
        vec![TERM.to_string()]
    }

    #[test]
    fn a_ladder_with_an_unstable_rate() {
        let settings = SearchPlan {
            plan: RatePlan::Ladder(vec![1000.0, 2000.0, 3000.0, 4000.0]),
            repeats: 2,
            ladder_base_per_s: None,
            interval: None,
        };
        let mut sim = Simulated::new(f64::INFINITY, 3_500.0);
        sim.noisy.push((2000.0, 2));
        let records = run_in_memory(&settings, &mut sim);
        let table = render(&outcome(&records, 2), &terms());
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("Attempted/s  Repeat  Achieved/s  p99.9<100ms"));
        assert!(lines[0].ends_with("Errors  Verdict"));
        // 1000 ×2, 2000 ×2 (the second fails), 3000 ×2, 4000 ×1.
        assert_eq!(lines.len(), 1 + 7 + 1 + 3, "{table}");
        assert_eq!(
            cells(lines[1]),
            ["1 000", "1", "1 000", "5.00 ms", "0", "pass"],
            "{table}"
        );
        assert_eq!(
            cells(lines[4]),
            [
                "2 000",
                "2",
                "2 000",
                "250 ms ✗",
                "0",
                "FAIL: the SLA failed in at least one window"
            ],
            "{table}"
        );
        assert_eq!(cells(lines[7])[..4], ["4 000", "1", "4 000", "650 ms ✗"]);
        // The numbers line up under their headers.
        let end = lines[0].find("p99.9<100ms").unwrap() + "p99.9<100ms".len();
        assert_eq!(&lines[1][end - 9..end], "5.00 ms  ", "{table}");
        assert_eq!(lines[8], "");
        assert_eq!(
            lines[9],
            "Highest achieved throughput: 4 000/s (trial at 4 000/s)"
        );
        assert_eq!(
            lines[10],
            "Capacity: 1 000/s — the highest rate at which every repeat passed (and every \
             lower rate)"
        );
        assert_eq!(
            lines[11],
            "Unstable: passes above a failing rate at 3 000/s"
        );
    }

    #[test]
    fn a_search_where_every_rate_failed() {
        let settings = SearchPlan {
            plan: RatePlan::Auto { resolution: 0.02 },
            repeats: 1,
            ladder_base_per_s: None,
            interval: None,
        };
        let mut sim = Simulated::new(12_345.0, 0.0);
        let records = run_in_memory(&settings, &mut sim);
        let table = render(&outcome(&records, 1), &terms());
        assert!(
            table.contains("Highest achieved throughput: 12 345/s (probe)\n"),
            "{table}"
        );
        assert!(
            table.contains("Capacity: none — the SLA failed at every rate tried\n"),
            "{table}"
        );
        assert!(!table.contains("Unstable"), "{table}");
        assert_eq!(table.matches("FAIL").count(), 7, "{table}");
    }

    #[test]
    fn a_search_stopped_by_a_client_bound_trial() {
        let settings = SearchPlan {
            plan: RatePlan::Ladder(vec![1000.0, 2000.0, 3000.0]),
            repeats: 1,
            ladder_base_per_s: None,
            interval: None,
        };
        let mut sim = Simulated::new(f64::INFINITY, 5_000.0);
        sim.client_limit = 1_500.0;
        let records = run_in_memory(&settings, &mut sim);
        let table = render(&outcome(&records, 1), &terms());
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            cells(lines[2]).last().copied(),
            Some("INVALID: client-bound (no verdict; see below)"),
            "{table}"
        );
        assert!(!table.contains("3 000"), "the search stopped: {table}");
        assert!(
            table.contains(
                "Capacity: none — the search stopped at 2 000/s (repeat 1): invalid: \
                 client-bound."
            ),
            "{table}"
        );
        assert!(
            table.contains("  - the client sends at most 1500/s\n"),
            "{table}"
        );
    }

    #[test]
    fn a_term_shows_the_failed_share_of_its_worst_window() {
        let sim = Simulated::new(f64::INFINITY, f64::INFINITY);
        let Record::Trial(mut trial) = sim.record(1000.0, 1) else {
            unreachable!()
        };
        trial.terms[0].failed_percent = 2.0;
        trial.terms[0].pass = false;
        assert_eq!(term_value(&trial.terms[0]), "5.00 ms, 2.00% failed");
        trial.terms[0].failed_percent = 100.0;
        assert_eq!(term_value(&trial.terms[0]), "all failed");
    }

    #[test]
    fn an_unfinished_search() {
        let sim = Simulated::new(f64::INFINITY, f64::INFINITY);
        let records: Vec<Record> = vec![sim.record(1000.0, 1)];
        let table = render(&outcome(&records, 3), &terms());
        assert!(table.contains("pass (more repeats to run)"), "{table}");
        assert!(
            table.contains("Capacity: not known yet — the lowest rate has repeats to run"),
            "{table}"
        );
        let empty = render(&outcome(&[], 3), &terms());
        assert!(empty.contains("Capacity: not known yet — no trial has finished"));
        assert!(!empty.contains("Highest achieved"));
        // A term the trials do not measure shows "-".
        let table = render(&outcome(&records, 1), &["p99<10ms".to_string()]);
        assert!(table.lines().nth(1).unwrap().contains(" -  "), "{table}");
    }

    #[test]
    fn recall_shows_in_a_column_only_when_trials_measured_it() {
        let settings = SearchPlan {
            plan: RatePlan::Ladder(vec![1000.0, 2000.0]),
            repeats: 1,
            ladder_base_per_s: None,
            interval: None,
        };
        let mut sim = Simulated::new(f64::INFINITY, 5_000.0);
        sim.recall = Some(0.9512);
        let records = run_in_memory(&settings, &mut sim);
        let table = render(&outcome(&records, 1), &terms());
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].ends_with("p99.9<100ms  Recall  Errors  Verdict"),
            "{table}"
        );
        assert_eq!(
            cells(lines[1]),
            ["1 000", "1", "1 000", "5.00 ms", "0.951", "0", "pass"],
            "{table}"
        );
        sim.recall = None;
        let without = render(&outcome(&run_in_memory(&settings, &mut sim), 1), &terms());
        assert!(!without.contains("Recall"), "{without}");
        assert_eq!(cells(without.lines().nth(1).unwrap()).len(), 6, "{without}");
    }
}
