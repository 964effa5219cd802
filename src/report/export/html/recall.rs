//! A vector run's recall on its page: what it searched and how the exact neighbours were
//! found (vectors.json), each ANN op type's recall over the measured part (summary.json) and
//! the chart of recall per interval (histograms.hlog). A run without recall shows none of it.

use super::page::{table, Page};
use crate::figures::Timeline;
use crate::format::{self, format_number};
use crate::report::charts;
use crate::results::run_dir::RunData;
use crate::workload::vector::VectorFacts;

/// The recall part of a run's section, when the run measured recall or holds vectors.json.
pub(super) fn recall_part(
    page: &mut Page,
    run: &RunData,
    figures: &Timeline,
) -> anyhow::Result<()> {
    let ops: Vec<_> = run
        .summary
        .iter()
        .flat_map(|s| &s.ops)
        .filter_map(|o| Some((o.op.as_str(), o.recall.as_ref()?)))
        .collect();
    let chart = charts::recall_timeline(run, figures, &run.label);
    if ops.is_empty() && chart.is_none() && run.vectors.is_none() {
        return Ok(());
    }
    page.h3("Recall of the ANN queries");
    if let Some(facts) = &run.vectors {
        page.para(&vectors_sentence(facts));
    }
    if !ops.is_empty() {
        let k = run.vectors.as_ref().map(|v| v.top_k);
        page.para(&format!(
            "Over the measured part: a query's {} is the share of its exact nearest neighbours \
             its answer held, a failed query's 0. p1 is the recall 1% of the answers fell \
             below.",
            k.map_or("recall".to_string(), |k| format!("recall@{k}"))
        ));
        let header = ["Operation", "Answers", "mean", "p1", "p5", "p50", "min"];
        let rows: Vec<(Vec<String>, &str)> = ops
            .iter()
            .map(|(op, r)| {
                let mut cells = vec![op.to_string(), format::group_thousands(r.requests)];
                cells.extend([r.mean, r.p1, r.p5, r.p50, r.min].map(|v| format!("{v:.3}")));
                (cells, "")
            })
            .collect();
        let numeric = [false, true, true, true, true, true, true];
        page.body.push_str(&table(&header, &rows, &numeric));
    }
    if let Some(chart) = chart {
        page.figure(chart)?;
    }
    Ok(())
}

/// vectors.json in words.
fn vectors_sentence(f: &VectorFacts) -> String {
    let truth = if f.truth == "file" {
        "were read from the ground truth file".to_string()
    } else {
        format!(
            "were worked out exactly by the client before the run, in {} s",
            format_number(f.truth_s)
        )
    };
    format!(
        "The table holds {} vectors of {} dimensions ({}), compared by {} similarity, made \
         or read in {} s; {} query vectors each ask for the {} nearest (k = {}). Each \
         query's exact {} nearest neighbours {truth} (vectors.json).",
        format::group_thousands(f.rows),
        f.dimensions,
        f.source,
        f.similarity,
        format_number(f.load_s),
        format::group_thousands(f.queries as u64),
        f.top_k,
        f.top_k,
        f.top_k,
    )
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::time::{Duration, UNIX_EPOCH};

    use crate::fixtures::run_fixture;
    use crate::figures::Timeline;
    use crate::metrics::RECALL_SCALE;
    use crate::report::charts::Kind;
    use crate::report::compared::Compared;
    use crate::report::export::html::tests::copy_dir;
    use crate::report::load::Input;
    use crate::results::hlog::HlogWriter;
    use crate::stats::new_histogram;

    fn page_of(dir: &std::path::Path) -> (String, Vec<Kind>) {
        let input = Input::load(&[dir.to_path_buf()]).unwrap();
        let (html, charts) = super::super::render(&input, &Compared::of(&input), None).unwrap();
        (html, charts.iter().map(|c| c.chart.kind).collect())
    }

    /// The run fixture as a vector run: vectors.json, the reads' recall in summary.json and
    /// two measured intervals' `read.recall` in histograms.hlog.
    #[test]
    fn recall_of_a_vector_run_shows_on_its_page_from_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        copy_dir(&run_fixture(), &run);
        let (html, kinds) = page_of(&run);
        assert!(!html.contains("Recall"), "a run without recall shows none");
        assert!(!kinds.contains(&Kind::TimelineRecall));

        fs::write(
            run.join("vectors.json"),
            r#"{"rows":10000,"queries":1000,"dimensions":128,"similarity":"cosine","top_k":10,
               "source":"generated: 64 clusters, seed 1","truth":"computed","truth_s":11.46,
               "load_s":0.07}"#,
        )
        .unwrap();
        let path = run.join("summary.json");
        let mut summary: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        summary["ops"][1]["recall"] = serde_json::json!({
            "requests": 1800, "mean": 0.98067, "p1": 0.8, "p5": 0.9, "p50": 1.0, "min": 0.0
        });
        fs::write(&path, summary.to_string()).unwrap();
        let mut log = HlogWriter::new(Vec::new(), UNIX_EPOCH).unwrap();
        for (at, values) in [(6u64, [1.0, 0.9]), (7, [0.5, 0.7])] {
            let mut h = new_histogram();
            for v in values {
                h.record((v * RECALL_SCALE) as u64).unwrap();
            }
            log.write_interval(Some("read.recall"), Duration::from_secs(at), Duration::from_secs(1), &h)
                .unwrap();
        }
        let written = String::from_utf8(log.into_inner().unwrap()).unwrap();
        let lines: String = written
            .lines()
            .filter(|l| l.starts_with("Tag="))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut hlog = fs::read_to_string(run.join("histograms.hlog")).unwrap();
        hlog.push_str(&lines);
        fs::write(run.join("histograms.hlog"), hlog).unwrap();

        let (html, kinds) = page_of(&run);
        assert!(html.contains("<h3>Recall of the ANN queries</h3>"), "{html}");
        assert!(html.contains(
            "The table holds 10 000 vectors of 128 dimensions (generated: 64 clusters, seed 1), \
             compared by cosine similarity, made or read in 0.07 s; 1 000 query vectors each \
             ask for the 10 nearest (k = 10). Each query&#39;s exact 10 nearest neighbours were \
             worked out exactly by the client before the run, in 11.5 s (vectors.json).</p>"
        ), "{html}");
        assert!(html.contains("a query&#39;s recall@10 is the share"), "{html}");
        assert!(
            html.contains(
                "<td>read</td><td class=\"num\">1 800</td><td class=\"num\">0.981</td>\
                 <td class=\"num\">0.800</td><td class=\"num\">0.900</td>\
                 <td class=\"num\">1.000</td><td class=\"num\">0.000</td>"
            ),
            "{html}"
        );
        assert_eq!(
            kinds,
            [Kind::TimelineLatency, Kind::TimelineThroughput, Kind::TimelineRecall, Kind::Spectrum]
        );
        let input = Input::load(std::slice::from_ref(&run)).unwrap();
        let figures = Timeline::load(&input.runs[0]);
        let chart = crate::report::charts::recall_timeline(&input.runs[0], &figures, "run").unwrap();
        let mean: Vec<(f64, f64)> = chart.series_named("mean").unwrap().points.clone();
        assert_eq!(mean.len(), 2);
        assert_eq!(mean[0].0, 7.0);
        assert!((mean[0].1 - 0.95).abs() < 1e-3 && (mean[1].1 - 0.6).abs() < 1e-3, "{mean:?}");
        assert!(chart.y.label.starts_with("recall@10"));
    }
}

#[cfg(test)]
mod search_tests {
    use std::fs;

    use crate::fixtures::capacity_fixture;
    use crate::report::compared::Compared;
    use crate::report::export::html::tests::copy_dir;
    use crate::report::load::Input;

    fn page_of(dir: &std::path::Path) -> String {
        let input = Input::load(&[dir.to_path_buf()]).unwrap();
        super::super::render(&input, &Compared::of(&input), None).unwrap().0
    }

    /// The search fixture's trials given a mean recall in capacity.json: the capacity table
    /// and the table of whole-run latencies show it per trial.
    #[test]
    fn recall_of_each_trial_shows_on_the_search_page() {
        let dir = tempfile::tempdir().unwrap();
        let search = dir.path().join("search");
        copy_dir(&capacity_fixture(), &search);
        let html = page_of(&search);
        assert!(!html.contains("Recall") && !html.contains("recall"), "none without it");

        let path = search.join("capacity.json");
        let mut file: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        let mut n = 0;
        for row in file["rows"].as_array_mut().unwrap() {
            for trial in row["trials"].as_array_mut().unwrap() {
                n += 1;
                trial["recall"] = serde_json::json!(1.0 - n as f64 / 100.0);
            }
        }
        fs::write(&path, file.to_string()).unwrap();
        let html = page_of(&search);
        assert!(html.contains(">Recall</th>"), "{html}");
        assert!(html.contains(">Mean recall</th>"), "{html}");
        // The first trial's 0.99 in both tables, the last one's too.
        assert_eq!(html.matches("<td class=\"num\">0.990</td>").count(), 2, "{html}");
        let last = format!("<td class=\"num\">{:.3}</td>", 1.0 - n as f64 / 100.0);
        assert_eq!(html.matches(&last).count(), 2, "{html}");
    }
}
