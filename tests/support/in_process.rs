//! Runs, sweeps and reports made in-process through the library, as the commands make them:
//! settings built as typed values, a run observed event by event instead of read off a
//! terminal.

use std::path::Path;

use headroom::cluster::NodeSource;
use headroom::engine::Interval;
use headroom::metrics::Phase;
use headroom::results::summary::{PopulateSummary, RunSummary};
use headroom::run::{self, Control, Finished, RunContext, RunObserver, RunOutcome, RunSettings};
use headroom::sla::Judged;
use headroom::stop::StopSignal;
use headroom::sweep::live::{SweepContext, SweepObserver};
use headroom::sweep::record::StepRecord;
use headroom::sweep::settings::SweepSettings;
use headroom::sweep::SweepFile;

/// The settings of a real `headroom run timeseries -r 0.2 --rate 1000 --duration 20s --warmup
/// 5s` (tests/fixtures/report/run/config.json), aimed at the test's node, to vary per test.
pub fn timeseries_settings() -> RunSettings {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/run");
    let mut settings = RunSettings::read(&fixture).unwrap();
    settings.hosts = vec![super::hosts()];
    settings.command_line = vec!["(a test, in-process)".to_string()];
    settings
}

/// Everything a run told its observer.
#[derive(Debug, Default)]
pub struct Recorder {
    /// Notes and problems, in order.
    pub notes: Vec<String>,
    /// `Some(native)` once the run directory was prepared.
    pub native: Option<bool>,
    /// The populate, once over (the last, when one observer hears several runs).
    pub populated: Option<PopulateSummary>,
    /// How many populates it heard.
    pub populates: usize,
    /// Whether `measuring` came.
    pub measuring: bool,
    /// Per interval: its index, and its requests in the warmup and the measured phase.
    pub intervals: Vec<(u64, u64, u64)>,
    /// Each SLA window as judged: whether it passed, and its requests.
    pub windows: Vec<(bool, u64)>,
    /// summary.json, as `finished` gave it.
    pub finished: Option<RunSummary>,
}

impl RunObserver for Recorder {
    fn note(&mut self, line: &str) {
        self.notes.push(line.to_string());
    }

    fn problem(&mut self, line: &str) {
        self.notes.push(format!("problem: {line}"));
    }

    fn prepared(&mut self, _out: &Path, native: bool) {
        self.native = Some(native);
    }

    fn populated(&mut self, summary: &PopulateSummary) {
        self.populated = Some(summary.clone());
        self.populates += 1;
    }

    fn measuring(&mut self, _start: &run::Measuring) {
        self.measuring = true;
    }

    fn interval(&mut self, interval: &Interval) -> Control {
        let requests = |phase: Phase| -> u64 {
            interval
                .ops
                .iter()
                .map(|op| op[phase.index()].total())
                .sum()
        };
        self.intervals.push((
            interval.index,
            requests(Phase::Warmup),
            requests(Phase::Measure),
        ));
        Control::Go
    }

    fn window(&mut self, judged: &Judged) {
        let requests = judged.window.ops.iter().map(|(_, op)| op.total()).sum();
        self.windows.push((judged.verdict.pass, requests));
    }

    fn finished(&mut self, run: &Finished) {
        self.finished = Some(run.summary.clone());
    }
}

/// One run of `settings` into `out`, in-process, as `headroom run` makes it (no server
/// pauses recorded); its outcome and what it told the observer.
pub fn execute(settings: &RunSettings, out: &Path) -> (anyhow::Result<RunOutcome>, Recorder) {
    let runtime = run::runtime(settings.threads).unwrap();
    let context = RunContext {
        out,
        credentials: None,
        stop: StopSignal::new(),
        populate: true,
        local_nodes: &NodeSource::Nowhere,
    };
    let mut recorder = Recorder::default();
    let outcome = runtime.block_on(run::execute(settings, &context, &mut recorder));
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    (outcome, recorder)
}

/// The settings of a real `headroom sweep keyvalue --concurrency 2..8 --step-duration 4s
/// --warmup 1s` (tests/fixtures/report/sweep/sweep.json), aimed at the test's node.
pub fn keyvalue_sweep_settings() -> SweepSettings {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/sweep");
    let mut settings = SweepFile::read(&fixture).unwrap().settings;
    settings.run.hosts = vec![super::hosts()];
    settings.run.command_line = vec!["(a test, in-process)".to_string()];
    settings
}

/// Everything a sweep told its observer.
#[derive(Debug, Default)]
pub struct SweepRecorder {
    /// What the steps' runs told, all together.
    pub runs: Recorder,
    /// The concurrency of each step as it started.
    pub started: Vec<usize>,
    /// Each step's record as it ended.
    pub done: Vec<StepRecord>,
}

impl SweepObserver for SweepRecorder {
    fn runs(&mut self) -> &mut dyn RunObserver {
        &mut self.runs
    }

    fn step(&mut self, _index: usize, _total: usize, concurrency: usize) {
        self.started.push(concurrency);
    }

    fn step_done(&mut self, _earlier: &[StepRecord], step: &StepRecord) {
        self.done.push(step.clone());
    }
}

/// One sweep of `settings` into `out`, in-process, as `headroom sweep` makes it.
pub fn sweep(settings: &SweepSettings, out: &Path) -> (anyhow::Result<SweepFile>, SweepRecorder) {
    let runtime = run::runtime(settings.run.threads).unwrap();
    let is_usage = |e: &anyhow::Error| headroom::exit_code_for(e) == 2;
    let context = SweepContext {
        runtime: &runtime,
        stop: StopSignal::new(),
        credentials: None,
        is_usage: &is_usage,
    };
    let mut recorder = SweepRecorder::default();
    let file = headroom::sweep::live::sweep(settings, out, context, &mut recorder);
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    (file, recorder)
}
