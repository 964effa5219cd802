//! The live page: one HTML page that follows the run or search as it goes. The server
//! renders it whole from a [`Snapshot`] of the state, so that a page opened at any moment,
//! or read without script (`chromium --dump-dom`), shows the latest interval; a few lines of
//! inline script fetch `/live/body` every second, put it in place, and say so when headroom
//! no longer answers. It looks as the report it links to does (the report's stylesheet, its
//! charts drawn by its SVG code) and names no resource of any kind: it works offline.
//!
//! - `mod.rs`: what the page is drawn from ([`Snapshot`]), the page, its script and its body;
//! - `sections.rs`: the body's sections: where the process is, the latest interval's
//!   figures, a search's ladder, the SLA windows;
//! - `charts.rs`: the current run's charts, as the report's chart models.

mod charts;
mod sections;

use super::ladder::{self, Rung};
use super::state::{Point, RunInfo, Stage, State, WindowMark};
use crate::report::export::html::{escape, CSS};
use sections::{data_check, failing_windows, figures, header, ladder_section, latest, windows};

/// The most points of one series drawn: a long history (6 hours of 1 s intervals) is drawn
/// one interval in k, so that the page stays cheap to make, send and draw every second.
pub const MAX_DRAWN: usize = 1500;

/// What the page is drawn from, copied out of the state's lock: the current run's part of
/// the history only, and of that no more than [`MAX_DRAWN`] points.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The run's or search's name.
    pub title: String,
    /// The workload's name.
    pub workload: String,
    /// `K/N` for worker K of a fleet of N, `single` otherwise.
    pub worker: String,
    /// Whether the process runs a search (probes and trials) rather than one run.
    pub search: bool,
    /// Where the process is.
    pub stage: Stage,
    /// The current run, once one has started.
    pub run: Option<RunInfo>,
    /// Which run of the process the current one is, from 1.
    pub run_number: usize,
    /// The current run's directory.
    pub dir: Option<String>,
    /// The current run's intervals to draw: one in [`Snapshot::step`], and always the latest.
    pub history: Vec<Point>,
    /// How many intervals of the current run the history holds, drawn or not.
    pub intervals: usize,
    /// One interval in `step` is drawn.
    pub step: usize,
    /// The current run's judged windows.
    pub marks: Vec<WindowMark>,
    /// A search's rungs.
    pub rungs: Vec<Rung>,
    /// The bracket so far: the capacity as it stands, and the lowest failing rate (an
    /// interval search's lower and upper bounds).
    pub bracket: (Option<f64>, Option<f64>),
    /// For an interval search, the bracket's bounds are at this confidence.
    pub confidence: Option<f64>,
    /// The end, when it has come: what to say, and whether there is a report.
    pub ended: Option<(String, bool)>,
    /// The current run's verdict once known.
    pub verdict: Option<String>,
    /// What `--validate` found so far, when the process validates.
    pub validation: Option<crate::live::validation::LiveValidation>,
}

impl Snapshot {
    /// A copy of what the page needs.
    pub fn of(state: &State) -> Snapshot {
        let current = state.runs.len().checked_sub(1);
        let points = of_current_run(&state.history, current, |p| p.run);
        let step = points.len().div_ceil(MAX_DRAWN).max(1);
        let last = points.len().saturating_sub(1);
        let history = points
            .iter()
            .enumerate()
            .filter(|(i, _)| i % step == 0 || *i == last)
            .map(|(_, p)| p.clone())
            .collect();
        Snapshot {
            title: state.labels.run.clone(),
            workload: state.labels.workload.clone(),
            worker: state.labels.worker.clone(),
            search: state.search,
            stage: state.stage,
            run: state.run().cloned(),
            run_number: state.runs.len(),
            dir: state
                .run()
                .and_then(|r| r.dir.as_ref())
                .filter(|d| !d.as_os_str().is_empty())
                .map(|d| d.display().to_string()),
            history,
            intervals: points.len(),
            step,
            marks: of_current_run(&state.marks, current, |m| m.run).to_vec(),
            rungs: state
                .outcome
                .as_ref()
                .map(ladder::rungs)
                .unwrap_or_default(),
            bracket: state.bracket(),
            confidence: state.bounds.map(|b| b.confidence),
            ended: state
                .ended
                .as_ref()
                .map(|(sentence, report)| (sentence.clone(), report.is_some())),
            verdict: state.run().and_then(|r| r.verdict.clone()),
            validation: state.validation.clone(),
        }
    }

    /// The current run's latest interval.
    pub fn latest(&self) -> Option<&Point> {
        self.history.last()
    }

    /// Whether the current run has a schedule (open loop): its latency is response time.
    fn open_loop(&self) -> bool {
        self.run.as_ref().is_some_and(|r| r.rate_per_s.is_some())
    }
}

/// The items of the current run: the end of the list, since runs follow one another.
fn of_current_run<T>(items: &[T], current: Option<usize>, run: impl Fn(&T) -> usize) -> &[T] {
    let n = items
        .iter()
        .rev()
        .take_while(|item| Some(run(item)) == current)
        .count();
    &items[items.len() - n..]
}

/// What the live page adds to the report's stylesheet.
const LIVE_CSS: &str = r#"
.status { font-size: 18px; margin: 10px 0 6px; }
.status.ended { background: var(--pass-bg); border-left: 4px solid var(--pass); padding: 6px 12px; max-width: none; }
b.pass { color: var(--pass); }
b.fail, span.fail { color: var(--fail); }
.figures { display: flex; flex-wrap: wrap; gap: 10px; margin: 8px 0 12px; }
.fig { flex: 1 1 110px; border: 1px solid var(--line); border-radius: 8px; padding: 6px 12px; background: #f7f8fa; }
.fig .v { font-size: 24px; font-weight: 700; font-variant-numeric: tabular-nums; white-space: nowrap; }
.fig .v small { font-size: 14px; font-weight: 400; color: var(--muted); }
.fig .l { color: var(--muted); font-size: 13px; }
.fig.bad { background: var(--fail-bg); border-color: #f3a9a4; }
.fig.bad .v { color: var(--fail); }
.strip { display: flex; gap: 2px; height: 26px; max-width: 1000px; margin: 4px 0 10px; }
.strip span { flex: 1 1 0; min-width: 2px; max-width: 48px; border-radius: 2px; background: #66bb6a; }
.strip span.fail { background: var(--fail); }
tr.invalid td { background: var(--note-bg); }
tr.running td { color: var(--muted); }
tr.now td { font-weight: 600; }
table caption { caption-side: top; text-align: left; color: var(--muted); font-size: 13px; padding: 0 0 4px; }
#gone { margin: 12px auto; max-width: 1072px; }
"#;

/// Fetches the body every second until the page says the end has come; after three
/// failed fetches in a row, says headroom no longer answers (and takes it back if it does).
const SCRIPT: &str = "\
let failures = 0;
async function poll() {
  let answered = false;
  try {
    const r = await fetch('/live/body', {cache: 'no-store'});
    if (r.ok) { document.getElementById('live').innerHTML = await r.text(); answered = true; }
  } catch (e) {}
  failures = answered ? 0 : failures + 1;
  const gone = document.getElementById('gone');
  if (answered && gone) gone.remove();
  if (failures >= 3 && !gone) {
    const p = document.createElement('p');
    p.id = 'gone';
    p.className = 'note';
    p.textContent = 'headroom no longer answers: the run has ended or was stopped. This is the last state it sent.';
    document.body.prepend(p);
  }
  if (!document.getElementById('ended')) setTimeout(poll, 1000);
}
setTimeout(poll, 1000);
";

/// The whole page.
pub fn page(s: &Snapshot) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"headroom {version}\">\n\
         <title>headroom live: {title}</title>\n<style>{CSS}{LIVE_CSS}</style>\n</head>\n\
         <body>\n<div id=\"live\">{body}</div>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        version = env!("CARGO_PKG_VERSION"),
        title = escape(&s.title),
        body = body(s)
    )
}

/// The part of the page that follows the run: put in place of the last one every second.
pub fn body(s: &Snapshot) -> String {
    let mut h = String::new();
    header(&mut h, s);
    h.push_str("<main>\n");
    latest(&mut h, s);
    data_check(&mut h, s);
    ladder_section(&mut h, s);
    windows(&mut h, s);
    figures(&mut h, s);
    failing_windows(&mut h, s);
    h.push_str("</main>\n");
    h
}

#[cfg(test)]
mod tests;
