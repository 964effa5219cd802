//! What `--validate`'s final check asks of a workload it checks: the statement that reads
//! its whole table back, what the counts are of, and how each row is judged ([`JudgeRows`]).
//! Each format that validates implements the judging; `run/validate.rs` pages through the
//! table and hands it the rows.

use scylla::value::CqlValue;

use super::settings::WorkloadSettings;
use crate::validation::{Counted, FinalTally, Ledger};

/// Refuses `--validate` with a table TTL: a row that expired cannot be told from a lost one.
pub fn check_no_ttl<D>(config: &WorkloadSettings<D>) -> Result<(), String> {
    match config.ttl_s {
        Some(_) => Err(
            "--validate with --ttl: a row that expired cannot be told from a lost one; leave \
             out --ttl"
                .to_string(),
        ),
        None => Ok(()),
    }
}

/// How the final check judges the rows of a validated workload's table.
pub trait JudgeRows {
    /// Before the first row: what the judging needs from the record (say, the names of
    /// the keys it holds).
    fn prepare(&mut self, _ledger: &Ledger) {}

    /// One row's columns, in the order of [`FinalRead::cql`]'s, noted in `tally`.
    fn row(&self, columns: Vec<Option<CqlValue>>, tally: &mut FinalTally<'_>);
}

/// How the final check reads a validated workload's table back.
pub struct FinalRead<'a> {
    /// The statement that reads the whole table.
    pub cql: String,
    /// What the counts are of.
    pub counted: Counted,
    /// What each row says.
    pub judge: Box<dyn JudgeRows + Send + 'a>,
}

impl std::fmt::Debug for FinalRead<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FinalRead")
            .field("cql", &self.cql)
            .field("counted", &self.counted)
            .finish_non_exhaustive()
    }
}
