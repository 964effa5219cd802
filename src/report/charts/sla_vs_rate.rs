//! Chart 1: the worst window's value of each SLA term against the attempted rate, one line per
//! configuration, with the SLA's threshold and each capacity marked (Azul's capacity and cost
//! article).

use super::labels::{format_window, term_words, threshold_ms};
use super::model::{palette, Axis, Chart, Kind, Rule, Series, Style, SLA_RED};
use crate::capacity::dir::SearchData;
use crate::format::format_rate;
use crate::results::run_dir::RunData;
use crate::sla::Sla;

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
        let Some(sla) = search.sla.clone() else {
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
            reference = judged.iter().find_map(|r| r.sla.clone());
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
        let mut subject = match &term.op {
            Some(op) => format!("{op} {}", term.metric),
            None => term.metric.to_string(),
        };
        // A term over a window of its own is a chart of its own, named by it.
        let (file, title) = match term.window {
            Some(window) => {
                let window = humantime::format_duration(window).to_string();
                let file = format!("sla-vs-rate-{subject}-{window}");
                subject = format!("{subject} ({window} windows)");
                (
                    file,
                    format!("Worst-window {subject} against attempted rate"),
                )
            }
            None => (
                format!("sla-vs-rate-{subject}"),
                format!("Worst-window {subject} against attempted rate"),
            ),
        };
        let mut chart = Chart::new(
            Kind::SlaVsRate,
            file,
            title,
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
            window = format_window(reference.window_of(term)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::tests::fixture_search;
    use crate::report::charts::Scale;

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
}
