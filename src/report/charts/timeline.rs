//! Chart 4: a run's timeline, latency and throughput per interval, warmup shaded, failing
//! windows marked, client hiccups overlaid, errors per interval; and which trials of a
//! search get one.

use super::common::{latency_kind, latency_series, line_style, timeline_bands};
use super::labels::{term_words, threshold_ms};
use super::maintenance;
use super::model::{
    Axis, Chart, Color, Kind, Rule, Scale, Series, Style, ERROR_RED, HICCUP_GREY, SLA_RED,
    THROUGHPUT_BLUE,
};
use crate::capacity::dir::SearchData;
use crate::figures::{Figures, Timeline};
use crate::format::format_number;
use crate::format::format_rate;
use crate::results::run_dir::Percentiles;
use crate::results::run_dir::RunData;
use crate::sla::Metric;

/// The runs of a search worth a timeline: the trial at the capacity whose first SLA term was
/// worst, and the first failing trial above it; without a capacity, the lowest rate's first
/// trial (and the first failing trial, when it is another).
pub fn timeline_trials(search: &SearchData) -> Vec<usize> {
    let trials = &search.trials;
    // Higher is worse, but for a recall.
    let worst_value = |i: usize| {
        trials[i].record.terms.first().map_or(0.0, |t| {
            if t.unit == crate::capacity::RECALL_UNIT {
                -t.value
            } else {
                t.value
            }
        })
    };
    let mut picked = Vec::new();
    match search.summary.outcome.capacity_per_s {
        Some(capacity) => {
            let at_capacity = (0..trials.len())
                .filter(|&i| trials[i].record.rate_per_s == capacity && trials[i].run.is_some())
                .max_by(|&a, &b| worst_value(a).total_cmp(&worst_value(b)));
            picked.extend(at_capacity);
            let failing = (0..trials.len()).find(|&i| {
                trials[i].record.rate_per_s > capacity
                    && !trials[i].record.pass
                    && trials[i].run.is_some()
            });
            picked.extend(failing);
        }
        None => {
            picked.extend((0..trials.len()).find(|&i| trials[i].run.is_some()));
            let failing =
                (0..trials.len()).find(|&i| !trials[i].record.pass && trials[i].run.is_some());
            if let Some(f) = failing {
                if !picked.contains(&f) {
                    picked.push(f);
                }
            }
        }
    }
    picked
}

/// Chart 4: the timeline of one run, as two charts over the same time axis, drawn from its
/// figures (`figures`, read from the run's files).
///
/// Latency: p50, p99, p99.9 and max of each interval (every operation type merged, from
/// histograms.hlog), the client's largest hiccup per interval, the warmup shaded, failing
/// SLA windows shaded red, the SLA's latency thresholds (terms over every operation type).
///
/// Throughput: requests per second in each interval, the attempted rate, and failed requests
/// per interval on the right-hand axis.
pub fn timeline(run: &RunData, figures: &Timeline, title: &str) -> Vec<Chart> {
    let mut charts = Vec::new();
    let time_axis = || Axis::linear("time since the start of the run (s)");
    let kind_of_latency = latency_kind(run);
    let mut bands = timeline_bands(figures, "warmup (not judged)");
    bands.extend(maintenance::bands(run));

    if figures.intervals.iter().any(|i| i.latency.is_some()) {
        let mut chart = Chart::new(
            Kind::TimelineLatency,
            format!("timeline-latency-{}", run.label),
            format!("Latency per interval: {title}"),
            time_axis(),
            Axis::log(format!("{kind_of_latency} (ms, log scale)")),
        );
        let points: Vec<(f64, Percentiles)> = figures
            .intervals
            .iter()
            .filter_map(|i| Some((i.end_s, i.latency?.ms())))
            .collect();
        chart.series = latency_series(points);
        let hiccups: Vec<(f64, f64)> = figures
            .intervals
            .iter()
            .filter_map(|i| Some((i.end_s, i.hiccup?.ms().max_ms)))
            .filter(|p| p.1 > 0.0)
            .collect();
        if !hiccups.is_empty() {
            chart.series.push(Series {
                name: "client hiccup (max)".to_string(),
                color: HICCUP_GREY,
                style: Style::Dashed,
                points: hiccups,
                secondary: false,
                fit: false,
            });
        }
        if let Some(sla) = run.sla.clone() {
            for term in sla.terms.iter().filter(|t| t.op.is_none()) {
                if let (Some(ms), Metric::Percentile(_) | Metric::Max) =
                    (threshold_ms(term), term.metric)
                {
                    chart.hlines.push(Rule {
                        name: format!("SLA: {}", term_words(term)),
                        at: ms,
                        color: SLA_RED,
                    });
                }
            }
        }
        chart.bands = bands.clone();
        let mut caption = format!(
            "Each point is one interval (plotted at its end): the {kind_of_latency} \
             percentiles of every request that ended in it, all operation types together."
        );
        if chart.series_named("client hiccup (max)").is_some() {
            caption.push_str(
                " The grey dashed line is the client's own hiccup meter (how much later than \
                 asked the client's workers woke, at least once a millisecond): when it rises \
                 with the latencies, the client stalled, not the cluster.",
            );
        } else {
            caption.push_str(" The histogram log holds no client hiccups for this run.");
        }
        let failing = figures.failing().count();
        match (figures.windows.len(), failing) {
            (0, _) => {}
            (1, 0) => caption.push_str(
                " The SLA is judged per window after the warmup: the run's one window passed.",
            ),
            (n, 0) => caption.push_str(&format!(
                " The SLA is judged per window after the warmup: all {n} windows passed."
            )),
            (n, f) => caption.push_str(&format!(
                " The SLA is judged per window after the warmup: red spans mark the {f} of {n} \
                 windows that failed."
            )),
        }
        if run.sla.as_ref().is_some_and(|sla| sla.has_own_windows()) {
            caption.push_str(
                " Terms with a window of their own (@) are judged over windows of that length: \
                 the windows counted are those of every length, and a failing long window \
                 shades all of its span.",
            );
        }
        caption.extend(maintenance::caption(run));
        chart.caption = caption;
        charts.push(chart);
    }

    if figures.intervals.iter().any(|i| i.requests > 0) {
        let mut chart = Chart::new(
            Kind::TimelineThroughput,
            format!("timeline-throughput-{}", run.label),
            format!("Throughput and errors per interval: {title}"),
            time_axis(),
            Axis::linear("throughput (requests/s)"),
        );
        // Intervals after the schedule's end hold only late answers: a rate over them
        // means nothing.
        let per_interval: Vec<&Figures> = figures.scheduled().filter(|i| i.requests > 0).collect();
        let style = line_style(per_interval.len());
        chart.series.push(Series {
            name: "throughput".to_string(),
            color: THROUGHPUT_BLUE,
            style,
            points: per_interval
                .iter()
                .map(|i| (i.end_s, i.requests_per_s()))
                .collect(),
            secondary: false,
            fit: true,
        });
        let errors: u64 = per_interval.iter().map(|i| i.errors).sum();
        chart.y2 = Some(Axis {
            label: "failed requests per interval".to_string(),
            scale: Scale::Linear,
            from_zero: true,
            integer: true,
        });
        chart.series.push(Series {
            name: if errors == 0 {
                "errors (none)".to_string()
            } else {
                format!("errors ({} in all)", format_number(errors as f64))
            },
            color: ERROR_RED,
            style,
            points: per_interval
                .iter()
                .map(|i| (i.end_s, i.errors as f64))
                .collect(),
            secondary: true,
            fit: true,
        });
        if let Some(rate) = figures.attempted_per_s {
            chart.hlines.push(Rule {
                name: format!("attempted rate: {}/s", format_rate(rate)),
                at: rate,
                color: Color(60, 60, 60),
            });
        }
        chart.bands = bands;
        chart.caption = "Requests that ended in each interval, per second (left axis), and \
             those that failed (right axis, red). Under a fixed rate the blue line should sit on \
             the attempted rate; when it falls below, the cluster (or the client) did not keep \
             up and requests queued. Answers that arrived after the schedule ended are in the \
             latency chart, not here."
            .to_string();
        charts.push(chart);
    }
    charts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::tests::{fixture_run, fixture_search};

    #[test]
    fn chart_4_is_the_timeline_of_a_run() {
        let run = fixture_run();
        let figures = Timeline::load(&run);
        let charts = timeline(&run, &figures, "run");
        assert_eq!(charts.len(), 2);
        let latency = &charts[0];
        assert_eq!(latency.kind, Kind::TimelineLatency);
        assert_eq!(latency.series.len(), 5);
        let p99 = latency.series_named("p99").unwrap();
        let xs: Vec<f64> = p99.points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(
            p99.points[0].1,
            figures.intervals[0].latency.unwrap().ms().p99_ms
        );
        assert!(latency.caption.contains("the run's one window passed"));
        assert!(latency.caption.contains("hiccup meter"));
        let hiccups = latency.series_named("client hiccup (max)").unwrap();
        assert_eq!(hiccups.points.len(), 10);
        assert!(!hiccups.fit);
        assert_eq!(latency.bands.len(), 1);
        assert_eq!((latency.bands[0].from, latency.bands[0].to), (0.0, 5.0));
        let thresholds: Vec<(&str, f64)> = latency
            .hlines
            .iter()
            .map(|r| (r.name.as_str(), r.at))
            .collect();
        assert_eq!(
            thresholds,
            [("SLA: p99.9 < 100 ms", 100.0), ("SLA: max < 50 ms", 50.0)]
        );

        let throughput = &charts[1];
        assert_eq!(throughput.kind, Kind::TimelineThroughput);
        let rate = throughput.series_named("throughput").unwrap();
        assert_eq!(rate.points.len(), 10);
        assert!(rate.points.iter().all(|p| p.1 == 1000.0));
        let errors = throughput.series_named("errors (none)").unwrap();
        assert!(errors.secondary && errors.points.iter().all(|p| p.1 == 0.0));
        assert_eq!(throughput.hlines[0].at, 1000.0);
    }

    #[test]
    fn chart_4_marks_failing_windows_and_leaves_late_answers_out_of_the_rate() {
        let search = fixture_search();
        assert_eq!(timeline_trials(&search), [3, 4]);
        let failing = search.trials[4].run.as_ref().unwrap();
        let charts = timeline(failing, &Timeline::load(failing), "5 500/s");
        let bands: Vec<(&str, f64, f64)> = charts[0]
            .bands
            .iter()
            .map(|b| (b.name.as_str(), b.from, b.to))
            .collect();
        assert_eq!(
            bands,
            [
                ("warmup (not judged)", 0.0, 2.0),
                ("failing SLA window", 2.0, 7.0)
            ]
        );
        assert!(charts[0]
            .caption
            .contains("red spans mark the 1 of 1 windows that failed"));
        assert!(charts[0].caption.contains("no client hiccups"));
        // The interval from 7 s only collected two late answers: in the latency chart,
        // not in the rate.
        assert_eq!(charts[0].series[0].points.last().unwrap().0, 8.0);
        let rate = charts[1].series_named("throughput").unwrap();
        assert_eq!(rate.points.last().unwrap(), &(7.0, 5502.0));
        // Warmup and measured answers of the same interval add up.
        assert_eq!(rate.points[2], (3.0, 5500.0));
    }
}
