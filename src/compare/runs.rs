//! Runs side by side (seed 004 compares two Cassandra versions by one long run each): the
//! client's response times per operation type, and the change of the p99 and the per-window
//! throughput against a baseline run, tested as for capacity searches. Written as
//! compare.json by `headroom compare RUN RUN...`.

use serde::{Deserialize, Serialize};

use super::comparison::{latency_change, throughput_change, Change};
use super::samples::run_windows;
use super::stats::{Bootstrap, DEFAULT_LEVEL};
use crate::report::load::RunData;
use crate::report::summary::Latency;

/// The percentile whose change between runs is tested.
pub const RUN_PERCENTILE: f64 = 99.0;

/// A comparison of runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunComparison {
    /// The baseline run's label.
    pub baseline: String,
    /// The significance level of every test.
    pub level: f64,
    /// One per run, in the order given.
    pub runs: Vec<RunFigures>,
    /// Every operation type of any run, in order of first appearance.
    pub ops: Vec<String>,
    /// What the reader should know.
    pub notes: Vec<String>,
}

/// One run's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFigures {
    /// Its name (the directory's).
    pub label: String,
    /// Its directory.
    pub dir: String,
    /// The workload's name.
    pub workload: Option<String>,
    /// Requests per second the schedule asked for (open loop).
    pub attempted_per_s: Option<f64>,
    /// Requests per second achieved in the measured part.
    pub achieved_per_s: Option<f64>,
    /// Measured seconds.
    pub measured_s: Option<f64>,
    /// Response times per operation type, in the order of [`RunComparison::ops`]; `None`
    /// where the run has no such operation.
    pub latency: Vec<Option<Latency>>,
    /// Requests per operation type, same order.
    pub requests: Vec<Option<u64>>,
    /// The p99 of every operation type merged against the baseline's (bootstrap).
    pub p99_change: Option<Change>,
    /// Per-window throughput against the baseline's (Welch's test).
    pub throughput_change: Option<Change>,
}

/// Compares runs, the first (or `baseline`) as the baseline.
pub fn compare_runs(runs: &[RunData], baseline: Option<&str>) -> anyhow::Result<RunComparison> {
    anyhow::ensure!(
        runs.len() >= 2,
        "a comparison needs at least two runs, got {}",
        runs.len()
    );
    let base_index = match baseline {
        None => 0,
        Some(label) => runs.iter().position(|r| r.label == label).ok_or_else(|| {
            let labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
            anyhow::anyhow!(
                "--baseline '{label}' is none of the runs: {}",
                labels.join(", ")
            )
        })?,
    };
    let mut notes = Vec::new();
    let mut ops: Vec<String> = Vec::new();
    for run in runs {
        if run.summary.is_none() {
            notes.push(format!(
                "{}: summary.json is missing; its run did not finish.",
                run.label
            ));
        }
        for op in run.summary.iter().flat_map(|s| s.ops.iter()) {
            if !ops.contains(&op.op) {
                ops.push(op.op.clone());
            }
        }
    }
    let workloads: Vec<Option<String>> = runs.iter().map(|r| r.workload()).collect();
    if workloads.iter().any(|w| w != &workloads[base_index]) {
        notes.push("The runs ran different workloads; their figures are not comparable.".into());
    }
    let windows: Vec<_> = runs.iter().map(run_windows).collect();
    for w in &windows {
        notes.extend(w.notes.iter().cloned());
    }
    let bootstrap = Bootstrap::default();
    let figures = runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let summary = run.summary.as_ref();
            let find = |op: &str| summary.and_then(|s| s.ops.iter().find(|o| o.op == op));
            let other = i != base_index;
            RunFigures {
                label: run.label.clone(),
                dir: run.dir.display().to_string(),
                workload: run.workload(),
                attempted_per_s: run.attempted_rate(),
                achieved_per_s: run.achieved_rate(),
                measured_s: summary.map(|s| s.measured_s),
                latency: ops
                    .iter()
                    .map(|op| {
                        find(op)
                            .filter(|o| o.ok > 0)
                            .map(|o| o.response_time.clone())
                    })
                    .collect(),
                requests: ops.iter().map(|op| find(op).map(|o| o.requests)).collect(),
                p99_change: other.then(|| {
                    latency_change(
                        &windows[base_index],
                        &windows[i],
                        RUN_PERCENTILE,
                        &bootstrap,
                    )
                }),
                throughput_change: other
                    .then(|| throughput_change(&windows[base_index], &windows[i], DEFAULT_LEVEL)),
            }
        })
        .collect();
    Ok(RunComparison {
        baseline: runs[base_index].label.clone(),
        level: DEFAULT_LEVEL,
        runs: figures,
        ops,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::render;
    use crate::report::export::html::tests::copy_dir;
    use crate::report::load::tests::run_fixture;

    #[test]
    fn a_run_against_its_own_copy_differs_by_noise_only() {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("again");
        copy_dir(&run_fixture(), &copy);
        let runs = vec![
            RunData::load(&run_fixture(), "run".into()),
            RunData::load(&copy, "again".into()),
        ];
        let c = compare_runs(&runs, None).unwrap();
        assert_eq!(c.baseline, "run");
        assert!(!c.ops.is_empty());
        let again = &c.runs[1];
        assert_eq!(again.latency, c.runs[0].latency);
        let p99 = again.p99_change.as_ref().unwrap();
        assert_eq!(p99.verdict, "noise", "{p99:?}");
        assert_eq!(p99.percent, Some(0.0));
        assert_eq!(again.throughput_change.as_ref().unwrap().verdict, "noise");
        assert!(c.runs[0].p99_change.is_none());

        let text = render::run_text(&c);
        assert!(text.contains("run (baseline)"), "{text}");
        let first = &c.ops[0];
        assert!(text.contains(&format!("{first} p99.9")), "{text}");

        let e = compare_runs(&runs, Some("other")).unwrap_err().to_string();
        assert!(e.contains("'other' is none of the runs: run, again"), "{e}");
        assert!(compare_runs(&runs[..1], None).is_err());
    }
}
