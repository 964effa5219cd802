//! The recorded directories the unit tests read: a real run, a real capacity search and a
//! real sweep, kept in tests/fixtures/report.

use std::path::{Path, PathBuf};

/// The first 10 s of a real run: 5 s of warmup, one 5 s SLA window, writes and reads.
pub(crate) fn run_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/run")
}

/// A real automatic capacity search (probe left out); only two trials kept their
/// histogram logs.
pub(crate) fn capacity_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/capacity")
}

/// A real four-step sweep (`--concurrency 2..8 --step-duration 4s`); of each step's
/// directory only summary.json is kept.
pub(crate) fn sweep_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/sweep")
}
