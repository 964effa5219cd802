//! The report's charts as data: each chart's axes, series, shaded spans and reference lines,
//! computed from the loaded directories ([`super::load`]). [`draw`] turns a [`Chart`] into
//! SVG; keeping the numbers apart from the drawing lets tests check every series.
//!
//! The charts, after the seed articles:
//! 1. [`sla_vs_rate`]: the worst window's value of an SLA term against the attempted rate,
//!    one line per configuration, the SLA threshold and each capacity marked (seed 000).
//! 2. [`latency_vs_throughput`]: whole-run p50/p99/p99.9/max against achieved throughput
//!    (seed 001).
//! 3. [`spectrum`]: the percentile spectrum, x = 1/(1−p) on a log scale, with the SLA as a
//!    step line (seed 003, jHiccup's charts).
//! 4. [`timeline`]: latency and throughput per interval, warmup shaded, failing windows
//!    marked, client hiccups overlaid, errors per interval.
//! 5. [`concurrency`]: throughput and latency against concurrency, for closed-loop sweeps
//!    (seed 001).
//! 6. [`sweep`]: for a `headroom sweep` directory, its throughput against concurrency and
//!    its p50/p99/p99.9 against throughput (seed 001's two charts).
//! 7. [`pauses::pause_timeline`]: the client's latency per interval and each node's
//!    stop-the-world pauses over the same time axis (seed 003, figure 5).

pub mod draw;
pub mod maintenance;
pub mod pauses;
pub mod server_latency;

use std::time::Duration;

use super::load::{Percentiles, RunData, SearchData, SweepData};
use crate::capacity::table::format_rate;
use crate::sla::{Metric, Sla, Term, Threshold};

/// An RGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Color(pub u8, pub u8, pub u8);

/// Colours for lines that are told apart by name only (configurations, runs, trials). No
/// red: red is the SLA's.
pub const PALETTE: [Color; 10] = [
    Color(31, 119, 180),
    Color(44, 160, 44),
    Color(148, 103, 189),
    Color(255, 127, 14),
    Color(140, 86, 75),
    Color(23, 190, 207),
    Color(227, 119, 194),
    Color(188, 189, 34),
    Color(80, 80, 80),
    Color(0, 70, 140),
];

/// The colour of the `i`-th of several lines.
pub fn palette(i: usize) -> Color {
    PALETTE[i % PALETTE.len()]
}

/// The SLA's threshold lines and failing windows.
pub const SLA_RED: Color = Color(200, 30, 30);
/// The warmup's shade.
pub const WARMUP_GREY: Color = Color(120, 120, 120);
/// Client hiccups.
pub const HICCUP_GREY: Color = Color(110, 110, 110);
/// Errors.
pub const ERROR_RED: Color = Color(214, 39, 40);
/// Throughput.
pub const THROUGHPUT_BLUE: Color = Color(31, 119, 180);

/// The percentiles the latency charts show, with their colours: light to dark as the
/// percentile climbs, so that the order of the lines reads at a glance.
pub const LATENCY_LINES: [(&str, Color); 4] = [
    ("p50", Color(120, 170, 220)),
    ("p99", Color(31, 119, 180)),
    ("p99.9", Color(255, 127, 14)),
    ("max", Color(90, 30, 120)),
];

/// The four values of [`LATENCY_LINES`] from a set of percentiles.
fn latency_values(p: &Percentiles) -> [f64; 4] {
    [p.p50_ms, p.p99_ms, p.p999_ms, p.max_ms]
}

/// Which of the charts a chart is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Worst-window SLA value against attempted rate.
    SlaVsRate,
    /// Latency percentiles against achieved throughput.
    LatencyVsThroughput,
    /// Percentile spectrum.
    Spectrum,
    /// Latency per interval over a run.
    TimelineLatency,
    /// Throughput and errors per interval over a run.
    TimelineThroughput,
    /// Throughput against concurrency.
    ConcurrencyThroughput,
    /// Latency against concurrency.
    ConcurrencyLatency,
    /// Client latency per interval and the nodes' pauses over a run.
    ServerPauses,
    /// Client latency per interval and Cassandra's own latency, read during a run.
    ServerLatency,
}

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly.
    Linear,
    /// Logarithmically, for values spanning orders of magnitude; values must be positive.
    Log,
    /// A percentile p (a fraction below 1) placed at 1/(1−p) on a log scale and labelled
    /// 90%, 99%, 99.9%, …
    Percentile,
}

/// One axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What the axis shows, with its unit.
    pub label: String,
    /// How values are placed.
    pub scale: Scale,
    /// Whether a linear axis starts at zero whatever the data.
    pub from_zero: bool,
    /// Whether only whole numbers make sense as ticks (counts).
    pub integer: bool,
}

impl Axis {
    fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            from_zero: true,
            integer: false,
        }
    }

    fn log(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log,
            from_zero: false,
            integer: false,
        }
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A solid line.
    Line,
    /// A solid line with a dot at each point.
    LineWithPoints,
    /// Dots only.
    Points,
    /// A dashed line.
    Dashed,
}

/// One named line or set of points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend's text.
    pub name: String,
    /// Its colour.
    pub color: Color,
    /// How it is drawn.
    pub style: Style,
    /// (x, y) in the axes' units, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Whether y is on the secondary (right) axis.
    pub secondary: bool,
    /// Whether the axes are fitted to this series; a series that is not (an overlay for
    /// context) is clipped to the range the others need.
    pub fit: bool,
}

/// A shaded span of x, e.g. the warmup or a failing SLA window.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// The legend's text (one entry per distinct name).
    pub name: String,
    /// Start, in x's units.
    pub from: f64,
    /// End, in x's units.
    pub to: f64,
    /// Its colour (drawn translucent).
    pub color: Color,
}

/// A reference line across the whole plot: horizontal at a y, or vertical at an x.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The legend's text.
    pub name: String,
    /// Where, in the axis' units.
    pub at: f64,
    /// Its colour.
    pub color: Color,
}

/// One chart, as data.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Which chart of the report this is.
    pub kind: Kind,
    /// A name for its SVG file; the page makes it unique and numbers it in page order.
    pub id: String,
    /// The title drawn above the plot.
    pub title: String,
    /// What the chart shows and how to read it, for the text beside it.
    pub caption: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// A second vertical axis on the right, when a series needs one.
    pub y2: Option<Axis>,
    /// The lines and points.
    pub series: Vec<Series>,
    /// Shaded spans of x.
    pub bands: Vec<Band>,
    /// Horizontal reference lines (on the primary y axis).
    pub hlines: Vec<Rule>,
    /// Vertical reference lines.
    pub vlines: Vec<Rule>,
}

impl Chart {
    fn new(kind: Kind, id: String, title: String, x: Axis, y: Axis) -> Chart {
        Chart {
            kind,
            id,
            title,
            caption: String::new(),
            x,
            y,
            y2: None,
            series: Vec::new(),
            bands: Vec::new(),
            hlines: Vec::new(),
            vlines: Vec::new(),
        }
    }

    /// The series named `name`.
    pub fn series_named(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }
}

/// Letters, digits, dots and dashes only; at most 60 characters.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(60).collect();
    if out.is_empty() {
        "chart".to_string()
    } else {
        out
    }
}

/// The SLA's terms, parsed; `None` when there is no SLA or it does not parse.
pub fn parse_sla(sla: &Option<(String, f64)>) -> Option<Sla> {
    let (terms, window_s) = sla.as_ref()?;
    Sla::parse(terms, Duration::from_secs_f64(*window_s)).ok()
}

/// An SLA as a sentence says it: "p99.9<100ms, max<1s in every 10 s window".
pub fn sla_words(sla: &Option<(String, f64)>) -> String {
    let Some((spec, window_s)) = sla else {
        return String::new();
    };
    let terms = match parse_sla(sla) {
        Some(parsed) => parsed
            .terms
            .iter()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", "),
        None => spec.clone(),
    };
    format!("{terms} in every {} s window", format_number(*window_s))
}

/// A latency term's threshold in ms.
fn threshold_ms(term: &Term) -> Option<f64> {
    match term.threshold {
        Threshold::LatencyNs(ns) => Some(ns as f64 / 1e6),
        Threshold::Fraction(_) => None,
    }
}

/// "p99.9 < 100 ms": a term as a legend says it.
fn term_words(term: &Term) -> String {
    let subject = match &term.op {
        Some(op) => format!("{op} {}", term.metric),
        None => term.metric.to_string(),
    };
    let threshold = threshold_ms(term)
        .map(|ms| format!("{} ms", format_number(ms)))
        .unwrap_or_default();
    format!("{subject} {} {threshold}", term.bound)
}

/// A number for labels: up to 3 significant digits below 100, whole above, thousands
/// separated by a space.
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return "-".to_string();
    }
    let magnitude = value.abs();
    if magnitude >= 100.0 || value == value.trunc() {
        let rounded = value.round();
        let grouped = crate::capacity::table::group_thousands(rounded.abs() as u64);
        if rounded < 0.0 {
            format!("-{grouped}")
        } else {
            grouped
        }
    } else if magnitude >= 10.0 {
        trim_zeros(format!("{value:.1}"))
    } else if magnitude >= 1.0 {
        trim_zeros(format!("{value:.2}"))
    } else if magnitude >= 0.01 {
        trim_zeros(format!("{value:.3}"))
    } else {
        trim_zeros(format!("{value:.4}"))
    }
}

fn trim_zeros(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Chart 1: for each latency term of the first configuration's SLA, the worst window's value
/// in each trial against the attempted rate, one line per configuration (the worst repeat at
/// each rate, and every repeat as a dot when there were several), the term's threshold, and
/// each configuration's capacity as a vertical line. Open-loop runs given directly, when
/// there are at least two with an SLA, form one more configuration.
pub fn sla_vs_rate(searches: &[SearchData], runs: &[RunData]) -> Vec<Chart> {
    // (label, sla, points (rate, value ms, pass), capacity)
    struct Config {
        label: String,
        terms: Vec<(String, Vec<(f64, f64)>)>,
        capacity: Option<f64>,
    }
    let mut configs: Vec<Config> = Vec::new();
    let mut reference: Option<Sla> = None;
    for search in searches {
        let Some(sla) = parse_sla(&search.sla) else {
            continue;
        };
        let terms = sla
            .terms
            .iter()
            .filter(|t| t.metric.is_latency())
            .map(|t| {
                let name = t.name();
                let points = search
                    .trials
                    .iter()
                    .filter_map(|trial| {
                        let value = trial.record.terms.iter().find(|v| v.term == name)?;
                        Some((trial.record.rate_per_s, value.value))
                    })
                    .collect();
                (name, points)
            })
            .collect();
        reference.get_or_insert(sla);
        configs.push(Config {
            label: search.label.clone(),
            terms,
            capacity: search.summary.outcome.capacity_per_s,
        });
    }
    let judged: Vec<&RunData> = runs
        .iter()
        .filter(|r| r.is_open_loop() && r.summary.as_ref().is_some_and(|s| s.sla.is_some()))
        .collect();
    if judged.len() >= 2 {
        let mut by_term: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for run in &judged {
            let (Some(rate), Some(sla)) = (
                run.attempted_rate(),
                run.summary.as_ref().and_then(|s| s.sla.as_ref()),
            ) else {
                continue;
            };
            for worst in &sla.verdict.worst {
                let Some(crate::sla::Value::LatencyNs(ns)) = worst.value else {
                    continue;
                };
                let point = (rate, ns as f64 / 1e6);
                match by_term.iter_mut().find(|(t, _)| *t == worst.term) {
                    Some((_, points)) => points.push(point),
                    None => by_term.push((worst.term.clone(), vec![point])),
                }
            }
        }
        if reference.is_none() {
            reference = judged.iter().find_map(|r| parse_sla(&r.sla));
        }
        configs.push(Config {
            label: "runs given".to_string(),
            terms: by_term,
            capacity: None,
        });
    }
    let Some(reference) = reference else {
        return Vec::new();
    };

    let mut charts = Vec::new();
    for term in reference.terms.iter().filter(|t| t.metric.is_latency()) {
        let name = term.name();
        let subject = match &term.op {
            Some(op) => format!("{op} {}", term.metric),
            None => term.metric.to_string(),
        };
        let mut chart = Chart::new(
            Kind::SlaVsRate,
            format!("sla-vs-rate-{subject}"),
            format!("Worst-window {subject} against attempted rate"),
            Axis::linear("attempted rate (requests/s)"),
            Axis::log(format!("worst-window {subject} (ms, log scale)")),
        );
        let mut missing = Vec::new();
        for (i, config) in configs.iter().enumerate() {
            let color = palette(i);
            let Some((_, points)) = config.terms.iter().find(|(t, _)| *t == name) else {
                missing.push(config.label.clone());
                continue;
            };
            if points.is_empty() {
                continue;
            }
            let mut worst: Vec<(f64, f64)> = Vec::new();
            let mut sorted = points.clone();
            sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
            for &(rate, value) in &sorted {
                match worst.last_mut() {
                    Some(last) if last.0 == rate => last.1 = last.1.max(value),
                    _ => worst.push((rate, value)),
                }
            }
            let repeated = worst.len() < sorted.len();
            chart.series.push(Series {
                name: if repeated {
                    format!("{} (worst repeat)", config.label)
                } else {
                    config.label.clone()
                },
                color,
                style: Style::LineWithPoints,
                points: worst,
                secondary: false,
                fit: true,
            });
            if repeated {
                chart.series.push(Series {
                    name: format!("{}: each repeat", config.label),
                    color,
                    style: Style::Points,
                    points: sorted,
                    secondary: false,
                    fit: true,
                });
            }
            if let Some(capacity) = config.capacity {
                chart.vlines.push(Rule {
                    name: format!("{} capacity: {}/s", config.label, format_rate(capacity)),
                    at: capacity,
                    color,
                });
            }
        }
        if let Some(ms) = threshold_ms(term) {
            chart.hlines.push(Rule {
                name: format!("SLA: {}", term_words(term)),
                at: ms,
                color: SLA_RED,
            });
        }
        chart.caption = format!(
            "Each point is one trial's worst {window} window of {subject} (its \"{subject} \
             max\"); the line follows the worst repeat at each rate. A configuration meets the \
             SLA where its line stays under the red line; its capacity (dashed vertical line) is \
             the highest rate at which every repeat passed, and every lower rate too. The \
             vertical axis is logarithmic: above the capacity latencies often grow by orders of \
             magnitude.",
            window = format_window(reference.window),
        );
        if !missing.is_empty() {
            chart.caption.push_str(&format!(
                " Not shown, their SLA has no {name} term: {}.",
                missing.join(", ")
            ));
        }
        if !chart.series.is_empty() {
            charts.push(chart);
        }
    }
    charts
}

fn format_window(window: Duration) -> String {
    format!("{} s", format_number(window.as_secs_f64()))
}

/// Dots mark the points of short lines; a long run's hundreds of intervals would only
/// blur the line (and weigh down the page).
fn line_style(points: usize) -> Style {
    if points <= MAX_DOTTED_POINTS {
        Style::LineWithPoints
    } else {
        Style::Line
    }
}

/// The most points a line gets dots for.
const MAX_DOTTED_POINTS: usize = 120;

/// The four latency lines of a set of points (x, percentiles), sorted by x.
fn latency_series(mut points: Vec<(f64, Percentiles)>) -> Vec<Series> {
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let style = line_style(points.len());
    LATENCY_LINES
        .iter()
        .enumerate()
        .map(|(i, (name, color))| Series {
            name: name.to_string(),
            color: *color,
            style,
            points: points
                .iter()
                .map(|(x, p)| (*x, latency_values(p)[i]))
                .collect(),
            secondary: false,
            fit: true,
        })
        .collect()
}

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

/// The SLA as step lines on a spectrum of `op`: one for the terms over every operation type
/// and one for the terms of `op` alone. Each percentile term holds its threshold from the
/// previous term's percentile up to its own; a max term holds it up to `x_end`.
fn sla_steps(sla: &Sla, op: &str, x_end: f64) -> Vec<Series> {
    let mut out = Vec::new();
    for own in [false, true] {
        let mut limits: Vec<(f64, f64)> = sla
            .terms
            .iter()
            .filter(|t| match &t.op {
                None => !own,
                Some(o) => own && o == op,
            })
            .filter_map(|t| {
                let ms = threshold_ms(t)?;
                match t.metric {
                    // From thousandths of a percent, so that p99.9 is exactly 0.999.
                    Metric::Percentile(p) => Some(((p.value() * 1000.0).round() / 100_000.0, ms)),
                    Metric::Max => Some((x_end.max(0.0), ms)),
                    Metric::Mean | Metric::Errors => None,
                }
            })
            .collect();
        if limits.is_empty() {
            continue;
        }
        limits.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut points = Vec::new();
        let mut from = 0.0;
        for (q, ms) in limits {
            if q <= from && !points.is_empty() {
                continue;
            }
            points.push((from, ms));
            points.push((q, ms));
            from = q;
        }
        let terms: Vec<String> = sla
            .terms
            .iter()
            .filter(|t| t.metric.is_latency() && !matches!(t.metric, Metric::Mean))
            .filter(|t| match &t.op {
                None => !own,
                Some(o) => own && o == op,
            })
            .map(term_words)
            .collect();
        out.push(Series {
            name: format!("SLA: {}", terms.join(", ")),
            color: SLA_RED,
            style: Style::Dashed,
            points,
            secondary: false,
            fit: true,
        });
    }
    out
}

/// The x of a spectrum's last point, at least the 99th percentile.
fn spectrum_end(points: &[(f64, f64)]) -> f64 {
    points.last().map_or(0.99, |p| p.0.max(0.99))
}

/// Chart 3: percentile spectra (from the `.hgrm` files) with the SLA as a step line: for a
/// run, one line per operation type; for a capacity search, one chart per operation type
/// with one line per trial (at most 12: the first repeats, spread over the rates).
pub fn spectrum(searches: &[SearchData], runs: &[RunData]) -> Vec<Chart> {
    let mut charts = Vec::new();
    let new_chart = |id: String, title: String, kind_of_latency: &str| {
        Chart::new(
            Kind::Spectrum,
            id,
            title,
            Axis {
                label: "percentile (log scale of 1/(1 − percentile))".to_string(),
                scale: Scale::Percentile,
                from_zero: false,
                integer: false,
            },
            Axis::log(format!("{kind_of_latency} (ms, log scale)")),
        )
    };
    let caption = |kind_of_latency: &str, has_sla: bool| {
        let mut text = format!(
            "The {kind_of_latency} at each percentile over the whole measured run, in the style \
             of jHiccup and HdrHistogram's plotter: each step right is ten times rarer (90%, 99%, \
             99.9%, …), so the tail that an average hides takes most of the width."
        );
        if has_sla {
            text.push_str(
                " The dashed red steps are the SLA: up to each term's percentile the line must \
                 stay under its threshold. The SLA is judged in every window, so a whole-run \
                 line under the steps can still hide a failing window (see the timeline).",
            );
        }
        text
    };
    for run in runs {
        if run.spectra.is_empty() {
            continue;
        }
        let kind_of_latency = latency_kind(run);
        let mut chart = new_chart(
            format!("spectrum-{}", run.label),
            format!("Percentile spectrum: {}", run.label),
            kind_of_latency,
        );
        let mut x_end: f64 = 0.99;
        for (i, s) in run.spectra.iter().enumerate() {
            x_end = x_end.max(spectrum_end(&s.points));
            chart.series.push(Series {
                name: format!("{} (max {} ms)", s.op, format_number(s.max_ms)),
                color: palette(i),
                style: Style::Line,
                points: s.points.clone(),
                secondary: false,
                fit: true,
            });
        }
        let sla = parse_sla(&run.sla);
        if let Some(sla) = &sla {
            for s in &run.spectra {
                for step in sla_steps(sla, &s.op, x_end) {
                    if chart.series_named(&step.name).is_none() {
                        chart.series.push(step);
                    }
                }
            }
        }
        chart.caption = caption(kind_of_latency, sla.is_some());
        charts.push(chart);
    }
    for search in searches {
        let mut ops: Vec<String> = Vec::new();
        for trial in &search.trials {
            for s in trial.run.iter().flat_map(|r| &r.spectra) {
                if !ops.contains(&s.op) {
                    ops.push(s.op.clone());
                }
            }
        }
        let shown = spread_trials(search, 12);
        let sla = parse_sla(&search.sla);
        for op in ops {
            let mut chart = new_chart(
                format!("spectrum-{}-{op}", search.label),
                format!(
                    "Percentile spectrum of {op} per attempted rate: {}",
                    search.label
                ),
                "response time",
            );
            let mut x_end: f64 = 0.99;
            for (i, &index) in shown.iter().enumerate() {
                let trial = &search.trials[index];
                let Some(s) = trial
                    .run
                    .as_ref()
                    .and_then(|r| r.spectra.iter().find(|s| s.op == op))
                else {
                    continue;
                };
                x_end = x_end.max(spectrum_end(&s.points));
                let verdict = if trial.record.pass { "pass" } else { "fail" };
                let repeat = if search.repeats() > 1 {
                    format!(" #{}", trial.record.repeat)
                } else {
                    String::new()
                };
                chart.series.push(Series {
                    name: format!(
                        "{}/s{repeat} {verdict} (max {} ms)",
                        format_rate(trial.record.rate_per_s),
                        format_number(s.max_ms)
                    ),
                    color: palette(i),
                    style: Style::Line,
                    points: s.points.clone(),
                    secondary: false,
                    fit: true,
                });
            }
            if chart.series.is_empty() {
                continue;
            }
            if let Some(sla) = &sla {
                chart.series.extend(sla_steps(sla, &op, x_end));
            }
            chart.caption = caption("response time", sla.is_some());
            charts.push(chart);
        }
    }
    charts
}

/// Indexes of at most `most` trials of a search, by rate: every trial when they fit, else
/// the first repeat of each rate, spread evenly and always with the lowest and highest.
fn spread_trials(search: &SearchData, most: usize) -> Vec<usize> {
    let all: Vec<usize> = (0..search.trials.len()).collect();
    if all.len() <= most {
        return all;
    }
    let firsts: Vec<usize> = all
        .into_iter()
        .filter(|&i| search.trials[i].record.repeat == 1)
        .collect();
    if firsts.len() <= most {
        return firsts;
    }
    let mut picked: Vec<usize> = (0..most)
        .map(|k| firsts[k * (firsts.len() - 1) / (most - 1)])
        .collect();
    picked.dedup();
    picked
}

/// "response time" or "service time", by the run's loop.
fn latency_kind(run: &RunData) -> &'static str {
    if run.concurrency().is_some() {
        "service time"
    } else {
        "response time"
    }
}

/// The runs of a search worth a timeline: the trial at the capacity whose first SLA term was
/// worst, and the first failing trial above it; without a capacity, the lowest rate's first
/// trial (and the first failing trial, when it is another).
pub fn timeline_trials(search: &SearchData) -> Vec<usize> {
    let trials = &search.trials;
    let worst_value = |i: usize| trials[i].record.terms.first().map_or(0.0, |t| t.value);
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

/// Chart 4: the timeline of one run, as two charts over the same time axis.
///
/// Latency: p50, p99, p99.9 and max of each interval (every operation type merged, from
/// histograms.hlog), the client's largest hiccup per interval, the warmup shaded, failing
/// SLA windows shaded red, the SLA's latency thresholds (terms over every operation type).
/// The spans every chart over a run's time shades: its warmup (named `warmup`) and each
/// window that failed the SLA.
fn run_bands(run: &RunData, warmup: &str) -> Vec<Band> {
    let mut bands = Vec::new();
    if run.warmup_s > 0.0 {
        bands.push(Band {
            name: warmup.to_string(),
            from: 0.0,
            to: run.warmup_s,
            color: WARMUP_GREY,
        });
    }
    for window in run.windows.iter().filter(|w| !w.pass) {
        bands.push(Band {
            name: "failing SLA window".to_string(),
            from: window.start_s,
            to: window.start_s + window.length_s,
            color: SLA_RED,
        });
    }
    bands
}

/// Throughput: requests per second in each interval, the attempted rate, and failed requests
/// per interval on the right-hand axis.
pub fn timeline(run: &RunData, title: &str) -> Vec<Chart> {
    let mut charts = Vec::new();
    let time_axis = || Axis::linear("time since the start of the run (s)");
    let kind_of_latency = latency_kind(run);
    let mut bands = run_bands(run, "warmup (not judged)");
    bands.extend(maintenance::bands(run));

    if run.timeline.iter().any(|i| i.latency.is_some()) {
        let mut chart = Chart::new(
            Kind::TimelineLatency,
            format!("timeline-latency-{}", run.label),
            format!("Latency per interval: {title}"),
            time_axis(),
            Axis::log(format!("{kind_of_latency} (ms, log scale)")),
        );
        let points: Vec<(f64, Percentiles)> = run
            .timeline
            .iter()
            .filter_map(|i| Some((i.start_s + i.length_s, i.latency?)))
            .collect();
        chart.series = latency_series(points);
        let hiccups: Vec<(f64, f64)> = run
            .timeline
            .iter()
            .filter_map(|i| Some((i.start_s + i.length_s, i.hiccup?.max_ms)))
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
        if let Some(sla) = parse_sla(&run.sla) {
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
        let failing = run.windows.iter().filter(|w| !w.pass).count();
        match (run.windows.len(), failing) {
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
        caption.extend(maintenance::caption(run));
        chart.caption = caption;
        charts.push(chart);
    }

    if !run.intervals.is_empty() {
        let mut chart = Chart::new(
            Kind::TimelineThroughput,
            format!("timeline-throughput-{}", run.label),
            format!("Throughput and errors per interval: {title}"),
            time_axis(),
            Axis::linear("throughput (requests/s)"),
        );
        // Requests and errors of every op type and phase, by interval start. Intervals
        // after the schedule's end hold only late answers: a rate over them means nothing.
        let scheduled = |start_s: f64| run.planned_end_s.is_none_or(|end| start_s < end - 1e-6);
        let mut by_start: std::collections::BTreeMap<i64, (f64, f64, u64, u64)> =
            std::collections::BTreeMap::new();
        for row in run.intervals.iter().filter(|r| scheduled(r.start_s)) {
            let slot = by_start
                .entry((row.start_s * 1000.0).round() as i64)
                .or_insert((row.start_s, row.length_s, 0, 0));
            slot.2 += row.requests;
            slot.3 += row.errors;
        }
        let per_interval: Vec<(f64, f64, u64, u64)> = by_start.into_values().collect();
        let style = line_style(per_interval.len());
        chart.series.push(Series {
            name: "throughput".to_string(),
            color: THROUGHPUT_BLUE,
            style,
            points: per_interval
                .iter()
                .map(|p| (p.0 + p.1, p.2 as f64 / p.1.max(1e-9)))
                .collect(),
            secondary: false,
            fit: true,
        });
        let errors: u64 = per_interval.iter().map(|p| p.3).sum();
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
                .map(|p| (p.0 + p.1, p.3 as f64))
                .collect(),
            secondary: true,
            fit: true,
        });
        if let Some(rate) = run.attempted_rate() {
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
pub(crate) mod tests {
    use super::*;
    use crate::engine::LoadMode;
    use crate::report::load::tests::{capacity_fixture, run_fixture};

    pub(crate) fn fixture_run() -> RunData {
        RunData::load(&run_fixture(), "run".into())
    }

    pub(crate) fn fixture_search() -> SearchData {
        SearchData::load(&capacity_fixture()).unwrap()
    }

    /// Copies of the run fixture as closed-loop runs at these concurrencies and rates.
    pub(crate) fn closed_loop_runs(sweep: &[(usize, f64)]) -> Vec<RunData> {
        sweep
            .iter()
            .map(|&(concurrency, rate)| {
                let mut run = RunData::load(&run_fixture(), format!("c{concurrency}"));
                run.mode = Some(LoadMode::Closed { concurrency });
                let summary = run.summary.as_mut().unwrap();
                summary.mode = LoadMode::Closed { concurrency };
                summary.attempted_rate_per_s = None;
                summary.achieved_rate_per_s = rate;
                run
            })
            .collect()
    }

    #[test]
    fn chart_1_plots_each_trials_worst_window_the_threshold_and_the_capacity() {
        let charts = sla_vs_rate(&[fixture_search()], &[]);
        assert_eq!(charts.len(), 1);
        let chart = &charts[0];
        assert_eq!(chart.title, "Worst-window p99 against attempted rate");
        assert_eq!(chart.y.scale, Scale::Log);
        assert_eq!(chart.x.label, "attempted rate (requests/s)");
        assert_eq!(chart.series.len(), 1);
        assert_eq!(chart.series[0].name, "capacity");
        assert_eq!(
            chart.series[0].points,
            [
                (2800.0, 1.029631),
                (4200.0, 1.076223),
                (4900.0, 1.415167),
                (5200.0, 1.096703),
                (5500.0, 71.827455),
                (10900.0, 43.515903)
            ]
        );
        assert_eq!(
            chart.hlines,
            [Rule {
                name: "SLA: p99 < 20 ms".into(),
                at: 20.0,
                color: SLA_RED
            }]
        );
        assert_eq!(chart.vlines.len(), 1);
        assert_eq!(chart.vlines[0].at, 5200.0);
        assert_eq!(chart.vlines[0].name, "capacity capacity: 5 200/s");
    }

    #[test]
    fn chart_1_compares_configurations_and_shows_every_repeat() {
        let mut second = fixture_search();
        second.label = "zgc".into();
        // A second repeat at 2800/s, worse than the first.
        let mut repeat = second.trials[0].clone();
        repeat.record.repeat = 2;
        repeat.record.terms[0].value = 3.5;
        second.trials.insert(1, repeat);
        let charts = sla_vs_rate(&[fixture_search(), second], &[]);
        let names: Vec<&str> = charts[0].series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["capacity", "zgc (worst repeat)", "zgc: each repeat"]
        );
        assert_eq!(charts[0].series[1].points[0], (2800.0, 3.5));
        assert_eq!(charts[0].series[2].points.len(), 7);
        assert_ne!(charts[0].series[0].color, charts[0].series[1].color);
        assert_eq!(charts[0].vlines.len(), 2);
    }

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

    #[test]
    fn chart_3_is_the_spectrum_with_the_sla_as_steps() {
        let charts = spectrum(&[], &[fixture_run()]);
        assert_eq!(charts.len(), 1);
        let chart = &charts[0];
        assert_eq!(chart.x.scale, Scale::Percentile);
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "write (max 21.4 ms)",
                "read (max 20.5 ms)",
                "SLA: p99.9 < 100 ms, max < 50 ms",
                "SLA: read p99 < 5 ms"
            ]
        );
        let run = fixture_run();
        assert_eq!(chart.series[0].points, run.spectra[0].points);
        let end = run.spectra[0].points.last().unwrap().0;
        assert_eq!(
            chart.series[2].points,
            [(0.0, 100.0), (0.999, 100.0), (0.999, 50.0), (end, 50.0)]
        );
        assert_eq!(chart.series[3].points, [(0.0, 5.0), (0.99, 5.0)]);

        let charts = spectrum(&[fixture_search()], &[]);
        assert_eq!(charts.len(), 1);
        let names: Vec<&str> = charts[0].series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names[0], "2 800/s pass (max 6.24 ms)");
        assert_eq!(names[4], "5 500/s fail (max 123 ms)");
        assert_eq!(names[6], "SLA: p99 < 20 ms");
        assert_eq!(names.len(), 7);
    }

    #[test]
    fn chart_4_is_the_timeline_of_a_run() {
        let run = fixture_run();
        let charts = timeline(&run, "run");
        assert_eq!(charts.len(), 2);
        let latency = &charts[0];
        assert_eq!(latency.kind, Kind::TimelineLatency);
        assert_eq!(latency.series.len(), 5);
        let p99 = latency.series_named("p99").unwrap();
        let xs: Vec<f64> = p99.points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(p99.points[0].1, run.timeline[0].latency.unwrap().p99_ms);
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
        let charts = timeline(failing, "5 500/s");
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

    #[test]
    fn chart_6_shows_a_sweeps_two_charts_from_its_records() {
        let sweep = SweepData::load(&crate::report::load::tests::sweep_fixture()).unwrap();
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

    #[test]
    fn labels_and_slugs() {
        assert_eq!(format_number(0.365823), "0.366");
        assert_eq!(format_number(21.381), "21.4");
        assert_eq!(format_number(2.445311), "2.45");
        assert_eq!(format_number(1_041_760.0), "1 041 760");
        assert_eq!(format_number(5.0), "5");
        assert_eq!(format_number(0.5), "0.5");
        assert_eq!(
            slug("Latency: <c2> at 5 200/s #1"),
            "latency-c2-at-5-200-s-1"
        );
        assert_eq!(slug("¿?"), "chart");
        assert_eq!(
            sla_words(&Some(("p99<20ms, window=5s".into(), 5.0))),
            "p99<20ms in every 5 s window"
        );
    }
}
