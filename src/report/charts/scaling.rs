//! Capacity against nodes (planning): each repeat's capacity at each cluster size, the
//! Universal Scalability Law fitted to them with its interval, the linear rule for
//! contrast and the target load; one chart per group of configurations that differ in size
//! ([`crate::compare::scaling`]). docs/planning.md says how to read it.

use super::model::{palette, Axis, Chart, Kind, Rule, Series, Style, SLA_RED};
use crate::compare::scaling::Scaling;
use crate::compare::Comparison;
use crate::format::format_rate;
use crate::stats::usl::Analysis;

/// The charts of `comparison`'s scaling fits.
pub fn capacity_vs_nodes(comparison: &Comparison) -> Vec<Chart> {
    comparison
        .scaling
        .iter()
        .enumerate()
        .map(|(i, s)| chart(i, s))
        .collect()
}

fn chart(index: usize, s: &Scaling) -> Chart {
    let mut chart = Chart::new(
        Kind::CapacityVsNodes,
        format!("capacity-vs-nodes-{}", index + 1),
        format!("Capacity against nodes: {}", s.group),
        Axis {
            integer: true,
            ..Axis::linear("nodes")
        },
        Axis::linear("capacity (requests/s)"),
    );
    let measured = palette(0);
    let model = palette(1);
    chart.series.push(Series {
        name: "each repeat's capacity".to_string(),
        color: measured,
        style: Style::Points,
        points: s
            .observations
            .iter()
            .filter_map(|o| Some((f64::from(o.nodes), o.capacity_per_s?)))
            .collect(),
        secondary: false,
        fit: true,
    });
    if !s.curve.is_empty() {
        chart.series.push(Series {
            name: "USL fit".to_string(),
            color: model,
            style: Style::Line,
            points: s
                .curve
                .iter()
                .map(|p| (f64::from(p.nodes), p.capacity_per_s))
                .collect(),
            secondary: false,
            fit: true,
        });
        // The interval's outline: up along its lower end, back along its upper end.
        let mut band: Vec<(f64, f64)> = s
            .curve
            .iter()
            .map(|p| (f64::from(p.nodes), p.low_per_s))
            .collect();
        band.extend(
            s.curve
                .iter()
                .rev()
                .map(|p| (f64::from(p.nodes), p.high_per_s)),
        );
        chart.series.push(Series {
            name: "the fit's interval".to_string(),
            color: model,
            style: Style::Dashed,
            points: band,
            secondary: false,
            fit: true,
        });
    }
    if let Analysis::Fitted(fit) = &s.analysis {
        let until = s.curve.last().map_or(fit.measured_nodes[1], |p| p.nodes);
        chart.series.push(Series {
            name: format!(
                "linear rule ({}/s per node)",
                format_rate(fit.per_node_capacity_per_s)
            ),
            color: palette(8),
            style: Style::Dashed,
            points: (1..=until)
                .map(|n| (f64::from(n), f64::from(n) * fit.per_node_capacity_per_s))
                .collect(),
            secondary: false,
            fit: false,
        });
    }
    if let Some(sizing) = &s.sizing {
        chart.hlines.push(Rule {
            name: format!("target load {}/s", format_rate(sizing.load_per_s)),
            at: sizing.load_per_s,
            color: SLA_RED,
        });
    }
    chart.caption = format!(
        "Each dot is one repeat's capacity at that cluster size; the solid line is the \
         Universal Scalability Law fitted to them, the dashed outline its interval, and the \
         grey dashed line the linear rule (capacity in proportion to nodes) the cost table \
         uses. {}",
        s.statements.join(" ")
    );
    chart
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::scaling::{CurvePoint, Scaling};
    use crate::stats::usl::{Observation, Statement};

    #[test]
    fn repeats_curve_band_and_linear_rule() {
        let observations = vec![
            Observation {
                nodes: 1,
                capacity_per_s: Some(1000.0),
                label: "1".into(),
            },
            Observation {
                nodes: 2,
                capacity_per_s: None,
                label: "2".into(),
            },
        ];
        let s = Scaling {
            group: "local".into(),
            observations,
            analysis: Analysis::NoModel {
                statements: vec![Statement::TooFewSizes {
                    nodes: vec![1],
                    per_node_capacity_per_s: Some(1000.0),
                }],
            },
            curve: vec![
                CurvePoint {
                    nodes: 1,
                    capacity_per_s: 1000.0,
                    low_per_s: 900.0,
                    high_per_s: 1100.0,
                    measured: true,
                },
                CurvePoint {
                    nodes: 2,
                    capacity_per_s: 1800.0,
                    low_per_s: 1700.0,
                    high_per_s: 1900.0,
                    measured: false,
                },
            ],
            sizing: None,
            one_machine: true,
            statements: vec!["two sizes cannot fit three parameters".into()],
        };
        let c = chart(0, &s);
        assert_eq!(
            c.series_named("each repeat's capacity").unwrap().points,
            [(1.0, 1000.0)]
        );
        assert_eq!(c.series_named("USL fit").unwrap().points.len(), 2);
        assert_eq!(
            c.series_named("the fit's interval").unwrap().points,
            [(1.0, 900.0), (2.0, 1700.0), (2.0, 1900.0), (1.0, 1100.0)]
        );
        assert!(c.caption.contains("two sizes cannot fit three parameters"));
    }
}
