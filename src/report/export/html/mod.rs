//! The HTML report: one self-contained page (inline CSS and SVG, no script, no font or URL
//! from elsewhere) with the charts of [`crate::report::charts`] and the tables a reader
//! needs beside them: the capacity table as the terminal prints it, each run's summary and
//! configuration, the SLA's worst windows, and errors by class with example messages.
//!
//! Every text that comes from a user or a server (workload and directory names, labels,
//! CQL, settings, error messages, paths) goes through [`escape`].
//!
//! [`render`] puts the page together from its parts, one file each:
//! - `page.rs`: the stylesheet, the page being built, tables and [`escape`];
//! - `prose.rs`: the sentences saying what each directory holds, and the headline cards;
//! - `search.rs`: the capacity section and each search's section of trials;
//! - `sweep.rs`: each sweep's section;
//! - `runs.rs`: the runs given, compared;
//! - `run.rs`: each run's own section, with its pauses, maintenance and server figures;
//! - `recall.rs`: a vector run's recall and what it searched;
//! - `tables.rs`: a run's summary, validity, SLA, errors and settings tables.

use std::fmt::Write as _;

use crate::format::format_rate;
use crate::report::compared::Compared;
use crate::report::load::Input;

mod page;
mod prose;
mod recall;
mod run;
mod runs;
mod search;
mod sweep;
mod tables;
mod validation;

pub use page::{escape, PlacedChart, CSS};
use page::Page;
use prose::{run_card, run_sentence, search_card, search_sentence, sweep_sentence};
use run::run_section;
use runs::compared_section;
use search::{capacity_section, search_section};
use sweep::sweep_section;

/// The page's title when none is given.
fn default_title(input: &Input) -> String {
    if let ([sweep], [], []) = (
        input.sweeps.as_slice(),
        input.searches.as_slice(),
        input.runs.as_slice(),
    ) {
        return format!(
            "Concurrency sweep of {}: {}",
            sweep.file.workload, sweep.label
        );
    }
    if !input.sweeps.is_empty() {
        let labels: Vec<&str> = input
            .sweeps
            .iter()
            .map(|s| s.label.as_str())
            .chain(input.searches.iter().map(|s| s.label.as_str()))
            .chain(input.runs.iter().map(|r| r.label.as_str()))
            .collect();
        return format!("Comparison: {}", labels.join(", "));
    }
    match (input.searches.as_slice(), input.runs.as_slice()) {
        ([search], []) => format!(
            "Capacity of {}: {}",
            search.workload().unwrap_or_else(|| "a workload".into()),
            search.label
        ),
        ([], [run]) => {
            let how = match (run.attempted_rate(), run.concurrency()) {
                (Some(r), _) => format!(" at {}/s", format_rate(r)),
                (None, Some(c)) => format!(" with {c} in flight"),
                _ => String::new(),
            };
            format!(
                "Run of {}{how}: {}",
                run.workload().unwrap_or_else(|| "a workload".into()),
                run.label
            )
        }
        (searches, runs) => {
            let labels: Vec<&str> = searches
                .iter()
                .map(|s| s.label.as_str())
                .chain(runs.iter().map(|r| r.label.as_str()))
                .collect();
            format!("Comparison: {}", labels.join(", "))
        }
    }
}

/// The whole page, and its charts.
pub fn render(
    input: &Input,
    compared: &Compared,
    title: Option<&str>,
) -> anyhow::Result<(String, Vec<PlacedChart>)> {
    let title = title.map_or_else(|| default_title(input), str::to_string);
    let mut page = Page {
        body: String::new(),
        charts: Vec::new(),
        toc: Vec::new(),
    };

    capacity_section(&mut page, input, compared)?;

    for (n, search) in input.searches.iter().enumerate() {
        search_section(&mut page, search, n)?;
    }

    for (n, sweep) in input.sweeps.iter().enumerate() {
        sweep_section(&mut page, sweep, n)?;
    }

    compared_section(&mut page, &input.runs, compared)?;

    let alone = input.runs.len() == 1 && input.searches.is_empty();
    for (n, run) in input.runs.iter().enumerate() {
        run_section(&mut page, run, n, alone)?;
    }

    let mut notes: Vec<String> = Vec::new();
    for search in &input.searches {
        notes.extend(
            search
                .notes
                .iter()
                .map(|n| format!("{}: {n}", search.label)),
        );
        for run in search.trials.iter().filter_map(|t| t.run.as_ref()) {
            notes.extend(
                run.notes
                    .iter()
                    .map(|n| format!("{} / {}: {n}", search.label, run.label)),
            );
        }
    }
    for run in &input.runs {
        notes.extend(run.notes.iter().map(|n| format!("{}: {n}", run.label)));
    }
    for sweep in &input.sweeps {
        notes.extend(sweep.notes.iter().map(|n| format!("{}: {n}", sweep.label)));
    }
    if !notes.is_empty() {
        page.section("notes", "Notes on the files");
        for note in notes {
            page.note(&note);
        }
    }

    // The header comes last: it lists the sections.
    let mut head = String::new();
    let _ = writeln!(
        head,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"headroom {}\">\n<title>{}</title>\n<style>{CSS}</style>\n\
         </head>\n<body>\n<header class=\"top\">\n<p class=\"kicker\">headroom report</p>\n<h1>{}</h1>",
        env!("CARGO_PKG_VERSION"),
        escape(&title),
        escape(&title)
    );
    let several = input.searches.len() + input.runs.len() + input.sweeps.len() > 1;
    let sentences = input
        .searches
        .iter()
        .map(|s| (&s.label, search_sentence(s)))
        .chain(input.sweeps.iter().map(|s| (&s.label, sweep_sentence(s))))
        .chain(input.runs.iter().map(|r| (&r.label, run_sentence(r))));
    for (label, sentence) in sentences {
        let sentence = if several {
            format!("{label}: {sentence}")
        } else {
            sentence
        };
        let _ = writeln!(head, "<p class=\"tested\">{}</p>", escape(&sentence));
    }
    head.push_str("<div class=\"verdicts\">\n");
    for search in &input.searches {
        head.push_str(&search_card(search));
        head.push('\n');
    }
    for run in &input.runs {
        head.push_str(&run_card(run));
        head.push('\n');
    }
    head.push_str("</div>\n");
    if page.toc.len() > 1 {
        head.push_str("<nav class=\"toc\" aria-label=\"Contents\"><ol>\n");
        for (id, heading) in &page.toc {
            let _ = writeln!(head, "<li><a href=\"#{id}\">{}</a></li>", escape(heading));
        }
        head.push_str("</ol></nav>\n");
    }
    head.push_str("</header>\n<main>\n");

    let mut html = head;
    html.push_str(&page.body);
    let mut dirs: Vec<String> = input
        .searches
        .iter()
        .map(|s| s.dir.display().to_string())
        .collect();
    dirs.extend(input.sweeps.iter().map(|s| s.dir.display().to_string()));
    dirs.extend(input.runs.iter().map(|r| r.dir.display().to_string()));
    let _ = write!(
        html,
        "</main>\n<footer>Made by headroom {} from {}. Every chart's data comes from the \
         files in these directories: histograms.hlog, intervals.csv, the .hgrm files, \
         summary.json, capacity.json and sweep.json.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        escape(&dirs.join(", "))
    );
    Ok((html, page.charts))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::fixtures::{capacity_fixture, run_fixture, sweep_fixture};
    use crate::report::charts;
    use crate::report::charts::tests::closed_loop_runs;
    use crate::sweep::table as sweep_table;

    fn load(dirs: &[PathBuf]) -> Input {
        Input::load(dirs).unwrap()
    }

    /// The page of `input`, with the comparisons a report makes of it.
    fn render(input: &Input, title: Option<&str>) -> anyhow::Result<(String, Vec<PlacedChart>)> {
        super::render(input, &Compared::of(input), title)
    }

    /// The page must stand alone: nothing fetched, nothing run.
    fn assert_self_contained(html: &str) {
        for forbidden in [
            "http://",
            "https://",
            "<script",
            "<link",
            "<img",
            "<iframe",
            "<object",
            "<embed",
            "@import",
            "@font-face",
            "url(",
        ] {
            assert!(!html.contains(forbidden), "the page contains {forbidden}");
        }
    }

    fn count(html: &str, what: &str) -> usize {
        html.matches(what).count()
    }

    /// The headings of the page, in order.
    fn headings(html: &str, tag: &str) -> Vec<String> {
        let open = format!("<{tag}");
        html.split(&open)
            .skip(1)
            .filter_map(|rest| {
                let start = rest.find('>')? + 1;
                let end = rest.find(&format!("</{tag}>"))?;
                Some(rest[start..end].to_string())
            })
            .collect()
    }

    #[test]
    fn a_run_report_has_its_verdict_charts_and_tables() {
        let (html, charts) = render(&load(&[run_fixture()]), None).unwrap();
        assert_self_contained(&html);
        assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
        assert!(html.contains("<meta charset=\"utf-8\">"));
        assert!(html.contains("@media print"));
        assert_eq!(headings(&html, "h1"), ["Run of timeseries at 1 000/s: run"]);
        assert_eq!(headings(&html, "h2"), ["Run run"]);
        assert_eq!(
            headings(&html, "h3"),
            [
                "Summary",
                "Service level: p99.9&lt;100ms, max&lt;50ms, read:p99&lt;5ms, window=5s",
                "Errors by class",
                "Configuration"
            ]
        );
        assert!(html.contains("<div class=\"big\">PASS</div>"));
        // A single section needs no table of contents.
        assert!(!html.contains("<nav"));
        // The timeline (latency, throughput) and the spectrum.
        let kinds: Vec<charts::Kind> = charts.iter().map(|c| c.chart.kind).collect();
        assert_eq!(
            kinds,
            [
                charts::Kind::TimelineLatency,
                charts::Kind::TimelineThroughput,
                charts::Kind::Spectrum
            ]
        );
        assert_eq!(count(&html, "<figure"), 3);
        assert_eq!(count(&html, "<svg class=\"chart\""), 3);
        assert_eq!(count(&html, "<figcaption>Figure "), 3);
        // The summary (3 rows per op), the SLA's terms; the settings as a grid.
        assert_eq!(count(&html, "<table>"), 2);
        assert_eq!(count(&html, "<tr class=\"sub\">"), 4);
        assert!(html.contains("<td>read:p99&lt;5ms</td>"));
        assert!(html.contains("<dt>workload.consistency</dt><dd>LOCAL_ONE</dd>"));
        assert!(html.contains("No request failed in the measured part."));
        assert!(
            html.contains("<pre><code>./target/debug/headroom run timeseries -r 0.2 --rate 1000")
        );
        // Chart ids are numbered in page order.
        let ids: Vec<&str> = charts.iter().map(|c| c.chart.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "01-timeline-latency-run",
                "02-timeline-throughput-run",
                "03-spectrum-run"
            ]
        );
    }

    #[test]
    fn a_capacity_report_has_the_table_the_charts_and_the_timelines_that_tell() {
        let (html, charts) = render(&load(&[capacity_fixture()]), None).unwrap();
        assert_self_contained(&html);
        assert_eq!(headings(&html, "h1"), ["Capacity of keyvalue: capacity"]);
        assert_eq!(
            headings(&html, "h2"),
            ["Capacity", "Trials of capacity", "Notes on the files"]
        );
        assert!(html.contains("<div class=\"big\">5 200/s</div>"));
        assert!(html.contains("capacity of capacity under p99&lt;20ms in every 5 s window"));
        assert_eq!(count(&html, "<li><a href=\"#"), 3);
        let kinds: Vec<charts::Kind> = charts.iter().map(|c| c.chart.kind).collect();
        use charts::Kind::*;
        assert_eq!(
            kinds,
            [
                SlaVsRate,
                LatencyVsThroughput,
                Spectrum,
                TimelineLatency,
                TimelineThroughput,
                TimelineLatency,
                TimelineThroughput
            ]
        );
        let h3 = headings(&html, "h3");
        assert!(h3.contains(&"Timeline of the trial at 5 200/s, repeat 1 (at the capacity)".into()));
        assert!(h3.contains(
            &"Timeline of the trial at 5 500/s, repeat 1 (the first failing rate)".into()
        ));
        // The capacity table as the terminal prints it: 6 trials, 2 failing.
        assert!(html.contains("<th class=\"num\">p99&lt;20ms</th>"));
        assert!(html.contains("<td class=\"num bad\">71.8 ms ✗</td>"));
        assert_eq!(count(&html, "<tr class=\"fail\">"), 4);
        assert!(html.contains(
            "<p>Capacity: 5 200/s — the highest rate at which every repeat passed (and every \
             lower rate)</p>"
        ));
        assert!(html.contains("<p>Highest achieved throughput: 27 170/s (probe)</p>"));
        // Trials without logs are said to be so.
        assert!(html.contains("capacity / 2 800/s #1: histograms.hlog is missing."));
        // Settings set per trial are not shown as the search's.
        assert!(!html.contains("<dt>run.mode.rate_per_s</dt>"));
        assert!(html.contains("<dt>probe_concurrency</dt><dd>256</dd>"));
    }

    #[test]
    fn configurations_and_closed_loop_runs_are_compared() {
        let dir = tempfile::tempdir().unwrap();
        let second = dir.path().join("zgc");
        copy_dir(&capacity_fixture(), &second);
        let mut input = load(&[capacity_fixture(), second]);
        input.runs = closed_loop_runs(&[(8, 9_000.0), (64, 30_000.0)]);
        let (html, charts) = render(&input, Some("G1 or ZGC?")).unwrap();
        assert_self_contained(&html);
        assert_eq!(headings(&html, "h1"), ["G1 or ZGC?"]);
        let h2 = headings(&html, "h2");
        assert_eq!(
            h2[..5],
            [
                "Capacity",
                "Trials of capacity",
                "Trials of zgc",
                "Runs compared",
                "Run c8"
            ]
        );
        // The two searches compared, the first as the baseline, with the tables of Azul's capacity
        // and cost article.
        assert!(headings(&html, "h3")
            .contains(&"Configurations compared, against capacity".to_string()));
        assert!(html.contains("<p class=\"table-title\">Worst window&#39;s p"));
        assert!(html.contains("<p class=\"table-title\">Change against capacity per"));
        let sla = &charts[0].chart;
        assert_eq!(sla.kind, charts::Kind::SlaVsRate);
        assert_eq!(sla.series.len(), 2);
        assert_eq!(sla.vlines.len(), 2);
        let kinds: Vec<charts::Kind> = charts.iter().map(|c| c.chart.kind).collect();
        assert!(kinds.contains(&charts::Kind::ConcurrencyThroughput));
        assert!(kinds.contains(&charts::Kind::ConcurrencyLatency));
        assert_eq!(count(&html, "<div class=\"card"), 4);
        // Every chart id is unique.
        let mut ids: Vec<&str> = charts.iter().map(|c| c.chart.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), charts.len());
    }

    #[test]
    fn a_sweep_report_has_its_table_and_the_two_charts_of_a_sweep() {
        let input = load(&[sweep_fixture()]);
        let (html, charts) = render(&input, None).unwrap();
        assert_self_contained(&html);
        assert_eq!(
            headings(&html, "h1"),
            ["Concurrency sweep of keyvalue: sweep"]
        );
        assert_eq!(headings(&html, "h2"), ["Concurrency sweep sweep"]);
        let kinds: Vec<charts::Kind> = charts.iter().map(|c| c.chart.kind).collect();
        assert_eq!(
            kinds,
            [
                charts::Kind::ConcurrencyThroughput,
                charts::Kind::LatencyVsThroughput
            ]
        );
        assert_eq!(count(&html, "<figure"), 2);
        assert!(html.contains("id=\"chart-01-sweep-throughput-vs-concurrency-sweep\""));
        assert!(html.contains("id=\"chart-02-sweep-latency-vs-throughput-sweep\""));
        // The table, as the terminal prints it: one row per step.
        assert!(html.contains("<th class=\"num\">p99.9 ms</th>"), "{html}");
        let step = &input.sweeps[0].file.steps[3];
        let row: String = sweep_table::cells(step)[..3]
            .iter()
            .map(|c| format!("<td class=\"num\">{}</td>", escape(c)))
            .collect();
        assert!(html.contains(&format!("<tr>{row}")), "{row}");
        assert!(html.contains("it stopped because every concurrency ran, up to 7"));
        // The run settings each step sets itself are left out.
        assert!(!html.contains("<dt>run.mode.concurrency</dt>"));
        assert!(html.contains("<dt>stable_error</dt><dd>0.02</dd>"));
    }

    const HOSTILE: &str = "<script>alert(\"x\")</script>&'";

    #[test]
    fn text_from_users_and_servers_is_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run <b>one</b> & \"two\"");
        copy_dir(&run_fixture(), &run_dir);
        let edit = |file: &str, change: &dyn Fn(&mut serde_json::Value)| {
            let path = run_dir.join(file);
            let mut value: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
            change(&mut value);
            fs::write(&path, serde_json::to_string(&value).unwrap()).unwrap();
        };
        edit("summary.json", &|s| {
            s["workload"] = HOSTILE.into();
            s["ops"][0]["errors"] = serde_json::json!({ "timeout": 3 });
            s["ops"][0]["error_examples"] = serde_json::json!({
                "timeout": format!("<img src=x onerror=alert(1)> timed out: INSERT INTO {HOSTILE}")
            });
        });
        edit("config.json", &|c| {
            c["workload"]["name"] = HOSTILE.into();
            c["workload"]["keyspace"] = HOSTILE.into();
            c["command_line"] = serde_json::json!(["headroom", "run", HOSTILE]);
        });
        let (html, charts) = render(&load(&[run_dir]), Some(HOSTILE)).unwrap();
        assert_self_contained(&html);
        assert!(!html.contains("<b>one</b>"));
        assert!(!html.contains("<img"));
        assert!(!html.contains("alert(\"x\")"));
        assert!(html.contains(
            "<title>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</title>"
        ));
        assert!(html.contains("run &lt;b&gt;one&lt;/b&gt; &amp; &quot;two&quot;"));
        assert!(html
            .contains("&lt;img src=x onerror=alert(1)&gt; timed out: INSERT INTO &lt;script&gt;"));
        assert!(html.contains("<dt>workload.keyspace</dt><dd>&lt;script&gt;"));
        // The errors table: class, count, share, example.
        assert!(
            html.contains("<td>timeout</td><td class=\"num\">3</td><td class=\"num\">0.019%</td>")
        );
        for placed in &charts {
            assert!(!placed.svg.contains("<b>"), "{}", placed.chart.id);
            assert!(!placed.svg.contains("<script"), "{}", placed.chart.id);
        }
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }

    #[test]
    fn a_run_with_server_samples_draws_them_and_tabulates_each_node() {
        use crate::catalogue::SERVER_SAMPLES_JSONL;
        use crate::metrics::server_samples::ServerSample;
        use crate::metrics::server_tables::{Figure, NodeTables, Unit};
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        copy_dir(&run_fixture(), &run);
        let reading = |at_s: f64, count: u64, p99: f64, note: Option<&str>| ServerSample {
            at_s,
            taken_at: String::new(),
            nodes: vec![NodeTables {
                node: "node1".into(),
                address: "127.0.0.7:9042".into(),
                figures: vec![Figure {
                    name: "local_write_latency".into(),
                    source: "system_views.local_write_latency".into(),
                    unit: Some(Unit::Micros),
                    count: Some(count),
                    p99: Some(p99),
                    ..Figure::default()
                }],
            }],
            notes: note.map(|n| vec![n.to_string()]).unwrap_or_default(),
        };
        let lines: Vec<String> = [
            // The fixture's warmup ends at 5 s: the first reading is left out of the table.
            reading(2.0, 10, 9000.0, None),
            reading(6.0, 100, 1000.0, None),
            reading(
                8.0,
                500,
                5000.0,
                Some("127.0.0.8:9042: system_views.x <timed out>"),
            ),
            reading(10.0, 900, 2000.0, None),
        ]
        .iter()
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
        fs::write(run.join(SERVER_SAMPLES_JSONL), lines.join("\n")).unwrap();
        let (html, charts) = render(&load(&[run]), None).unwrap();
        assert_self_contained(&html);
        assert!(charts
            .iter()
            .any(|c| c.chart.kind == charts::Kind::ServerLatency));
        assert!(html.contains("own latency during the run</h3>"), "{html}");
        // 800 writes in 4 s; p99 1000 / 2000 / 5000 µs.
        assert!(
            html.contains(
                "<td>node1 (127.0.0.7:9042)</td><td>write</td><td class=\"num\">3</td>\
                 <td class=\"num\">1</td><td class=\"num\">2</td>\
                 <td class=\"num\">5</td><td class=\"num\">200</td>"
            ),
            "{html}"
        );
        assert!(html.contains("Reading at 8 s: 127.0.0.8:9042: system_views.x &lt;timed out&gt;"));
    }

    #[test]
    fn a_run_with_pauses_json_shows_its_nodes_pauses_beside_the_latency() {
        use crate::fixtures::{node, pause, pauses_of};
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        copy_dir(&run_fixture(), &run);
        let mut file = pauses_of(vec![node(
            "node1",
            vec![
                pause(2.5, 281.4, "Cleanup"),
                pause(4.0, 34.8, "Pause Young (Normal) (G1 Evacuation Pause)"),
            ],
        )]);
        file.notes
            .push("node2 (127.0.0.6:9042): no pauses recorded: <no GC log>".into());
        fs::write(
            run.join("pauses.json"),
            serde_json::to_string_pretty(&file).unwrap(),
        )
        .unwrap();
        let (html, charts) = render(&load(&[run]), None).unwrap();
        assert_self_contained(&html);
        let kinds: Vec<charts::Kind> = charts.iter().map(|c| c.chart.kind).collect();
        assert_eq!(
            kinds,
            [
                charts::Kind::TimelineLatency,
                charts::Kind::TimelineThroughput,
                charts::Kind::ServerPauses,
                charts::Kind::Spectrum
            ]
        );
        assert_eq!(charts[2].chart.id, "03-server-pauses-run");
        assert!(html.contains("Client latency and server pauses: run"));
        // The node's row: 2 pauses in 10 s (12 a minute), the longest named.
        assert!(
            html.contains("<td>node1 (127.0.0.5:9042)</td><td>g1</td><td class=\"num\">2</td><td class=\"num\">12</td>"),
            "{html}"
        );
        assert!(html.contains("<td>281 ms at 2.5 s: Cleanup</td>"));
        assert!(html.contains(
            "<p class=\"note\">Server pauses: node2 (127.0.0.6:9042): no pauses recorded: \
             &lt;no GC log&gt;</p>"
        ));
    }

    #[test]
    fn a_search_shows_its_pauses_per_rate_and_beside_its_timelines() {
        use crate::fixtures::{node, pause, pauses_of};
        let dir = tempfile::tempdir().unwrap();
        let search = dir.path().join("capacity");
        copy_dir(&capacity_fixture(), &search);
        let trials: Vec<PathBuf> = fs::read_dir(search.join("trials"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        for trial in &trials {
            let file = pauses_of(vec![node("node1", vec![pause(3.0, 12.0, "Cleanup")])]);
            fs::write(
                trial.join("pauses.json"),
                serde_json::to_string(&file).unwrap(),
            )
            .unwrap();
        }
        let input = load(&[search]);
        let (html, charts) = render(&input, None).unwrap();
        let shown = charts::timeline_trials(&input.searches[0])
            .iter()
            .filter(|&&i| input.searches[0].trials[i].run.is_some())
            .count();
        let pause_charts = charts
            .iter()
            .filter(|c| c.chart.kind == charts::Kind::ServerPauses)
            .count();
        assert!(shown > 0);
        assert_eq!(pause_charts, shown);
        assert!(headings(&html, "h3").contains(&"Server pauses per attempted rate".to_string()));
        assert!(html.contains("<td class=\"num\">all trials</td>"), "{html}");
    }

    pub(crate) fn copy_dir(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_dir(&entry.path(), &target);
            } else {
                fs::copy(entry.path(), target).unwrap();
            }
        }
    }
}
