//! Chart 7, after figure 5 of Azul's HotSpot and Zing study ("GC stopped time and cassandra-stress
//! response times"): the client's latency per interval and every node's stop-the-world pauses over
//! the same time axis, so that a latency spike can be laid beside the pause that caused it.

use super::common::{line_style, timeline_bands};
use super::{palette, Axis, Chart, Kind, Series, Style, LATENCY_LINES};
use crate::figures::Timeline;
use crate::results::run_dir::RunData;

/// The palette entries a node's marks take, in node order: not the blue of the p99 line
/// (entry 0) nor the purple close to the max line's (entry 2).
const NODE_COLORS: [usize; 8] = [1, 3, 5, 4, 6, 7, 8, 9];

/// The legend name of a node's marks.
pub fn node_series_name(node: &str, collector: Option<&str>, count: u64) -> String {
    let what = match count {
        0 => "no pauses".to_string(),
        1 => "1 pause".to_string(),
        n => format!("{n} pauses"),
    };
    match collector {
        Some(gc) => format!("{node} ({gc}): {what}"),
        None => format!("{node}: {what}"),
    }
}

/// The client's p99 and max per interval and each node's pauses as marks at the moment they
/// began, as high as they lasted; ms on a log scale. `None` for a run without pauses.json
/// or whose pauses.json holds no node.
pub fn pause_timeline(run: &RunData, figures: &Timeline, title: &str) -> Option<Chart> {
    let pauses = run.pauses.as_ref()?;
    if pauses.nodes.is_empty() {
        return None;
    }
    let mut chart = Chart::new(
        Kind::ServerPauses,
        format!("server-pauses-{}", run.label),
        format!("Client latency and server pauses: {title}"),
        Axis::linear("time since the start of the run (s)"),
        Axis::log("ms (log scale)"),
    );
    let latency: Vec<(f64, f64, f64)> = figures
        .intervals
        .iter()
        .filter_map(|i| {
            let l = i.latency?.ms();
            Some((i.end_s, l.p99_ms, l.max_ms))
        })
        .collect();
    let style = line_style(latency.len());
    for (name, color, pick) in [
        ("client p99", LATENCY_LINES[1].1, 0),
        ("client max", LATENCY_LINES[3].1, 1),
    ] {
        if latency.is_empty() {
            break;
        }
        chart.series.push(Series {
            name: name.to_string(),
            color,
            style,
            points: latency
                .iter()
                .map(|&(t, p99, max)| (t, if pick == 0 { p99 } else { max }))
                .filter(|p| p.1 > 0.0)
                .collect(),
            secondary: false,
            fit: true,
        });
    }
    for (i, node) in pauses.nodes.iter().enumerate() {
        chart.series.push(Series {
            name: node_series_name(&node.node, node.collector.as_deref(), node.count),
            color: palette(NODE_COLORS[i % NODE_COLORS.len()]),
            style: Style::Points,
            points: node
                .events
                .iter()
                .map(|p| (p.offset_s, p.length_ms))
                .filter(|p| p.1 > 0.0)
                .collect(),
            secondary: false,
            fit: true,
        });
    }
    chart.bands = timeline_bands(figures, "warmup (no pauses read)");
    let mut caption = String::from(
        "The lines are the client's latency per interval (plotted at its end), every \
         operation type together. Each mark is one stop-the-world pause of a node's JVM, \
         placed where it began and as high as the application was stopped (the safepoint's \
         total, time to reach it included), from the node's GC log. A mark as high as a \
         latency spike at the same moment explains it: the requests on that node waited out \
         the pause. A spike with no mark under it came from elsewhere (compaction, the \
         network, the client).",
    );
    if run.warmup_s > 0.0 {
        caption.push_str(" Pauses are read for the measured part only, not the warmup.");
    }
    chart.caption = caption;
    Some(chart)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fixtures::{node, pause, pauses_of};
    use crate::report::charts::tests::fixture_run;

    #[test]
    fn chart_7_lays_each_nodes_pauses_beside_the_client_latency() {
        let mut run = fixture_run();
        let figures = Timeline::load(&run);
        assert!(
            pause_timeline(&run, &figures, "run").is_none(),
            "no pauses.json"
        );
        run.pauses = Some(pauses_of(vec![
            node(
                "node1",
                vec![
                    pause(1.25, 34.8, "Pause Young (Normal) (G1 Evacuation Pause)"),
                    pause(3.5, 0.12, "Cleanup"),
                ],
            ),
            node("node2", vec![pause(2.0, 281.4, "Cleanup")]),
        ]));
        let chart = pause_timeline(&run, &figures, "run").unwrap();
        assert_eq!(chart.kind, Kind::ServerPauses);
        assert_eq!(chart.title, "Client latency and server pauses: run");
        assert_eq!(chart.y.scale, super::super::Scale::Log);
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "client p99",
                "client max",
                "node1 (g1): 2 pauses",
                "node2 (g1): 1 pause"
            ]
        );
        // The client lines: one point per interval of histograms.hlog, at its end.
        let p99 = chart.series_named("client p99").unwrap();
        let max = chart.series_named("client max").unwrap();
        assert_eq!(p99.points.len(), figures.intervals.len());
        let first = &figures.intervals[0];
        let latency = first.latency.unwrap().ms();
        assert_eq!(p99.points[0], (first.end_s, latency.p99_ms));
        assert_eq!(max.points[0].1, latency.max_ms);
        // The marks: where each pause began, as high as it lasted.
        let node1 = &chart.series[2];
        assert_eq!(node1.style, Style::Points);
        assert_eq!(node1.points, [(1.25, 34.8), (3.5, 0.12)]);
        assert_eq!(chart.series[3].points, [(2.0, 281.4)]);
        assert_ne!(node1.color, chart.series[3].color);
        assert!(chart
            .series
            .iter()
            .skip(2)
            .all(|s| s.color != p99.color && s.color != max.color));
        // It draws.
        let svg = super::super::draw::svg(&chart).unwrap();
        assert!(svg.contains("node2 (g1): 1 pause"), "{svg}");

        // A node without pauses keeps its legend entry; a file without nodes is no chart.
        run.pauses = Some(pauses_of(vec![node("node1", vec![])]));
        let chart = pause_timeline(&run, &figures, "run").unwrap();
        assert_eq!(chart.series[2].name, "node1 (g1): no pauses");
        assert!(chart.series[2].points.is_empty());
        super::super::draw::svg(&chart).unwrap();
        run.pauses = Some(pauses_of(vec![]));
        assert!(pause_timeline(&run, &figures, "run").is_none());
    }
}
