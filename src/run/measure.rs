//! A run's measured part: Cassandra's figures read before it, the observer told, a fleet's
//! worker waiting for its start time, the run's files opened, `--during`'s plan started
//! beside the load, and the engine driving the load until it ends.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::task::JoinHandle;

use crate::cluster::LocalNodes;
use crate::engine::clock::RealClock;
use crate::engine::schedule::Progress;
use crate::engine::{self, EngineConfig, Interval, IntervalSink, StopReason};
use crate::lanes::Lanes;
use crate::maintenance::runner::{Maintenance, OnNodes};
use crate::maintenance::{MaintenanceFile, Target};
use crate::metrics::server_pauses::PauseNode;
use crate::metrics::server_tables::TablesRecording;
use crate::workload::{AnyWorkload, Workload};

use super::connect::Connected;
use super::files::RunFiles;
use super::observer::{Control, Measuring, RunObserver};
use super::{start, stop, RunContext, RunOutcome, RunSettings, StopSignal};

/// What the measured part leaves for the run's finish.
pub(super) struct Measured {
    /// What the engine did (its stop reason as the run counts it).
    pub(super) outcome: engine::Outcome,
    /// histograms.hlog and intervals.csv, still open.
    pub(super) files: RunFiles,
    /// Cassandra's figures, read before the load (and during it, with
    /// `--server-stats-every`).
    pub(super) server_tables: TablesRecording,
    /// `--during`'s record, when it ran.
    pub(super) maintenance: Option<MaintenanceFile>,
    /// The nodes whose server pauses the run records.
    pub(super) pause_nodes: Vec<PauseNode>,
    /// The time base of histograms.hlog.
    pub(super) started_at: SystemTime,
    /// The client's CPU time over the measured part.
    pub(super) cpu: Duration,
    /// The operation types, in the workload's order.
    pub(super) op_names: Vec<String>,
    /// Their shares of the mix.
    pub(super) op_weights: Vec<f64>,
    /// The link from the stop signal to the engine, aborted once the files are written.
    pub(super) watcher: JoinHandle<()>,
}

/// Measures: the figures before, the fleet's start, the files, `--during`, the load.
pub(super) async fn measure(
    settings: &RunSettings,
    context: &RunContext<'_>,
    connected: &Connected,
    workload: &Arc<AnyWorkload>,
    local_nodes: &LocalNodes,
    maintenance_targets: Vec<Target>,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<ControlFlow<RunOutcome, Measured>> {
    let out = context.out;
    // The measured run gets a fresh count of requests.
    let progress = Arc::new(Progress::default());
    let watcher = stop::watch(&context.stop, &progress);
    let engine_config = engine_config(settings, &connected.lanes);
    let mut server_tables = TablesRecording::begin(
        connected.session.clone(),
        &settings.workload,
        local_nodes,
        settings.nodetool_figures,
        out,
    )
    .await;
    let op_names: Vec<String> = workload.op_names().to_vec();
    let op_weights = workload.op_weights();
    let planned = settings
        .duration_s
        .map(|d| Duration::from_secs_f64(d + settings.warmup_s));
    observer.measuring(&Measuring {
        settings,
        op_names: &op_names,
        op_weights: &op_weights,
        planned,
    });
    // A fleet's worker starts the schedule at the fleet's time zero (a second late at most).
    let (started_at, clock) = match &settings.worker {
        Some(slot) => match start::wait_for(slot, &context.stop, observer).await {
            Ok(Some(start)) => start,
            Ok(None) => {
                watcher.abort();
                observer.note("Stopped before the fleet's start time.");
                return Ok(ControlFlow::Break(RunOutcome::StoppedDuringPopulate));
            }
            Err(e) => {
                watcher.abort();
                return Err(e.into());
            }
        },
        None => (SystemTime::now(), RealClock::start_now()),
    };
    let pause_nodes = pause_nodes(local_nodes, observer);
    let files = RunFiles::create(
        out,
        started_at,
        &op_names,
        settings.warmup_s,
        planned,
        settings.sla.clone(),
        settings.worker.is_some(),
    )?;
    let maintenance = start_maintenance(
        settings,
        maintenance_targets,
        &clock,
        started_at,
        out,
        &context.stop,
        observer,
    );
    if let Some(every) = settings.server_stats_every_s {
        server_tables.sample_every(
            Duration::from_secs_f64(every),
            tokio::time::Instant::from_std(clock.t0()),
            started_at,
            out,
        );
    }
    let cpu_before = crate::metrics::process::cpu_time();
    let mut recorder = IntervalDispatch {
        files,
        observer,
        progress: progress.clone(),
        ended: false,
        validation: workload.recorder().cloned(),
    };
    let mut outcome = engine::run(
        workload.clone(),
        clock,
        &engine_config,
        progress,
        &mut recorder,
    )
    .await;
    let maintenance: Option<MaintenanceFile> = match maintenance {
        Some(m) => Some(m.finish().await),
        None => None,
    };
    let IntervalDispatch { files, ended, .. } = recorder;
    if ended && outcome.stop == StopReason::Interrupted && !context.stop.is_set() {
        // The observer ended the measured part: it is complete by the caller's rule.
        outcome.stop = StopReason::Completed;
    }
    let cpu = crate::metrics::process::cpu_time().saturating_sub(cpu_before);
    Ok(ControlFlow::Continue(Measured {
        outcome,
        files,
        server_tables,
        maintenance,
        pause_nodes,
        started_at,
        cpu,
        op_names,
        op_weights,
        watcher,
    }))
}

/// The engine's settings for the measured run, on the run's lanes.
fn engine_config(settings: &RunSettings, lanes: &Arc<Lanes>) -> EngineConfig {
    EngineConfig {
        mode: settings.mode,
        end: settings.end(),
        interval: Duration::from_secs_f64(settings.interval_s),
        workers: lanes.len(),
        lanes: Some(lanes.clone()),
        first_seq: settings.workload.populate,
        only_op: None,
        seed: settings.workload.seed,
        share: settings.share(),
        hiccups: true,
        send_resolution: Duration::from_secs_f64(settings.send_resolution_s),
        request_timeout: Some(Duration::from_secs_f64(settings.request_timeout_s)),
        lag_limit: Some(crate::sla::validity::lag_limit(Duration::from_secs_f64(
            settings.send_resolution_s,
        ))),
    }
}

/// The run's files, then the observer, for each interval; sets the run's stop when the
/// observer says so.
struct IntervalDispatch<'o> {
    files: RunFiles,
    observer: &'o mut dyn RunObserver,
    progress: Arc<Progress>,
    ended: bool,
    /// Under `--validate`: the checker's counts, passed on after each interval.
    validation: Option<crate::validation::Recorder>,
}

impl IntervalSink for IntervalDispatch<'_> {
    fn interval(&mut self, interval: &Interval) {
        let control = self.observer.interval(interval);
        let (judged, failed) = self.files.interval(interval);
        if let Some(error) = failed {
            self.observer.problem(&format!(
                "Error: {error}; the run goes on, but its files are incomplete"
            ));
        }
        for judged in &judged {
            self.observer.window(judged);
        }
        if let Some(recorder) = &self.validation {
            self.observer.validation(&recorder.so_far());
        }
        if control == Control::End && !self.ended {
            self.ended = true;
            self.progress.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// Starts `--during`'s plan on the run's time base (that of histograms.hlog).
fn start_maintenance(
    settings: &RunSettings,
    targets: Vec<Target>,
    clock: &RealClock,
    started_at: SystemTime,
    out: &Path,
    stop: &Arc<StopSignal>,
    observer: &mut dyn RunObserver,
) -> Option<Maintenance> {
    let m = settings.maintenance.as_ref()?;
    let every = targets
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ");
    let steps: Vec<String> = m
        .plan
        .0
        .iter()
        .map(|p| {
            let on = match p.node.and_then(|n| targets.get(n as usize - 1)) {
                Some(target) => target.name(),
                None => format!("{every}, one node after another"),
            };
            format!(
                "{} at {} on {on}",
                p.operation.describe(),
                humantime::format_duration(p.at())
            )
        })
        .collect();
    observer.note(&format!("Maintenance: {}.", steps.join("; ")));
    Some(Maintenance::start(
        m,
        targets,
        OnNodes,
        tokio::time::Instant::from_std(clock.t0()),
        started_at,
        Some(out),
        stop.clone(),
    ))
}

/// The nodes whose pauses the run records: the local nodes behind its hosts; says why when
/// a running local cluster is not the one loaded.
fn pause_nodes(local: &LocalNodes, observer: &mut dyn RunObserver) -> Vec<PauseNode> {
    if let Some(why) = local.refused() {
        observer.note(&format!("Server pauses are not recorded: {why}."));
        return Vec::new();
    }
    let nodes = PauseNode::all_of(local);
    if !nodes.is_empty() {
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        observer.note(&format!(
            "Server pauses: from the GC logs of {} when the run ends.",
            names.join(", ")
        ));
    }
    nodes
}
