//! The nodetool operations of a run (`--during`, maintenance.json) on its timeline: one
//! shaded span per operation and node, from its start to its end, named after the
//! operation, one colour per operation.

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
    }
}

/// The spans of every operation that started, in the order they ran.
pub fn bands(run: &RunData) -> Vec<Band> {
    run.maintenance.as_ref().map_or_else(Vec::new, bands_of)
}

fn bands_of(file: &MaintenanceFile) -> Vec<Band> {
    file.operations
        .iter()
        .filter_map(|r| {
            Some(Band {
                name: format!("nodetool {}", r.operation),
                from: r.start_s?,
                to: r.end_s?,
                color: color(r.operation),
            })
        })
        .collect()
}

/// The caption's sentence on the spans, when there are any.
pub fn caption(run: &RunData) -> Option<String> {
    let file = run.maintenance.as_ref()?;
    let started = file
        .operations
        .iter()
        .filter(|r| r.start_s.is_some())
        .count();
    (started > 0).then(|| {
        format!(
            " Coloured spans mark the {started} nodetool operations run during the load \
             (--during), each from its start to its end on one node (the table below gives \
             the nodes and wall times)."
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
