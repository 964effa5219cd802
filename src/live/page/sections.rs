//! The sections of the live page's body, top to bottom: where the process is and the run's
//! verdict (the header), the latest interval's figures and each op type's latency, a
//! search's ladder and bracket, the SLA windows as a strip, the charts, and the failing
//! windows with their terms.

use std::fmt::Write as _;

use super::{charts, Snapshot};
use crate::format::{format_number, format_rate, group_thousands};
use crate::live::state::{Latest, Stage, WindowMark};
use crate::report::charts::{draw, sla_words};
use crate::report::export::html::escape;

/// The most SLA windows the strip shows: the latest.
const STRIP_WINDOWS: usize = 400;

/// The most failing windows listed: the latest.
const FAILING_LISTED: usize = 10;

/// Where the process is, in words.
fn stage_words(stage: Stage, search: bool) -> &'static str {
    match stage {
        Stage::Starting => "connecting and preparing",
        Stage::Populate => "writing the rows the run reads",
        Stage::Warmup => "the warmup, not judged",
        Stage::Measure => "the measured part",
        Stage::Between if search => "between runs: the search chooses its next rate",
        Stage::Between => "between runs",
        Stage::Ended => "everything is over",
    }
}

/// The title, where the process is (or that it has ended), the run and its verdict.
pub(super) fn header(h: &mut String, s: &Snapshot) {
    let what = if s.search { "capacity search" } else { "run" };
    let worker = if s.worker == "single" {
        String::new()
    } else {
        format!(" · worker {}", escape(&s.worker))
    };
    let _ = write!(
        h,
        "<header class=\"top\">\n<p class=\"kicker\">headroom live · {what} of {}{worker}</p>\n\
         <h1>{}</h1>\n",
        escape(&s.workload),
        escape(&s.title)
    );
    match &s.ended {
        Some((sentence, report)) => {
            let _ = write!(
                h,
                "<p id=\"ended\" class=\"status ended\"><b>Ended.</b> {}",
                escape(sentence)
            );
            if *report {
                h.push_str(" <a href=\"/report\">Open the report</a>.");
            }
            h.push_str("</p>\n");
        }
        None => {
            let _ = writeln!(
                h,
                "<p id=\"stage\" class=\"status\">Now: <b>{}</b> ({})</p>",
                s.stage.name(),
                stage_words(s.stage, s.search)
            );
        }
    }
    if let Some(run) = &s.run {
        let mut line = if s.search {
            format!("Run {} of the search", s.run_number)
        } else {
            "The run".to_string()
        };
        match run.rate_per_s {
            Some(rate) => {
                let _ = write!(line, ": {}/s attempted", format_rate(rate));
            }
            None => line.push_str(": closed loop"),
        }
        if let Some(repeat) = run.repeat {
            let _ = write!(line, ", repeat {repeat}");
        }
        if run.warmup_s > 0.0 {
            let _ = write!(line, ", {} s of warmup", format_number(run.warmup_s));
        }
        if let Some(sla) = &run.sla {
            let _ = write!(line, "; SLA {}", sla_words(sla));
        }
        line.push('.');
        let _ = writeln!(h, "<p class=\"tested\" id=\"run\">{}</p>", escape(&line));
    }
    if let Some(dir) = &s.dir {
        let _ = writeln!(
            h,
            "<p class=\"tested\">Run directory: <code>{}</code></p>",
            escape(dir)
        );
    }
    if let Some(verdict) = &s.verdict {
        let class = if verdict.starts_with("PASS") {
            "pass"
        } else if verdict.starts_with("FAIL") {
            "fail"
        } else {
            ""
        };
        let _ = writeln!(
            h,
            "<p id=\"verdict\" class=\"status\">This run's verdict: <b class=\"{class}\">{}</b></p>",
            escape(verdict)
        );
    }
    h.push_str("</header>\n");
}

/// A rate as the page's figures write it: no separators, so that it reads back as a number.
fn plain_rate(rate: f64) -> String {
    if rate >= 100.0 || rate.fract() == 0.0 {
        format!("{rate:.0}")
    } else {
        format!("{rate:.1}")
    }
}

/// Milliseconds from seconds, as the page's figures write them.
fn ms(seconds: f64) -> String {
    format_number(seconds * 1e3)
}

/// One figure: its value (with an id when it has one), its unit and what it is.
fn figure(h: &mut String, id: Option<&str>, value: &str, unit: &str, what: &str, bad: bool) {
    let value = match id {
        Some(id) => format!("<span id=\"{id}\">{value}</span>"),
        None => value.to_string(),
    };
    let _ = write!(
        h,
        "<div class=\"fig{}\"><div class=\"v\">{value}<small>{unit}</small></div>\
         <div class=\"l\">{what}</div></div>",
        if bad { " bad" } else { "" }
    );
}

/// The latest interval: its figures and each op type's latency.
pub(super) fn latest(h: &mut String, s: &Snapshot) {
    let Some(p) = s.latest() else {
        let why = match s.stage {
            Stage::Ended => "the run ended before its first interval.",
            _ => "the first comes a second after the load starts.",
        };
        let _ = writeln!(
            h,
            "<p class=\"tested\" id=\"waiting\">No interval of this run yet: {why}</p>"
        );
        return;
    };
    let l = &Latest::of(&p.figures);
    let _ = write!(
        h,
        "<section id=\"latest\">\n<p class=\"tested\">The latest interval, ending \
         <span id=\"latest-end\">{:.1}</span> s after the run's start{}:</p>\n<div class=\"figures\">",
        l.end_s,
        if l.warmup { " (warmup: not judged)" } else { "" }
    );
    let attempted = p.attempted_per_s.map_or("–".to_string(), plain_rate);
    figure(h, Some("attempted"), &attempted, "/s", "attempted", false);
    let short = p
        .attempted_per_s
        .is_some_and(|a| l.achieved_per_s < 0.95 * a);
    let achieved = plain_rate(l.achieved_per_s);
    figure(h, Some("achieved"), &achieved, "/s", "achieved", short);
    let errors = plain_rate(l.errors_per_s);
    figure(
        h,
        Some("errors"),
        &errors,
        "/s",
        "errors",
        l.errors_per_s > 0.0,
    );
    figure(
        h,
        Some("backlog"),
        &l.backlog.to_string(),
        "",
        "backlog",
        false,
    );
    figure(h, None, &l.in_flight.to_string(), "", "in flight", false);
    let lag = l.send_lag_s.map_or("–".to_string(), |q| ms(q[1]));
    figure(h, None, &lag, " ms", "send lag, p99", false);
    figure(
        h,
        None,
        &format_number(p.figures.cpu_cores.unwrap_or(0.0)),
        "",
        "client CPU, cores",
        false,
    );
    let hiccup = l.hiccup_s.map_or("–".to_string(), |q| ms(q[3]));
    figure(h, None, &hiccup, " ms", "client hiccup, max", false);
    h.push_str("</div>\n");
    if !l.ops.is_empty() {
        ops_table(h, l, s.open_loop());
    }
    h.push_str("</section>\n");
}

/// Each op type's line in the latest interval: requests, errors, latency and, when some op
/// type is judged for recall (an ANN query), its answers' mean and p1 recall.
fn ops_table(h: &mut String, l: &Latest, open_loop: bool) {
    let kind = if open_loop { "response" } else { "service" };
    let recall = l.ops.iter().any(|o| o.recall.is_some());
    let (recall_caption, recall_head) = if recall {
        (
            "; the recall of the ANN queries' answers (mean, and the recall 1% fell below; a \
             failed query's 0)",
            "<th class=\"num\">recall mean</th><th class=\"num\">recall p1</th>",
        )
    } else {
        ("", "")
    };
    let _ = write!(
        h,
        "<div class=\"scroll\"><table id=\"ops\">\n<caption>Each op type in the latest interval: \
         requests, failed requests, and the {kind} time of those answered, ms{recall_caption}</caption>\n\
         <thead><tr><th>op</th><th class=\"num\">requests</th><th class=\"num\">errors</th>\
         <th class=\"num\">p50</th><th class=\"num\">p99</th><th class=\"num\">p99.9</th>\
         <th class=\"num\">max</th>{recall_head}</tr></thead>\n<tbody>\n"
    );
    for op in &l.ops {
        let q = if open_loop {
            op.response_s
        } else {
            op.service_s
        };
        let mut cells: Vec<String> = match q {
            Some(q) => q.iter().map(|v| ms(*v)).collect(),
            None => vec!["–".to_string(); 4],
        };
        if recall {
            match &op.recall {
                Some(r) => cells.extend([format!("{:.3}", r.mean), format!("{:.3}", r.p1)]),
                None => cells.extend(["–".to_string(), "–".to_string()]),
            }
        }
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num{}\">{}</td>",
            escape(&op.op),
            op.requests,
            if op.errors > 0 { " bad" } else { "" },
            op.errors
        );
        for cell in cells {
            let _ = write!(h, "<td class=\"num\">{cell}</td>");
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody></table></div>\n");
}

/// A search's ladder so far, its bracket and the trial running now.
pub(super) fn ladder_section(h: &mut String, s: &Snapshot) {
    if !s.search {
        return;
    }
    h.push_str("<h2 id=\"ladder\">The search so far</h2>\n");
    let (low, high) = s.bracket;
    if let Some(confidence) = s.confidence {
        bounds_paragraph(h, low, high, confidence);
    } else {
        bracket_paragraph(h, low, high);
    }
    trials_so_far(h, s);
}

/// An interval search's bounds so far.
fn bounds_paragraph(h: &mut String, low: Option<f64>, high: Option<f64>, confidence: f64) {
    let rate = |r: Option<f64>, none: &str| {
        r.map_or(none.to_string(), |r| format!("<b>{}/s</b>", format_rate(r)))
    };
    let _ = writeln!(
        h,
        "<p id=\"bracket\">Capacity so far, at {}% confidence: lower bound {}, upper bound {}.</p>",
        (confidence * 1000.0).round() / 10.0,
        rate(low, "not yet confirmed"),
        rate(high, "not yet confirmed")
    );
}

/// A strict search's bracket so far.
fn bracket_paragraph(h: &mut String, low: Option<f64>, high: Option<f64>) {
    let low_words = low.map_or_else(
        || "no rate has passed yet".to_string(),
        |r| {
            format!(
                "<b>{}/s</b>, the highest rate that passed with every rate below it",
                format_rate(r)
            )
        },
    );
    let high_words = high.map_or_else(
        || "no rate has failed yet".to_string(),
        |r| format!("<b>{}/s</b>", format_rate(r)),
    );
    let _ = writeln!(
        h,
        "<p id=\"bracket\">Capacity so far: {low_words}; lowest failing rate: {high_words}.{}</p>",
        if low.is_some() && high.is_some() {
            " The capacity lies between them."
        } else {
            ""
        }
    );
}

/// The trial running now and the rates tried so far.
fn trials_so_far(h: &mut String, s: &Snapshot) {
    let running = s
        .run
        .as_ref()
        .filter(|r| r.verdict.is_none() && s.ended.is_none())
        .and_then(|r| Some((r.rate_per_s?, r.repeat)));
    if let Some((rate, repeat)) = running {
        let _ = writeln!(
            h,
            "<p id=\"trial\">Now running: <b>{}/s</b>{}.</p>",
            format_rate(rate),
            repeat.map_or(String::new(), |k| format!(", repeat {k}"))
        );
    }
    let same = |a: f64, b: f64| (a - b).abs() < 1e-9;
    let mut rows: Vec<(f64, String, String, String, String, &str)> = s
        .rungs
        .iter()
        .map(|r| {
            let now = running.is_some_and(|(rate, _)| same(rate, r.rate_per_s));
            let class = match (r.verdict, now) {
                (_, true) => "now",
                ("fail", _) => "fail",
                ("invalid", _) => "invalid",
                ("running", _) => "running",
                _ => "",
            };
            (
                r.rate_per_s,
                r.verdict.to_string(),
                r.repeats.to_string(),
                format_rate(r.achieved_per_s),
                r.reason.clone().unwrap_or_default(),
                class,
            )
        })
        .collect();
    if let Some((rate, repeat)) = running {
        if !s.rungs.iter().any(|r| same(r.rate_per_s, rate)) {
            let repeats = repeat.map_or(0, |k| k.saturating_sub(1));
            rows.push((
                rate,
                "running".into(),
                repeats.to_string(),
                "–".into(),
                String::new(),
                "now",
            ));
            rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    if rows.is_empty() {
        h.push_str("<p class=\"tested\">No rate has been tried yet.</p>\n");
        return;
    }
    h.push_str(
        "<div class=\"scroll\"><table id=\"rungs\">\n<thead><tr><th class=\"num\">rate (/s)</th>\
         <th>verdict</th><th class=\"num\">repeats</th><th class=\"num\">best achieved (/s)</th>\
         <th>why</th></tr></thead>\n<tbody>\n",
    );
    for (rate, verdict, repeats, achieved, why, class) in rows {
        let verdict = if class == "now" {
            "running now".to_string()
        } else {
            verdict
        };
        let _ = writeln!(
            h,
            "<tr class=\"{class}\"><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{repeats}</td>\
             <td class=\"num\">{achieved}</td><td>{}</td></tr>",
            format_rate(rate),
            escape(&verdict),
            escape(&why)
        );
    }
    h.push_str("</tbody></table></div>\n");
}

/// "12–14 s": a window's span from the run's start.
fn span(m: &WindowMark) -> String {
    format!(
        "{}–{} s",
        format_number(m.start_s),
        format_number(m.start_s + m.length_s)
    )
}

/// The SLA windows judged so far: how many failed, and a strip of them, red where failed.
pub(super) fn windows(h: &mut String, s: &Snapshot) {
    let Some(sla) = s.run.as_ref().and_then(|r| r.sla.as_ref()) else {
        return;
    };
    h.push_str("<h2 id=\"windows\">SLA windows</h2>\n");
    if s.marks.is_empty() {
        h.push_str(
            "<p class=\"tested\">No window judged yet: the SLA is judged over every window after \
             the warmup, each when it ends.</p>\n",
        );
        return;
    }
    let failed = s.marks.iter().filter(|m| !m.pass).count();
    let _ = writeln!(
        h,
        "<p id=\"window-count\">{} windows judged: {} passed, <span class=\"{}\">{failed} failed</span>.</p>",
        s.marks.len(),
        s.marks.len() - failed,
        if failed > 0 { "fail" } else { "" }
    );
    // One strip per window length of the SLA; a shorter last window joins the shortest
    // length it fits in.
    let lengths: Vec<f64> = sla.windows().iter().map(|w| w.as_secs_f64()).collect();
    for (i, length) in lengths.iter().enumerate() {
        let group = |m: &&WindowMark| {
            let fits = lengths.iter().position(|l| m.length_s <= l + 1e-9);
            fits.unwrap_or(lengths.len() - 1) == i
        };
        let marks: Vec<&WindowMark> = s.marks.iter().filter(group).collect();
        if marks.is_empty() {
            continue;
        }
        let shown = &marks[marks.len().saturating_sub(STRIP_WINDOWS)..];
        let _ = write!(
            h,
            "<p class=\"tested\">Every {} s window{}, oldest first:</p><div class=\"strip\" id=\"strip-{i}\">",
            format_number(*length),
            if shown.len() < marks.len() {
                format!(" (the latest {})", shown.len())
            } else {
                String::new()
            }
        );
        for m in shown {
            let title = if m.pass {
                format!("{}: pass", span(m))
            } else {
                format!("{}: FAIL, {}", span(m), m.failures)
            };
            let _ = write!(
                h,
                "<span class=\"w {}\" title=\"{}\"></span>",
                if m.pass { "pass" } else { "fail" },
                escape(&title)
            );
        }
        h.push_str("</div>\n");
    }
    if let Some(m) = s.marks.iter().rev().find(|m| !m.pass) {
        let _ = writeln!(
            h,
            "<p id=\"latest-failing\">The latest failing window, {}: <span class=\"fail\">{}</span>.</p>",
            span(m),
            escape(&m.failures)
        );
    }
}

/// The failing windows, the latest first, with their failing terms.
pub(super) fn failing_windows(h: &mut String, s: &Snapshot) {
    let failing: Vec<&WindowMark> = s.marks.iter().rev().filter(|m| !m.pass).collect();
    if failing.is_empty() {
        return;
    }
    h.push_str(
        "<h2 id=\"failing\">Failing windows</h2>\n<div class=\"scroll\"><table id=\"failing-windows\">\n\
         <thead><tr><th class=\"num\">window</th><th>failing terms: value</th></tr></thead>\n<tbody>\n",
    );
    for m in failing.iter().take(FAILING_LISTED) {
        let _ = writeln!(
            h,
            "<tr class=\"fail\"><td class=\"num\">{}</td><td>{}</td></tr>",
            span(m),
            escape(&m.failures)
        );
    }
    h.push_str("</tbody></table></div>\n");
    if failing.len() > FAILING_LISTED {
        let _ = writeln!(
            h,
            "<p class=\"tested\">…and {} earlier failing windows (intervals.csv lists every window).</p>",
            failing.len() - FAILING_LISTED
        );
    }
}

/// What `--validate` has judged so far: the current run's reads and writes, and the last
/// finished run's defects. Nothing without `--validate`.
pub(super) fn data_check(h: &mut String, s: &Snapshot) {
    let Some(v) = &s.validation else {
        return;
    };
    let now = &v.current;
    let reads = now.reads.current + now.reads.corrupt + now.reads.stale;
    let bad = |n: u64| if n > 0 { " class=\"fail\"" } else { "" };
    h.push_str("<h2 id=\"data\">The data (--validate)</h2>\n");
    let _ = writeln!(
        h,
        "<p id=\"data-so-far\">This run so far: {} reads checked, <span{}>{} corrupt</span>, \
         <span{}>{} stale</span> (a defect where the levels promise every acknowledged write), \
         {} unchecked; {} writes acknowledged, {} failed or timed out (never counted as \
         lost).</p>",
        group_thousands(reads),
        bad(now.reads.corrupt),
        group_thousands(now.reads.corrupt),
        bad(now.reads.stale),
        group_thousands(now.reads.stale),
        group_thousands(now.reads.unchecked),
        group_thousands(now.writes_acknowledged),
        group_thousands(now.writes_unknown),
    );
    if let Some((defects, lost)) = v.last_run {
        let _ = writeln!(
            h,
            "<p id=\"data-last-run\"{}>The last finished run: {} defect(s), {} acknowledged \
             write(s) lost by its final check.</p>",
            bad(defects),
            group_thousands(defects),
            group_thousands(lost)
        );
    }
}

/// The current run's charts, drawn as the report draws its own.
pub(super) fn figures(h: &mut String, s: &Snapshot) {
    let charts = charts::charts(s);
    if charts.is_empty() {
        return;
    }
    h.push_str("<h2 id=\"charts\">This run, interval by interval</h2>\n");
    if s.step > 1 {
        let _ = writeln!(
            h,
            "<p class=\"tested\">One interval in {} is drawn ({} so far, and always the latest).</p>",
            s.step, s.intervals
        );
    }
    for chart in charts {
        match draw::svg(&chart) {
            Ok(svg) => {
                let _ = writeln!(
                    h,
                    "<figure id=\"chart-{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>",
                    escape(&chart.id),
                    draw::inline(&svg),
                    escape(&chart.caption)
                );
            }
            Err(e) => {
                let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(&format!("{e:#}")));
            }
        }
    }
}
