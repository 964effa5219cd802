//! A comparison of capacity searches, one per configuration (as Azul's capacity and cost article
//! and the Graviton2 instance comparison compare them): capacity and highest throughput per
//! configuration, the worst window's SLA percentile at every attempted rate, the change against a
//! baseline with a test of whether it is more than noise, and the cost. Built from the searches'
//! directories alone, so that `headroom compare`, a configuration matrix and the HTML report all
//! show the same figures; written as compare.json.

use serde::{Deserialize, Serialize};

use super::cost::{self, Cost, NodePrice, SizeFor, ASSUMPTIONS};
use super::samples::{run_windows, RunWindows};
use super::twins;
use crate::capacity::degraded::Degraded;
use crate::capacity::dir::SearchData;
use crate::capacity::pauses::{search_pauses, PauseFigures};
use crate::capacity::rates::same_rate;
use crate::capacity::Verdict as RateVerdict;
use crate::sla::Metric;
use crate::stats::difference::{
    self as stats, Better, Bootstrap, Difference, Evidence, DEFAULT_LEVEL,
};

/// The fewest windows on each side for a bootstrap interval of a percentile difference;
/// fewer give intervals that look narrow only because nothing varies.
pub const MIN_BOOTSTRAP_WINDOWS: usize = 5;

/// How a comparison is made.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CompareOptions {
    /// The baseline's label; the first configuration when `None`.
    pub baseline: Option<String>,
    /// `--node-price`, general and per configuration.
    pub prices: Vec<NodePrice>,
    /// `--nodes`: the tested cluster's nodes, where the search does not record them.
    pub nodes: Option<u32>,
    /// `--target-load`, requests per second.
    pub target_per_s: Option<f64>,
    /// `--size-for`: price each healthy configuration by its own capacity, or by that of its
    /// twin searched with a node down.
    #[serde(default)]
    pub size_for: SizeFor,
}

/// A comparison, as compare.json holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    /// The baseline configuration's label.
    pub baseline: String,
    /// The SLA of the searches (the baseline's).
    pub sla: Option<String>,
    /// The latency term compared per rate (the SLA's first latency term), e.g. `p99.9<100ms`.
    pub term: Option<String>,
    /// The percentile the bootstrap compares (the term's, else 99.9).
    pub percentile: f64,
    /// The significance level of every test.
    pub level: f64,
    /// One per configuration, in the order given.
    pub configs: Vec<ConfigFigures>,
    /// Every attempted rate of any configuration, ascending.
    pub rates: Vec<RateFigures>,
    /// The assumptions behind the cost figures, when there are any.
    pub cost_assumptions: Option<String>,
    /// What the reader should know: differing workloads, missing files, untested figures.
    pub notes: Vec<String>,
    /// How capacity grows with nodes, per group of configurations that differ in size
    /// ([`super::scaling`]); empty when none do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<super::scaling::Scaling>,
}

/// One configuration's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConfigFigures {
    /// Its name.
    pub label: String,
    /// The search's directory.
    pub dir: String,
    /// The workload's name.
    pub workload: Option<String>,
    /// The cluster tested, when headroom started it.
    pub cluster: Option<String>,
    /// Nodes tested (from the search, else --nodes).
    pub nodes: Option<u32>,
    /// The capacity, requests/s.
    pub capacity_per_s: Option<f64>,
    /// The lowest failing rate above the capacity: the capacity lies in [capacity, this).
    pub capacity_below_per_s: Option<f64>,
    /// Passing rates above a failing one.
    pub unstable: Vec<f64>,
    /// The highest throughput achieved by the probe or any trial.
    pub highest_achieved_per_s: f64,
    /// The closed-loop probe's throughput, when the search had a probe.
    pub probe_per_s: Option<f64>,
    /// Capacity against the baseline's (`None` for the baseline itself).
    pub capacity_change: Option<CapacityChange>,
    /// The probe's per-window throughput against the baseline's (Welch's test).
    pub probe_change: Option<Change>,
    /// What it costs, with --node-price.
    pub cost: Option<Cost>,
    /// Its nodes' stop-the-world pauses over every trial, when the trials recorded them
    /// (local clusters headroom started).
    pub pauses: Option<PauseFigures>,
    /// The node its search kept down in every probe and trial, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<Degraded>,
    /// With `--size-for degraded`: the capacity its cost is sized by, its twin's with a node
    /// down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sized_for: Option<SizedFor>,
}

/// The capacity a healthy configuration's cost is sized by under `--size-for degraded`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizedFor {
    /// The twin searched with a node down.
    pub twin: String,
    /// Its capacity, requests/s.
    pub capacity_per_s: Option<f64>,
    /// The node it kept down.
    pub degraded: Degraded,
}

/// Capacity against the baseline's. A search only brackets capacity between the highest
/// pass and the lowest fail above it, so two capacities differ for certain only when their
/// brackets do not overlap.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapacityChange {
    /// The change in percent of the baseline's capacity; `None` when either has none.
    pub percent: Option<f64>,
    /// `better`, `worse`, or `within resolution` when the brackets overlap.
    pub verdict: String,
}

/// One attempted rate across configurations.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RateFigures {
    /// The attempted rate, requests/s.
    pub rate_per_s: f64,
    /// One per configuration, in the order of [`Comparison::configs`].
    pub cells: Vec<RateCell>,
}

/// One configuration at one rate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RateCell {
    /// Whether the configuration tried the rate.
    pub tried: bool,
    /// pass, fail or incomplete.
    pub verdict: Option<RateVerdict>,
    /// The mean achieved rate of its repeats.
    pub achieved_per_s: Option<f64>,
    /// The worst window's value of the compared term over the repeats (ms).
    pub worst_ms: Option<f64>,
    /// Measured windows pooled over the repeats.
    pub windows: usize,
    /// Per-window throughput against the baseline's at this rate (Welch's test).
    pub throughput: Option<Change>,
    /// The compared percentile against the baseline's at this rate (bootstrap interval).
    pub latency: Option<Change>,
}

/// One figure against the baseline's, and whether the difference is more than noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The baseline's value.
    pub baseline: f64,
    /// This configuration's value.
    pub value: f64,
    /// The change in percent of the baseline's value.
    pub percent: Option<f64>,
    /// Welch's p-value, for throughput.
    pub p_value: Option<f64>,
    /// The interval of the difference (value − baseline), for percentiles.
    pub interval: Option<(f64, f64)>,
    /// `better`, `worse`, `noise`, or `untested` (with `why`).
    pub verdict: String,
    /// Why the difference was not tested.
    pub why: Option<String>,
}

impl Change {
    fn from_difference(d: &Difference) -> Change {
        let (p_value, interval) = match d.evidence {
            Evidence::PValue(p) => (Some(p), None),
            Evidence::Interval { low, high, .. } => (None, Some((low, high))),
        };
        Change {
            baseline: d.baseline,
            value: d.value,
            percent: d.change_percent,
            p_value,
            interval,
            verdict: d.verdict().label().to_string(),
            why: None,
        }
    }

    fn untested(baseline: f64, value: f64, why: String) -> Change {
        Change {
            baseline,
            value,
            percent: (baseline != 0.0).then(|| (value - baseline) / baseline * 100.0),
            p_value: None,
            interval: None,
            verdict: "untested".to_string(),
            why: Some(why),
        }
    }

    /// The change in percent as a table shows it, with its verdict: `+12.3% better`,
    /// `-0.4% noise`.
    pub fn describe(&self) -> String {
        match self.percent {
            Some(p) => format!("{p:+.1}% {}", self.verdict),
            None => self.verdict.clone(),
        }
    }
}

/// Compares the searches, the baseline first among equals. Fails when there are fewer than
/// two or the baseline is not among them.
pub fn compare(searches: &[SearchData], options: &CompareOptions) -> anyhow::Result<Comparison> {
    anyhow::ensure!(
        searches.len() >= 2,
        "a comparison needs at least two capacity searches, got {}",
        searches.len()
    );
    let base_index = match &options.baseline {
        None => 0,
        Some(label) => searches
            .iter()
            .position(|s| &s.label == label)
            .ok_or_else(|| {
                let labels: Vec<&str> = searches.iter().map(|s| s.label.as_str()).collect();
                anyhow::anyhow!(
                    "--baseline '{label}' is none of the configurations: {}",
                    labels.join(", ")
                )
            })?,
    };
    let baseline = &searches[base_index];
    let mut notes = Vec::new();
    let labels: Vec<&str> = searches.iter().map(|s| s.label.as_str()).collect();
    for (i, label) in labels.iter().enumerate() {
        if labels[..i].contains(label) {
            notes.push(format!(
                "Two configurations are named '{label}': give each search its own --label."
            ));
        }
    }
    let workloads: Vec<Option<String>> = searches.iter().map(|s| s.workload()).collect();
    if workloads.iter().any(|w| w != &workloads[base_index]) {
        notes.push(
            "The searches ran different workloads; their figures are not comparable.".to_string(),
        );
    }
    if searches.iter().any(|s| s.sla != baseline.sla) {
        notes.push(
            "The searches were judged by different SLAs; capacities are not comparable."
                .to_string(),
        );
    }

    let sla = baseline.sla.clone();
    let term = sla
        .as_ref()
        .and_then(|sla| sla.terms.iter().find(|t| t.metric.is_latency()).cloned());
    let percentile = match term.as_ref().map(|t| t.metric) {
        Some(Metric::Percentile(p)) => p.value(),
        _ => 99.9,
    };
    let term_name = term.as_ref().map(|t| t.name());
    let level = DEFAULT_LEVEL;
    let bootstrap = Bootstrap::default();

    // Every rate any configuration tried.
    let mut rates: Vec<f64> = Vec::new();
    for search in searches {
        for row in &search.summary.outcome.rows {
            if !rates.iter().any(|&r| same_rate(r, row.rate_per_s)) {
                rates.push(row.rate_per_s);
            }
        }
    }
    rates.sort_by(f64::total_cmp);

    // Windows per configuration and rate, read once.
    let windows: Vec<Vec<RunWindows>> = searches
        .iter()
        .map(|search| {
            rates
                .iter()
                .map(|&rate| {
                    let mut pooled = RunWindows::default();
                    for trial in &search.trials {
                        if same_rate(trial.record.rate_per_s, rate) {
                            if let Some(run) = &trial.run {
                                pooled.extend(run_windows(run));
                            }
                        }
                    }
                    pooled
                })
                .collect()
        })
        .collect();
    for per_config in &windows {
        for w in per_config {
            notes.extend(w.notes.iter().cloned());
        }
    }

    let rate_rows: Vec<RateFigures> = rates
        .iter()
        .enumerate()
        .map(|(r, &rate)| RateFigures {
            rate_per_s: rate,
            cells: searches
                .iter()
                .enumerate()
                .map(|(c, search)| {
                    let row = search
                        .summary
                        .outcome
                        .rows
                        .iter()
                        .find(|row| same_rate(row.rate_per_s, rate));
                    let Some(row) = row else {
                        return RateCell {
                            tried: false,
                            verdict: None,
                            achieved_per_s: None,
                            worst_ms: None,
                            windows: 0,
                            throughput: None,
                            latency: None,
                        };
                    };
                    let achieved = row.trials.iter().map(|t| t.achieved_per_s).sum::<f64>()
                        / row.trials.len().max(1) as f64;
                    let worst_ms = term_name.as_ref().and_then(|name| {
                        row.trials
                            .iter()
                            .filter_map(|t| t.terms.iter().find(|v| &v.term == name))
                            .filter(|v| v.unit == "ms")
                            .map(|v| v.value)
                            .reduce(f64::max)
                    });
                    let base_tried = c != base_index
                        && baseline
                            .summary
                            .outcome
                            .rows
                            .iter()
                            .any(|row| same_rate(row.rate_per_s, rate));
                    let (throughput, latency) = if base_tried {
                        let (b, o) = (&windows[base_index][r], &windows[c][r]);
                        (
                            Some(throughput_change(b, o, level)),
                            Some(latency_change(b, o, percentile, &bootstrap)),
                        )
                    } else {
                        (None, None)
                    };
                    RateCell {
                        tried: true,
                        verdict: Some(row.verdict),
                        achieved_per_s: Some(achieved),
                        worst_ms,
                        windows: windows[c][r].len(),
                        throughput,
                        latency,
                    }
                })
                .collect(),
        })
        .collect();

    // The probes' windows, for the highest throughput.
    let probe_windows: Vec<Option<RunWindows>> = searches
        .iter()
        .map(|s| s.probe.as_ref().map(run_windows))
        .collect();

    let twins = match options.size_for {
        SizeFor::Healthy => None,
        SizeFor::Degraded => Some(twins::sized_by_twins(searches)?),
    };
    let base_bracket = baseline.summary.outcome.bracket();
    let mut configs = Vec::new();
    for (c, search) in searches.iter().enumerate() {
        let outcome = &search.summary.outcome;
        let (capacity, below) = outcome.bracket();
        let capacity_change =
            (c != base_index).then(|| capacity_change(base_bracket, (capacity, below)));
        let probe_change = match (&probe_windows[base_index], &probe_windows[c]) {
            (Some(b), Some(o)) if c != base_index => Some(throughput_change(b, o, level)),
            _ => None,
        };
        let nodes = recorded_nodes(search).or(options.nodes);
        let degraded = search.settings.as_ref().and_then(|s| s.degraded.clone());
        let sized_for = twins.as_ref().and_then(|t| t[c]).map(|twin| SizedFor {
            twin: searches[twin].label.clone(),
            capacity_per_s: searches[twin].summary.outcome.capacity_per_s,
            degraded: searches[twin]
                .settings
                .as_ref()
                .and_then(|s| s.degraded.clone())
                .expect("a twin is degraded"),
        });
        let priced_capacity = sized_for.as_ref().map_or(capacity, |s| s.capacity_per_s);
        let cost = NodePrice::for_label(&options.prices, &search.label).map(|price| {
            cost::cost(
                nodes.unwrap_or(1),
                price,
                priced_capacity,
                options.target_per_s,
            )
        });
        if cost.is_some() && nodes.is_none() {
            notes.push(format!(
                "{}: the number of nodes is not recorded; cost assumes 1 (give --nodes).",
                search.label
            ));
        }
        configs.push(ConfigFigures {
            label: search.label.clone(),
            dir: search.dir.display().to_string(),
            workload: search.workload(),
            cluster: search.settings.as_ref().and_then(|s| s.cluster.clone()),
            nodes,
            capacity_per_s: capacity,
            capacity_below_per_s: below,
            unstable: outcome.unstable.clone(),
            highest_achieved_per_s: outcome.highest_achieved_per_s,
            probe_per_s: outcome.probe.as_ref().map(|p| p.achieved_per_s),
            capacity_change,
            probe_change,
            cost,
            pauses: search_pauses(search).map(|p| p.overall),
            degraded,
            sized_for,
        });
    }
    let cost_assumptions = configs
        .iter()
        .any(|c| c.cost.is_some())
        .then(|| ASSUMPTIONS.to_string());
    if !options.prices.is_empty() {
        for price in &options.prices {
            if let Some(label) = &price.label {
                if !labels.contains(&label.as_str()) {
                    notes.push(format!(
                        "--node-price {label}=...: no configuration is named '{label}'."
                    ));
                }
            }
        }
    }
    notes.dedup();
    let members: Vec<super::scaling::Member> = searches
        .iter()
        .zip(&configs)
        .map(|(search, config)| super::scaling::Member {
            search,
            label: &config.label,
            nodes: config.nodes,
            capacity_per_s: config.capacity_per_s,
            cluster: config.cluster.as_deref(),
        })
        .collect();
    let scaling = super::scaling::scaling(&members, &options.prices, options.target_per_s);
    Ok(Comparison {
        baseline: baseline.label.clone(),
        sla: baseline.sla.as_ref().map(ToString::to_string),
        term: term_name,
        percentile,
        level,
        configs,
        rates: rate_rows,
        cost_assumptions,
        notes,
        scaling,
    })
}

/// The nodes a search recorded (a configuration matrix records its cluster's).
fn recorded_nodes(search: &SearchData) -> Option<u32> {
    search.settings.as_ref()?.nodes
}

/// Capacity against the baseline's, by their brackets [capacity, lowest fail above).
fn capacity_change(
    base: (Option<f64>, Option<f64>),
    other: (Option<f64>, Option<f64>),
) -> CapacityChange {
    let low = |b: (Option<f64>, Option<f64>)| b.0.unwrap_or(0.0);
    let high = |b: (Option<f64>, Option<f64>)| b.1.unwrap_or(f64::INFINITY);
    let percent = match (base.0, other.0) {
        (Some(b), Some(o)) if b > 0.0 => Some((o - b) / b * 100.0),
        _ => None,
    };
    let verdict = if low(other) >= high(base) {
        "better"
    } else if high(other) <= low(base) {
        "worse"
    } else {
        "within resolution"
    };
    CapacityChange {
        percent,
        verdict: verdict.to_string(),
    }
}

/// Welch's test of per-window throughput, higher being better.
pub(crate) fn throughput_change(base: &RunWindows, other: &RunWindows, level: f64) -> Change {
    let mean = |w: &RunWindows| {
        if w.is_empty() {
            0.0
        } else {
            w.throughput.iter().sum::<f64>() / w.len() as f64
        }
    };
    if base.len() < 2 || other.len() < 2 {
        return Change::untested(
            mean(base),
            mean(other),
            format!(
                "{} and {} windows: Welch's test needs 2 on each side",
                base.len(),
                other.len()
            ),
        );
    }
    match stats::compare_means(&base.throughput, &other.throughput, Better::Higher, level) {
        Ok(d) => Change::from_difference(&d),
        Err(e) => Change::untested(mean(base), mean(other), e.to_string()),
    }
}

/// A bootstrap interval of the percentile's difference, lower being better (in ms).
pub(crate) fn latency_change(
    base: &RunWindows,
    other: &RunWindows,
    percentile: f64,
    bootstrap: &Bootstrap,
) -> Change {
    let of_all = |w: &RunWindows| {
        let mut merged = crate::stats::new_histogram();
        for h in &w.latency {
            let _ = merged.add(h);
        }
        crate::stats::value_at_percentile(&merged, percentile) as f64 / 1e6
    };
    let nonempty = |w: &RunWindows| w.latency.iter().filter(|h| !h.is_empty()).count();
    let (nb, no) = (nonempty(base), nonempty(other));
    if nb < MIN_BOOTSTRAP_WINDOWS || no < MIN_BOOTSTRAP_WINDOWS {
        return Change::untested(
            of_all(base),
            of_all(other),
            format!(
                "{nb} and {no} windows with requests: the bootstrap needs \
                 {MIN_BOOTSTRAP_WINDOWS} on each side"
            ),
        );
    }
    match stats::compare_percentile(&base.latency, &other.latency, percentile, bootstrap) {
        Ok(d) => {
            let mut change = Change::from_difference(&d);
            // In milliseconds, as every latency in the tables.
            change.baseline /= 1e6;
            change.value /= 1e6;
            change.interval = change.interval.map(|(l, h)| (l / 1e6, h / 1e6));
            change
        }
        Err(e) => Change::untested(of_all(base), of_all(other), e.to_string()),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::{Path, PathBuf};
    use std::time::{Duration, SystemTime};

    use rand::rngs::SmallRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Exp};

    use super::*;
    use crate::capacity::{Record, Status, Store, TermValue, TrialRecord};
    use crate::compare::render;
    use crate::run::template::Load;
    use crate::results::hlog::HlogWriter;
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
            let mut log =
                HlogWriter::create(&path.join("histograms.hlog"), SystemTime::now()).unwrap();
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
}
