//! The live page drawn from a state fed as a run feeds it: intervals of real histograms,
//! windows judged by the SLA's judge, a search's records, the end.

use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::capacity::dir::SearchData;
use crate::engine::{ArrivalKind, Interval, LoadMode};
use crate::fixtures::{capacity_fixture, run_fixture};
use crate::live::state::Labels;
use crate::metrics::{ErrorClass, OpHistograms, Phase};
use crate::report::charts::{Kind, SLA_RED, WARMUP_GREY};
use crate::results::config::RunSettings;
use crate::sla::{judge_window, Judged, Sla, WindowStats};
use crate::stats::new_histogram;

const OPS: [&str; 2] = ["write", "read"];
const WARMUP_S: u64 = 2;
const WINDOW_S: u64 = 2;

fn labels(run: &str, worker: &str) -> Labels {
    Labels {
        run: run.to_string(),
        workload: "keyvalue".to_string(),
        worker: worker.to_string(),
    }
}

/// The run fixture's settings at `rate_per_s` with a 2 s warmup and `sla` over 2 s windows.
fn settings(rate_per_s: f64, sla: &str) -> RunSettings {
    let mut settings = RunSettings::read(&run_fixture()).unwrap();
    settings.mode = LoadMode::Open {
        rate_per_s,
        arrivals: ArrivalKind::Fixed,
        max_in_flight: 4096,
    };
    settings.warmup_s = WARMUP_S as f64;
    settings.worker = None;
    settings.sla = Some(Sla::parse(sla, Duration::from_secs(WINDOW_S)).unwrap());
    settings
}

/// `n` requests answered in `response_ms` (a tenth of it waited in the client), and
/// `timeouts` failed ones.
fn op(n: u64, response_ms: f64, timeouts: u64) -> OpHistograms {
    let mut h = OpHistograms::default();
    let response_ns = (response_ms * 1e6) as u64;
    for i in 0..n {
        // A spread of values, the largest `response_ms`.
        let ns = response_ns / 2 + response_ns * i / (2 * n.max(1));
        h.record_ok(ns, ns * 9 / 10);
        h.record_wait(ns / 10);
    }
    for _ in 0..timeouts {
        h.record_error(ErrorClass::Timeout, || "timed out".to_string());
        h.record_wait(1_000);
    }
    h
}

/// Interval `i` (1 s) of a 1000/s run: 900 writes and 100 reads; the reads of the seventh
/// second take 30 ms and ten of its writes time out.
fn interval(i: u64) -> Interval {
    let slow = i == 6;
    let writes = op(if slow { 890 } else { 900 }, 2.0, if slow { 10 } else { 0 });
    let reads = op(100, if slow { 30.0 } else { 3.0 }, 0);
    let phase = if i < WARMUP_S {
        Phase::Warmup
    } else {
        Phase::Measure
    };
    let phases = |stats: OpHistograms| {
        let mut both = [OpHistograms::default(), OpHistograms::default()];
        both[phase.index()] = stats;
        both
    };
    let mut hiccups = new_histogram();
    let _ = hiccups.record(200_000 + i * 10_000);
    Interval {
        index: i,
        start_ns: i * 1_000_000_000,
        length_ns: 1_000_000_000,
        ops: vec![phases(writes), phases(reads)],
        hiccups: Some(hiccups),
        backlog: i % 3,
        in_flight: 4,
    }
}

/// A state fed 10 s of a run (2 s of warmup, then four 2 s windows, the third failing).
fn run_state(title: &str) -> State {
    let mut state = State::new(labels(title, "single"), false);
    state.prepared(PathBuf::from("/tmp/runs/kv <1>"));
    let settings = settings(1000.0, "p99<5ms, read:p99.9<20ms, errors<1%");
    let sla = settings.sla.clone().unwrap();
    let ops: Vec<String> = OPS.iter().map(|s| s.to_string()).collect();
    state.measuring(&settings, &ops, 0.0);
    let intervals: Vec<Interval> = (0..10).map(interval).collect();
    for (i, interval) in intervals.iter().enumerate() {
        state.interval(interval, (i + 1) as f64 * 0.3, 50 << 20);
        let end_s = i as u64 + 1;
        if end_s > WARMUP_S && (end_s - WARMUP_S).is_multiple_of(WINDOW_S) {
            let index = (end_s - WARMUP_S) / WINDOW_S - 1;
            let window = WindowStats {
                index,
                start_ns: index * WINDOW_S * 1_000_000_000,
                length_ns: WINDOW_S * 1_000_000_000,
                ops: OPS
                    .iter()
                    .enumerate()
                    .map(|(o, name)| {
                        let mut all = OpHistograms::default();
                        for done in &intervals[i + 1 - WINDOW_S as usize..=i] {
                            all.add(&done.ops[o][Phase::Measure.index()]);
                        }
                        (name.to_string(), all)
                    })
                    .collect(),
            };
            let verdict = judge_window(&sla, &window);
            state.window(&Judged {
                window,
                verdict,
                by_client: false,
            });
        }
    }
    state
}

fn count(text: &str, what: &str) -> usize {
    text.matches(what).count()
}

/// The text between `<tag id="id"...>` and the next `<`.
fn text_of<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let start = at + html[at..].find('>').unwrap() + 1;
    let end = start + html[start..].find('<').unwrap();
    &html[start..end]
}

#[test]
fn a_run_draws_one_svg_per_chart_from_its_intervals() {
    let state = run_state("kv");
    let s = Snapshot::of(&state);
    assert_eq!((s.intervals, s.step, s.history.len()), (10, 1, 10));
    let html = page(&s);
    let ids: Vec<String> = charts::charts(&s).iter().map(|c| c.id.clone()).collect();
    assert_eq!(
        ids,
        [
            "live-rate",
            "live-latency-write",
            "live-latency-read",
            "live-errors",
            "live-backlog",
            "live-client"
        ]
    );
    assert_eq!(count(&html, "<svg class=\"chart\""), ids.len());
    assert_eq!(count(&html, "<figure id=\"chart-live-"), ids.len());
    for id in &ids {
        assert!(
            html.contains(&format!("<figure id=\"chart-{id}\">")),
            "{id}"
        );
    }
    // The latest interval's figures, which the page's readers look up by id.
    assert_eq!(text_of(&html, "attempted"), "1000");
    assert_eq!(text_of(&html, "achieved"), "1000");
    assert_eq!(text_of(&html, "latest-end"), "10.0");
    assert_eq!(text_of(&html, "errors"), "0");
    assert!(html.contains("<p id=\"stage\" class=\"status\">Now: <b>measure</b>"));
    assert!(html.contains("Run directory: <code>/tmp/runs/kv &lt;1&gt;</code>"));
}

#[test]
fn the_charts_carry_the_run_its_thresholds_and_its_windows() {
    let s = Snapshot::of(&run_state("kv"));
    let charts = charts::charts(&s);
    let chart = |id: &str| charts.iter().find(|c| c.id == id).unwrap();
    for c in &charts {
        let bands: Vec<(&str, f64, f64)> = c
            .bands
            .iter()
            .map(|b| (b.name.as_str(), b.from, b.to))
            .collect();
        assert_eq!(
            bands,
            [
                ("warmup (not judged)", 0.0, 2.0),
                ("failing SLA window", 6.0, 8.0)
            ],
            "{}",
            c.id
        );
        assert_eq!((c.bands[0].color, c.bands[1].color), (WARMUP_GREY, SLA_RED));
        let right = c.y2.is_some();
        assert_eq!(c.kind == Kind::TimelineThroughput, right, "{}", c.id);
    }
    let rate = chart("live-rate");
    let achieved = rate.series_named("achieved").unwrap();
    assert_eq!(achieved.points.len(), 10);
    assert_eq!(achieved.points[0], (1.0, 1000.0));
    assert_eq!(rate.hlines[0].at, 1000.0);
    assert_eq!(rate.hlines[0].name, "attempted rate: 1 000/s");

    // The thresholds that judge each op type, in red.
    let thresholds = |id: &str| -> Vec<(String, f64)> {
        chart(id)
            .hlines
            .iter()
            .inspect(|r| assert_eq!(r.color, SLA_RED))
            .map(|r| (r.name.clone(), r.at))
            .collect()
    };
    assert_eq!(
        thresholds("live-latency-write"),
        [("SLA: p99<5ms".to_string(), 5.0)]
    );
    assert_eq!(
        thresholds("live-latency-read"),
        [
            ("SLA: p99<5ms".to_string(), 5.0),
            ("SLA: read:p99.9<20ms".to_string(), 20.0)
        ]
    );
    let read = chart("live-latency-read");
    let names: Vec<&str> = read.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["p50", "p99", "p99.9", "max"]);
    let max = read.series_named("max").unwrap();
    assert_eq!(max.points.len(), 10);
    assert!(
        (29.0..=31.0).contains(&max.points[6].1),
        "{:?}",
        max.points[6]
    );
    assert!(max.points[5].1 < 4.0, "{:?}", max.points[5]);

    // Ten timeouts in the seventh second, none elsewhere.
    let timeouts = chart("live-errors").series_named("timeout").unwrap();
    assert_eq!(timeouts.points[6], (7.0, 10.0));
    assert_eq!(timeouts.points.iter().map(|p| p.1).sum::<f64>(), 10.0);

    let backlog = chart("live-backlog");
    assert_eq!(
        backlog
            .series_named("backlog (due, not sent)")
            .unwrap()
            .points[2],
        (3.0, 2.0)
    );
    let lag = backlog.series_named("send lag max").unwrap();
    assert!(lag.secondary && lag.points.iter().all(|p| p.1 > 0.0));
    let client = chart("live-client");
    let hiccup = client.series_named("client hiccup (max)").unwrap();
    assert!(hiccup.secondary);
    assert!(
        (0.28..=0.30).contains(&hiccup.points[9].1),
        "{:?}",
        hiccup.points[9]
    );
    // 0.3 s of CPU a second, the first interval's counted from the run's start.
    let cpu = client.series_named("client CPU").unwrap();
    assert_eq!(cpu.points.len(), 10);
    assert_eq!(cpu.points[0].0, 1.0);
    assert!(
        cpu.points.iter().all(|p| (p.1 - 0.3).abs() < 1e-9),
        "{:?}",
        cpu.points
    );
}

#[test]
fn a_failing_window_shows_red_with_its_failing_term() {
    let html = page(&Snapshot::of(&run_state("kv")));
    assert_eq!(
        text_of(&html, "window-count"),
        "4 windows judged: 3 passed, "
    );
    assert!(html.contains("<span class=\"fail\">1 failed</span>"));
    // In the strip, the third window is red, its failing term in its title.
    let strip = &html[html.find("<div class=\"strip\"").unwrap()..];
    let strip = &strip[..strip.find("</div>").unwrap()];
    let cells: Vec<&str> = strip
        .split("<span class=\"w ")
        .skip(1)
        .map(|c| &c[..4])
        .collect();
    assert_eq!(cells, ["pass", "pass", "fail", "pass"]);
    assert!(
        strip.contains(
            "title=\"6–8 s: FAIL, p99&lt;5ms was 27.001ms with 0.500% failed, \
             read:p99.9&lt;20ms was 29.852ms\""
        ),
        "{strip}"
    );
    // The table of failing windows: a red row with the term and its value.
    let row = &html[html
        .find("<tr class=\"fail\"><td class=\"num\">6–8 s</td>")
        .unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.ends_with(
            "<td>p99&lt;5ms was 27.001ms with 0.500% failed, read:p99.9&lt;20ms was 29.852ms</td>"
        ),
        "{row}"
    );
    assert!(html.contains(".strip span.fail { background: var(--fail); }"));
    assert!(html.contains("tr.fail td { background: var(--fail-bg); }"));
    assert!(html.contains(
        "The latest failing window, 6–8 s: <span class=\"fail\">p99&lt;5ms was 27.001ms"
    ));
}

#[test]
fn labels_from_users_and_servers_are_escaped() {
    let title = "a <b>\"run\"</b> & <script>alert(1)</script>";
    let html = page(&Snapshot::of(&run_state(title)));
    assert!(!html.contains("<b>\"run\"") && !html.contains("<script>alert"));
    assert!(html.contains("<title>headroom live: a &lt;b&gt;&quot;run&quot;&lt;/b&gt; &amp;"));
    assert!(html.contains("<h1>a &lt;b&gt;&quot;run&quot;&lt;/b&gt; &amp; &lt;script&gt;"));
    // The charts' titles too, escaped by the SVG drawing.
    assert!(html.contains("Attempted and achieved rate: a &lt;b&gt;"));
    assert_eq!(count(&html, "<script"), 1, "the page's own script only");
}

#[test]
fn the_page_names_no_resource_from_anywhere() {
    let html = page(&Snapshot::of(&run_state("kv")));
    for forbidden in [
        "http://", "https://", "<link", "<img", "src=", "@import", "url(", "//cdn",
    ] {
        assert!(!html.contains(forbidden), "the page contains {forbidden}");
    }
    assert!(html.contains("fetch('/live/body'"));
}

#[test]
fn the_ended_page_says_so_and_links_the_report() {
    let mut state = run_state("kv");
    state.end(
        "The run has ended: FAIL in 1 of 4 windows (p99<5ms).".to_string(),
        Some(PathBuf::from("/tmp/runs/kv/report.html")),
    );
    let html = page(&Snapshot::of(&state));
    assert!(html.contains(
        "<p id=\"ended\" class=\"status ended\"><b>Ended.</b> The run has ended: FAIL in 1 of 4 \
         windows (p99&lt;5ms). <a href=\"/report\">Open the report</a>.</p>"
    ));
    assert!(!html.contains("id=\"stage\""));
    // The page stops asking once it shows the end.
    assert!(html.contains("if (!document.getElementById('ended')) setTimeout(poll, 1000);"));
    // The latest interval stays on the page.
    assert_eq!(text_of(&html, "achieved"), "1000");

    // No report (an interrupted populate): no link.
    let mut state = run_state("kv");
    state.end("The run was stopped during its populate.".to_string(), None);
    let html = body(&Snapshot::of(&state));
    assert!(html.contains("id=\"ended\"") && !html.contains("href=\"/report\""));
}

#[test]
fn only_the_current_run_is_drawn_and_a_long_one_one_point_in_k() {
    let mut state = run_state("kv");
    // A second run of six hours of 1 s intervals (the history's limit).
    state.prepared(PathBuf::from("/tmp/runs/second"));
    state.measuring(&settings(500.0, "p99<5ms"), &OPS.map(str::to_string), 0.0);
    let template = state.history.last().unwrap().clone();
    for i in 0..crate::live::state::HISTORY_POINTS {
        let mut p = template.clone();
        p.run = 1;
        p.figures.end_s = i as f64 + 1.0;
        (p.figures.requests, p.figures.errors) = (500 + (i % 7) as u64, 0);
        state.history.push(p);
    }
    let s = Snapshot::of(&state);
    assert_eq!(s.intervals, crate::live::state::HISTORY_POINTS);
    assert_eq!(s.step, 15);
    assert!(s.history.len() <= MAX_DRAWN + 1, "{}", s.history.len());
    assert!(s.history.iter().all(|p| p.run == 1));
    assert_eq!(s.latest().unwrap(), state.history.last().unwrap());
    assert!(
        s.marks.is_empty(),
        "the first run's windows are not this run's"
    );
    let charts = charts::charts(&s);
    assert!(charts
        .iter()
        .flat_map(|c| &c.series)
        .all(|series| series.points.len() <= MAX_DRAWN + 1));
    let html = body(&s);
    assert!(html.contains("One interval in 15 is drawn (21600 so far, and always the latest)."));
    assert_eq!(text_of(&html, "latest-end"), "21600.0");
    assert!(html.contains("No window judged yet"));
}

#[test]
fn a_search_shows_its_ladder_its_bracket_and_the_trial_running_now() {
    let outcome = SearchData::load(&capacity_fixture())
        .unwrap()
        .summary
        .outcome;
    let mut state = State::new(labels("search", "2/3"), true);
    state.search_outcome(&outcome);
    for _ in 0..2 {
        state.prepared(PathBuf::from("/tmp/search/trials/rate-5300-repeat-1"));
    }
    state.measuring(&settings(5300.0, "p99<20ms"), &OPS.map(str::to_string), 0.0);
    let html = page(&Snapshot::of(&state));
    assert!(html.contains("headroom live · capacity search of keyvalue · worker 2/3"));
    assert!(html.contains("Run 2 of the search: 5 300/s attempted, repeat 1, 2 s of warmup"));
    assert_eq!(text_of(&html, "bracket"), "Capacity so far: ");
    assert!(html.contains(
        "<b>5 200/s</b>, the highest rate that passed with every rate below it; lowest failing \
         rate: <b>5 500/s</b>. The capacity lies between them."
    ));
    assert!(html.contains("<p id=\"trial\">Now running: <b>5 300/s</b>, repeat 1.</p>"));
    let table = &html[html.find("<table id=\"rungs\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    let rows: Vec<(&str, &str)> = table
        .split("<tr class=\"")
        .skip(1)
        .map(|r| {
            let class = &r[..r.find('"').unwrap()];
            let rate = r.split("<td class=\"num\">").nth(1).unwrap();
            (class, &rate[..rate.find('<').unwrap()])
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("", "2 800"),
            ("", "4 200"),
            ("", "4 900"),
            ("", "5 200"),
            ("now", "5 300"),
            ("fail", "5 500"),
            ("fail", "10 900")
        ]
    );
    assert!(table.contains("<td>running now</td>"));
    assert!(table.contains("<td>p99&lt;20ms failed in 1 of 1 windows</td>"));
    // No interval of this trial yet: no chart, and the page says why.
    assert!(html.contains("id=\"waiting\"") && !html.contains("<svg"));
}

#[test]
fn an_interval_search_shows_its_bounds_at_their_confidence() {
    let outcome = SearchData::load(&capacity_fixture())
        .unwrap()
        .summary
        .outcome;
    let mut state = State::new(labels("search", "single"), true);
    state.search_outcome(&outcome);
    state.search_bounds(crate::live::state::Bounds {
        lower_per_s: Some(4100.0),
        upper_per_s: Some(4900.0),
        confidence: 0.9,
    });
    let html = page(&Snapshot::of(&state));
    assert!(html.contains(
        "<p id=\"bracket\">Capacity so far, at 90% confidence: lower bound <b>4 100/s</b>, \
         upper bound <b>4 900/s</b>.</p>"
    ));
    assert!(
        !html.contains("lowest failing rate"),
        "the ladder's words are not its"
    );
    state.search_bounds(crate::live::state::Bounds {
        lower_per_s: None,
        upper_per_s: None,
        confidence: 0.8,
    });
    assert!(page(&Snapshot::of(&state)).contains(
        "at 80% confidence: lower bound not yet confirmed, upper bound not yet confirmed."
    ));
}

#[test]
fn recall_shows_in_the_ops_table_only_for_a_run_with_it() {
    let html = page(&Snapshot::of(&run_state("kv")));
    assert!(html.contains("<table id=\"ops\">"));
    assert!(!html.contains("recall"), "a run without recall shows none");

    let mut state = State::new(labels("vectors", "single"), false);
    state.prepared(PathBuf::from("/tmp/runs/v"));
    let ops = ["write".to_string(), "ann".to_string()];
    state.measuring(&settings(100.0, "p99<5ms"), &ops, 0.0);
    let mut ann = op(100, 3.0, 0);
    for i in 0..100 {
        ann.record_recall(if i < 95 { 1.0 } else { 0.5 });
    }
    let measured = |stats: OpHistograms| [OpHistograms::default(), stats];
    state.interval(
        &Interval {
            index: 2,
            start_ns: 2_000_000_000,
            length_ns: 1_000_000_000,
            ops: vec![measured(op(10, 2.0, 0)), measured(ann)],
            hiccups: None,
            backlog: 0,
            in_flight: 0,
        },
        0.1,
        1,
    );
    let html = page(&Snapshot::of(&state));
    assert!(
        html.contains("<th class=\"num\">recall mean</th><th class=\"num\">recall p1</th>"),
        "{html}"
    );
    // The writes have no recall; the queries' mean and first percentile.
    assert!(
        html.contains("<td class=\"num\">–</td><td class=\"num\">–</td></tr>"),
        "{html}"
    );
    assert!(
        html.contains("<td class=\"num\">0.975</td><td class=\"num\">0.500</td></tr>"),
        "{html}"
    );
}

/// Under --validate the page says what the checker judged so far, a defect in red; without
/// it, nothing of the data.
#[test]
fn the_data_check_shows_only_under_validate_with_its_defects_in_red() {
    let mut state = run_state("kv");
    let page = body(&Snapshot::of(&state));
    assert!(!page.contains("id=\"data\""), "{page}");

    let mut so_far = crate::validation::SoFar::default();
    so_far.reads.current = 12_000;
    so_far.reads.stale = 2;
    so_far.writes_acknowledged = 11_000;
    so_far.writes_unknown = 3;
    state.validation(so_far);
    let page = body(&Snapshot::of(&state));
    let at = page.find("id=\"data-so-far\"").expect("the data's line");
    let line = &page[at..at + page[at..].find("</p>").unwrap()];
    assert!(
        line.contains("12 002 reads checked") && line.contains("11 000 writes acknowledged"),
        "{line}"
    );
    assert!(
        line.contains("<span class=\"fail\">2 stale</span>"),
        "{line}"
    );
    assert!(line.contains("<span>0 corrupt</span>"), "{line}");
    assert!(line.contains("3 failed or timed out"), "{line}");
    assert!(
        !page.contains("data-last-run"),
        "no run finished yet: {page}"
    );
}
