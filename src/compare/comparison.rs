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
    /// What `--validate` found over its trials; a defect marks the configuration whatever
    /// its capacity. Absent when its trials did not validate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<crate::validation::DataVerdict>,
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
            data: outcome.data.clone(),
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
#[path = "comparison_tests.rs"]
pub(crate) mod tests;
