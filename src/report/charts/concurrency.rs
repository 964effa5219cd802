//! Chart 5: throughput and latency against concurrency, for closed-loop runs (Mark Price's
//! load-testing article).

use super::common::latency_series;
use super::model::{Axis, Chart, Kind, Series, Style, THROUGHPUT_BLUE};
use crate::results::run_dir::Percentiles;
use crate::results::run_dir::RunData;

/// Chart 5: for the closed-loop runs given, when at least two concurrencies were run, the
/// achieved throughput against the concurrency, and the whole-run service-time percentiles
/// against the concurrency.
pub fn concurrency(runs: &[RunData]) -> Vec<Chart> {
    let mut points: Vec<(f64, f64, Option<Percentiles>)> = runs
        .iter()
        .filter_map(|r| Some((r.concurrency()? as f64, r.achieved_rate()?, r.whole)))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
    distinct.dedup();
    if distinct.len() < 2 {
        return Vec::new();
    }
    let wide = distinct[distinct.len() - 1] / distinct[0] >= 10.0;
    let x_axis = || {
        if wide {
            Axis::log("requests in flight (concurrency, log scale)")
        } else {
            Axis::linear("requests in flight (concurrency)")
        }
    };
    let mut throughput = Chart::new(
        Kind::ConcurrencyThroughput,
        "throughput-vs-concurrency".to_string(),
        "Throughput against concurrency (closed loop)".to_string(),
        x_axis(),
        Axis::linear("achieved throughput (requests/s)"),
    );
    throughput.series.push(Series {
        name: "throughput".to_string(),
        color: THROUGHPUT_BLUE,
        style: Style::LineWithPoints,
        points: points.iter().map(|p| (p.0, p.1)).collect(),
        secondary: false,
        fit: true,
    });
    throughput.caption = "Each point is one closed-loop run: more requests in flight raise the \
         throughput until the cluster (or the client) saturates and the line flattens. Past \
         that point more concurrency only adds queueing."
        .to_string();
    let mut latency = Chart::new(
        Kind::ConcurrencyLatency,
        "latency-vs-concurrency".to_string(),
        "Service time against concurrency (closed loop)".to_string(),
        x_axis(),
        Axis::log("service time (ms, log scale)"),
    );
    latency.series = latency_series(points.iter().filter_map(|p| Some((p.0, p.2?))).collect());
    latency.caption = "Whole-run service-time percentiles of each closed-loop run. A closed \
         loop waits for answers before sending more, so these latencies under-count stalls \
         (coordinated omission): use fixed-rate runs to judge an SLA."
        .to_string();
    vec![throughput, latency]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::latency_vs_throughput;
    use crate::report::charts::tests::closed_loop_runs;
    use crate::report::charts::Scale;

    #[test]
    fn chart_5_needs_several_closed_loop_concurrencies() {
        let runs = closed_loop_runs(&[(64, 30_000.0), (8, 9_000.0), (256, 41_000.0)]);
        let charts = concurrency(&runs);
        assert_eq!(charts.len(), 2);
        assert_eq!(
            charts[0].series[0].points,
            [(8.0, 9_000.0), (64.0, 30_000.0), (256.0, 41_000.0)]
        );
        // 8 to 256 spans more than ten times: a log axis.
        assert_eq!(charts[0].x.scale, Scale::Log);
        assert_eq!(charts[1].series.len(), 4);
        assert_eq!(charts[1].y.label, "service time (ms, log scale)");
        assert!(concurrency(&runs[..1]).is_empty());
        // And chart 2 for them, as service time.
        let charts = latency_vs_throughput(&[], &runs);
        assert_eq!(charts.len(), 1);
        assert_eq!(charts[0].y.label, "service time (ms, log scale)");
    }
}
