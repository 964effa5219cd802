//! The HTML report: one self-contained page (inline CSS and SVG, no script, no font or URL
//! from elsewhere) with the charts of [`crate::report::charts`] and the tables a reader
//! needs beside them: the capacity table as the terminal prints it, each run's summary and
//! configuration, the SLA's worst windows, and errors by class with example messages.
//!
//! Every text that comes from a user or a server (workload and directory names, labels,
//! CQL, settings, error messages, paths) goes through [`escape`].

use std::fmt::Write as _;

use crate::capacity::table::{self, format_rate};
use crate::compare::render as compare_render;
use crate::report::charts::{self, draw, format_number, Chart};
use crate::report::load::{Input, RunData, SearchData, SweepData};
use crate::report::summary::{Latency, RunSummary};
use crate::sla::Value;
use crate::sweep::{table as sweep_table, StepEnd};

/// The page's stylesheet: readable on a laptop screen, and in print.
const CSS: &str = r#"
:root { --ink: #1d1d1f; --muted: #5f6368; --line: #d9dce1; --pass: #1e7d32; --fail: #c0261f;
  --pass-bg: #e8f5e9; --fail-bg: #fdecea; --note-bg: #fff8e1; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header.top, main, footer { max-width: 1120px; margin: 0 auto; padding: 0 24px; }
header.top { padding-top: 28px; padding-bottom: 8px; border-bottom: 1px solid var(--line); }
.kicker { margin: 0; color: var(--muted); text-transform: uppercase; letter-spacing: .08em; font-size: 13px; }
h1 { font-size: 30px; line-height: 1.2; margin: 4px 0 8px; overflow-wrap: anywhere; }
h2 { font-size: 24px; margin: 40px 0 8px; padding-top: 8px; border-top: 2px solid var(--ink); overflow-wrap: anywhere; }
h3 { font-size: 19px; margin: 28px 0 6px; overflow-wrap: anywhere; }
p { margin: 6px 0 10px; max-width: 78ch; }
.tested { color: var(--muted); }
.verdicts { display: flex; flex-wrap: wrap; gap: 14px; margin: 18px 0 14px; }
.card { flex: 1 1 300px; border-radius: 8px; padding: 14px 18px; border: 1px solid var(--line); background: #f7f8fa; }
.card.pass { background: var(--pass-bg); border-color: #a5d6a7; }
.card.fail { background: var(--fail-bg); border-color: #f3a9a4; }
.card .big { font-size: 40px; font-weight: 700; line-height: 1.1; }
.card.pass .big { color: var(--pass); }
.card.fail .big { color: var(--fail); }
.card .what { font-weight: 600; overflow-wrap: anywhere; }
.card .sub { color: var(--muted); font-size: 14px; overflow-wrap: anywhere; }
nav.toc { font-size: 15px; margin: 6px 0 0; }
nav.toc ol { margin: 4px 0; padding-left: 22px; columns: 2; }
figure { margin: 18px 0 26px; }
svg.chart { display: block; width: 100%; height: auto; max-width: 1000px; border: 1px solid var(--line); border-radius: 6px; }
figcaption { color: var(--muted); font-size: 14px; margin-top: 6px; max-width: 1000px; }
table { border-collapse: collapse; margin: 8px 0 18px; font-size: 14px; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: #f1f3f5; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.fail td { background: var(--fail-bg); }
tr.sub td { color: var(--muted); }
td.bad { color: var(--fail); font-weight: 600; }
.scroll { overflow-x: auto; max-width: 100%; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
pre { background: #f7f8fa; border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px;
  white-space: pre-wrap; overflow-wrap: anywhere; }
td code { overflow-wrap: anywhere; }
dl.settings { display: grid; grid-template-columns: max-content minmax(0, 1fr) max-content minmax(0, 1fr);
  gap: 3px 16px; font-size: 14px; margin: 8px 0 18px; }
dl.settings dt { color: var(--muted); }
dl.settings dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 800px) { dl.settings { grid-template-columns: max-content minmax(0, 1fr); } }
.note { background: var(--note-bg); border-left: 4px solid #f0b400; padding: 6px 12px; margin: 8px 0; max-width: 78ch; }
.lines p { margin: 2px 0; font-weight: 600; }
.legend p { margin: 2px 0 10px; color: var(--muted); font-size: 14px; max-width: 90ch; }
.table-title { font-weight: 600; margin: 18px 0 4px; }
footer { color: var(--muted); font-size: 13px; padding-top: 18px; padding-bottom: 30px; margin-top: 40px;
  border-top: 1px solid var(--line); overflow-wrap: anywhere; }
@media print {
  body { font-size: 10.5pt; }
  header.top, main, footer { max-width: none; padding: 0; }
  nav.toc { display: none; }
  h2 { break-before: page; margin-top: 0; }
  h2.first { break-before: auto; }
  figure, table, .card, pre { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  svg.chart { max-width: 100%; border: none; }
  .card, tr.fail td, th { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .scroll { overflow: visible; }
  a { color: inherit; text-decoration: none; }
  @page { margin: 14mm; }
}
"#;

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A chart placed on the page: its data, with its final id, and its SVG document.
#[derive(Debug, Clone)]
pub struct PlacedChart {
    /// The chart's data; its id is unique within the page and names its SVG file.
    pub chart: Chart,
    /// The chart as a standalone SVG document.
    pub svg: String,
}

/// The page, built section by section.
struct Page {
    body: String,
    charts: Vec<PlacedChart>,
    toc: Vec<(String, String)>,
}

impl Page {
    /// Adds a section heading (and its entry in the contents).
    fn section(&mut self, id: &str, heading: &str) {
        let class = if self.toc.is_empty() {
            " class=\"first\""
        } else {
            ""
        };
        let _ = writeln!(self.body, "<h2 id=\"{id}\"{class}>{}</h2>", escape(heading));
        self.toc.push((id.to_string(), heading.to_string()));
    }

    /// Adds a chart as a figure with its caption; numbers it.
    fn figure(&mut self, mut chart: Chart) -> anyhow::Result<()> {
        let n = self.charts.len() + 1;
        let mut id = format!("{n:02}-{}", charts::slug(&chart.id));
        if self.charts.iter().any(|c| c.chart.id == id) {
            id.push_str("-b");
        }
        chart.id = id;
        let svg = draw::svg(&chart)?;
        let _ = writeln!(
            self.body,
            "<figure id=\"chart-{id}\">\n{}\n<figcaption>Figure {n}. {}</figcaption>\n</figure>",
            draw::inline(&svg),
            escape(&chart.caption),
            id = escape(&chart.id)
        );
        self.charts.push(PlacedChart { chart, svg });
        Ok(())
    }

    fn para(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }

    fn note(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p class=\"note\">{}</p>", escape(text));
    }

    fn h3(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h3>{}</h3>", escape(text));
    }
}

/// A table: header cells, rows of (cells, row class); cells starting with a digit, a minus
/// or a dash alone are right-aligned numbers.
fn table(header: &[&str], rows: &[(Vec<String>, &str)], numeric: &[bool]) -> String {
    let mut out = String::from("<div class=\"scroll\"><table>\n<thead><tr>");
    for (i, h) in header.iter().enumerate() {
        let class = if numeric.get(i).copied().unwrap_or(false) {
            " class=\"num\""
        } else {
            ""
        };
        let _ = write!(out, "<th{class}>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (cells, class) in rows {
        if class.is_empty() {
            out.push_str("<tr>");
        } else {
            let _ = write!(out, "<tr class=\"{class}\">");
        }
        for (i, cell) in cells.iter().enumerate() {
            let mut classes = Vec::new();
            if numeric.get(i).copied().unwrap_or(false) {
                classes.push("num");
            }
            let text = match cell.strip_suffix(" ✗") {
                Some(value) => {
                    classes.push("bad");
                    format!("{} ✗", escape(value.trim()))
                }
                None => escape(cell.trim()),
            };
            if classes.is_empty() {
                let _ = write!(out, "<td>{text}</td>");
            } else {
                let _ = write!(out, "<td class=\"{}\">{text}</td>", classes.join(" "));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

/// "80% writes, 20% reads" from a workload configuration.
fn mix(workload: &serde_json::Value) -> Option<String> {
    let reads = workload.get("read_ratio")?.as_f64()?;
    let deletes = workload
        .get("delete_ratio")
        .and_then(|d| d.as_f64())
        .unwrap_or(0.0);
    let writes = (1.0 - reads - deletes).max(0.0);
    let mut parts = Vec::new();
    for (share, what) in [(writes, "writes"), (reads, "reads"), (deletes, "deletes")] {
        if share > 0.0 {
            parts.push(format!("{}% {what}", format_number(share * 100.0)));
        }
    }
    Some(parts.join(", "))
}

/// One sentence on what a run configuration sends where.
fn workload_sentence(config: &serde_json::Value) -> String {
    let workload = config.get("workload");
    let name = workload
        .and_then(|w| w.get("name"))
        .and_then(|n| n.as_str())
        .unwrap_or("an unknown workload");
    let mut text = format!("The {name} workload");
    if let Some(mix) = workload.and_then(mix) {
        let _ = write!(text, " ({mix})");
    }
    if let Some(consistency) = workload
        .and_then(|w| w.get("consistency"))
        .and_then(|c| c.as_str())
    {
        let _ = write!(text, " at consistency {consistency}");
    }
    if let Some(hosts) = config.get("hosts").and_then(|h| h.as_array()) {
        let hosts: Vec<&str> = hosts.iter().filter_map(|h| h.as_str()).collect();
        let _ = write!(text, " against {}", hosts.join(", "));
    }
    text
}

/// What a run did, in a sentence.
fn run_sentence(run: &RunData) -> String {
    let mut text = run
        .config
        .as_ref()
        .map(workload_sentence)
        .unwrap_or_else(|| format!("The {} workload", run.workload().unwrap_or_default()));
    match (run.attempted_rate(), run.concurrency()) {
        (Some(rate), _) => {
            let _ = write!(
                text,
                ", at a fixed rate of {}/s (open loop: latency is response time, from each \
                 request's intended start)",
                format_rate(rate)
            );
        }
        (None, Some(c)) => {
            let _ = write!(
                text,
                ", with {c} requests in flight (closed loop: latency is service time, which \
                 under-counts stalls)"
            );
        }
        _ => {}
    }
    if let Some(s) = &run.summary {
        let _ = write!(
            text,
            "; {} s of warmup, then {} s measured, from {}",
            format_number(s.warmup_s),
            format_number(s.measured_s),
            s.started_at
        );
    }
    text.push('.');
    text
}

/// What a search did, in a sentence.
fn search_sentence(search: &SearchData) -> String {
    let config = &search.summary.config;
    let mut text = config
        .get("run")
        .map(workload_sentence)
        .unwrap_or_else(|| "A workload".to_string());
    if search.sla.is_some() {
        let _ = write!(
            text,
            ": a capacity search under the SLA {}",
            charts::sla_words(&search.sla)
        );
    }
    let number = |key: &str| config.get(key).and_then(|v| v.as_f64());
    if let (Some(duration), Some(warmup)) = (number("duration_s"), number("warmup_s")) {
        let _ = write!(
            text,
            ", trials of {} s after {} s of warmup",
            format_number(duration),
            format_number(warmup)
        );
    }
    let _ = write!(text, ", {} repeat(s) per rate", search.repeats());
    if let Some(rates) = config.get("rates").and_then(|r| r.as_str()) {
        let _ = write!(text, ", rates {rates}");
    }
    text.push('.');
    text
}

/// The headline card of a search: its capacity.
fn search_card(search: &SearchData) -> String {
    let outcome = &search.summary.outcome;
    let (big, class) = match outcome.capacity_per_s {
        Some(c) => (format!("{}/s", format_rate(c)), "pass"),
        None if outcome.invalid.is_some() => ("none: client-bound".to_string(), "fail"),
        None if outcome.rows.is_empty() => ("not known yet".to_string(), ""),
        None => ("none".to_string(), "fail"),
    };
    let sla = charts::sla_words(&search.sla);
    let mut sub = Vec::new();
    if outcome.highest_achieved_per_s > 0.0 {
        sub.push(format!(
            "highest achieved throughput {}/s",
            format_rate(outcome.highest_achieved_per_s)
        ));
    }
    if !outcome.unstable.is_empty() {
        let rates: Vec<String> = outcome
            .unstable
            .iter()
            .map(|r| format!("{}/s", format_rate(*r)))
            .collect();
        sub.push(format!("unstable at {}", rates.join(", ")));
    }
    if let Some(invalid) = &outcome.invalid {
        sub.push(format!(
            "stopped at {}/s: the client, not the server, limited that trial",
            format_rate(invalid.rate_per_s)
        ));
    }
    let status = serde_json::to_value(search.summary.status)
        .ok()
        .and_then(|s| s.as_str().map(str::to_string))
        .unwrap_or_default();
    if status != "complete" {
        sub.push(format!("search {status}"));
    }
    format!(
        "<div class=\"card {class}\"><div class=\"big\">{}</div><div class=\"what\">capacity of \
         {} under {}</div><div class=\"sub\">{}</div></div>",
        escape(&big),
        escape(&search.label),
        escape(&sla),
        escape(&sub.join(" · "))
    )
}

/// The headline card of a run: its SLA verdict, or its throughput.
fn run_card(run: &RunData) -> String {
    let achieved = run.achieved_rate();
    let rate_line = match (achieved, run.attempted_rate()) {
        (Some(a), Some(t)) => format!(
            "achieved {}/s of {}/s attempted",
            format_rate(a),
            format_rate(t)
        ),
        (Some(a), None) => format!("achieved {}/s", format_rate(a)),
        _ => String::new(),
    };
    let sla = run.summary.as_ref().and_then(|s| s.sla.as_ref());
    let invalid = run
        .summary
        .as_ref()
        .and_then(|s| s.validity.as_ref())
        .filter(|v| !v.is_valid());
    let (big, class, what) = match sla {
        _ if invalid.is_some() => (
            "INVALID".to_string(),
            "fail",
            format!(
                "{}: client-bound — the client, not the server, limited this run: no verdict",
                run.label
            ),
        ),
        Some(sla) if sla.verdict.pass => (
            "PASS".to_string(),
            "pass",
            format!(
                "{}: every one of {} windows met {}",
                run.label, sla.verdict.windows, sla.spec
            ),
        ),
        Some(sla) if sla.verdict.windows == 0 => (
            "FAIL".to_string(),
            "fail",
            format!("{}: no complete window to judge {}", run.label, sla.spec),
        ),
        Some(sla) => (
            "FAIL".to_string(),
            "fail",
            format!(
                "{}: {} failed in {} of {} windows",
                run.label,
                sla.spec,
                sla.verdict.failing.len(),
                sla.verdict.windows
            ),
        ),
        None if run.summary.is_none() => (
            "no summary".to_string(),
            "",
            format!(
                "{}: summary.json {}, so the run's verdict is unknown; what it recorded is shown",
                run.label,
                if run.dir.join("summary.json").exists() {
                    "could not be read"
                } else {
                    "is missing"
                }
            ),
        ),
        None => (
            achieved.map_or("-".to_string(), |a| format!("{}/s", format_rate(a))),
            "",
            format!("{}: throughput (no SLA was given)", run.label),
        ),
    };
    format!(
        "<div class=\"card {class}\"><div class=\"big\">{}</div><div class=\"what\">{}</div>\
         <div class=\"sub\">{}</div></div>",
        escape(&big),
        escape(&what),
        escape(&rate_line)
    )
}

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
pub fn render(input: &Input, title: Option<&str>) -> anyhow::Result<(String, Vec<PlacedChart>)> {
    let title = title.map_or_else(|| default_title(input), str::to_string);
    let mut page = Page {
        body: String::new(),
        charts: Vec::new(),
        toc: Vec::new(),
    };

    // Capacity: chart 1 across configurations, then each search's table and chart 2.
    let sla_charts = charts::sla_vs_rate(&input.searches, &input.runs);
    if !input.searches.is_empty() || !sla_charts.is_empty() {
        page.section("capacity", "Capacity");
        page.para(
            "The load-carrying capacity is the highest attempted rate at which every window of \
             every repeat met the SLA and the cluster achieved at least 99% of the rate, and \
             every lower rate passed too (a pass above a failure is unstable, not capacity).",
        );
        for chart in sla_charts {
            page.figure(chart)?;
        }
        if input.searches.len() >= 2 {
            comparison_tables(&mut page, input);
        }
        let throughput_charts = charts::latency_vs_throughput(&input.searches, &[]);
        for search in &input.searches {
            page.h3(&format!("Configuration {}", search.label));
            page.para(&search_sentence(search));
            capacity_table(&mut page, search);
            if let Some(chart) = throughput_charts
                .iter()
                .find(|c| c.title.ends_with(&format!(": {}", search.label)))
            {
                page.figure(chart.clone())?;
            }
        }
    }

    for (n, search) in input.searches.iter().enumerate() {
        search_section(&mut page, search, n)?;
    }

    for (n, sweep) in input.sweeps.iter().enumerate() {
        sweep_section(&mut page, sweep, n)?;
    }

    let compared: Vec<Chart> = charts::latency_vs_throughput(&[], &input.runs)
        .into_iter()
        .chain(charts::concurrency(&input.runs))
        .collect();
    if !compared.is_empty() {
        page.section("compared", "Runs compared");
        page.para(
            "The runs given side by side: open-loop runs at fixed rates, closed-loop runs at \
             fixed concurrencies (their latency is service time).",
        );
        runs_table(&mut page, &input.runs);
        if input.runs.len() >= 2 {
            run_comparison_tables(&mut page, &input.runs);
        }
        for chart in compared {
            page.figure(chart)?;
        }
    }

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

/// The configurations compared (`headroom compare`'s tables): capacity and throughput
/// against the baseline, the worst window per rate, the change per rate and the cost.
fn comparison_tables(page: &mut Page, input: &Input) {
    let comparison = match crate::compare::compare(&input.searches, &input.compare) {
        Ok(c) => c,
        Err(e) => {
            page.note(&format!("The configurations could not be compared: {e:#}"));
            return;
        }
    };
    page.h3(&format!(
        "Configurations compared, against {}",
        comparison.baseline
    ));
    put_tables(
        page,
        &compare_render::tables(&comparison),
        &comparison.notes,
    );
}

/// The runs compared (`headroom compare`'s tables for runs).
fn run_comparison_tables(page: &mut Page, runs: &[RunData]) {
    // The first run is the baseline, as `headroom compare` takes it by default.
    match crate::compare::compare_runs(runs, None) {
        Ok(c) => {
            page.h3(&format!("Against {}", c.baseline));
            put_tables(page, &compare_render::run_tables(&c), &c.notes);
        }
        Err(e) => page.note(&format!("The runs could not be compared: {e:#}")),
    }
}

/// Tables of cells with their titles and legends; rows with a `worse` cell are marked.
fn put_tables(page: &mut Page, tables: &[compare_render::Table], notes: &[String]) {
    for t in tables {
        let _ = writeln!(
            page.body,
            "<p class=\"table-title\">{}</p>",
            escape(&t.title)
        );
        let header: Vec<&str> = t.header.iter().map(String::as_str).collect();
        let numeric: Vec<bool> = (0..header.len()).map(|i| i > 0).collect();
        let rows: Vec<(Vec<String>, &str)> = t
            .rows
            .iter()
            .map(|cells| {
                let class = if cells.iter().any(|c| c.contains(" worse")) {
                    "fail"
                } else {
                    ""
                };
                (cells.clone(), class)
            })
            .collect();
        page.body.push_str(&table(&header, &rows, &numeric));
        page.body.push_str("<div class=\"legend\">\n");
        for line in &t.footer {
            let _ = writeln!(page.body, "<p>{}</p>", escape(line));
        }
        page.body.push_str("</div>\n");
    }
    for note in notes {
        page.note(note);
    }
}

/// The capacity table of a search, as the terminal prints it, and the lines under it.
fn capacity_table(page: &mut Page, search: &SearchData) {
    let terms: Vec<String> = charts::parse_sla(&search.sla)
        .map(|sla| sla.terms.iter().map(|t| t.name()).collect())
        .unwrap_or_default();
    let cells = table::cells(&search.summary.outcome, &terms);
    let Some((header, rows)) = cells.split_first() else {
        return;
    };
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let numeric: Vec<bool> = (0..header.len()).map(|i| i + 1 < header.len()).collect();
    let rows: Vec<(Vec<String>, &str)> = rows
        .iter()
        .map(|cells| {
            let fail = cells.last().is_some_and(|v| v.starts_with("FAIL"));
            (cells.clone(), if fail { "fail" } else { "" })
        })
        .collect();
    if rows.is_empty() {
        page.note("No trial has finished yet.");
    } else {
        page.body.push_str(&table(&header, &rows, &numeric));
    }
    page.body.push_str("<div class=\"lines\">\n");
    for line in table::summary_lines(&search.summary.outcome) {
        let _ = writeln!(page.body, "<p>{}</p>", escape(&line));
    }
    page.body.push_str("</div>\n");
}

/// A search's own section: spectra per rate, the timelines of the trials that tell the most,
/// each trial's whole-run latencies, its errors and its settings.
fn search_section(page: &mut Page, search: &SearchData, n: usize) -> anyhow::Result<()> {
    page.section(
        &format!("search-{}", n + 1),
        &format!("Trials of {}", search.label),
    );
    if let Some(probe) = &search.summary.outcome.probe {
        page.para(&format!(
            "The probe kept {} requests in flight (closed loop) and achieved {}/s: the ceiling \
             the automatic rates were chosen from. Its latencies are service times and are not \
             judged.",
            probe.concurrency,
            format_rate(probe.achieved_per_s)
        ));
    }
    let spectra: Vec<Chart> = charts::spectrum(std::slice::from_ref(search), &[]);
    for chart in spectra {
        page.figure(chart)?;
    }
    let picked = charts::timeline_trials(search);
    let capacity = search.summary.outcome.capacity_per_s;
    for index in picked {
        let trial = &search.trials[index];
        let Some(run) = &trial.run else { continue };
        let why = if Some(trial.record.rate_per_s) == capacity {
            "at the capacity"
        } else if trial.record.pass {
            "the lowest rate"
        } else {
            "the first failing rate"
        };
        let heading = format!(
            "Timeline of the trial at {}/s, repeat {} ({why})",
            format_rate(trial.record.rate_per_s),
            trial.record.repeat
        );
        page.h3(&heading);
        if let Some(reason) = &trial.record.reason {
            page.para(&format!("Verdict: FAIL: {reason}."));
        } else {
            page.para("Verdict: pass.");
        }
        let title = format!(
            "{} at {}/s #{}",
            search.label,
            format_rate(trial.record.rate_per_s),
            trial.record.repeat
        );
        for chart in charts::timeline(run, &title) {
            page.figure(chart)?;
        }
        pause_part(page, run, &title)?;
    }
    search_pause_table(page, search);

    page.h3("Each trial's whole-run latency");
    page.para(
        "Response time of every measured request of each trial, all operation types together \
         (from its histogram log): the SLA is judged per window, so these can pass while a \
         window failed.",
    );
    let header = [
        "Attempted/s",
        "Repeat",
        "Achieved/s",
        "Requests",
        "Errors",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "Verdict",
    ];
    let rows: Vec<(Vec<String>, &str)> = search
        .trials
        .iter()
        .map(|t| {
            let r = &t.record;
            let whole = t.run.as_ref().and_then(|run| run.whole);
            let ms = |f: fn(&crate::report::load::Percentiles) -> f64| {
                whole
                    .as_ref()
                    .map_or("-".to_string(), |w| format_number(f(w)))
            };
            (
                vec![
                    format_rate(r.rate_per_s),
                    r.repeat.to_string(),
                    format_rate(r.achieved_per_s),
                    table::group_thousands(r.requests),
                    table::group_thousands(r.errors),
                    ms(|w| w.p50_ms),
                    ms(|w| w.p99_ms),
                    ms(|w| w.p999_ms),
                    ms(|w| w.max_ms),
                    if r.pass { "pass" } else { "FAIL" }.to_string(),
                ],
                if r.pass { "" } else { "fail" },
            )
        })
        .collect();
    let numeric = [true, true, true, true, true, true, true, true, true, false];
    page.body.push_str(&table(&header, &rows, &numeric));

    let runs: Vec<&RunData> = search
        .trials
        .iter()
        .filter_map(|t| t.run.as_ref())
        .collect();
    errors_table(page, &runs, true);

    page.h3("Settings of the search");
    // The trial's rate, length and SLA are set per trial from the search's own settings.
    settings_table(
        page,
        &search.summary.config,
        &[
            "run.mode.rate_per_s",
            "run.duration_s",
            "run.warmup_s",
            "run.sla",
        ],
    );
    Ok(())
}

/// What a sweep did, in a sentence.
fn sweep_sentence(sweep: &SweepData) -> String {
    let settings = &sweep.file.settings;
    let mut text = settings
        .get("run")
        .map(workload_sentence)
        .unwrap_or_else(|| format!("The {} workload", sweep.file.workload));
    let _ = write!(
        text,
        ": a concurrency sweep (closed loop: latency is service time, which under-counts \
         stalls) of {} steps",
        sweep.file.steps.len()
    );
    let number = |key: &str| settings.get(key).and_then(|v| v.as_f64());
    match (number("step_duration_s"), number("stable_error")) {
        (Some(d), _) => {
            let _ = write!(text, " of {} s each", format_number(d));
        }
        (None, Some(e)) => {
            let _ = write!(
                text,
                ", each until its throughput was stable to ±{}%",
                format_number(e * 100.0)
            );
        }
        _ => {}
    }
    if let Some(stop) = &sweep.file.stop {
        let _ = write!(text, "; it stopped because {}", stop.describe());
    } else {
        text.push_str("; it had not finished when these files were read");
    }
    text.push('.');
    text
}

/// A sweep's section: its table as the terminal prints it, its two charts, its settings.
fn sweep_section(page: &mut Page, sweep: &SweepData, n: usize) -> anyhow::Result<()> {
    page.section(
        &format!("sweep-{}", n + 1),
        &format!("Concurrency sweep {}", sweep.label),
    );
    page.para(&sweep_sentence(sweep));
    let rows: Vec<(Vec<String>, &str)> = sweep
        .file
        .steps
        .iter()
        .map(|step| {
            let class = if step.end == StepEnd::Failed {
                "fail"
            } else {
                ""
            };
            (sweep_table::cells(step), class)
        })
        .collect();
    if rows.is_empty() {
        page.note("No step has finished yet.");
    } else {
        let mut header: Vec<String> = sweep_table::HEADER.iter().map(|h| h.to_string()).collect();
        for cell in &mut header[3..9] {
            cell.push_str(" ms");
        }
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let numeric: Vec<bool> = (0..header.len()).map(|i| i + 1 < header.len()).collect();
        page.body.push_str(&table(&header, &rows, &numeric));
        page.note(
            "Latencies are service times of the successful requests of each step's measured \
             part, every operation type together: in a closed loop they equal the response \
             time, and they under-count stalls (coordinated omission).",
        );
    }
    for step in sweep.file.steps.iter().filter(|s| s.error.is_some()) {
        page.note(&format!(
            "The step at concurrency {} failed: {}",
            step.concurrency,
            step.error.as_deref().unwrap_or_default()
        ));
    }
    for chart in charts::sweep(sweep) {
        page.figure(chart)?;
    }
    page.h3("Settings of the sweep");
    // Each step's concurrency, warmup and length are set from the sweep's own settings.
    settings_table(
        page,
        &sweep.file.settings,
        &[
            "run.mode.concurrency",
            "run.mode.loop",
            "run.duration_s",
            "run.warmup_s",
        ],
    );
    Ok(())
}

/// One line per run given, to compare them.
fn runs_table(page: &mut Page, runs: &[RunData]) {
    let header = [
        "Run",
        "Loop",
        "Attempted/s",
        "Achieved/s",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "SLA",
    ];
    let rows: Vec<(Vec<String>, &str)> = runs
        .iter()
        .map(|run| {
            let ms = |f: fn(&crate::report::load::Percentiles) -> f64| {
                run.whole
                    .as_ref()
                    .map_or("-".to_string(), |w| format_number(f(w)))
            };
            let sla = run.summary.as_ref().and_then(|s| s.sla.as_ref());
            let fail = sla.is_some_and(|s| !s.verdict.pass);
            (
                vec![
                    run.label.clone(),
                    match (run.attempted_rate(), run.concurrency()) {
                        (Some(_), _) => "open".to_string(),
                        (None, Some(c)) => format!("closed, {c} in flight"),
                        _ => "-".to_string(),
                    },
                    run.attempted_rate().map_or("-".to_string(), format_rate),
                    run.achieved_rate().map_or("-".to_string(), format_rate),
                    ms(|w| w.p50_ms),
                    ms(|w| w.p99_ms),
                    ms(|w| w.p999_ms),
                    ms(|w| w.max_ms),
                    match sla {
                        Some(s) if s.verdict.pass => "pass".to_string(),
                        Some(_) => "FAIL".to_string(),
                        None => "-".to_string(),
                    },
                ],
                if fail { "fail" } else { "" },
            )
        })
        .collect();
    let numeric = [false, false, true, true, true, true, true, true, false];
    page.body.push_str(&table(&header, &rows, &numeric));
}

/// A run's own section: its timeline, spectrum, summary, SLA, errors and configuration.
/// `alone`: the page holds this run only, and its header says what the run did already.
fn run_section(page: &mut Page, run: &RunData, n: usize, alone: bool) -> anyhow::Result<()> {
    page.section(&format!("run-{}", n + 1), &format!("Run {}", run.label));
    if !alone {
        page.para(&run_sentence(run));
    }
    for chart in charts::timeline(run, &run.label) {
        page.figure(chart)?;
    }
    pause_part(page, run, &run.label)?;
    maintenance_part(page, run);
    server_tables_part(page, run);
    server_samples_part(page, run)?;
    for chart in charts::spectrum(&[], std::slice::from_ref(run)) {
        page.figure(chart)?;
    }
    if let Some(summary) = &run.summary {
        page.h3("Summary");
        summary_table(page, summary);
        validity_part(page, summary);
        if let Some(sla) = &summary.sla {
            page.h3(&format!("Service level: {}", sla.spec));
            sla_table(page, summary);
        }
    }
    errors_table(page, std::slice::from_ref(&run), false);
    page.h3("Configuration");
    match &run.config {
        Some(config) => settings_table(page, config, &[]),
        None => page.note("config.json is missing."),
    }
    Ok(())
}

/// When the run has pauses.json: the chart of its client latency beside its nodes' pauses,
/// a table of each node's pause figures, and the notes on logs that could not be read.
fn pause_part(page: &mut Page, run: &RunData, title: &str) -> anyhow::Result<()> {
    let Some(pauses) = &run.pauses else {
        return Ok(());
    };
    if let Some(chart) = charts::pauses::pause_timeline(run, title) {
        page.figure(chart)?;
    }
    if !pauses.nodes.is_empty() {
        let header = [
            "Node",
            "Collector",
            "Pauses",
            "Per minute",
            "Stopped ms",
            "Stopped %",
            "p50 ms",
            "p99 ms",
            "p99.9 ms",
            "max ms",
            "To safepoint, max ms",
            "Longest pause",
        ];
        let minutes = pauses.measured_s() / 60.0;
        let ms = |v: Option<f64>| v.map_or("-".to_string(), format_number);
        let rows: Vec<(Vec<String>, &str)> = pauses
            .nodes
            .iter()
            .map(|n| {
                let longest = n.longest.first().map_or("-".to_string(), |p| {
                    format!(
                        "{} ms at {} s: {}",
                        format_number(p.length_ms),
                        format_number(p.offset_s),
                        p.kind
                    )
                });
                (
                    vec![
                        format!("{} ({})", n.node, n.address),
                        n.collector.clone().unwrap_or_else(|| "-".to_string()),
                        table::group_thousands(n.count),
                        if minutes > 0.0 {
                            format_number(n.count as f64 / minutes)
                        } else {
                            "-".to_string()
                        },
                        format_number(n.stopped_ms),
                        format_number(n.stopped_percent),
                        ms(n.p50_ms),
                        ms(n.p99_ms),
                        ms(n.p999_ms),
                        ms((n.count > 0).then_some(n.max_ms)),
                        ms(n.time_to_safepoint_max_ms),
                        longest,
                    ],
                    "",
                )
            })
            .collect();
        let numeric = [
            false, false, true, true, true, true, true, true, true, true, true, false,
        ];
        page.para(&format!(
            "Server pauses of the measured part ({} s), from each node's GC log: every \
             stop-the-world pause, collections and other safepoints alike, its length the time \
             the node's application threads were stopped.",
            format_number(pauses.measured_s())
        ));
        page.body.push_str(&table(&header, &rows, &numeric));
    }
    for note in &pauses.notes {
        page.note(&format!("Server pauses: {note}"));
    }
    Ok(())
}

/// When the run has maintenance.json: a table of its nodetool operations and wall times.
fn maintenance_part(page: &mut Page, run: &RunData) {
    let Some(file) = &run.maintenance else {
        return;
    };
    page.h3("Maintenance during the run");
    page.para(&format!(
        "nodetool operations on keyspace {} while the load went on (--during), one node after \
         another; times in seconds since the start of the run, the time base of the charts \
         above. The load ended at {} s.",
        file.keyspace,
        file.load_end_s.map_or("-".to_string(), format_number)
    ));
    let header = [
        "Operation",
        "Node",
        "Due s",
        "Start s",
        "End s",
        "Wall time s",
        "Status",
        "Output (last line)",
    ];
    let s = |v: Option<f64>| v.map_or("-".to_string(), format_number);
    let rows: Vec<(Vec<String>, &str)> = file
        .operations
        .iter()
        .map(|r| {
            let status = match (r.status, r.exit_code) {
                (crate::maintenance::Status::Ok, _) => "ok".to_string(),
                (status, Some(code)) => format!("{} (exit {code}) ✗", status.describe()),
                (status, None) => format!("{} ✗", status.describe()),
            };
            (
                vec![
                    format!("nodetool {}", r.operation),
                    r.node.clone(),
                    format_number(r.planned_s),
                    s(r.start_s),
                    s(r.end_s),
                    s(r.wall_s),
                    status,
                    r.output_tail.lines().last().unwrap_or("").to_string(),
                ],
                "",
            )
        })
        .collect();
    let numeric = [false, false, true, true, true, true, false, false];
    page.body.push_str(&table(&header, &rows, &numeric));
}

/// When the run has server-tables.json: Cassandra's own histograms of the run's table,
/// before → after, beside the client's response times of the same run, in µs.
fn server_tables_part(page: &mut Page, run: &RunData) {
    use crate::metrics::server_tables::{Figure, NodeTables};
    let Some(file) = &run.server_tables else {
        return;
    };
    page.h3(&format!(
        "Cassandra's own histograms of {}.{}",
        file.keyspace, file.table
    ));
    page.para(
        "What the nodes themselves report for the run's table, read just before the measured \
         run and as it ended (before → after). Latencies are in µs. These are the server's \
         views, not records of this run's requests: its percentiles come from decaying \
         reservoirs that weigh the last minutes most, its counts are cumulative since the node \
         started (so after − before is what the node counted during the run), and the \
         replica's latency leaves out the network and the coordinator. The client's rows are \
         every successful request of the measured part, from the intended start.",
    );
    let header = [
        "Node", "Figure", "Source", "Unit", "Count", "p50", "p75", "p95", "p98", "p99", "max",
    ];
    let value = |v: Option<f64>| v.map_or("-".to_string(), format_number);
    let change = |before: Option<f64>, after: Option<f64>| match (before, after) {
        (Some(b), Some(a)) => format!("{} → {}", format_number(b), format_number(a)),
        (None, a) => value(a),
        (Some(b), None) => format!("{} → -", format_number(b)),
    };
    let mut rows: Vec<(Vec<String>, &str)> = Vec::new();
    if let Some(summary) = &run.summary {
        for op in &summary.ops {
            let l = &op.response_time;
            let us = |ms: f64| Some(ms * 1000.0);
            rows.push((
                vec![
                    "client".to_string(),
                    format!("{} response time", op.op),
                    "headroom".to_string(),
                    "µs".to_string(),
                    table::group_thousands(op.ok),
                    value(us(l.p50_ms)),
                    "-".to_string(),
                    value(us(l.p95_ms)),
                    "-".to_string(),
                    value(us(l.p99_ms)),
                    value(us(l.max_ms)),
                ],
                "",
            ));
        }
    }
    let after_nodes = file.after.as_ref().map_or(&[][..], |s| &s.nodes[..]);
    for after in after_nodes {
        let before: Option<&NodeTables> = file
            .before
            .as_ref()
            .and_then(|s| s.nodes.iter().find(|n| n.address == after.address));
        for figure in &after.figures {
            let earlier: Option<&Figure> = before.and_then(|b| {
                b.figures
                    .iter()
                    .find(|f| f.name == figure.name && f.source == figure.source)
            });
            let count = match (earlier.and_then(|f| f.count), figure.count) {
                (Some(b), Some(a)) => format!(
                    "{} (+{})",
                    table::group_thousands(a),
                    table::group_thousands(a.saturating_sub(b))
                ),
                (None, Some(a)) => table::group_thousands(a),
                _ => "-".to_string(),
            };
            let unit = figure.unit.map_or("-".to_string(), |u| match u {
                crate::metrics::server_tables::Unit::Micros => "µs".to_string(),
                other => format!("{other:?}").to_lowercase(),
            });
            let mut cells = vec![
                format!("{} ({})", after.node, after.address),
                figure.name.replace('_', " "),
                figure.source.clone(),
                unit,
                count,
            ];
            let now = figure.percentiles().into_iter().chain([figure.max]);
            let was = earlier.map_or([None; 6], |f| {
                let p = f.percentiles();
                [p[0], p[1], p[2], p[3], p[4], f.max]
            });
            cells.extend(now.zip(was).map(|(a, b)| change(b, a)));
            rows.push((cells, ""));
        }
    }
    let numeric = [
        false, false, false, false, true, true, true, true, true, true, true,
    ];
    page.body.push_str(&table(&header, &rows, &numeric));
    for note in &file.notes {
        page.note(&format!("Cassandra's histograms: {note}"));
    }
}

/// When the run read Cassandra's figures during the load (`--server-stats-every`): its
/// chart beside the client's p99 and, per node, the range of the readings.
fn server_samples_part(page: &mut Page, run: &RunData) -> anyhow::Result<()> {
    use crate::metrics::server_samples;
    if run.server_samples.is_empty() {
        return Ok(());
    }
    page.h3("Cassandra's own latency during the run");
    if let Some(chart) = charts::server_latency::server_latency(run, &run.label) {
        page.figure(chart)?;
    }
    let rows: Vec<(Vec<String>, &str)> =
        server_samples::summarize(&run.server_samples, run.warmup_s)
            .into_iter()
            .map(|r| {
                (
                    vec![
                        format!("{} ({})", r.node, r.address),
                        r.what.clone(),
                        r.readings.to_string(),
                        format_number(r.p99_us[0] / 1000.0),
                        format_number(r.p99_us[1] / 1000.0),
                        format_number(r.p99_us[2] / 1000.0),
                        r.per_second.map_or("-".to_string(), format_number),
                    ],
                    "",
                )
            })
            .collect();
    if !rows.is_empty() {
        page.para(&format!(
            "The readings of the measured part, per node: the smallest, median and largest \
             99th percentile of the replica's latency in ms (the readings step by 1 ms, so 0 \
             means under half a millisecond), and the requests the node counted \
             per second between its first and last reading ({} readings in all, in {}).",
            run.server_samples.len(),
            server_samples::SERVER_SAMPLES_JSONL
        ));
        let header = [
            "Node",
            "Requests",
            "Readings",
            "99P min, ms",
            "99P median, ms",
            "99P max, ms",
            "Counted per second",
        ];
        page.body.push_str(&table(
            &header,
            &rows,
            &[false, false, true, true, true, true, true],
        ));
    }
    for sample in run
        .server_samples
        .iter()
        .filter(|s| !s.notes.is_empty())
        .take(3)
    {
        page.note(&format!(
            "Reading at {} s: {}",
            format_number(sample.at_s),
            sample.notes.join("; ")
        ));
    }
    Ok(())
}

/// A search's server pauses per attempted rate and over every trial, when its trials have
/// pause figures.
fn search_pause_table(page: &mut Page, search: &SearchData) {
    let Some(found) = crate::report::pauses::search_pauses(search) else {
        return;
    };
    page.h3("Server pauses per attempted rate");
    page.para(
        "Every trial's stop-the-world pauses, all nodes together: pauses per node and minute, \
         the share of the nodes' measured time they were stopped, and the pause lengths of \
         every repeat at that rate merged.",
    );
    let header = [
        "Attempted/s",
        "Trials",
        "Pauses",
        "Per node-minute",
        "Stopped %",
        "p99 ms",
        "max ms",
        "To safepoint, max ms",
    ];
    let ms = |v: Option<f64>| v.map_or("-".to_string(), format_number);
    let cells = |what: String, f: &crate::report::pauses::PauseFigures| {
        vec![
            what,
            f.runs.to_string(),
            table::group_thousands(f.pauses),
            format_number(f.per_minute),
            format_number(f.stopped_percent),
            ms(f.p99_ms),
            ms(f.max_ms),
            ms(f.longest_time_to_safepoint_ms),
        ]
    };
    let mut rows: Vec<(Vec<String>, &str)> = found
        .rates
        .iter()
        .map(|r| (cells(format_rate(r.rate_per_s), &r.figures), ""))
        .collect();
    rows.push((cells("all trials".to_string(), &found.overall), "sub"));
    let numeric = [true, true, true, true, true, true, true, true];
    page.body.push_str(&table(&header, &rows, &numeric));
    if found.trials_without > 0 {
        page.note(&format!(
            "{} trials have no pause figures (no pauses.json in their directories).",
            found.trials_without
        ));
    }
}

/// Per operation type: requests, errors, rate, and the latency percentiles of response,
/// service and wait time.
fn summary_table(page: &mut Page, s: &RunSummary) {
    let header = [
        "Operation",
        "Latency",
        "Requests",
        "Errors",
        "Rate/s",
        "mean ms",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "p99.9 ms",
        "p99.99 ms",
        "max ms",
    ];
    let latency = |l: &Latency| {
        [
            l.mean_ms, l.p50_ms, l.p95_ms, l.p99_ms, l.p999_ms, l.p9999_ms, l.max_ms,
        ]
        .map(format_number)
        .to_vec()
    };
    let mut rows = Vec::new();
    for op in &s.ops {
        let errors: u64 = op.errors.values().sum();
        let mut cells = vec![
            op.op.clone(),
            "response time".to_string(),
            table::group_thousands(op.requests),
            table::group_thousands(errors),
            format_rate(op.rate_per_s),
        ];
        cells.extend(latency(&op.response_time));
        rows.push((cells, ""));
        for (what, l) in [
            ("service time", &op.service_time),
            ("wait in client", &op.wait_time),
        ] {
            let mut cells = vec![
                String::new(),
                what.to_string(),
                String::new(),
                String::new(),
                String::new(),
            ];
            cells.extend(latency(l));
            rows.push((cells, "sub"));
        }
    }
    let numeric = [
        false, false, true, true, true, true, true, true, true, true, true, true,
    ];
    page.body.push_str(&table(&header, &rows, &numeric));
    let c = &s.client;
    let failed = if s.failed_rate_per_s > 0.0 {
        format!(
            " Successful answers came at {}/s, failed requests at {}/s (failures carry no \
             load, so the achieved rate counts successes only).",
            format_rate(s.achieved_rate_per_s),
            format_rate(s.failed_rate_per_s)
        )
    } else {
        String::new()
    };
    let unsent = if s.unsent_requests > 0.0 {
        format!(
            " {} requests of the schedule were never sent: the client was still behind it a \
             second after its end.",
            if s.unsent_requests < 1e9 {
                table::group_thousands(s.unsent_requests as u64)
            } else {
                format!("{:.3e}", s.unsent_requests)
            }
        )
    } else {
        String::new()
    };
    page.para(&format!(
        "Latency is {}.{failed}{unsent} The client used {} s of CPU ({} µs per request) and at \
         most {} MiB of memory; its largest hiccup was {} ms (p99.9 {} ms). The largest backlog \
         in the client was {} requests. The run ended: {}.",
        s.latency_kind,
        format_number(c.cpu_s),
        format_number(c.cpu_us_per_request),
        c.peak_rss_bytes >> 20,
        format_number(c.hiccup_max_ms),
        format_number(c.hiccup_p999_ms),
        s.max_backlog,
        serde_json::to_value(s.stop)
            .ok()
            .and_then(|v| v.as_str().map(|t| t.replace('_', " ")))
            .unwrap_or_default()
    ));
}

/// Whether the client limited the run: a sentence when valid, the reasons and what to do when
/// not.
fn validity_part(page: &mut Page, s: &RunSummary) {
    let Some(v) = &s.validity else { return };
    let f = &v.figures;
    if v.is_valid() {
        page.para(&format!(
            "Measurement: valid. The client kept its schedule: {} of {} measured requests left \
             more than {} ms late by its own doing (wait before the send p99 {} ms); {} waited \
             for a free in-flight slot, which is the server's doing.",
            table::group_thousands(f.late_sends),
            table::group_thousands(f.measured_requests),
            format_number(f.lag_limit_ms),
            format_number(f.wait_p99_ms),
            table::group_thousands(f.limit_waits)
        ));
        return;
    }
    page.h3("Measurement: INVALID (client-bound)");
    let mut text = String::from(
        "<p class=\"fail\">The client, not the server, limited this run, so it has no verdict:</p><ul>",
    );
    for reason in &v.reasons {
        let _ = write!(text, "<li>{}</li>", escape(reason));
    }
    text.push_str("</ul>");
    page.body.push_str(&text);
    if let Some(advice) = &v.advice {
        page.para(&format!("What to do: {advice}."));
    }
}

/// Each SLA term's worst window.
fn sla_table(page: &mut Page, s: &RunSummary) {
    let Some(sla) = &s.sla else { return };
    let v = &sla.verdict;
    let header = [
        "Term",
        "Worst window",
        "In window",
        "Windows failed",
        "Judged on max",
    ];
    let rows: Vec<(Vec<String>, &str)> = v
        .worst
        .iter()
        .map(|w| {
            let mut value = match w.value {
                Some(Value::LatencyNs(ns)) => format!("{} ms", format_number(ns as f64 / 1e6)),
                Some(Value::Fraction(f)) => format!("{}%", format_number(f * 100.0)),
                None => "-".to_string(),
            };
            if matches!(w.value, Some(Value::LatencyNs(_))) && w.failed_share > 0.0 {
                value = if w.failed_share >= 1.0 {
                    "every request failed".to_string()
                } else {
                    format!("{value}, {}% failed", format_number(w.failed_share * 100.0))
                };
            }
            let value = if w.failing_windows > 0 {
                format!("{value} ✗")
            } else {
                value
            };
            (
                vec![
                    w.term.clone(),
                    value,
                    w.window_index
                        .map_or("-".to_string(), |i| (i + 1).to_string()),
                    format!("{} of {}", w.failing_windows, v.windows),
                    w.judged_on_max_windows.to_string(),
                ],
                if w.failing_windows > 0 { "fail" } else { "" },
            )
        })
        .collect();
    page.body
        .push_str(&table(&header, &rows, &[false, true, true, true, true]));
    page.para(&format!(
        "Windows of {} s after the warmup, {} judged. A failed request counts as slower than any \
         threshold: a latency term's value is that of the answered requests, with the failed \
         share beside it. \"Judged on max\" counts windows with too few requests to resolve the \
         percentile, judged on their largest value instead.",
        format_number(sla.window_s),
        v.windows
    ));
}

/// Failed requests by class, with the first message of each, over `runs` (labelled by run
/// when `by_run`).
fn errors_table(page: &mut Page, runs: &[&RunData], by_run: bool) {
    let mut rows: Vec<(Vec<String>, &str)> = Vec::new();
    let mut total = 0;
    // Runs whose failures are not known: no summary.json could be read.
    let mut unknown = Vec::new();
    for run in runs {
        let Some(summary) = &run.summary else {
            unknown.push(run.label.as_str());
            continue;
        };
        for op in &summary.ops {
            for (class, count) in &op.errors {
                total += count;
                let share = if op.requests > 0 {
                    format!(
                        "{}%",
                        format_number(*count as f64 * 100.0 / op.requests as f64)
                    )
                } else {
                    "-".to_string()
                };
                let mut cells = Vec::new();
                if by_run {
                    cells.push(run.label.clone());
                }
                cells.extend([
                    op.op.clone(),
                    class.clone(),
                    table::group_thousands(*count),
                    share,
                    op.error_examples.get(class).cloned().unwrap_or_default(),
                ]);
                rows.push((cells, ""));
            }
        }
    }
    page.h3("Errors by class");
    if !unknown.is_empty() {
        page.para(&format!(
            "Failed requests are not known for {}: no summary.json could be read.",
            unknown.join(", ")
        ));
    }
    if total == 0 {
        if unknown.len() < runs.len() {
            page.para(if unknown.is_empty() {
                "No request failed in the measured part."
            } else {
                "No request failed in the measured part of the others."
            });
        }
        return;
    }
    let mut header = Vec::new();
    let mut numeric = Vec::new();
    if by_run {
        header.push("Trial");
        numeric.push(false);
    }
    header.extend(["Operation", "Class", "Failed", "Share", "Example message"]);
    numeric.extend([false, false, true, true, false]);
    page.body.push_str(&table(&header, &rows, &numeric));
}

/// A configuration file as a grid of settings (nested keys joined with dots), leaving out
/// `skip`, and its command line as code.
fn settings_table(page: &mut Page, config: &serde_json::Value, skip: &[&str]) {
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut command: Option<String> = None;
    flatten(config, "", &mut rows, &mut command);
    page.body.push_str("<dl class=\"settings\">\n");
    for (key, value) in rows.iter().filter(|(k, _)| !skip.contains(&k.as_str())) {
        let _ = writeln!(
            page.body,
            "<dt>{}</dt><dd>{}</dd>",
            escape(key),
            escape(value)
        );
    }
    page.body.push_str("</dl>\n");
    if let Some(command) = command {
        let _ = writeln!(
            page.body,
            "<p>Command line:</p>\n<pre><code>{}</code></pre>",
            escape(&command)
        );
    }
}

fn flatten(
    value: &serde_json::Value,
    prefix: &str,
    rows: &mut Vec<(String, String)>,
    command: &mut Option<String>,
) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                if key == "command_line" {
                    if let Some(args) = v.as_array() {
                        let args: Vec<&str> = args.iter().filter_map(|a| a.as_str()).collect();
                        command.get_or_insert_with(|| shell_words(&args));
                    }
                    continue;
                }
                flatten(v, &path, rows, command);
            }
        }
        other => {
            let text = match other {
                serde_json::Value::Null => "-".to_string(),
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(", "),
                v => v.to_string(),
            };
            rows.push((prefix.to_string(), text));
        }
    }
}

/// A command line as a shell would take it back: arguments with spaces or quotes quoted.
fn shell_words(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,%@+".contains(c))
            {
                a.to_string()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::report::charts::tests::closed_loop_runs;
    use crate::report::load::tests::{capacity_fixture, run_fixture, sweep_fixture};

    fn load(dirs: &[PathBuf]) -> Input {
        Input::load(dirs).unwrap()
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
        // The two searches compared, the first as the baseline, with seed 000's tables.
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
    fn a_sweep_report_has_its_table_and_seed_001s_two_charts() {
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
        use crate::metrics::server_samples::{ServerSample, SERVER_SAMPLES_JSONL};
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
        use crate::report::charts::pauses::tests::{node, pause, pauses_of};
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
        use crate::report::charts::pauses::tests::{node, pause, pauses_of};
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
