//! Whether two configurations differ, or only their noise does.
//!
//! - [`welch_t_test`]: Welch's t-test on two samples of unequal variance, e.g. the per-window
//!   throughputs of two configurations; the two-sided p-value comes from Student's t
//!   distribution (the `statrs` crate).
//! - [`percentile_interval`] and [`percentile_difference_interval`]: bootstrap confidence
//!   intervals for a latency percentile and for the difference of a percentile between two
//!   configurations. The unit that is resampled is the **window** (one interval histogram of a
//!   run), not the single request: requests within a window share the server's state (a GC
//!   pause, a compaction), so they are not independent, while windows are closer to it.
//! - [`Difference`]: estimate, relative change against the baseline, the evidence (p-value or
//!   interval), whether it is significant at a stated level, and a one-word [`Verdict`].
//!
//! The method, with its definitions and limits, is written out in docs/compare.md.

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use statrs::distribution::{ContinuousCDF, StudentsT};
use thiserror::Error;

use super::histogram::percentile_rank;

/// The significance level used unless one is asked for: 5 %.
pub const DEFAULT_LEVEL: f64 = 0.05;

/// Why a statistic could not be computed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// A sample is too small for the statistic.
    #[error("{what} has {n} values; at least {needed} are needed")]
    TooFewValues {
        /// Which sample, e.g. `baseline windows`.
        what: &'static str,
        /// How many it has.
        n: usize,
        /// How many the statistic needs.
        needed: usize,
    },
    /// A sample holds NaN or an infinity.
    #[error("{what}: value {index} is {value}, not a finite number")]
    NotFinite {
        /// Which sample.
        what: &'static str,
        /// The position of the value, from 0.
        index: usize,
        /// The value.
        value: f64,
    },
    /// Every window of a sample is empty.
    #[error("{what}: every window is empty, so no percentile exists")]
    NoValues {
        /// Which sample.
        what: &'static str,
    },
    /// A percentile outside 0–100.
    #[error("the percentile must be between 0 and 100 (e.g. 99.9), not {0}")]
    Percentile(f64),
    /// A confidence outside (0, 1).
    #[error("the confidence must be above 0 and below 1 (e.g. 0.95), not {0}")]
    Confidence(f64),
    /// Too few bootstrap resamples for the confidence asked.
    #[error(
        "{resamples} resamples cannot resolve a {confidence} interval; use at least {needed} \
         (1000 is usual)"
    )]
    Resamples {
        /// The resamples asked for.
        resamples: usize,
        /// The confidence asked for.
        confidence: f64,
        /// The fewest that give both ends of the interval a replicate of their own.
        needed: usize,
    },
}

/// The outcome of Welch's t-test of sample `a` against sample `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// Size of `a`.
    pub n_a: usize,
    /// Size of `b`.
    pub n_b: usize,
    /// Mean of `a`.
    pub mean_a: f64,
    /// Mean of `b`.
    pub mean_b: f64,
    /// Sample variance of `a` (divided by n − 1).
    pub var_a: f64,
    /// Sample variance of `b` (divided by n − 1).
    pub var_b: f64,
    /// t = (mean_a − mean_b) / sqrt(var_a/n_a + var_b/n_b), the sign of R's and SciPy's.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value: the probability, were the means equal, of a |t| at least this large.
    pub p_value: f64,
}

/// Welch's t-test: do samples `a` and `b` have different means, without assuming equal
/// variances?
///
/// Degenerate cases:
/// - fewer than 2 values on a side: [`StatsError::TooFewValues`] (no variance exists);
/// - NaN or infinite values: [`StatsError::NotFinite`];
/// - both variances zero (each sample constant): the standard error is 0. Equal means give
///   t = 0 and p = 1; different means give t = ±∞ and p = 0, since without any spread the
///   difference is certain. `df` is then n_a + n_b − 2, Welch's formula being 0/0;
/// - one variance zero: the ordinary formula, whose df becomes n − 1 of the other side;
/// - identical samples: t = 0, p = 1.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Result<Welch, StatsError> {
    let (mean_a, var_a) = mean_and_variance("sample a", a)?;
    let (mean_b, var_b) = mean_and_variance("sample b", b)?;
    let (n_a, n_b) = (a.len() as f64, b.len() as f64);
    let (se2_a, se2_b) = (var_a / n_a, var_b / n_b);
    let se2 = se2_a + se2_b;
    let diff = mean_a - mean_b;
    let (t, df, p_value) = if se2 == 0.0 {
        let df = n_a + n_b - 2.0;
        if diff == 0.0 {
            (0.0, df, 1.0)
        } else {
            (diff.signum() * f64::INFINITY, df, 0.0)
        }
    } else {
        let t = diff / se2.sqrt();
        let df = se2 * se2 / (se2_a * se2_a / (n_a - 1.0) + se2_b * se2_b / (n_b - 1.0));
        let dist = StudentsT::new(0.0, 1.0, df).expect("df is positive and finite here");
        (t, df, (2.0 * dist.sf(t.abs())).clamp(0.0, 1.0))
    };
    Ok(Welch {
        n_a: a.len(),
        n_b: b.len(),
        mean_a,
        mean_b,
        var_a,
        var_b,
        t,
        df,
        p_value,
    })
}

/// Mean and sample variance (two passes, for accuracy with large, close values).
fn mean_and_variance(what: &'static str, values: &[f64]) -> Result<(f64, f64), StatsError> {
    if values.len() < 2 {
        return Err(StatsError::TooFewValues {
            what,
            n: values.len(),
            needed: 2,
        });
    }
    if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(StatsError::NotFinite { what, index, value });
    }
    Ok(sample_mean_variance(values).expect("two values or more"))
}

/// Mean and sample variance (divided by n − 1, two passes for accuracy with large, close
/// values); `None` with fewer than two values.
pub fn sample_mean_variance(values: &[f64]) -> Option<(f64, f64)> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    Some((mean, variance))
}

/// How a bootstrap runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    /// Number of resamples (B).
    pub resamples: usize,
    /// Confidence of the interval, e.g. 0.95.
    pub confidence: f64,
    /// Seed of the random draws: the same seed and windows give the same interval.
    pub seed: u64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: 1000,
            confidence: 1.0 - DEFAULT_LEVEL,
            seed: 0,
        }
    }
}

impl Bootstrap {
    fn validate(&self) -> Result<(), StatsError> {
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(StatsError::Confidence(self.confidence));
        }
        // Each tail (1 − confidence)/2 must hold at least one replicate.
        let tail = (1.0 - self.confidence) / 2.0;
        let needed = (1.0 / tail).ceil() as usize;
        if self.resamples < needed {
            return Err(StatsError::Resamples {
                resamples: self.resamples,
                confidence: self.confidence,
                needed,
            });
        }
        Ok(())
    }
}

/// An estimate and its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The estimate from all the data (not from the resamples).
    pub estimate: f64,
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Confidence, e.g. 0.95.
    pub confidence: f64,
}

impl Interval {
    /// Whether `value` lies within the interval, ends included.
    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }

    /// high − low.
    pub fn width(&self) -> f64 {
        self.high - self.low
    }
}

/// A bootstrap confidence interval for `percentile` (0–100) of the latencies in `windows`,
/// each window one interval histogram of a run.
///
/// Each of the B resamples draws as many windows as there are, with replacement, merges them
/// and reads the percentile by the rule of [`crate::stats::value_at_percentile`]; the
/// interval's ends are the (1 − c)/2 and (1 + c)/2 quantiles of those B values (nearest
/// rank), the estimate is the percentile of all windows merged. Empty windows take part in the
/// draws (they weigh nothing); a resample of only empty windows is drawn again.
pub fn percentile_interval(
    windows: &[Histogram<u64>],
    percentile: f64,
    bootstrap: &Bootstrap,
) -> Result<Interval, StatsError> {
    check_percentile(percentile)?;
    bootstrap.validate()?;
    let set = WindowSet::new("windows", windows)?;
    let mut rng = SmallRng::seed_from_u64(bootstrap.seed);
    let mut scratch = Vec::new();
    let replicates: Vec<f64> = (0..bootstrap.resamples)
        .map(|_| set.resampled_percentile(&mut rng, percentile, &mut scratch) as f64)
        .collect();
    Ok(interval_of(
        set.percentile_of_all(percentile) as f64,
        replicates,
        bootstrap.confidence,
    ))
}

/// A bootstrap confidence interval for the difference `other − baseline` of `percentile`
/// between two configurations' windows. Each resample draws each side's windows
/// independently, as [`percentile_interval`] does, and subtracts. The difference is
/// significant at level 1 − confidence when the interval excludes 0.
pub fn percentile_difference_interval(
    baseline: &[Histogram<u64>],
    other: &[Histogram<u64>],
    percentile: f64,
    bootstrap: &Bootstrap,
) -> Result<Interval, StatsError> {
    check_percentile(percentile)?;
    bootstrap.validate()?;
    let base = WindowSet::new("baseline windows", baseline)?;
    let other = WindowSet::new("other windows", other)?;
    let mut rng = SmallRng::seed_from_u64(bootstrap.seed);
    let mut scratch = Vec::new();
    let replicates: Vec<f64> = (0..bootstrap.resamples)
        .map(|_| {
            let b = base.resampled_percentile(&mut rng, percentile, &mut scratch) as f64;
            let o = other.resampled_percentile(&mut rng, percentile, &mut scratch) as f64;
            o - b
        })
        .collect();
    let estimate =
        other.percentile_of_all(percentile) as f64 - base.percentile_of_all(percentile) as f64;
    Ok(interval_of(estimate, replicates, bootstrap.confidence))
}

fn check_percentile(percentile: f64) -> Result<(), StatsError> {
    if (0.0..=100.0).contains(&percentile) {
        Ok(())
    } else {
        Err(StatsError::Percentile(percentile))
    }
}

/// The percentile interval of sorted replicates, by nearest rank.
fn interval_of(estimate: f64, mut replicates: Vec<f64>, confidence: f64) -> Interval {
    replicates.sort_by(f64::total_cmp);
    let b = replicates.len() as f64;
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| {
        let rank = ((q * b).ceil() as usize).clamp(1, replicates.len());
        replicates[rank - 1]
    };
    Interval {
        estimate,
        low: at(tail),
        high: at(1.0 - tail),
        confidence,
    }
}

/// Windows as sparse counts over the distinct values of all of them, so that merging a
/// resample costs the windows' recorded values, not a histogram's whole bucket array.
#[derive(Debug)]
struct WindowSet {
    /// Every distinct value (a bucket's highest equivalent value), ascending.
    values: Vec<u64>,
    /// Per window: (index into `values`, count).
    windows: Vec<Vec<(usize, u64)>>,
    /// Per value, the count over all windows.
    all: Vec<u64>,
}

impl WindowSet {
    fn new(what: &'static str, windows: &[Histogram<u64>]) -> Result<WindowSet, StatsError> {
        if windows.len() < 2 {
            return Err(StatsError::TooFewValues {
                what,
                n: windows.len(),
                needed: 2,
            });
        }
        let mut values: Vec<u64> = windows
            .iter()
            .flat_map(|h| h.iter_recorded().map(|v| v.value_iterated_to()))
            .collect();
        values.sort_unstable();
        values.dedup();
        if values.is_empty() {
            return Err(StatsError::NoValues { what });
        }
        let mut all = vec![0; values.len()];
        let windows = windows
            .iter()
            .map(|h| {
                h.iter_recorded()
                    .map(|v| {
                        let index = values
                            .binary_search(&v.value_iterated_to())
                            .expect("every value was collected above");
                        all[index] += v.count_at_value();
                        (index, v.count_at_value())
                    })
                    .collect()
            })
            .collect();
        Ok(WindowSet {
            values,
            windows,
            all,
        })
    }

    fn percentile_of_all(&self, percentile: f64) -> u64 {
        self.value_at(&self.all, percentile)
    }

    /// Draws `windows.len()` windows with replacement (again if all were empty) and reads the
    /// percentile of their merge.
    fn resampled_percentile(
        &self,
        rng: &mut SmallRng,
        percentile: f64,
        counts: &mut Vec<u64>,
    ) -> u64 {
        let n = self.windows.len();
        loop {
            counts.clear();
            counts.resize(self.values.len(), 0);
            let mut total = 0;
            for _ in 0..n {
                for &(index, count) in &self.windows[rng.random_range(0..n)] {
                    counts[index] += count;
                    total += count;
                }
            }
            if total > 0 {
                return self.value_at(counts, percentile);
            }
        }
    }

    fn value_at(&self, counts: &[u64], percentile: f64) -> u64 {
        let total: u64 = counts.iter().sum();
        let rank = percentile_rank(percentile, total);
        let mut seen = 0;
        for (value, count) in self.values.iter().zip(counts) {
            seen += count;
            if seen >= rank {
                return *value;
            }
        }
        *self.values.last().expect("a window set has values")
    }
}

/// Which direction of a metric is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// More is better: throughput, capacity.
    Higher,
    /// Less is better: latency, errors, pause time.
    Lower,
}

/// What a difference amounts to, in one word for tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Significant, and in the better direction.
    Better,
    /// Significant, and in the worse direction.
    Worse,
    /// Not significant at the stated level.
    Noise,
}

impl Verdict {
    /// `better`, `worse` or `noise`.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Noise => "noise",
        }
    }
}

/// The evidence behind a [`Difference`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Evidence {
    /// A test's two-sided p-value.
    PValue(f64),
    /// A confidence interval for `value − baseline`.
    Interval {
        /// Lower end.
        low: f64,
        /// Upper end.
        high: f64,
        /// Its confidence.
        confidence: f64,
    },
}

/// How another configuration's figure compares with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// The baseline's estimate.
    pub baseline: f64,
    /// The other configuration's estimate.
    pub value: f64,
    /// `value − baseline`.
    pub change: f64,
    /// `change / baseline` in percent; `None` when the baseline is 0.
    pub change_percent: Option<f64>,
    /// The p-value or interval the verdict rests on.
    pub evidence: Evidence,
    /// The significance level, e.g. 0.05.
    pub level: f64,
    /// p < level, or the (1 − level) interval excludes 0.
    pub significant: bool,
    /// Which direction is an improvement.
    pub better: Better,
}

impl Difference {
    /// From Welch's test of the baseline (`a`) against the other configuration (`b`).
    pub fn from_welch(test: &Welch, better: Better, level: f64) -> Difference {
        Difference::new(
            test.mean_a,
            test.mean_b,
            Evidence::PValue(test.p_value),
            level,
            test.p_value < level,
            better,
        )
    }

    /// From the baseline's estimate and a bootstrap interval for `other − baseline`; the level
    /// is 1 − the interval's confidence.
    pub fn from_interval(baseline: f64, difference: &Interval, better: Better) -> Difference {
        Difference::new(
            baseline,
            baseline + difference.estimate,
            Evidence::Interval {
                low: difference.low,
                high: difference.high,
                confidence: difference.confidence,
            },
            1.0 - difference.confidence,
            !difference.contains(0.0),
            better,
        )
    }

    fn new(
        baseline: f64,
        value: f64,
        evidence: Evidence,
        level: f64,
        significant: bool,
        better: Better,
    ) -> Difference {
        let change = value - baseline;
        Difference {
            baseline,
            value,
            change,
            change_percent: (baseline != 0.0).then(|| change / baseline * 100.0),
            evidence,
            level,
            significant,
            better,
        }
    }

    /// Better, worse, or noise.
    pub fn verdict(&self) -> Verdict {
        if !self.significant || self.change == 0.0 {
            return Verdict::Noise;
        }
        let improved = match self.better {
            Better::Higher => self.change > 0.0,
            Better::Lower => self.change < 0.0,
        };
        if improved {
            Verdict::Better
        } else {
            Verdict::Worse
        }
    }
}

/// Compares the means of two samples (e.g. per-window throughputs) with Welch's test at
/// `level`.
pub fn compare_means(
    baseline: &[f64],
    other: &[f64],
    better: Better,
    level: f64,
) -> Result<Difference, StatsError> {
    let test = welch_t_test(baseline, other)?;
    Ok(Difference::from_welch(&test, better, level))
}

/// Compares a latency percentile of two configurations' windows with a bootstrap interval of
/// the difference (lower is better).
pub fn compare_percentile(
    baseline: &[Histogram<u64>],
    other: &[Histogram<u64>],
    percentile: f64,
    bootstrap: &Bootstrap,
) -> Result<Difference, StatsError> {
    let interval = percentile_difference_interval(baseline, other, percentile, bootstrap)?;
    let base = WindowSet::new("baseline windows", baseline)?.percentile_of_all(percentile);
    Ok(Difference::from_interval(
        base as f64,
        &interval,
        Better::Lower,
    ))
}

#[cfg(test)]
mod tests {
    use rand_distr::{Distribution, Exp};

    use super::*;
    use crate::stats::{new_histogram, value_at_percentile};

    fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
        (actual - expected).abs() <= tolerance
    }

    /// R's `sleep` data set (Student 1908), the example of R's `t.test`:
    /// `t.test(extra ~ group, data = sleep)` prints t = -1.8608, df = 17.776,
    /// p-value = 0.07939. The further digits are SciPy 1.17's
    /// `ttest_ind(a, b, equal_var=False)`: t = -1.8608134674868526,
    /// df = 17.776473516178488, p = 0.0793941401873583.
    #[test]
    fn welch_matches_r_on_the_sleep_data() {
        let a = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
        let b = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];
        let w = welch_t_test(&a, &b).unwrap();
        assert!(close(w.mean_a, 0.75, 1e-12) && close(w.mean_b, 2.33, 1e-12));
        assert!(close(w.var_a, 3.2005555555555554, 1e-12), "{}", w.var_a);
        assert!(close(w.var_b, 4.009, 1e-12), "{}", w.var_b);
        assert!(close(w.t, -1.8608134674868526, 1e-10), "{}", w.t);
        assert!(close(w.df, 17.776473516178488, 1e-9), "{}", w.df);
        assert!(close(w.p_value, 0.0793941401873583, 1e-9), "{}", w.p_value);
    }

    /// The two worked examples of Wikipedia's "Welch's t-test" article (samples A1, A2):
    /// example 1 (equal sizes) t = -2.46, ν = 24.99, p = 0.021; example 2 (sizes 10 and 20)
    /// t = -1.57, ν = 9.90, p = 0.149. More digits from SciPy 1.17 as above.
    #[test]
    fn welch_matches_the_textbook_examples_with_unequal_sizes() {
        let a1 = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let a2 = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let w = welch_t_test(&a1, &a2).unwrap();
        assert!(close(w.t, -2.455356398286006, 1e-10), "{}", w.t);
        assert!(close(w.df, 24.988529290231416, 1e-9), "{}", w.df);
        assert!(
            close(w.p_value, 0.021378001462866992, 1e-9),
            "{}",
            w.p_value
        );

        let b1 = [17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8];
        let b2 = [
            21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8, 20.7, 21.7, 21.5, 22.5,
            23.6, 21.5, 22.5, 23.5, 21.5, 21.8,
        ];
        let w = welch_t_test(&b1, &b2).unwrap();
        assert_eq!((w.n_a, w.n_b), (10, 20));
        assert!(close(w.t, -1.5654335235985037, 1e-10), "{}", w.t);
        assert!(close(w.df, 9.904741248650831, 1e-9), "{}", w.df);
        assert!(close(w.p_value, 0.14884169660532817, 1e-9), "{}", w.p_value);
    }

    #[test]
    fn welch_is_symmetric_in_its_samples() {
        let a = [10.0, 12.0, 11.5, 9.0, 10.2];
        let b = [13.0, 12.5, 14.1, 12.9];
        let ab = welch_t_test(&a, &b).unwrap();
        let ba = welch_t_test(&b, &a).unwrap();
        assert_eq!(ab.t, -ba.t);
        assert_eq!(ab.df, ba.df);
        assert_eq!(ab.p_value, ba.p_value);
    }

    #[test]
    fn identical_samples_give_p_one_and_clearly_different_ones_p_near_zero() {
        let a: Vec<f64> = (0..30).map(|i| 1000.0 + (i % 7) as f64 * 3.0).collect();
        let same = welch_t_test(&a, &a).unwrap();
        assert_eq!(same.t, 0.0);
        assert!(close(same.p_value, 1.0, 1e-12), "{}", same.p_value);

        // The same spread, shifted by 10 % of the mean: far beyond the noise.
        let b: Vec<f64> = a.iter().map(|v| v * 1.1).collect();
        let apart = welch_t_test(&a, &b).unwrap();
        assert!(apart.t < -50.0, "{}", apart.t);
        assert!(apart.p_value < 1e-12, "{}", apart.p_value);
    }

    #[test]
    fn welch_degenerate_samples() {
        assert_eq!(
            welch_t_test(&[1.0], &[1.0, 2.0]),
            Err(StatsError::TooFewValues {
                what: "sample a",
                n: 1,
                needed: 2
            })
        );
        assert!(matches!(
            welch_t_test(&[1.0, 2.0], &[]),
            Err(StatsError::TooFewValues {
                what: "sample b",
                n: 0,
                ..
            })
        ));
        assert!(matches!(
            welch_t_test(&[1.0, f64::NAN], &[1.0, 2.0]),
            Err(StatsError::NotFinite { index: 1, .. })
        ));
        // Both constant: certain when the means differ, nothing when they do not.
        let equal = welch_t_test(&[5.0, 5.0, 5.0], &[5.0, 5.0]).unwrap();
        assert_eq!((equal.t, equal.p_value, equal.df), (0.0, 1.0, 3.0));
        let apart = welch_t_test(&[5.0, 5.0, 5.0], &[6.0, 6.0]).unwrap();
        assert_eq!((apart.t, apart.p_value), (f64::NEG_INFINITY, 0.0));
        // One constant: the other side's n − 1 degrees of freedom.
        let one = welch_t_test(&[5.0, 5.0, 5.0], &[4.0, 6.0, 5.0, 7.0]).unwrap();
        assert!(close(one.df, 3.0, 1e-12), "{}", one.df);
        assert!(one.p_value > 0.0 && one.p_value < 1.0);
    }

    /// `windows` windows of `per_window` latencies drawn from an exponential distribution
    /// with mean `mean_ms`, in nanoseconds.
    fn exponential_windows(
        seed: u64,
        windows: usize,
        per_window: usize,
        mean_ms: f64,
    ) -> Vec<Histogram<u64>> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let exp = Exp::new(1.0 / mean_ms).unwrap();
        (0..windows)
            .map(|_| {
                let mut h = new_histogram();
                for _ in 0..per_window {
                    let ns = (exp.sample(&mut rng) * 1e6) as u64;
                    h.record(ns.max(1)).unwrap();
                }
                h
            })
            .collect()
    }

    /// p-th percentile of an exponential distribution with mean `mean_ms`, in ns.
    fn exponential_percentile_ns(mean_ms: f64, percentile: f64) -> f64 {
        -mean_ms * (1.0 - percentile / 100.0).ln() * 1e6
    }

    #[test]
    fn the_estimate_is_the_percentile_of_all_windows_merged() {
        let windows = exponential_windows(7, 12, 300, 1.0);
        let mut merged = new_histogram();
        for w in &windows {
            merged.add(w).unwrap();
        }
        for p in [0.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            let i = percentile_interval(&windows, p, &Bootstrap::default()).unwrap();
            assert_eq!(i.estimate, value_at_percentile(&merged, p) as f64, "p{p}");
            assert!(i.low <= i.high);
        }
    }

    #[test]
    fn bootstrap_intervals_cover_the_true_percentile_in_most_seeds() {
        let truth = exponential_percentile_ns(1.0, 99.0);
        let bootstrap = |seed| Bootstrap {
            resamples: 400,
            confidence: 0.95,
            seed,
        };
        let covered = (0..20u64)
            .filter(|&seed| {
                let windows = exponential_windows(1000 + seed, 20, 500, 1.0);
                percentile_interval(&windows, 99.0, &bootstrap(seed))
                    .unwrap()
                    .contains(truth)
            })
            .count();
        // A 95 % interval should miss about 1 in 20; 16 of 20 allows for the bootstrap's
        // known under-coverage of tail percentiles, and fails an interval that is too narrow.
        assert!(
            covered >= 16,
            "covered the true p99 in {covered} of 20 seeds"
        );
    }

    #[test]
    fn bootstrap_is_reproducible_with_the_same_seed() {
        let windows = exponential_windows(3, 15, 400, 2.0);
        let with = |seed| {
            let b = Bootstrap {
                seed,
                ..Bootstrap::default()
            };
            percentile_interval(&windows, 99.9, &b).unwrap()
        };
        assert_eq!(with(42), with(42));
        let (a, b) = (with(42), with(43));
        assert!(a.low != b.low || a.high != b.high, "{a:?} {b:?}");
    }

    #[test]
    fn bootstrap_intervals_shrink_with_more_windows() {
        let b = Bootstrap {
            resamples: 500,
            ..Bootstrap::default()
        };
        // The width of one interval is itself noisy (a p99 from 10 windows of 500 rests on
        // 50 values), so compare the mean width over a few data sets.
        let mean_width = |windows: usize| {
            let widths: f64 = (0..5u64)
                .map(|seed| {
                    let data = exponential_windows(100 + seed, windows, 500, 1.0);
                    percentile_interval(&data, 99.0, &Bootstrap { seed, ..b })
                        .unwrap()
                        .width()
                })
                .sum();
            widths / 5.0
        };
        let (few, many) = (mean_width(10), mean_width(80));
        // The width goes as 1/sqrt(windows): about 0.35 times for 8 times the windows.
        assert!(
            many < 0.6 * few,
            "mean width with 10 windows: {few}; with 80: {many}"
        );
    }

    #[test]
    fn a_real_difference_of_p99_is_significant_and_no_difference_is_noise() {
        let b = Bootstrap {
            resamples: 500,
            ..Bootstrap::default()
        };
        let g1 = exponential_windows(21, 30, 1000, 1.0);
        let slower = exponential_windows(22, 30, 1000, 1.2);
        let truth = exponential_percentile_ns(1.2, 99.0) - exponential_percentile_ns(1.0, 99.0);
        let diff = percentile_difference_interval(&g1, &slower, 99.0, &b).unwrap();
        assert!(diff.low > 0.0, "{diff:?}");
        assert!(diff.contains(truth), "{diff:?} should contain {truth}");

        let d = compare_percentile(&g1, &slower, 99.0, &b).unwrap();
        assert!(d.significant);
        assert_eq!(d.verdict(), Verdict::Worse);
        assert_eq!(d.verdict().label(), "worse");
        let pct = d.change_percent.unwrap();
        assert!((10.0..30.0).contains(&pct), "{pct}");
        // The other way round, the slower side is the baseline and the change an improvement.
        let back = compare_percentile(&slower, &g1, 99.0, &b).unwrap();
        assert_eq!(back.verdict(), Verdict::Better);

        let same = exponential_windows(23, 30, 1000, 1.0);
        let d = compare_percentile(&g1, &same, 99.0, &b).unwrap();
        assert!(!d.significant, "{d:?}");
        assert_eq!(d.verdict(), Verdict::Noise);
        assert_eq!(d.level, 1.0 - b.confidence);
    }

    #[test]
    fn bootstrap_rejects_what_it_cannot_compute() {
        let windows = exponential_windows(1, 5, 10, 1.0);
        let b = Bootstrap::default();
        assert_eq!(
            percentile_interval(&windows[..1], 99.0, &b),
            Err(StatsError::TooFewValues {
                what: "windows",
                n: 1,
                needed: 2
            })
        );
        assert_eq!(
            percentile_interval(&[new_histogram(), new_histogram()], 99.0, &b),
            Err(StatsError::NoValues { what: "windows" })
        );
        assert_eq!(
            percentile_interval(&windows, 100.5, &b),
            Err(StatsError::Percentile(100.5))
        );
        let bad = Bootstrap {
            confidence: 1.0,
            ..b
        };
        assert_eq!(
            percentile_interval(&windows, 99.0, &bad),
            Err(StatsError::Confidence(1.0))
        );
        let few = Bootstrap { resamples: 10, ..b };
        assert!(matches!(
            percentile_interval(&windows, 99.0, &few),
            Err(StatsError::Resamples { needed: 40, .. })
        ));
    }

    #[test]
    fn empty_windows_weigh_nothing() {
        let mut windows = exponential_windows(5, 6, 200, 1.0);
        let full = percentile_interval(&windows, 99.0, &Bootstrap::default()).unwrap();
        windows.push(new_histogram());
        let with_empty = percentile_interval(&windows, 99.0, &Bootstrap::default()).unwrap();
        assert_eq!(full.estimate, with_empty.estimate);
        // Only one window holds values: every usable resample is that window alone.
        let lone = vec![
            new_histogram(),
            exponential_windows(6, 1, 200, 1.0).remove(0),
        ];
        let i = percentile_interval(&lone, 50.0, &Bootstrap::default()).unwrap();
        assert_eq!((i.low, i.high), (i.estimate, i.estimate));
    }

    #[test]
    fn differences_of_means_and_their_verdicts() {
        let a: Vec<f64> = (0..20).map(|i| 10_000.0 + (i % 5) as f64 * 50.0).collect();
        let b: Vec<f64> = a.iter().map(|v| v + 1_000.0).collect();
        let d = compare_means(&a, &b, Better::Higher, DEFAULT_LEVEL).unwrap();
        assert!(d.significant);
        assert_eq!(d.verdict(), Verdict::Better);
        assert!(close(d.change, 1_000.0, 1e-9));
        assert!(close(
            d.change_percent.unwrap(),
            1000.0 / 10_100.0 * 100.0,
            1e-9
        ));
        assert!(matches!(d.evidence, Evidence::PValue(p) if p < 1e-10));
        // Higher latency is worse.
        let d = compare_means(&a, &b, Better::Lower, DEFAULT_LEVEL).unwrap();
        assert_eq!(d.verdict(), Verdict::Worse);
        // Overlapping samples at a strict level: noise.
        let c: Vec<f64> = a.iter().rev().map(|v| v + 10.0).collect();
        let d = compare_means(&a, &c, Better::Higher, 0.01).unwrap();
        assert!(!d.significant);
        assert_eq!(d.verdict().label(), "noise");
        // A zero baseline has no relative change.
        let zero = compare_means(&[0.0, 0.0], &[1.0, 2.0], Better::Lower, 0.05).unwrap();
        assert_eq!(zero.change_percent, None);
    }
}
