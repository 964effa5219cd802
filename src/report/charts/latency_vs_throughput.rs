//! Chart 2: whole-run latency percentiles against achieved throughput, per capacity
//! search and for the runs given (Mark Price's load-testing article).

use super::common::latency_series;
use super::model::{Axis, Chart, Kind, Style};
use crate::capacity::dir::SearchData;
use crate::results::run_dir::Percentiles;
use crate::results::run_dir::RunData;

/// Chart 2: each run's whole-run p50, p99, p99.9 and max (every operation type merged)
/// against its achieved throughput: one chart per capacity search (its trials), one for the
/// open-loop runs given and one for the closed-loop runs given, each when it has at least
/// two runs.
pub fn latency_vs_throughput(searches: &[SearchData], runs: &[RunData]) -> Vec<Chart> {
    let mut charts = Vec::new();
    let mut add =
        |label: &str, kind_of_latency: &str, points: Vec<(f64, Percentiles)>, repeated: bool| {
            if points.len() < 2 {
                return;
            }
            let mut chart = Chart::new(
                Kind::LatencyVsThroughput,
                format!("latency-vs-throughput-{label}"),
                format!("Latency against achieved throughput: {label}"),
                Axis::linear("achieved throughput (requests/s)"),
                Axis::log(format!("{kind_of_latency} (ms, log scale)")),
            );
            chart.series = latency_series(points);
            if repeated {
                // Repeats of one rate lie side by side: a line through them would zigzag.
                for series in &mut chart.series {
                    series.style = Style::Points;
                }
            }
            chart.caption = format!(
                "One point per run: the {kind_of_latency} of all its measured requests (every \
             operation type together) against the throughput it achieved. \
             Whole-run percentiles hide how bad single windows were; the SLA charts show those."
            );
            charts.push(chart);
        };
    for search in searches {
        let points = search
            .trials
            .iter()
            .filter_map(|t| Some((t.record.achieved_per_s, t.run.as_ref()?.whole?)))
            .collect();
        let repeated = search.trials.iter().any(|t| t.record.repeat > 1);
        add(&search.label, "response time", points, repeated);
    }
    let open: Vec<(f64, Percentiles)> = runs
        .iter()
        .filter(|r| r.is_open_loop())
        .filter_map(|r| Some((r.achieved_rate()?, r.whole?)))
        .collect();
    add("open-loop runs", "response time", open, false);
    let closed: Vec<(f64, Percentiles)> = runs
        .iter()
        .filter(|r| r.concurrency().is_some())
        .filter_map(|r| Some((r.achieved_rate()?, r.whole?)))
        .collect();
    add("closed-loop runs", "service time", closed, false);
    charts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::tests::{fixture_run, fixture_search};

    #[test]
    fn chart_2_plots_whole_run_percentiles_against_achieved_throughput() {
        let charts = latency_vs_throughput(&[fixture_search()], &[]);
        assert_eq!(charts.len(), 1);
        let chart = &charts[0];
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["p50", "p99", "p99.9", "max"]);
        let xs: Vec<f64> = chart.series[0].points.iter().map(|p| p.0.round()).collect();
        assert_eq!(xs, [2799.0, 4199.0, 4898.0, 5199.0, 5498.0, 10896.0]);
        // The failing trial's p99 from its log, the others' from summary.json.
        assert_eq!(chart.series[1].points[4].1, 71.434239);
        assert_eq!(chart.series[1].points[0].1, 1.029631);
        assert_eq!(chart.series[3].points[4].1, 122.683391);
        assert!(chart.series.iter().all(|s| s.style != Style::Points));
        // One run is no line.
        assert!(latency_vs_throughput(&[], &[fixture_run()]).is_empty());
        // Repeats of a rate are points, not a zigzag line.
        let mut repeated = fixture_search();
        let mut again = repeated.trials[0].clone();
        again.record.repeat = 2;
        repeated.trials.push(again);
        let charts = latency_vs_throughput(&[repeated], &[]);
        assert!(charts[0].series.iter().all(|s| s.style == Style::Points));
    }
}
