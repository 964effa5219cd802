//! Starting the workers of one trial and bringing their run directories back.
//!
//! A [`Launcher`] starts N workers that all run the same settings (`config.json`), each
//! with its own `--worker K/N` and the one `--start-at` of the plan, and returns once every
//! worker has ended, with where each one's run directory now lies on this machine or why it
//! has none. The local launcher runs them as processes of this machine; the Kubernetes one
//! as an Indexed Job. The caller merges the directories and judges the merged run.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;

use crate::results::config::RunSettings;
use crate::stop::StopSignal;

/// What the workers of one trial run.
#[derive(Debug, Clone)]
pub struct WorkerPlan {
    /// The trial's name, for the names of what a launcher creates: lowercase letters,
    /// digits and `-` only (e.g. `rate-4000-repeat-1`).
    pub name: String,
    /// The settings every worker runs (its config.json); the launcher adds each worker's
    /// `--worker K/N` and the plan's `--start-at`.
    pub settings: RunSettings,
    /// How many workers (N).
    pub workers: u32,
    /// When the schedule starts, the same for every worker.
    pub start_at: SystemTime,
    /// Where worker K's run directory must be when the launch returns: `out/worker-K`.
    pub out: PathBuf,
    /// Run the phases the settings ask for (`settings.phase`: with the populate, each
    /// worker writing its share of the rows before it waits for the start); when false,
    /// the measured run alone (`--phase run`: the data is there already).
    pub populate: bool,
}

impl WorkerPlan {
    /// Where worker `index` (1-based) leaves its run directory.
    pub fn worker_dir(&self, index: u32) -> PathBuf {
        self.out.join(format!("worker-{index}"))
    }
}

/// How one worker ended.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerEnd {
    /// It ran and its run directory is at `dir` (its exit code may still say the run failed
    /// its SLA, 3, or was client-bound, 4: the merge judges again).
    Finished {
        /// K, 1-based.
        index: u32,
        /// Its run directory on this machine.
        dir: PathBuf,
        /// The worker's exit code.
        exit_code: i32,
    },
    /// It failed, never started, or its directory could not be brought back.
    Failed {
        /// K, 1-based.
        index: u32,
        /// Why, in words for the user (the worker's own error line when there is one).
        reason: String,
    },
}

impl WorkerEnd {
    /// Every worker of a fleet of `workers` failed for one `reason` (the launch itself did).
    pub fn all_failed(workers: u32, reason: &str) -> Vec<WorkerEnd> {
        (1..=workers)
            .map(|index| WorkerEnd::Failed {
                index,
                reason: reason.to_string(),
            })
            .collect()
    }
}

/// Starts the workers of a trial and waits for them.
pub trait Launcher: Send + Sync {
    /// What it launches on, for the output (e.g. "3 processes on this machine").
    fn describe(&self, workers: u32) -> String;

    /// How long before the start time the workers must be launched, so that every one has
    /// connected and prepared by then (a process: seconds; a pod: its scheduling and image
    /// pull).
    fn lead(&self) -> Duration;

    /// Runs the plan's workers to their end and returns how each ended, in worker order.
    /// When `stop` is set, the workers are stopped (their directories keep what they
    /// measured) and the launch returns.
    fn run<'a>(
        &'a self,
        plan: &'a WorkerPlan,
        stop: &'a StopSignal,
    ) -> BoxFuture<'a, Vec<WorkerEnd>>;
}
