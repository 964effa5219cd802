//! The capacity search (METHOD.md §4): the highest attempted rate at which every repeat met
//! the SLA and achieved the rate, and every lower rate did too.
//!
//! The choice of the next run ([`search`]), the settings, records and directory of a search
//! ([`settings`], [`record`], [`store`]), the result table ([`table`]) and [`drive`], which
//! asks a [`TrialRunner`] for each run in turn; [`live`] is the runner that drives a real
//! cluster, each trial a full [`crate::run::execute`]. A search with a node down:
//! [`degraded`] (which node, the checks, the records) and [`node_down`] (the node stopped
//! before each run and brought back with its hints replayed).

pub mod degraded;
pub mod dir;
pub mod interval;
pub mod live;
pub mod node_down;
pub mod pauses;
pub mod rates;
pub mod record;
pub mod search;
pub mod settings;
pub mod sim;
pub mod store;
pub mod table;

pub use record::{
    trial_passes, ProbeRecord, Record, TermValue, TrialRecord, ACHIEVED_FRACTION, RECALL_UNIT,
};
pub use search::{
    estimate_trials, next_step, outcome, Outcome, RatePlan, RateRow, SearchPlan, Step, Verdict,
};
pub use store::{Status, Store, Summary};

use anyhow::ensure;

/// Runs the search's probe and trials. `Ok(None)` means the run was interrupted (Ctrl-C):
/// nothing is recorded for it, and a resumed search does it again.
pub trait TrialRunner {
    /// A closed-loop run measuring the highest achieved throughput.
    fn probe(&mut self) -> anyhow::Result<Option<ProbeRecord>>;

    /// A run at a fixed attempted rate; the record carries the ask's rate and repeat.
    fn trial(&mut self, ask: &TrialAsk) -> anyhow::Result<Option<TrialRecord>>;
}

/// What a search asks of one trial.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrialAsk {
    /// The attempted rate, per second.
    pub rate_per_s: f64,
    /// Which trial at this rate, from 1.
    pub repeat: u32,
    /// Windows to measure; `None`: the search's --duration.
    pub windows: Option<u32>,
    /// End the trial at this many failing windows (its verdict is decided then).
    pub stop_after: Option<u32>,
    /// Every trial at this rate so far was client-bound: this one runs it again.
    pub retry: bool,
}

impl TrialAsk {
    /// A trial of the search's --duration, never stopped early.
    pub fn full(rate_per_s: f64, repeat: u32) -> TrialAsk {
        TrialAsk {
            rate_per_s,
            repeat,
            windows: None,
            stop_after: None,
            retry: false,
        }
    }
}

/// Runs the search to its end or an interruption: asks for the next step, runs it, appends
/// its record to the store, rewrites the summary and hands the outcome so far to
/// `on_record`. Returns [`Status::Complete`] when the search is over, [`Status::Invalid`]
/// when it stopped at a client-bound trial, or [`Status::Interrupted`] when the runner was
/// interrupted. A runner error is returned after the summary was written with the status
/// "failed" and the error.
pub fn drive(
    settings: &SearchPlan,
    runner: &mut impl TrialRunner,
    store: &mut Store,
    mut on_record: impl FnMut(&Outcome, &[Record]),
) -> anyhow::Result<Status> {
    let repeats = settings.repeats;
    store.set_interval(settings.interval);
    store.write_summary(repeats, Status::Running)?;
    loop {
        let ran = match next_ask(settings, store.records()) {
            None => {
                // An interval search states its bounds; where the client stopped it, the
                // answer is incomplete.
                let invalid = match answer(store.records(), repeats, settings.interval.as_ref()) {
                    (_, Some(found)) => found.client_limit_per_s.is_some(),
                    (outcome, None) => outcome.invalid.is_some(),
                };
                let status = if invalid {
                    Status::Invalid
                } else {
                    Status::Complete
                };
                store.write_summary(repeats, status)?;
                return Ok(status);
            }
            Some(None) => runner.probe().map(|probe| probe.map(Record::Probe)),
            Some(Some(ask)) => runner.trial(&ask).and_then(|trial| {
                if let Some(trial) = &trial {
                    let (rate_per_s, repeat) = (ask.rate_per_s, ask.repeat);
                    ensure!(
                        rates::same_rate(trial.rate_per_s, rate_per_s) && trial.repeat == repeat,
                        "the runner was asked for repeat {repeat} at {rate_per_s}/s but \
                         recorded repeat {} at {}/s",
                        trial.repeat,
                        trial.rate_per_s
                    );
                }
                Ok(trial.map(Record::Trial))
            }),
        };
        match ran {
            Ok(Some(record)) => {
                store.append(record)?;
                store.write_summary(repeats, Status::Running)?;
                let (outcome, _) = answer(store.records(), repeats, settings.interval.as_ref());
                on_record(&outcome, store.records());
            }
            Ok(None) => {
                store.write_summary(repeats, Status::Interrupted)?;
                return Ok(Status::Interrupted);
            }
            Err(e) => {
                let error = Some(format!("{e:#}"));
                if let Err(summary_error) = store.write_summary_with(repeats, Status::Failed, error)
                {
                    return Err(e.context(format!(
                        "and the summary could not be written: {summary_error:#}"
                    )));
                }
                return Err(e);
            }
        }
    }
}

/// The next run of a search: `None` when it is over, `Some(None)` for the probe, else the
/// trial to run (by the interval method when the plan has its goal).
fn next_ask(settings: &SearchPlan, records: &[Record]) -> Option<Option<TrialAsk>> {
    match &settings.interval {
        Some(goal) => match interval::next_step(goal, settings.ladder_base_per_s, records) {
            interval::IntervalStep::Done => None,
            interval::IntervalStep::Probe => Some(None),
            interval::IntervalStep::Trial {
                rate_per_s,
                repeat,
                windows,
                stop_after,
            } => Some(Some(TrialAsk {
                rate_per_s,
                repeat,
                windows: (windows < goal.windows_per_trial).then_some(windows),
                stop_after,
                retry: interval::retry_rate(records)
                    .is_some_and(|rate| rates::same_rate(rate, rate_per_s)),
            })),
        },
        None => match next_step(settings, records) {
            Step::Done => None,
            Step::Probe => Some(None),
            Step::Trial { rate_per_s, repeat } => Some(Some(TrialAsk::full(rate_per_s, repeat))),
        },
    }
}

/// A search's answer from its records: the outcome, each rate judged against `repeats`
/// repeats, and for an interval search its bounds, with `capacity_per_s` the lower bound
/// (what capacity.json, the exit code and a price go by).
pub fn answer(
    records: &[Record],
    repeats: u32,
    goal: Option<&interval::IntervalGoal>,
) -> (Outcome, Option<interval::Interval>) {
    let mut outcome = outcome(records, repeats);
    let found = goal.map(|goal| interval::interval(records, goal));
    if let Some(found) = &found {
        outcome.capacity_per_s = found.lower.as_ref().map(|l| l.rate_per_s);
    }
    (outcome, found)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fs;

    use super::sim::Simulated;
    use super::*;
    use crate::catalogue::CAPACITY_JSON;

    fn auto(repeats: u32) -> SearchPlan {
        SearchPlan {
            plan: RatePlan::Auto { resolution: 0.02 },
            repeats,
            ladder_base_per_s: None,
            interval: None,
        }
    }

    fn config() -> serde_json::Value {
        serde_json::json!({"rates": "auto", "repeats": 2})
    }

    fn summary_status(store: &Store) -> serde_json::Value {
        let text = fs::read_to_string(store.dir().join(CAPACITY_JSON)).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["status"].clone()
    }

    /// How many times each (rate, repeat) ran.
    fn counts(trials: &[(f64, u32)]) -> BTreeMap<(u64, u32), usize> {
        let mut counts = BTreeMap::new();
        for &(rate, repeat) in trials {
            *counts.entry((rate as u64, repeat)).or_default() += 1;
        }
        counts
    }

    #[test]
    fn a_search_runs_to_completion_and_reports_each_record() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create(dir.path(), config()).unwrap();
        let mut sim = Simulated::new(12_345.0, 8_000.0);
        let mut seen = Vec::new();
        let status = drive(&auto(2), &mut sim, &mut store, |outcome, _| {
            seen.push(outcome.rows.iter().map(|r| r.trials.len()).sum::<usize>())
        })
        .unwrap();
        assert_eq!(status, Status::Complete);
        assert_eq!(summary_status(&store), "complete");
        // The probe, then 11 trials; each report counts the trials so far.
        assert_eq!(seen, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        assert_eq!(store.records().len(), 12);
        assert_eq!(outcome(store.records(), 2).capacity_per_s, Some(8000.0));
    }

    #[test]
    fn an_interrupted_search_resumes_without_redoing_finished_runs() {
        let settings = auto(2);
        let mut whole_sim = Simulated::new(12_345.0, 8_000.0);
        whole_sim.noisy.push((7800.0, 2));
        let whole_dir = tempfile::tempdir().unwrap();
        let mut whole = Store::create(whole_dir.path(), config()).unwrap();
        drive(&settings, &mut whole_sim.clone(), &mut whole, |_, _| {}).unwrap();
        let expected = outcome(whole.records(), 2);
        let runs = whole.records().len();
        // The probe; 4900 and 7400 twice; 9900, 8700 and 8100 fail; 7800 fails on its second
        // repeat; 7600 and 7700 twice.
        assert_eq!(runs, 14);
        assert_eq!(expected.capacity_per_s, Some(7700.0));

        for after in 0..runs {
            let dir = tempfile::tempdir().unwrap();
            let mut first = whole_sim.clone();
            first.interrupt_after = Some(after);
            let mut store = Store::create(dir.path(), config()).unwrap();
            let status = drive(&settings, &mut first, &mut store, |_, _| {}).unwrap();
            assert_eq!(status, Status::Interrupted, "after {after}");
            assert_eq!(summary_status(&store), "interrupted");
            assert_eq!(store.records().len(), after);
            drop(store);

            let (mut store, stored) = Store::resume(dir.path()).unwrap();
            assert_eq!(stored, config());
            let mut second = whole_sim.clone();
            let status = drive(&settings, &mut second, &mut store, |_, _| {}).unwrap();
            assert_eq!(status, Status::Complete, "after {after}");
            assert_eq!(summary_status(&store), "complete");

            // Every run happened exactly once over both halves.
            assert_eq!(first.probes + second.probes, 1, "after {after}");
            let mut trials = first.trials.clone();
            trials.extend(&second.trials);
            let counts = counts(&trials);
            assert!(
                counts.values().all(|&n| n == 1),
                "after {after}: {counts:?}"
            );
            assert_eq!(trials.len(), runs - 1, "after {after}");
            assert_eq!(outcome(store.records(), 2), expected, "after {after}");
        }
    }

    /// A runner that fails on its second trial.
    struct Failing(Simulated);

    impl TrialRunner for Failing {
        fn probe(&mut self) -> anyhow::Result<Option<ProbeRecord>> {
            self.0.probe()
        }

        fn trial(&mut self, ask: &TrialAsk) -> anyhow::Result<Option<TrialRecord>> {
            anyhow::ensure!(self.0.trials.is_empty(), "the cluster went away");
            self.0.trial(ask)
        }
    }

    #[test]
    fn a_runner_error_is_returned_after_the_summary_says_failed_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create(dir.path(), config()).unwrap();
        let mut runner = Failing(Simulated::new(12_345.0, 8_000.0));
        let error = drive(&auto(1), &mut runner, &mut store, |_, _| {}).unwrap_err();
        assert_eq!(error.to_string(), "the cluster went away");
        assert_eq!(summary_status(&store), "failed");
        let text = fs::read_to_string(store.dir().join(CAPACITY_JSON)).unwrap();
        let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(summary["error"], "the cluster went away");
        assert_eq!(store.records().len(), 2);
    }

    #[test]
    fn a_client_bound_trial_ends_the_search_as_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create(dir.path(), config()).unwrap();
        let mut sim = Simulated::new(12_345.0, 8_000.0);
        sim.client_limit = 6_000.0;
        let status = drive(&auto(1), &mut sim, &mut store, |_, _| {}).unwrap();
        assert_eq!(status, Status::Invalid);
        assert_eq!(summary_status(&store), "invalid");
        let text = fs::read_to_string(store.dir().join(CAPACITY_JSON)).unwrap();
        let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(summary["capacity_per_s"].is_null(), "{summary}");
        assert!(summary["invalid"]["rate_per_s"].as_f64().unwrap() > 6_000.0);
    }

    /// A runner that keeps what it was asked.
    struct Asked {
        sim: Simulated,
        asks: Vec<TrialAsk>,
    }

    impl TrialRunner for Asked {
        fn probe(&mut self) -> anyhow::Result<Option<ProbeRecord>> {
            self.sim.probe()
        }

        fn trial(&mut self, ask: &TrialAsk) -> anyhow::Result<Option<TrialRecord>> {
            self.asks.push(*ask);
            self.sim.trial(ask)
        }
    }

    #[test]
    fn an_interval_search_runs_a_client_bound_rate_again_and_ends_with_a_lower_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create(dir.path(), config()).unwrap();
        let mut sim = Simulated::new(12_345.0, 8_000.0);
        sim.client_limit = 6_000.0;
        let mut runner = Asked {
            sim,
            asks: Vec::new(),
        };
        let plan = SearchPlan {
            interval: Some(interval::IntervalGoal {
                exceed_ratio: 0.1,
                confidence: 0.9,
                width: 0.1,
                windows_per_trial: 6,
                window_correlation: interval::WINDOW_CORRELATION,
                max_trials: interval::MAX_TRIALS,
            }),
            ..auto(1)
        };
        let status = drive(&plan, &mut runner, &mut store, |_, _| {}).unwrap();
        // Each rate the client could not keep is asked once more, flagged as such; the
        // second time caps the search, which then says so (invalid) beside its lower bound.
        let retried: Vec<&TrialAsk> = runner.asks.iter().filter(|a| a.retry).collect();
        assert!(!retried.is_empty(), "{:?}", runner.asks);
        for ask in &runner.asks {
            let before: Vec<&TrialAsk> = runner
                .asks
                .iter()
                .take_while(|a| !std::ptr::eq(*a, ask))
                .filter(|a| rates::same_rate(a.rate_per_s, ask.rate_per_s))
                .collect();
            let all_bound = !before.is_empty() && ask.rate_per_s > 6_000.0;
            assert_eq!(ask.retry, all_bound, "{ask:?} after {before:?}");
        }
        assert_eq!(status, Status::Invalid);
        let text = fs::read_to_string(store.dir().join(CAPACITY_JSON)).unwrap();
        let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
        let lower = summary["interval"]["lower_bound_per_s"].as_f64();
        assert!(lower.is_some_and(|l| l <= 6_000.0), "{summary}");
        assert_eq!(summary["capacity_per_s"].as_f64(), lower);
        assert!(
            summary["interval"]["evidence"]["client_limit_per_s"]
                .as_f64()
                .unwrap()
                > 6_000.0
        );
    }

    /// A runner that records another rate than it was asked for.
    struct Confused;

    impl TrialRunner for Confused {
        fn probe(&mut self) -> anyhow::Result<Option<ProbeRecord>> {
            unreachable!("a ladder does not probe")
        }

        fn trial(&mut self, ask: &TrialAsk) -> anyhow::Result<Option<TrialRecord>> {
            let sim = Simulated::new(f64::INFINITY, f64::INFINITY);
            match sim.record(ask.rate_per_s * 2.0, ask.repeat) {
                Record::Trial(trial) => Ok(Some(trial)),
                Record::Probe(_) => unreachable!(),
            }
        }
    }

    #[test]
    fn a_record_for_another_rate_is_refused_rather_than_asked_for_forever() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::create(dir.path(), config()).unwrap();
        let settings = SearchPlan {
            plan: RatePlan::Ladder(vec![1000.0]),
            repeats: 1,
            ladder_base_per_s: None,
            interval: None,
        };
        let error = drive(&settings, &mut Confused, &mut store, |_, _| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the runner was asked for repeat 1 at 1000/s but recorded repeat 1 at 2000/s"
        );
        assert!(store.records().is_empty());
    }
}
