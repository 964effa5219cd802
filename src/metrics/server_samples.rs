//! Cassandra's own figures read again and again while the load runs (`run
//! --server-stats-every 10s`), so the server's view can be laid over the client's on the
//! run's time axis: one line of `server-samples.jsonl` per reading ([`ServerSample`]),
//! appended as it is taken, so nothing is lost when a run ends badly.
//!
//! Each reading asks every node's `system_views` over CQL (the figures server-tables.json
//! holds before and after, [`super::server_tables`]); never nodetool, whose JVM would take
//! seconds of the client machine's CPU every few seconds and disturb the measurement. Two
//! things to keep in mind when reading the samples:
//!
//! - the latency percentiles are Cassandra's decaying reservoirs (forward decay, half-life
//!   60 s): a spike shows in the next readings and fades over a minute or two, and the
//!   values step by 1000 µs;
//! - the counts are exact and cumulative, so the difference between two readings over their
//!   time apart is the rate at which the node served the table's requests.
//!
//! This module reads server-samples.jsonl back and sums it up. The [`Sampler`] that writes
//! it, with the line type [`ServerSample`], lives with the reader it calls in
//! `server_tables` and is re-exported here: the dependency runs one way, from this module
//! to `server_tables`.

use std::path::Path;

use serde::Serialize;

pub use super::server_tables::{Sampler, SamplingEnd, ServerSample, MIN_EVERY};

use crate::catalogue::SERVER_SAMPLES_JSONL;

/// The samples of a run directory; none when it has no server-samples.jsonl. A line that
/// does not parse (a run killed mid-write) ends the list, and is said in `notes`.
pub fn read_samples(dir: &Path, notes: &mut Vec<String>) -> Vec<ServerSample> {
    let path = dir.join(SERVER_SAMPLES_JSONL);
    let Ok(text) = crate::usage::read_bounded_text(&path, crate::usage::MAX_DATA_FILE_BYTES) else {
        return Vec::new();
    };
    let mut samples = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match serde_json::from_str(line) {
            Ok(s) => samples.push(s),
            Err(e) => {
                notes.push(format!(
                    "{SERVER_SAMPLES_JSONL} line {}: {e}; the readings after it are left out",
                    i + 1
                ));
                break;
            }
        }
    }
    samples
}

/// The two latency figures a summary follows per node, with their labels.
pub const FOLLOWED: [(&str, &str); 2] = [
    ("local_write_latency", "write"),
    ("local_read_latency", "read"),
];

/// One node's readings of one latency figure over a span of the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureOverRun {
    /// The node's name and address, as in server-tables.json.
    pub node: String,
    /// Its CQL endpoint.
    pub address: String,
    /// `write` or `read` (the replica's own latency of the table).
    pub what: String,
    /// Readings that had the figure.
    pub readings: usize,
    /// The 99th percentile: smallest, median and largest reading, µs.
    pub p99_us: [f64; 3],
    /// Requests the node counted per second between the first and last reading.
    pub per_second: Option<f64>,
}

/// Per node and figure of [`FOLLOWED`], what the readings from `from_s` on showed; figures
/// the node never counted a request of are left out.
pub fn summarize(samples: &[ServerSample], from_s: f64) -> Vec<FigureOverRun> {
    let in_span: Vec<&ServerSample> = samples.iter().filter(|s| s.at_s >= from_s).collect();
    let mut nodes: Vec<(&str, &str)> = Vec::new();
    for sample in &in_span {
        for node in &sample.nodes {
            if !nodes.iter().any(|(_, a)| *a == node.address) {
                nodes.push((&node.node, &node.address));
            }
        }
    }
    let mut out = Vec::new();
    for (name, address) in nodes {
        for (figure, what) in FOLLOWED {
            // (at_s, p99, count) of every reading of this node that has the figure.
            let points: Vec<(f64, Option<f64>, Option<u64>)> = in_span
                .iter()
                .filter_map(|s| {
                    let node = s.nodes.iter().find(|n| n.address == address)?;
                    let f = node.figure(figure)?;
                    Some((s.at_s, f.p99, node.count(figure)))
                })
                .collect();
            let counted: Vec<(f64, u64)> = points
                .iter()
                .filter_map(|&(t, _, c)| Some((t, c?)))
                .collect();
            let per_second = match (counted.first(), counted.last()) {
                (Some(&(t0, c0)), Some(&(t1, c1))) if t1 > t0 => {
                    Some(c1.saturating_sub(c0) as f64 / (t1 - t0))
                }
                _ => None,
            };
            if counted.last().is_some_and(|&(_, c)| c == 0) {
                continue;
            }
            let mut p99: Vec<f64> = points.iter().filter_map(|p| p.1).collect();
            if p99.is_empty() {
                continue;
            }
            p99.sort_by(f64::total_cmp);
            out.push(FigureOverRun {
                node: name.to_string(),
                address: address.to_string(),
                what: what.to_string(),
                readings: p99.len(),
                p99_us: [p99[0], p99[p99.len() / 2], p99[p99.len() - 1]],
                per_second,
            });
        }
    }
    out
}

/// The summary's lines on the readings.
pub fn describe(samples: &[ServerSample], from_s: f64) -> Vec<String> {
    let rows = summarize(samples, from_s);
    let mut lines = Vec::new();
    for r in &rows {
        let rate = r
            .per_second
            .map(|v| format!("; {v:.0} {}s/s as the node counted them", r.what))
            .unwrap_or_default();
        // The readings step by 1000 µs: whole ms say what they know.
        let ms = r.p99_us.map(|us| us / 1000.0);
        lines.push(format!(
            "{} ({}) {} 99P over {} readings, to the ms: min {:.0}, median {:.0}, max {:.0} \
             ms{rate}",
            r.node, r.address, r.what, r.readings, ms[0], ms[1], ms[2]
        ));
    }
    let failed: usize = samples.iter().filter(|s| !s.notes.is_empty()).count();
    if failed > 0 {
        let first = samples
            .iter()
            .find_map(|s| s.notes.first())
            .cloned()
            .unwrap_or_default();
        lines.push(format!(
            "note: {failed} of {} readings were incomplete, e.g. {first}",
            samples.len()
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::server_tables::{Figure, NodeTables, Unit};

    fn latency(name: &str, count: u64, p99: f64) -> Figure {
        Figure {
            name: name.into(),
            source: format!("system_views.{name}"),
            unit: Some(Unit::Micros),
            count: Some(count),
            p50: Some(1000.0),
            p99: Some(p99),
            max: Some(p99 * 2.0),
            resolution: Some(1000.0),
            ..Figure::default()
        }
    }

    fn sample(at_s: f64, writes: u64, write_p99: f64) -> ServerSample {
        ServerSample {
            at_s,
            taken_at: String::new(),
            nodes: vec![NodeTables {
                node: "node1".into(),
                address: "127.0.0.7:9042".into(),
                figures: vec![
                    latency("local_write_latency", writes, write_p99),
                    latency("local_read_latency", 0, 0.0),
                ],
            }],
            notes: vec![],
        }
    }

    #[test]
    fn readings_give_the_range_of_p99_and_the_rate_the_node_counted() {
        let samples = vec![
            sample(5.0, 500, 9000.0),
            sample(10.0, 1000, 1000.0),
            sample(20.0, 3000, 21000.0),
            sample(30.0, 5000, 2000.0),
        ];
        // From 10 s on (the warmup's end): three readings, 4000 writes in 20 s.
        let rows = summarize(&samples, 10.0);
        assert_eq!(rows.len(), 1, "the never-read table is left out: {rows:?}");
        let w = &rows[0];
        assert_eq!((w.what.as_str(), w.readings), ("write", 3));
        assert_eq!(w.p99_us, [1000.0, 2000.0, 21000.0]);
        assert_eq!(w.per_second, Some(200.0));
        let lines = describe(&samples, 10.0);
        assert_eq!(
            lines,
            [
                "node1 (127.0.0.7:9042) write 99P over 3 readings, to the ms: min 1, median 2, \
                 max 21 ms; 200 writes/s as the node counted them"
            ]
        );
        // One reading: no rate.
        assert_eq!(summarize(&samples, 30.0)[0].per_second, None);
        assert!(summarize(&samples, 31.0).is_empty());
    }

    #[test]
    fn a_torn_last_line_ends_the_samples_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for s in [sample(1.0, 1, 1000.0), sample(2.0, 2, 1000.0)] {
            text.push_str(&serde_json::to_string(&s).unwrap());
            text.push('\n');
        }
        text.push_str("{\"at_s\": 3.0, \"tak");
        std::fs::write(dir.path().join(SERVER_SAMPLES_JSONL), text).unwrap();
        let mut notes = Vec::new();
        let samples = read_samples(dir.path(), &mut notes);
        assert_eq!(samples.len(), 2);
        assert_eq!(samples[1], sample(2.0, 2, 1000.0));
        assert!(notes[0].contains("line 3"), "{notes:?}");
        // No file: no samples, no note.
        let mut notes = Vec::new();
        assert!(read_samples(&dir.path().join("none"), &mut notes).is_empty());
        assert!(notes.is_empty());
    }
}
