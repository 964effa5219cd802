//! The operations of a run (`--during`, maintenance.json) on its timeline: one shaded span
//! per nodetool operation and node, from its start to its end, named after the operation,
//! one colour per operation; and one per fault, from the moment a node was killed, drained or
//! stopped until it answered again (its restart or cont), or the end of the load.

use super::{Band, Color};
use crate::maintenance::{MaintenanceFile, Operation};
use crate::results::run_dir::RunData;

/// The colour of an operation's spans: none red (the SLA's) or grey (the warmup's).
pub fn color(operation: Operation) -> Color {
    match operation {
        Operation::Compact => Color(148, 103, 189),
        Operation::Repair => Color(44, 160, 44),
        Operation::GarbageCollect => Color(255, 127, 14),
        Operation::Flush => Color(23, 190, 207),
        Operation::Cleanup => Color(140, 86, 75),
        Operation::Drain => Color(106, 61, 154),
        Operation::Kill | Operation::Restart => Color(31, 119, 180),
        Operation::Stop | Operation::Cont => Color(227, 119, 194),
    }
}

/// The spans of every operation that started, in the order they ran.
pub fn bands(run: &RunData) -> Vec<Band> {
    run.maintenance.as_ref().map_or_else(Vec::new, bands_of)
}

fn bands_of(file: &MaintenanceFile) -> Vec<Band> {
    let mut bands = Vec::new();
    // Per node: the fault that took it down (or froze it) and when, until a restart (or
    // cont) ends it.
    let mut open: Vec<(&str, Operation, f64)> = Vec::new();
    let fault_band = |node: &str, operation: Operation, from: f64, to: f64| {
        let state = if operation == Operation::Stop {
            "frozen"
        } else {
            "down"
        };
        Band {
            name: format!("{node} {state} ({operation})"),
            from,
            to,
            color: color(operation),
        }
    };
    for r in &file.operations {
        let Some(from) = r.start_s else { continue };
        match r.operation {
            Operation::Kill | Operation::Drain | Operation::Stop => {
                if !open.iter().any(|(node, ..)| *node == r.node) {
                    open.push((&r.node, r.operation, from));
                }
            }
            Operation::Restart | Operation::Cont => {
                let ends = open.iter().position(|(node, fault, _)| {
                    *node == r.node
                        && (r.operation == Operation::Restart || *fault == Operation::Stop)
                });
                match (ends, r.end_s) {
                    (Some(at), Some(to)) => {
                        let (node, fault, start) = open.remove(at);
                        bands.push(fault_band(node, fault, start, to));
                    }
                    (None, Some(to)) => bands.push(Band {
                        name: format!("{} {}", r.operation.describe(), r.node),
                        from,
                        to,
                        color: color(r.operation),
                    }),
                    _ => {}
                }
            }
            _ => {
                if let Some(to) = r.end_s {
                    bands.push(Band {
                        name: r.operation.describe(),
                        from,
                        to,
                        color: color(r.operation),
                    });
                }
            }
        }
    }
    // Still down when the load ended.
    for (node, fault, start) in open {
        let to = file.load_end_s.unwrap_or(start).max(start);
        bands.push(fault_band(node, fault, start, to));
    }
    bands.sort_by(|a, b| a.from.total_cmp(&b.from));
    bands
}

/// The caption's sentence on the spans, when there are any.
pub fn caption(run: &RunData) -> Option<String> {
    let file = run.maintenance.as_ref()?;
    let started = file.operations.iter().filter(|r| r.start_s.is_some());
    let (faults, nodetool): (Vec<_>, Vec<_>) = started.partition(|r| r.operation.is_fault());
    let mut parts = Vec::new();
    if !nodetool.is_empty() {
        parts.push(format!(
            "the {} nodetool operations run during the load (--during), each from its start \
             to its end on one node",
            nodetool.len()
        ));
    }
    if !faults.is_empty() {
        parts.push(format!(
            "the {} faults (--during), each node from the moment it was killed, drained or \
             stopped until its restart or cont ended",
            faults.len()
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            " Coloured spans mark {} (the table below gives the nodes and wall times).",
            parts.join("; and ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maintenance::{OperationRecord, Status};

    fn record(operation: Operation, start: Option<f64>, end: Option<f64>) -> OperationRecord {
        OperationRecord {
            operation,
            node: "node1".into(),
            planned_s: 3.0,
            start_s: start,
            end_s: end,
            wall_s: None,
            status: Status::Ok,
            exit_code: Some(0),
            output_tail: String::new(),
        }
    }

    #[test]
    fn a_fault_spans_from_the_node_going_down_until_it_answers_again() {
        let on = |node: &str, mut r: OperationRecord| {
            r.node = node.into();
            r
        };
        let file = MaintenanceFile {
            run_start: "2026-11-22T10:00:00Z".into(),
            keyspace: "headroom".into(),
            load_end_s: Some(90.0),
            operations: vec![
                on("node3", record(Operation::Kill, Some(20.0), Some(20.1))),
                on("node2", record(Operation::Stop, Some(25.0), Some(25.0))),
                on("node3", record(Operation::Restart, Some(35.0), Some(58.0))),
                on("node2", record(Operation::Cont, Some(60.0), Some(60.0))),
                on("node1", record(Operation::Drain, Some(70.0), Some(71.0))),
                on("node2", record(Operation::Restart, Some(80.0), Some(85.0))),
            ],
        };
        let spans: Vec<(String, f64, f64)> = bands_of(&file)
            .into_iter()
            .map(|b| (b.name, b.from, b.to))
            .collect();
        assert_eq!(
            spans,
            vec![
                ("node3 down (kill)".to_string(), 20.0, 58.0),
                ("node2 frozen (stop)".to_string(), 25.0, 60.0),
                // Never restarted: down until the end of the load.
                ("node1 down (drain)".to_string(), 70.0, 90.0),
                // A restart that ends no fault is a span of its own.
                ("restart node2".to_string(), 80.0, 85.0),
            ]
        );
    }

    #[test]
    fn one_band_per_started_operation_from_start_to_end() {
        let file = MaintenanceFile {
            run_start: "2026-11-22T10:00:00Z".into(),
            keyspace: "headroom".into(),
            load_end_s: Some(25.0),
            operations: vec![
                record(Operation::Flush, Some(3.0), Some(4.5)),
                record(Operation::Compact, Some(8.0), Some(11.0)),
                record(Operation::GarbageCollect, None, None),
            ],
        };
        let bands = bands_of(&file);
        let spans: Vec<(&str, f64, f64)> = bands
            .iter()
            .map(|b| (b.name.as_str(), b.from, b.to))
            .collect();
        assert_eq!(
            spans,
            vec![
                ("nodetool flush", 3.0, 4.5),
                ("nodetool compact", 8.0, 11.0)
            ]
        );
        assert_ne!(bands[0].color, bands[1].color);
    }
}
