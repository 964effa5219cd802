//! The comparisons a report shows, made before the page is drawn: the capacity searches
//! compared as configurations (as `headroom compare` compares them) and the runs given side
//! by side. The page renders what it is handed here; it computes no comparison itself.

use crate::compare::{Comparison, RunComparison};
use crate::report::load::Input;

/// What the page compares, each `None` when there is nothing to compare and an error's
/// words when the comparison could not be made.
#[derive(Debug, Default)]
pub struct Compared {
    /// Two or more capacity searches, against the baseline `Input::compare` names.
    pub searches: Option<Result<Comparison, String>>,
    /// Two or more runs given directly, against the first.
    pub runs: Option<Result<RunComparison, String>>,
}

impl Compared {
    /// Compares what `input` holds.
    pub fn of(input: &Input) -> Compared {
        let searches = (input.searches.len() >= 2).then(|| {
            crate::compare::compare(&input.searches, &input.compare).map_err(|e| format!("{e:#}"))
        });
        // The first run is the baseline, as `headroom compare` takes it by default.
        let runs = (input.runs.len() >= 2)
            .then(|| crate::compare::compare_runs(&input.runs, None).map_err(|e| format!("{e:#}")));
        Compared { searches, runs }
    }
}
