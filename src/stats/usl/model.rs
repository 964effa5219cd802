//! The Universal Scalability Law itself: the model `C(N) = λN / (1 + σ(N−1) + κN(N−1))`
//! ([`Usl`]: capacity, peak, ceiling and nodes for a load), what it is fitted to
//! ([`Observation`], [`Settings`]), and a value with its interval ([`Estimate`]).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Default number of bootstrap resamples.
pub const DEFAULT_RESAMPLES: u32 = 2000;
/// Default confidence level of the intervals.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;
/// Least relative gain over the smallest size, within the measured range, that is growth.
pub const MIN_GROWTH: f64 = 0.01;

pub(super) const MIN_RESAMPLES: u32 = 100;
pub(super) const LAMBDA_MIN: f64 = 1e-12;
pub(super) const MAX_ITERATIONS: usize = 500;

/// One measured capacity: one repeat or search of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// Cluster size; an observation of 0 nodes counts as failed.
    pub nodes: u32,
    /// Capacity found, operations per second; `None` (or a value that is not a positive
    /// finite number) when the configuration failed or found no capacity.
    pub capacity_per_s: Option<f64>,
    /// Where it came from (a run or search directory, say), named in statements.
    pub label: String,
}

/// How [`analyze`] runs its bootstrap.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Bootstrap resamples (at least 100 are run).
    pub resamples: u32,
    /// Confidence level of the percentile intervals, clamped to `[0.5, 0.999]`.
    pub confidence: f64,
    /// Seed of the resampling.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            resamples: DEFAULT_RESAMPLES,
            confidence: DEFAULT_CONFIDENCE,
            seed: 0,
        }
    }
}

/// The USL curve with given parameters (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Usl {
    /// λ, operations per second of one node without coordination cost.
    pub lambda_per_s: f64,
    /// σ, contention, in `[0, 1]`.
    pub sigma: f64,
    /// κ, coherency, `≥ 0`.
    pub kappa: f64,
}

impl Usl {
    pub(super) fn to_array(self) -> [f64; 3] {
        [self.lambda_per_s, self.sigma, self.kappa]
    }

    pub(super) fn from_array([lambda_per_s, sigma, kappa]: [f64; 3]) -> Self {
        Usl {
            lambda_per_s,
            sigma,
            kappa,
        }
    }

    /// `C(N)`; 0 for `N ≤ 0`.
    pub fn capacity_per_s(&self, nodes: f64) -> f64 {
        if nodes <= 0.0 {
            return 0.0;
        }
        let d = 1.0 + self.sigma * (nodes - 1.0) + self.kappa * nodes * (nodes - 1.0);
        self.lambda_per_s * nodes / d
    }

    /// `N* = sqrt((1−σ)/κ)`, where capacity peaks; `None` when `κ = 0` (nodes always pay).
    pub fn peak_nodes(&self) -> Option<f64> {
        (self.kappa > 0.0).then(|| ((1.0 - self.sigma).max(0.0) / self.kappa).sqrt())
    }

    /// The most capacity for `N ≥ 1`: `C(N*)`, or with `κ = 0` the limit `λ/σ` (approached,
    /// never reached); `None` when `σ = κ = 0` (no limit).
    pub fn ceiling_per_s(&self) -> Option<f64> {
        match self.peak_nodes() {
            Some(peak) => Some(self.capacity_per_s(peak.max(1.0))),
            None => (self.sigma > 0.0).then(|| self.lambda_per_s / self.sigma),
        }
    }

    /// The smallest whole `N ≥ 1` with `C(N) ≥ target_per_s` (1 for a target ≤ 0); `None`
    /// when no size up to `u32::MAX` reaches it. `C` rises up to the whole sizes around `N*`
    /// (to `u32::MAX` when `κ = 0`): a binary search below the better of them finds it.
    pub fn nodes_for(&self, target_per_s: f64) -> Option<u32> {
        let reaches = |n: u32| self.capacity_per_s(f64::from(n)) >= target_per_s;
        let whole = |p: f64| p.clamp(1.0, f64::from(u32::MAX)) as u32;
        let tops = match self.peak_nodes() {
            Some(p) => [whole(p.ceil()), whole(p.floor())],
            None => [u32::MAX; 2],
        };
        let (mut lo, mut hi) = (1, tops.into_iter().find(|&n| reaches(n))?);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match reaches(mid) {
                true => hi = mid,
                false => lo = mid + 1,
            }
        }
        Some(hi)
    }
}

/// A value with its bootstrap percentile interval `[low, high]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The estimate from the fit to all the data.
    pub value: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
}

/// One of the three USL parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Parameter {
    /// λ
    Lambda,
    /// σ
    Sigma,
    /// κ
    Kappa,
}

impl fmt::Display for Parameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(["λ", "σ", "κ"][*self as usize])
    }
}
