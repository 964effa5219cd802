//! How capacity grows with nodes, across the configurations compared: Gunther's Universal
//! Scalability Law fitted ([`crate::stats::usl`]) to the capacities of searches that differ
//! in node count, with what it predicts for untested sizes, where adding nodes stops paying,
//! and the nodes and yearly cost to carry `--target-load` under the model beside the linear
//! rule's answer. docs/planning.md describes the method and where it misleads.
//!
//! Configurations are grouped by what they are apart from their size: the cluster's
//! description without its node count and heap (a local matrix gives each size its share of
//! this machine's memory), the workload, and whether a node was down (`--degraded`). Each
//! group with at least two sizes gets a fit or the statement of what its data cannot tell.
//!
//! Every repeat is an observation: a search with `--repeats 3` gives three capacities, each
//! the highest rate that repeat passed with every lower rate it tried passing too.

use serde::{Deserialize, Serialize};

use super::cost::{NodePrice, HOURS_PER_YEAR};
use crate::capacity::dir::SearchData;
use crate::capacity::search::repeat_capacity;
use crate::stats::usl::{self, Analysis, Fit, Observation, Peak, Settings};

/// The fit of one group of configurations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    /// What the group's configurations share, e.g. `Cassandra 5.0.9 from 127.0.0.1, g1`.
    pub group: String,
    /// One per repeat of every configuration of the group.
    pub observations: Vec<Observation>,
    /// The fit, or why there is none.
    pub analysis: Analysis,
    /// The fitted capacity from one node to past the largest measured size, with its
    /// interval, where the model gives one.
    pub curve: Vec<CurvePoint>,
    /// For `--target-load`: the nodes and cost under the model and under the linear rule.
    pub sizing: Option<Sizing>,
    /// Whether every node of these clusters ran on this one machine.
    pub one_machine: bool,
    /// Everything above in sentences, for the terminal and the report.
    pub statements: Vec<String>,
}

/// The model's capacity at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Nodes.
    pub nodes: u32,
    /// The fitted capacity, requests/s.
    pub capacity_per_s: f64,
    /// The interval's lower end.
    pub low_per_s: f64,
    /// The interval's upper end.
    pub high_per_s: f64,
    /// Whether some configuration of this size was measured.
    pub measured: bool,
}

/// What carrying `--target-load` takes, by the model and by the linear rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sizing {
    /// The load, requests/s.
    pub load_per_s: f64,
    /// Nodes under the model; `None` where it cannot say (the statements say why).
    pub nodes: Option<u32>,
    /// The interval of that count over the bootstrap's fits.
    pub low_nodes: Option<u32>,
    /// Its upper end; `None` when too many fits never reach the load.
    pub high_nodes: Option<u32>,
    /// Nodes under the linear rule: the largest measured size's capacity per node.
    pub linear_nodes: Option<u32>,
    /// Price per node-hour, when one was given.
    pub node_price_per_hour: Option<f64>,
    /// The model's nodes for a year.
    pub per_year: Option<f64>,
    /// The linear rule's nodes for a year.
    pub linear_per_year: Option<f64>,
}

/// The sentence every fit of local clusters carries: a local matrix's nodes share this
/// machine's cores.
pub const ONE_MACHINE: &str = "Every node of these clusters ran on this one machine, sharing \
     its cores, memory and disk: the fit describes how this machine divides among nodes, not \
     how a cluster of separate machines scales. Fit searches of real clusters for sizing.";

/// One configuration of a comparison, as the fit needs it.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// Its search.
    pub search: &'a SearchData,
    /// Its name.
    pub label: &'a str,
    /// Nodes tested, when known.
    pub nodes: Option<u32>,
    /// The search's capacity.
    pub capacity_per_s: Option<f64>,
    /// The local cluster's description, when headroom started it.
    pub cluster: Option<&'a str>,
}

/// The fits of `configs`, one per group with at least two sizes; empty when no two
/// configurations differ in node count. `prices` and `target_per_s` are `compare`'s
/// `--node-price` and `--target-load`.
pub fn scaling(
    configs: &[Member],
    prices: &[NodePrice],
    target_per_s: Option<f64>,
) -> Vec<Scaling> {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, config) in configs.iter().enumerate() {
        if config.nodes.is_none() {
            continue;
        }
        let key = group_of(config);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    groups
        .into_iter()
        .filter(|(_, members)| {
            let mut sizes: Vec<u32> = members.iter().filter_map(|&i| configs[i].nodes).collect();
            sizes.sort_unstable();
            sizes.dedup();
            sizes.len() >= 2
        })
        .map(|(group, members)| fit_group(group, &members, configs, prices, target_per_s))
        .collect()
}

/// What a configuration is apart from its size.
fn group_of(config: &Member) -> String {
    let cluster = config.cluster.map(|c| {
        c.split(", ")
            .filter(|part| !part.starts_with("heap "))
            .map(|part| part.split_once(" × ").map_or(part, |(_, rest)| rest))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let mut key = cluster.unwrap_or_else(|| "clusters headroom did not start".to_string());
    if let Some(workload) = config.search.workload() {
        key.push_str(&format!(", workload {workload}"));
    }
    // A search with a node down is another curve than the healthy one.
    if config
        .search
        .settings
        .as_ref()
        .is_some_and(|s| s.degraded.is_some())
    {
        key.push_str(", one node down");
    }
    key
}

fn fit_group(
    group: String,
    members: &[usize],
    configs: &[Member],
    prices: &[NodePrice],
    target_per_s: Option<f64>,
) -> Scaling {
    let mut observations = Vec::new();
    for &i in members {
        let nodes = configs[i].nodes.unwrap_or(1);
        let capacities = repeat_capacities(configs[i].search, configs[i].capacity_per_s);
        let several = capacities.len() > 1;
        for (r, capacity) in capacities.into_iter().enumerate() {
            observations.push(Observation {
                nodes,
                capacity_per_s: capacity,
                label: if several {
                    format!("{} repeat {}", configs[i].label, r + 1)
                } else {
                    configs[i].label.to_string()
                },
            });
        }
    }
    let analysis = usl::analyze(&observations, &Settings::default());
    let one_machine = members.iter().all(|&i| {
        configs[i]
            .search
            .settings
            .as_ref()
            .is_some_and(on_this_machine)
    });
    let largest = members
        .iter()
        .max_by_key(|&&i| configs[i].nodes)
        .map(|&i| configs[i].label.to_string())
        .unwrap_or_default();
    let price = NodePrice::for_label(prices, &largest);
    let mut statements = Vec::new();
    let (curve, sizing) = match &analysis {
        Analysis::Fitted(fit) => {
            statements.extend(describe_fit(fit));
            let curve = curve(fit, &observations);
            let sizing = target_per_s.map(|load| {
                let (sizing, notes) = size(fit, load, price);
                statements.extend(describe_sizing(&sizing, fit, &notes));
                sizing
            });
            (curve, sizing)
        }
        Analysis::NoModel { statements: why } => {
            statements.extend(why.iter().map(sentence));
            (Vec::new(), None)
        }
    };
    if one_machine {
        statements.push(ONE_MACHINE.to_string());
    }
    Scaling {
        group,
        observations,
        analysis,
        curve,
        sizing,
        one_machine,
        statements,
    }
}

/// Whether every host of a search is a loopback address: its nodes shared this machine.
fn on_this_machine(settings: &crate::capacity::settings::SearchSettings) -> bool {
    let hosts = &settings.run.hosts;
    !hosts.is_empty()
        && hosts.iter().all(|h| {
            let host = h.rsplit_once(':').map_or(h.as_str(), |(host, _)| host);
            let host = host.trim_start_matches('[').trim_end_matches(']');
            host == "localhost"
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        })
}

/// Each repeat's capacity ([`repeat_capacity`]): the highest rate that repeat passed, every
/// lower rate it was tried at passing too; `None` for a repeat that passed none. A search of
/// one repeat, or one without trial records, gives its capacity.
pub fn repeat_capacities(search: &SearchData, capacity_per_s: Option<f64>) -> Vec<Option<f64>> {
    let repeats = search
        .trials
        .iter()
        .map(|t| t.record.repeat)
        .max()
        .unwrap_or(0);
    if repeats <= 1 || capacity_per_s.is_none() {
        return vec![capacity_per_s];
    }
    (1..=repeats)
        .map(|repeat| repeat_capacity(search.trials.iter().map(|t| &t.record), repeat))
        .collect()
}

/// The fitted curve from one node to a few sizes past the largest measured, where the
/// model answers (outside the measured range only when every parameter is pinned).
fn curve(fit: &Fit, observations: &[Observation]) -> Vec<CurvePoint> {
    let largest = fit.measured_nodes[1];
    let until = (largest * 2).max(largest + 3);
    (1..=until)
        .filter_map(|nodes| {
            let estimate = fit.predict(nodes).ok()?;
            Some(CurvePoint {
                nodes,
                capacity_per_s: estimate.value,
                low_per_s: estimate.low,
                high_per_s: estimate.high,
                measured: observations.iter().any(|o| o.nodes == nodes),
            })
        })
        .collect()
}

/// The sizing for `load_per_s`, and the model's notes on it.
fn size(fit: &Fit, load_per_s: f64, price: Option<f64>) -> (Sizing, Vec<usl::Statement>) {
    let answer = fit.nodes_for(load_per_s);
    let per_year = |nodes: Option<u32>| {
        price
            .zip(nodes)
            .map(|(p, n)| p * f64::from(n) * HOURS_PER_YEAR)
    };
    let sizing = Sizing {
        load_per_s,
        nodes: answer.nodes,
        low_nodes: answer.low_nodes,
        high_nodes: answer.high_nodes,
        linear_nodes: answer.linear_nodes,
        node_price_per_hour: price,
        per_year: per_year(answer.nodes),
        linear_per_year: per_year(answer.linear_nodes),
    };
    (sizing, answer.notes)
}

fn rate(per_s: f64) -> String {
    crate::format::format_rate(per_s)
}

/// The fit in sentences: the parameters, the peak, the caveats.
fn describe_fit(fit: &Fit) -> Vec<String> {
    let level = fit.confidence * 100.0;
    let mut lines = vec![format!(
        "Universal Scalability Law C(N) = λN / (1 + σ(N−1) + κN(N−1)) fitted by least squares \
         to sizes {}–{}: λ = {}/s [{} – {}], σ = {:.4} [{:.4} – {:.4}], κ = {:.5} [{:.5} – \
         {:.5}] ({level:.0}% intervals, {} bootstrap).",
        fit.measured_nodes[0],
        fit.measured_nodes[1],
        rate(fit.lambda_per_s.value),
        rate(fit.lambda_per_s.low),
        rate(fit.lambda_per_s.high),
        fit.sigma.value,
        fit.sigma.low,
        fit.sigma.high,
        fit.kappa.value,
        fit.kappa.low,
        fit.kappa.high,
        match fit.bootstrap {
            usl::Bootstrap::Stratified => "repeats resampled within each size",
            usl::Bootstrap::Residual => "residuals resampled",
        }
    )];
    lines.push(match &fit.peak {
        Peak::At {
            nodes,
            low_nodes,
            high_nodes,
            capacity_per_s,
        } => format!(
            "Adding nodes stops paying at N* = √((1−σ)/κ) = {nodes:.1} nodes [{low_nodes:.1} – {}], \
             where the model peaks at {}/s.",
            high_nodes.map_or("no upper end".to_string(), |h| format!("{h:.1}")),
            rate(*capacity_per_s)
        ),
        Peak::Never { ceiling_per_s } => format!(
            "κ = 0: within the model adding nodes always pays{}.",
            ceiling_per_s.map_or(String::new(), |c| format!(
                ", though capacity never passes λ/σ = {}/s",
                rate(c)
            ))
        ),
        Peak::Withheld => {
            "Where adding nodes stops paying lies beyond what these sizes can tell.".to_string()
        }
    });
    lines.extend(fit.notes.iter().map(sentence));
    lines
}

fn describe_sizing(sizing: &Sizing, fit: &Fit, notes: &[usl::Statement]) -> Vec<String> {
    let cost = |per_year: Option<f64>| {
        per_year.map_or(String::new(), |y| {
            format!(", {} a year", crate::format::format_money(y))
        })
    };
    let model = match sizing.nodes {
        Some(n) => format!(
            "the model needs {n} nodes [{} – {}]{}",
            sizing.low_nodes.map_or("?".to_string(), |n| n.to_string()),
            sizing
                .high_nodes
                .map_or("never".to_string(), |n| n.to_string()),
            cost(sizing.per_year)
        ),
        None => "the model gives no node count (below)".to_string(),
    };
    let linear = match sizing.linear_nodes {
        Some(n) => format!(
            "the linear rule ({}/s per node, the largest size's) {n} nodes{}",
            rate(fit.per_node_capacity_per_s),
            cost(sizing.linear_per_year)
        ),
        None => "the linear rule gives none".to_string(),
    };
    let mut lines = vec![format!(
        "To carry {}/s: {model}; {linear}. The cost table's figures use the linear rule; these \
         use the model.",
        rate(sizing.load_per_s)
    )];
    lines.extend(notes.iter().map(sentence));
    lines
}

/// A statement as a sentence: a capital first, a full stop last.
fn sentence(statement: &usl::Statement) -> String {
    let text = super::usl_words::words(statement);
    let mut chars = text.chars();
    let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
    let mut out = first.unwrap_or_default() + chars.as_str();
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}
