//! The capacity search's logic (METHOD.md §4): which run comes next, and what the runs so far
//! say about capacity.
//!
//! Both are pure functions of the settings and the records: nothing else is remembered, so a
//! search resumes by reading its records back and asking again, and records may come in any
//! order. A rate is *decided* when every repeat of it passed (a pass) or one repeat failed (a
//! fail: the remaining repeats are skipped, the rate has failed already).
//!
//! With `--rates auto` the search first probes the ceiling C (the highest achieved throughput
//! of a closed-loop run), then climbs a ladder by fractions of C (0.4, 0.6, 0.8, 0.9, 1.0, 1.1,
//! … 2.0) up to the first failing rate, then bisects between the highest passing rate L and the
//! lowest failing rate F above it until (F − L) / F is within the resolution. Every rate is a
//! "nice" number: a multiple of 10^(⌊log₁₀ C⌋ − 2), at least 1/s (C = 12 345 gives multiples
//! of 100).

use serde::{Deserialize, Serialize};

pub use super::rates::RatePlan;
use super::rates::{auto_ladder, nice, nice_unit, same_rate, AUTO_FRACTIONS};
use super::record::{ProbeRecord, Record, TrialRecord};

/// When even the lowest rate fails, the bisection towards zero gives up below this fraction
/// of the ceiling: there is no capacity worth the name.
const AUTO_FLOOR: f64 = 0.01;

/// Everything the search's decisions depend on, besides the records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchPlan {
    /// Which rates to try.
    pub plan: RatePlan,
    /// Trials per rate (at least 1; 0 counts as 1).
    pub repeats: u32,
    /// For the automatic plan: climb the ladder by fractions of this rate instead of the
    /// probe's ceiling. A configuration matrix gives every configuration the first one's
    /// ceiling, so that their ladders share rates and can be compared rate by rate; each
    /// still probes its own ceiling and bisects to its own capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder_base_per_s: Option<f64>,
    /// The interval search's goal (`--goal interval`, decision 0019); `None`: every window of
    /// every repeat must pass (the strict goal, as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<super::interval::IntervalGoal>,
}

/// What to run next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// A closed-loop run measuring the ceiling.
    Probe,
    /// A trial at a fixed attempted rate.
    Trial {
        /// The attempted rate, per second.
        rate_per_s: f64,
        /// Which repeat, from 1.
        repeat: u32,
    },
    /// The search is over.
    Done,
}

/// The next run of the search, from the settings and the records so far (in any order) alone.
///
/// A ladder tries every rung in order, each `repeats` times, skipping the remaining repeats of
/// a rate once one failed, and goes on to the end. The automatic plan is described in the
/// module's documentation; it is done when the probe achieved nothing, when every rung up to
/// 2·C passed, when the bisection reached the resolution, when rounding leaves no new rate
/// between L and F, or when every rate failed down to 1% of C.
pub fn next_step(settings: &SearchPlan, records: &[Record]) -> Step {
    let repeats = settings.repeats.max(1);
    if first_invalid(records).is_some() {
        // The client, not the server, limited a trial: nothing above or below it says more
        // about the server until the client is fixed.
        return Step::Done;
    }
    match &settings.plan {
        RatePlan::Ladder(rates) => {
            for &rate in rates {
                if let Decision::Next(repeat) = decide(trials_at(records, rate), repeats) {
                    return Step::Trial {
                        rate_per_s: rate,
                        repeat,
                    };
                }
            }
            Step::Done
        }
        RatePlan::Auto { resolution } => {
            auto_step(*resolution, repeats, settings.ladder_base_per_s, records)
        }
    }
}

/// [`next_step`] for the automatic plan.
fn auto_step(resolution: f64, repeats: u32, base: Option<f64>, records: &[Record]) -> Step {
    let Some(probe) = first_probe(records) else {
        return Step::Probe;
    };
    let ceiling = base.unwrap_or(probe.achieved_per_s);
    if !(ceiling.is_finite() && ceiling > 0.0) {
        return Step::Done;
    }
    let trial = |rate_per_s, repeat| Step::Trial { rate_per_s, repeat };

    // The ladder, up to its first failing rung.
    let mut pass = 0.0;
    let mut fail = None;
    for rate in auto_ladder(ceiling) {
        match decide(trials_at(records, rate), repeats) {
            Decision::Pass => pass = rate,
            Decision::Fail => {
                fail = Some(rate);
                break;
            }
            Decision::Next(repeat) => return trial(rate, repeat),
        }
    }
    let Some(mut fail) = fail else {
        return Step::Done;
    };

    // Bisection between the highest pass and the lowest fail above it (0 when none passed).
    let unit = nice_unit(ceiling);
    loop {
        if pass == 0.0 && fail < AUTO_FLOOR * ceiling {
            return Step::Done;
        }
        if (fail - pass) / fail <= resolution {
            return Step::Done;
        }
        let middle = nice((pass + fail) / 2.0, unit);
        if middle <= pass || middle >= fail {
            return Step::Done;
        }
        match decide(trials_at(records, middle), repeats) {
            Decision::Pass => pass = middle,
            Decision::Fail => fail = middle,
            Decision::Next(repeat) => return trial(middle, repeat),
        }
    }
}

/// A typical number of trial runs for the settings, for "this will take about N minutes": an
/// estimate, not a bound. A ladder runs every rung `repeats` times (fewer when some fail); the
/// automatic plan is taken as about 5 ladder rungs plus the bisection steps that narrow a gap
/// of 0.1·C down to the resolution, each `repeats` times. The probe is not a trial.
pub fn estimate_trials(settings: &SearchPlan) -> usize {
    let repeats = settings.repeats.max(1) as usize;
    match &settings.plan {
        RatePlan::Ladder(rates) => rates.len() * repeats,
        RatePlan::Auto { resolution } => {
            let bisections = if *resolution > 0.0 && *resolution < 0.1 {
                (0.1 / resolution).log2().ceil() as usize
            } else {
                0
            };
            (AUTO_FRACTIONS.len() + bisections) * repeats
        }
    }
}

/// The verdict on one attempted rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every repeat ran and passed.
    Pass,
    /// A repeat failed.
    Fail,
    /// Not every repeat has run, and none failed.
    Incomplete,
    /// A repeat was client-bound (the client, not the server, limited it): no verdict on the
    /// rate, and the search stopped there.
    Invalid,
}

/// All trials at one attempted rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateRow {
    /// The attempted rate, per second.
    pub rate_per_s: f64,
    /// The trials, by repeat.
    pub trials: Vec<TrialRecord>,
    /// The verdict on the rate.
    pub verdict: Verdict,
}

/// What the records say about capacity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The probe of the ceiling, when there was one.
    pub probe: Option<ProbeRecord>,
    /// One row per attempted rate, by rate.
    pub rows: Vec<RateRow>,
    /// The highest throughput achieved by the probe or any trial, per second (0 when none).
    pub highest_achieved_per_s: f64,
    /// The highest rate at which every repeat passed and every lower rate passed too.
    pub capacity_per_s: Option<f64>,
    /// Passing rates above a failing rate: reported, not capacity.
    pub unstable: Vec<f64>,
    /// The first client-bound trial (the lowest rate, then repeat), when there was one: the
    /// search stopped there and reports no capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<TrialRecord>,
    /// What `--validate` found over the trials; absent when they did not validate. A
    /// defect marks the search whatever its capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<crate::validation::DataVerdict>,
}

/// The outcome of the records so far, each rate judged against `repeats` repeats.
///
/// Capacity counts only rates that passed: walking up from the lowest rate, it is the last
/// pass before the first rate that failed or is incomplete. An incomplete rate thus holds back
/// the passes above it until it is decided. A pass above a failing rate is unstable; a pass
/// above an incomplete rate (and no fail) is neither, yet.
pub fn outcome(records: &[Record], repeats: u32) -> Outcome {
    let repeats = repeats.max(1);
    let mut trials: Vec<&TrialRecord> = records
        .iter()
        .filter_map(|record| match record {
            Record::Trial(trial) => Some(trial),
            Record::Probe(_) => None,
        })
        .collect();
    trials.sort_by(|a, b| {
        a.rate_per_s
            .total_cmp(&b.rate_per_s)
            .then(a.repeat.cmp(&b.repeat))
    });
    let mut rows: Vec<RateRow> = Vec::new();
    for trial in trials {
        match rows.last_mut() {
            Some(row) if same_rate(row.rate_per_s, trial.rate_per_s) => {
                row.trials.push(trial.clone())
            }
            _ => rows.push(RateRow {
                rate_per_s: trial.rate_per_s,
                trials: vec![trial.clone()],
                verdict: Verdict::Incomplete,
            }),
        }
    }
    for row in &mut rows {
        row.verdict = if row.trials.iter().any(|t| t.invalid.is_some()) {
            Verdict::Invalid
        } else {
            match decide(row.trials.iter(), repeats) {
                Decision::Pass => Verdict::Pass,
                Decision::Fail => Verdict::Fail,
                Decision::Next(_) => Verdict::Incomplete,
            }
        };
    }

    let invalid = first_invalid(records).cloned();
    // A search stopped by a client-bound trial has no capacity: the passes below it may be
    // the client's as much as the server's.
    let capacity_per_s = rows
        .iter()
        .take_while(|row| row.verdict == Verdict::Pass)
        .last()
        .map(|row| row.rate_per_s)
        .filter(|_| invalid.is_none());
    let unstable = match rows.iter().find(|row| row.verdict == Verdict::Fail) {
        Some(lowest_fail) => rows
            .iter()
            .filter(|row| row.verdict == Verdict::Pass && row.rate_per_s > lowest_fail.rate_per_s)
            .map(|row| row.rate_per_s)
            .collect(),
        None => Vec::new(),
    };
    let probe = first_probe(records).cloned();
    let highest_achieved_per_s = probe
        .iter()
        .map(|probe| probe.achieved_per_s)
        .chain(
            rows.iter()
                .flat_map(|row| row.trials.iter().map(|t| t.achieved_per_s)),
        )
        .fold(0.0, f64::max);
    Outcome {
        probe,
        rows,
        highest_achieved_per_s,
        capacity_per_s,
        unstable,
        invalid,
        data: super::record::data_verdict(records),
    }
}

impl Outcome {
    /// The capacity bracket: the capacity as the search states it
    /// ([`Outcome::capacity_per_s`]) and the lowest rate that failed above it, so the
    /// capacity lies in [the first, the second); either is `None` when there is none. The
    /// live page, the comparisons and the report all read it here.
    pub fn bracket(&self) -> (Option<f64>, Option<f64>) {
        let floor = self.capacity_per_s.unwrap_or(0.0);
        let lowest_fail = self
            .rows
            .iter()
            .filter(|row| row.verdict == Verdict::Fail && row.rate_per_s > floor)
            .map(|row| row.rate_per_s)
            .reduce(f64::min);
        (self.capacity_per_s, lowest_fail)
    }
}

/// One repeat's capacity, from a search's trial records (of every repeat, in any order):
/// walking up the rates of repeat `repeat`'s trials, the highest that passed before the
/// first that failed; `None` when its lowest failed or it has no trial.
pub fn repeat_capacity<'a>(
    trials: impl IntoIterator<Item = &'a TrialRecord>,
    repeat: u32,
) -> Option<f64> {
    let mut trials: Vec<&TrialRecord> = trials.into_iter().filter(|t| t.repeat == repeat).collect();
    trials.sort_by(|a, b| a.rate_per_s.total_cmp(&b.rate_per_s));
    trials
        .iter()
        .take_while(|t| t.pass)
        .last()
        .map(|t| t.rate_per_s)
}

/// The client-bound trial at the lowest rate (then repeat), if any.
fn first_invalid(records: &[Record]) -> Option<&TrialRecord> {
    records
        .iter()
        .filter_map(|record| match record {
            Record::Trial(trial) if trial.invalid.is_some() => Some(trial),
            _ => None,
        })
        .min_by(|a, b| {
            a.rate_per_s
                .total_cmp(&b.rate_per_s)
                .then(a.repeat.cmp(&b.repeat))
        })
}

/// Where one rate stands.
enum Decision {
    /// Every repeat passed.
    Pass,
    /// A repeat failed.
    Fail,
    /// Undecided: this repeat is the first not yet run.
    Next(u32),
}

/// Where a rate stands, from its trials (in any order) and the repeats asked for.
fn decide<'a>(trials: impl Iterator<Item = &'a TrialRecord>, repeats: u32) -> Decision {
    let mut passed = vec![false; repeats as usize];
    for trial in trials {
        if !trial.pass {
            return Decision::Fail;
        }
        if let Some(slot) = (trial.repeat as usize)
            .checked_sub(1)
            .and_then(|i| passed.get_mut(i))
        {
            *slot = true;
        }
    }
    match passed.iter().position(|done| !done) {
        Some(missing) => Decision::Next(missing as u32 + 1),
        None => Decision::Pass,
    }
}

/// The trials at one attempted rate.
fn trials_at(records: &[Record], rate: f64) -> impl Iterator<Item = &TrialRecord> {
    records.iter().filter_map(move |record| match record {
        Record::Trial(trial) if same_rate(trial.rate_per_s, rate) => Some(trial),
        _ => None,
    })
}

/// The first probe in the records: a search probes once.
fn first_probe(records: &[Record]) -> Option<&ProbeRecord> {
    records.iter().find_map(|record| match record {
        Record::Probe(probe) => Some(probe),
        Record::Trial(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::sim::{run_in_memory, Simulated};

    fn settings(plan: RatePlan, repeats: u32) -> SearchPlan {
        SearchPlan {
            plan,
            repeats,
            ladder_base_per_s: None,
            interval: None,
        }
    }

    fn auto(repeats: u32) -> SearchPlan {
        settings(RatePlan::Auto { resolution: 0.02 }, repeats)
    }

    /// The (rate, repeat) of every trial the simulated system ran, in order.
    fn rates_tried(sim: &Simulated) -> Vec<(u32, u32)> {
        sim.trials
            .iter()
            .map(|&(rate, repeat)| (rate as u32, repeat))
            .collect()
    }

    /// A matrix's later configurations climb the first one's ladder: its rungs are fractions
    /// of the given base, whatever their own probe found; the probe still runs first.
    #[test]
    fn a_ladder_base_replaces_the_probe_as_the_ladders_ceiling() {
        let mut shared = auto(1);
        shared.ladder_base_per_s = Some(10_000.0);
        assert_eq!(next_step(&shared, &[]), Step::Probe);
        let probe = Record::Probe(ProbeRecord {
            concurrency: 256,
            achieved_per_s: 5_000.0,
            seconds: 20.0,
            dir: "probe".into(),
            down: None,
        });
        assert_eq!(
            next_step(&shared, std::slice::from_ref(&probe)),
            Step::Trial {
                rate_per_s: 4_000.0,
                repeat: 1
            }
        );
        // Without a base, its own probe's ceiling.
        assert_eq!(
            next_step(&auto(1), &[probe]),
            Step::Trial {
                rate_per_s: 2_000.0,
                repeat: 1
            }
        );
    }

    #[test]
    fn automatic_rates_are_nice_numbers() {
        assert_eq!(nice_unit(12_345.0), 100.0);
        assert_eq!(nice_unit(115_865.0), 1000.0);
        assert_eq!(nice_unit(1000.0), 10.0);
        assert_eq!(nice_unit(999.0), 1.0);
        assert_eq!(nice_unit(42.0), 1.0);
        assert_eq!(nice_unit(0.5), 1.0);
        assert_eq!(nice(4938.0, 100.0), 4900.0);
        assert_eq!(nice(8650.0, 100.0), 8700.0);
        assert_eq!(nice(20.0, 100.0), 100.0);
        assert_eq!(
            auto_ladder(12_345.0),
            vec![
                4900.0, 7400.0, 9900.0, 11_100.0, 12_300.0, 13_600.0, 14_800.0, 16_000.0, 17_300.0,
                18_500.0, 19_800.0, 21_000.0, 22_200.0, 23_500.0, 24_700.0
            ]
        );
        // Rounding collapses the rungs of a tiny ceiling.
        assert_eq!(auto_ladder(2.0), vec![1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn auto_finds_the_knee_within_the_resolution_with_repeats() {
        let mut sim = Simulated::new(12_345.0, 8_000.0);
        let records = run_in_memory(&auto(2), &mut sim);
        assert_eq!(sim.probes, 1);
        // Ladder 0.4, 0.6, 0.8 C; then bisection 7400–9900; a failing rate runs once.
        assert_eq!(
            rates_tried(&sim),
            vec![
                (4900, 1),
                (4900, 2),
                (7400, 1),
                (7400, 2),
                (9900, 1),
                (8700, 1),
                (8100, 1),
                (7800, 1),
                (7800, 2),
                (8000, 1),
                (8000, 2),
            ]
        );
        let result = outcome(&records, 2);
        assert_eq!(result.capacity_per_s, Some(8000.0));
        assert!(result.unstable.is_empty());
        assert_eq!(result.highest_achieved_per_s, 12_345.0);
        let verdicts: Vec<(f64, Verdict)> = result
            .rows
            .iter()
            .map(|row| (row.rate_per_s, row.verdict))
            .collect();
        assert_eq!(
            verdicts,
            vec![
                (4900.0, Verdict::Pass),
                (7400.0, Verdict::Pass),
                (7800.0, Verdict::Pass),
                (8000.0, Verdict::Pass),
                (8100.0, Verdict::Fail),
                (8700.0, Verdict::Fail),
                (9900.0, Verdict::Fail),
            ]
        );
        assert_eq!(result.rows[0].trials.len(), 2);
        assert_eq!(result.rows[4].trials.len(), 1);
    }

    #[test]
    fn auto_capacity_lies_within_the_resolution_below_the_knee() {
        for (knee, expected) in [(5_000.0, 5_000.0), (8_040.0, 8_000.0), (6_990.0, 6_900.0)] {
            let mut sim = Simulated::new(12_345.0, knee);
            let records = run_in_memory(&auto(1), &mut sim);
            let capacity = outcome(&records, 1).capacity_per_s.unwrap();
            assert_eq!(capacity, expected, "knee {knee}");
            assert!(
                capacity <= knee && (knee - capacity) / knee <= 0.02,
                "knee {knee}"
            );
            assert!(sim.trials.len() <= 9, "knee {knee}: {:?}", sim.trials);
        }
    }

    #[test]
    fn auto_capacity_is_limited_by_the_achieved_rate() {
        // Latency never fails, but above the ceiling less than 99% of the rate is achieved.
        let mut sim = Simulated::new(12_345.0, f64::INFINITY);
        let records = run_in_memory(&auto(1), &mut sim);
        assert_eq!(
            rates_tried(&sim),
            vec![
                (4900, 1),
                (7400, 1),
                (9900, 1),
                (11_100, 1),
                (12_300, 1),
                (13_600, 1),
                (13_000, 1),
                (12_700, 1),
                (12_500, 1),
            ]
        );
        let result = outcome(&records, 1);
        assert_eq!(result.capacity_per_s, Some(12_300.0));
        let reason = result.rows.last().unwrap().trials[0].reason.clone();
        assert_eq!(
            reason.as_deref(),
            Some("achieved 90.7% of the attempted rate")
        );
    }

    #[test]
    fn auto_stops_at_twice_the_ceiling() {
        let mut sim = Simulated::new(f64::INFINITY, f64::INFINITY);
        sim.probe_achieved = 12_345.0;
        let records = run_in_memory(&auto(1), &mut sim);
        assert_eq!(sim.trials.len(), 15);
        assert_eq!(outcome(&records, 1).capacity_per_s, Some(24_700.0));
    }

    #[test]
    fn auto_with_every_rate_failing_has_no_capacity() {
        let mut sim = Simulated::new(12_345.0, 0.0);
        let records = run_in_memory(&auto(3), &mut sim);
        // Halving towards zero until the failing rate is below 1% of C (123.45/s).
        assert_eq!(
            rates_tried(&sim),
            vec![
                (4900, 1),
                (2500, 1),
                (1300, 1),
                (700, 1),
                (400, 1),
                (200, 1),
                (100, 1),
            ]
        );
        let result = outcome(&records, 3);
        assert_eq!(result.capacity_per_s, None);
        assert!(result.rows.iter().all(|row| row.verdict == Verdict::Fail));
        assert!(result.unstable.is_empty());
    }

    #[test]
    fn auto_ends_when_the_probe_achieved_nothing() {
        let mut sim = Simulated::new(0.0, 1000.0);
        let records = run_in_memory(&auto(1), &mut sim);
        assert_eq!(sim.probes, 1);
        assert!(sim.trials.is_empty());
        let result = outcome(&records, 1);
        assert_eq!(result.capacity_per_s, None);
        assert!(result.probe.is_some());
        assert_eq!(result.highest_achieved_per_s, 0.0);
    }

    #[test]
    fn a_ladder_runs_every_rung_skips_after_a_failure_and_reports_unstable_passes() {
        let plan = RatePlan::parse("1000:6000:1000", 0.02).unwrap();
        let mut sim = Simulated::new(f64::INFINITY, 4_500.0);
        sim.noisy.push((3000.0, 2));
        let records = run_in_memory(&settings(plan, 3), &mut sim);
        assert_eq!(sim.probes, 0);
        assert_eq!(
            rates_tried(&sim),
            vec![
                (1000, 1),
                (1000, 2),
                (1000, 3),
                (2000, 1),
                (2000, 2),
                (2000, 3),
                (3000, 1),
                (3000, 2),
                (4000, 1),
                (4000, 2),
                (4000, 3),
                (5000, 1),
                (6000, 1),
            ]
        );
        let result = outcome(&records, 3);
        assert_eq!(result.capacity_per_s, Some(2000.0));
        assert_eq!(result.unstable, vec![4000.0]);
        assert_eq!(result.rows[2].verdict, Verdict::Fail);
        assert_eq!(result.rows[3].verdict, Verdict::Pass);
        assert_eq!(result.highest_achieved_per_s, 6000.0);
    }

    /// The bracket is the capacity and the lowest failure above it; each repeat's capacity
    /// walks that repeat's own trials up to its first failure.
    #[test]
    fn the_bracket_and_each_repeats_capacity_come_from_the_records() {
        let plan = RatePlan::parse("1000:6000:1000", 0.02).unwrap();
        let mut sim = Simulated::new(f64::INFINITY, 4_500.0);
        sim.noisy.push((3000.0, 2));
        let records = run_in_memory(&settings(plan, 3), &mut sim);
        let mut result = outcome(&records, 3);
        // 1000 and 2000 pass, 3000 fails (its second repeat), 4000 passes, 5000 fails.
        assert_eq!(result.bracket(), (Some(2000.0), Some(3000.0)));
        let trials: Vec<&TrialRecord> = records
            .iter()
            .filter_map(|r| match r {
                Record::Trial(t) => Some(t),
                Record::Probe(_) => None,
            })
            .collect();
        // The first repeat passed up to 4000, the second failed at 3000, the third (not run
        // at 3000 or above 4000) passed every rate it ran; there is no fourth.
        let by_repeat: Vec<Option<f64>> = (1..=4)
            .map(|repeat| repeat_capacity(trials.iter().copied().rev(), repeat))
            .collect();
        assert_eq!(by_repeat, [Some(4000.0), Some(2000.0), Some(4000.0), None]);
        // A capacity stated above a failure (an interval search's lower bound) brackets
        // with the failure above it.
        result.capacity_per_s = Some(4000.0);
        assert_eq!(result.bracket(), (Some(4000.0), Some(5000.0)));
        result.capacity_per_s = None;
        assert_eq!(result.bracket(), (None, Some(3000.0)));
    }

    #[test]
    fn a_ladder_where_every_rate_fails_has_no_capacity() {
        let plan = RatePlan::parse("2k,1k", 0.02).unwrap();
        let mut sim = Simulated::new(f64::INFINITY, 500.0);
        let records = run_in_memory(&settings(plan, 2), &mut sim);
        // The list's order is kept.
        assert_eq!(rates_tried(&sim), vec![(2000, 1), (1000, 1)]);
        let result = outcome(&records, 2);
        assert_eq!(result.capacity_per_s, None);
        assert_eq!(result.rows[0].rate_per_s, 1000.0);
    }

    #[test]
    fn the_next_step_ignores_the_order_of_the_records() {
        let mut sim = Simulated::new(12_345.0, 8_000.0);
        sim.noisy.push((7400.0, 2));
        let search = auto(2);
        let records = run_in_memory(&search, &mut sim);
        for end in 0..=records.len() {
            let mut reversed = records[..end].to_vec();
            reversed.reverse();
            assert_eq!(
                next_step(&search, &reversed),
                next_step(&search, &records[..end]),
                "after {end} records"
            );
            assert_eq!(outcome(&reversed, 2), outcome(&records[..end], 2));
        }
    }

    #[test]
    fn an_incomplete_rate_holds_back_the_passes_above_it() {
        let sim = Simulated::new(f64::INFINITY, f64::INFINITY);
        let records: Vec<Record> = [(1000.0, 1), (1000.0, 2), (2000.0, 1), (3000.0, 2)]
            .into_iter()
            .map(|(rate, repeat)| sim.record(rate, repeat))
            .collect();
        let result = outcome(&records, 2);
        let verdicts: Vec<Verdict> = result.rows.iter().map(|row| row.verdict).collect();
        assert_eq!(
            verdicts,
            vec![Verdict::Pass, Verdict::Incomplete, Verdict::Incomplete]
        );
        assert_eq!(result.capacity_per_s, Some(1000.0));
        assert!(result.unstable.is_empty());
        // The missing repeat of a rate is run first, whatever was recorded above it.
        let plan = RatePlan::Ladder(vec![1000.0, 2000.0, 3000.0]);
        assert_eq!(
            next_step(&settings(plan.clone(), 2), &records[3..]),
            Step::Trial {
                rate_per_s: 1000.0,
                repeat: 1
            }
        );
        assert_eq!(
            next_step(&settings(plan, 2), &records),
            Step::Trial {
                rate_per_s: 2000.0,
                repeat: 2
            }
        );
    }

    #[test]
    fn a_client_bound_trial_stops_the_search_without_a_capacity() {
        // The client keeps up to 9000/s; the server's knee is at 10 000/s.
        let mut sim = Simulated::new(12_000.0, 10_000.0);
        sim.client_limit = 9_000.0;
        let records = run_in_memory(&auto(2), &mut sim);
        let result = outcome(&records, 2);
        assert_eq!(
            result.capacity_per_s, None,
            "no capacity past a client-bound trial"
        );
        let invalid = result.invalid.as_ref().expect("the client-bound trial");
        assert!(invalid.rate_per_s > 9_000.0);
        assert!(!invalid.pass);
        assert!(invalid.reason.is_none(), "neither a pass nor a fail");
        // The search stopped at the first client-bound trial: its other repeats and any
        // higher rate never ran.
        let last = sim.trials.last().unwrap();
        assert_eq!((last.0, last.1), (invalid.rate_per_s, 1));
        let row = result
            .rows
            .iter()
            .find(|r| same_rate(r.rate_per_s, invalid.rate_per_s))
            .unwrap();
        assert_eq!(row.verdict, Verdict::Invalid);
        assert!(result.rows.iter().all(|r| r.verdict != Verdict::Fail));
        assert_eq!(next_step(&auto(2), &records), Step::Done);
        // A ladder stops at it too.
        let mut sim = Simulated::new(12_000.0, 10_000.0);
        sim.client_limit = 3_000.0;
        let records = run_in_memory(
            &settings(RatePlan::Ladder(vec![2000.0, 4000.0, 6000.0]), 1),
            &mut sim,
        );
        assert_eq!(sim.trials, [(2000.0, 1), (4000.0, 1)]);
        assert_eq!(outcome(&records, 1).capacity_per_s, None);
    }

    #[test]
    fn the_estimate_counts_typical_trials() {
        let azul_ladder = RatePlan::parse("20k:120k:10k", 0.02).unwrap();
        assert_eq!(estimate_trials(&settings(azul_ladder, 5)), 55);
        // 5 rungs, then 0.1 → 0.05 → 0.025 → 0.0125: 3 bisections.
        assert_eq!(estimate_trials(&auto(1)), 8);
        assert_eq!(estimate_trials(&auto(3)), 24);
        let coarse = RatePlan::Auto { resolution: 0.1 };
        assert_eq!(estimate_trials(&settings(coarse, 2)), 10);
        let fine = RatePlan::Auto { resolution: 0.005 };
        assert_eq!(estimate_trials(&settings(fine, 1)), 10);
    }
}
