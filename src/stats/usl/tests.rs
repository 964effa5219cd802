//! Tests of the USL's fit, bootstrap and statements on simulated and exact data.

use super::*;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

const TRUE: Usl = Usl {
    lambda_per_s: 1000.0,
    sigma: 0.05,
    kappa: 0.002,
};

/// `repeats` observations of each size from `model`, with multiplicative normal noise.
fn observe(model: Usl, sizes: &[u32], repeats: usize, noise: f64, seed: u64) -> Vec<Observation> {
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
        Analysis::NoModel { statements } => panic!("no model: {statements:?}"),
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
