//! `--validate`: whether the cluster kept what it acknowledged and returned what was
//! written.
//!
//! - [`stamp`]: the mark at the head of each value that names the request that wrote it;
//! - [`ledger`]: the write record, bounded by the keys, and the judgement of a read;
//! - [`levels`]: whether a stale read is a defect at the run's consistency levels;
//! - [`checker`]: the request path's [`Recorder`] and the thread that keeps the record;
//! - [`final_tally`]: the final check's bookkeeping, row by row;
//! - [`findings`]: what it found, summary.json's `validation` ([`Validation`]).
//!
//! docs/validation.md says what is checked and what is not. This file only declares the
//! parts and hands on what the rest of headroom uses.

pub mod checker;
pub mod final_tally;
pub mod findings;
pub mod ledger;
pub mod levels;
pub mod stamp;

pub use checker::{Cells, Checker, PendingWrite, Recorder, SoFar};
pub use final_tally::FinalTally;
pub use findings::{Counted, DataCheck, DataVerdict, FinalCheck, ReadCounts, Reads, Validation};
pub use ledger::{Ledger, ReadClass, Seen};
