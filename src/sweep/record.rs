//! What a sweep keeps in its directory: sweep.json, rewritten after every step, with the
//! settings, one record per step and why the sweep stopped. The report reads it back.

use std::fs;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::catalogue::{SWEEP_JSON, TMP};
use crate::results::summary::Latency;

/// How one step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepEnd {
    /// Its throughput was stable (see [`super::StabilityRule`]).
    Stable,
    /// It reached the longest step (`--step-max`) without being stable.
    Longest,
    /// It ran for the fixed `--step-duration`.
    Fixed,
    /// Ctrl-C or SIGTERM ended it; what it measured is kept but not compared.
    Interrupted,
    /// It could not run, or no request of its measured part succeeded.
    Failed,
}

impl StepEnd {
    /// Whether the step measured what it was meant to, so that it counts for the stop rule
    /// and the charts.
    pub fn is_complete(self) -> bool {
        matches!(self, StepEnd::Stable | StepEnd::Longest | StepEnd::Fixed)
    }

    /// A word for the table.
    pub fn word(self) -> &'static str {
        match self {
            StepEnd::Stable => "stable",
            StepEnd::Longest => "not stable",
            StepEnd::Fixed => "fixed",
            StepEnd::Interrupted => "interrupted",
            StepEnd::Failed => "FAILED",
        }
    }
}

/// One step of a sweep: a closed-loop run at one concurrency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Requests in flight.
    pub concurrency: usize,
    /// How the step ended.
    pub end: StepEnd,
    /// Requests of the measured part (successful or not) per second of it.
    pub achieved_per_s: f64,
    /// Requests of the measured part, successful or not.
    pub requests: u64,
    /// Failed requests of the measured part.
    pub errors: u64,
    /// Length of the measured part, seconds.
    pub measured_s: f64,
    /// Whole intervals of the measured part, whose throughputs the stability rule judged.
    pub intervals: usize,
    /// The relative standard error of the mean of those throughputs.
    pub relative_error: Option<f64>,
    /// (mean of the second half − mean of the first half) ÷ mean, of those throughputs.
    pub drift: Option<f64>,
    /// Service time of the successful measured requests, every operation type together
    /// (closed loop: equal to the response time, and blind to stalls).
    pub service_time: Latency,
    /// The step's run directory, relative to the sweep's.
    pub dir: String,
    /// Wall-clock seconds of the whole step, connecting and warmup included.
    pub wall_s: f64,
    /// Why the step failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Where a sweep stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepStatus {
    /// Steps are still running (or the process died).
    Running,
    /// It stopped by one of its rules.
    Completed,
    /// Ctrl-C or SIGTERM stopped it.
    Interrupted,
    /// A step failed entirely.
    Failed,
}

/// Why a sweep stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum SweepStop {
    /// The average improvement over the last `steps` steps was ≤ 0.
    NoImprovement {
        /// Steps averaged over.
        steps: usize,
        /// The average relative improvement.
        average: f64,
    },
    /// The average improvement over the last `steps` steps was below `below`.
    SmallImprovement {
        /// Steps averaged over.
        steps: usize,
        /// The average relative improvement.
        average: f64,
        /// The least improvement worth another step.
        below: f64,
    },
    /// Every concurrency of the ladder ran.
    LastConcurrency {
        /// The last concurrency.
        concurrency: usize,
    },
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// A step failed entirely.
    StepFailed {
        /// Its concurrency.
        concurrency: usize,
        /// Why.
        error: String,
    },
}

impl SweepStop {
    /// One sentence for people.
    pub fn describe(&self) -> String {
        match self {
            SweepStop::NoImprovement { steps, average } => format!(
                "the throughput stopped improving: over the last {steps} steps it changed by \
                 {:+.1}% a step on average (the sweep stops at 0% or less)",
                average * 100.0
            ),
            SweepStop::SmallImprovement {
                steps,
                average,
                below,
            } => format!(
                "the throughput barely improved: over the last {steps} steps it grew by \
                 {:+.1}% a step on average, less than {:.1}%",
                average * 100.0,
                below * 100.0
            ),
            SweepStop::LastConcurrency { concurrency } => {
                format!("every concurrency ran, up to {concurrency}")
            }
            SweepStop::Interrupted => "interrupted (Ctrl-C or SIGTERM)".to_string(),
            SweepStop::StepFailed { concurrency, error } => {
                format!("the step at concurrency {concurrency} failed: {error}")
            }
        }
    }
}

/// sweep.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepFile {
    /// headroom's version.
    pub headroom_version: String,
    /// The workload's name.
    pub workload: String,
    /// What the latencies are.
    pub latency_kind: String,
    /// The sweep's settings, as resolved from its command line.
    pub settings: super::settings::SweepSettings,
    /// Where the sweep stands.
    pub status: SweepStatus,
    /// Why it stopped, once it did.
    pub stop: Option<SweepStop>,
    /// The steps run, in order.
    pub steps: Vec<StepRecord>,
}

impl SweepFile {
    /// Writes DIR/sweep.json whole: to a temporary file first, then renamed over the old
    /// one, so that a reader (or a crash) never sees half a file.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let path = dir.join(SWEEP_JSON);
        let temporary = dir.join(format!("{SWEEP_JSON}{TMP}"));
        let text = serde_json::to_string_pretty(self).expect("serializable") + "\n";
        fs::write(&temporary, text).with_context(|| format!("writing {}", temporary.display()))?;
        fs::rename(&temporary, &path).with_context(|| format!("writing {}", path.display()))
    }

    /// Reads DIR/sweep.json.
    pub fn read(dir: &Path) -> anyhow::Result<SweepFile> {
        let path = dir.join(SWEEP_JSON);
        let text = crate::usage::read_bounded_text(&path, crate::usage::MAX_INPUT_FILE_BYTES)
            .with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
    }

    /// The steps that measured what they were meant to.
    pub fn complete_steps(&self) -> impl Iterator<Item = &StepRecord> {
        self.steps.iter().filter(|s| s.end.is_complete())
    }
}
