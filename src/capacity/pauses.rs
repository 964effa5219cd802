//! The server pauses of several runs summed up: per attempted rate of a capacity search and
//! over the whole search, for the report's tables and for comparing configurations (one
//! collector or heap against another) by how often and how long their nodes stopped.
//!
//! Figures are per node, so that clusters of different sizes compare: pauses per node and
//! minute, and the share of each node's measured time it was stopped. Pause percentiles come
//! from the merged lengths of every pause of every node (never an average of percentiles).

use hdrhistogram::Histogram;

use super::dir::SearchData;
use crate::metrics::server_pauses::PausesFile;
use crate::results::run_dir::RunData;
use crate::stats::{new_histogram, value_at_percentile};

/// The pauses of one or more runs, all their nodes together.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PauseFigures {
    /// Runs with pause figures that count here.
    pub runs: usize,
    /// Nodes read, summed over the runs (a 3-node run counts 3).
    pub node_runs: usize,
    /// Pauses that began in the measured parts.
    pub pauses: u64,
    /// Measured time summed over nodes and runs, seconds.
    pub node_seconds: f64,
    /// Pauses per node and minute of measured time.
    pub per_minute: f64,
    /// Stopped time as a percentage of the nodes' measured time.
    pub stopped_percent: f64,
    /// The 99th percentile of pause length, ms; `None` without pauses.
    pub p99_ms: Option<f64>,
    /// The longest pause, ms; `None` without pauses.
    pub max_ms: Option<f64>,
    /// The longest time threads took to reach a safepoint, ms, when the logs say.
    pub longest_time_to_safepoint_ms: Option<f64>,
}

/// A capacity search's pauses at one attempted rate.
#[derive(Debug, Clone, PartialEq)]
pub struct RatePauses {
    /// The attempted rate, requests per second.
    pub rate_per_s: f64,
    /// Every repeat at that rate together.
    pub figures: PauseFigures,
}

/// A capacity search's pauses: per attempted rate, and over every trial.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchPauses {
    /// The search's label.
    pub label: String,
    /// One row per attempted rate with pause figures, by rate.
    pub rates: Vec<RatePauses>,
    /// Every trial with pause figures together.
    pub overall: PauseFigures,
    /// Trials whose run directory holds no pauses.json.
    pub trials_without: usize,
}

/// Adds runs' pause figures up.
#[derive(Debug, Clone)]
struct Accumulator {
    runs: usize,
    node_runs: usize,
    pauses: u64,
    node_seconds: f64,
    stopped_ms: f64,
    lengths: Histogram<u64>,
    max_ms: Option<f64>,
    reaching_ms: Option<f64>,
}

impl Accumulator {
    fn new() -> Accumulator {
        Accumulator {
            runs: 0,
            node_runs: 0,
            pauses: 0,
            node_seconds: 0.0,
            stopped_ms: 0.0,
            lengths: new_histogram(),
            max_ms: None,
            reaching_ms: None,
        }
    }

    fn add(&mut self, file: &PausesFile) {
        if file.nodes.is_empty() {
            return;
        }
        self.runs += 1;
        for node in &file.nodes {
            self.node_runs += 1;
            self.pauses += node.count;
            self.node_seconds += file.measured_s();
            self.stopped_ms += node.stopped_ms;
            for pause in &node.events {
                let ns = (pause.length_ms * 1e6).round().max(1.0) as u64;
                self.lengths
                    .record(ns)
                    .expect("the histogram grows to any value");
            }
            if node.count > 0 {
                self.max_ms = Some(self.max_ms.unwrap_or(0.0).max(node.max_ms));
            }
            if let Some(t) = node.time_to_safepoint_max_ms {
                self.reaching_ms = Some(self.reaching_ms.unwrap_or(0.0).max(t));
            }
        }
    }

    fn figures(&self) -> Option<PauseFigures> {
        if self.runs == 0 {
            return None;
        }
        let minutes = self.node_seconds / 60.0;
        Some(PauseFigures {
            runs: self.runs,
            node_runs: self.node_runs,
            pauses: self.pauses,
            node_seconds: self.node_seconds,
            per_minute: if minutes > 0.0 {
                self.pauses as f64 / minutes
            } else {
                0.0
            },
            stopped_percent: if self.node_seconds > 0.0 {
                self.stopped_ms / 1e3 / self.node_seconds * 100.0
            } else {
                0.0
            },
            // Never above the exact max, as HdrHistogram's bucket top can be.
            p99_ms: (!self.lengths.is_empty()).then(|| {
                let p99 = value_at_percentile(&self.lengths, 99.0) as f64 / 1e6;
                p99.min(self.max_ms.unwrap_or(p99))
            }),
            max_ms: self.max_ms,
            longest_time_to_safepoint_ms: self.reaching_ms,
        })
    }
}

/// The pauses of these runs together; `None` when none of them has pause figures.
pub fn run_pauses<'a>(runs: impl IntoIterator<Item = &'a RunData>) -> Option<PauseFigures> {
    let mut all = Accumulator::new();
    for run in runs {
        if let Some(file) = &run.pauses {
            all.add(file);
        }
    }
    all.figures()
}

/// A capacity search's pauses per attempted rate and overall (the probe left out: it is no
/// trial); `None` when no trial has pause figures.
pub fn search_pauses(search: &SearchData) -> Option<SearchPauses> {
    let mut rates: Vec<(f64, Accumulator)> = Vec::new();
    let mut overall = Accumulator::new();
    let mut trials_without = 0;
    for trial in &search.trials {
        let Some(file) = trial.run.as_ref().and_then(|r| r.pauses.as_ref()) else {
            trials_without += 1;
            continue;
        };
        let rate = trial.record.rate_per_s;
        let at = match rates.iter().position(|(r, _)| *r == rate) {
            Some(at) => at,
            None => {
                rates.push((rate, Accumulator::new()));
                rates.len() - 1
            }
        };
        rates[at].1.add(file);
        overall.add(file);
    }
    let overall = overall.figures()?;
    let mut rates: Vec<RatePauses> = rates
        .into_iter()
        .filter_map(|(rate_per_s, acc)| {
            Some(RatePauses {
                rate_per_s,
                figures: acc.figures()?,
            })
        })
        .collect();
    rates.sort_by(|a, b| a.rate_per_s.total_cmp(&b.rate_per_s));
    Some(SearchPauses {
        label: search.label.clone(),
        rates,
        overall,
        trials_without,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{node, pause, pauses_of};

    fn fixture_search() -> SearchData {
        SearchData::load(&crate::fixtures::capacity_fixture()).unwrap()
    }

    #[test]
    fn a_search_sums_its_trials_pauses_per_rate_and_overall() {
        let mut search = fixture_search();
        assert_eq!(
            search_pauses(&search),
            None,
            "the fixture has no pauses.json"
        );
        let rates: Vec<f64> = search.trials.iter().map(|t| t.record.rate_per_s).collect();
        assert!(rates.len() >= 3, "{rates:?}");
        // Trial 0: one node, 10 s measured, 3 pauses of which one 50 ms; trial 1: two
        // nodes, 10 s, 1 pause of 200 ms with a 120 ms time to safepoint.
        let t0 = pauses_of(vec![node(
            "node1",
            vec![
                pause(1.0, 50.0, "Pause Young"),
                pause(2.0, 1.0, "Cleanup"),
                pause(3.0, 2.0, "Cleanup"),
            ],
        )]);
        let mut slow = node("node1", vec![pause(4.0, 200.0, "Cleanup")]);
        slow.time_to_safepoint_max_ms = Some(120.0);
        let t1 = pauses_of(vec![slow, node("node2", vec![])]);
        for (trial, file) in search.trials.iter_mut().zip([t0, t1]) {
            trial.run.as_mut().unwrap().pauses = Some(file);
        }
        let found = search_pauses(&search).unwrap();
        assert_eq!(found.trials_without, search.trials.len() - 2);
        assert_eq!(found.rates.len(), 2);
        let first = &found.rates[0];
        assert_eq!(first.rate_per_s, rates[0]);
        assert_eq!(
            (
                first.figures.pauses,
                first.figures.node_runs,
                first.figures.runs
            ),
            (3, 1, 1)
        );
        // 3 pauses in 10 s: 18 a minute; 53 ms stopped of 10 s.
        assert!((first.figures.per_minute - 18.0).abs() < 1e-9);
        assert!((first.figures.stopped_percent - 0.53).abs() < 1e-9);
        assert_eq!(first.figures.max_ms, Some(50.0));
        assert_eq!(first.figures.p99_ms, Some(50.0));
        let second = &found.rates[1].figures;
        // Two nodes for 10 s each: 1 pause in 20 node-seconds, 3 a minute per node.
        assert!((second.per_minute - 3.0).abs() < 1e-9);
        assert!((second.stopped_percent - 1.0).abs() < 1e-9);
        assert_eq!(second.longest_time_to_safepoint_ms, Some(120.0));
        let all = &found.overall;
        assert_eq!((all.runs, all.node_runs, all.pauses), (2, 3, 4));
        assert_eq!(all.max_ms, Some(200.0));
        assert!((all.node_seconds - 30.0).abs() < 1e-9);
        assert!((all.per_minute - 8.0).abs() < 1e-9);
        assert_eq!(all.longest_time_to_safepoint_ms, Some(120.0));

        let runs: Vec<&RunData> = search
            .trials
            .iter()
            .filter_map(|t| t.run.as_ref())
            .collect();
        assert_eq!(run_pauses(runs.iter().copied()), Some(all.clone()));
    }
}
