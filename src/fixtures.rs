//! The recorded directories the unit tests read: a real run, a real capacity search and a
//! real sweep, kept in tests/fixtures/report; and server pauses made up for the tests of
//! what reads them.

use std::path::{Path, PathBuf};

use crate::metrics::server_pauses::{NodePauses, Pause, PausesFile};

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

/// The settings of the capacity fixture's search, to vary in tests.
pub(crate) fn search_settings() -> crate::capacity::settings::SearchSettings {
    crate::capacity::settings::SearchSettings::read(&capacity_fixture()).unwrap()
}

/// A pause of `length_ms` at `offset_s`; a GC pause when its kind says so.
pub(crate) fn pause(offset_s: f64, length_ms: f64, kind: &str) -> Pause {
    Pause {
        offset_s,
        length_ms,
        kind: kind.into(),
        gc: kind.starts_with("Pause"),
        time_to_safepoint_ms: Some(0.01),
    }
}

/// A node's pauses, its figures made up to agree with them.
pub(crate) fn node(name: &str, events: Vec<Pause>) -> NodePauses {
    let max = events.iter().map(|p| p.length_ms).fold(0.0, f64::max);
    NodePauses {
        node: name.into(),
        address: "127.0.0.5:9042".into(),
        collector: Some("g1".into()),
        tag: format!("{name}.pause"),
        log_files: vec![],
        count: events.len() as u64,
        stopped_ms: events.iter().map(|p| p.length_ms).sum(),
        stopped_percent: 0.1,
        max_ms: max,
        p50_ms: Some(max / 2.0),
        p99_ms: Some(max),
        p999_ms: Some(max),
        time_to_safepoint_max_ms: Some(0.01),
        time_to_safepoint_p99_ms: Some(0.01),
        longest: events.clone(),
        events,
    }
}

/// pauses.json of these nodes over 10 measured seconds.
pub(crate) fn pauses_of(nodes: Vec<NodePauses>) -> PausesFile {
    PausesFile {
        run_start: "2026-11-22T07:03:57.000000000Z".into(),
        measured_from_s: 0.0,
        measured_to_s: 10.0,
        nodes,
        notes: vec![],
    }
}
