//! Watching a run or a search while it goes: `--metrics-listen` (OpenMetrics at `/metrics`
//! for Prometheus), `--metrics-push` (the Pushgateway, for runs too short to scrape) and
//! `--live` (one page in the browser that follows the run). docs/live.md is the user's
//! side.
//!
//! Data flows one way: the run's observer events ([`Watch`], wrapped around the terminal's
//! observer) update one shared [`state::State`] on the control thread, from what the run
//! already makes (each interval's merged histograms, each judged window, the summary, a
//! search's records); the live thread ([`server`]) reads it to answer a scrape, draw the
//! page or push. The engine's workers never see any of it: nothing here is on the request
//! path.

pub mod ladder;
pub mod openmetrics;
pub mod page;
pub mod push;
pub mod server;
pub mod state;
pub mod validation;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::capacity::Outcome;
use crate::engine::Interval;
use crate::fleet::local::WorkerWatching;
use crate::results::config::RunSettings;
use crate::results::summary::{PopulateSummary, RunSummary};
use crate::run::{Control, Finished, Measuring, RunObserver};
use crate::sla::Judged;

pub use push::PushTarget;
pub use server::{Listener, Routes};
pub use state::{Labels, State};

/// What the user asked to watch, checked and bound before anything connects.
#[derive(Debug, Default)]
pub struct LiveSettings {
    /// The sockets to serve, bound already.
    pub listeners: Vec<Listener>,
    /// Where to push, if anywhere.
    pub push: Option<PushTarget>,
    /// How long to go on serving after the end.
    pub linger: Duration,
}

impl LiveSettings {
    /// Whether anything was asked.
    pub fn any(&self) -> bool {
        !self.listeners.is_empty() || self.push.is_some()
    }
}

/// The running live view of one process.
pub struct Live {
    state: Arc<Mutex<State>>,
    server: server::Server,
    pushing: bool,
    /// `--metrics-push`'s URL, as given.
    push_url: Option<String>,
    linger: Duration,
}

impl Live {
    /// Starts serving and pushing what `settings` asks; `None` when it asks nothing.
    pub fn start(
        settings: LiveSettings,
        labels: Labels,
        search: bool,
    ) -> anyhow::Result<Option<Live>> {
        if !settings.any() {
            return Ok(None);
        }
        let state = Arc::new(Mutex::new(State::new(labels, search)));
        let pushing = settings.push.is_some();
        let push_url = settings.push.as_ref().map(|p| p.url.clone());
        let server = server::Server::start(state.clone(), settings.listeners, settings.push)?;
        Ok(Some(Live {
            state,
            server,
            pushing,
            push_url,
            linger: settings.linger,
        }))
    }

    /// The addresses served, and what each serves: for the lines that tell the user.
    pub fn addresses(&self) -> Vec<String> {
        self.server
            .addresses
            .iter()
            .map(|(addr, routes)| match (routes.metrics, routes.page) {
                (true, true) => {
                    format!("live page at http://{addr}/ and metrics at http://{addr}/metrics")
                }
                (false, true) => format!("live page at http://{addr}/"),
                _ => format!("metrics at http://{addr}/metrics"),
            })
            .collect()
    }

    /// What the local workers of a watched fleet search serve and push.
    pub fn for_workers(&self) -> WorkerWatching {
        WorkerWatching {
            metrics_listen: self
                .server
                .addresses
                .iter()
                .find(|(_, routes)| routes.metrics)
                .map(|(addr, _)| *addr),
            metrics_push: self.push_url.clone(),
            label: self.state().labels.run.clone(),
        }
    }

    /// The state, locked (a search's records, a test's look).
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An observer that updates the state and passes every event on to `inner`.
    pub fn watch<'a>(&'a self, inner: &'a mut dyn RunObserver) -> Watch<'a> {
        Watch { live: self, inner }
    }

    /// A search's records so far.
    pub fn search_outcome(&self, outcome: &Outcome) {
        self.state().search_outcome(outcome);
        self.push_now();
    }

    /// An interval search's bounds so far; call before [`Live::search_outcome`], which
    /// pushes them.
    pub fn search_bounds(&self, bounds: state::Bounds) {
        self.state().search_bounds(bounds);
    }

    fn push_now(&self) {
        if self.pushing {
            let body = openmetrics::Families(self.state.clone()).prometheus_text();
            self.server.push(body);
        }
    }

    /// Everything is over: says so on the page, pushes the final state (and waits for it),
    /// then serves `--linger` longer, or until Ctrl-C (not at all after an interrupted
    /// run: the user has asked to stop). A failure's sentence is printed before the wait,
    /// so that a run that failed does not wait in silence. A push that
    /// failed is said on standard error; it never changes the run's outcome.
    pub fn end(
        &self,
        sentence: impl Into<String>,
        report: Option<&Path>,
        interrupted: bool,
        failed: bool,
    ) {
        let sentence = sentence.into();
        let report = report.filter(|p| p.is_file()).map(Path::to_path_buf);
        self.state().end(sentence.clone(), report);
        let lingers = !self.server.addresses.is_empty() && !self.linger.is_zero() && !interrupted;
        if failed && lingers {
            // Standard error says it once more as the command ends.
            println!("{}", crate::usage::cut(&sentence, 300));
        }
        if self.pushing {
            let body = openmetrics::Families(self.state.clone()).prometheus_text();
            if let Err(e) = self.server.push_and_wait(body, push::PUSH_TIMEOUT * 2) {
                eprintln!("Warning: the final push of the metrics failed: {e}");
            }
        }
        if lingers {
            println!(
                "Serving the final state for {} more (--linger); Ctrl-C ends it now.",
                humantime::format_duration(self.linger)
            );
            // The run's runtime, and its Ctrl-C handler, are gone by now.
            if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                runtime.block_on(async {
                    tokio::select! {
                        _ = tokio::time::sleep(self.linger) => {}
                        _ = crate::stop::ctrl_c_or_term() => {}
                    }
                });
            }
        }
    }
}

/// Passes a run's events on to another observer, updating the live state on the way.
pub struct Watch<'a> {
    live: &'a Live,
    inner: &'a mut dyn RunObserver,
}

impl RunObserver for Watch<'_> {
    fn note(&mut self, line: &str) {
        self.inner.note(line);
    }

    fn problem(&mut self, line: &str) {
        self.inner.problem(line);
    }

    fn prepared(&mut self, out: &Path, native: bool) {
        self.live.state().prepared(PathBuf::from(out));
        self.inner.prepared(out, native);
    }

    fn populating(&mut self, rows: u64, in_flight: usize) {
        self.live.state().populating();
        self.inner.populating(rows, in_flight);
    }

    fn populate_interval(&mut self, at_s: f64, rows: u64, rate_per_s: f64) {
        self.inner.populate_interval(at_s, rows, rate_per_s);
    }

    fn populated(&mut self, summary: &PopulateSummary) {
        self.inner.populated(summary);
    }

    fn measuring(&mut self, start: &Measuring) {
        let cpu_s = crate::metrics::process::cpu_time().as_secs_f64();
        self.live
            .state()
            .measuring(start.settings, start.op_names, cpu_s);
        self.inner.measuring(start);
    }

    fn interval(&mut self, interval: &Interval) -> Control {
        let cpu_s = crate::metrics::process::cpu_time().as_secs_f64();
        let rss = crate::metrics::process::rss_bytes();
        self.live.state().interval(interval, cpu_s, rss);
        self.live.push_now();
        self.inner.interval(interval)
    }

    fn window(&mut self, judged: &Judged) {
        self.live.state().window(judged);
        self.inner.window(judged);
    }

    fn validation(&mut self, so_far: &crate::validation::SoFar) {
        self.live.state().validation(*so_far);
        self.inner.validation(so_far);
    }

    fn fleet_run(&mut self, settings: &RunSettings, out: &Path) {
        let mut state = self.live.state();
        state.prepared(PathBuf::from(out));
        state.measuring(
            settings,
            &[],
            crate::metrics::process::cpu_time().as_secs_f64(),
        );
        drop(state);
        self.live.push_now();
        self.inner.fleet_run(settings, out);
    }

    fn fleet_merged(&mut self, summary: &RunSummary) {
        self.live.state().finished(summary);
        self.live.push_now();
        self.inner.fleet_merged(summary);
    }

    fn finished(&mut self, run: &Finished) {
        {
            let mut state = self.live.state();
            state.cpu_s = crate::metrics::process::cpu_time().as_secs_f64();
            state.finished(run.summary);
        }
        self.live.push_now();
        self.inner.finished(run);
    }
}
