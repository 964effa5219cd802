//! Chart 10: an interval search's evidence (`--goal interval`, decision 0019): the share of
//! the SLA's windows that failed at each attempted rate, every trial's windows pooled, with
//! the exceed ratio the capacity is defined by and the bounds the search confirmed.

use super::model::{palette, Axis, Band, Chart, Kind, Rule, Series, Style, SLA_RED};
use crate::capacity::dir::SearchData;
use crate::capacity::interval::trial_windows;
use crate::format::format_rate;

/// The chart of one interval search; `None` for a strict search or one without trials.
pub fn windows_vs_rate(search: &SearchData) -> Option<Chart> {
    let interval = search.summary.interval.as_ref()?;
    // (rate, windows, failed), by rate.
    let mut rates: Vec<(f64, u32, u32)> = Vec::new();
    for trial in &search.trials {
        let (windows, failed) = trial_windows(&trial.record);
        let rate = trial.record.rate_per_s;
        match rates.iter_mut().find(|(r, _, _)| (*r - rate).abs() < 1e-6) {
            Some(row) => {
                row.1 += windows;
                row.2 += failed;
            }
            None => rates.push((rate, windows, failed)),
        }
    }
    if rates.is_empty() {
        return None;
    }
    rates.sort_by(|a, b| a.0.total_cmp(&b.0));
    let percent = |f: f64| format!("{}%", (f * 1000.0).round() / 10.0);
    let mut chart = Chart::new(
        Kind::WindowsVsRate,
        format!("windows-vs-rate-{}", super::slug(&search.label)),
        format!("Failing windows against rate: {}", search.label),
        Axis::linear("attempted rate (requests/s)"),
        Axis::linear("windows failing the SLA (%)"),
    );
    chart.series.push(Series {
        name: "share of the rate's windows that failed".to_string(),
        color: palette(0),
        style: Style::LineWithPoints,
        points: rates
            .iter()
            .map(|&(rate, windows, failed)| (rate, 100.0 * f64::from(failed) / f64::from(windows)))
            .collect(),
        secondary: false,
        fit: true,
    });
    chart.hlines.push(Rule {
        name: format!("exceed ratio {}", percent(interval.goal.exceed_ratio)),
        at: 100.0 * interval.goal.exceed_ratio,
        color: SLA_RED,
    });
    let confidence = percent(interval.confidence);
    if let Some(lower) = interval.lower_bound_per_s {
        chart.vlines.push(Rule {
            name: format!("lower bound {}/s", format_rate(lower)),
            at: lower,
            color: palette(1),
        });
    }
    if let Some(upper) = interval.upper_bound_per_s {
        chart.vlines.push(Rule {
            name: format!("upper bound {}/s", format_rate(upper)),
            at: upper,
            color: palette(3),
        });
    }
    if let (Some(lower), Some(upper)) = (interval.lower_bound_per_s, interval.upper_bound_per_s) {
        chart.bands.push(Band {
            name: format!("the capacity at {confidence} confidence"),
            from: lower,
            to: upper,
            color: palette(1),
        });
    }
    let counts: Vec<String> = rates
        .iter()
        .map(|&(rate, windows, failed)| format!("{}/s {failed} of {windows}", format_rate(rate)))
        .collect();
    chart.caption = format!(
        "Each point is one attempted rate: the share of the SLA's windows that failed, over \
         every trial at that rate, short and full ({}). The capacity is the highest rate at \
         which at most {} of the windows fail (the red line); the bounds are where the \
         windows confirm it at {confidence} confidence, correlated windows of one trial \
         counted as fewer (docs/capacity.md). A point near the red line rests on few windows \
         unless the counts say otherwise.",
        counts.join(", "),
        percent(interval.goal.exceed_ratio)
    );
    Some(chart)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::interval::IntervalGoal;
    use crate::capacity::sim::stochastic;
    use crate::capacity::{Status, Store};

    #[test]
    fn a_strict_search_has_no_such_chart() {
        let search = SearchData::load(&crate::fixtures::capacity_fixture()).unwrap();
        assert!(search.summary.interval.is_none());
        assert!(windows_vs_rate(&search).is_none());
    }

    #[test]
    fn each_rate_pools_its_trials_windows_and_the_bounds_are_marked() {
        let goal = IntervalGoal {
            exceed_ratio: 0.1,
            confidence: 0.9,
            width: 0.1,
            windows_per_trial: 6,
            window_correlation: 0.15,
            max_trials: crate::capacity::interval::MAX_TRIALS,
        };
        let dir = tempfile::tempdir().unwrap();
        let method = stochastic::Method::Interval(goal);
        let (_, records) = stochastic::search_with_records(
            &method,
            stochastic::SCENARIOS[0],
            7,
            goal.exceed_ratio,
        );
        let mut store = Store::create(dir.path(), serde_json::json!({})).unwrap();
        for record in records {
            store.append(record).unwrap();
        }
        store.set_interval(Some(goal));
        store.write_summary(1, Status::Complete).unwrap();
        let search = SearchData::load(dir.path()).unwrap();
        let chart = windows_vs_rate(&search).expect("an interval search has the chart");
        let interval = search.summary.interval.as_ref().unwrap();
        // One point per attempted rate, its share the pooled windows'.
        let points = &chart.series[0].points;
        let mut rates: Vec<f64> = search.trials.iter().map(|t| t.record.rate_per_s).collect();
        rates.sort_by(f64::total_cmp);
        rates.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
        assert_eq!(points.len(), rates.len());
        for &(rate, share) in points {
            let (windows, failed) = search
                .trials
                .iter()
                .filter(|t| (t.record.rate_per_s - rate).abs() < 1e-6)
                .map(|t| trial_windows(&t.record))
                .fold((0, 0), |(w, f), (tw, tf)| (w + tw, f + tf));
            assert!((share - 100.0 * f64::from(failed) / f64::from(windows)).abs() < 1e-9);
        }
        assert_eq!(chart.hlines[0].at, 10.0);
        let marked: Vec<f64> = chart.vlines.iter().map(|v| v.at).collect();
        let bounds: Vec<f64> = [interval.lower_bound_per_s, interval.upper_bound_per_s]
            .into_iter()
            .flatten()
            .collect();
        assert!(!bounds.is_empty(), "the simulated search confirmed a bound");
        assert_eq!(marked, bounds);
        assert_eq!(chart.bands.len(), usize::from(bounds.len() == 2));
    }
}
