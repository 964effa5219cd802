//! What several charts draw alike: the latency lines and whether their points get dots,
//! the spans shaded over a run's time, and which latency a run measured.

use super::model::{Band, Series, Style, LATENCY_LINES, SLA_RED, WARMUP_GREY};
use crate::figures::Timeline;
use crate::results::run_dir::Percentiles;
use crate::results::run_dir::RunData;

/// The four values of [`LATENCY_LINES`] from a set of percentiles.
fn latency_values(p: &Percentiles) -> [f64; 4] {
    [p.p50_ms, p.p99_ms, p.p999_ms, p.max_ms]
}

/// Dots mark the points of short lines; a long run's hundreds of intervals would only
/// blur the line (and weigh down the page).
pub(super) fn line_style(points: usize) -> Style {
    if points <= MAX_DOTTED_POINTS {
        Style::LineWithPoints
    } else {
        Style::Line
    }
}

/// The most points a line gets dots for.
const MAX_DOTTED_POINTS: usize = 120;

/// The four latency lines of a set of points (x, percentiles), sorted by x.
pub(super) fn latency_series(mut points: Vec<(f64, Percentiles)>) -> Vec<Series> {
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

/// "response time" or "service time", by the run's loop.
pub(super) fn latency_kind(run: &RunData) -> &'static str {
    if run.concurrency().is_some() {
        "service time"
    } else {
        "response time"
    }
}

/// The spans every chart over a run's time shades: its warmup (named `warmup`) and each
/// window that failed the SLA.
pub(super) fn timeline_bands(figures: &Timeline, warmup: &str) -> Vec<Band> {
    let mut bands = Vec::new();
    if figures.warmup_s > 0.0 {
        bands.push(Band {
            name: warmup.to_string(),
            from: 0.0,
            to: figures.warmup_s,
            color: WARMUP_GREY,
        });
    }
    for window in figures.failing() {
        bands.push(Band {
            name: "failing SLA window".to_string(),
            from: window.start_s,
            to: window.start_s + window.length_s,
            color: SLA_RED,
        });
    }
    bands
}
