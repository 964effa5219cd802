//! Tests of [`super`]: comparisons of searches written by a fake search of known latencies.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rand::rngs::SmallRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};

use super::*;
use crate::capacity::{Record, Status, Store, TermValue, TrialRecord};
use crate::compare::render;
use crate::results::hlog::HlogWriter;
use crate::run::template::Load;
use crate::stats::new_histogram;

/// A configuration for [`write_search`]: its name, mean latency, the rates it passes and
/// fails, and the seed of its latencies.
pub(crate) struct Fake {
    pub label: &'static str,
    pub mean_ms: f64,
    pub passes: Vec<f64>,
    pub fails: Vec<f64>,
    pub seed: u64,
}

/// Writes a capacity search as `headroom capacity` leaves it: search.json,
/// capacity.jsonl/json, and per trial a run directory with config.json and a
/// histograms.hlog of 20 one-second windows of exponential latencies, as many per window
/// as the rate (a tenth of it, to keep the test quick).
pub(crate) fn write_search(root: &Path, fake: &Fake) -> PathBuf {
    let dir = root.join(fake.label);
    let mut settings = crate::fixtures::search_settings();
    settings.label = Some(fake.label.to_string());
    settings.nodes = Some(3);
    settings.repeats = 1;
    settings.rates = crate::capacity::rates::Rates::parse("auto", 0.02).unwrap();
    settings.sla = crate::sla::Sla::parse("p99.9<100ms", Duration::from_secs(10)).unwrap();
    settings.run.workload.name = "keyvalue".into();
    let config = serde_json::to_value(&settings).unwrap();
    let mut store = Store::create(&dir, config).unwrap();
    let mut rng = SmallRng::seed_from_u64(fake.seed);
    let exp = Exp::new(1.0 / fake.mean_ms).unwrap();
    let rates = fake
        .passes
        .iter()
        .map(|r| (*r, true))
        .chain(fake.fails.iter().map(|r| (*r, false)));
    for (rate, pass) in rates {
        let run_dir = format!("trials/rate-{rate:.0}-repeat-1");
        let path = dir.join(&run_dir);
        std::fs::create_dir_all(&path).unwrap();
        let run = settings.run.run(Load::Rate(rate), 0.0, 20.0, None);
        run.write(&path).unwrap();
        let mut log = HlogWriter::create(&path.join("histograms.hlog"), SystemTime::now()).unwrap();
        let mut worst: f64 = 0.0;
        for second in 0..20u64 {
            let mut h = new_histogram();
            for _ in 0..(rate / 10.0) as u64 {
                let ms: f64 = exp.sample(&mut rng);
                h.record((ms * 1e6) as u64 + 1).unwrap();
            }
            worst = worst.max(crate::stats::value_at_percentile(&h, 99.9) as f64 / 1e6);
            log.write_interval(
                Some("write.rt"),
                Duration::from_secs(second),
                Duration::from_secs(1),
                &h,
            )
            .unwrap();
        }
        drop(log);
        store
            .append(Record::Trial(TrialRecord {
                rate_per_s: rate,
                repeat: 1,
                achieved_per_s: rate,
                requests: (rate * 20.0) as u64,
                errors: 0,
                sla_pass: pass,
                terms: vec![TermValue {
                    term: "p99.9<100ms".into(),
                    value: if pass { worst } else { 150.0 },
                    unit: "ms".into(),
                    pass,
                    failed_percent: 0.0,
                }],
                pass,
                reason: None,
                invalid: None,
                dir: run_dir,
                wall_s: 20.0,
                down: None,
                windows: None,
                failed_windows: None,
                recall: None,
                data: None,
            }))
            .unwrap();
    }
    store.write_summary(1, Status::Complete).unwrap();
    dir
}

fn load(dirs: &[PathBuf]) -> Vec<SearchData> {
    dirs.iter().map(|d| SearchData::load(d).unwrap()).collect()
}

fn three(root: &Path) -> Vec<SearchData> {
    let a = write_search(
        root,
        &Fake {
            label: "g1",
            mean_ms: 1.0,
            passes: vec![1000.0, 2000.0, 3000.0],
            fails: vec![4000.0],
            seed: 1,
        },
    );
    let b = write_search(
        root,
        &Fake {
            label: "zgc",
            mean_ms: 2.0,
            passes: vec![1000.0, 2000.0],
            fails: vec![3000.0],
            seed: 2,
        },
    );
    let c = write_search(
        root,
        &Fake {
            label: "g1-again",
            mean_ms: 1.0,
            passes: vec![1000.0, 2000.0, 3000.0],
            fails: vec![4000.0],
            seed: 3,
        },
    );
    load(&[a, b, c])
}

#[test]
fn a_slower_configuration_is_worse_and_a_repeat_of_the_baseline_is_noise() {
    let root = tempfile::tempdir().unwrap();
    let searches = three(root.path());
    let c = compare(&searches, &CompareOptions::default()).unwrap();
    assert_eq!(c.baseline, "g1");
    assert_eq!(c.term.as_deref(), Some("p99.9<100ms"));
    assert_eq!(c.percentile, 99.9);
    assert!(c.notes.is_empty(), "{:?}", c.notes);

    // Capacity brackets: g1 [3000, 4000), zgc [2000, 3000), g1-again as g1.
    assert_eq!(c.configs[1].capacity_per_s, Some(2000.0));
    assert_eq!(c.configs[1].capacity_below_per_s, Some(3000.0));
    let zgc = c.configs[1].capacity_change.as_ref().unwrap();
    assert_eq!(zgc.verdict, "worse");
    assert!((zgc.percent.unwrap() + 33.333).abs() < 0.01);
    assert_eq!(
        c.configs[2].capacity_change.as_ref().unwrap().verdict,
        "within resolution"
    );
    assert!(c.configs[0].capacity_change.is_none());

    // Rates: 1000..4000, each configuration's cell where it tried.
    let rates: Vec<f64> = c.rates.iter().map(|r| r.rate_per_s).collect();
    assert_eq!(rates, [1000.0, 2000.0, 3000.0, 4000.0]);
    let at_1000 = &c.rates[0].cells;
    assert_eq!(at_1000[1].windows, 20);
    // Twice the mean latency: p99.9 about twice, significantly.
    let latency = at_1000[1].latency.as_ref().unwrap();
    assert_eq!(latency.verdict, "worse", "{latency:?}");
    assert!(latency.percent.unwrap() > 50.0, "{latency:?}");
    let (low, high) = latency.interval.unwrap();
    assert!(low > 0.0 && high > low);
    // The same distribution again: noise.
    let control = at_1000[2].latency.as_ref().unwrap();
    assert_eq!(control.verdict, "noise", "{control:?}");
    // At a fixed rate throughput follows the schedule: equal everywhere, no difference.
    assert_eq!(at_1000[1].throughput.as_ref().unwrap().verdict, "noise");
    // The baseline's own cells carry no change; a rate the baseline never tried neither.
    assert!(at_1000[0].latency.is_none());
    assert!(!c.rates[3].cells[1].tried);
    // The worst window's value is the trial record's; a failed rate is marked.
    assert_eq!(c.rates[2].cells[1].worst_ms, Some(150.0));
    assert_eq!(c.rates[2].cells[1].verdict, Some(RateVerdict::Fail));

    let text = render::text(&c);
    for title in [
        "Configurations",
        "Worst window's p99.9 per attempted rate",
        "Change against g1 per attempted rate",
    ] {
        assert!(text.contains(title), "{title} in\n{text}");
    }
    assert!(text.contains("150 ms ✗"), "{text}");
    assert!(!text.contains("Cost"), "{text}");
}

/// Searched under --validate, a configuration whose trials lost writes is marked, whatever
/// its capacity; one whose trials kept them says so; one that did not validate says nothing.
#[test]
fn a_configuration_that_lost_writes_is_marked_whatever_its_capacity() {
    use crate::validation::DataCheck;
    let root = tempfile::tempdir().unwrap();
    let searches = three(root.path());
    // g1 kept its data at 1000/s; zgc lost 4 writes at 2000/s, where it still passed.
    for (search, rate, defects) in [(&searches[0], 1000.0, 0), (&searches[1], 2000.0, 4)] {
        let (mut store, _) = Store::resume(&search.dir).unwrap();
        let mut trial = store
            .records()
            .iter()
            .find_map(|r| match r {
                Record::Trial(t) if t.rate_per_s == rate => Some(t.clone()),
                _ => None,
            })
            .unwrap();
        trial.repeat = 2;
        trial.data = Some(DataCheck {
            defects,
            lost: defects,
            complete: true,
        });
        store.append(Record::Trial(trial)).unwrap();
        store.write_summary(1, Status::Complete).unwrap();
    }
    let c = compare(
        &load(&[
            searches[0].dir.clone(),
            searches[1].dir.clone(),
            searches[2].dir.clone(),
        ]),
        &CompareOptions::default(),
    )
    .unwrap();
    // Its capacity stands as measured: the mark is beside it, not instead of it.
    assert_eq!(c.configs[1].capacity_per_s, Some(2000.0));
    let lost = c.configs[1].data.as_ref().expect("zgc validated");
    assert_eq!((lost.runs_checked, lost.defects, lost.lost), (1, 4, 4));
    assert_eq!(lost.defect_rates_per_s, [2000.0]);
    assert_eq!(c.configs[0].data.as_ref().map(|d| d.defects), Some(0));
    assert!(c.configs[2].data.is_none());

    let text = render::text(&c);
    assert!(text.contains("(DATA DEFECTS: 4)"), "{text}");
    assert_eq!(text.matches("DATA DEFECTS").count(), 1, "{text}");
    assert!(
        text.contains("zgc (--validate): the cluster did not keep its data: 4 defect(s) (4 acknowledged write(s) lost) at 2 000/s"),
        "{text}"
    );
    assert!(
        text.contains("g1 (--validate): every acknowledged write kept"),
        "{text}"
    );
    assert!(!text.contains("g1-again (--validate)"), "{text}");
}

#[test]
fn cost_per_configuration_with_its_assumptions() {
    let root = tempfile::tempdir().unwrap();
    let searches = three(root.path());
    let options = CompareOptions {
        baseline: Some("zgc".into()),
        prices: vec![
            NodePrice::parse("1/h").unwrap(),
            NodePrice::parse("zgc=0.5/h").unwrap(),
        ],
        nodes: None,
        target_per_s: Some(10_000.0),
        size_for: SizeFor::Healthy,
    };
    let c = compare(&searches, &options).unwrap();
    assert_eq!(c.baseline, "zgc");
    assert_eq!(
        c.configs[0].capacity_change.as_ref().unwrap().verdict,
        "better"
    );
    // g1: 3 nodes (recorded) carry 3000/s, 1000/s each: 10 for 10k/s at $1 → $87 600.
    let g1 = c.configs[0].cost.as_ref().unwrap();
    assert_eq!(g1.nodes, 3);
    assert_eq!(g1.cluster_per_hour, 3.0);
    assert_eq!(g1.capacity_per_dollar_hour, Some(1000.0));
    let target = g1.target.as_ref().unwrap();
    assert_eq!(target.nodes, Some(10));
    assert_eq!(target.per_year, Some(87_600.0));
    // zgc: 2000/s on 3 nodes at $0.5: 15 nodes, $65 700 a year.
    let zgc = c.configs[1].cost.as_ref().unwrap().target.as_ref().unwrap();
    assert_eq!(zgc.nodes, Some(15));
    assert_eq!(zgc.per_year, Some(65_700.0));
    assert!(c
        .cost_assumptions
        .as_deref()
        .unwrap()
        .contains("in proportion"));
    let text = render::text(&c);
    assert!(text.contains("Nodes for 10 000/s"), "{text}");
    assert!(text.contains("in proportion to the number of"), "{text}");
}

/// `--size-for degraded`: each healthy configuration is priced by its twin's capacity
/// with a node down, and the table says so beside the figures.
#[test]
fn sized_for_a_node_down_the_cost_uses_the_degraded_twins_capacity() {
    let root = tempfile::tempdir().unwrap();
    let mut searches = three(root.path());
    // zgc (2000/s) stands for the searches' twin with node 3 down.
    let down = Degraded {
        nodes_down: 1,
        node: 3,
        address: "127.0.0.3".into(),
        chosen: crate::capacity::degraded::CHOSEN.into(),
    };
    searches[1].settings.as_mut().unwrap().degraded = Some(down.clone());
    let options = CompareOptions {
        prices: vec![NodePrice::parse("1/h").unwrap()],
        target_per_s: Some(10_000.0),
        size_for: SizeFor::Degraded,
        ..CompareOptions::default()
    };
    let c = compare(&searches, &options).unwrap();
    let g1 = &c.configs[0];
    let sized = g1.sized_for.as_ref().unwrap();
    assert_eq!(
        (sized.twin.as_str(), sized.capacity_per_s),
        ("zgc", Some(2000.0))
    );
    assert_eq!(g1.capacity_per_s, Some(3000.0), "its own capacity stays");
    // 2000/s on 3 nodes: 15 nodes for 10k/s, where its own 3000/s would need 10.
    let target = g1.cost.as_ref().unwrap().target.as_ref().unwrap();
    assert_eq!(target.nodes, Some(15));
    assert_eq!(c.configs[2].sized_for.as_ref().unwrap().twin, "zgc");
    assert_eq!(c.configs[1].sized_for, None);
    assert_eq!(c.configs[1].degraded.as_ref(), Some(&down));
    let text = render::text(&c);
    assert!(text.contains("Cost, sized for one node down"), "{text}");
    assert!(
        text.contains(
            "g1: sized for one node down: capacity 2 000/s with node 3 (127.0.0.3) \
             stopped (its twin zgc)"
        ),
        "{text}"
    );
    assert!(text.contains("2 000/s with node 3 down (zgc)"), "{text}");
    assert!(
        text.contains("2 000/s with node 3 down (its own)"),
        "{text}"
    );
    assert!(
        text.contains("zgc: every probe and trial ran with node 3 (127.0.0.3) down"),
        "{text}"
    );

    // Without a degraded search there is nothing to size by.
    searches[1].settings.as_mut().unwrap().degraded = None;
    let e = compare(&searches, &options).unwrap_err().to_string();
    assert!(e.contains("none of these searches has a twin"), "{e}");
    // A healthy configuration left without a twin is named.
    searches[1].settings.as_mut().unwrap().degraded = Some(down);
    searches[2].settings.as_mut().unwrap().run.workload.seed += 1;
    let e = compare(&searches, &options).unwrap_err().to_string();
    assert!(e.contains("g1-again has no twin"), "{e}");
}

#[test]
fn a_comparison_needs_two_searches_and_a_known_baseline() {
    let root = tempfile::tempdir().unwrap();
    let searches = three(root.path());
    assert!(compare(&searches[..1], &CompareOptions::default()).is_err());
    let options = CompareOptions {
        baseline: Some("cms".into()),
        ..CompareOptions::default()
    };
    let e = compare(&searches, &options).unwrap_err().to_string();
    assert!(
        e.contains("'cms' is none of the configurations: g1, zgc, g1-again"),
        "{e}"
    );
}

/// The scaling section of a comparison, from searches of several sizes.
mod scaling {
    use super::{write_search, Fake};
    use crate::capacity::dir::SearchData;
    use crate::compare::cost::{NodePrice, HOURS_PER_YEAR};
    use crate::compare::scaling::ONE_MACHINE;
    use crate::compare::{compare, render, CompareOptions};
    use crate::stats::usl::Analysis;

    /// Searches of 1 to `sizes` nodes whose capacities follow λ = 1000/s, σ = 0.1,
    /// κ = 0.01 on a ladder of 100/s steps; a failed size passes nothing.
    fn searches(sizes: &[u32], failed: Option<u32>) -> (tempfile::TempDir, Vec<SearchData>) {
        let root = tempfile::tempdir().unwrap();
        let truth = |n: f64| 1000.0 * n / (1.0 + 0.1 * (n - 1.0) + 0.01 * n * (n - 1.0));
        let mut data = Vec::new();
        for (i, &nodes) in sizes.iter().enumerate() {
            let capacity = (truth(f64::from(nodes)) / 100.0).floor() * 100.0;
            let passes: Vec<f64> = if failed == Some(nodes) {
                Vec::new()
            } else {
                vec![capacity]
            };
            let label: &'static str = Box::leak(format!("n{nodes}-{i}").into_boxed_str());
            let dir = write_search(
                root.path(),
                &Fake {
                    label,
                    mean_ms: 1.0,
                    passes,
                    fails: vec![capacity + 100.0],
                    seed: u64::from(nodes),
                },
            );
            let mut search = SearchData::load(&dir).unwrap();
            search.settings.as_mut().unwrap().nodes = Some(nodes);
            data.push(search);
        }
        (root, data)
    }

    fn options(target: Option<f64>) -> CompareOptions {
        CompareOptions {
            baseline: None,
            prices: vec![NodePrice::parse("1/h").unwrap()],
            nodes: None,
            target_per_s: target,
            size_for: Default::default(),
        }
    }

    #[test]
    fn sizes_that_follow_the_law_give_a_fit_and_a_sizing_beside_the_linear_rule() {
        let (_root, data) = searches(&[1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6], None);
        let c = compare(&data, &options(Some(3000.0))).unwrap();
        assert_eq!(c.scaling.len(), 1);
        let s = &c.scaling[0];
        assert_eq!(s.observations.len(), 12);
        let Analysis::Fitted(fit) = &s.analysis else {
            panic!("{:?}", s.statements)
        };
        assert!((fit.lambda_per_s.value - 1000.0).abs() < 100.0, "{fit:?}");
        let sizing = s.sizing.as_ref().unwrap();
        // Six nodes measure 3100/s at most; the linear rule, 517/s per node, says 6.
        assert_eq!(sizing.linear_nodes, Some(6));
        assert_eq!(sizing.linear_per_year, Some(6.0 * HOURS_PER_YEAR));
        assert!(s
            .statements
            .iter()
            .any(|l| l.contains("The cost table's figures use the linear rule")));
        assert!(s.curve.iter().any(|p| p.nodes == 6 && p.measured));
        // The shared machine is said: the fixture's hosts are loopback addresses.
        assert!(s.one_machine);
        assert!(s.statements.iter().any(|l| l == ONE_MACHINE));
        let text = render::text(&c);
        assert!(text.contains("Capacity against nodes ("), "{text}");
        assert!(
            text.contains("N* = √((1−σ)/κ)") || text.contains("κ = 0"),
            "{text}"
        );
    }

    #[test]
    fn two_sizes_and_a_failed_size_are_stated_not_fitted() {
        let (_root, data) = searches(&[1, 2], None);
        let c = compare(&data, &options(Some(3000.0))).unwrap();
        let s = &c.scaling[0];
        assert!(matches!(s.analysis, Analysis::NoModel { .. }));
        assert!(s.sizing.is_none() && s.curve.is_empty());
        assert!(
            s.statements[0].contains("cannot fit three parameters"),
            "{:?}",
            s.statements
        );
        let (_root, data) = searches(&[1, 2, 3], Some(3));
        let s = &compare(&data, &options(None)).unwrap().scaling[0];
        assert!(matches!(s.analysis, Analysis::NoModel { .. }));
        assert!(
            s.statements
                .iter()
                .any(|l| l.contains('3') && l.contains("fail")),
            "{:?}",
            s.statements
        );
        // One size: nothing to fit, no section.
        let (_root, data) = searches(&[3, 3], None);
        assert!(compare(&data, &options(None)).unwrap().scaling.is_empty());
    }
}
