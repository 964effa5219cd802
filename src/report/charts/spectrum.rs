//! Chart 3: percentile spectra, x = 1/(1−p) on a log scale, with the SLA as a step line
//! (Azul's HotSpot and Zing study, jHiccup's charts).

use super::common::latency_kind;
use super::labels::{term_words, threshold_ms};
use super::model::{palette, Axis, Chart, Kind, Scale, Series, Style, SLA_RED};
use crate::capacity::dir::SearchData;
use crate::format::format_number;
use crate::format::format_rate;
use crate::results::run_dir::RunData;
use crate::sla::{Metric, Sla};

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
                    Metric::Mean
                    | Metric::Errors
                    | Metric::Recall(_)
                    | Metric::RecallPercentile(_) => None,
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
        let sla = run.sla.clone();
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
        let sla = search.sla.clone();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::tests::{fixture_run, fixture_search};

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
}
