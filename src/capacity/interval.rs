//! The interval search: a capacity stated as a lower and an upper bound at a confidence, from
//! every window of every trial (docs/decisions/0019-a-capacity-interval.md).
//!
//! **The quantity.** At an attempted rate r a 10-second window fails the goal with some long-run
//! probability p(r) (latency over the SLA, errors, or a rate the cluster did not carry), which
//! does not fall as r rises. With an exceed ratio e (default 10 %), the capacity is the highest
//! rate with p(r) ≤ e. A lower bound L says p(L) ≤ e, an upper bound U says p(U) > e; each is
//! confirmed by a one-sided binomial test at (1 − confidence) / 2, so that [L, U] holds the
//! capacity with at least the confidence.
//!
//! **The evidence.** A trial's windows are correlated (a GC pause or a compaction spans
//! several): a trial of m windows counts as m / (1 + (m − 1)·ρ) independent ones, its failures
//! likewise, with ρ = [`WINDOW_CORRELATION`]. Monotonicity lets evidence pool: windows at a
//! higher rate bound p(r) from above, windows at a lower one bound it from below. A monotone
//! fit of the failing shares (pool-adjacent-violators) splits the rates tried into those that
//! look good (fitted share ≤ e) and those that look bad; a lower bound's test takes the
//! windows of its rate and of every good-looking rate above it, an upper bound's those of its
//! rate and every bad-looking rate below it.
//!
//! **The next trial.** The search climbs the probe's ladder in short trials
//! until one looks bad, bisects between the highest good-looking and lowest bad-looking rates
//! in short trials while they are far apart, then runs full trials at those two until both
//! are confirmed within the width. A trial at the upper candidate stops at the failing window
//! that confirms it. A rate that stays unconfirmed after [`MAX_FULL_AT_RATE`] full trials lies
//! too close to the capacity to confirm at this width: the candidate moves one width away. A
//! client-bound trial is run once more; a rate client-bound twice caps the search, which then
//! states a lower bound and where the client stopped.
//!
//! Like [`super::search`], every decision is a pure function of the goal and the records, so
//! a search resumes by reading its records back.
//!
//! **Why one file of about 730 lines.** The evidence pooled per rate, the binomial tests that
//! confirm a bound, the monotone fit and the choice of the next trial are one method: each
//! step reads the others' numbers, and the decision 0019 they implement is read beside them.

use serde::{Deserialize, Serialize};
use statrs::function::beta::beta_reg;

use super::rates::{auto_ladder, nice, nice_unit, same_rate};
use super::record::{ProbeRecord, Record, TrialRecord};

/// The correlation assumed between two windows of one trial (decision 0019 gives the
/// measurements behind it): a trial of 6 windows weighs as 3.4 independent ones.
pub const WINDOW_CORRELATION: f64 = 0.15;

/// Windows of a short trial, far from the answer.
pub const SHORT_WINDOWS: u32 = 2;

/// Full trials at one candidate for an upper bound before the search tries a width higher.
pub const MAX_FULL_AT_RATE: u32 = 4;

/// Trials (short and full, valid or not) after which a search ends with the bounds it has,
/// unless its goal says fewer.
pub const MAX_TRIALS: usize = 40;

/// A client-bound trial is run again once; a rate client-bound this often caps the search.
pub const CLIENT_BOUND_TRIES: u32 = 2;

/// When every rate fails, the search goes down by halves to this fraction of the ceiling.
const FLOOR: f64 = 0.01;

/// What the interval must say, and how precisely.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntervalGoal {
    /// The share of windows that may fail the SLA at the capacity (e).
    pub exceed_ratio: f64,
    /// The probability that the interval holds the capacity, e.g. 0.9.
    pub confidence: f64,
    /// The search ends when (U − L) / U is at most this.
    pub width: f64,
    /// Windows of a full trial (--duration / --window).
    pub windows_per_trial: u32,
    /// The correlation assumed between two windows of one trial ([`WINDOW_CORRELATION`]).
    #[serde(default = "default_correlation")]
    pub window_correlation: f64,
    /// Trials after which the search ends with the bounds it has ([`MAX_TRIALS`]; fewer for
    /// the quickstart's first answer).
    #[serde(default = "default_max_trials")]
    pub max_trials: usize,
}

fn default_correlation() -> f64 {
    WINDOW_CORRELATION
}

fn default_max_trials() -> usize {
    MAX_TRIALS
}

impl IntervalGoal {
    /// The error allowed to each bound's test.
    fn alpha(&self) -> f64 {
        (1.0 - self.confidence) / 2.0
    }
}

/// What one bound rests on: the windows pooled for its test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Support {
    /// The bound, per second.
    pub rate_per_s: f64,
    /// Windows judged at the rates pooled (within the width of the bound).
    pub windows: u32,
    /// Of them, windows that failed the goal.
    pub failed_windows: u32,
    /// The rates pooled, lowest first.
    pub rates: Vec<f64>,
}

/// What the records say: the bounds, a point estimate between them, and where the client
/// stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The highest rate confirmed at or below the capacity.
    pub lower: Option<Support>,
    /// The lowest rate confirmed above the capacity.
    pub upper: Option<Support>,
    /// The rate where the monotone fit crosses the exceed ratio, between the bounds.
    pub estimate_per_s: Option<f64>,
    /// The lowest rate the client could not keep twice: nothing at or above it was judged.
    pub client_limit_per_s: Option<f64>,
}

/// The windows seen at one attempted rate.
#[derive(Debug, Clone, PartialEq)]
struct Evidence {
    rate: f64,
    windows: u32,
    failed: u32,
    /// As independent windows (the correlation within a trial taken out).
    weight: f64,
    weight_failed: f64,
    trials: u32,
    full_trials: u32,
}

/// The windows a trial judged and how many failed the goal: every window fails when the run
/// did not carry the rate or did not complete. A record without window counts (written
/// before they were kept) counts as one window.
pub fn trial_windows(trial: &TrialRecord) -> (u32, u32) {
    match (trial.windows, trial.failed_windows) {
        (Some(n), Some(f)) if n > 0 => (n, f.min(n)),
        _ => (1, u32::from(!trial.pass)),
    }
}

fn design_effect(windows: u32, rho: f64) -> f64 {
    1.0 + f64::from(windows.saturating_sub(1)) * rho
}

/// The valid trials' windows by rate, lowest rate first; rates at or above `limit` left out.
fn evidence(records: &[Record], goal: &IntervalGoal, limit: Option<f64>) -> Vec<Evidence> {
    let full_windows = goal.windows_per_trial.max(1);
    let mut rows: Vec<Evidence> = Vec::new();
    for trial in trials(records) {
        if trial.invalid.is_some() || limit.is_some_and(|l| trial.rate_per_s >= l) {
            continue;
        }
        let (n, f) = trial_windows(trial);
        let deff = design_effect(n, goal.window_correlation);
        let row = match rows
            .iter_mut()
            .find(|r| same_rate(r.rate, trial.rate_per_s))
        {
            Some(row) => row,
            None => {
                rows.push(Evidence {
                    rate: trial.rate_per_s,
                    windows: 0,
                    failed: 0,
                    weight: 0.0,
                    weight_failed: 0.0,
                    trials: 0,
                    full_trials: 0,
                });
                rows.last_mut().expect("just pushed")
            }
        };
        row.windows += n;
        row.failed += f;
        row.weight += f64::from(n) / deff;
        row.weight_failed += f64::from(f) / deff;
        row.trials += 1;
        row.full_trials += u32::from(n >= full_windows);
    }
    rows.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    rows
}

/// P(X ≤ k) for X ~ Binomial(n, p), for real n and k (0 ≤ k < n).
fn binomial_cdf(k: f64, n: f64, p: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    beta_reg(n - k, k + 1.0, 1.0 - p)
}

/// Whether `failed` of `windows` (independent-equivalent) show p ≤ e at level alpha.
fn confirms_lower(windows: f64, failed: f64, goal: &IntervalGoal) -> bool {
    windows > 0.0 && binomial_cdf(failed, windows, goal.exceed_ratio) <= goal.alpha()
}

/// Whether `failed` of `windows` show p > e at level alpha.
fn confirms_upper(windows: f64, failed: f64, goal: &IntervalGoal) -> bool {
    failed > 0.0 && 1.0 - binomial_cdf(failed - 1.0, windows, goal.exceed_ratio) <= goal.alpha()
}

/// The evidence pooled for a bound at `rows[at]`: its rate's, and for a lower bound that of
/// every good-looking rate above it, for an upper bound that of every bad-looking rate below
/// it.
fn pooled<'a>(
    rows: &'a [Evidence],
    at: usize,
    fit: &[f64],
    goal: &IntervalGoal,
    lower: bool,
) -> Vec<&'a Evidence> {
    let e = goal.exceed_ratio;
    if lower {
        rows[at..]
            .iter()
            .zip(&fit[at..])
            .take_while(|(_, &p)| p <= e)
            .map(|(row, _)| row)
            .collect()
    } else {
        let mut pool: Vec<&Evidence> = rows[..=at]
            .iter()
            .zip(&fit[..=at])
            .rev()
            .take_while(|(_, &p)| p > e)
            .map(|(row, _)| row)
            .collect();
        pool.reverse();
        pool
    }
}

/// Full trials at one candidate for a lower bound: enough for the windows that confirm it
/// when none fails, and one more.
fn max_full_at_rate(goal: &IntervalGoal) -> u32 {
    let per_trial = f64::from(goal.windows_per_trial.max(1))
        / design_effect(goal.windows_per_trial.max(1), goal.window_correlation);
    let zero_failures = windows_to_confirm_lower(0.0, 0.0, goal);
    (zero_failures / per_trial).ceil().min(20.0) as u32 + 1
}

/// Independent windows without a failure that `windows` with `failed` still need to confirm
/// p ≤ e (infinite beyond a thousand).
fn windows_to_confirm_lower(windows: f64, failed: f64, goal: &IntervalGoal) -> f64 {
    (0..=2000)
        .map(|half| f64::from(half) / 2.0)
        .find(|&more| confirms_lower(windows + more, failed, goal))
        .unwrap_or(f64::INFINITY)
}

fn support(rows: &[&Evidence], rate: f64) -> Support {
    Support {
        rate_per_s: rate,
        windows: rows.iter().map(|r| r.windows).sum(),
        failed_windows: rows.iter().map(|r| r.failed).sum(),
        rates: rows.iter().map(|r| r.rate).collect(),
    }
}

fn sums(rows: &[&Evidence]) -> (f64, f64) {
    rows.iter()
        .fold((0.0, 0.0), |(w, f), r| (w + r.weight, f + r.weight_failed))
}

/// The confirmed bounds: the highest good-looking rate whose pooled windows confirm p ≤ e,
/// and the lowest bad-looking one whose pooled windows confirm p > e.
fn bounds(
    rows: &[Evidence],
    fit: &[f64],
    goal: &IntervalGoal,
) -> (Option<Support>, Option<Support>) {
    let e = goal.exceed_ratio;
    let upper = (0..rows.len()).filter(|&i| fit[i] > e).find_map(|i| {
        let pool = pooled(rows, i, fit, goal, false);
        let (w, f) = sums(&pool);
        confirms_upper(w, f, goal).then(|| support(&pool, rows[i].rate))
    });
    let lower = (0..rows.len())
        .rev()
        .filter(|&i| fit[i] <= e)
        .find_map(|i| {
            let pool = pooled(rows, i, fit, goal, true);
            let (w, f) = sums(&pool);
            confirms_lower(w, f, goal).then(|| support(&pool, rows[i].rate))
        });
    (lower, upper)
}

/// The failing share at each rate, fitted non-decreasing in the rate (pool-adjacent-violators,
/// each rate weighed by its independent-equivalent windows).
fn monotone_fit(rows: &[Evidence]) -> Vec<f64> {
    // Blocks of (weighted sum, weight, rates covered).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
    for row in rows {
        let weight = row.weight.max(1e-12);
        blocks.push((row.weight_failed, weight, 1));
        while blocks.len() >= 2 {
            let (s2, w2, n2) = blocks[blocks.len() - 1];
            let (s1, w1, n1) = blocks[blocks.len() - 2];
            if s1 / w1 <= s2 / w2 {
                break;
            }
            blocks.truncate(blocks.len() - 2);
            blocks.push((s1 + s2, w1 + w2, n1 + n2));
        }
    }
    blocks
        .into_iter()
        .flat_map(|(s, w, n)| std::iter::repeat_n(s / w, n))
        .collect()
}

/// The highest rate that looks good and the lowest above it that looks bad, by the fit.
fn candidates(rows: &[Evidence], fit: &[f64], e: f64) -> (Option<usize>, Option<usize>) {
    let good = fit.iter().rposition(|&p| p <= e);
    let bad = match good {
        Some(g) => (g + 1 < rows.len()).then_some(g + 1),
        None => (!rows.is_empty()).then_some(0),
    };
    (good, bad)
}

/// The lowest rate the client could not keep [`CLIENT_BOUND_TRIES`] times, and a rate whose
/// only trials so far are fewer client-bound ones (to run again).
fn client_bound(records: &[Record]) -> (Option<f64>, Option<(f64, u32)>) {
    let mut by_rate: Vec<(f64, u32, u32, u32)> = Vec::new(); // rate, invalid, valid, last repeat
    for trial in trials(records) {
        let at = match by_rate
            .iter_mut()
            .find(|r| same_rate(r.0, trial.rate_per_s))
        {
            Some(at) => at,
            None => {
                by_rate.push((trial.rate_per_s, 0, 0, 0));
                by_rate.last_mut().expect("just pushed")
            }
        };
        if trial.invalid.is_some() {
            at.1 += 1;
        } else {
            at.2 += 1;
        }
        at.3 = at.3.max(trial.repeat);
    }
    let limit = by_rate
        .iter()
        .filter(|r| r.1 >= CLIENT_BOUND_TRIES && r.2 == 0)
        .map(|r| r.0)
        .min_by(f64::total_cmp);
    let retry = by_rate
        .iter()
        .filter(|r| r.1 > 0 && r.1 < CLIENT_BOUND_TRIES && r.2 == 0)
        .filter(|r| limit.is_none_or(|l| r.0 < l))
        .map(|r| (r.0, r.3 + 1))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    (limit, retry)
}

/// What the records say about the capacity under `goal`.
pub fn interval(records: &[Record], goal: &IntervalGoal) -> Interval {
    let (limit, _) = client_bound(records);
    let rows = evidence(records, goal, limit);
    let fit = monotone_fit(&rows);
    let (lower, upper) = bounds(&rows, &fit, goal);
    let estimate_per_s = estimate(&rows, &fit, goal.exceed_ratio)
        .map(|c| {
            let lo = lower.as_ref().map_or(0.0, |l| l.rate_per_s);
            let hi = upper.as_ref().map_or(f64::INFINITY, |u| u.rate_per_s);
            c.clamp(lo, hi)
        })
        .filter(|_| lower.is_some());
    Interval {
        lower,
        upper,
        estimate_per_s,
        client_limit_per_s: limit,
    }
}

/// Where the fit crosses e, linearly between the last good-looking and first bad-looking rate.
fn estimate(rows: &[Evidence], fit: &[f64], e: f64) -> Option<f64> {
    let (good, bad) = candidates(rows, fit, e);
    let g = good?;
    let Some(b) = bad else {
        return Some(rows[g].rate);
    };
    let (p0, p1) = (fit[g], fit[b]);
    let share = if p1 > p0 { (e - p0) / (p1 - p0) } else { 0.0 };
    Some(rows[g].rate + share.clamp(0.0, 1.0) * (rows[b].rate - rows[g].rate))
}

/// The lines that state an interval search's answer, for the terminal.
pub fn describe(records: &[Record], goal: &IntervalGoal) -> Vec<String> {
    let found = interval(records, goal);
    let rate = |r: f64| crate::format::format_rate(r);
    let percent = |f: f64| format!("{}%", (f * 1000.0).round() / 10.0);
    let one_sided = percent(1.0 - goal.alpha());
    let lower_words = |l: &Support| {
        format!(
            "{} windows at {}/s{}, {} failing",
            l.windows,
            rate(l.rate_per_s),
            if l.rates.len() > 1 { " and above" } else { "" },
            l.failed_windows
        )
    };
    let upper_words = |u: &Support| {
        format!(
            "{} of {} windows failed at {}/s{}",
            u.failed_windows,
            u.windows,
            rate(u.rate_per_s),
            if u.rates.len() > 1 { " and below" } else { "" }
        )
    };
    let load = format!("{:.1} min of load", load_time_s(records) / 60.0);
    let goal_words = format!(
        "the highest rate at which at most {} of the SLA's windows fail",
        percent(goal.exceed_ratio)
    );
    let mut lines = Vec::new();
    match (&found.lower, &found.upper) {
        (Some(l), Some(u)) => {
            lines.push(format!(
                "Capacity: {}/s, between {} and {}/s at {} confidence ({}; {}; {load})",
                rate(found.estimate_per_s.unwrap_or(l.rate_per_s)),
                rate(l.rate_per_s),
                rate(u.rate_per_s),
                percent(goal.confidence),
                lower_words(l),
                upper_words(u)
            ));
            let width = (u.rate_per_s - l.rate_per_s) / u.rate_per_s;
            if width > goal.width + 1e-9 {
                lines.push(format!(
                    "  The bounds are {} apart, more than the {} asked: windows near the \
                     capacity fail too often to confirm narrower ones in the trials allowed.",
                    percent(width),
                    percent(goal.width)
                ));
            }
        }
        (Some(l), None) => lines.push(match found.client_limit_per_s {
            Some(limit) => format!(
                "Capacity: at least {}/s at {one_sided} confidence ({}; {load}); from {}/s up \
                 this client could not keep its schedule (twice), so no upper bound: give it \
                 more --threads and cores, or a machine of its own",
                rate(l.rate_per_s),
                lower_words(l),
                rate(limit)
            ),
            None => format!(
                "Capacity: at least {}/s at {one_sided} confidence ({}; {load}); no rate tried \
                 was confirmed above the capacity",
                rate(l.rate_per_s),
                lower_words(l)
            ),
        }),
        (None, Some(u)) => lines.push(format!(
            "Capacity: below {}/s at {one_sided} confidence ({}; {load}); no rate tried was \
             confirmed within the goal",
            rate(u.rate_per_s),
            upper_words(u)
        )),
        (None, None) => lines.push(match found.client_limit_per_s {
            Some(limit) => format!(
                "Capacity: no bound; from {}/s up this client could not keep its schedule \
                 (twice), and nothing below it was confirmed ({load})",
                rate(limit)
            ),
            None => format!("Capacity: no bound confirmed yet ({load})"),
        }),
    }
    if found.lower.is_none() {
        if let Some(line) = failing_at_the_lowest_rate(records, goal) {
            lines.push(line);
        }
    }
    lines.push(format!(
        "  The capacity here is {goal_words} (docs/capacity.md)."
    ));
    lines
}

/// Without a lower bound: when windows failed even at the lowest rate tried, a sentence
/// that says so, since the load is then not what fails them.
fn failing_at_the_lowest_rate(records: &[Record], goal: &IntervalGoal) -> Option<String> {
    let (limit, _) = client_bound(records);
    let rows = evidence(records, goal, limit);
    let lowest = rows.first().filter(|row| row.failed > 0)?;
    Some(format!(
        "  Windows failed down to the lowest rate tried, {}/s ({} of {}): something other \
         than the load fails them now and then (each trial's server pauses say whether the \
         nodes' GC does); a looser SLA, a larger --exceed-ratio or another heap or collector \
         may give a capacity.",
        crate::format::format_rate(lowest.rate),
        lowest.failed,
        lowest.windows
    ))
}

/// The rate a client-bound trial is to be run again at, if any (see [`CLIENT_BOUND_TRIES`]).
pub fn retry_rate(records: &[Record]) -> Option<f64> {
    client_bound(records).1.map(|(rate, _)| rate)
}

/// Seconds the runs took, probe included: the search's load-time.
pub fn load_time_s(records: &[Record]) -> f64 {
    records
        .iter()
        .map(|record| match record {
            Record::Probe(probe) => probe.seconds,
            Record::Trial(trial) => trial.wall_s,
        })
        .sum()
}

/// What the interval search runs next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IntervalStep {
    /// The closed-loop probe of the ceiling.
    Probe,
    /// A trial at `rate_per_s` of `windows` windows, stopped early once `stop_after` of them
    /// failed (`None`: never).
    Trial {
        /// The attempted rate, per second.
        rate_per_s: f64,
        /// Which trial at this rate, from 1.
        repeat: u32,
        /// Windows to measure.
        windows: u32,
        /// Failing windows that end the trial early.
        stop_after: Option<u32>,
    },
    /// The interval is as narrow as asked, or nothing more can narrow it.
    Done,
}

/// The next run of an interval search, from the goal, the ladder's base (a matrix's shared
/// ceiling) and the records alone.
pub fn next_step(goal: &IntervalGoal, base: Option<f64>, records: &[Record]) -> IntervalStep {
    let Some(probe) = first_probe(records) else {
        return IntervalStep::Probe;
    };
    let ceiling = base.unwrap_or(probe.achieved_per_s);
    if !(ceiling.is_finite() && ceiling > 0.0) {
        return IntervalStep::Done;
    }
    let full = goal.windows_per_trial.max(1);
    let short = SHORT_WINDOWS.min(full);
    let repeat_at = |rate: f64| {
        trials(records)
            .filter(|t| same_rate(t.rate_per_s, rate))
            .map(|t| t.repeat)
            .max()
            .unwrap_or(0)
            + 1
    };
    let (limit, retry) = client_bound(records);
    if let Some((rate, repeat)) = retry {
        // Run a client-bound trial again, as long as the first try (a short trial counts).
        let windows = trials(records)
            .filter(|t| same_rate(t.rate_per_s, rate))
            .map(|t| trial_windows(t).0)
            .max()
            .unwrap_or(full);
        return trial(rate, repeat, windows, None);
    }
    if trials(records).count() >= goal.max_trials {
        return IntervalStep::Done;
    }
    let rows = evidence(records, goal, limit);
    let fit = monotone_fit(&rows);
    let (lower, upper) = bounds(&rows, &fit, goal);
    if let (Some(l), Some(u)) = (&lower, &upper) {
        if (u.rate_per_s - l.rate_per_s) / u.rate_per_s <= goal.width {
            return IntervalStep::Done;
        }
    }
    let below_limit = |rate: f64| limit.is_none_or(|l| rate < l);
    let (good, bad) = candidates(&rows, &fit, goal.exceed_ratio);
    let unit = nice_unit(ceiling);

    let Some(bad) = bad else {
        // Everything tried looks good: climb the ladder in short trials.
        let top = rows.last().map_or(0.0, |r| r.rate);
        if let Some(rung) = auto_ladder(ceiling)
            .into_iter()
            .find(|&r| r > top && below_limit(r))
        {
            return trial(rung, repeat_at(rung), short, None);
        }
        // The ladder's end or the client's limit: confirm the highest rate, if it can be.
        return match rows.last() {
            Some(row) if lower.as_ref().is_none_or(|l| l.rate_per_s < row.rate) => {
                if row.full_trials < MAX_FULL_AT_RATE {
                    trial(row.rate, repeat_at(row.rate), full, None)
                } else {
                    IntervalStep::Done
                }
            }
            _ => IntervalStep::Done,
        };
    };
    let Some(good) = good else {
        // Everything tried looks bad: halve the lowest rate, in short trials.
        let lowest = rows[0].rate;
        if lowest < FLOOR * ceiling {
            return IntervalStep::Done;
        }
        let rate = nice(lowest / 2.0, unit);
        if rate >= lowest {
            return IntervalStep::Done;
        }
        return trial(rate, repeat_at(rate), short, None);
    };
    let (g, b) = (rows[good].rate, rows[bad].rate);
    let gap = (b - g) / b;
    if gap > goal.width {
        let middle = nice((g + b) / 2.0, unit);
        if middle > g && middle < b {
            let windows = if gap > 2.0 * goal.width { short } else { full };
            return trial(middle, repeat_at(middle), windows, None);
        }
    }
    // The candidates are within the width (or nothing lies between them): confirm them.
    let lower_at = lower.as_ref().map_or(0.0, |l| l.rate_per_s);
    if lower_at < g {
        // Full trials at the good candidate while a few more without a failure could confirm
        // it; else a width lower, and lower again (each rate's windows pool with those of the
        // good-looking rates above it).
        let per_trial = f64::from(full) / design_effect(full, goal.window_correlation);
        let allowance = max_full_at_rate(goal);
        for k in 0..=8 {
            let rate = if k == 0 {
                g
            } else {
                nice(g * (1.0 - goal.width).powi(k), unit)
            };
            if (k > 0 && rate >= g) || rate <= lower_at {
                break;
            }
            let done = rows
                .iter()
                .find(|r| same_rate(r.rate, rate))
                .map_or(0, |r| r.full_trials);
            if done >= allowance {
                continue;
            }
            let (w, f) = rows
                .iter()
                .zip(&fit)
                .filter(|(r, &p)| p <= goal.exceed_ratio && r.rate >= rate - 1e-9)
                .fold((0.0, 0.0), |(w, f), (r, _)| {
                    (w + r.weight, f + r.weight_failed)
                });
            let needed = windows_to_confirm_lower(w, f, goal);
            if needed <= f64::from(allowance - done) * per_trial {
                return trial(rate, repeat_at(rate), full, None);
            }
        }
    }
    let upper_at = upper.as_ref().map_or(f64::INFINITY, |u| u.rate_per_s);
    if upper_at > b {
        if rows[bad].full_trials < MAX_FULL_AT_RATE {
            let stop_after = failures_to_confirm(&rows, &fit, b, full, goal);
            return trial(b, repeat_at(b), full, stop_after);
        }
        let rate = nice(b * (1.0 + goal.width), unit);
        if rate > b && rate < upper_at && below_limit(rate) {
            let at = rows.iter().find(|r| same_rate(r.rate, rate));
            if at.is_none_or(|r| r.full_trials < MAX_FULL_AT_RATE) {
                let stop_after = failures_to_confirm(&rows, &fit, rate, full, goal);
                return trial(rate, repeat_at(rate), full, stop_after);
            }
        }
    }
    IntervalStep::Done
}

/// The fewest failing windows of a new trial of `windows` at `rate` that would confirm it as
/// an upper bound, given the windows already pooled for it; `None` when even all would not.
fn failures_to_confirm(
    rows: &[Evidence],
    fit: &[f64],
    rate: f64,
    windows: u32,
    goal: &IntervalGoal,
) -> Option<u32> {
    let (w, f) = match rows.iter().position(|r| same_rate(r.rate, rate)) {
        Some(at) if fit[at] > goal.exceed_ratio => sums(&pooled(rows, at, fit, goal, false)),
        Some(at) => (rows[at].weight, rows[at].weight_failed),
        None => (0.0, 0.0),
    };
    let deff = design_effect(windows, goal.window_correlation);
    // The trial stops at its k-th failing window, so it has judged at least k windows.
    (1..=windows).find(|&k| {
        let k = f64::from(k);
        confirms_upper(w + k / deff, f + k / deff, goal)
    })
}

/// A trial of the interval search.
fn trial(rate_per_s: f64, repeat: u32, windows: u32, stop_after: Option<u32>) -> IntervalStep {
    IntervalStep::Trial {
        rate_per_s,
        repeat,
        windows,
        stop_after,
    }
}

fn trials(records: &[Record]) -> impl Iterator<Item = &TrialRecord> {
    records.iter().filter_map(|record| match record {
        Record::Trial(trial) => Some(trial),
        Record::Probe(_) => None,
    })
}

fn first_probe(records: &[Record]) -> Option<&ProbeRecord> {
    records.iter().find_map(|record| match record {
        Record::Probe(probe) => Some(probe),
        Record::Trial(_) => None,
    })
}

#[cfg(test)]
#[path = "interval_tests.rs"]
mod tests;
