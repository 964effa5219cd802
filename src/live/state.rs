//! What the endpoint, the push and the live page show: one [`State`], updated on the control
//! runtime from what a run already makes (its intervals, its judged windows, its summary,
//! a search's records) and read by whoever asks. Nothing here is on the request path: the
//! engine's workers never see it, and the lock around it is taken once an interval by the
//! run's control thread and once a request by the server's.

use std::collections::BTreeMap;
use std::path::PathBuf;

use hdrhistogram::Histogram;

use super::validation::LiveValidation;
use crate::capacity::Outcome;
use crate::engine::Interval;
use crate::figures::{Figures, Quantiles};
use crate::metrics::Phase;
use crate::results::config::RunSettings;
use crate::results::summary::{Recall, RunSummary};
use crate::sla::{Judged, Judgement, Sla};
use crate::stats::histogram::new_histogram;
use crate::validation::SoFar;

/// The quantiles every latency gauge has: its label and the percentile.
pub const QUANTILES: [(&str, f64); 4] =
    [("0.5", 50.0), ("0.99", 99.0), ("0.999", 99.9), ("1", 100.0)];

/// The quantiles every recall gauge has: its label and the quantile. Recall's tail is its
/// low end: `0.01` is the recall 1% of the answers fell below.
pub const RECALL_QUANTILES: [&str; 3] = ["0.01", "0.05", "0.5"];

/// A recall's figures in [`RECALL_QUANTILES`]' order.
pub fn recall_quantiles(r: &Recall) -> [f64; 3] {
    [r.p1, r.p5, r.p50]
}

/// How many intervals the live page's history keeps: 6 hours of 1 s intervals. Older points
/// are thinned (every other one dropped) rather than the history grown without bound.
pub const HISTORY_POINTS: usize = 21_600;

/// How many judged windows and search rungs the page keeps.
const MARKS_KEPT: usize = 5_000;

/// The labels every sample carries: which run, which workload, which worker of a fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labels {
    /// The run's or search's name.
    pub run: String,
    /// The workload's name.
    pub workload: String,
    /// `K/N` for worker K of a fleet of N, `single` for a run of one process.
    pub worker: String,
}

/// Where the process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Connecting, preparing: nothing sent yet.
    Starting,
    /// Writing the rows the run reads.
    Populate,
    /// The warmup.
    Warmup,
    /// The measured part.
    Measure,
    /// A search between its runs.
    Between,
    /// Everything is over.
    Ended,
}

impl Stage {
    /// Every stage, in order.
    pub const ALL: [Stage; 6] = [
        Stage::Starting,
        Stage::Populate,
        Stage::Warmup,
        Stage::Measure,
        Stage::Between,
        Stage::Ended,
    ];

    /// Its name in labels and on the page.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Starting => "starting",
            Stage::Populate => "populate",
            Stage::Warmup => "warmup",
            Stage::Measure => "measure",
            Stage::Between => "between",
            Stage::Ended => "ended",
        }
    }
}

/// Four quantiles of a histogram of nanoseconds, in seconds ([`QUANTILES`]' order); `None`
/// for an empty histogram.
pub fn quantiles_s(h: &Histogram<u64>) -> Option<[f64; 4]> {
    Quantiles::of(h).map(|q| q.seconds())
}

/// One op type in the latest interval.
#[derive(Debug, Clone, PartialEq)]
pub struct OpLatest {
    /// The op type.
    pub op: String,
    /// Answered requests, both phases.
    pub requests: u64,
    /// Failed requests.
    pub errors: u64,
    /// Response time quantiles, seconds (successful requests only).
    pub response_s: Option<[f64; 4]>,
    /// Service time quantiles, seconds.
    pub service_s: Option<[f64; 4]>,
    /// The recall of the interval's answers, for an op type judged for it (an ANN query).
    pub recall: Option<Recall>,
}

/// The latest interval, as the gauges show it: its [`Figures`], latencies in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Latest {
    /// End of the interval, seconds since the run's start.
    pub end_s: f64,
    /// Successful answers per second, every op and phase (as summary.json counts the
    /// achieved rate: a failed request carries no load).
    pub achieved_per_s: f64,
    /// Failed per second.
    pub errors_per_s: f64,
    /// Per op type with at least one request.
    pub ops: Vec<OpLatest>,
    /// The client's wait before sending, every op, seconds.
    pub send_lag_s: Option<[f64; 4]>,
    /// The client's hiccups, seconds.
    pub hiccup_s: Option<[f64; 4]>,
    /// Requests due and not yet sent.
    pub backlog: u64,
    /// Requests sent and not yet answered.
    pub in_flight: u64,
    /// Failed requests by class.
    pub errors_by_class: BTreeMap<String, u64>,
    /// Whether the interval was (partly) warmup.
    pub warmup: bool,
}

impl Latest {
    /// An interval's figures as the gauges show them.
    pub fn of(f: &Figures) -> Latest {
        let seconds = |q: &Option<Quantiles>| q.as_ref().map(Quantiles::seconds);
        Latest {
            end_s: f.end_s,
            achieved_per_s: f.achieved_per_s(),
            errors_per_s: f.errors_per_s(),
            ops: f
                .ops
                .iter()
                .map(|o| OpLatest {
                    op: o.op.clone(),
                    requests: o.requests,
                    errors: o.errors,
                    response_s: seconds(&o.response),
                    service_s: seconds(&o.service),
                    recall: o.recall.clone(),
                })
                .collect(),
            send_lag_s: seconds(&f.send_lag),
            hiccup_s: seconds(&f.hiccup),
            backlog: f.backlog.unwrap_or(0),
            in_flight: f.in_flight.unwrap_or(0),
            errors_by_class: f.errors_by_class.clone().unwrap_or_default(),
            warmup: f.warmup,
        }
    }
}

/// One point of the live page's history: an interval, with the run it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Which run of the process (0, 1, ... : a search's probes and trials).
    pub run: usize,
    /// The interval's figures, the client's CPU over it included.
    pub figures: Figures,
    /// The attempted rate, when the run has a schedule.
    pub attempted_per_s: Option<f64>,
}

/// A judged SLA window, for the page.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowMark {
    /// Which run of the process.
    pub run: usize,
    /// Start, seconds since the run's start.
    pub start_s: f64,
    /// Length, seconds.
    pub length_s: f64,
    /// Whether every term passed.
    pub pass: bool,
    /// The failing terms and their values.
    pub failures: String,
}

/// One run of the process: a run, or a search's probe or trial.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    /// The run directory.
    pub dir: Option<PathBuf>,
    /// The attempted rate, per second, when the run has a schedule: this process's
    /// ([`RunSettings::process_rate`]), a fleet's worker's share.
    pub rate_per_s: Option<f64>,
    /// The repeat of a search's trial at this rate, from 1.
    pub repeat: Option<u32>,
    /// The op types.
    pub ops: Vec<String>,
    /// The warmup, seconds.
    pub warmup_s: f64,
    /// The SLA, when the run has one.
    pub sla: Option<Sla>,
    /// Validity once finished (`valid`, `client_bound`), else `pending`.
    pub validity: String,
    /// The run's verdict in words, once finished.
    pub verdict: Option<String>,
}

/// Everything shown live.
#[derive(Debug)]
pub struct State {
    /// The labels of every sample.
    pub labels: Labels,
    /// Whether this process runs a search (probes and trials) rather than one run.
    pub search: bool,
    /// Where the process is.
    pub stage: Stage,
    /// Every run so far; the last is the current one.
    pub runs: Vec<RunInfo>,
    /// Answered requests by (op, phase), over every run of the process: never goes down.
    pub requests: BTreeMap<(String, &'static str), u64>,
    /// Failed requests by (op, phase, class).
    pub errors: BTreeMap<(String, &'static str, String), u64>,
    /// The latest interval.
    pub latest: Option<Latest>,
    /// The current SLA window so far, per op type: response and service times.
    pub window: Vec<(String, Histogram<u64>, Histogram<u64>)>,
    /// The current SLA window's recall so far (measured requests), per op type judged for
    /// it, in [`RECALL_SCALE`](crate::metrics::RECALL_SCALE)ths.
    pub window_recall: BTreeMap<String, Histogram<u64>>,
    /// Which window of the current run `window` holds.
    window_index: Option<u64>,
    /// Judged SLA windows by (window length label, verdict).
    pub windows_judged: BTreeMap<(String, &'static str), u64>,
    /// Intervals collected.
    pub intervals: u64,
    /// The client's CPU time, seconds, when last read.
    pub cpu_s: f64,
    /// The client's resident memory, bytes, when last read.
    pub rss_bytes: u64,
    /// The page's history of intervals.
    pub history: Vec<Point>,
    /// The page's judged windows.
    pub marks: Vec<WindowMark>,
    /// A search's outcome so far: its records and what they bracket.
    pub outcome: Option<Outcome>,
    /// An interval search's bounds so far (`--goal interval`): they replace the bracket.
    pub bounds: Option<Bounds>,
    /// Once everything is over: what to say, and the report when there is one.
    pub ended: Option<(String, Option<PathBuf>)>,
    /// What `--validate` found so far; `None` until a validated run reports.
    pub validation: Option<LiveValidation>,
    /// CPU seconds at the previous interval (or the run's start), for the page's CPU share.
    cpu_at_last_interval: Option<(f64, f64)>,
}

impl State {
    /// Nothing yet.
    pub fn new(labels: Labels, search: bool) -> State {
        State {
            labels,
            search,
            stage: Stage::Starting,
            runs: Vec::new(),
            requests: BTreeMap::new(),
            errors: BTreeMap::new(),
            latest: None,
            window: Vec::new(),
            window_recall: BTreeMap::new(),
            window_index: None,
            windows_judged: BTreeMap::new(),
            intervals: 0,
            cpu_s: 0.0,
            rss_bytes: 0,
            history: Vec::new(),
            marks: Vec::new(),
            outcome: None,
            bounds: None,
            ended: None,
            validation: None,
            cpu_at_last_interval: None,
        }
    }

    /// The current run, if one has started.
    pub fn run(&self) -> Option<&RunInfo> {
        self.runs.last()
    }

    /// Under `--validate`: what the checker has judged so far in the current run.
    pub fn validation(&mut self, so_far: SoFar) {
        self.validation.get_or_insert_with(Default::default).current = so_far;
    }

    /// A run's directory is made.
    pub fn prepared(&mut self, dir: PathBuf) {
        if let Some(v) = &mut self.validation {
            v.next_run();
        }
        self.runs.push(RunInfo {
            dir: Some(dir),
            rate_per_s: None,
            repeat: None,
            ops: Vec::new(),
            warmup_s: 0.0,
            sla: None,
            validity: "pending".to_string(),
            verdict: None,
        });
        self.latest = None;
        self.window.clear();
        self.window_recall.clear();
        self.window_index = None;
    }

    /// The populate starts.
    pub fn populating(&mut self) {
        self.stage = Stage::Populate;
    }

    /// The measured part (and its warmup) starts; `cpu_s` is the client's CPU time now, from
    /// which the first interval's CPU share counts.
    pub fn measuring(&mut self, settings: &RunSettings, op_names: &[String], cpu_s: f64) {
        self.cpu_at_last_interval = Some((0.0, cpu_s));
        if self.runs.is_empty() {
            self.prepared(PathBuf::new());
        }
        let repeat = self.next_repeat(settings);
        let run = self.runs.last_mut().expect("pushed above");
        run.rate_per_s = settings.process_rate();
        run.repeat = repeat;
        run.ops = op_names.to_vec();
        run.warmup_s = settings.warmup_s;
        run.sla = settings.sla.clone();
        self.stage = if settings.warmup_s > 0.0 {
            Stage::Warmup
        } else {
            Stage::Measure
        };
        self.window = op_names
            .iter()
            .map(|op| (op.clone(), new_histogram(), new_histogram()))
            .collect();
        self.window_recall.clear();
        self.window_index = None;
    }

    /// A search's repeat of the rate about to run: one more than the records at that rate.
    fn next_repeat(&self, settings: &RunSettings) -> Option<u32> {
        let outcome = self.outcome.as_ref()?;
        let rate = settings.process_rate()?;
        let done = outcome
            .rows
            .iter()
            .find(|r| (r.rate_per_s - rate).abs() < 1e-9)
            .map_or(0, |r| r.trials.len());
        Some(done as u32 + 1)
    }

    /// One interval; `cpu_s` and `rss_bytes` read just now.
    pub fn interval(&mut self, interval: &Interval, cpu_s: f64, rss_bytes: u64) {
        let Some(run) = self.runs.last().cloned() else {
            return;
        };
        let warmup_ns = (run.warmup_s * 1e9) as u64;
        let end_ns = interval.start_ns + interval.length_ns;
        // The counters never go down: every op and phase's requests and failures.
        for (name, phases) in run.ops.iter().zip(&interval.ops) {
            for phase in [Phase::Warmup, Phase::Measure] {
                let stats = &phases[phase.index()];
                if stats.total() == 0 {
                    continue;
                }
                let phase_name = phase_label(phase);
                *self.requests.entry((name.clone(), phase_name)).or_default() += stats.total();
                for (class, n) in &stats.errors {
                    *self
                        .errors
                        .entry((name.clone(), phase_name, class.name().to_string()))
                        .or_default() += n;
                }
            }
        }
        self.accumulate_window(interval, warmup_ns);
        let mut figures = Figures::of_interval(interval, &run.ops);
        if end_ns > warmup_ns {
            self.stage = Stage::Measure;
        }
        let cpu_cores = match self.cpu_at_last_interval {
            Some((at_s, cpu)) if figures.end_s > at_s => (cpu_s - cpu) / (figures.end_s - at_s),
            _ => 0.0,
        }
        .max(0.0);
        figures.cpu_cores = Some(cpu_cores);
        self.cpu_at_last_interval = Some((figures.end_s, cpu_s));
        self.cpu_s = cpu_s;
        self.rss_bytes = rss_bytes;
        self.intervals += 1;
        self.latest = Some(Latest::of(&figures));
        self.history.push(Point {
            run: self.runs.len() - 1,
            figures,
            attempted_per_s: run.rate_per_s,
        });
        if self.history.len() > HISTORY_POINTS {
            thin(&mut self.history);
        }
    }

    /// Adds an interval's measured requests to the current SLA window's histograms, starting
    /// a new window when the interval is past the last one.
    fn accumulate_window(&mut self, interval: &Interval, warmup_ns: u64) {
        let Some(window_ns) = self
            .runs
            .last()
            .and_then(|r| r.sla.as_ref())
            .map(|s| s.window.as_nanos() as u64)
            .filter(|w| *w > 0)
        else {
            return;
        };
        if interval.start_ns < warmup_ns {
            return;
        }
        let index = (interval.start_ns - warmup_ns) / window_ns;
        if self.window_index != Some(index) {
            for (_, response, service) in &mut self.window {
                response.reset();
                service.reset();
            }
            for recall in self.window_recall.values_mut() {
                recall.reset();
            }
            self.window_index = Some(index);
        }
        for ((op, response, service), phases) in self.window.iter_mut().zip(&interval.ops) {
            let measured = &phases[Phase::Measure.index()];
            let _ = response.add(&measured.response_ns);
            let _ = service.add(&measured.service_ns);
            if let Some(recall) = &measured.recall {
                let _ = self
                    .window_recall
                    .entry(op.clone())
                    .or_insert_with(new_histogram)
                    .add(recall);
            }
        }
    }

    /// One SLA window judged.
    pub fn window(&mut self, judged: &Judged) {
        let verdict = &judged.verdict;
        let length = verdict.length_ns;
        let label = window_label(length);
        let pass = if verdict.pass { "pass" } else { "fail" };
        *self.windows_judged.entry((label, pass)).or_default() += 1;
        let warmup_s = self.run().map_or(0.0, |r| r.warmup_s);
        self.marks.push(WindowMark {
            run: self.runs.len().saturating_sub(1),
            start_s: warmup_s + verdict.start_ns as f64 / 1e9,
            length_s: length as f64 / 1e9,
            pass: verdict.pass,
            failures: verdict.failures(),
        });
        if self.marks.len() > MARKS_KEPT {
            self.marks.drain(..MARKS_KEPT / 2);
        }
    }

    /// The run is over: its validity and verdict.
    pub fn finished(&mut self, summary: &RunSummary) {
        if let Some(found) = &summary.validation {
            self.validation
                .get_or_insert_with(Default::default)
                .finished(found);
        }
        if let Some(run) = self.runs.last_mut() {
            run.validity = match &summary.validity {
                Some(v) if v.is_valid() => "valid".to_string(),
                Some(_) => "client_bound".to_string(),
                None => "none".to_string(),
            };
            run.verdict = Some(match &summary.sla {
                None => "no SLA".to_string(),
                Some(sla) => match sla.verdict.judgement() {
                    Judgement::Pass => "PASS".to_string(),
                    Judgement::Fail => format!("FAIL in {}", sla.verdict.failing_in_words()),
                    Judgement::NoVerdict(why) => format!("no verdict: {why}"),
                },
            });
        }
        self.stage = if self.search {
            Stage::Between
        } else {
            Stage::Ended
        };
    }

    /// A search's records so far.
    pub fn search_outcome(&mut self, outcome: &Outcome) {
        self.outcome = Some(outcome.clone());
    }

    /// An interval search's bounds so far.
    pub fn search_bounds(&mut self, bounds: Bounds) {
        self.bounds = Some(bounds);
    }

    /// What the search has bracketed so far: an interval search's bounds, else the highest
    /// rate that passed with every lower one and the lowest that failed.
    pub fn bracket(&self) -> (Option<f64>, Option<f64>) {
        match (&self.bounds, &self.outcome) {
            (Some(bounds), _) => (bounds.lower_per_s, bounds.upper_per_s),
            (None, Some(outcome)) => outcome.bracket(),
            (None, None) => (None, None),
        }
    }

    /// Everything is over.
    pub fn end(&mut self, sentence: String, report: Option<PathBuf>) {
        self.stage = Stage::Ended;
        self.ended = Some((sentence, report));
    }

    /// The validity of the current run, for the gauge.
    pub fn validity(&self) -> &str {
        self.run().map_or("pending", |r| r.validity.as_str())
    }
}

/// An interval search's bounds as they stand (decision 0019).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// The lower bound, per second, once confirmed.
    pub lower_per_s: Option<f64>,
    /// The upper bound, per second, once confirmed.
    pub upper_per_s: Option<f64>,
    /// The confidence both hold at, e.g. 0.9.
    pub confidence: f64,
}

/// A phase's label value.
pub fn phase_label(phase: Phase) -> &'static str {
    match phase {
        Phase::Warmup => "warmup",
        Phase::Measure => "measure",
    }
}

/// A window length as the `window` label writes it: `10s`, `1m`, `1500ms`.
pub fn window_label(length_ns: u64) -> String {
    let ms = length_ns / 1_000_000;
    if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Drops every other point of the older half, keeping the newest half whole.
fn thin(history: &mut Vec<Point>) {
    let half = history.len() / 2;
    let mut i = 0;
    history.retain(|_| {
        let keep = i >= half || i % 2 == 0;
        i += 1;
        keep
    });
}
