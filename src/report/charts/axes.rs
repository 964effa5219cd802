//! The axes of a chart: how each maps its values onto plotters' linear coordinates (a log
//! axis carries log10 of its values, a percentile axis log10(1/(1−p))), where its ticks and
//! grid lines go, and how they are labelled in the axis' own units (1, 2, 5, 10 ms…; 90%,
//! 99%, 99.9%…). [`super::draw`] lays the chart out on them.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;

use super::{Axis, Scale};
use crate::format::format_number;

/// How an axis maps its values onto plotters' linear coordinates, and its ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisMap {
    /// The axis' scale.
    pub scale: Scale,
    /// The lowest coordinate shown.
    pub lo: f64,
    /// The highest coordinate shown.
    pub hi: f64,
    /// Labelled ticks, in coordinates.
    pub ticks: Vec<f64>,
    /// Unlabelled grid lines, in coordinates.
    pub light: Vec<f64>,
}

impl AxisMap {
    /// Fits `axis` to `values` (in the axis' units; values a log axis cannot show, ≤ 0, are
    /// ignored). `headroom`: keep the highest value off the frame of a linear axis (for
    /// vertical axes; a time axis may end on its last point).
    pub fn fit(axis: &Axis, values: impl IntoIterator<Item = f64>, headroom: bool) -> AxisMap {
        let coords: Vec<f64> = values
            .into_iter()
            .filter_map(|v| to_coord(axis.scale, v))
            .collect();
        let (min, max) = coords
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &c| {
                (lo.min(c), hi.max(c))
            });
        match axis.scale {
            Scale::Linear => linear_map(axis, min, max, headroom),
            Scale::Log => log_map(min, max),
            Scale::Percentile => {
                let hi = if max.is_finite() { max.ceil() } else { 2.0 }.max(2.0);
                let mut ticks = Vec::new();
                let mut light = Vec::new();
                let mut k = 0.0;
                while k <= hi + 1e-9 {
                    ticks.push(k);
                    for m in 2..10 {
                        let c = k + f64::from(m).log10();
                        if c < hi {
                            light.push(c);
                        }
                    }
                    k += 1.0;
                }
                AxisMap {
                    scale: Scale::Percentile,
                    lo: 0.0,
                    hi,
                    ticks,
                    light,
                }
            }
        }
    }

    /// The coordinate of a value; `None` when the axis cannot show it.
    pub fn coord(&self, value: f64) -> Option<f64> {
        to_coord(self.scale, value)
    }

    /// A tick's label, in the axis' units.
    pub fn label(&self, coord: f64) -> String {
        match self.scale {
            Scale::Linear => format_number(coord),
            Scale::Log => format_number(10f64.powf(coord)),
            Scale::Percentile => percentile_label(coord),
        }
    }
}

/// A value's coordinate on a scale.
fn to_coord(scale: Scale, value: f64) -> Option<f64> {
    if !value.is_finite() {
        return None;
    }
    match scale {
        Scale::Linear => Some(value),
        Scale::Log => (value > 0.0).then(|| value.log10()),
        Scale::Percentile => (0.0..1.0).contains(&value).then(|| -(1.0 - value).log10()),
    }
}

/// The percentile at log10(1/(1−p)) = `coord`, as the label a reader expects: 0 → 0%,
/// 1 → 90%, 2 → 99%, 3 → 99.9%.
pub fn percentile_label(coord: f64) -> String {
    let k = coord.round();
    if (coord - k).abs() < 1e-9 && k >= 1.0 {
        let nines = k as usize;
        return match nines {
            1 => "90%".to_string(),
            2 => "99%".to_string(),
            _ => format!("99.{}%", "9".repeat(nines - 2)),
        };
    }
    let p = 1.0 - 10f64.powf(-coord);
    format!("{}%", format_number(p * 100.0))
}

/// A log axis over log10 values `min`..`max`: bounded by 1, 2 or 5 times a power of ten a
/// little beyond the data, at least a decade wide; ticks at each decade, and at 2 and 5
/// times it when the axis spans at most 3 decades; every other decade labelled beyond 8.
fn log_map(min: f64, max: f64) -> AxisMap {
    const STEPS: [f64; 3] = [1.0, 2.0, 5.0];
    let down = |c: f64| {
        let d = c.floor();
        let m = 10f64.powf(c - d);
        let step = STEPS
            .iter()
            .rev()
            .find(|s| **s <= m * (1.0 + 1e-9))
            .unwrap_or(&1.0);
        d + step.log10()
    };
    let up = |c: f64| {
        let d = c.floor();
        let m = 10f64.powf(c - d);
        match STEPS.iter().find(|s| **s >= m * (1.0 - 1e-9)) {
            Some(step) => d + step.log10(),
            None => d + 1.0,
        }
    };
    let (min, max) = if min.is_finite() {
        (min, max)
    } else {
        (0.0, 1.0)
    };
    // A little room (about 5%) so that no point sits on the frame.
    let mut lo = down(min - 0.02);
    let mut hi = up(max + 0.02);
    let mut widen_up = true;
    while hi - lo < 0.99 {
        if widen_up {
            hi = up(hi + 0.01);
        } else {
            lo = down(lo - 0.01);
        }
        widen_up = !widen_up;
    }
    let decades = hi - lo;
    let mut ticks = Vec::new();
    let mut light = Vec::new();
    let mut d = lo.floor();
    while d <= hi + 1e-9 {
        for m in 1..10 {
            let c = d + f64::from(m).log10();
            if c < lo - 1e-9 || c > hi + 1e-9 {
                continue;
            }
            let decade = m == 1;
            let labelled = decade && (decades <= 8.0 || ((c - lo.ceil()).round() as i64) % 2 == 0)
                || (decades <= 3.0 && (m == 2 || m == 5));
            if labelled {
                ticks.push(c);
            } else {
                light.push(c);
            }
        }
        d += 1.0;
    }
    AxisMap {
        scale: Scale::Log,
        lo,
        hi,
        ticks,
        light,
    }
}

/// A linear axis: about six "nice" ticks (1, 2, 2.5 or 5 times a power of ten).
fn linear_map(axis: &Axis, min: f64, max: f64, headroom: bool) -> AxisMap {
    let (mut min, mut max) = if min.is_finite() {
        (min, max)
    } else {
        (0.0, 1.0)
    };
    if axis.from_zero && min >= 0.0 {
        min = 0.0;
    }
    if max <= min {
        max = min
            + if axis.integer {
                1.0
            } else {
                min.abs().max(1.0)
            };
    }
    let raw = (max - min) / 6.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let mut step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(raw);
    if axis.integer {
        step = step.max(1.0).round();
    }
    let lo = (min / step).floor() * step;
    let mut hi = (max / step).ceil() * step;
    if headroom && hi - max < step * 0.05 {
        // Leave room above the highest point.
        hi += step;
    }
    let mut ticks = Vec::new();
    let mut t = lo;
    while t <= hi + step * 1e-6 {
        // Rounded so that labels read 0.3, not 0.30000000000000004.
        ticks.push((t / step).round() * step);
        t += step;
    }
    AxisMap {
        scale: Scale::Linear,
        lo,
        hi,
        ticks,
        light: Vec::new(),
    }
}

/// An axis as plotters' coordinate: linear over [lo, hi], with exactly our ticks as its
/// bold key points and our grid lines as its light ones.
#[derive(Debug, Clone)]
pub(super) struct Ticked(pub(super) AxisMap);

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let AxisMap { lo, hi, .. } = self.0;
        let fraction = if hi > lo {
            (value - lo) / (hi - lo)
        } else {
            0.5
        };
        limit.0 + (fraction * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.0.light.clone()
        } else {
            self.0.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.0.lo..self.0.hi
    }
}
