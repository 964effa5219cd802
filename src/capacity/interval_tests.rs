//! Tests of the interval search: its statistics, its steps, and its coverage on the
//! stochastic simulator.

use super::*;
use crate::capacity::sim::stochastic::{evaluate, search, Method, SCENARIOS};

fn goal() -> IntervalGoal {
    IntervalGoal {
        exceed_ratio: 0.1,
        confidence: 0.9,
        width: 0.1,
        windows_per_trial: 6,
        window_correlation: WINDOW_CORRELATION,
        max_trials: MAX_TRIALS,
    }
}

fn trial_at(rate: f64, repeat: u32, windows: u32, failed: u32) -> Record {
    Record::Trial(TrialRecord {
        rate_per_s: rate,
        repeat,
        achieved_per_s: rate,
        requests: 1000,
        errors: 0,
        sla_pass: failed == 0,
        terms: Vec::new(),
        pass: failed == 0,
        reason: None,
        invalid: None,
        dir: String::new(),
        wall_s: 60.0,
        down: None,
        windows: Some(windows),
        failed_windows: Some(failed),
        recall: None,
        data: None,
    })
}

fn probe(achieved: f64) -> Record {
    Record::Probe(ProbeRecord {
        concurrency: 256,
        achieved_per_s: achieved,
        seconds: 20.0,
        dir: "probe".into(),
        down: None,
    })
}

#[test]
fn the_binomial_tail_matches_the_exact_sums() {
    // P(X ≤ 1) for Binomial(10, 0.1) = 0.9^10 + 10·0.1·0.9^9.
    let exact = 0.9f64.powi(10) + 10.0 * 0.1 * 0.9f64.powi(9);
    assert!((binomial_cdf(1.0, 10.0, 0.1) - exact).abs() < 1e-12);
    assert!((binomial_cdf(0.0, 29.0, 0.1) - 0.9f64.powi(29)).abs() < 1e-12);
    assert_eq!(binomial_cdf(5.0, 5.0, 0.3), 1.0);
}

#[test]
fn a_bound_needs_enough_windows_and_correlation_costs_windows() {
    let g = goal();
    // 29 independent windows without a failure show p ≤ 10 % at 5 %; 28 do not.
    assert!(confirms_lower(29.0, 0.0, &g));
    assert!(!confirms_lower(28.0, 0.0, &g));
    // Three failures of six show p > 10 % (P = 0.016); one of six does not.
    assert!(confirms_upper(6.0, 3.0, &g));
    assert!(!confirms_upper(6.0, 1.0, &g));
    // Six windows of one trial weigh as 6 / (1 + 5ρ) independent ones.
    let rows = evidence(
        &[trial_at(1000.0, 1, 6, 0), trial_at(1000.0, 2, 6, 0)],
        &goal(),
        None,
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].windows, rows[0].trials, rows[0].full_trials),
        (12, 2, 2)
    );
    assert!((rows[0].weight - 12.0 / (1.0 + 5.0 * WINDOW_CORRELATION)).abs() < 1e-12);
}

#[test]
fn a_record_without_window_counts_is_one_window() {
    let Record::Trial(mut old) = trial_at(1000.0, 1, 6, 2) else {
        unreachable!()
    };
    old.windows = None;
    old.failed_windows = None;
    assert_eq!(trial_windows(&old), (1, 1));
    old.pass = true;
    assert_eq!(trial_windows(&old), (1, 0));
}

#[test]
fn the_monotone_fit_pools_rates_that_break_the_order() {
    let records = [
        trial_at(1000.0, 1, 6, 0),
        trial_at(2000.0, 1, 6, 3),
        trial_at(3000.0, 1, 6, 1),
        trial_at(4000.0, 1, 6, 6),
    ];
    let rows = evidence(&records, &goal(), None);
    let fit = monotone_fit(&rows);
    assert_eq!(fit[0], 0.0);
    assert!((fit[1] - 4.0 / 12.0).abs() < 1e-12 && fit[1] == fit[2]);
    assert_eq!(fit[3], 1.0);
    assert_eq!(candidates(&rows, &fit, 0.1), (Some(0), Some(1)));
}

#[test]
fn bounds_pool_the_windows_within_the_width() {
    let mut records = vec![probe(10_000.0)];
    // Six full trials at 5 000/s and 5 300/s without a failure; 6 000/s failing half its
    // windows twice.
    for repeat in 1..=6 {
        records.push(trial_at(5000.0, repeat, 6, 0));
        records.push(trial_at(5300.0, repeat, 6, 0));
    }
    records.push(trial_at(6000.0, 1, 6, 3));
    records.push(trial_at(6000.0, 2, 6, 4));
    let found = interval(&records, &goal());
    let lower = found.lower.expect("a lower bound");
    // 5 300/s alone has 36 windows (21 independent): not enough; 5 000/s pools 5 300/s's.
    assert_eq!(lower.rate_per_s, 5000.0);
    assert_eq!(lower.rates, vec![5000.0, 5300.0]);
    assert_eq!((lower.windows, lower.failed_windows), (72, 0));
    let upper = found.upper.expect("an upper bound");
    assert_eq!(upper.rate_per_s, 6000.0);
    let estimate = found.estimate_per_s.unwrap();
    assert!(estimate > 5300.0 && estimate < 6000.0, "{estimate}");
}

#[test]
fn the_search_probes_climbs_in_short_trials_then_confirms_in_full_ones() {
    let g = goal();
    assert_eq!(next_step(&g, None, &[]), IntervalStep::Probe);
    let mut records = vec![probe(10_000.0)];
    assert_eq!(
        next_step(&g, None, &records),
        IntervalStep::Trial {
            rate_per_s: 4000.0,
            repeat: 1,
            windows: SHORT_WINDOWS,
            stop_after: None
        }
    );
    records.push(trial_at(4000.0, 1, 2, 0));
    records.push(trial_at(6000.0, 1, 2, 0));
    records.push(trial_at(8000.0, 1, 2, 2));
    // 6 000 looks good, 8 000 bad: 25 % apart, more than twice the width: a short bisection.
    assert_eq!(
        next_step(&g, None, &records),
        IntervalStep::Trial {
            rate_per_s: 7000.0,
            repeat: 1,
            windows: SHORT_WINDOWS,
            stop_after: None
        }
    );
    records.push(trial_at(7000.0, 1, 2, 0));
    // 7 000 and 8 000 are 12.5 % apart: a full trial between them.
    let IntervalStep::Trial {
        rate_per_s,
        windows,
        ..
    } = next_step(&g, None, &records)
    else {
        panic!("a trial")
    };
    assert_eq!((rate_per_s, windows), (7500.0, 6));
    records.push(trial_at(7500.0, 1, 6, 5));
    // 7 000 and 7 500 are within the width: full trials at 7 000 until it is confirmed.
    assert_eq!(
        next_step(&g, None, &records),
        IntervalStep::Trial {
            rate_per_s: 7000.0,
            repeat: 2,
            windows: 6,
            stop_after: None
        }
    );
}

#[test]
fn a_trial_at_the_upper_candidate_stops_at_the_failure_that_confirms_it() {
    let g = goal();
    let mut records = vec![probe(10_000.0)];
    // 7 000/s confirmed by twelve full trials without a failure.
    for repeat in 1..=12 {
        records.push(trial_at(7000.0, repeat, 6, 0));
    }
    records.push(trial_at(7500.0, 1, 2, 1));
    assert_eq!(interval(&records, &g).lower.unwrap().rate_per_s, 7000.0);
    let rows = evidence(&records, &goal(), None);
    // One failing window of two is not enough; with a new trial's failures it is.
    let fit = monotone_fit(&rows);
    let k = failures_to_confirm(&rows, &fit, 7500.0, 6, &g).expect("confirmable");
    assert!((1..=6).contains(&k));
    match next_step(&g, None, &records) {
        IntervalStep::Trial {
            rate_per_s,
            stop_after,
            ..
        } => {
            assert_eq!(rate_per_s, 7500.0);
            assert_eq!(stop_after, Some(k));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_client_bound_rate_is_run_again_once_then_caps_the_search() {
    let g = goal();
    let mut records = vec![probe(10_000.0), trial_at(4000.0, 1, 2, 0)];
    let Record::Trial(mut bound) = trial_at(6000.0, 1, 2, 0) else {
        unreachable!()
    };
    bound.invalid = Some(vec!["client-bound".into()]);
    bound.pass = false;
    records.push(Record::Trial(bound.clone()));
    assert_eq!(
        next_step(&g, None, &records),
        IntervalStep::Trial {
            rate_per_s: 6000.0,
            repeat: 2,
            windows: 2,
            stop_after: None
        }
    );
    bound.repeat = 2;
    records.push(Record::Trial(bound));
    let found = interval(&records, &g);
    assert_eq!(found.client_limit_per_s, Some(6000.0));
    // Below the limit only: 4 000/s is confirmed in full trials; nothing is tried above.
    match next_step(&g, None, &records) {
        IntervalStep::Trial {
            rate_per_s,
            windows,
            ..
        } => assert_eq!((rate_per_s, windows), (4000.0, 6)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_search_ends() {
    // Within its goal's trials (a client-bound trial's second try aside), the quickstart's
    // fewer as well.
    let few = IntervalGoal {
        max_trials: 10,
        ..goal()
    };
    for g in [goal(), few] {
        for scenario in SCENARIOS {
            for seed in 1..=20 {
                let found = search(&Method::Interval(g), scenario, seed, 0.1);
                assert!(found.trials <= g.max_trials + CLIENT_BOUND_TRIES as usize);
                assert!(found.lower <= found.upper, "{scenario:?} {seed}: {found:?}");
            }
        }
    }
}

/// The stated confidence holds on the simulator, on a few hundred searches per scenario
/// (`bench/search-method.py` runs a thousand and more). Drift is left out: a capacity that
/// moves during a search is not one quantity (docs/capacity.md).
#[test]
fn the_interval_holds_the_capacity_at_the_stated_confidence() {
    let g = goal();
    for scenario in SCENARIOS.iter().filter(|s| s.drift == 0.0) {
        let row = evaluate(&Method::Interval(g), *scenario, 300, g.exceed_ratio);
        // 300 searches: a binomial's standard error at 0.9 is 1.7 points; 4 points of room.
        assert!(
            row.coverage >= g.confidence - 0.04,
            "{}: coverage {:.3}",
            scenario.name,
            row.coverage
        );
    }
}

#[test]
fn without_a_lower_bound_windows_failing_at_the_lowest_rate_are_said() {
    let g = goal();
    let mut records = vec![
        probe(10_000.0),
        trial_at(8000.0, 1, 6, 6),
        trial_at(400.0, 1, 6, 1),
    ];
    let said = describe(&records, &g).join("\n");
    assert!(
        said.contains("Windows failed down to the lowest rate tried, 400/s (1 of 6)"),
        "{said}"
    );
    // Not when the lowest rate's windows all passed, nor beside a lower bound.
    records[2] = trial_at(400.0, 1, 6, 0);
    assert!(!describe(&records, &g)
        .join("\n")
        .contains("Windows failed down"));
    for repeat in 2..=12 {
        records.push(trial_at(400.0, repeat, 6, 0));
    }
    records.push(trial_at(300.0, 1, 6, 1));
    assert!(interval(&records, &g).lower.is_some());
    assert!(!describe(&records, &g)
        .join("\n")
        .contains("Windows failed down"));
}
