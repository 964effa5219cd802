//! Chart 9: a vector run's recall per interval, the mean and the first percentile of its
//! measured ANN queries' answers (histograms.hlog's `<op>.recall`), over the time axis of the
//! run's timeline, warmup and failing windows shaded alike.

use super::common::{line_style, timeline_bands};
use super::model::{Axis, Chart, Color, Kind, Series};
use crate::figures::Timeline;
use crate::results::run_dir::RunData;

/// The mean's colour.
const MEAN_BLUE: Color = Color(31, 119, 180);
/// The first percentile's colour: the low tail, as the latency charts' upper ones.
const P1_ORANGE: Color = Color(255, 127, 14);

/// The recall of `run`'s measured ANN queries per interval, from its figures; `None` for a
/// run without them.
pub fn recall_timeline(run: &RunData, figures: &Timeline, title: &str) -> Option<Chart> {
    let points: Vec<(f64, f64, f64)> = figures
        .intervals
        .iter()
        .filter_map(|i| {
            let r = i.recall.as_ref()?;
            Some((i.end_s, r.mean, r.p1))
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    let k = run.vectors.as_ref().map(|v| v.top_k);
    let name = k.map_or("recall".to_string(), |k| format!("recall@{k}"));
    let mut chart = Chart::new(
        Kind::TimelineRecall,
        format!("timeline-recall-{}", run.label),
        format!("Recall per interval: {title}"),
        Axis::linear("time since the start of the run (s)"),
        Axis::linear(format!("{name} (share of the exact neighbours found)")),
    );
    let style = line_style(points.len());
    chart.series = vec![
        Series {
            name: "mean".to_string(),
            color: MEAN_BLUE,
            style,
            points: points.iter().map(|p| (p.0, p.1)).collect(),
            secondary: false,
            fit: true,
        },
        Series {
            name: "p1 (1% of answers below)".to_string(),
            color: P1_ORANGE,
            style,
            points: points.iter().map(|p| (p.0, p.2)).collect(),
            secondary: false,
            fit: true,
        },
    ];
    chart.bands = timeline_bands(figures, "warmup (not shown)");
    chart.caption = format!(
        "Each point is one measured interval (plotted at its end): the mean {name} of the ANN \
         queries answered in it, and the recall that 1% of them fell below. A query's recall \
         is the share of its exact nearest neighbours its answer held; a failed query counts \
         0, so errors pull both lines down. The warmup's queries are not shown."
    );
    Some(chart)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::tests::fixture_run;
    use crate::results::summary::Recall;

    fn recall(mean: f64, p1: f64) -> Option<Recall> {
        Some(Recall {
            requests: 100,
            mean,
            p1,
            p5: p1,
            p50: 1.0,
            min: 0.0,
        })
    }

    #[test]
    fn chart_9_draws_recall_only_for_a_run_with_it() {
        let run = fixture_run();
        let mut figures = Timeline::load(&run);
        assert!(
            recall_timeline(&run, &figures, "run").is_none(),
            "no recall, no chart"
        );
        // The fixture's warmup is its first five intervals; recall in the next two.
        figures.intervals[5].recall = recall(0.97, 0.8);
        figures.intervals[6].recall = recall(0.95, 0.7);
        let chart = recall_timeline(&run, &figures, "run").unwrap();
        assert_eq!(chart.kind, Kind::TimelineRecall);
        assert_eq!(chart.title, "Recall per interval: run");
        let mean = chart.series_named("mean").unwrap();
        assert_eq!(mean.points, [(6.0, 0.97), (7.0, 0.95)]);
        let p1 = chart.series_named("p1 (1% of answers below)").unwrap();
        assert_eq!(p1.points, [(6.0, 0.8), (7.0, 0.7)]);
        assert_eq!(chart.y.label, "recall (share of the exact neighbours found)");
        assert_eq!((chart.bands[0].from, chart.bands[0].to), (0.0, 5.0));
    }
}
