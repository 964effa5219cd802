//! What a fit of the USL can and cannot tell: [`analyze`] fits the observations, bootstraps
//! the intervals and decides, in numbers, where the data cannot answer ([`Statement`]: a
//! refusal or a caveat, its figures as fields; the words are the printing layer's).

use std::collections::BTreeMap;
use std::ops::Range;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::least_squares::fit_usl;
use super::model::{
    Estimate, Observation, Parameter, Settings, Usl, DEFAULT_CONFIDENCE, LAMBDA_MIN, MIN_GROWTH,
    MIN_RESAMPLES,
};

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

/// What the data can or cannot say, as figures: `compare::scaling` puts it in words.
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
