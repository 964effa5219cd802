//! The terminal's summary of server-tables.json: per node, each percentile of read and
//! write latency before → after, and the requests the node counted in between.
//!
//! Apart from the model and the readers because it only formats: it reads a
//! [`ServerTablesFile`] and nothing else.

use super::model::ServerTablesFile;

/// The rows of the terminal's table, per node: each percentile of read and write latency,
/// before → after, in µs, and the requests the node counted in between.
pub fn describe(file: &ServerTablesFile) -> Vec<String> {
    let mut lines = Vec::new();
    let after_nodes = file.after.as_ref().map_or(&[][..], |s| &s.nodes[..]);
    for after in after_nodes {
        let before = file
            .before
            .as_ref()
            .and_then(|s| s.nodes.iter().find(|n| n.address == after.address));
        lines.push(format!(
            "{} ({}), µs          before → after",
            after.node, after.address
        ));
        for (name, label) in [
            ("local_read_latency", "Read Latency"),
            ("local_write_latency", "Write Latency"),
        ] {
            let Some(now) = after.figure(name) else {
                continue;
            };
            // A node that never served this kind of request has only zeros to show.
            if after.count(name) == Some(0) {
                continue;
            }
            let earlier = before.and_then(|b| b.figure(name));
            for (i, p) in ["50P", "75P", "95P", "98P", "99P"].iter().enumerate() {
                let Some(value) = now.percentiles()[i] else {
                    continue;
                };
                let was = earlier
                    .and_then(|f| f.percentiles()[i])
                    .map_or("-".to_string(), |v| format!("{v:.2}"));
                lines.push(format!("  {label} {p:<4} {was:>12} → {value:.2}"));
            }
            if let Some(count) = after.count(name) {
                let grew = before
                    .and_then(|b| b.count(name))
                    .map(|c| format!(" (+{})", count.saturating_sub(c)))
                    .unwrap_or_default();
                lines.push(format!("  {label} count {count}{grew}"));
            }
        }
    }
    for note in &file.notes {
        lines.push(format!("note: {note}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::super::model::{Figure, NodeTables, Snapshot};
    use super::*;

    #[test]
    fn the_summary_shows_before_and_after_and_the_counted_writes() {
        let node = |count: u64, p50: f64| NodeTables {
            node: "node1".into(),
            address: "127.0.0.5:9042".into(),
            figures: vec![
                Figure {
                    name: "local_write_latency".into(),
                    source: "system_views.local_write_latency".into(),
                    count: Some(count),
                    p50: Some(p50),
                    p99: Some(p50 * 4.0),
                    ..Figure::default()
                },
                Figure {
                    name: "local_write_latency".into(),
                    source: "nodetool tablehistograms".into(),
                    p50: Some(p50),
                    p75: Some(p50 * 2.0),
                    p95: Some(p50 * 3.0),
                    p98: Some(p50 * 3.5),
                    p99: Some(p50 * 4.0),
                    ..Figure::default()
                },
            ],
        };
        let file = ServerTablesFile {
            keyspace: "ks".into(),
            table: "t".into(),
            before: Some(Snapshot {
                taken_at: String::new(),
                nodes: vec![node(100, 10.0)],
            }),
            after: Some(Snapshot {
                taken_at: String::new(),
                nodes: vec![node(1100, 12.0)],
            }),
            notes: vec!["node1: nodetool proxyhistograms failed".into()],
            samples_every_s: None,
            samples: 0,
        };
        let lines = describe(&file).join("\n");
        assert!(
            lines.contains("Write Latency 75P         20.00 → 24.00"),
            "{lines}"
        );
        assert!(
            lines.contains("Write Latency count 1100 (+1000)"),
            "{lines}"
        );
        assert!(lines.contains("note: node1: nodetool proxyhistograms failed"));
        assert!(!lines.contains("Read Latency"), "{lines}");
        let mut idle = file.clone();
        for snapshot in [&mut idle.before, &mut idle.after].into_iter().flatten() {
            for figure in &mut snapshot.nodes[0].figures {
                figure.count = figure.count.map(|_| 0);
            }
        }
        assert!(!describe(&idle).join("\n").contains("Write Latency"));
    }
}
