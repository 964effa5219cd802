//! The live page: one HTML page that follows the run or search. The server renders it whole
//! from a [`Snapshot`] of the state (so a page opened at any moment, or read without
//! script, shows the latest interval), and a few lines of script fetch `/live/body` every
//! second and put it in place. No external resource: it works offline.

use std::fmt::Write as _;

use super::ladder::{self, Rung};
use super::state::{Point, Stage, State, WindowMark};

/// What the page is drawn from, copied out of the state's lock.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The run's or search's name.
    pub title: String,
    /// Where the process is.
    pub stage: Stage,
    /// The current run's directory.
    pub dir: Option<String>,
    /// The history of intervals.
    pub history: Vec<Point>,
    /// Judged windows.
    pub marks: Vec<WindowMark>,
    /// A search's rungs.
    pub rungs: Vec<Rung>,
    /// The bracket so far.
    pub bracket: (Option<f64>, Option<f64>),
    /// The end, when it has come.
    pub ended: Option<(String, bool)>,
    /// The current run's verdict once known.
    pub verdict: Option<String>,
}

impl Snapshot {
    /// A copy of what the page needs.
    pub fn of(state: &State) -> Snapshot {
        Snapshot {
            title: state.labels.run.clone(),
            stage: state.stage,
            dir: state
                .run()
                .and_then(|r| r.dir.as_ref())
                .map(|d| d.display().to_string()),
            history: state.history.clone(),
            marks: state.marks.clone(),
            rungs: state.outcome.as_ref().map(ladder::rungs).unwrap_or_default(),
            bracket: state
                .outcome
                .as_ref()
                .map(ladder::bracket)
                .unwrap_or((None, None)),
            ended: state
                .ended
                .as_ref()
                .map(|(sentence, report)| (sentence.clone(), report.is_some())),
            verdict: state.run().and_then(|r| r.verdict.clone()),
        }
    }
}

/// The whole page.
pub fn page(s: &Snapshot) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>headroom live: {title}</title>\
         <style>body{{font-family:sans-serif;margin:1.5em;color:#222}}\
         table{{border-collapse:collapse}}td,th{{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}}\
         .fail{{color:#c81e1e}}.pass{{color:#2c8a2c}}</style></head>\
         <body><div id=\"live\">{body}</div>\
         <script>\
         let failures=0;\
         async function poll(){{try{{const r=await fetch('/live/body',{{cache:'no-store'}});\
         if(r.ok){{document.getElementById('live').innerHTML=await r.text();failures=0;}}}}\
         catch(e){{failures++;if(failures==3){{const p=document.createElement('p');p.id='gone';\
         p.textContent='headroom no longer answers: the run has ended or was stopped.';\
         document.body.prepend(p);}}}}\
         if(!document.getElementById('ended'))setTimeout(poll,1000);}}\
         setTimeout(poll,1000);\
         </script></body></html>\n",
        title = escape(&s.title),
        body = body(s)
    )
}

/// The part of the page that follows the run.
pub fn body(s: &Snapshot) -> String {
    let mut h = String::new();
    let _ = write!(h, "<h1>headroom live: {}</h1>", escape(&s.title));
    match &s.ended {
        Some((sentence, report)) => {
            let _ = write!(h, "<p id=\"ended\"><b>Ended.</b> {}", escape(sentence));
            if *report {
                h.push_str(" <a href=\"/report\">The report</a>.");
            }
            h.push_str("</p>");
        }
        None => {
            let _ = write!(h, "<p id=\"stage\">Now: {}</p>", s.stage.name());
        }
    }
    if let Some(dir) = &s.dir {
        let _ = write!(h, "<p>Run directory: <code>{}</code></p>", escape(dir));
    }
    if let Some(v) = &s.verdict {
        let _ = write!(h, "<p>Verdict: {}</p>", escape(v));
    }
    if let Some(p) = s.history.last() {
        let l = &p.latest;
        let _ = write!(
            h,
            "<p id=\"latest\">Latest interval (ending {:.1} s): attempted <span id=\"attempted\">{}</span>/s, \
             achieved <span id=\"achieved\">{:.0}</span>/s, errors {:.0}/s, backlog {}, in flight {}</p>",
            l.end_s,
            p.attempted_per_s.map_or("–".to_string(), |r| format!("{r:.0}")),
            l.achieved_per_s,
            l.errors_per_s,
            l.backlog,
            l.in_flight
        );
    }
    if !s.marks.is_empty() {
        h.push_str("<h2>SLA windows</h2><table><tr><th>start (s)</th><th>length (s)</th><th>verdict</th><th>failing</th></tr>");
        for m in s.marks.iter().rev().take(50) {
            let _ = write!(
                h,
                "<tr class=\"{c}\"><td>{:.0}</td><td>{:.0}</td><td>{c}</td><td>{}</td></tr>",
                m.start_s,
                m.length_s,
                escape(&m.failures),
                c = if m.pass { "pass" } else { "fail" }
            );
        }
        h.push_str("</table>");
    }
    if !s.rungs.is_empty() {
        h.push_str("<h2>The ladder so far</h2><table><tr><th>rate/s</th><th>verdict</th><th>repeats</th><th>achieved/s</th><th>why</th></tr>");
        for r in &s.rungs {
            let _ = write!(
                h,
                "<tr><td>{:.0}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td></tr>",
                r.rate_per_s,
                r.verdict,
                r.repeats,
                r.achieved_per_s,
                escape(r.reason.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</table>");
    }
    h
}

/// Text as HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
