//! One run as a library call: connect, set the workload up, populate when asked, drive the
//! load, and write the run directory as it goes ([`execute`]).
//!
//! The settings are [`RunSettings`] (what config.json holds). What the run tells as it goes
//! reaches a [`RunObserver`]: the command line prints it, a sweep decides from it when a step
//! is stable, tests collect it; the run itself prints nothing. A [`StopSignal`] ends it early
//! (Ctrl-C, a search's stop), and [`execute`] returns how it ended ([`RunOutcome`]).
//!
//! [`execute`] is the run's phases in order: connect, prepare, populate, measure, finish.
//!
//! - `connect`: the driver's session, the client's threads and the native sender;
//! - [`populate`]: the rows written before the measured run;
//! - `measure`: the measured part, from Cassandra's figures before it to the load's end;
//! - [`files`]: histograms.hlog and intervals.csv as the intervals come, with the SLA judged
//!   on the way;
//! - [`summary`]: summary.json and the `<op>.hgrm` files once it ends;
//! - [`policy`]: how this process runs a run (its threads, its sender);
//! - [`stop`], [`observer`]: the two ways a caller takes part;
//! - `start`: a fleet's worker waits for the fleet's time zero.

mod connect;
pub(crate) mod files;
mod measure;
pub mod observer;
pub mod policy;
pub mod populate;
mod start;
mod stop;
mod summary;
pub mod template;
mod validate;

use std::fs;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::Context;

use crate::cluster::{LocalNodes, NodeSource};
use crate::engine::schedule::Progress;
use crate::engine::StopReason;
use crate::maintenance::{PlanError, Target};
use crate::metrics::server_pauses::{self, RunSpan};
use crate::results::summary::{PopulateSummary, RunSummary};
use crate::workload::AnyWorkload;

use connect::{connect, Connected};
use measure::{measure, Measured};
use validate::{Finishing, Validating};

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
    let failed = |e: anyhow::Error| noted(context.out, e);
    // The local nodes behind the hosts, found once for the whole run.
    let local_nodes = context.local_nodes.resolve(&settings.hosts);
    let maintenance_targets =
        maintenance_targets(settings, &local_nodes).map_err(|e| failed(e.into()))?;
    let connected = connect(settings, context, observer).await.map_err(failed)?;
    let validating = Validating::start(settings).map_err(failed)?;
    let recorder = validating.as_ref().map(Validating::recorder);
    let workload = prepare(settings, context.out, &connected, recorder, observer).await?;
    let populated = match populate(settings, context, &workload, &connected, observer).await? {
        ControlFlow::Continue(populated) => populated,
        ControlFlow::Break(outcome) => return Ok(outcome),
    };
    let measured = match measure(
        settings,
        context,
        &connected,
        &workload,
        &local_nodes,
        maintenance_targets,
        observer,
    )
    .await?
    {
        ControlFlow::Continue(measured) => measured,
        ControlFlow::Break(outcome) => return Ok(outcome),
    };
    let validating = validating.map(|v| Finishing {
        validating: v,
        session: connected.session.as_ref(),
        workload: workload.as_ref(),
        stop: &context.stop,
    });
    finish(settings, context.out, measured, populated, validating, observer).await
}

/// Prepares the workload (schema, statements), then writes the run directory's config.json.
async fn prepare(
    settings: &RunSettings,
    out: &Path,
    connected: &Connected,
    recorder: Option<crate::validation::Recorder>,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<Arc<AnyWorkload>> {
    let workload = AnyWorkload::prepare(
        connected.session.clone(),
        connected.native.clone(),
        &settings.workload,
        recorder,
    )
    .await
    .map(Arc::new)
    .map_err(|e| noted(out, e.into()))?;
    fs::create_dir_all(out)
        .with_context(|| format!("creating the run directory {}", out.display()))?;
    settings.write(out)?;
    if let Some(facts) = workload.vector_facts() {
        crate::results::write_json(&out.join(crate::catalogue::VECTORS_JSON), facts)?;
        let truth = if facts.truth == "file" {
            "read from the ground truth file".to_string()
        } else {
            format!("worked out in {:.2} s", facts.truth_s)
        };
        observer.note(&format!(
            "Vectors: {} of {} dimensions ({}), {} queries, ready in {:.2} s; each query's \
             exact {} nearest {truth}.",
            crate::format::group_thousands(facts.rows),
            facts.dimensions,
            facts.similarity,
            crate::format::group_thousands(facts.queries as u64),
            facts.load_s,
            facts.top_k,
        ));
    }
    observer.prepared(out, connected.native.is_some());
    Ok(workload)
}

/// Writes the populate's rows when asked; breaks with how the run ended when it ends here.
async fn populate(
    settings: &RunSettings,
    context: &RunContext<'_>,
    workload: &Arc<AnyWorkload>,
    connected: &Connected,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<ControlFlow<RunOutcome, Option<PopulateSummary>>> {
    let out = context.out;
    let progress = Arc::new(Progress::default());
    let watcher = stop::watch(&context.stop, &progress);
    let populated =
        if context.populate && settings.phase != RunPhase::Run && settings.workload.populate > 0 {
            Some(
                populate::populate_rows(
                    workload,
                    settings,
                    connected.lanes.clone(),
                    progress.clone(),
                    observer,
                    out,
                )
                .await
                .map_err(|e| noted(out, e))?,
            )
        } else {
            None
        };
    watcher.abort();
    if progress.stop.load(Ordering::Relaxed) {
        observer.note("Stopped during populate.");
        return Ok(ControlFlow::Break(RunOutcome::StoppedDuringPopulate));
    }
    if settings.phase == RunPhase::Load {
        if let Some(p) = &populated {
            crate::results::write_json(&out.join(crate::catalogue::LOAD_JSON), p)?;
        }
        observer.note("Load phase done (--phase load); no measured run.");
        return Ok(ControlFlow::Break(RunOutcome::LoadedOnly));
    }
    Ok(ControlFlow::Continue(populated))
}

/// Finishes: Cassandra's figures after, the final check of `--validate`, the last window,
/// the server pauses, summary.json.
async fn finish(
    settings: &RunSettings,
    out: &Path,
    measured: Measured,
    populated: Option<PopulateSummary>,
    validating: Option<Finishing<'_>>,
    observer: &mut dyn RunObserver,
) -> anyhow::Result<RunOutcome> {
    let Measured {
        outcome,
        mut files,
        server_tables,
        maintenance,
        pause_nodes,
        started_at,
        cpu,
        op_names,
        op_weights,
        watcher,
    } = measured;
    let server_tables = server_tables.end(out).await;
    // After Cassandra's figures of the load: the final check's reads are not the load's.
    let validation = match validating {
        Some(f) => Some(
            f.validating
                .finish(f.session, f.workload, settings, f.stop, observer)
                .await,
        ),
        None => None,
    };
    for judged in files.judge_last(outcome.stop == StopReason::Completed) {
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
    let mut summary = summary::summarize(
        settings, &op_names, &outcome, started_at, cpu, populated, verdict, client,
    );
    summary.validation = validation;
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

/// Leaves a note of why a run could not start, and nothing else, in its directory: only in
/// one it creates (or that is empty), never among another run's files.
fn note_failure(out: &Path, error: &dyn std::fmt::Display) {
    if crate::output_dir::may_leave_note(out) && fs::create_dir_all(out).is_ok() {
        let _ = fs::write(
            out.join(crate::catalogue::ERROR_TXT),
            format!("The run did not start: {error}\n"),
        );
    }
}

/// `error`, once noted in `out` as why the run did not start ([`note_failure`]).
fn noted(out: &Path, error: anyhow::Error) -> anyhow::Error {
    note_failure(out, &error);
    error
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
