//! A search's ladder as the live page shows it: the rates tried so far and each one's
//! verdict. The capacity bracket they make is the outcome's ([`Outcome::bracket`]).

use crate::capacity::search::Verdict;
use crate::capacity::Outcome;

/// One rate of the ladder.
#[derive(Debug, Clone, PartialEq)]
pub struct Rung {
    /// The attempted rate, per second.
    pub rate_per_s: f64,
    /// `pass`, `fail`, `invalid` or `running` (not every repeat has run).
    pub verdict: &'static str,
    /// Repeats run.
    pub repeats: usize,
    /// The best achieved rate among them, per second.
    pub achieved_per_s: f64,
    /// Why it failed or was invalid, the first repeat's reason.
    pub reason: Option<String>,
}

/// The rates tried so far, lowest first.
pub fn rungs(outcome: &Outcome) -> Vec<Rung> {
    outcome
        .rows
        .iter()
        .map(|row| Rung {
            rate_per_s: row.rate_per_s,
            verdict: match row.verdict {
                Verdict::Pass => "pass",
                Verdict::Fail => "fail",
                Verdict::Invalid => "invalid",
                Verdict::Incomplete => "running",
            },
            repeats: row.trials.len(),
            achieved_per_s: row
                .trials
                .iter()
                .map(|t| t.achieved_per_s)
                .fold(0.0, f64::max),
            reason: row.trials.iter().find_map(|t| {
                t.reason
                    .clone()
                    .or_else(|| t.invalid.as_ref().map(|i| i.join(" ")))
            }),
        })
        .collect()
}
