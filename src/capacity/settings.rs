//! search.json: a capacity search's settings, stored when it starts so that `--resume`
//! continues with the same ones, and copied into capacity.json.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::rates::Rates;
use super::search::{RatePlan, SearchPlan};
use crate::run::template::RunTemplate;
use crate::sla::Sla;

/// How each trial of a search begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fresh {
    /// Restart the local cluster headroom started, with its data deleted.
    Restart,
    /// Truncate the workload's tables.
    Truncate,
    /// Keep the data of earlier trials.
    None,
}

/// Everything that decides what a search does, stored as search.json so that `--resume`
/// continues with the same settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchSettings {
    /// The settings every probe and trial shares; each sets its own rate or concurrency,
    /// warmup, length and SLA ([`RunTemplate::run`]).
    pub run: RunTemplate,
    /// The SLA every window must meet (stored as its canonical terms and its window).
    #[serde(with = "crate::sla::stored")]
    pub sla: Sla,
    /// `--rates` and `--resolution`, stored as given.
    #[serde(flatten)]
    pub rates: Rates,
    /// Runs per attempted rate.
    pub repeats: u32,
    /// Measured seconds per trial.
    pub duration_s: f64,
    /// Warmup seconds per trial.
    pub warmup_s: f64,
    /// In-flight requests of the closed-loop probe.
    pub probe_concurrency: usize,
    /// Measured seconds of the probe.
    pub probe_duration_s: f64,
    /// How each trial begins.
    pub fresh: Fresh,
    /// The local cluster to restart, for `--fresh restart`; otherwise the one given with
    /// `--cluster-dir`, whose server pauses the trials record when they load it.
    pub cluster_dir: Option<PathBuf>,
    /// The search's name in reports and comparisons (`--label`, or a matrix's configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// With `--rates auto`: climb the ladder by fractions of this rate instead of the probe's
    /// (a matrix gives every configuration the first one's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder_base_per_s: Option<f64>,
    /// Nodes of the tested cluster: a matrix's local cluster, or `--nodes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    /// The local cluster tested, described, when headroom started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// `--workers N --launcher ...`: every probe and trial is run by a fleet of worker
    /// processes and merged; `None`: by this process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<crate::fleet::settings::FleetSettings>,
    /// `--degraded 1` (or a matrix's `degraded=1`): the node of the local cluster kept down
    /// in every probe and trial; `None`: every node up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<super::degraded::Degraded>,
    /// `--goal interval`: the capacity as bounds at a confidence (decision 0019); `None`:
    /// every window of every repeat must pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<super::interval::IntervalGoal>,
}

impl SearchSettings {
    /// Reads the settings a search directory holds.
    pub fn read(dir: &Path) -> anyhow::Result<SearchSettings> {
        crate::results::read_json(&dir.join(crate::catalogue::SEARCH_JSON))
    }

    /// The search's plan.
    pub fn plan(&self) -> SearchPlan {
        SearchPlan {
            plan: self.rates.plan().clone(),
            repeats: self.repeats,
            ladder_base_per_s: self.ladder_base_per_s,
            interval: self.interval,
        }
    }

    /// A rough length of the whole search, for the user to plan by.
    pub fn estimate(&self) -> Duration {
        if self.interval.is_some() {
            return self.estimate_range().1;
        }
        let settings = self.plan();
        let trials = super::estimate_trials(&settings) as f64;
        // Connecting, schema checks and writing files: a few seconds per trial.
        let per_trial =
            self.warmup_s + self.duration_s + 3.0 + self.fresh_cost_s() + self.down_cost_s();
        let probe = match settings.plan {
            RatePlan::Auto { .. } => self.probe_duration_s * 1.25 + 3.0,
            RatePlan::Ladder(_) => 0.0,
        };
        Duration::from_secs_f64(trials * per_trial + probe)
    }

    /// The shortest and longest likely length of the search: for `--goal interval`, the
    /// simulated searches' medians (docs/capacity.md) of a sharp and of a gradual knee, about
    /// 8 short trials and 10 to 20 full ones (fewer when the goal allows fewer trials);
    /// otherwise [`Self::estimate`] twice.
    pub fn estimate_range(&self) -> (Duration, Duration) {
        let Some(goal) = &self.interval else {
            let one = self.estimate();
            return (one, one);
        };
        let window_s = self.duration_s / f64::from(goal.windows_per_trial.max(1));
        let short_s = (window_s * f64::from(super::interval::SHORT_WINDOWS)).min(self.duration_s);
        let overhead = self.warmup_s + 3.0 + self.fresh_cost_s() + self.down_cost_s();
        let probe = self.probe_duration_s * 1.25 + 3.0;
        let shorts = 8.0 * (short_s + overhead);
        let full = |trials: f64| trials * (self.duration_s + overhead);
        // The rest of the goal's trials, at most.
        let most = (goal.max_trials as f64 - 8.0).clamp(1.0, 20.0);
        (
            Duration::from_secs_f64(probe + shorts + full(most.min(10.0))),
            Duration::from_secs_f64(probe + shorts + full(most)),
        )
    }

    /// A node stopped before each run (it drains), started again after it and its hints
    /// delivered: about 35 s on the development machine.
    fn down_cost_s(&self) -> f64 {
        if self.degraded.is_some() {
            35.0
        } else {
            0.0
        }
    }

    fn fresh_cost_s(&self) -> f64 {
        let populate = self.run.workload.populate as f64 / 5000.0;
        match self.fresh {
            Fresh::Restart => 15.0 + populate,
            Fresh::Truncate => 2.0 + populate,
            Fresh::None => 0.0,
        }
    }
}
