//! A sweep's settings, as resolved from its command line, stored in sweep.json.

use serde::{Deserialize, Serialize};

use super::StabilityRule;
use crate::run::template::RunTemplate;

/// Everything that decides what a sweep does, stored in sweep.json as its settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepSettings {
    /// The settings every step shares; each sets its own concurrency, warmup and length
    /// ([`RunTemplate::run`]).
    pub run: RunTemplate,
    /// `--concurrency` as given.
    pub concurrency: String,
    /// The concurrencies it gives, in order.
    pub concurrencies: Vec<usize>,
    /// `--step-duration`: each step's fixed measured seconds, instead of until stable.
    pub step_duration_s: Option<f64>,
    /// `--stable-error`, as a fraction.
    pub stable_error: f64,
    /// The shortest measured part of a step run until stable, seconds.
    pub step_min_s: f64,
    /// The longest measured part of a step run until stable, seconds.
    pub step_max_s: f64,
    /// Warmup of each step, seconds.
    pub warmup_s: f64,
}

impl SweepSettings {
    /// The stability rule of steps run until stable.
    pub fn stability(&self) -> StabilityRule {
        StabilityRule {
            target: self.stable_error,
            min_intervals: (self.step_min_s / self.run.interval_s).round() as usize,
        }
    }

    /// How each step is measured, in words.
    pub fn describe_steps(&self) -> String {
        match self.step_duration_s {
            Some(d) => format!("{} s warmup + {d} s each", self.warmup_s),
            None => format!(
                "{} s warmup + until the throughput is stable to ±{:.1}% ({}-{} s)",
                self.warmup_s,
                self.stable_error * 100.0,
                self.step_min_s,
                self.step_max_s
            ),
        }
    }
}
