//! The live page's charts: the current run's intervals as the report's chart models
//! ([`Chart`]), in its colours, drawn by its SVG code, so that the page reads as the report
//! that follows it. Every chart shares the report's time axis (seconds since the run's
//! start, the warmup shaded grey, failing SLA windows red):
//! 1. the attempted and the achieved rate;
//! 2. per op type, p50/p99/p99.9/max of the latency with the SLA's thresholds;
//! 3. failed requests per second, by class;
//! 4. the backlog and the requests in flight, and the send lag (p99, max);
//! 5. the client's CPU and its hiccups.
//!
//! They draw the figures ([`crate::figures::Figures`]) of the points the [`Snapshot`] holds,
//! at most [`super::MAX_DRAWN`] of them: nothing is computed here.

use std::collections::BTreeSet;

use super::Snapshot;
use crate::format::format_rate;
use crate::live::state::{Point, QUANTILES};
use crate::report::charts::{
    palette, slug, Axis, Band, Chart, Color, Kind, Rule, Scale, Series, Style, ERROR_RED,
    HICCUP_GREY, LATENCY_LINES, SLA_RED, THROUGHPUT_BLUE, WARMUP_GREY,
};
use crate::sla::{Metric, Threshold};

// The latency lines are the state's quantiles, in the same order.
const _: () = assert!(QUANTILES.len() == LATENCY_LINES.len());

/// Dots mark the points of short lines only, as in the report.
const MAX_DOTTED_POINTS: usize = 120;

/// The attempted rate's line, and the backlog's.
const DARK_GREY: Color = Color(60, 60, 60);

/// The requests in flight.
const LIGHT_GREY: Color = Color(150, 150, 150);

/// The charts of the current run, in page order; none before its first interval.
pub fn charts(s: &Snapshot) -> Vec<Chart> {
    if s.history.is_empty() {
        return Vec::new();
    }
    let bands = bands(s);
    let mut charts = vec![rate(s)];
    charts.extend(latency(s));
    charts.push(errors(s));
    charts.push(backlog(s));
    charts.push(client(s));
    for chart in &mut charts {
        chart.bands = bands.clone();
        // The report keeps room on the right of a latency timeline for the axis of the
        // chart below it; every chart without a right-hand axis takes that kind, so that
        // the time axes of the page line up one above the other.
        chart.kind = if chart.y2.is_some() {
            Kind::TimelineThroughput
        } else {
            Kind::TimelineLatency
        };
    }
    charts
}

/// A chart over the run's time.
fn timeline(id: &str, title: String, y: Axis) -> Chart {
    Chart {
        kind: Kind::TimelineLatency,
        id: format!("live-{id}"),
        title,
        caption: String::new(),
        x: linear("time since the start of the run (s)"),
        y,
        y2: None,
        series: Vec::new(),
        bands: Vec::new(),
        hlines: Vec::new(),
        vlines: Vec::new(),
    }
}

fn linear(label: &str) -> Axis {
    Axis {
        label: label.to_string(),
        scale: Scale::Linear,
        from_zero: true,
        integer: false,
    }
}

fn counts(label: &str) -> Axis {
    Axis {
        integer: true,
        ..linear(label)
    }
}

/// A line through `(time, value)` of every point that has a value.
fn line(
    s: &Snapshot,
    name: &str,
    color: Color,
    style: Option<Style>,
    value: impl Fn(&Point) -> Option<f64>,
) -> Series {
    let points: Vec<(f64, f64)> = s
        .history
        .iter()
        .filter_map(|p| Some((p.figures.end_s, value(p)?)))
        .collect();
    let style = style.unwrap_or(if points.len() <= MAX_DOTTED_POINTS {
        Style::LineWithPoints
    } else {
        Style::Line
    });
    Series {
        name: name.to_string(),
        color,
        style,
        points,
        secondary: false,
        fit: true,
    }
}

/// The warmup, and the failing SLA windows (adjacent ones as one span).
fn bands(s: &Snapshot) -> Vec<Band> {
    let mut bands = Vec::new();
    let warmup_s = s.run.as_ref().map_or(0.0, |r| r.warmup_s);
    if warmup_s > 0.0 {
        bands.push(Band {
            name: "warmup (not judged)".to_string(),
            from: 0.0,
            to: warmup_s,
            color: WARMUP_GREY,
        });
    }
    let mut failing: Vec<(f64, f64)> = s
        .marks
        .iter()
        .filter(|m| !m.pass)
        .map(|m| (m.start_s, m.start_s + m.length_s))
        .collect();
    failing.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut spans: Vec<(f64, f64)> = Vec::new();
    for (from, to) in failing {
        match spans.last_mut() {
            Some(last) if from <= last.1 + 1e-6 => last.1 = last.1.max(to),
            _ => spans.push((from, to)),
        }
    }
    bands.extend(spans.into_iter().map(|(from, to)| Band {
        name: "failing SLA window".to_string(),
        from,
        to,
        color: SLA_RED,
    }));
    bands
}

/// 1: the attempted and the achieved rate.
fn rate(s: &Snapshot) -> Chart {
    let mut chart = timeline(
        "rate",
        format!("Attempted and achieved rate: {}", s.title),
        linear("requests/s"),
    );
    chart
        .series
        .push(line(s, "achieved", THROUGHPUT_BLUE, None, |p| {
            Some(p.figures.achieved_per_s())
        }));
    if let Some(rate) = s.run.as_ref().and_then(|r| r.rate_per_s) {
        chart.hlines.push(Rule {
            name: format!("attempted rate: {}/s", format_rate(rate)),
            at: rate,
            color: DARK_GREY,
        });
    }
    chart.caption = "Successful answers in each interval, per second (a failed request carries no \
         load: the errors are below), against the rate the schedule attempts. Under a fixed rate \
         the blue line should sit on the attempted rate; when it falls below, the cluster (or \
         the client) did not keep up and requests queue: see the backlog below."
        .to_string();
    chart
}

/// 2: per op type, the latency percentiles of each interval, with the SLA's thresholds
/// that judge that op type.
fn latency(s: &Snapshot) -> Vec<Chart> {
    let open = s.open_loop();
    let kind = if open {
        "response time"
    } else {
        "service time"
    };
    let mut ops: Vec<String> = s.run.as_ref().map(|r| r.ops.clone()).unwrap_or_default();
    for p in &s.history {
        for op in &p.figures.ops {
            if !ops.contains(&op.op) {
                ops.push(op.op.clone());
            }
        }
    }
    let sla = s.run.as_ref().and_then(|r| r.sla.as_ref());
    let mut charts = Vec::new();
    for op in ops {
        let quantiles = |p: &Point| {
            let o = p.figures.ops.iter().find(|o| o.op == op)?;
            let q = if open { o.response } else { o.service };
            Some(q?.seconds())
        };
        if !s.history.iter().any(|p| quantiles(p).is_some()) {
            continue;
        }
        let mut chart = timeline(
            &format!("latency-{}", slug(&op)),
            format!("Latency per interval: {op}, {}", s.title),
            Axis {
                label: format!("{kind} (ms, log scale)"),
                scale: Scale::Log,
                from_zero: false,
                integer: false,
            },
        );
        for (i, (name, color)) in LATENCY_LINES.iter().enumerate() {
            chart.series.push(line(s, name, *color, None, |p| {
                Some(quantiles(p)?[i] * 1e3)
            }));
        }
        for term in sla.iter().flat_map(|sla| &sla.terms) {
            let judges_op = term.op.as_ref().is_none_or(|o| *o == op);
            let latency = matches!(term.metric, Metric::Percentile(_) | Metric::Max);
            if let (true, true, Threshold::LatencyNs(ns)) = (judges_op, latency, term.threshold) {
                chart.hlines.push(Rule {
                    name: format!("SLA: {term}"),
                    at: ns as f64 / 1e6,
                    color: SLA_RED,
                });
            }
        }
        chart.caption = format!(
            "Each point is one interval (plotted at its end): the {kind} percentiles of the {op} \
             requests answered in it, warmup included. The red dashed lines are the SLA's \
             latency thresholds that judge {op}; the SLA is judged over whole windows after \
             the warmup, not per interval, so a point above a line fails no window by itself."
        );
        charts.push(chart);
    }
    charts
}

/// 3: failed requests per second, by class.
fn errors(s: &Snapshot) -> Chart {
    let mut chart = timeline(
        "errors",
        format!("Errors per interval, by class: {}", s.title),
        linear("failed requests/s"),
    );
    let classes: BTreeSet<&String> = s
        .history
        .iter()
        .flat_map(|p| p.figures.errors_by_class.iter().flat_map(|c| c.keys()))
        .collect();
    // A class's share of the interval's failures, at the interval's rate of failures.
    let per_s = |p: &Point, class: &str| {
        let by_class = p.figures.errors_by_class.as_ref();
        let failed: u64 = by_class.map_or(0, |c| c.values().sum());
        let n = by_class.and_then(|c| c.get(class)).copied().unwrap_or(0);
        if failed == 0 {
            0.0
        } else {
            p.figures.errors_per_s() * n as f64 / failed as f64
        }
    };
    if classes.is_empty() {
        chart
            .series
            .push(line(s, "errors (none)", ERROR_RED, None, |_| Some(0.0)));
    }
    for (i, class) in classes.iter().enumerate() {
        let color = if classes.len() == 1 {
            ERROR_RED
        } else {
            palette(i)
        };
        chart
            .series
            .push(line(s, class, color, None, |p| Some(per_s(p, class))));
    }
    chart.caption = "Requests that failed in each interval, per second, by class (timeout, \
         unavailable, overloaded, connection, unsent…). A failed request never helps a window \
         pass: it counts as slower than any latency threshold."
        .to_string();
    chart
}

/// 4: the backlog and the requests in flight, and the send lag.
fn backlog(s: &Snapshot) -> Chart {
    let mut chart = timeline(
        "backlog",
        format!("Backlog and send lag: {}", s.title),
        counts("requests"),
    );
    chart
        .series
        .push(line(s, "backlog (due, not sent)", DARK_GREY, None, |p| {
            Some(p.figures.backlog? as f64)
        }));
    chart.series.push(line(
        s,
        "in flight (sent, not answered)",
        LIGHT_GREY,
        Some(Style::Dashed),
        |p| Some(p.figures.in_flight? as f64),
    ));
    chart.y2 = Some(linear("send lag (ms)"));
    for (name, i) in [("send lag p99", 1), ("send lag max", 3)] {
        let mut series = line(s, name, LATENCY_LINES[i].1, None, |p| {
            Some(p.figures.send_lag?.seconds()[i] * 1e3)
        });
        series.secondary = true;
        chart.series.push(series);
    }
    chart.caption = "At each interval's end: the requests whose intended start has come but \
         that the client has not sent yet (the backlog), and those sent and not yet answered. \
         On the right axis, how long the interval's requests waited in the client before they \
         were sent (send lag). A backlog that grows, or a send lag that climbs, means the \
         schedule is not kept: the cluster answers too slowly for the in-flight limit, or the \
         client is short of CPU."
        .to_string();
    chart
}

/// 5: the client's CPU and its hiccups.
fn client(s: &Snapshot) -> Chart {
    let mut chart = timeline(
        "client",
        format!("The client: CPU and hiccups: {}", s.title),
        linear("client CPU (cores)"),
    );
    // Each interval's share counts from the previous one, the first from the run's start.
    chart
        .series
        .push(line(s, "client CPU", palette(1), None, |p| {
            p.figures.cpu_cores
        }));
    chart.y2 = Some(linear("client hiccup (ms)"));
    let mut hiccups = line(
        s,
        "client hiccup (max)",
        HICCUP_GREY,
        Some(Style::Dashed),
        |p| Some(p.figures.hiccup?.seconds()[3] * 1e3),
    );
    hiccups.secondary = true;
    chart.series.push(hiccups);
    chart.caption = "The headroom process's CPU over each interval, in cores (1 = one core busy \
         all the time), and the largest hiccup of its own meter (how much later than asked \
         its threads woke). When the hiccups rise with the latencies, or the CPU nears the \
         cores the client has, the client stalled, not the cluster."
        .to_string();
    chart
}
