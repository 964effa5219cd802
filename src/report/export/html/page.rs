//! What every section is made of: the stylesheet, the [`Page`] being built (its
//! headings, paragraphs, notes and numbered figures), tables, and [`escape`], which
//! every text from a user or a server goes through.

use std::fmt::Write as _;

use crate::compare::render as compare_render;
use crate::report::charts::{self, draw, Chart};

/// The page's stylesheet: readable on a laptop screen, and in print. The live page takes
/// it too, so that it looks as the report it links to.
pub const CSS: &str = r#"
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
pub(super) struct Page {
    pub(super) body: String,
    pub(super) charts: Vec<PlacedChart>,
    pub(super) toc: Vec<(String, String)>,
}

impl Page {
    /// Adds a section heading (and its entry in the contents).
    pub(super) fn section(&mut self, id: &str, heading: &str) {
        let class = if self.toc.is_empty() {
            " class=\"first\""
        } else {
            ""
        };
        let _ = writeln!(self.body, "<h2 id=\"{id}\"{class}>{}</h2>", escape(heading));
        self.toc.push((id.to_string(), heading.to_string()));
    }

    /// Adds a chart as a figure with its caption; numbers it.
    pub(super) fn figure(&mut self, mut chart: Chart) -> anyhow::Result<()> {
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

    pub(super) fn para(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }

    pub(super) fn note(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p class=\"note\">{}</p>", escape(text));
    }

    pub(super) fn h3(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h3>{}</h3>", escape(text));
    }
}

/// A table: header cells, rows of (cells, row class); cells starting with a digit, a minus
/// or a dash alone are right-aligned numbers.
pub(super) fn table(header: &[&str], rows: &[(Vec<String>, &str)], numeric: &[bool]) -> String {
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

/// Tables of cells with their titles and legends; rows with a `worse` cell are marked.
pub(super) fn put_tables(page: &mut Page, tables: &[compare_render::Table], notes: &[String]) {
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
