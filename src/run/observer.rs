//! What a run tells whoever watches it, as it goes: the command line prints it (its live
//! lines, progress bar and summary), a sweep decides from it when a step is stable, tests
//! collect it. The run itself prints nothing.

use std::path::Path;
use std::time::Duration;

use crate::engine::Interval;
use crate::maintenance::MaintenanceFile;
use crate::metrics::server_pauses::PausesFile;
use crate::metrics::server_tables::ServerTablesFile;
use crate::results::config::RunSettings;
use crate::results::summary::{PopulateSummary, RunSummary};
use crate::sla::Judged;

/// Whether a run goes on after an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Go on.
    Go,
    /// End the measured part now, as completed: no new requests; those in flight are
    /// awaited.
    End,
}

/// The measured part is about to start.
#[derive(Debug)]
pub struct Measuring<'a> {
    /// The run's settings.
    pub settings: &'a RunSettings,
    /// The workload's op types, in the order of every interval's statistics.
    pub op_names: &'a [String],
    /// Each op type's share of the requests; 0 for the steps of compound requests.
    pub op_weights: &'a [f64],
    /// Warmup and measured part together, when the run is bounded by time.
    pub planned: Option<Duration>,
}

/// The run has ended and its directory is complete.
#[derive(Debug)]
pub struct Finished<'a> {
    /// summary.json.
    pub summary: &'a RunSummary,
    /// pauses.json, when the run recorded the nodes' pauses.
    pub pauses: Option<&'a PausesFile>,
    /// maintenance.json, with `--during`.
    pub maintenance: Option<&'a MaintenanceFile>,
    /// server-tables.json.
    pub server_tables: &'a ServerTablesFile,
    /// The run directory.
    pub out: &'a Path,
    /// The warmup's length, seconds.
    pub warmup_s: f64,
}

/// Hears a run's events, in this order: notes and `prepared` as it sets up; the populate's
/// progress; `measuring`; every interval (and every SLA window judged); `finished`. Every
/// method has a default that does nothing.
pub trait RunObserver: Send {
    /// A line about how the run is set up or why it did not go on (the native sender's
    /// fallback, whose server pauses are recorded, the maintenance plan, a stop during the
    /// populate, files that could not be written).
    fn note(&mut self, _line: &str) {}

    /// Something went wrong that does not end the run (a file that could not be written),
    /// or why a run ended badly; for standard error.
    fn problem(&mut self, _line: &str) {}

    /// The run directory is created and config.json written; `native`: headroom's own
    /// connections send the measured requests (else the driver).
    fn prepared(&mut self, _out: &Path, _native: bool) {}

    /// The populate starts: `rows` requests, `in_flight` at a time.
    fn populating(&mut self, _rows: u64, _in_flight: usize) {}

    /// The populate's progress, once an interval: seconds since it started, rows written so
    /// far, and the rate of the last interval.
    fn populate_interval(&mut self, _at_s: f64, _rows: u64, _rate_per_s: f64) {}

    /// The populate is over.
    fn populated(&mut self, _summary: &PopulateSummary) {}

    /// The measured part (and its warmup) starts.
    fn measuring(&mut self, _start: &Measuring) {}

    /// One finished interval, warmup and measured parts alike; [`Control::End`] ends the
    /// run as completed.
    fn interval(&mut self, _interval: &Interval) -> Control {
        Control::Go
    }

    /// One SLA window judged, as soon as it is.
    fn window(&mut self, _judged: &Judged) {}

    /// Under `--validate`, after each interval: what the checker has judged so far in this
    /// run.
    fn validation(&mut self, _so_far: &crate::validation::SoFar) {}

    /// The run is over.
    fn finished(&mut self, _run: &Finished) {}

    /// A run made by a fleet's workers (whose own events this process does not see)
    /// starts: its settings and the directory it is merged into.
    fn fleet_run(&mut self, _settings: &RunSettings, _out: &Path) {}

    /// The fleet's run is over and merged.
    fn fleet_merged(&mut self, _summary: &RunSummary) {}
}

/// Hears nothing: a run in a test, or a step whose output someone else gives.
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl RunObserver for Quiet {}
