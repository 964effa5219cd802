//! Runs side by side (WitFoo's Cassandra 4.0 tests compare two Cassandra versions by one long run
//! each): the client's response times per operation type, and the change of the p99 and the
//! per-window throughput against a baseline run, tested as for capacity searches. Written as
//! compare.json by `headroom compare RUN RUN...`.

use serde::{Deserialize, Serialize};

use super::comparison::{latency_change, throughput_change, Change};
use super::samples::run_windows;
use crate::results::run_dir::RunData;
use crate::results::summary::Latency;
use crate::stats::difference::{Bootstrap, DEFAULT_LEVEL};

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
    /// Cassandra's own latency percentiles of the run's table after each run, in µs (the
    /// tablehistograms table of WitFoo's Cassandra 4.0 tests): one row per figure and percentile, a value per run.
    pub server: Vec<Row>,
    /// Wall time of each maintenance operation (`--during`), in s: one row per operation, node and
    /// occurrence, a value per run (WitFoo's Cassandra 4.0 tests: repair/compact/garbagecollect
    /// tables).
    pub maintenance: Vec<Row>,
    /// What the reader should know.
    pub notes: Vec<String>,
}

/// A named row with a value per run (`None`: the run has none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// What the row shows, e.g. `Read Latency 99P (node1)`.
    pub name: String,
    /// One per run, in the order of [`RunComparison::runs`].
    pub values: Vec<Option<f64>>,
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
    /// What `--validate` found in its data; a defect marks the run whatever its figures.
    /// Absent when it did not validate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<crate::validation::DataCheck>,
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
                data: summary
                    .and_then(|s| s.validation.as_ref())
                    .map(|v| v.brief()),
            }
        })
        .collect();
    Ok(RunComparison {
        baseline: runs[base_index].label.clone(),
        level: DEFAULT_LEVEL,
        runs: figures,
        ops,
        server: server_rows(runs),
        maintenance: maintenance_rows(runs),
        notes,
    })
}

/// The table of WitFoo's Cassandra 4.0 tests: Read and Write Latency 50P..99P of the table, as each
/// node reported it after the run (nodetool's figures where the run read them, else CQL's).
fn server_rows(runs: &[RunData]) -> Vec<Row> {
    let mut nodes: Vec<String> = Vec::new();
    for run in runs {
        for node in run
            .server_tables
            .iter()
            .filter_map(|f| f.after.as_ref())
            .flat_map(|a| a.nodes.iter())
        {
            if !nodes.contains(&node.node) {
                nodes.push(node.node.clone());
            }
        }
    }
    let several = nodes.len() > 1;
    let mut rows = Vec::new();
    for node in &nodes {
        for (figure, title) in [
            ("local_read_latency", "Read Latency"),
            ("local_write_latency", "Write Latency"),
        ] {
            for (i, p) in ["50P", "75P", "95P", "98P", "99P"].iter().enumerate() {
                let values: Vec<Option<f64>> = runs
                    .iter()
                    .map(|run| {
                        let after = run.server_tables.as_ref()?.after.as_ref()?;
                        let tables = after.nodes.iter().find(|n| &n.node == node)?;
                        tables.figure(figure)?.percentiles()[i]
                    })
                    .collect();
                if values.iter().any(Option::is_some) {
                    rows.push(Row {
                        name: if several {
                            format!("{title} {p} ({node})")
                        } else {
                            format!("{title} {p}")
                        },
                        values,
                    });
                }
            }
        }
    }
    rows
}

/// Wall times of the maintenance operations, matched across runs by operation, node and
/// occurrence (the second compact on node1 against the second compact on node1).
fn maintenance_rows(runs: &[RunData]) -> Vec<Row> {
    let keyed = |run: &RunData| -> Vec<(String, Option<f64>)> {
        let mut seen: Vec<String> = Vec::new();
        run.maintenance
            .iter()
            .flat_map(|m| m.operations.iter())
            .map(|op| {
                let base = format!("{} ({})", op.operation.describe(), op.node);
                let n = seen.iter().filter(|k| **k == base).count();
                seen.push(base.clone());
                let key = if n == 0 {
                    base
                } else {
                    format!("{base} #{}", n + 1)
                };
                (key, op.wall_s)
            })
            .collect()
    };
    let per_run: Vec<Vec<(String, Option<f64>)>> = runs.iter().map(keyed).collect();
    let mut names: Vec<String> = Vec::new();
    for ops in &per_run {
        for (key, _) in ops {
            if !names.contains(key) {
                names.push(key.clone());
            }
        }
    }
    names
        .into_iter()
        .map(|name| Row {
            values: per_run
                .iter()
                .map(|ops| ops.iter().find(|(k, _)| *k == name).and_then(|(_, v)| *v))
                .collect(),
            name,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::render;
    use crate::fixtures::run_fixture;
    use crate::report::export::html::tests::copy_dir;

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

        // Neither run read the server's figures nor ran maintenance: no such tables.
        assert!(c.server.is_empty() && c.maintenance.is_empty());
        assert!(!text.contains("Cassandra's own latency"));

        let e = compare_runs(&runs, Some("other")).unwrap_err().to_string();
        assert!(e.contains("'other' is none of the runs: run, again"), "{e}");
        assert!(compare_runs(&runs[..1], None).is_err());
    }

    /// The tables of WitFoo's Cassandra 4.0 tests: the server's percentiles after each run and the
    /// maintenance wall times, matched by operation, node and occurrence.
    #[test]
    fn server_histograms_and_maintenance_times_side_by_side() {
        let figure = |p99: f64| {
            serde_json::json!({
                "name": "local_read_latency", "source": "nodetool tablehistograms",
                "unit": "micros", "count": null, "per_second": null,
                "p50": 2816.16, "p75": 4055.27, "p95": 8409.01, "p98": 17436.92, "p99": p99,
                "min": 1.0, "max": 20000.0
            })
        };
        let tables = |p99: f64| {
            serde_json::from_value(serde_json::json!({
                "keyspace": "ks", "table": "documents", "before": null, "notes": [],
                "after": {"taken_at": "2026-11-22T10:00:00Z", "nodes": [
                    {"node": "node1", "address": "127.0.0.1:9042", "figures": [figure(p99)]}
                ]}
            }))
            .unwrap()
        };
        let op = |name: &str, wall: f64| {
            serde_json::json!({
                "operation": name, "node": "node1", "planned_s": 10.0, "start_s": 10.0,
                "end_s": 10.0 + wall, "wall_s": wall, "status": "ok", "exit_code": 0,
                "output_tail": ""
            })
        };
        let maintenance = |ops: Vec<serde_json::Value>| {
            serde_json::from_value(serde_json::json!({
                "run_start": "2026-11-22T10:00:00Z", "keyspace": "ks", "load_end_s": 60.0,
                "operations": ops
            }))
            .unwrap()
        };
        let mut c3 = RunData::load(&run_fixture(), "c3".into());
        let mut c4 = c3.clone();
        c4.label = "c4".into();
        c3.server_tables = Some(tables(17436.92));
        c4.server_tables = Some(tables(5839.59));
        c3.maintenance = Some(maintenance(vec![
            op("repair", 32.0),
            op("compact", 28.0),
            op("compact", 61.0),
        ]));
        c4.maintenance = Some(maintenance(vec![op("repair", 8.0), op("compact", 15.0)]));
        let c = compare_runs(&[c3, c4], None).unwrap();
        let p99 = c
            .server
            .iter()
            .find(|r| r.name == "Read Latency 99P")
            .unwrap();
        assert_eq!(p99.values, [Some(17436.92), Some(5839.59)]);
        // Write latency was not read: no rows for it.
        assert!(c.server.iter().all(|r| r.name.starts_with("Read")));
        let names: Vec<&str> = c.maintenance.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "nodetool repair (node1)",
                "nodetool compact (node1)",
                "nodetool compact (node1) #2"
            ]
        );
        assert_eq!(c.maintenance[1].values, [Some(28.0), Some(15.0)]);
        assert_eq!(c.maintenance[2].values, [Some(61.0), None]);
        let text = render::run_text(&c);
        assert!(text.contains("Read Latency 99P"), "{text}");
        assert!(text.contains("17 437") && text.contains("5 840"), "{text}");
        assert!(
            text.contains("Maintenance operations during each run"),
            "{text}"
        );
    }
}
