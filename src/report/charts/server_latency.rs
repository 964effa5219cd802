//! Cassandra's own latency read during a run (`--server-stats-every`) beside the client's:
//! the client's p99 per interval and, per node, the 99th percentile of the replica's write
//! and read latency of the table at each reading, on one time axis, with the run's warmup,
//! failing windows and maintenance spans shaded.

use super::common::{line_style, timeline_bands};
use super::{maintenance, palette, Axis, Chart, Kind, Series, Style, LATENCY_LINES};
use crate::figures::Timeline;
use crate::metrics::server_samples::FOLLOWED;
use crate::results::run_dir::RunData;

/// Where a reading of 0 (under half the 1 ms step) is drawn on the log scale.
const ZERO_AT_MS: f64 = 0.5;

/// The palette entries of the nodes' lines, as the pause chart's marks take them.
const NODE_COLORS: [usize; 8] = [1, 3, 5, 4, 6, 7, 8, 9];

/// The chart, in ms on a log scale; `None` for a run without readings or whose readings
/// never held a latency above zero.
pub fn server_latency(run: &RunData, figures: &Timeline, title: &str) -> Option<Chart> {
    let samples = &run.server_samples;
    if samples.is_empty() {
        return None;
    }
    let mut chart = Chart::new(
        Kind::ServerLatency,
        format!("server-latency-{}", run.label),
        format!("Client and Cassandra's own p99 during the run: {title}"),
        Axis::linear("time since the start of the run (s)"),
        Axis::log("ms (log scale)"),
    );
    let client: Vec<(f64, f64)> = figures
        .intervals
        .iter()
        .filter_map(|i| Some((i.end_s, i.latency?.ms().p99_ms)))
        .filter(|p| p.1 > 0.0)
        .collect();
    if !client.is_empty() {
        chart.series.push(Series {
            name: "client p99 (response time)".to_string(),
            color: LATENCY_LINES[1].1,
            style: line_style(client.len()),
            points: client,
            secondary: false,
            fit: true,
        });
    }
    let mut nodes: Vec<(&str, &str)> = Vec::new();
    for sample in samples {
        for node in &sample.nodes {
            if !nodes.iter().any(|(_, a)| *a == node.address) {
                nodes.push((&node.node, &node.address));
            }
        }
    }
    let mut lines = 0;
    for (i, (name, address)) in nodes.iter().enumerate() {
        for (k, (figure, what)) in FOLLOWED.iter().enumerate() {
            let points: Vec<(f64, f64)> = samples
                .iter()
                .filter_map(|s| {
                    let node = s.nodes.iter().find(|n| n.address == *address)?;
                    let ms = node.figure(figure)?.p99? / 1000.0;
                    match node.count(figure) {
                        // Nothing counted yet: nothing to draw.
                        Some(0) | None if ms == 0.0 => None,
                        // Counted, but under the 1 ms step: drawn half a step up.
                        _ if ms == 0.0 => Some((s.at_s, ZERO_AT_MS)),
                        _ => Some((s.at_s, ms)),
                    }
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            lines += 1;
            chart.series.push(Series {
                name: format!("{name} {what} p99 (server)"),
                color: palette(NODE_COLORS[(2 * i + k) % NODE_COLORS.len()]),
                style: if k == 0 {
                    Style::LineWithPoints
                } else {
                    Style::Dashed
                },
                points,
                secondary: false,
                fit: true,
            });
        }
    }
    if lines == 0 {
        return None;
    }
    chart.bands = timeline_bands(figures, "warmup");
    chart.bands.extend(maintenance::bands(run));
    let every = run
        .server_tables
        .as_ref()
        .and_then(|f| f.samples_every_s)
        .map_or(String::new(), |s| format!(" every {s} s"));
    let mut caption = format!(
        "The blue line is the client's p99 response time per interval (plotted at its end), \
         every operation type together. The others are what each node reported for the \
         table, read over CQL{every} (--server-stats-every): the 99th percentile of the \
         replica's own write (solid) and read (dashed) latency, plotted when read. The \
         server's percentiles come from a decaying reservoir (half-life 60 s), so a spike \
         shows in the next readings and fades slowly, and they step by 1 ms: a reading of 0, \
         under half a millisecond, is drawn at 0.5 ms. A client line \
         far above the server's means the time went elsewhere: the network, the \
         coordinator, queues, or waiting in the client."
    );
    if let Some(more) = maintenance::caption(run) {
        caption.push_str(&more);
    }
    chart.caption = caption;
    Some(chart)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::server_samples::ServerSample;
    use crate::metrics::server_tables::{Figure, NodeTables, Unit};
    use crate::report::charts::tests::fixture_run;

    fn figure(name: &str, p99_us: f64) -> Figure {
        Figure {
            name: name.into(),
            source: format!("system_views.{name}"),
            unit: Some(Unit::Micros),
            // A node that never served the kind of request reads 0 with a count of 0.
            count: Some(if p99_us == 0.0 { 0 } else { 10 }),
            p99: Some(p99_us),
            ..Figure::default()
        }
    }

    fn sample(at_s: f64, nodes: &[(&str, f64, f64)]) -> ServerSample {
        ServerSample {
            at_s,
            taken_at: String::new(),
            nodes: nodes
                .iter()
                .map(|&(name, write, read)| NodeTables {
                    node: name.into(),
                    address: format!("{name}:9042"),
                    figures: vec![
                        figure("local_write_latency", write),
                        figure("local_read_latency", read),
                    ],
                })
                .collect(),
            notes: vec![],
        }
    }

    #[test]
    fn each_nodes_write_and_read_p99_lie_beside_the_clients() {
        let mut run = fixture_run();
        let figures = Timeline::load(&run);
        assert!(
            server_latency(&run, &figures, "run").is_none(),
            "no readings"
        );
        run.server_samples = vec![
            sample(2.0, &[("node1", 1000.0, 0.0), ("node2", 2000.0, 0.0)]),
            sample(4.0, &[("node1", 21000.0, 3000.0), ("node2", 1000.0, 0.0)]),
        ];
        let chart = server_latency(&run, &figures, "run").unwrap();
        assert_eq!(chart.kind, Kind::ServerLatency);
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "client p99 (response time)",
                "node1 write p99 (server)",
                "node1 read p99 (server)",
                "node2 write p99 (server)"
            ],
            "node2 never read: no read line"
        );
        // µs become ms; a zero reading (nothing counted yet) is left off the log scale.
        assert_eq!(chart.series[1].points, [(2.0, 1.0), (4.0, 21.0)]);
        assert_eq!(chart.series[2].points, [(4.0, 3.0)]);
        assert_eq!(chart.series[2].style, Style::Dashed);
        assert_eq!(
            chart.series[0].points.len(),
            figures
                .intervals
                .iter()
                .filter(|i| i.latency.is_some())
                .count()
        );
        let colors: Vec<_> = chart.series.iter().map(|s| s.color).collect();
        for (i, c) in colors.iter().enumerate() {
            assert!(!colors[i + 1..].contains(c), "distinct colours: {colors:?}");
        }
        let svg = super::super::draw::svg(&chart).unwrap();
        assert!(svg.contains("node1 write p99 (server)"));

        // A reading of 0 with requests counted is under the step: drawn at half of it.
        let mut counted = sample(6.0, &[("node1", 0.0, 0.0)]);
        counted.nodes[0].figures[0].count = Some(30);
        run.server_samples.push(counted);
        let chart = server_latency(&run, &figures, "run").unwrap();
        assert_eq!(
            chart.series[1].points,
            [(2.0, 1.0), (4.0, 21.0), (6.0, ZERO_AT_MS)]
        );
        assert_eq!(chart.series[2].points, [(4.0, 3.0)]);

        // Readings with only zeros and nothing counted draw nothing.
        run.server_samples = vec![sample(2.0, &[("node1", 0.0, 0.0)])];
        assert!(server_latency(&run, &figures, "run").is_none());
    }
}
