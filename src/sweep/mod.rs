//! Concurrency sweeps (cassandra-stress's `-rate auto`, as Mark Price's load-testing article used
//! it): closed-loop steps at a growing number of requests in flight, each until its throughput is
//! stable, until the throughput stops improving.
//!
//! This module holds the rules as pure functions over numbers, so that they can be tested
//! without a cluster: the concurrency ladder ([`Ladder`]), when a step's throughput is
//! stable ([`StabilityRule`]), when the sweep stops ([`stop_rule`]); the records a sweep keeps
//! in sweep.json ([`record`], [`settings`]) and its table ([`table`]). The steps
//! themselves are runs, driven by [`live`].

pub mod dir;
pub mod live;
pub mod record;
pub mod settings;
pub mod table;

pub use record::{StepEnd, StepRecord, SweepFile, SweepStatus, SweepStop};

/// How the concurrency grows from one step to the next in a range `A..B`.
pub const GROWTH: f64 = 1.5;

/// The concurrencies of a sweep, in the order they run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ladder(pub Vec<usize>);

impl Ladder {
    /// Reads `--concurrency`: a range `A..B` (A, then ×1.5 each step, rounded to whole
    /// numbers and strictly increasing, up to at most B) or a list `4,8,16,32` (exactly
    /// those, strictly increasing). Every concurrency is at least 1.
    pub fn parse(text: &str) -> Result<Ladder, String> {
        let text = text.trim();
        if let Some((first, last)) = text.split_once("..") {
            let first = whole(first, "the first concurrency of the range")?;
            let last = whole(last, "the last concurrency of the range")?;
            if first > last {
                return Err(format!(
                    "'{text}': the range goes down; write the smaller concurrency first, e.g. {last}..{first}"
                ));
            }
            return Ok(Ladder(geometric(first, last)));
        }
        if text.is_empty() {
            return Err("give a range such as 4..1024 or a list such as 4,8,16,32".into());
        }
        let mut list = Vec::new();
        for item in text.split(',') {
            let value = whole(item, "each concurrency of the list")?;
            if let Some(&before) = list.last() {
                if value <= before {
                    return Err(format!(
                        "'{text}': the list must grow strictly ({value} follows {before}); \
                         a sweep only adds concurrency"
                    ));
                }
            }
            list.push(value);
        }
        Ok(Ladder(list))
    }
}

/// A whole number of at least 1.
fn whole(text: &str, what: &str) -> Result<usize, String> {
    let t = text.trim();
    match t.parse::<usize>() {
        Ok(0) => Err(format!("{what} must be at least 1, not 0")),
        Ok(n) => Ok(n),
        Err(_) if t.is_empty() => Err(format!(
            "{what} is missing: give a range such as 4..1024 or a list such as 4,8,16,32"
        )),
        Err(_) => Err(format!("{what} must be a whole number, not '{t}'")),
    }
}

/// `first`, then `first × 1.5^k` rounded to the nearest whole number (halves up), each at
/// least one more than the one before, while at most `last`. Rounding each power of the
/// first (rather than multiplying the rounded previous value) keeps the ladder a true
/// geometric series: 4..1024 gives 4, 6, 9, 14, 20, 30, 46, 68, 103, 154, 231, 346, 519, 778.
fn geometric(first: usize, last: usize) -> Vec<usize> {
    let mut out = vec![first];
    for k in 1.. {
        let next = (first as f64 * GROWTH.powi(k)).round() as usize;
        let next = next.max(out[out.len() - 1] + 1);
        if next > last {
            break;
        }
        out.push(next);
    }
    out
}

/// The standard error of the mean of `samples`, relative to the mean: (s / √n) / mean, s
/// being the sample standard deviation (n − 1 in the denominator). `None` with fewer than
/// two samples or a mean of 0 (nothing was measured).
pub fn relative_standard_error(samples: &[f64]) -> Option<f64> {
    let (mean, variance) = crate::stats::difference::sample_mean_variance(samples)?;
    if mean <= 0.0 {
        return None;
    }
    Some(variance.sqrt() / (samples.len() as f64).sqrt() / mean)
}

/// When a step's throughput is stable, from the throughput of each whole interval of its
/// measured part (requests answered in the interval ÷ its length).
///
/// cassandra-stress (its `err<0.02 n>30 n<200`, the default of `-rate auto`) ends a step
/// once the standard error of the mean of the per-second op rates is below 2% of the mean,
/// after at least 30 and at most 200 seconds. headroom keeps that test and adds one: the
/// mean of the second half of the intervals may differ from the first half's by at most
/// twice the target. A throughput that still climbs or sinks (a cache filling, compaction
/// falling behind) can reach a small standard error while it drifts, because the error of
/// the mean shrinks with every interval whatever their trend; the halves see the drift.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StabilityRule {
    /// The standard error of the mean, relative to the mean, must be below this.
    pub target: f64,
    /// At least this many whole intervals first.
    pub min_intervals: usize,
}

/// What [`StabilityRule::judge`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stability {
    /// The relative standard error of the mean, when there were two intervals or more.
    pub relative_error: Option<f64>,
    /// (mean of the second half − mean of the first half) ÷ mean of all, when there were
    /// two intervals or more.
    pub drift: Option<f64>,
    /// Whether the step may end.
    pub stable: bool,
}

impl StabilityRule {
    /// Judges the per-interval throughputs of a step so far.
    pub fn judge(&self, rates_per_s: &[f64]) -> Stability {
        let relative_error = relative_standard_error(rates_per_s);
        let drift = drift(rates_per_s);
        let stable = rates_per_s.len() >= self.min_intervals.max(2)
            && relative_error.is_some_and(|e| e < self.target)
            && drift.is_some_and(|d| d.abs() <= 2.0 * self.target);
        Stability {
            relative_error,
            drift,
            stable,
        }
    }
}

/// (mean of the second half − mean of the first half) ÷ the mean of all; with an odd count
/// the middle interval belongs to neither half.
fn drift(samples: &[f64]) -> Option<f64> {
    let n = samples.len();
    if n < 2 {
        return None;
    }
    let mean = samples.iter().sum::<f64>() / n as f64;
    if mean <= 0.0 {
        return None;
    }
    let half = n / 2;
    let avg = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    Some((avg(&samples[n - half..]) - avg(&samples[..half])) / mean)
}

/// The average relative improvement of the throughput over the last `count` steps: the mean
/// of (rate[i] − rate[i−1]) ÷ rate[i−1] for the last `count` values of i. `None` until
/// there are `count + 1` steps (or when a rate before is 0).
pub fn average_improvement(rates_per_s: &[f64], count: usize) -> Option<f64> {
    let n = rates_per_s.len();
    if count == 0 || n < count + 1 {
        return None;
    }
    let mut sum = 0.0;
    for i in n - count..n {
        let before = rates_per_s[i - 1];
        if before <= 0.0 {
            return None;
        }
        sum += (rates_per_s[i] - before) / before;
    }
    Some(sum / count as f64)
}

/// Whether the sweep stops after the steps whose throughputs are `rates_per_s`, by
/// cassandra-stress's two rules (`StressAction.runMulti`):
///
/// 1. the average improvement over the last 3 steps is ≤ 0 (cassandra-stress stops at < 0;
///    headroom also stops when the throughput is exactly flat, as a plateau it is);
/// 2. the average improvement over the last 5 steps is below `min_improvement` (the
///    stability target, 2% by default): the throughput creeps up by less than the
///    steps can measure.
pub fn stop_rule(rates_per_s: &[f64], min_improvement: f64) -> Option<SweepStop> {
    if let Some(average) = average_improvement(rates_per_s, 3) {
        if average <= 0.0 {
            return Some(SweepStop::NoImprovement { steps: 3, average });
        }
    }
    if let Some(average) = average_improvement(rates_per_s, 5) {
        if average < min_improvement {
            return Some(SweepStop::SmallImprovement {
                steps: 5,
                average,
                below: min_improvement,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ladder(text: &str) -> Vec<usize> {
        Ladder::parse(text).unwrap().0
    }

    #[test]
    fn a_range_grows_by_half_each_step_rounded_and_strictly() {
        assert_eq!(
            ladder("4..1024"),
            [4, 6, 9, 14, 20, 30, 46, 68, 103, 154, 231, 346, 519, 778]
        );
        // 1.5 rounds up to 2; 2.25 rounds to 2, which is no growth: 3 instead, and so on.
        assert_eq!(ladder("1..10"), [1, 2, 3, 4, 5, 8]);
        assert_eq!(ladder("2..8"), [2, 3, 5, 7]);
        // The last concurrency is a bound, not a step of its own.
        assert_eq!(ladder("4..13"), [4, 6, 9]);
        assert_eq!(ladder("4..14"), [4, 6, 9, 14]);
        assert_eq!(ladder(" 16 .. 16 "), [16]);
        // Strictly increasing whatever the rounding.
        for first in 1..40 {
            let l = ladder(&format!("{first}..5000"));
            assert!(l.windows(2).all(|w| w[1] > w[0]), "{l:?}");
            assert!(*l.last().unwrap() <= 5000);
        }
    }

    #[test]
    fn a_list_is_taken_as_it_is() {
        assert_eq!(ladder("4,8,16,32"), [4, 8, 16, 32]);
        assert_eq!(ladder("100"), [100]);
        assert_eq!(ladder(" 3, 5 ,7"), [3, 5, 7]);
    }

    #[test]
    fn bad_ladders_say_what_is_wrong() {
        let err = |text: &str| Ladder::parse(text).unwrap_err();
        assert!(err("1024..4").contains("goes down"), "{}", err("1024..4"));
        assert!(err("1024..4").contains("4..1024"));
        assert!(err("0..10").contains("at least 1"));
        assert!(err("4..").contains("missing"));
        assert!(err("..8").contains("missing"));
        assert!(err("4..x").contains("whole number, not 'x'"));
        assert!(err("4.5..8").contains("whole number"));
        assert!(err("8,4").contains("grow strictly"));
        assert!(err("4,4").contains("grow strictly"));
        assert!(err("4,,8").contains("missing"));
        assert!(err("").contains("4..1024"));
        assert!(err("-4..8").contains("whole number"));
    }

    #[test]
    fn the_standard_error_is_relative_to_the_mean() {
        assert_eq!(relative_standard_error(&[]), None);
        assert_eq!(relative_standard_error(&[5.0]), None);
        assert_eq!(relative_standard_error(&[0.0, 0.0]), None);
        assert_eq!(relative_standard_error(&[100.0, 100.0, 100.0]), Some(0.0));
        // 90, 110: s = 14.142, s/√2 = 10, / 100.
        let e = relative_standard_error(&[90.0, 110.0]).unwrap();
        assert!((e - 0.1).abs() < 1e-12, "{e}");
        // 1000 ± 50 alternating over 30 intervals: s ≈ 50.85, /√30 ≈ 9.28, / 1000.
        let rates: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { 950.0 } else { 1050.0 })
            .collect();
        let e = relative_standard_error(&rates).unwrap();
        assert!((e - 0.009285).abs() < 1e-5, "{e}");
    }

    #[test]
    fn a_step_is_stable_when_its_mean_is_known_and_does_not_drift() {
        let rule = StabilityRule {
            target: 0.02,
            min_intervals: 10,
        };
        let noisy: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { 950.0 } else { 1050.0 })
            .collect();
        // Too few intervals, however steady.
        assert!(!rule.judge(&noisy[..9]).stable);
        assert!(rule.judge(&noisy[..10]).stable);
        // Very noisy: 500 ± 400 needs many intervals before its mean is known to 2%.
        let wild: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { 100.0 } else { 900.0 })
            .collect();
        let judged = rule.judge(&wild);
        assert!(!judged.stable);
        assert!(judged.relative_error.unwrap() > 0.1);
        // A steady climb of 1% per interval: a small standard error after 30 intervals
        // (about 1.6%), but the halves differ by about 15%.
        let climbing: Vec<f64> = (0..30).map(|i| 1000.0 * (1.0 + 0.01 * i as f64)).collect();
        let judged = rule.judge(&climbing);
        assert!(judged.relative_error.unwrap() < 0.02, "{judged:?}");
        assert!(judged.drift.unwrap() > 0.1, "{judged:?}");
        assert!(!judged.stable);
        // A drop is drift too.
        let sinking: Vec<f64> = climbing.iter().rev().copied().collect();
        assert!(rule.judge(&sinking).drift.unwrap() < -0.1);
        assert!(!rule.judge(&sinking).stable);
        // Nothing measured is never stable.
        assert!(!rule.judge(&[0.0; 40]).stable);
    }

    #[test]
    fn improvement_is_the_mean_of_relative_steps() {
        assert_eq!(average_improvement(&[100.0, 200.0, 300.0], 3), None);
        // +100%, +50%, +0%: 50%.
        let a = average_improvement(&[100.0, 200.0, 300.0, 300.0], 3).unwrap();
        assert!((a - 0.5).abs() < 1e-12, "{a}");
        // Only the last 3 count.
        let a = average_improvement(&[1.0, 100.0, 110.0, 99.0, 99.0], 3).unwrap();
        assert!((a - (0.1 - 0.1) / 3.0).abs() < 1e-12, "{a}");
        assert_eq!(average_improvement(&[0.0, 1.0], 1), None);
    }

    #[test]
    fn the_sweep_stops_when_the_throughput_stops_improving() {
        // Climbing fast: go on.
        assert_eq!(stop_rule(&[1000.0, 2000.0, 3000.0, 4000.0], 0.02), None);
        // Fewer than 4 steps can never stop by the rules.
        assert_eq!(stop_rule(&[1000.0, 900.0, 800.0], 0.02), None);
        // +10%, −5%, −6%: the average over 3 is below 0.
        let stop = stop_rule(&[1000.0, 2000.0, 2200.0, 2090.0, 1964.6], 0.02).unwrap();
        let SweepStop::NoImprovement { steps: 3, average } = stop else {
            panic!("{stop:?}")
        };
        assert!((average - (0.1 - 0.05 - 0.06) / 3.0).abs() < 1e-9);
        // Exactly flat counts as no improvement.
        assert!(matches!(
            stop_rule(&[10.0, 20.0, 20.0, 20.0, 20.0], 0.02),
            Some(SweepStop::NoImprovement { .. })
        ));
        // +1% a step, five steps running: below 2%.
        let creeping: Vec<f64> = (0..7).map(|i| 1000.0 * 1.01f64.powi(i)).collect();
        let stop = stop_rule(&creeping, 0.02).unwrap();
        assert!(
            matches!(stop, SweepStop::SmallImprovement { steps: 5, .. }),
            "{stop:?}"
        );
        // But not before five improvements are known.
        assert_eq!(stop_rule(&creeping[..5], 0.02), None);
        // A big gain early keeps the 5-step average up.
        assert_eq!(
            stop_rule(&[100.0, 1000.0, 1010.0, 1020.0, 1030.0, 1040.0], 0.02),
            None
        );
    }
}
