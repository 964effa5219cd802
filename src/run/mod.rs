//! One run as a library call: connect, set the workload up, populate when asked, drive the
//! load, and write the run directory as it goes ([`execute`]).
//!
//! The settings are [`RunSettings`] (what config.json holds). What the run tells as it goes
//! reaches a [`RunObserver`]: the command line prints it, a sweep decides from it when a step
//! is stable, tests collect it; the run itself prints nothing. A [`StopSignal`] ends it early
//! (Ctrl-C, a search's stop), and [`execute`] returns how it ended ([`RunOutcome`]).
//!
//! - [`files`]: histograms.hlog and intervals.csv as the intervals come, with the SLA judged
//!   on the way;
//! - [`populate`]: the rows written before the measured run;
//! - [`summary`]: summary.json and the `<op>.hgrm` files once it ends;
//! - [`stop`], [`observer`]: the two ways a caller takes part;
//! - `start`: a fleet's worker waits for the fleet's time zero.

pub(crate) mod files;
pub mod observer;
pub mod policy;
pub mod populate;
mod start;
mod stop;
mod summary;
pub mod template;

use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context;

use crate::client::native::{NativeClient, Sender};
use crate::client::{self, ClientConfig};
use crate::cluster::{LocalNodes, NodeSource};
use crate::engine::clock::RealClock;
use crate::engine::schedule::Progress;
use crate::engine::{self, EngineConfig, Interval, IntervalSink, StopReason};
use crate::maintenance::runner::{Maintenance, OnNodes};
use crate::maintenance::{MaintenanceFile, PlanError, Target};
use crate::metrics::server_pauses::{self, PauseNode, RunSpan};
use crate::metrics::server_tables::TablesRecording;
use crate::results::summary::RunSummary;
use crate::workload::{AnyWorkload, Workload};

pub use crate::results::config::{RunPhase, RunSettings};
pub use crate::stop::StopSignal;
pub use observer::{Control, Finished, Measuring, Quiet, RunObserver};

/// What a run needs besides its settings.
pub struct RunContext<'a> {
    /// The run directory, created by the run; it must not hold another run's files.
    pub out: &'a Path,
    /// User name and password, for a cluster that asks (never stored).
    pub credentials: Option<(String, String)>,
    /// Ends the run early when given.
    pub stop: Arc<StopSignal>,
    /// Write the workload's populate rows (false when an earlier run wrote them).
    pub populate: bool,
    /// Where to find the local nodes behind the run's hosts (a local cluster headroom
    /// started, if the run loads it): their server pauses are recorded, nodetool reads their
    /// tables' figures, and `--during` acts on them.
    pub local_nodes: &'a NodeSource,
}

/// How a run that started ended.
#[derive(Debug)]
pub enum RunOutcome {
    /// The stop signal came while populating; nothing was measured.
    StoppedDuringPopulate,
    /// The measured run ended (completed or not; see its stop reason).
    Finished(Box<RunSummary>),
    /// Only the populate was asked for (`RunPhase::Load`).
    LoadedOnly,
}

/// Stops the run's lanes when dropped.
struct StopLanes(Arc<crate::lanes::Lanes>);

impl Drop for StopLanes {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// The async runtime of a run's control: the driver's session (and, with `--sender driver`,
/// its connections), the collector, the files; `threads` workers
/// ([`policy::control_threads`]). The load's own threads
/// are the run's lanes ([`crate::lanes`]), started by [`execute`].
pub fn runtime(threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// One run, from connecting to the summary, writing its directory as it goes. Errors
/// before the run starts leave only error.txt in the directory, and only in one of its own.
/// An observer that ends the measured part makes it count as completed (unless the stop
/// signal came too). The server pauses of the local nodes `context.local_nodes` finds go into
/// pauses.hlog and pauses.json as the run ends, interrupted or not (see [`server_pauses`]).
pub async fn execute(
    settings: &RunSettings,
    context: &RunContext<'_>,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<RunOutcome> {
    let out = context.out;
    let failed = |e: anyhow::Error| {
        note_failure(out, &e);
        e
    };
    // The local nodes behind the hosts, found once for the whole run.
    let local_nodes = context.local_nodes.resolve(&settings.hosts);
    let maintenance_targets =
        maintenance_targets(settings, &local_nodes).map_err(|e| failed(e.into()))?;
    let client_config = ClientConfig {
        hosts: settings.hosts.clone(),
        request_timeout: Duration::from_secs_f64(settings.request_timeout_s),
        connections: settings.connections,
        credentials: context.credentials.clone(),
        local_dc: settings.local_dc.clone(),
        tls: settings.tls.clone(),
    };
    let session = client::connect(&client_config)
        .await
        .map_err(|e| failed(e.into()))?;
    let local_dc =
        client::local_datacenter(&session, &client_config).map_err(|e| failed(e.into()))?;
    let datacenters = client::datacenters(&session);
    if let (Some(dc), true) = (&local_dc, datacenters.len() > 1) {
        let how = if settings.local_dc.is_some() {
            "--local-dc"
        } else {
            "the contact points'; --local-dc picks another"
        };
        observer.note(&format!(
            "Data centre: {dc} ({how}) of {}; the requests go to its nodes only.",
            datacenters.join(", ")
        ));
    }
    // The client's threads, for the populate and the measured run alike; stopped however
    // the run ends.
    let lanes = Arc::new(
        crate::lanes::Lanes::start(policy::run_threads(settings))
            .context("starting the client's threads")
            .map_err(failed)?,
    );
    let _stop_lanes = StopLanes(lanes.clone());
    let native = match policy::effective_sender(settings) {
        Sender::Driver => None,
        sender => {
            let tls = match &settings.tls {
                Some(tls) => Some(client::tls::TlsClient::new(tls).map_err(|e| failed(e.into()))?),
                None => None,
            };
            match NativeClient::open(
                session.clone(),
                settings.connections,
                client_config.credentials.clone(),
                tls,
                client::CONNECT_TIMEOUT,
                local_dc.clone(),
                Some(lanes.clone()),
            )
            .await
            {
                Ok(native) => {
                    if native.credentials_unused() {
                        let user = client_config
                            .credentials
                            .as_ref()
                            .map_or("", |(user, _)| user.as_str());
                        observer.problem(&format!(
                            "Warning: the cluster did not ask for a password: it requires no \
                             authentication, and --username {user} was not used."
                        ));
                    }
                    Some(Arc::new(native))
                }
                // The ring has more nodes than the contact points told the flags' check:
                // the cause is the open-file limit, not the cluster.
                Err(reason) if reason.contains("Too many open files") => {
                    return Err(failed(
                        crate::usage::UsageError::new(format!(
                            "--connections {} to each node from each of {} client thread(s) \
                             need more open files than this process may have (ulimit -n): \
                             give fewer --connections or --threads ({reason})",
                            settings.connections,
                            policy::run_threads(settings)
                        ))
                        .into(),
                    ));
                }
                Err(reason) if sender == Sender::Auto => {
                    observer.note(&format!(
                        "The native sender cannot connect ({reason}): the driver sends the requests."
                    ));
                    None
                }
                Err(reason) => {
                    let hosts = settings.hosts.join(", ");
                    let explained = settings
                        .tls
                        .as_ref()
                        .and_then(|tls| client::tls::explain(&reason, tls));
                    return Err(failed(
                        match explained {
                            Some(cause) => client::ConnectError::Tls { hosts, cause },
                            None => client::ConnectError::Unreachable {
                                hosts,
                                reason: format!("the native sender: {reason}"),
                            },
                        }
                        .into(),
                    ));
                }
            }
        }
    };
    let workload = AnyWorkload::prepare(session.clone(), native.clone(), &settings.workload)
        .await
        .map(Arc::new)
        .map_err(|e| failed(e.into()))?;
    fs::create_dir_all(out)
        .with_context(|| format!("creating the run directory {}", out.display()))?;
    settings.write(out)?;
    observer.prepared(out, native.is_some());

    let progress = Arc::new(Progress::default());
    let watcher = stop::watch(&context.stop, &progress);
    let populated =
        if context.populate && settings.phase != RunPhase::Run && settings.workload.populate > 0 {
            Some(
                populate::populate_rows(
                    &workload,
                    settings,
                    lanes.clone(),
                    progress.clone(),
                    observer,
                    out,
                )
                .await
                .map_err(failed)?,
            )
        } else {
            None
        };
    watcher.abort();
    if progress.stop.load(Ordering::Relaxed) {
        observer.note("Stopped during populate.");
        return Ok(RunOutcome::StoppedDuringPopulate);
    }
    if settings.phase == RunPhase::Load {
        if let Some(p) = &populated {
            crate::results::write_json(&out.join("load.json"), p)?;
        }
        observer.note("Load phase done (--phase load); no measured run.");
        return Ok(RunOutcome::LoadedOnly);
    }
    // The measured run gets a fresh count of requests.
    let progress = Arc::new(Progress::default());
    let watcher = stop::watch(&context.stop, &progress);

    let engine_config = EngineConfig {
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
    };
    let mut server_tables = TablesRecording::begin(
        session,
        &settings.workload,
        &local_nodes,
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
                return Ok(RunOutcome::StoppedDuringPopulate);
            }
            Err(e) => {
                watcher.abort();
                return Err(e.into());
            }
        },
        None => (SystemTime::now(), RealClock::start_now()),
    };
    let pause_nodes = pause_nodes(&local_nodes, observer);
    let files = files::RunFiles::create(
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
    let IntervalDispatch {
        mut files,
        observer,
        ended,
        ..
    } = recorder;
    if ended && outcome.stop == StopReason::Interrupted && !context.stop.is_set() {
        // The observer ended the measured part: it is complete by the caller's rule.
        outcome.stop = StopReason::Completed;
    }
    let cpu = crate::metrics::process::cpu_time().saturating_sub(cpu_before);
    let server_tables = server_tables.end(out).await;
    if let Some(judged) = files.judge_last(outcome.stop == StopReason::Completed) {
        observer.window(&judged);
    }
    let client = summary::Client {
        op_weights: &op_weights,
        client_decided: files.client_decided(),
    };
    let spans = std::mem::take(&mut files.spans);
    let verdict = files.finish()?;
    let pauses = (!pause_nodes.is_empty()).then(|| {
        let from_ns = (settings.warmup_s * 1e9) as u64;
        let span = RunSpan {
            start: started_at,
            measured_from_ns: from_ns,
            measured_to_ns: outcome.elapsed_ns.max(from_ns),
            intervals: &spans,
        };
        crate::results::pauses::write(
            out,
            &span,
            server_pauses::read_run_pauses(&pause_nodes, &span),
        )
    });
    watcher.abort();
    let summary = summary::summarize(
        settings, &op_names, &outcome, started_at, cpu, populated, verdict, client,
    );
    summary::write_distributions(out, &op_names, &outcome)?;
    summary.write(out)?;
    observer.finished(&Finished {
        summary: &summary,
        pauses: pauses.as_ref(),
        maintenance: maintenance.as_ref(),
        server_tables: &server_tables,
        out,
        warmup_s: settings.warmup_s,
    });
    Ok(RunOutcome::Finished(Box::new(summary)))
}

/// The run's files, then the observer, for each interval; sets the run's stop when the
/// observer says so.
struct IntervalDispatch<'o> {
    files: files::RunFiles,
    observer: &'o mut dyn RunObserver,
    progress: Arc<Progress>,
    ended: bool,
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
        if let Some(judged) = &judged {
            self.observer.window(judged);
        }
        if control == Control::End && !self.ended {
            self.ended = true;
            self.progress.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// Leaves a note of why a run could not start, and nothing else, in its directory: only in
/// one it creates (or that is empty), never among another run's files.
fn note_failure(out: &Path, error: &dyn std::fmt::Display) {
    if crate::output_dir::may_leave_note(out) && fs::create_dir_all(out).is_ok() {
        let _ = fs::write(
            out.join("error.txt"),
            format!("The run did not start: {error}\n"),
        );
    }
}

/// The nodes `--during` runs its operations on; none without `--during`.
fn maintenance_targets(
    settings: &RunSettings,
    local: &LocalNodes,
) -> Result<Vec<Target>, PlanError> {
    match &settings.maintenance {
        Some(m) => crate::maintenance::targets_for(m, local, &settings.hosts),
        None => Ok(Vec::new()),
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
