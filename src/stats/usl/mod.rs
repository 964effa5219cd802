//! How capacity scales with cluster size: Gunther's Universal Scalability Law (USL) fitted
//! to capacities measured at several node counts, and what such a fit cannot tell.
//!
//! **Model.** `C(N) = λN / (1 + σ(N−1) + κN(N−1))` operations per second for `N` nodes.
//! `λ > 0` is one node's capacity without coordination cost. `σ ∈ [0, 1]` is contention, the
//! share of work waiting on something shared: below 0 the curve would be superlinear (a
//! caching or measurement artefact), at 1 the work is fully serialised, above 1 it would be
//! more than all of it. `κ ≥ 0` is coherency, the pairwise cost of keeping nodes agreed (a
//! negative κ would grow faster than linearly). With `κ > 0` capacity peaks at
//! `N* = sqrt((1−σ)/κ)`, where adding nodes stops paying; with `κ = 0` it approaches `λ/σ`.
//!
//! **Fit.** Least squares on `C` itself, one point per observation: Levenberg–Marquardt,
//! each step projected onto the bounds, a parameter held on a bound the gradient pushes
//! against, from the linearised `N/C = a + b(N−1) + cN(N−1)` (`a = 1/λ`, `b = σ/λ`, `c = κ/λ`;
//! all terms, without κ, without σ) and from `λ = max C/N`, `σ = κ = 0`. The lowest sum of
//! squares wins; a value on a bound is an answer.
//!
//! **Bootstrap.** Percentile intervals over refits of resampled data, seeded (same seed,
//! data and `rand` version, same result). When every size has repeats, observations are
//! resampled within each size ([`Bootstrap::Stratified`]), deviations from the size's mean
//! scaled by `sqrt(m/(m−1))` to undo the shrinkage of resampling `m` values; otherwise the
//! fit's residuals (centred, scaled by `sqrt(n/(n−3))`) are resampled onto the fitted values
//! ([`Bootstrap::Residual`]). With three repeats per size, simulated coverage of a nominal
//! 95% interval is about 90%: few repeats make narrow intervals.
//!
//! **Statements.** A wrong number is worse than none: where the data cannot answer, a
//! [`Statement`] says so. Refusals ([`Analysis::NoModel`]): fewer than three sizes with a
//! capacity (with the linear per-node figure unless capacity fell); three observations in
//! all, which leave no spread to judge the fit by; capacity that does not grow, when the
//! fitted best over the measured range is under [`MIN_GROWTH`] above the smallest size's or
//! a tail share of bootstrap fits show no growth (σ near 1, or `N*` at or below the smallest
//! size): [`Statement::FallingCapacity`] if the largest size measured below the smallest
//! and the bootstrap agrees, else [`Statement::NoGrowth`]. Caveats ([`Fit::notes`]): a size
//! whose every observation failed, left out of the fit and refused by [`Fit::predict`] (a
//! refusal if fewer than three sizes remain); failed repeats; a peak inside the measured
//! range followed by capacity below the smallest size's; and parameters the data cannot pin
//! down ([`Statement::Unpinned`]: for σ or κ an interval wider than the estimate, for λ one
//! wider than λ or reaching its bound), after which the model gives no prediction, peak or
//! node count outside the measured range.
//!
//! The numerical core, the bounded Levenberg–Marquardt, is [`least_squares`];
//! docs/decisions/0016-a-hand-written-usl-fit.md says why it is written here rather than
//! taken from a crate.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

mod least_squares;

use least_squares::fit_usl;

/// Default number of bootstrap resamples.
pub const DEFAULT_RESAMPLES: u32 = 2000;
/// Default confidence level of the intervals.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;
/// Least relative gain over the smallest size, within the measured range, that is growth.
pub const MIN_GROWTH: f64 = 0.01;

const MIN_RESAMPLES: u32 = 100;
const LAMBDA_MIN: f64 = 1e-12;
const MAX_ITERATIONS: usize = 500;

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
    fn to_array(self) -> [f64; 3] {
        [self.lambda_per_s, self.sigma, self.kappa]
    }

    fn from_array([lambda_per_s, sigma, kappa]: [f64; 3]) -> Self {
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

/// Which bootstrap gave the intervals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bootstrap {
    /// Observations resampled within each size: every size had repeats.
    Stratified,
    /// Residuals of the fit resampled onto the fitted values: some size had one observation.
    Residual,
}

/// Where adding nodes stops paying, in the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Peak {
    /// `N*` with its interval, and `C(N*)`; `high_nodes` is `None` when so many bootstrap
    /// fits had `κ = 0` that the interval has no upper end.
    At {
        /// `N*`.
        nodes: f64,
        /// The interval's lower end.
        low_nodes: f64,
        /// The interval's upper end, if it has one.
        high_nodes: Option<f64>,
        /// `C(N*)`.
        capacity_per_s: f64,
    },
    /// `κ = 0`: never within the model; capacity nears `ceiling_per_s = λ/σ` (none if σ = 0).
    Never {
        /// `λ/σ`; `None` when σ = 0.
        ceiling_per_s: Option<f64>,
    },
    /// Beyond the measured range, where the data cannot pin the parameters (see the notes).
    Withheld,
}

/// What the data can or cannot say: a sentence through `Display`, its figures as fields.
/// `measured_nodes` is the measured range, `[smallest, largest]` size with a capacity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "statement", rename_all = "snake_case")]
pub enum Statement {
    /// Fewer than three sizes have a capacity (those are `nodes`); the linear rule's figure
    /// (see [`Fit::per_node_capacity_per_s`]) unless capacity fell between two sizes.
    TooFewSizes {
        /// The sizes with a capacity.
        nodes: Vec<u32>,
        /// The linear rule's capacity per node.
        per_node_capacity_per_s: Option<f64>,
    },
    /// Every observation of this size failed.
    FailedSize {
        /// The size.
        nodes: u32,
        /// Its configurations' names.
        labels: Vec<String>,
    },
    /// Some observations of this size failed; the fit uses the others.
    PartlyFailedSize {
        /// The size.
        nodes: u32,
        /// How many of its observations failed.
        failed: usize,
    },
    /// Capacity does not grow with nodes over the measured range.
    NoGrowth {
        /// The measured range.
        measured_nodes: [u32; 2],
    },
    /// The largest size's mean capacity (second) is below the smallest's (first).
    FallingCapacity {
        /// The measured range.
        measured_nodes: [u32; 2],
        /// The smallest and the largest size's mean capacity.
        capacity_per_s: [f64; 2],
    },
    /// As many observations as parameters: the fit is exact, its uncertainty unknown.
    NoSpread {
        /// How many observations there were.
        observations: usize,
    },
    /// The data cannot pin these parameters: no answer outside the measured range.
    Unpinned {
        /// The parameters.
        parameters: Vec<Parameter>,
        /// The measured range.
        measured_nodes: [u32; 2],
    },
    /// No size reaches the target; the model never exceeds [`Usl::ceiling_per_s`].
    TargetUnreachable {
        /// The load to carry.
        target_per_s: f64,
        /// The model's highest capacity, if it has one.
        ceiling_per_s: Option<f64>,
    },
}

fn list<T: fmt::Display>(items: &[T]) -> String {
    let items: Vec<String> = items.iter().map(ToString::to_string).collect();
    if items.is_empty() {
        return "none".into();
    }
    items.join(", ")
}

impl fmt::Display for Statement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Statement::*;
        match self {
            TooFewSizes {
                nodes,
                per_node_capacity_per_s: per_node,
            } => {
                if nodes.is_empty() {
                    return f.write_str("no size has a capacity: nothing to fit");
                }
                let (count, at) = (nodes.len(), list(nodes));
                let noun = if count == 1 { "size" } else { "sizes" };
                write!(f, "{count} {noun} cannot fit three parameters (λ, σ, κ): ")?;
                write!(f, "measure at least three cluster sizes (N={at})")?;
                let Some(per_node) = per_node else {
                    return Ok(());
                };
                write!(f, "; linear rule only: {per_node:.1}/s per node")
            }
            FailedSize { nodes, labels } => {
                let labels = list(labels);
                write!(f, "N={nodes} found no capacity in any observation ")?;
                write!(f, "({labels}: every rate failed, or no verdict); left out")
            }
            PartlyFailedSize { nodes, failed } => {
                write!(f, "N={nodes}: {failed} failed repeat(s) left out")
            }
            NoGrowth { measured_nodes: m } => {
                let [a, b] = m;
                write!(f, "capacity does not grow with nodes over N={a}..{b}")
            }
            FallingCapacity {
                measured_nodes: m,
                capacity_per_s: c,
            } => {
                let ([a, b], [ca, cb]) = (m, c);
                f.write_str("adding nodes lowered capacity over the measured range: ")?;
                write!(f, "{ca:.0}/s at N={a}, {cb:.0}/s at N={b}")
            }
            NoSpread { observations: n } => {
                write!(f, "{n} observations fit three parameters exactly, leaving ")?;
                f.write_str("no spread to judge the fit by: repeat each size or add one")
            }
            Unpinned {
                parameters,
                measured_nodes: m,
            } => {
                let ([a, b], parameters) = (m, list(parameters));
                write!(f, "the data cannot pin down {parameters} (intervals ")?;
                f.write_str("wider than the estimates): no prediction outside ")?;
                write!(f, "the measured range N={a}..{b}")
            }
            TargetUnreachable {
                target_per_s: t,
                ceiling_per_s: c,
            } => {
                write!(f, "no cluster size reaches the target {t:.0}/s")?;
                let Some(c) = c else { return Ok(()) };
                write!(f, ": the model's capacity never exceeds {c:.0}/s")
            }
        }
    }
}

/// The outcome of [`analyze`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Analysis {
    /// A fitted model; its caveats are in [`Fit::notes`].
    Fitted(Box<Fit>),
    /// No model: the refusal first, then notes on the data.
    NoModel {
        /// Why, each a sentence.
        statements: Vec<Statement>,
    },
}

/// A fitted USL with bootstrap percentile intervals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    /// λ, operations per second.
    pub lambda_per_s: Estimate,
    /// σ.
    pub sigma: Estimate,
    /// κ.
    pub kappa: Estimate,
    /// Where adding nodes stops paying.
    pub peak: Peak,
    /// The linear rule, for contrast: the largest size's mean capacity over its nodes (the
    /// most coordination cost measured: the least optimistic linear extrapolation of the
    /// data); its answer for a target is `ceil(target / per_node_capacity_per_s)` nodes.
    pub per_node_capacity_per_s: f64,
    /// Which bootstrap gave the intervals.
    pub bootstrap: Bootstrap,
    /// Confidence level of the intervals.
    pub confidence: f64,
    /// Smallest and largest size with a capacity.
    pub measured_nodes: [u32; 2],
    /// Parameters the data cannot pin down (empty when all are pinned).
    pub unpinned: Vec<Parameter>,
    /// Caveats (see the module doc).
    pub notes: Vec<Statement>,
    /// Every bootstrap fit; intervals of predictions and node counts come from these. Not
    /// written to files (2000 fits): a fit read back predicts no intervals.
    #[serde(skip)]
    pub bootstrap_fits: Vec<Usl>,
}

/// The answer of [`Fit::nodes_for`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodesFor {
    /// Smallest size whose predicted capacity reaches the target; `None` with a note.
    pub nodes: Option<u32>,
    /// Lower end of its interval over the bootstrap fits (`None` when `nodes` is).
    pub low_nodes: Option<u32>,
    /// Upper end; `None` also when enough bootstrap fits never reach the target.
    pub high_nodes: Option<u32>,
    /// The linear rule's answer (see [`Fit::per_node_capacity_per_s`]).
    pub linear_nodes: Option<u32>,
    /// Why there is no answer, or what to mind about it.
    pub notes: Vec<Statement>,
}

impl Fit {
    /// The fitted curve.
    pub fn model(&self) -> Usl {
        Usl::from_array([&self.lambda_per_s, &self.sigma, &self.kappa].map(|e| e.value))
    }

    fn measured(&self, nodes: f64) -> bool {
        let [a, b] = self.measured_nodes;
        nodes >= f64::from(a) && nodes <= f64::from(b)
    }

    fn note(&self, wanted: impl Fn(&Statement) -> bool) -> Option<Statement> {
        self.notes.iter().find(|s| wanted(s)).cloned()
    }

    fn failed(&self, nodes: u32) -> Option<Statement> {
        self.note(|s| matches!(s, Statement::FailedSize { nodes: n, .. } if *n == nodes))
    }

    fn unpinned_note(&self) -> Option<Statement> {
        self.note(|s| matches!(s, Statement::Unpinned { .. }))
    }

    /// Predicted capacity of `nodes`, tested or not, with its bootstrap interval. Refused
    /// (with the reason) for a size whose configuration failed, and outside the measured
    /// range when some parameter is unpinned.
    pub fn predict(&self, nodes: u32) -> Result<Estimate, Statement> {
        let n = f64::from(nodes);
        if let Some(failed) = self.failed(nodes) {
            return Err(failed);
        }
        if let Some(unpinned) = self.unpinned_note().filter(|_| !self.measured(n)) {
            return Err(unpinned);
        }
        let values = self.bootstrap_fits.iter().map(|u| u.capacity_per_s(n));
        let (low, high) = interval(values.collect(), self.confidence);
        let value = self.model().capacity_per_s(n);
        Ok(Estimate { value, low, high })
    }

    /// The smallest size whose predicted capacity reaches `target_per_s`, with its interval
    /// over the bootstrap fits, and the linear rule's answer for contrast.
    pub fn nodes_for(&self, target_per_s: f64) -> NodesFor {
        let linear = (target_per_s / self.per_node_capacity_per_s).ceil();
        let linear_nodes = (linear <= f64::from(u32::MAX)).then(|| linear.max(1.0) as u32);
        let mut out = NodesFor {
            linear_nodes,
            ..NodesFor::default()
        };
        let model = self.model();
        let answer = model.nodes_for(target_per_s);
        // With unpinned parameters, only answers the measured range supports: a size in it,
        // or "none" because the peak itself lies in it.
        let supported = match answer {
            Some(n) => self.measured(f64::from(n)),
            None => model.peak_nodes().is_some_and(|p| self.measured(p)),
        };
        if let Some(unpinned) = self.unpinned_note().filter(|_| !supported) {
            out.notes.push(unpinned);
            return out;
        }
        let Some(n) = answer else {
            let ceiling_per_s = model.ceiling_per_s();
            let note = Statement::TargetUnreachable {
                target_per_s,
                ceiling_per_s,
            };
            out.notes.push(note);
            return out;
        };
        let draws = self.bootstrap_fits.iter();
        let values = draws.map(|u| u.nodes_for(target_per_s).map_or(f64::INFINITY, f64::from));
        let (low, high) = interval(values.collect(), self.confidence);
        out.nodes = Some(n);
        out.low_nodes = low.is_finite().then(|| low.floor() as u32);
        out.high_nodes = high.is_finite().then(|| high.ceil() as u32);
        out.notes.extend(self.failed(n));
        out
    }
}

/// Fits the USL to `observations` and bootstraps its intervals, or says why it cannot.
/// 2000 resamples of a few dozen observations take some tens of milliseconds.
pub fn analyze(observations: &[Observation], settings: &Settings) -> Analysis {
    // Per size: the capacities found, and the labels of the observations that found none.
    let mut groups: BTreeMap<u32, (Vec<f64>, Vec<String>)> = BTreeMap::new();
    for o in observations {
        let group = groups.entry(o.nodes).or_default();
        match o.capacity_per_s {
            Some(c) if o.nodes > 0 && c.is_finite() && c > 0.0 => group.0.push(c),
            _ => group.1.push(o.label.clone()),
        }
    }
    let (mut notes, mut measured) = (Vec::new(), Vec::new());
    for (&nodes, (caps, labels)) in &groups {
        let failed = labels.len();
        if caps.is_empty() {
            let labels = labels.clone();
            notes.push(Statement::FailedSize { nodes, labels });
            continue;
        } else if failed > 0 {
            notes.push(Statement::PartlyFailedSize { nodes, failed });
        }
        measured.push((nodes, &caps[..]));
    }
    let refuse = |first: Vec<Statement>, notes: Vec<Statement>| {
        let statements = first.into_iter().chain(notes).collect();
        Analysis::NoModel { statements }
    };
    let ends = measured.first().zip(measured.last());
    let (&(a, caps_a), &(b, caps_b)) = match ends {
        Some(ends) if measured.len() >= 3 => ends,
        _ => {
            let nodes = measured.iter().map(|m| m.0).collect();
            let falls = ends.filter(|(a, b)| measured.len() == 2 && mean(b.1) < mean(a.1));
            let per_node = ends
                .filter(|_| falls.is_none())
                .map(|(_, b)| mean(b.1) / f64::from(b.0));
            let falls = falls.map(|(a, b)| falling([a.0, b.0], [mean(a.1), mean(b.1)]));
            let first = Statement::TooFewSizes {
                nodes,
                per_node_capacity_per_s: per_node,
            };
            return refuse([first].into_iter().chain(falls).collect(), notes);
        }
    };
    let (measured_nodes, means) = ([a, b], [mean(caps_a), mean(caps_b)]);

    let (mut xs, mut ys, mut strata) = (Vec::new(), Vec::new(), Vec::<Range<usize>>::new());
    for &(nodes, caps) in &measured {
        let start = ys.len();
        ys.extend_from_slice(caps);
        xs.resize(ys.len(), f64::from(nodes));
        strata.push(start..ys.len());
    }
    let model = fit_usl(&xs, &ys);
    let fitted: Vec<f64> = xs.iter().map(|&x| model.capacity_per_s(x)).collect();
    let residuals: Vec<f64> = ys.iter().zip(&fitted).map(|(y, f)| y - f).collect();
    let bootstrap = match measured.iter().all(|m| m.1.len() > 1) {
        true => Bootstrap::Stratified,
        false => Bootstrap::Residual,
    };
    if bootstrap == Bootstrap::Residual && ys.len() <= 3 {
        let observations = ys.len();
        return refuse(vec![Statement::NoSpread { observations }], notes);
    }

    // The bootstrap; every refit is finite, the data being finite and the starts bounded.
    let mut rng = SmallRng::seed_from_u64(settings.seed);
    let n = ys.len() as f64;
    let (centre, scale) = (mean(&residuals), (n / (n - 3.0)).sqrt());
    let pool: Vec<f64> = residuals.iter().map(|r| (r - centre) * scale).collect();
    let mut resampled = ys.clone();
    let mut draws = Vec::new();
    for _ in 0..settings.resamples.max(MIN_RESAMPLES) {
        match bootstrap {
            Bootstrap::Stratified => {
                for range in &strata {
                    let m = range.len() as f64;
                    let (centre, inflate) = (mean(&ys[range.clone()]), (m / (m - 1.0)).sqrt());
                    for i in range.clone() {
                        let y = ys[rng.random_range(range.clone())];
                        resampled[i] = centre + (y - centre) * inflate;
                    }
                }
            }
            Bootstrap::Residual => {
                for (r, f) in resampled.iter_mut().zip(&fitted) {
                    *r = f + pool[rng.random_range(0..pool.len())];
                }
            }
        }
        draws.push(fit_usl(&xs, &resampled));
    }
    let confidence = match settings.confidence {
        c if c.is_nan() => DEFAULT_CONFIDENCE,
        c => c.clamp(0.5, 0.999),
    };
    let spread = |f: &dyn Fn(&Usl) -> f64| interval(draws.iter().map(f).collect(), confidence);

    // Growth over the measured range, in the fit and across the bootstrap fits.
    let (af, bf) = (f64::from(a), f64::from(b));
    let gain = |u: &Usl| {
        let best = match u.peak_nodes() {
            Some(p) if p > af && p < bf => u.capacity_per_s(p),
            _ => u.capacity_per_s(af).max(u.capacity_per_s(bf)),
        };
        best / u.capacity_per_s(af)
    };
    let ratio = |u: &Usl| u.capacity_per_s(bf) / u.capacity_per_s(af);
    let falls = means[1] < means[0] && ratio(&model) < 1.0 && spread(&ratio).1 < 1.0;
    if gain(&model) < 1.0 + MIN_GROWTH || spread(&gain).0 <= 1.0 + 1e-9 {
        let first = match falls {
            true => falling(measured_nodes, means),
            false => Statement::NoGrowth { measured_nodes },
        };
        return refuse(vec![first], notes);
    }
    if falls {
        notes.push(falling(measured_nodes, means));
    }

    let [lambda, sigma, kappa] = [0, 1, 2].map(|i| {
        let (low, high) = spread(&|u| u.to_array()[i]);
        let value = model.to_array()[i];
        Estimate { value, low, high }
    });
    // Unpinned: an interval wider than its estimate (past a rounding tolerance); for λ also
    // one that reaches λ's lower bound, the stand-in for "includes 0".
    let wide = |e: &Estimate, tolerance: f64| e.high - e.low > e.value + tolerance;
    let lambda_loose = lambda.low <= LAMBDA_MIN || wide(&lambda, 1e-9 * lambda.value);
    let loose = [lambda_loose, wide(&sigma, 1e-9), wide(&kappa, 1e-12)];
    let mut unpinned = vec![Parameter::Lambda, Parameter::Sigma, Parameter::Kappa];
    unpinned.retain(|p| loose[*p as usize]);
    if !unpinned.is_empty() {
        let parameters = unpinned.clone();
        notes.push(Statement::Unpinned {
            parameters,
            measured_nodes,
        });
    }

    let (low, high) = spread(&|u| u.peak_nodes().unwrap_or(f64::INFINITY));
    let peak = match model.peak_nodes() {
        Some(p) if unpinned.is_empty() || p <= bf => {
            let high_nodes = high.is_finite().then_some(high);
            let capacity_per_s = model.capacity_per_s(p);
            Peak::At {
                nodes: p,
                low_nodes: low,
                high_nodes,
                capacity_per_s,
            }
        }
        None if unpinned.is_empty() => Peak::Never {
            ceiling_per_s: model.ceiling_per_s(),
        },
        _ => Peak::Withheld,
    };
    Analysis::Fitted(Box::new(Fit {
        lambda_per_s: lambda,
        sigma,
        kappa,
        peak,
        per_node_capacity_per_s: means[1] / bf,
        bootstrap,
        confidence,
        measured_nodes,
        unpinned,
        notes,
        bootstrap_fits: draws,
    }))
}

fn falling(measured_nodes: [u32; 2], capacity_per_s: [f64; 2]) -> Statement {
    Statement::FallingCapacity {
        measured_nodes,
        capacity_per_s,
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The percentile interval at `confidence`: linear interpolation between order statistics,
/// and an end next to an infinite value is infinite.
fn interval(mut values: Vec<f64>, confidence: f64) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let quantile = |p: f64| {
        let h = (values.len() - 1) as f64 * p;
        let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
        let (x, y) = (values[lo], values[hi]);
        match lo == hi || x == y || y.is_infinite() {
            true => y,
            false => x + (y - x) * (h - lo as f64),
        }
    };
    let tail = (1.0 - confidence) / 2.0;
    (quantile(tail), quantile(1.0 - tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, StandardNormal};

    const TRUE: Usl = Usl {
        lambda_per_s: 1000.0,
        sigma: 0.05,
        kappa: 0.002,
    };

    /// `repeats` observations of each size from `model`, with multiplicative normal noise.
    fn observe(
        model: Usl,
        sizes: &[u32],
        repeats: usize,
        noise: f64,
        seed: u64,
    ) -> Vec<Observation> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut out = Vec::new();
        for &n in sizes {
            for r in 0..repeats {
                let z: f64 = StandardNormal.sample(&mut rng);
                let capacity_per_s = Some(model.capacity_per_s(f64::from(n)) * (1.0 + noise * z));
                out.push(Observation {
                    nodes: n,
                    capacity_per_s,
                    label: format!("n{n}r{r}"),
                });
            }
        }
        out
    }

    /// One observation per `(nodes, capacity)` pair.
    fn points(points: &[(u32, f64)]) -> Vec<Observation> {
        let observation = |(i, &(nodes, c)): (usize, &(u32, f64))| Observation {
            nodes,
            capacity_per_s: Some(c),
            label: format!("obs{i}"),
        };
        points.iter().enumerate().map(observation).collect()
    }

    /// Exact capacities of `model` at `sizes`, one observation each.
    fn exact(model: Usl, sizes: impl IntoIterator<Item = u32>) -> Vec<Observation> {
        let pairs: Vec<(u32, f64)> = sizes
            .into_iter()
            .map(|n| (n, model.capacity_per_s(f64::from(n))))
            .collect();
        points(&pairs)
    }

    fn fitted(analysis: Analysis) -> Fit {
        match analysis {
            Analysis::Fitted(fit) => *fit,
            Analysis::NoModel { statements } => panic!("no model: {}", list(&statements)),
        }
    }

    fn refusal(analysis: Analysis) -> Vec<Statement> {
        match analysis {
            Analysis::NoModel { statements } => statements,
            Analysis::Fitted(fit) => panic!("expected no model, got {:?}", fit.model()),
        }
    }

    /// Fewer resamples than the default, for speed where the default is not the point.
    fn quick() -> Settings {
        Settings {
            resamples: 500,
            ..Settings::default()
        }
    }

    fn inside(e: &Estimate, truth: f64) -> bool {
        e.low <= truth && truth <= e.high
    }

    #[test]
    fn noisy_repeats_recover_the_true_parameters_within_their_intervals() {
        let obs = observe(TRUE, &[1, 2, 3, 4, 5, 6, 7, 8], 3, 0.02, 7);
        let fit = fitted(analyze(&obs, &Settings::default()));
        assert_eq!(fit.bootstrap, Bootstrap::Stratified);
        assert_eq!(fit.bootstrap_fits.len(), DEFAULT_RESAMPLES as usize);
        assert!(
            inside(&fit.lambda_per_s, 1000.0),
            "λ {:?}",
            fit.lambda_per_s
        );
        assert!(inside(&fit.sigma, 0.05), "σ {:?}", fit.sigma);
        assert!(inside(&fit.kappa, 0.002), "κ {:?}", fit.kappa);
        let e = &fit.lambda_per_s;
        assert!(
            e.low < e.value && e.value < e.high && e.high - e.low < 200.0,
            "{e:?}"
        );
    }

    #[test]
    fn intervals_cover_the_truth_across_data_sets() {
        let (trials, mut covered) = (20, [0; 3]);
        for seed in 0..trials {
            let obs = observe(TRUE, &[1, 2, 3, 4, 5, 6, 7, 8], 3, 0.02, 100 + seed);
            let settings = Settings {
                resamples: 400,
                seed,
                ..Settings::default()
            };
            let fit = fitted(analyze(&obs, &settings));
            let hits = [
                inside(&fit.lambda_per_s, 1000.0),
                inside(&fit.sigma, 0.05),
                inside(&fit.kappa, 0.002),
            ];
            for (c, hit) in covered.iter_mut().zip(hits) {
                *c += usize::from(hit);
            }
        }
        // Nominal 95%; about 90% with three repeats (see the module doc). 15 of 20 is far
        // below either, and far above what intervals that ignore the noise would reach.
        assert!(
            covered.iter().all(|&c| c >= 15),
            "covered {covered:?} of {trials}"
        );
    }

    #[test]
    fn noiseless_data_recovers_the_parameters_precisely() {
        let fit = fitted(analyze(&exact(TRUE, 1..=8), &quick()));
        assert_eq!(fit.bootstrap, Bootstrap::Residual);
        assert!(
            (fit.lambda_per_s.value - 1000.0).abs() < 1e-6,
            "{:?}",
            fit.lambda_per_s
        );
        assert!((fit.sigma.value - 0.05).abs() < 1e-9, "{:?}", fit.sigma);
        assert!((fit.kappa.value - 0.002).abs() < 1e-10, "{:?}", fit.kappa);
        assert!(fit.kappa.high - fit.kappa.low < 1e-9, "{:?}", fit.kappa);
        assert!(
            fit.unpinned.is_empty() && fit.notes.is_empty(),
            "{:?}",
            fit.notes
        );
        // Pinned parameters allow a prediction beyond the measured range.
        let e = fit.predict(12).unwrap();
        assert!((e.value - TRUE.capacity_per_s(12.0)).abs() < 1e-6, "{e:?}");
    }

    #[test]
    fn peak_is_sqrt_of_one_minus_sigma_over_kappa() {
        let p = TRUE.peak_nodes().unwrap();
        assert!((p - (0.95f64 / 0.002).sqrt()).abs() < 1e-12);
        let c = TRUE.capacity_per_s(p);
        assert!(c > TRUE.capacity_per_s(p - 0.01) && c > TRUE.capacity_per_s(p + 0.01));
        assert_eq!(TRUE.ceiling_per_s(), Some(c));

        let fit = fitted(analyze(&exact(TRUE, (4..=32).step_by(4)), &quick()));
        match fit.peak {
            Peak::At {
                nodes,
                low_nodes,
                high_nodes,
                capacity_per_s,
            } => {
                assert!((nodes - p).abs() < 1e-6, "{nodes}");
                assert!(low_nodes <= nodes && high_nodes.unwrap() >= nodes);
                assert!((capacity_per_s - c).abs() < 1e-6);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_coherency_cost_means_no_peak() {
        let linear = Usl {
            lambda_per_s: 500.0,
            sigma: 0.0,
            kappa: 0.0,
        };
        let amdahl = Usl {
            lambda_per_s: 500.0,
            sigma: 0.1,
            kappa: 0.0,
        };
        assert_eq!(
            (amdahl.peak_nodes(), amdahl.ceiling_per_s()),
            (None, Some(5000.0))
        );
        for (model, ceiling) in [(linear, None), (amdahl, Some(5000.0))] {
            let fit = fitted(analyze(&exact(model, 1..=6), &quick()));
            assert!(fit.kappa.value < 1e-12, "{:?}", fit.kappa);
            let Peak::Never { ceiling_per_s } = fit.peak else {
                panic!("{:?}", fit.peak)
            };
            assert_eq!(ceiling_per_s.is_some(), ceiling.is_some());
            if let (Some(got), Some(want)) = (ceiling_per_s, ceiling) {
                assert!((got - want).abs() < 1e-3, "{got}");
            }
        }
    }

    #[test]
    fn one_size_is_a_statement_with_the_linear_figure_only() {
        let statements = refusal(analyze(&points(&[(4, 3000.0), (4, 3200.0)]), &quick()));
        let expected = Statement::TooFewSizes {
            nodes: vec![4],
            per_node_capacity_per_s: Some(775.0),
        };
        assert_eq!(statements, vec![expected]);
        let text = statements[0].to_string();
        assert!(text.starts_with("1 size cannot fit three parameters (λ, σ, κ): measure at least three cluster sizes"), "{text}");
        assert!(
            text.ends_with("linear rule only: 775.0/s per node"),
            "{text}"
        );
    }

    #[test]
    fn two_sizes_give_the_linear_per_node_figure_only() {
        let obs = points(&[(2, 1900.0), (4, 3600.0), (4, 3640.0)]);
        let statements = refusal(analyze(&obs, &quick()));
        let expected = Statement::TooFewSizes {
            nodes: vec![2, 4],
            per_node_capacity_per_s: Some(905.0),
        };
        assert_eq!(statements, vec![expected]);
        assert!(statements[0]
            .to_string()
            .starts_with("2 sizes cannot fit three parameters (λ, σ, κ)"));
    }

    #[test]
    fn two_falling_sizes_give_no_linear_figure() {
        let statements = refusal(analyze(&points(&[(2, 3000.0), (4, 2500.0)]), &quick()));
        let too_few = Statement::TooFewSizes {
            nodes: vec![2, 4],
            per_node_capacity_per_s: None,
        };
        let falls = Statement::FallingCapacity {
            measured_nodes: [2, 4],
            capacity_per_s: [3000.0, 2500.0],
        };
        assert_eq!(statements, vec![too_few, falls]);
    }

    #[test]
    fn flat_capacity_is_a_statement() {
        let flat = Usl {
            lambda_per_s: 5000.0,
            sigma: 1.0,
            kappa: 0.0,
        };
        let obs = observe(flat, &[1, 2, 3, 4, 5, 6], 3, 0.02, 3);
        let statements = refusal(analyze(&obs, &quick()));
        assert_eq!(
            statements,
            vec![Statement::NoGrowth {
                measured_nodes: [1, 6]
            }]
        );
        assert_eq!(
            statements[0].to_string(),
            "capacity does not grow with nodes over N=1..6"
        );
        // Noiseless flat capacity, and a single observation per size.
        let statements = refusal(analyze(&exact(flat, 3..=7), &quick()));
        assert_eq!(
            statements,
            vec![Statement::NoGrowth {
                measured_nodes: [3, 7]
            }]
        );
    }

    #[test]
    fn falling_capacity_is_a_statement() {
        let pairs = [
            (3, 5000.0),
            (3, 5100.0),
            (4, 4500.0),
            (4, 4400.0),
            (5, 4000.0),
            (5, 4100.0),
            (6, 3500.0),
            (6, 3450.0),
        ];
        let statements = refusal(analyze(&points(&pairs), &quick()));
        let falls = Statement::FallingCapacity {
            measured_nodes: [3, 6],
            capacity_per_s: [5050.0, 3475.0],
        };
        assert_eq!(statements, vec![falls]);
        let text = statements[0].to_string();
        assert_eq!(
            text,
            "adding nodes lowered capacity over the measured range: 5050/s at N=3, 3475/s at N=6"
        );
    }

    #[test]
    fn rise_then_fall_keeps_the_model_with_a_note() {
        let model = Usl {
            lambda_per_s: 1000.0,
            sigma: 0.0,
            kappa: 0.1,
        };
        let obs = observe(model, &[1, 2, 3, 5, 8, 12], 2, 0.01, 5);
        let fit = fitted(analyze(&obs, &quick()));
        assert!(
            fit.notes
                .iter()
                .any(|s| matches!(s, Statement::FallingCapacity { .. })),
            "{:?}",
            fit.notes
        );
        let Peak::At { nodes, .. } = fit.peak else {
            panic!("{:?}", fit.peak)
        };
        assert!((nodes - 10f64.sqrt()).abs() < 0.5, "{nodes}");
    }

    #[test]
    fn a_failed_configuration_is_named_and_left_out() {
        let mut obs = observe(TRUE, &[1, 2, 3, 6], 2, 0.01, 11);
        let failed = |nodes, label: &str| Observation {
            nodes,
            capacity_per_s: None,
            label: label.into(),
        };
        obs.extend([failed(4, "four-0"), failed(4, "four-1"), failed(6, "six-x")]);
        obs.push(Observation {
            nodes: 0,
            capacity_per_s: Some(10.0),
            label: "zero".into(),
        });
        let fit = fitted(analyze(&obs, &quick()));
        let four = Statement::FailedSize {
            nodes: 4,
            labels: vec!["four-0".into(), "four-1".into()],
        };
        let zero = Statement::FailedSize {
            nodes: 0,
            labels: vec!["zero".into()],
        };
        assert!(
            fit.notes.contains(&four) && fit.notes.contains(&zero),
            "{:?}",
            fit.notes
        );
        assert!(fit.notes.contains(&Statement::PartlyFailedSize {
            nodes: 6,
            failed: 1
        }));
        assert_eq!(fit.measured_nodes, [1, 6]);
        assert_eq!(fit.predict(4), Err(four.clone()));
        assert!(four
            .to_string()
            .starts_with("N=4 found no capacity in any observation (four-0, four-1: "));
        assert!(fit.predict(5).is_ok());

        // With only two sizes left, no model: the failed size is named with the refusal.
        let mut obs = observe(TRUE, &[1, 2], 2, 0.01, 11);
        obs.push(Observation {
            nodes: 3,
            capacity_per_s: Some(0.0),
            label: "three".into(),
        });
        let statements = refusal(analyze(&obs, &quick()));
        assert!(matches!(&statements[0], Statement::TooFewSizes { nodes, .. } if nodes == &[1, 2]));
        assert_eq!(
            statements[1],
            Statement::FailedSize {
                nodes: 3,
                labels: vec!["three".into()]
            }
        );
    }

    #[test]
    fn three_single_observations_leave_no_spread() {
        let statements = refusal(analyze(&exact(TRUE, [1, 2, 4]), &quick()));
        assert_eq!(statements, vec![Statement::NoSpread { observations: 3 }]);
    }

    #[test]
    fn prediction_for_an_untested_size_lies_within_its_interval() {
        let obs = observe(TRUE, &[1, 2, 3, 4, 6, 8], 3, 0.02, 21);
        let fit = fitted(analyze(&obs, &quick()));
        for n in [5, 7] {
            let e = fit.predict(n).unwrap();
            assert!(e.low < e.value && e.value < e.high, "N={n}: {e:?}");
            assert!(e.high - e.low < 0.1 * e.value, "N={n}: {e:?}");
        }
    }

    #[test]
    fn unpinned_parameters_give_no_prediction_beyond_the_measured_range() {
        let fit = fitted(analyze(&observe(TRUE, &[2, 3, 4], 2, 0.05, 4), &quick()));
        assert!(
            !fit.unpinned.is_empty(),
            "σ {:?} κ {:?}",
            fit.sigma,
            fit.kappa
        );
        let note = Statement::Unpinned {
            parameters: fit.unpinned.clone(),
            measured_nodes: [2, 4],
        };
        assert!(fit.notes.contains(&note));
        assert!(fit.predict(3).is_ok());
        assert_eq!(fit.predict(20), Err(note.clone()));
        assert_eq!(fit.predict(1), Err(note.clone()));
        assert!(note
            .to_string()
            .ends_with("no prediction outside the measured range N=2..4"));
        let answer = fit.nodes_for(50_000.0);
        assert_eq!((answer.nodes, &answer.notes), (None, &vec![note]));
        assert!(answer.linear_nodes.is_some());
        if fit.model().peak_nodes().is_none_or(|p| p > 4.0) {
            assert_eq!(fit.peak, Peak::Withheld);
        }
    }

    #[test]
    fn nodes_for_under_the_model_differs_from_the_linear_rule() {
        let fit = fitted(analyze(&exact(TRUE, 1..=8), &quick()));
        let target = 7000.0;
        let answer = fit.nodes_for(target);
        let n = answer.nodes.unwrap();
        assert!(TRUE.capacity_per_s(f64::from(n)) >= target);
        assert!(TRUE.capacity_per_s(f64::from(n - 1)) < target);
        let per_node = TRUE.capacity_per_s(8.0) / 8.0;
        assert!((fit.per_node_capacity_per_s - per_node).abs() < 1e-9);
        assert_eq!(answer.linear_nodes, Some((target / per_node).ceil() as u32));
        assert!(
            answer.linear_nodes.unwrap() + 3 < n,
            "linear {:?} model {n}",
            answer.linear_nodes
        );
        assert!(answer.low_nodes.unwrap() <= n && n <= answer.high_nodes.unwrap());
        assert_eq!(fit.nodes_for(-5.0).nodes, Some(1));

        // Above the model's peak capacity: no size, and the statement says so.
        let ceiling = TRUE.ceiling_per_s().unwrap();
        let answer = fit.nodes_for(ceiling * 1.01);
        assert_eq!(answer.nodes, None);
        let Statement::TargetUnreachable {
            ceiling_per_s: Some(c),
            ..
        } = answer.notes[0]
        else {
            panic!("{:?}", answer.notes)
        };
        assert!((c - ceiling).abs() < 1e-6);
        assert!(answer.notes[0]
            .to_string()
            .contains("no cluster size reaches the target"));
        assert!(answer.linear_nodes.is_some());
    }

    #[test]
    fn usl_nodes_for_settles_on_whole_sizes() {
        let linear = Usl {
            lambda_per_s: 1000.0,
            sigma: 0.0,
            kappa: 0.0,
        };
        assert_eq!(linear.nodes_for(3000.0), Some(3));
        assert_eq!(linear.nodes_for(3000.1), Some(4));
        assert_eq!(linear.nodes_for(10.0), Some(1));
        assert_eq!(linear.nodes_for(1e15), None);
        assert_eq!(linear.nodes_for(f64::NAN), None);
        let amdahl = Usl {
            lambda_per_s: 1000.0,
            sigma: 0.5,
            kappa: 0.0,
        };
        assert_eq!(amdahl.nodes_for(1900.0), Some(19));
        assert_eq!(amdahl.nodes_for(2000.0), None);
        // A peak between two whole sizes, both below the target.
        let peaked = Usl {
            lambda_per_s: 1000.0,
            sigma: 0.0,
            kappa: 0.08,
        };
        let best = (1..10)
            .map(|n| peaked.capacity_per_s(f64::from(n)))
            .fold(0.0, f64::max);
        let ceiling = peaked.ceiling_per_s().unwrap();
        assert!(ceiling > best);
        assert_eq!(peaked.nodes_for((best + ceiling) / 2.0), None);
        assert_eq!(peaked.nodes_for(best), Some(4));
    }

    #[test]
    fn bounds_hold_for_superlinear_data() {
        let pairs: Vec<(u32, f64)> = (1..=6)
            .map(|n| (n, 1000.0 * f64::from(n).powf(1.1)))
            .collect();
        let fit = fitted(analyze(&points(&pairs), &quick()));
        assert_eq!((fit.sigma.value, fit.kappa.value), (0.0, 0.0));
        assert!(fit
            .bootstrap_fits
            .iter()
            .all(|u| (0.0..=1.0).contains(&u.sigma) && u.kappa >= 0.0));
    }

    #[test]
    fn the_same_seed_gives_the_same_result() {
        let obs = observe(TRUE, &[1, 2, 4, 8], 3, 0.03, 9);
        let settings = Settings {
            resamples: 300,
            confidence: 0.9,
            seed: 42,
        };
        let one = analyze(&obs, &settings);
        assert_eq!(one, analyze(&obs, &settings));
        let other = fitted(analyze(
            &obs,
            &Settings {
                seed: 43,
                ..settings
            },
        ));
        assert_ne!(fitted(one).kappa, other.kappa);
    }

    #[test]
    fn results_round_trip_through_json() {
        let obs = observe(TRUE, &[1, 2, 4, 8], 2, 0.02, 9);
        let settings = Settings {
            resamples: 200,
            ..Settings::default()
        };
        for analysis in [analyze(&obs, &settings), analyze(&obs[..4], &settings)] {
            let json = serde_json::to_string(&analysis).unwrap();
            let mut back: Analysis = serde_json::from_str(&json).unwrap();
            // The bootstrap's fits stay out of files.
            if let (Analysis::Fitted(back), Analysis::Fitted(fit)) = (&mut back, &analysis) {
                assert!(back.bootstrap_fits.is_empty());
                back.bootstrap_fits = fit.bootstrap_fits.clone();
            }
            assert_eq!(back, analysis);
        }
        let json = serde_json::to_value(analyze(&obs, &settings)).unwrap();
        assert_eq!(json["outcome"], "fitted");
        assert!(json["lambda_per_s"]["value"].is_f64() && json["per_node_capacity_per_s"].is_f64());
        let json = serde_json::to_value(analyze(&obs[..4], &settings)).unwrap();
        assert_eq!(json["statements"][0]["statement"], "too_few_sizes");
    }
}
