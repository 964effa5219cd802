//! Chart 6: a `headroom sweep` directory's throughput against concurrency and its
//! p50/p99/p99.9 against throughput (the two charts of Mark Price's load-testing article).

use super::model::{
    Axis, Chart, Kind, Rule, Series, Style, LATENCY_LINES, THROUGHPUT_BLUE, WARMUP_GREY,
};
use crate::format::format_rate;
use crate::sweep::dir::SweepData;

/// Chart 6: a sweep's two charts, from its complete steps (stable, not stable or of fixed
/// length) that had answers: the throughput against the concurrency, and the service-time
/// p50, p99 and p99.9 against the throughput, one point per step joined in the order the
/// steps ran (so that a throughput that falls back shows as the line turning back). Nothing
/// when fewer than two steps are complete.
pub fn sweep(sweep: &SweepData) -> Vec<Chart> {
    let steps: Vec<&crate::sweep::StepRecord> = sweep
        .file
        .complete_steps()
        .filter(|s| s.requests > s.errors)
        .collect();
    if steps.len() < 2 {
        return Vec::new();
    }
    let (first, last) = (steps[0].concurrency, steps[steps.len() - 1].concurrency);
    let x = if last as f64 / first as f64 >= 10.0 {
        Axis::log("requests in flight (concurrency, log scale)")
    } else {
        Axis::linear("requests in flight (concurrency)")
    };
    let mut throughput = Chart::new(
        Kind::ConcurrencyThroughput,
        format!("sweep-throughput-vs-concurrency-{}", sweep.label),
        format!("Throughput against concurrency: {}", sweep.label),
        x,
        Axis::linear("achieved throughput (requests/s)"),
    );
    throughput.series.push(Series {
        name: "throughput".to_string(),
        color: THROUGHPUT_BLUE,
        style: Style::LineWithPoints,
        points: steps
            .iter()
            .map(|s| (s.concurrency as f64, s.achieved_per_s))
            .collect(),
        secondary: false,
        fit: true,
    });
    let best = steps
        .iter()
        .max_by(|a, b| a.achieved_per_s.total_cmp(&b.achieved_per_s))
        .expect("two steps or more");
    throughput.hlines.push(Rule {
        name: format!(
            "highest: {}/s at {}",
            format_rate(best.achieved_per_s),
            best.concurrency
        ),
        at: best.achieved_per_s,
        color: WARMUP_GREY,
    });
    throughput.caption = format!(
        "One point per step of the sweep: more requests in flight raise the throughput until \
         the cluster (or the client) saturates and the line flattens; past that point more \
         concurrency only adds queueing. The highest throughput, {}/s, came with {} requests \
         in flight.",
        format_rate(best.achieved_per_s),
        best.concurrency
    );
    let mut latency = Chart::new(
        Kind::LatencyVsThroughput,
        format!("sweep-latency-vs-throughput-{}", sweep.label),
        format!("Latency against throughput: {}", sweep.label),
        Axis::linear("achieved throughput (requests/s)"),
        Axis::log("service time (ms, log scale)"),
    );
    for (name, color) in LATENCY_LINES.iter().take(3) {
        latency.series.push(Series {
            name: name.to_string(),
            color: *color,
            style: Style::LineWithPoints,
            points: steps
                .iter()
                .map(|s| {
                    let l = &s.service_time;
                    let value = match *name {
                        "p50" => l.p50_ms,
                        "p99" => l.p99_ms,
                        _ => l.p999_ms,
                    };
                    (s.achieved_per_s, value)
                })
                .collect(),
            secondary: false,
            fit: true,
        });
    }
    latency.caption = "Each step's service-time percentiles (every operation type together) \
         against the throughput it achieved, joined in the order of the steps. As the \
         throughput nears its ceiling, the tail (p99, p99.9) climbs first. A closed loop \
         waits for answers before sending more, so these latencies under-count stalls \
         (coordinated omission): judge an SLA with a fixed-rate capacity search."
        .to_string();
    vec![throughput, latency]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::Scale;

    #[test]
    fn chart_6_shows_a_sweeps_two_charts_from_its_records() {
        let sweep = SweepData::load(&crate::fixtures::sweep_fixture()).unwrap();
        let charts = super::sweep(&sweep);
        assert_eq!(charts.len(), 2);
        let (throughput, latency) = (&charts[0], &charts[1]);
        assert_eq!(throughput.kind, Kind::ConcurrencyThroughput);
        let steps = &sweep.file.steps;
        let expected: Vec<(f64, f64)> = steps
            .iter()
            .map(|s| (s.concurrency as f64, s.achieved_per_s))
            .collect();
        assert_eq!(throughput.series[0].points, expected);
        // The highest throughput is marked.
        let best = steps.iter().map(|s| s.achieved_per_s).fold(0.0, f64::max);
        assert_eq!(throughput.hlines[0].at, best);
        // 2 to 7 is less than ten times: a linear axis.
        assert_eq!(throughput.x.scale, Scale::Linear);

        assert_eq!(latency.kind, Kind::LatencyVsThroughput);
        let names: Vec<&str> = latency.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["p50", "p99", "p99.9"]);
        assert_eq!(latency.y.label, "service time (ms, log scale)");
        // In the order of the steps, not sorted by throughput.
        let p999: Vec<(f64, f64)> = steps
            .iter()
            .map(|s| (s.achieved_per_s, s.service_time.p999_ms))
            .collect();
        assert_eq!(latency.series_named("p99.9").unwrap().points, p999);

        // Failed and interrupted steps are left out; one step alone makes no chart.
        let mut cut = sweep.clone();
        cut.file.steps[1].end = crate::sweep::StepEnd::Failed;
        cut.file.steps[2].end = crate::sweep::StepEnd::Interrupted;
        assert_eq!(super::sweep(&cut)[0].series[0].points.len(), 2);
        cut.file.steps[3].end = crate::sweep::StepEnd::Failed;
        assert!(super::sweep(&cut).is_empty());
    }
}
