//! A capacity search against a real cluster: each trial a full run
//! ([`crate::run::execute`]) in its own directory, the data made fresh when asked, and the
//! search's directory kept consistent after every trial and on a stop. The choice of the
//! next run and the table are [`super::search`]'s and [`super::table`]'s.
//!
//! **Why one file of about 680 lines.** The runner's steps (fresh data, the node kept down,
//! a single run or a fleet's, the populate) share the runner's state and its `Drop`, which
//! brings a stopped node back however the search ends; split, that guarantee would be spread
//! over files.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Context};

use super::degraded::DownRecord;
use super::node_down::NodeDown;
use super::settings::{Fresh, SearchSettings};
use super::store::{Status, Store};
use super::{ProbeRecord, TrialAsk, TrialRecord, TrialRunner};
use crate::catalogue::{POPULATE, PROBE, TRIALS, WORKERS};
use crate::client::{self, ClientConfig};
use crate::cluster::{self, LocalCluster, NodeSource, StartOptions};
use crate::engine::StopReason;
use crate::fleet::launch::{Launcher, WorkerEnd, WorkerPlan};
use crate::fleet::merge;
use crate::results::config::RunSettings;
use crate::results::config::{rfc3339, RunPhase};
use crate::results::summary::RunSummary;
use crate::run::template::Load;
use crate::run::{self, Control, Finished, Measuring, RunContext, RunObserver, RunOutcome};
use crate::sla::Judgement;
use crate::stop::StopSignal;

/// What a search needs besides its settings and directory.
pub struct SearchContext<'a> {
    /// The runtime every trial runs on.
    pub runtime: &'a tokio::runtime::Runtime,
    /// Ends the search early (the trial in progress is not recorded).
    pub stop: Arc<StopSignal>,
    /// User name and password, for a cluster that asks.
    pub credentials: Option<(String, String)>,
    /// The local cluster under test, when the caller started it (a matrix, the quickstart):
    /// `--fresh restart` restarts it, and its nodes' logs give the trials' pauses.
    pub cluster: Option<&'a mut LocalCluster>,
    /// Runs each probe and trial as a fleet of workers, when the search has one
    /// (`config.fleet`).
    pub launcher: Option<&'a dyn Launcher>,
}

/// Runs a whole search (or what is left of one) into `store`, handing the outcome so far to
/// `on_record` after every probe or trial and every run's events to `observer`; returns how
/// it ended.
pub fn search(
    config: &SearchSettings,
    store: &mut Store,
    context: SearchContext,
    observer: &mut dyn RunObserver,
    on_record: impl FnMut(&super::Outcome, &[super::Record]),
) -> anyhow::Result<Status> {
    let SearchContext {
        runtime,
        stop,
        credentials,
        cluster,
        launcher,
    } = context;
    let launcher = match (&config.fleet, launcher) {
        (Some(fleet), Some(launcher)) => Some((launcher, fleet.workers)),
        (Some(_), None) => bail!("a fleet search needs a launcher"),
        (None, _) => None,
    };
    let mut opened;
    let cluster = match (config.fresh, cluster) {
        // A cluster the caller started (the quickstart, a matrix) is the one measured,
        // whatever --fresh says: its nodes' logs tell the server's side.
        (_, Some(c)) => Some(c),
        // One this search restarts, or whose node it stops.
        (fresh, None) if fresh == Fresh::Restart || config.degraded.is_some() => {
            let cluster_dir = config
                .cluster_dir
                .clone()
                .unwrap_or_else(cluster::default_dir);
            opened = LocalCluster::open(&cluster_dir)?;
            if opened.running_pids().is_empty() {
                let flag = if fresh == Fresh::Restart {
                    "--fresh restart"
                } else {
                    "--degraded"
                };
                bail!(
                    "{flag} needs the local cluster in {} running; start it with `headroom cluster start --dir {}`",
                    cluster_dir.display(),
                    cluster_dir.display()
                );
            }
            Some(&mut opened)
        }
        _ => None,
    };
    let down = match (&config.degraded, &cluster) {
        (Some(degraded), Some(c)) => Some(NodeDown::new(degraded, c, stop.clone())?),
        (Some(_), None) => bail!("a search with a node down needs its local cluster"),
        (None, _) => None,
    };
    // The trials' local nodes are those of the cluster this search restarts, else those of
    // the local cluster headroom started when the trials load it.
    let local_nodes = match &cluster {
        Some(c) => NodeSource::of_cluster(c),
        None => NodeSource::Recorded(
            config
                .cluster_dir
                .clone()
                .unwrap_or_else(cluster::default_dir),
        ),
    };
    let mut runner = LiveRunner {
        config,
        dir: store.dir().to_path_buf(),
        runtime,
        stop,
        credentials,
        // With the data kept, an earlier part of this search populated it already.
        populated: config.fresh == Fresh::None && !store.records().is_empty(),
        cluster,
        local_nodes,
        observer,
        launcher,
        down,
        last_down: None,
        stop_after: None,
    };
    let status = super::drive(&config.plan(), &mut runner, store, on_record);
    // A search that ended leaves the cluster whole; one interrupted or failed, at least its
    // node up (the Drop below, for a panic too).
    runner.restore(matches!(status, Ok(Status::Complete | Status::Invalid)));
    status
}

/// The pause before a client-bound trial runs again: time for whatever held the client's
/// cores (a node's GC, a compaction, another process) to pass.
const RETRY_PAUSE: Duration = Duration::from_secs(5);

/// Runs trials as real runs against the cluster.
struct LiveRunner<'a, 'o> {
    config: &'a SearchSettings,
    dir: PathBuf,
    runtime: &'a tokio::runtime::Runtime,
    stop: Arc<StopSignal>,
    credentials: Option<(String, String)>,
    /// Whether the workload's rows are in the cluster already.
    populated: bool,
    cluster: Option<&'a mut LocalCluster>,
    /// Where each trial finds the local nodes behind its hosts (their server pauses, their
    /// tables' figures through nodetool).
    local_nodes: NodeSource,
    /// Hears every run of the search.
    observer: &'o mut dyn RunObserver,
    /// The fleet that runs each probe and trial, and its size; `None`: this process does.
    launcher: Option<(&'a dyn Launcher, u32)>,
    /// The node kept down in every run of a degraded search.
    down: Option<NodeDown>,
    /// What the last run recorded of its node down, for its record.
    last_down: Option<DownRecord>,
    /// The next run ends once this many of its windows failed (`TrialAsk::stop_after`).
    stop_after: Option<u32>,
}

impl Drop for LiveRunner<'_, '_> {
    fn drop(&mut self) {
        self.restore(false);
    }
}

impl LiveRunner<'_, '_> {
    /// Makes the data fresh as configured; whether the next run should populate.
    fn prepare(&mut self) -> anyhow::Result<bool> {
        match self.config.fresh {
            Fresh::None => Ok(!self.populated),
            Fresh::Truncate => {
                self.runtime
                    .block_on(truncate(&self.config.run, self.credentials.clone()))?;
                Ok(true)
            }
            Fresh::Restart => {
                let cluster = self
                    .cluster
                    .as_deref_mut()
                    .expect("a local cluster for --fresh restart");
                self.observer
                    .note("Restarting the local cluster with no data...");
                let options = StartOptions {
                    verbose: false,
                    ..StartOptions::default()
                };
                cluster.restart_fresh(Duration::from_secs(60), &options)?;
                Ok(true)
            }
        }
    }

    /// One run in `out`; `None` when it was interrupted. In a degraded search, the node is
    /// brought back (hints replayed) before the data is made fresh and populated, then
    /// stopped for the run ([`NodeDown`]).
    fn execute(&mut self, config: &RunSettings, out: &Path) -> anyhow::Result<Option<RunSummary>> {
        // An interrupted attempt at this same trial is done again; a finished one never:
        // its record is missing only when capacity.jsonl was damaged.
        let finished = RunSummary::read(out).is_ok_and(|s| s.stop != StopReason::Interrupted);
        crate::output_dir::replace_unfinished(out, finished)?;
        self.last_down = None;
        // --fresh restart starts every node anew, with no hints to wait for.
        let restarts = self.config.fresh == Fresh::Restart;
        if !restarts && !self.bring_back(true)? {
            return Ok(None);
        }
        let mut populate = self.prepare()?;
        if self.stop.is_set() {
            return Ok(None);
        }
        let mut config = std::borrow::Cow::Borrowed(config);
        if self.down.is_some() {
            if restarts {
                self.bring_back(false)?;
            }
            if populate && config.phase != RunPhase::Run && config.workload.populate > 0 {
                // Written with every node up: a node that goes down holds the data, as
                // it would in production; the run reuses its keyspace.
                if !self.populate_whole(&config, out)? {
                    return Ok(None);
                }
                populate = false;
                config.to_mut().workload.drop = false;
            }
            if let (Some(down), Some(cluster)) = (&mut self.down, self.cluster.as_deref_mut()) {
                down.take_down(cluster, &mut *self.observer)?;
            }
        }
        let ran = self.run_once(&config, out, populate);
        if let (Some(down), Some(cluster)) = (&mut self.down, self.cluster.as_deref()) {
            self.last_down = down.after_run(cluster);
        }
        ran
    }

    /// The degraded search's node up again, with (`wait_hints`) the other nodes' hints for
    /// it delivered; `Ok(false)` when the stop signal came meanwhile. Nothing to do in a
    /// healthy search.
    fn bring_back(&mut self, wait_hints: bool) -> anyhow::Result<bool> {
        match (&mut self.down, self.cluster.as_deref_mut()) {
            (Some(down), Some(cluster)) => {
                down.bring_back(cluster, wait_hints, &mut *self.observer)
            }
            _ => Ok(true),
        }
    }

    /// At the end of the search (or on its way out): the node this search left down started
    /// again; with `wait_hints`, its hints delivered.
    fn restore(&mut self, wait_hints: bool) {
        if let (Some(down), Some(cluster)) = (&mut self.down, self.cluster.as_deref_mut()) {
            down.restore(cluster, wait_hints, &mut *self.observer);
        }
    }

    /// The populate of a degraded search's run, into `out`/populate, with every node up;
    /// false when it was stopped.
    fn populate_whole(&mut self, config: &RunSettings, out: &Path) -> anyhow::Result<bool> {
        let mut load = config.clone();
        load.phase = RunPhase::Load;
        self.observer.note(&format!(
            "Populate: {} rows with every node up, before the node goes down.",
            config.workload.populate
        ));
        let context = RunContext {
            out: &out.join(POPULATE),
            credentials: self.credentials.clone(),
            stop: self.stop.clone(),
            populate: true,
            local_nodes: &self.local_nodes,
        };
        let loaded = self
            .runtime
            .block_on(run::execute(&load, &context, &mut *self.observer))?;
        if matches!(loaded, RunOutcome::LoadedOnly) && !self.stop.is_set() {
            self.populated = true;
            return Ok(true);
        }
        Ok(false)
    }

    /// One run in `out` by this process or the fleet, populating first when asked.
    fn run_once(
        &mut self,
        config: &RunSettings,
        out: &Path,
        populate: bool,
    ) -> anyhow::Result<Option<RunSummary>> {
        if let Some((launcher, workers)) = self.launcher {
            return self.execute_fleet(launcher, workers, config, out, populate);
        }
        let context = RunContext {
            out,
            credentials: self.credentials.clone(),
            stop: self.stop.clone(),
            populate,
            local_nodes: &self.local_nodes,
        };
        let executed = match self.stop_after.take() {
            Some(limit) => {
                let mut observer = EndAfterFailing {
                    inner: &mut *self.observer,
                    limit,
                    failed: 0,
                };
                self.runtime
                    .block_on(run::execute(config, &context, &mut observer))?
            }
            None => self
                .runtime
                .block_on(run::execute(config, &context, &mut *self.observer))?,
        };
        match executed {
            // Trials always run both phases; a load-only run cannot happen here.
            RunOutcome::StoppedDuringPopulate | RunOutcome::LoadedOnly => Ok(None),
            RunOutcome::Finished(summary) if summary.stop == StopReason::Interrupted => Ok(None),
            RunOutcome::Finished(summary) => {
                self.populated = true;
                Ok(Some(*summary))
            }
        }
    }

    /// One run by a fleet of `workers`: the populate first when asked (each worker its
    /// share, then all wait), the measured run from one agreed start, the workers'
    /// directories in `out/workers/` merged into `out`. `None` when it was interrupted.
    fn execute_fleet(
        &mut self,
        launcher: &dyn Launcher,
        workers: u32,
        config: &RunSettings,
        out: &Path,
        populate: bool,
    ) -> anyhow::Result<Option<RunSummary>> {
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect::<String>();
        if populate && config.phase != RunPhase::Run && config.workload.populate > 0 {
            let mut load = config.clone();
            load.phase = RunPhase::Load;
            let plan = WorkerPlan {
                name: format!("{name}-populate"),
                settings: load,
                workers,
                start_at: SystemTime::now(),
                out: out.join(POPULATE),
                populate: true,
            };
            self.observer.note(&format!(
                "Populate: {} rows, written by {}, each its share.",
                config.workload.populate,
                launcher.describe(workers)
            ));
            let ends = self.runtime.block_on(launcher.run(&plan, &self.stop));
            if self.stop.is_set() {
                return Ok(None);
            }
            fleet_dirs(&ends).context("the fleet's populate failed")?;
        }
        let start_at = SystemTime::now() + launcher.lead();
        let plan = WorkerPlan {
            name,
            settings: config.clone(),
            workers,
            start_at,
            out: out.join(WORKERS),
            populate: false,
        };
        self.observer.note(&format!(
            "Fleet: {}; the schedule starts at {}.",
            launcher.describe(workers),
            rfc3339(start_at)
        ));
        self.observer.fleet_run(config, out);
        let ends = self.runtime.block_on(launcher.run(&plan, &self.stop));
        if self.stop.is_set() {
            return Ok(None);
        }
        let dirs = fleet_dirs(&ends).context("the fleet's run failed")?;
        let fleet = merge::read(&dirs)?;
        for warning in &fleet.warnings {
            self.observer.problem(&format!("Warning: {warning}"));
        }
        let summary = fleet.write(out, config.command_line.clone())?;
        for line in describe_fleet(&summary) {
            self.observer.note(&line);
        }
        self.observer.fleet_merged(&summary);
        self.populated = true;
        Ok(Some(summary))
    }

    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.dir)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

impl TrialRunner for LiveRunner<'_, '_> {
    fn probe(&mut self) -> anyhow::Result<Option<ProbeRecord>> {
        // A fleet's workers share the requests in flight.
        let workers = self.launcher.map_or(1, |(_, n)| n as usize);
        let mut config = self.config.run.run(
            Load::Concurrency((self.config.probe_concurrency / workers).max(1)),
            self.config.probe_duration_s / 4.0,
            self.config.probe_duration_s,
            None,
        );
        // A closed loop is not checked (`--validate`): the checking's cost would slow the
        // very throughput the probe measures. The trials, open-loop, are.
        config.validate = false;
        self.observer.note(&format!(
            "\n== Probe: the highest throughput with {} requests in flight ==",
            self.config.probe_concurrency
        ));
        let out = self.dir.join(PROBE);
        let started = Instant::now();
        let Some(summary) = self.execute(&config, &out)? else {
            return Ok(None);
        };
        Ok(Some(ProbeRecord {
            concurrency: self.config.probe_concurrency,
            achieved_per_s: summary.achieved_rate_per_s,
            seconds: started.elapsed().as_secs_f64(),
            dir: self.relative(&out),
            down: self.last_down.take(),
        }))
    }

    fn trial(&mut self, ask: &TrialAsk) -> anyhow::Result<Option<TrialRecord>> {
        let (rate_per_s, repeat) = (ask.rate_per_s, ask.repeat);
        if ask.retry {
            self.observer.note(&format!(
                "\nThe last trial at {rate_per_s:.0}/s was client-bound: the client, not the \
                 cluster, could not keep its schedule. It runs once more after a pause of {} s; \
                 a second time caps the search there.",
                RETRY_PAUSE.as_secs()
            ));
            let until = Instant::now() + RETRY_PAUSE;
            while Instant::now() < until {
                if self.stop.is_set() {
                    return Ok(None);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        // A fleet's windows are judged by its workers: its trials run to their end.
        self.stop_after = ask.stop_after.filter(|_| self.launcher.is_none());
        // A shorter trial is a whole number of the SLA's (longest) window.
        let duration_s = match ask.windows {
            Some(windows) => {
                let window_s = self
                    .config
                    .sla
                    .windows()
                    .last()
                    .map_or(10.0, |w| w.as_secs_f64());
                (window_s * f64::from(windows)).min(self.config.duration_s)
            }
            None => self.config.duration_s,
        };
        let config = self.config.run.run(
            Load::Rate(rate_per_s),
            self.config.warmup_s,
            duration_s,
            Some(self.config.sla.clone()),
        );
        let heading = if self.config.interval.is_some() {
            let length = if duration_s < self.config.duration_s {
                "short"
            } else {
                "full"
            };
            let stop = self
                .stop_after
                .map_or(String::new(), |n| format!(", ends at failing window {n}"));
            format!("trial {repeat} at this rate, {length} ({duration_s:.0} s){stop}")
        } else {
            format!("repeat {repeat} of {}", self.config.repeats)
        };
        self.observer
            .note(&format!("\n== Trial: {rate_per_s:.0}/s, {heading} =="));
        let out = self
            .dir
            .join(TRIALS)
            .join(format!("rate-{rate_per_s:.0}-repeat-{repeat}"));
        let started = Instant::now();
        let Some(summary) = self.execute(&config, &out)? else {
            return Ok(None);
        };
        let mut record = TrialRecord::from_summary(
            &summary,
            rate_per_s,
            repeat,
            self.relative(&out),
            started.elapsed(),
        );
        record.down = self.last_down.take();
        Ok(Some(record))
    }
}

/// The workers' run directories, or every failure with its reason.
fn fleet_dirs(ends: &[WorkerEnd]) -> anyhow::Result<Vec<PathBuf>> {
    let failed: Vec<String> = ends
        .iter()
        .filter_map(|end| match end {
            WorkerEnd::Failed { index, reason } => Some(format!("worker {index}: {reason}")),
            // Stopped from outside while the search was not (its pod deleted or evicted,
            // its process killed): what it measured is kept, but the fleet did not send
            // the whole schedule.
            WorkerEnd::Finished {
                index,
                dir,
                exit_code: 130,
            } => Some(format!(
                "worker {index} was stopped before its run ended (its pod deleted or evicted, \
                 or its process ended by a signal); what it measured is in {}",
                dir.display()
            )),
            WorkerEnd::Finished { .. } => None,
        })
        .collect();
    if !failed.is_empty() {
        bail!("{}", failed.join("; "));
    }
    Ok(ends
        .iter()
        .filter_map(|end| match end {
            WorkerEnd::Finished { dir, .. } => Some(dir.clone()),
            WorkerEnd::Failed { .. } => None,
        })
        .collect())
}

/// A merged run in a few lines: the fleet's rate and SLA, then each worker's.
fn describe_fleet(summary: &RunSummary) -> Vec<String> {
    let mut lines = vec![format!(
        "Merged {} workers: achieved {:.0}/s{}; SLA {}; {}.",
        summary.workers.len(),
        summary.achieved_rate_per_s,
        summary
            .attempted_rate_per_s
            .map(|r| format!(" of {r:.0}/s"))
            .unwrap_or_default(),
        match summary.sla.as_ref().map(|s| s.verdict.judgement()) {
            Some(Judgement::Pass) => "met in every window",
            Some(Judgement::Fail) => "failed",
            Some(Judgement::NoVerdict(_)) => "no verdict",
            None => "none",
        },
        if summary.is_valid() {
            "every worker kept its schedule".to_string()
        } else {
            "the fleet could not keep its schedule (no verdict)".to_string()
        }
    )];
    for w in &summary.workers {
        // A closed loop (the probe) has no attempted rate.
        let of = if w.attempted_rate_per_s > 0.0 {
            format!(" of {:.0}/s", w.attempted_rate_per_s)
        } else {
            String::new()
        };
        lines.push(format!(
            "  worker {}: achieved {:.0}/s{of}, send lag p99 {:.2} ms (max {:.2} ms), {:.1} µs CPU per request{}",
            w.index,
            w.achieved_rate_per_s,
            w.send_lag_p99_ms,
            w.send_lag_max_ms,
            w.cpu_us_per_request,
            if w.valid { "" } else { " — could not keep its schedule" }
        ));
    }
    lines
}

/// Empties the workload's table (if it exists yet).
async fn truncate<M>(
    config: &RunSettings<M>,
    credentials: Option<(String, String)>,
) -> anyhow::Result<()> {
    let session = client::connect(&ClientConfig {
        hosts: config.hosts.clone(),
        request_timeout: Duration::from_secs(120),
        connections: 1,
        credentials,
        local_dc: config.local_dc.clone(),
        tls: config.tls.clone(),
    })
    .await?;
    let (keyspace, table) = (
        config.workload.keyspace.as_str(),
        crate::workload::AnyWorkload::table_of(&config.workload)?,
    );
    if !crate::workload::common::schema::table_exists(&session, keyspace, &table).await? {
        // The first trial comes before the table exists.
        return Ok(());
    }
    let cql = format!("TRUNCATE {keyspace}.{table}");
    session
        .query_unpaged(cql.as_str(), &[])
        .await
        .map(|_| ())
        .with_context(|| format!("{cql} failed"))
}

/// Passes every event of a run on, and ends its measured part (as completed) at the first
/// interval after `limit` judged windows failed: a trial of an interval search whose verdict
/// those windows decide (`TrialAsk::stop_after`).
struct EndAfterFailing<'a> {
    inner: &'a mut dyn RunObserver,
    limit: u32,
    failed: u32,
}

impl RunObserver for EndAfterFailing<'_> {
    fn note(&mut self, line: &str) {
        self.inner.note(line);
    }

    fn problem(&mut self, line: &str) {
        self.inner.problem(line);
    }

    fn prepared(&mut self, out: &Path, native: bool) {
        self.inner.prepared(out, native);
    }

    fn populating(&mut self, rows: u64, in_flight: usize) {
        self.inner.populating(rows, in_flight);
    }

    fn populate_interval(&mut self, at_s: f64, rows: u64, rate_per_s: f64) {
        self.inner.populate_interval(at_s, rows, rate_per_s);
    }

    fn populated(&mut self, summary: &crate::results::summary::PopulateSummary) {
        self.inner.populated(summary);
    }

    fn measuring(&mut self, start: &Measuring) {
        self.inner.measuring(start);
    }

    fn interval(&mut self, interval: &crate::engine::Interval) -> Control {
        let control = self.inner.interval(interval);
        if self.failed >= self.limit {
            Control::End
        } else {
            control
        }
    }

    fn window(&mut self, judged: &crate::sla::Judged) {
        self.failed += u32::from(!judged.verdict.pass);
        self.inner.window(judged);
    }

    fn finished(&mut self, run: &Finished) {
        self.inner.finished(run);
    }

    fn fleet_run(&mut self, settings: &RunSettings, out: &Path) {
        self.inner.fleet_run(settings, out);
    }

    fn fleet_merged(&mut self, summary: &RunSummary) {
        self.inner.fleet_merged(summary);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Interval;
    use crate::sla::{Judged, WindowStats, WindowVerdict};

    /// Records what reached it.
    #[derive(Default)]
    struct Seen {
        windows: usize,
        intervals: usize,
    }

    impl RunObserver for Seen {
        fn interval(&mut self, _interval: &Interval) -> Control {
            self.intervals += 1;
            Control::Go
        }

        fn window(&mut self, _judged: &Judged) {
            self.windows += 1;
        }
    }

    fn interval(index: u64) -> Interval {
        Interval {
            index,
            start_ns: index * 1_000_000_000,
            length_ns: 1_000_000_000,
            ops: Vec::new(),
            hiccups: None,
            backlog: 0,
            in_flight: 0,
        }
    }

    fn judged(index: u64, pass: bool) -> Judged {
        Judged {
            window: WindowStats {
                index,
                start_ns: index * 2_000_000_000,
                length_ns: 2_000_000_000,
                ops: Vec::new(),
            },
            verdict: WindowVerdict {
                index,
                start_ns: index * 2_000_000_000,
                length_ns: 2_000_000_000,
                window_ms: None,
                pass,
                outcomes: Vec::new(),
            },
            by_client: false,
        }
    }

    #[test]
    fn a_trial_ends_at_the_interval_after_its_deciding_failing_window() {
        let mut seen = Seen::default();
        let mut observer = EndAfterFailing {
            inner: &mut seen,
            limit: 2,
            failed: 0,
        };
        assert_eq!(observer.interval(&interval(0)), Control::Go);
        observer.window(&judged(0, false));
        observer.window(&judged(1, true));
        // One failing window of the two that decide: the run goes on.
        assert_eq!(observer.interval(&interval(1)), Control::Go);
        observer.window(&judged(2, false));
        assert_eq!(observer.interval(&interval(2)), Control::End);
        assert_eq!(observer.interval(&interval(3)), Control::End);
        // Everything still reaches the observer it wraps.
        assert_eq!((seen.windows, seen.intervals), (3, 4));
    }
}
