//! What `--validate` has found so far, as the live view shows it: the checker's counts of
//! the current run (read after each interval), those of the runs before it summed, so that
//! the counters never go down over a search's trials, and the last finished run's defects.

use crate::validation::{SoFar, Validation};

/// What `--validate` has found so far, over every run of the process.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveValidation {
    /// The validated runs before the current one, summed.
    pub before: SoFar,
    /// The current run's, so far (once it finished: its own final counts).
    pub current: SoFar,
    /// The defects and lost writes of the last validated run that finished.
    pub last_run: Option<(u64, u64)>,
}

impl LiveValidation {
    /// Every run's counts so far: what the counters show, which never go down.
    pub fn total(&self) -> SoFar {
        let mut total = self.before;
        total += self.current;
        total
    }

    /// A new run starts: the current one's counts join those before.
    pub fn next_run(&mut self) {
        self.before += std::mem::take(&mut self.current);
    }

    /// The current run finished with `found` (its summary's): its exact counts, its
    /// defects and the writes its final check did not find.
    pub fn finished(&mut self, found: &Validation) {
        self.current = SoFar::of(found);
        let lost = found.final_check.as_ref().map_or(0, |f| f.lost);
        self.last_run = Some((found.defects(), lost));
    }
}
