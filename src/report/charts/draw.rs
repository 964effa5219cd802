//! Drawing a [`Chart`] as SVG with plotters' SVG backend.
//!
//! plotters is built without its font features (`ttf`, `ab_glyph`): it then measures text
//! with a fixed estimate per character instead of loading a font file, and the SVG names
//! only the generic `sans-serif` family, which the viewer's browser lays out. Nothing here
//! reads the system's fonts, so charts come out the same offline, in CI and on any machine.
//!
//! Every axis is drawn on linear plotters coordinates, with the ticks chosen and labelled in
//! `axes.rs` (1, 2, 5, 10 ms…; 90%, 99%, 99.9%…). That keeps the tick labels in the units a
//! reader expects, whatever plotters' own log axis would pick. The legend gets its own column to
//! the right of the plot, so that it never covers a line.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axes::{AxisMap, Ticked};
use super::{Axis, Chart, Kind, Scale, Style};

/// The chart's own colour type (plotters' prelude has a `Color` trait).
type Rgb = super::Color;

/// The size of every chart, pixels.
pub const SIZE: (u32, u32) = (1000, 440);

/// Font sizes as plotters takes them (it writes size / 1.24 as the SVG font-size).
const TITLE_FONT: f64 = 21.0;
const DESC_FONT: f64 = 17.0;
const LABEL_FONT: f64 = 16.0;
const LEGEND_FONT: f64 = 16.0;
/// The estimated width of one character of [`LEGEND_FONT`] or [`LABEL_FONT`], pixels.
const CHAR_PX: f64 = 7.4;
/// A legend line longer than this is wrapped.
const LEGEND_LINE_CHARS: usize = 28;
/// The legend's column, pixels: a swatch and [`LEGEND_LINE_CHARS`] characters.
const LEGEND_WIDTH: u32 = 250;
/// The narrowest area for an axis' tick labels and title, pixels.
const MIN_LABEL_AREA: u32 = 80;

fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

/// One entry of the legend.
enum Swatch {
    Line(Rgb),
    LineWithPoint(Rgb),
    Point(Rgb),
    Dashed(Rgb),
    Area(Rgb),
}

/// The legend's entries, in order: series, horizontal then vertical rules, then bands (one
/// entry per band name).
fn legend(chart: &Chart) -> Vec<(Swatch, String)> {
    let mut entries = Vec::new();
    for s in &chart.series {
        let swatch = match s.style {
            Style::Line => Swatch::Line(s.color),
            Style::LineWithPoints => Swatch::LineWithPoint(s.color),
            Style::Points => Swatch::Point(s.color),
            Style::Dashed => Swatch::Dashed(s.color),
        };
        let name = if s.secondary && chart.y2.is_some() {
            format!("{} (right axis)", s.name)
        } else {
            s.name.clone()
        };
        entries.push((swatch, name));
    }
    for r in chart.hlines.iter().chain(&chart.vlines) {
        entries.push((Swatch::Dashed(r.color), r.name.clone()));
    }
    let mut seen: Vec<&str> = Vec::new();
    for b in &chart.bands {
        if !seen.contains(&b.name.as_str()) {
            seen.push(&b.name);
            entries.push((Swatch::Area(b.color), b.name.clone()));
        }
    }
    entries
}

/// Splits a legend text into lines of at most [`LEGEND_LINE_CHARS`] characters, at spaces
/// where it can.
fn wrap(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let fits = line.chars().count() + 1 + word.chars().count() <= LEGEND_LINE_CHARS;
        if !line.is_empty() && !fits {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.chars().count() > LEGEND_LINE_CHARS {
            let head: String = line.chars().take(LEGEND_LINE_CHARS).collect();
            let tail: String = line.chars().skip(LEGEND_LINE_CHARS).collect();
            lines.push(head);
            line = tail;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The chart as an SVG document of [`SIZE`].
pub fn svg(chart: &Chart) -> anyhow::Result<String> {
    let mut out = String::new();
    draw(chart, &mut out).map_err(|e| anyhow::anyhow!("drawing the chart {}: {e}", chart.id))?;
    Ok(out)
}

fn draw(chart: &Chart, out: &mut String) -> Result<(), Box<dyn std::error::Error>> {
    let primary: Vec<&super::Series> = chart.series.iter().filter(|s| !s.secondary).collect();
    let secondary: Vec<&super::Series> = chart
        .series
        .iter()
        .filter(|s| s.secondary && chart.y2.is_some())
        .collect();
    let x = AxisMap::fit(
        &chart.x,
        chart
            .series
            .iter()
            .filter(|s| s.fit)
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(chart.bands.iter().flat_map(|b| [b.from, b.to]))
            .chain(chart.vlines.iter().map(|r| r.at)),
        false,
    );
    let y = AxisMap::fit(
        &chart.y,
        primary
            .iter()
            .filter(|s| s.fit)
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .chain(chart.hlines.iter().map(|r| r.at)),
        true,
    );
    let y2_axis = chart.y2.clone().unwrap_or_else(|| Axis {
        label: String::new(),
        scale: Scale::Linear,
        from_zero: true,
        integer: false,
    });
    let y2 = AxisMap::fit(
        &y2_axis,
        secondary
            .iter()
            .filter(|s| s.fit)
            .flat_map(|s| s.points.iter().map(|p| p.1)),
        true,
    );

    let entries = legend(chart);
    // The same frame for every chart, wide enough for most labels, so that charts over the
    // same time axis (the two of a timeline) line up one above the other.
    let label_width = |map: &AxisMap| {
        let chars = map
            .ticks
            .iter()
            .map(|t| map.label(*t).chars().count())
            .max()
            .unwrap_or(1);
        ((chars as f64 * CHAR_PX + 34.0) as u32).max(MIN_LABEL_AREA)
    };
    let legend_width = LEGEND_WIDTH;

    let root = SVGBackend::with_string(out, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot_area, legend_area) = root.split_horizontally(SIZE.0 - legend_width);
    let mut builder = ChartBuilder::on(&plot_area);
    builder
        .caption(&chart.title, ("sans-serif", TITLE_FONT))
        .margin(14)
        .x_label_area_size(52)
        .y_label_area_size(label_width(&y));
    if chart.y2.is_some() {
        builder.right_y_label_area_size(label_width(&y2));
    } else if matches!(
        chart.kind,
        Kind::TimelineLatency | Kind::ServerPauses | Kind::ServerLatency
    ) {
        // Room for the right-hand axis of the throughput chart drawn below it.
        builder.right_y_label_area_size(MIN_LABEL_AREA);
    }
    let coord = |map: &AxisMap| Ticked(map.clone());
    let mut cc = builder
        .build_cartesian_2d(coord(&x), coord(&y))?
        .set_secondary_coord(coord(&x), coord(&y2));

    let grid = RGBColor(215, 215, 215);
    let light_grid = RGBColor(238, 238, 238);
    let x_label = |v: &f64| x.label(*v);
    let y_label = |v: &f64| y.label(*v);
    cc.configure_mesh()
        .x_desc(chart.x.label.as_str())
        .y_desc(chart.y.label.as_str())
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .axis_desc_style(("sans-serif", DESC_FONT))
        .label_style(("sans-serif", LABEL_FONT))
        .bold_line_style(grid)
        .light_line_style(light_grid)
        .draw()?;
    if let Some(axis) = &chart.y2 {
        let y2_label = |v: &f64| y2.label(*v);
        cc.configure_secondary_axes()
            .y_desc(axis.label.as_str())
            .y_label_formatter(&y2_label)
            .axis_desc_style(("sans-serif", DESC_FONT))
            .label_style(("sans-serif", LABEL_FONT))
            .draw()?;
    }

    // Shaded spans first, under everything else.
    for band in &chart.bands {
        let (Some(from), Some(to)) = (x.coord(band.from), x.coord(band.to)) else {
            continue;
        };
        cc.draw_series(std::iter::once(Rectangle::new(
            [(from.max(x.lo), y.lo), (to.min(x.hi), y.hi)],
            rgb(band.color).mix(0.13).filled(),
        )))?;
    }
    for rule in &chart.hlines {
        let Some(at) = y.coord(rule.at) else { continue };
        cc.draw_series(DashedLineSeries::new(
            [(x.lo, at), (x.hi, at)],
            7,
            5,
            rgb(rule.color).stroke_width(2),
        ))?;
    }
    for rule in &chart.vlines {
        let Some(at) = x.coord(rule.at) else { continue };
        cc.draw_series(DashedLineSeries::new(
            [(at, y.lo), (at, y.hi)],
            7,
            5,
            rgb(rule.color).stroke_width(2),
        ))?;
    }
    for series in &chart.series {
        let on_y2 = series.secondary && chart.y2.is_some();
        let y_map = if on_y2 { &y2 } else { &y };
        let points: Vec<(f64, f64)> = if series.fit {
            series
                .points
                .iter()
                .filter_map(|&(px, py)| Some((x.coord(px)?, y_map.coord(py)?)))
                .collect()
        } else {
            // An overlay: clipped to the frame the other series set.
            series
                .points
                .iter()
                .filter_map(|&(px, py)| {
                    let px = x.coord(px)?;
                    let py = y_map.coord(py).unwrap_or(y_map.lo);
                    (x.lo..=x.hi)
                        .contains(&px)
                        .then(|| (px, py.clamp(y_map.lo, y_map.hi)))
                })
                .collect()
        };
        let color = rgb(series.color);
        let line = color.stroke_width(2);
        macro_rules! draw_on {
            ($elements:expr) => {
                if on_y2 {
                    cc.draw_secondary_series($elements)?;
                } else {
                    cc.draw_series($elements)?;
                }
            };
        }
        match series.style {
            Style::Line => draw_on!(LineSeries::new(points.clone(), line)),
            Style::LineWithPoints => {
                draw_on!(LineSeries::new(points.clone(), line));
                draw_on!(points.iter().map(|&p| Circle::new(p, 3, color.filled())));
            }
            Style::Points => {
                draw_on!(points
                    .iter()
                    .map(|&p| Circle::new(p, 4, color.stroke_width(2))))
            }
            Style::Dashed => draw_on!(DashedLineSeries::new(points.clone(), 7, 5, line)),
        }
    }

    // The legend, in its own column.
    let text_style = TextStyle::from(("sans-serif", LEGEND_FONT).into_font())
        .color(&RGBColor(30, 30, 30))
        .pos(Pos::new(HPos::Left, VPos::Center));
    let mut top = 48;
    for (swatch, text) in &entries {
        let y_mid = top + 8;
        let (x0, x1) = (6, 34);
        match swatch {
            Swatch::Line(c) => {
                legend_area.draw(&PathElement::new(
                    vec![(x0, y_mid), (x1, y_mid)],
                    rgb(*c).stroke_width(2),
                ))?;
            }
            Swatch::LineWithPoint(c) => {
                legend_area.draw(&PathElement::new(
                    vec![(x0, y_mid), (x1, y_mid)],
                    rgb(*c).stroke_width(2),
                ))?;
                legend_area.draw(&Circle::new((20, y_mid), 3, rgb(*c).filled()))?;
            }
            Swatch::Point(c) => {
                legend_area.draw(&Circle::new((20, y_mid), 4, rgb(*c).stroke_width(2)))?;
            }
            Swatch::Dashed(c) => {
                legend_area.draw(&DashedPathElement::new(
                    vec![(x0, y_mid), (x1, y_mid)],
                    7,
                    5,
                    rgb(*c).stroke_width(2),
                ))?;
            }
            Swatch::Area(c) => {
                legend_area.draw(&Rectangle::new(
                    [(x0, y_mid - 7), (x1, y_mid + 7)],
                    rgb(*c).mix(0.25).filled(),
                ))?;
            }
        }
        for (i, line) in wrap(text).iter().enumerate() {
            legend_area.draw(&Text::new(
                line.clone(),
                (42, y_mid + i as i32 * 17),
                text_style.clone(),
            ))?;
            top += 17;
        }
        top += 7;
    }
    root.present()?;
    Ok(())
}

/// The SVG for inlining in an HTML page: without the XML namespace (HTML knows `<svg>`, and
/// the page must name no URL), scaling to the page's width.
pub fn inline(svg: &str) -> String {
    let (w, h) = SIZE;
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
        .replacen(
            &format!("<svg width=\"{w}\" height=\"{h}\""),
            "<svg class=\"chart\" role=\"img\"",
            1,
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::axes::percentile_label;
    use crate::report::charts::{tests::fixture_run, timeline, Color, Series};

    fn labels(map: &AxisMap) -> Vec<String> {
        map.ticks.iter().map(|t| map.label(*t)).collect()
    }

    fn axis(scale: Scale) -> Axis {
        Axis {
            label: "x".into(),
            scale,
            from_zero: true,
            integer: false,
        }
    }

    #[test]
    fn log_axes_end_on_1_2_5_values_and_label_them_in_the_axis_unit() {
        let map = AxisMap::fit(&axis(Scale::Log), [1.03, 71.8], true);
        assert_eq!(
            labels(&map),
            ["0.5", "1", "2", "5", "10", "20", "50", "100"]
        );
        assert_eq!(map.label(map.lo), "0.5");
        // The range of Azul's capacity and cost article's charts, 16 ms to 2 000 000 ms: decades
        // only.
        let map = AxisMap::fit(&axis(Scale::Log), [16.4, 2_028_995.0], true);
        assert_eq!(
            labels(&map),
            ["10", "100", "1 000", "10 000", "100 000", "1 000 000"]
        );
        assert!(map.light.len() > 20);
        // Values a log axis cannot show are left out; a narrow range is widened to a decade.
        let map = AxisMap::fit(&axis(Scale::Log), [0.0, -1.0, 3.0, 3.2], true);
        assert!(map.hi - map.lo >= 0.99, "{map:?}");
        assert_eq!(map.coord(0.0), None);
    }

    #[test]
    fn percentile_axes_read_90_99_999() {
        let map = AxisMap::fit(&axis(Scale::Percentile), [0.0, 0.5, 0.99994], false);
        assert_eq!(
            labels(&map),
            ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"]
        );
        assert_eq!(map.coord(0.999).map(|c| (c * 1e9).round() / 1e9), Some(3.0));
        assert_eq!(map.coord(1.0), None);
        assert_eq!(percentile_label(2.0f64.log10()), "50%");
    }

    #[test]
    fn linear_axes_take_nice_steps() {
        let map = AxisMap::fit(&axis(Scale::Linear), [2800.0, 10_900.0], false);
        assert_eq!(
            labels(&map),
            ["0", "2 000", "4 000", "6 000", "8 000", "10 000", "12 000"]
        );
        // A vertical axis keeps its top point off the frame.
        let map = AxisMap::fit(&axis(Scale::Linear), [1000.0], true);
        assert!(map.hi > 1000.0);
        // Counts get whole ticks.
        let counts = Axis {
            integer: true,
            ..axis(Scale::Linear)
        };
        let map = AxisMap::fit(&counts, [0.0, 0.0], true);
        assert!(map.ticks.iter().all(|t| t.fract() == 0.0), "{map:?}");
    }

    #[test]
    fn a_chart_draws_as_svg_with_its_title_axes_and_legend() {
        let run = fixture_run();
        let figures = crate::figures::Timeline::load(&run);
        let mut charts = timeline(&run, &figures, "a <b>\"run\"</b> & more");
        let mut chart = charts.remove(0);
        chart.series.push(Series {
            name: "<script>alert(1)</script>".into(),
            color: Color(1, 2, 3),
            style: Style::Points,
            points: vec![(1.0, 1.0)],
            secondary: false,
            fit: true,
        });
        let svg = svg(&chart).unwrap();
        assert!(
            svg.starts_with("<svg width=\"1000\" height=\"440\""),
            "{}",
            &svg[..100]
        );
        assert!(svg.contains("Latency per interval: a &lt;b&gt;"));
        assert!(!svg.contains("<b>") && !svg.contains("<script>"));
        for text in [
            "time since the start of the run (s)",
            "response time (ms, log scale)",
            "client hiccup (max)",
            "warmup (not judged)",
            "SLA: p99.9 &lt; 100 ms",
            "&lt;script&gt;alert(1)&lt;/script&gt;",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        let inline = inline(&svg);
        assert!(inline.starts_with("<svg class=\"chart\" role=\"img\" viewBox=\"0 0 1000 440\">"));
        assert!(!inline.contains("http"));
    }

    #[test]
    fn long_legend_texts_wrap() {
        let lines =
            wrap("capacity-of-a-very-long-configuration-name-that-goes-on capacity: 5 200/s");
        assert!(
            lines.iter().all(|l| l.chars().count() <= LEGEND_LINE_CHARS),
            "{lines:?}"
        );
        assert_eq!(
            lines.concat().replace(' ', ""),
            "capacity-of-a-very-long-configuration-name-that-goes-oncapacity:5200/s"
        );
    }
}
