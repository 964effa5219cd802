//! `headroom run`: connect, set up the workload, optionally populate, drive the load, and
//! write the run directory as the run goes.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::cli::{ClientArgs, OpsArg, RunArgs, RunPhase, WorkloadArgs};
use crate::client::native::{NativeClient, Sender};
use crate::client::{self, ClientConfig};
use crate::engine::clock::RealClock;
use crate::engine::schedule::{End, Progress};
use crate::engine::{self, EngineConfig, Interval, IntervalSink, LoadMode, StopReason};
use crate::maintenance::{MaintenanceConfig, PlanError};
use crate::metrics::server_pauses::{self, PauseNode, PauseSource, RunSpan};
use crate::metrics::server_tables::{self, TablesRecording};
use crate::metrics::{self, Phase};
use crate::report::export::hgrm;
use crate::report::export::hlog::HlogWriter;
use crate::report::export::intervals_csv::IntervalsCsv;
use crate::report::summary::{
    ClientCost, Latency, OpSummary, PopulateSummary, RunSummary, SlaSummary,
};
use crate::sla::{
    judge_window, ClientFigures, RunVerdict, Sla, Validity, WindowAccumulator, WindowStats,
};
use crate::workload::builtin::WorkloadError;
use crate::workload::{compaction_map, replication_map, AnyWorkload, Workload, WorkloadConfig};

/// The contact point when no --hosts is given: the first local node.
pub const DEFAULT_HOST: &str = "127.0.0.1:9042";

/// Concurrency of the populate phase: enough to keep a node busy without a rate.
const POPULATE_CONCURRENCY: usize = 128;

/// The most client threads a run takes (the engine keeps per-worker counters for this many).
pub const MAX_THREADS: usize = crate::engine::schedule::MAX_WORKERS;

/// The most requests in flight a run takes: far more than any cluster answers at once.
const MAX_IN_FLIGHT: usize = 10_000_000;

/// config.json: everything that decides what a run does, resolved, so it can be repeated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfig {
    /// headroom's version.
    pub headroom_version: String,
    /// Contact points.
    pub hosts: Vec<String>,
    /// The workload and its settings.
    pub workload: WorkloadConfig,
    /// Open or closed loop.
    pub mode: LoadMode,
    /// Warmup, seconds.
    pub warmup_s: f64,
    /// Measured duration, seconds, when bounded by time.
    pub duration_s: Option<f64>,
    /// Measured requests, when bounded by count.
    pub ops: Option<u64>,
    /// Interval length, seconds.
    pub interval_s: f64,
    /// Client threads.
    pub threads: usize,
    /// Request timeout, seconds.
    pub request_timeout_s: f64,
    /// Connections per node.
    pub connections: usize,
    /// What sends the measured requests.
    #[serde(default)]
    pub sender: Sender,
    /// Requests due within this many seconds of each other are sent together.
    pub send_resolution_s: f64,
    /// The service level judged per window, if any.
    pub sla: Option<SlaConfig>,
    /// The phases run: the populate (load), the measured run, or both.
    #[serde(default)]
    pub phase: RunPhase,
    /// The command line, as typed.
    pub command_line: Vec<String>,
    /// nodetool operations run during the load (`--during`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance: Option<MaintenanceConfig>,
    /// Whether Cassandra's own histograms of a local cluster's nodes are also read through
    /// nodetool (a JVM start per command, seconds before and after the run); CQL's are
    /// always read. Off for capacity trials and sweep steps, which are many and short.
    #[serde(default = "yes")]
    pub nodetool_figures: bool,
    /// `--server-stats-every`: Cassandra's own figures are also read at this period, seconds,
    /// while the load runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stats_every_s: Option<f64>,
}

/// The SLA of a run, as given and resolved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SlaConfig {
    /// The terms, in canonical form, e.g. "p99.9<100ms, errors<0.1%".
    pub terms: String,
    /// Window length, seconds.
    pub window_s: f64,
}

impl RunConfig {
    /// Resolves and checks the flags of `headroom run`; every error here is the user's input.
    pub fn from_args(args: &RunArgs) -> Result<RunConfig, WorkloadError> {
        let client = &args.client;
        let mode = match (args.rate, args.concurrency) {
            (Some(rate), _) => LoadMode::Open {
                rate_per_s: rate,
                arrivals: client.arrivals,
                max_in_flight: client.max_in_flight,
            },
            (None, c) => LoadMode::Closed {
                concurrency: c.unwrap_or(64),
            },
        };
        let mut workload = args.workload.clone();
        let ops = match &args.ops {
            Some(OpsArg::Count(n)) => Some(*n),
            Some(OpsArg::Mix(mix)) => {
                workload.op_mix = Some(mix.clone());
                None
            }
            None => None,
        };
        // Unbounded by the flags: the format's own count (YCSB's operationcount) or 60 s.
        let unbounded = args.duration.is_none() && ops.is_none();
        let duration = match (args.duration, ops) {
            (Some(_), Some(_)) => {
                return Err(WorkloadError::Invalid(
                    "give --duration or --ops N, not both".into(),
                ))
            }
            (Some(d), _) => Some(d),
            (None, Some(_)) => None,
            (None, None) => Some(Duration::from_secs(60)),
        };
        if duration.is_some_and(|d| d.is_zero()) {
            return Err(WorkloadError::Invalid(
                "--duration 0s measures nothing: give a length above 0, e.g. 60s".into(),
            ));
        }
        if ops == Some(0) {
            return Err(WorkloadError::Invalid(
                "--ops 0 measures nothing: give at least 1 request".into(),
            ));
        }
        let mut config = RunConfig::new(&workload, client, mode, args.warmup, duration, ops)?;
        config.phase = args.phase;
        if let Some(every) = args.server_stats_every {
            if every < crate::metrics::server_samples::MIN_EVERY {
                return Err(WorkloadError::Invalid(format!(
                    "--server-stats-every {} is too short: at least 1s (each reading is a few \
                     queries per node)",
                    humantime::format_duration(every)
                )));
            }
            config.server_stats_every_s = Some(every.as_secs_f64());
        }
        if unbounded {
            if let Some(n) = AnyWorkload::default_ops(&config.workload) {
                config.duration_s = None;
                config.ops = Some(n);
            }
        }
        Ok(config)
    }

    /// The sender the measured requests will try: the driver for workloads the native
    /// sender does not serve, whatever `--sender` asked (`native` is refused for them in
    /// [`RunConfig::new`]).
    pub fn effective_sender(&self) -> Sender {
        match (&self.workload.definition, self.sender) {
            (crate::workload::Definition::Builtin, sender) => sender,
            _ => Sender::Driver,
        }
    }

    /// Adds `--during` to a resolved configuration; the plan must fit in the run.
    pub fn with_maintenance(
        mut self,
        args: &crate::cli::MaintenanceArgs,
    ) -> Result<RunConfig, PlanError> {
        if let Some(plan) = &args.during {
            let maintenance = MaintenanceConfig {
                plan: plan.clone(),
                jmx: args.jmx.clone(),
                timeout_s: args.during_timeout.as_secs_f64(),
                keyspace: self.workload.keyspace.clone(),
            };
            maintenance.check_length(self.duration_s.map(|d| d + self.warmup_s))?;
            self.maintenance = Some(maintenance);
        }
        Ok(self)
    }

    /// A run of `workload` sent by `client` in `mode`, checked.
    pub fn new(
        workload_args: &WorkloadArgs,
        client: &ClientArgs,
        mode: LoadMode,
        warmup: Duration,
        duration: Option<Duration>,
        ops: Option<u64>,
    ) -> Result<RunConfig, WorkloadError> {
        let args = workload_args;
        let name = args.name.clone().unwrap_or_default();
        let definition = crate::workload::any::resolve(&name, args)?;
        // -p N is --partitions (tlp-stress); -p KEY=VALUE is a YCSB property.
        let partitions = match args.p.iter().rev().find(|p| !p.contains('=')) {
            Some(n) => crate::units::parse_count(n)
                .map_err(|e| WorkloadError::Invalid(format!("-p {n}: {e}")))?,
            None => args.partitions,
        };
        let mut workload = WorkloadConfig {
            name,
            definition,
            keyspace: args.keyspace.clone(),
            partitions,
            partition_generator: args.partition_generator,
            read_ratio: args
                .read_ratio
                .unwrap_or(if args.name.as_deref() == Some("documents") {
                    crate::workload::documents::DEFAULT_READ_RATIO
                } else {
                    0.0
                }),
            delete_ratio: args.delete_ratio,
            populate: args.populate,
            replication: replication_map(&args.replication).map_err(WorkloadError::Invalid)?,
            compaction: args
                .compaction
                .as_deref()
                .map(compaction_map)
                .transpose()
                .map_err(WorkloadError::Invalid)?,
            ttl_s: args.ttl.map(|d| d.as_secs() as u32),
            consistency: args.consistency.to_ascii_uppercase(),
            drop: args.drop,
            seed: args.seed,
            rows_per_partition: args.rows_per_partition,
        };
        crate::workload::any::settle(&mut workload)?;
        workload.validate().map_err(WorkloadError::Invalid)?;
        crate::workload::builtin::parse_consistency(&workload.consistency)?;
        match mode {
            LoadMode::Open {
                max_in_flight: 0, ..
            } => {
                return Err(WorkloadError::Invalid(
                    "--max-in-flight must be at least 1".into(),
                ))
            }
            LoadMode::Open { rate_per_s, .. } if rate_per_s.is_nan() || rate_per_s <= 0.0 => {
                return Err(WorkloadError::Invalid("the rate must be above 0".into()))
            }
            LoadMode::Closed { concurrency: 0 } => {
                return Err(WorkloadError::Invalid(
                    "--concurrency must be at least 1".into(),
                ))
            }
            _ => {}
        }
        if client.sender == Sender::Native
            && !matches!(workload.definition, crate::workload::Definition::Builtin)
        {
            return Err(WorkloadError::Invalid(
                "--sender native sends the built-in workloads only (keyvalue, timeseries, \
                 documents); use --sender driver for workload files and YCSB"
                    .into(),
            ));
        }
        if client.interval < Duration::from_millis(10) {
            return Err(WorkloadError::Invalid(
                "--interval must be at least 10ms".into(),
            ));
        }
        if client.connections == 0 {
            return Err(WorkloadError::Invalid(
                "--connections must be at least 1 (connections to each node)".into(),
            ));
        }
        if client.timeout.is_zero() {
            return Err(WorkloadError::Invalid(
                "--timeout 0s would time every request out at once: give how long one request \
                 may take, e.g. 10s"
                    .into(),
            ));
        }
        if client.max_in_flight > MAX_IN_FLIGHT {
            return Err(WorkloadError::Invalid(format!(
                "--max-in-flight {} is more than {MAX_IN_FLIGHT}",
                client.max_in_flight
            )));
        }
        if !crate::workload::stress::profile::is_plain_name(&args.keyspace)
            || args.keyspace.len() > 48
        {
            return Err(WorkloadError::Invalid(format!(
                "--keyspace '{}' is not a CQL keyspace name: up to 48 letters, digits and \
                 underscores",
                crate::usage::cut(&args.keyspace, 60)
            )));
        }
        let threads = client.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(2, |n| n.get().min(MAX_THREADS))
        });
        if threads == 0 {
            return Err(WorkloadError::Invalid(
                "--threads must be at least 1".into(),
            ));
        }
        if threads > MAX_THREADS {
            return Err(WorkloadError::Invalid(format!(
                "--threads {threads} is more than {MAX_THREADS}"
            )));
        }
        let hosts = if client.hosts.is_empty() {
            vec![DEFAULT_HOST.to_string()]
        } else {
            client.hosts.clone()
        };
        Ok(RunConfig {
            headroom_version: env!("CARGO_PKG_VERSION").to_string(),
            hosts: client::parse_hosts(&hosts)
                .map_err(|e| WorkloadError::Invalid(e.to_string()))?,
            workload,
            mode,
            warmup_s: warmup.as_secs_f64(),
            duration_s: duration.map(|d| d.as_secs_f64()),
            ops,
            interval_s: client.interval.as_secs_f64(),
            threads,
            request_timeout_s: client.timeout.as_secs_f64(),
            connections: client.connections,
            sender: client.sender,
            send_resolution_s: client.send_resolution.as_secs_f64(),
            sla: None,
            phase: RunPhase::Both,
            command_line: crate::cli::redacted_command_line(std::env::args()),
            maintenance: None,
            nodetool_figures: true,
            server_stats_every_s: None,
        })
    }

    fn end(&self) -> End {
        End {
            warmup_ns: (self.warmup_s * 1e9) as u64,
            duration_ns: self.duration_s.map(|d| (d * 1e9) as u64),
            ops: self.ops,
        }
    }
}

fn yes() -> bool {
    true
}

/// Runs `headroom run`.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let mut config = RunConfig::from_args(&args)?.with_maintenance(&args.maintenance)?;
    config.sla = sla_config(args.sla.as_deref(), args.window, &config)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out_dir(&config.workload.name));
    crate::output_dir::claim(&out, args.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
    let runtime = runtime(config.threads)?;
    let stop = StopSignal::new();
    runtime.spawn(stop.clone().on_ctrl_c_or_term());
    let credentials = credentials(&args.client);
    let pauses = PauseSource::Discover(
        args.cluster_dir
            .clone()
            .unwrap_or_else(crate::cluster::default_dir),
    );
    let result = runtime.block_on(execute_with(
        &config,
        &out,
        credentials,
        &stop,
        true,
        None,
        &pauses,
    ));
    // A worker may still wait towards a request that will never be sent.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(match result? {
        Executed::StoppedDuringPopulate => ExitCode::from(130),
        Executed::LoadedOnly => ExitCode::SUCCESS,
        Executed::Finished(summary) => {
            write_report(&out);
            exit_code_of(&summary)
        }
    })
}

/// Writes DIR/report.html for a run or search directory; a failure is reported, not fatal:
/// the run's own files are complete without it.
pub fn write_report(dir: &Path) {
    let path = dir.join("report.html");
    match crate::report::write_report(&[dir.to_path_buf()], &path) {
        Ok(()) => println!("Report: {}", path.display()),
        Err(e) => eprintln!("Warning: could not write {}: {e:#}", path.display()),
    }
}

/// Exit code of a completed run whose SLA failed.
pub const EXIT_SLA_FAILED: u8 = 3;
/// Exit code of a run (or search) without a verdict: the client, not the server, limited it.
pub const EXIT_CLIENT_BOUND: u8 = 4;

/// The exit code for a run that ended this way.
pub fn exit_code(stop: StopReason) -> ExitCode {
    match stop {
        StopReason::Completed => ExitCode::SUCCESS,
        StopReason::Interrupted => ExitCode::from(130),
        StopReason::AllRequestsFailing => ExitCode::from(1),
    }
}

/// The exit code of a finished run: [`exit_code`] of how it stopped; for a completed run,
/// [`EXIT_CLIENT_BOUND`] without a valid measurement, [`EXIT_SLA_FAILED`] when its SLA
/// failed, 0 otherwise.
pub fn exit_code_of(summary: &RunSummary) -> ExitCode {
    if summary.stop != StopReason::Completed {
        return exit_code(summary.stop);
    }
    if !summary.is_valid() {
        ExitCode::from(EXIT_CLIENT_BOUND)
    } else if summary.sla.as_ref().is_some_and(|s| !s.verdict.pass) {
        ExitCode::from(EXIT_SLA_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// The async runtime of a run: `threads` workers.
pub fn runtime(threads: usize) -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// User name and password, when both are given.
pub fn credentials(client: &ClientArgs) -> Option<(String, String)> {
    client.username.clone().zip(client.password.clone())
}

/// Reads `--sla` (if given) and checks it against the workload and the interval length.
pub fn sla_config(
    sla: Option<&str>,
    window: Duration,
    config: &RunConfig,
) -> anyhow::Result<Option<SlaConfig>> {
    let Some(text) = sla else {
        return Ok(None);
    };
    if window.is_zero() {
        return Err(WorkloadError::Invalid(
            "--window 0s: the SLA's window must be longer than 0, e.g. 10s".into(),
        )
        .into());
    }
    let sla = Sla::parse(text, window)?;
    let op_names = AnyWorkload::op_names_of(&config.workload)?;
    let op_names: Vec<&str> = op_names.iter().map(String::as_str).collect();
    sla.check_ops(&op_names).map_err(WorkloadError::Invalid)?;
    crate::sla::check_window(sla.window, Duration::from_secs_f64(config.interval_s))
        .map_err(WorkloadError::Invalid)?;
    Ok(Some(SlaConfig {
        terms: sla.to_string(),
        window_s: sla.window.as_secs_f64(),
    }))
}

/// Ends runs early on request: Ctrl-C, SIGTERM, or a caller's decision.
#[derive(Debug, Default)]
pub struct StopSignal {
    set: std::sync::atomic::AtomicBool,
    notify: tokio::sync::Notify,
}

impl StopSignal {
    /// A signal not yet given.
    pub fn new() -> Arc<StopSignal> {
        Arc::new(StopSignal::default())
    }

    /// Gives the signal: every run watching it sends no new requests and ends.
    pub fn trigger(&self) {
        self.set.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Whether the signal was given.
    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    /// Returns once the signal is given.
    pub async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }

    /// Gives the signal on Ctrl-C (SIGINT) or SIGTERM; spawn it on the run's runtime.
    pub async fn on_ctrl_c_or_term(self: Arc<Self>) {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return,
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        eprintln!("\nStopping: no new requests; waiting for those in flight...");
        self.trigger();
    }
}

/// Ends the run behind `progress` when `stop` is given.
fn watch(stop: &Arc<StopSignal>, progress: &Arc<Progress>) -> tokio::task::JoinHandle<()> {
    let (stop, progress) = (stop.clone(), progress.clone());
    tokio::spawn(async move {
        stop.wait().await;
        progress.stop.store(true, Ordering::Relaxed);
    })
}

/// How a run that started ended.
#[derive(Debug)]
pub enum Executed {
    /// The stop signal came while populating; nothing was measured.
    StoppedDuringPopulate,
    /// The measured run ended (completed or not; see its stop reason).
    Finished(Box<RunSummary>),
    /// `--phase load`: the populate alone ran (if there was anything to populate).
    LoadedOnly,
}

/// runs/<UTC time>-<what>, e.g. runs/20261122-041500-keyvalue; with `-2`, `-3`... when a
/// command of the same second has it already.
pub fn default_out_dir(what: &str) -> PathBuf {
    let stamp = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let stamp: String = stamp
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect::<String>()
        .replace('T', "-");
    let base = format!("{stamp}-{}", out_dir_label(what));
    (1..)
        .map(|n| match n {
            1 => PathBuf::from("runs").join(&base),
            n => PathBuf::from("runs").join(format!("{base}-{n}")),
        })
        .find(|dir| !dir.exists())
        .expect("an unused name")
}

/// What names a run directory: a workload file's stem (`workloads/kv.yaml` gives `kv`),
/// with anything but letters, digits, `-` and `_` made a `-`.
fn out_dir_label(what: &str) -> String {
    let stem = Path::new(what)
        .file_stem()
        .map_or(what.into(), |s| s.to_string_lossy());
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
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

/// Looks at every finished interval of a run and may end it early, as completed: a sweep's
/// step ends once its throughput is stable.
pub trait IntervalWatch {
    /// One finished interval (warmup and measured parts, as the engine hands it over);
    /// true ends the run now: no new requests, those in flight are awaited.
    fn interval(&mut self, interval: &Interval) -> bool;
}

/// The run's files, then the watch, for each interval; sets the run's stop when the watch
/// says so.
struct Watched<'a, 'w> {
    files: &'a mut RunFiles,
    watch: Option<&'a mut (dyn IntervalWatch + Send + 'w)>,
    progress: Arc<Progress>,
    ended: bool,
}

impl IntervalSink for Watched<'_, '_> {
    fn interval(&mut self, interval: &Interval) {
        self.files.interval(interval);
        if let Some(watch) = self.watch.as_deref_mut() {
            if watch.interval(interval) && !self.ended {
                self.ended = true;
                self.progress.stop.store(true, Ordering::Relaxed);
            }
        }
    }
}

/// One run, from connecting to the summary, writing its directory `out` as it goes; see
/// [`execute_with`]. The server pauses come from the local cluster `headroom cluster` uses,
/// when the run loads it.
pub async fn execute_watched(
    config: &RunConfig,
    out: &Path,
    credentials: Option<(String, String)>,
    stop: &Arc<StopSignal>,
    populate: bool,
    interval_watch: Option<&mut (dyn IntervalWatch + Send)>,
) -> anyhow::Result<Executed> {
    let pauses = PauseSource::discover_default();
    execute_with(
        config,
        out,
        credentials,
        stop,
        populate,
        interval_watch,
        &pauses,
    )
    .await
}

/// One run, from connecting to the summary, writing its directory `out` as it goes. Errors
/// before the run starts leave only error.txt in `out`. `populate` false skips the
/// workload's populate (its rows are there from an earlier run). `interval_watch` is shown
/// every interval of the measured run; when it ends the run, the run counts as completed
/// (unless `stop` was given too). The server pauses of the nodes `pauses` names go into
/// pauses.hlog and pauses.json as the run ends, interrupted or not (see [`server_pauses`]).
pub async fn execute_with(
    config: &RunConfig,
    out: &Path,
    credentials: Option<(String, String)>,
    stop: &Arc<StopSignal>,
    populate: bool,
    interval_watch: Option<&mut (dyn IntervalWatch + Send)>,
    pauses: &PauseSource,
) -> anyhow::Result<Executed> {
    let maintenance_targets = match maintenance_targets(config, pauses) {
        Ok(t) => t,
        Err(e) => {
            note_failure(out, &e);
            return Err(e.into());
        }
    };
    let client_config = ClientConfig {
        hosts: config.hosts.clone(),
        request_timeout: Duration::from_secs_f64(config.request_timeout_s),
        connections: config.connections,
        credentials,
    };
    let session = match client::connect(&client_config).await {
        Ok(s) => s,
        Err(e) => {
            note_failure(out, &e);
            return Err(e.into());
        }
    };
    let native = match config.effective_sender() {
        Sender::Driver => None,
        sender => {
            match NativeClient::open(
                session.clone(),
                config.connections,
                client_config.credentials.clone(),
                client::CONNECT_TIMEOUT,
            )
            .await
            {
                Ok(native) => Some(Arc::new(native)),
                Err(reason) if sender == Sender::Auto => {
                    println!("The native sender cannot connect ({reason}): the driver sends the requests.");
                    None
                }
                Err(reason) => {
                    let e = client::ConnectError::Unreachable {
                        hosts: config.hosts.join(", "),
                        reason: format!("the native sender: {reason}"),
                    };
                    note_failure(out, &e);
                    return Err(e.into());
                }
            }
        }
    };
    let workload =
        match AnyWorkload::prepare(session.clone(), native.clone(), &config.workload).await {
            Ok(w) => Arc::new(w),
            Err(e) => {
                note_failure(out, &e);
                return Err(e.into());
            }
        };
    fs::create_dir_all(out)
        .with_context(|| format!("creating the run directory {}", out.display()))?;
    write_json(&out.join("config.json"), config)?;
    println!("Run directory: {}", out.display());
    println!(
        "Requests sent by: {}",
        if native.is_some() {
            "headroom's own connections (--sender native)"
        } else {
            "the scylla driver (--sender driver)"
        }
    );

    let progress = Arc::new(Progress::default());
    let watcher = watch(stop, &progress);
    let populated = if populate && config.phase != RunPhase::Run && config.workload.populate > 0 {
        Some(populate_rows(&workload, config, progress.clone()).await)
    } else {
        None
    };
    if progress.stop.load(Ordering::Relaxed) {
        watcher.abort();
        println!("Stopped during populate.");
        return Ok(Executed::StoppedDuringPopulate);
    }
    if config.phase == RunPhase::Load {
        watcher.abort();
        if let Some(p) = &populated {
            write_json(&out.join("load.json"), p)?;
        }
        println!("Load phase done (--phase load); no measured run.");
        return Ok(Executed::LoadedOnly);
    }
    // The measured run gets a fresh count of requests.
    let progress = Arc::new(Progress::default());
    watcher.abort();
    let watcher = watch(stop, &progress);

    let engine_config = EngineConfig {
        mode: config.mode,
        end: config.end(),
        interval: Duration::from_secs_f64(config.interval_s),
        workers: config.threads,
        first_seq: config.workload.populate,
        only_op: None,
        seed: config.workload.seed,
        hiccups: true,
        send_resolution: Duration::from_secs_f64(config.send_resolution_s),
        request_timeout: Some(Duration::from_secs_f64(config.request_timeout_s)),
        lag_limit: Some(crate::sla::validity::lag_limit(Duration::from_secs_f64(
            config.send_resolution_s,
        ))),
    };
    let mut server_tables = TablesRecording::begin(
        session,
        &config.workload,
        pauses,
        &config.hosts,
        config.nodetool_figures,
        out,
    )
    .await;
    println!(
        "Running {} ({}) against {}; latencies are {}.",
        config.workload.name,
        describe_mode(&config.mode),
        config.hosts.join(", "),
        config.mode.latency_kind()
    );
    let started_at = SystemTime::now();
    let clock = RealClock::start_now();
    let op_names: Vec<String> = workload.op_names().to_vec();
    let planned = config
        .duration_s
        .map(|d| Duration::from_secs_f64(d + config.warmup_s));
    let sla = match &config.sla {
        Some(c) => Some(Sla::parse(&c.terms, Duration::from_secs_f64(c.window_s))?),
        None => None,
    };
    let pause_nodes = pause_nodes(pauses, &config.hosts);
    let mut sink = RunFiles::create(out, started_at, &op_names, config.warmup_s, planned, sla)?;
    sink.op_weights = workload.op_weights();
    let cpu_before = metrics::process::cpu_time();
    let mut watched = Watched {
        files: &mut sink,
        watch: interval_watch,
        progress: progress.clone(),
        ended: false,
    };
    let maintenance = start_maintenance(config, maintenance_targets, &clock, started_at, out, stop);
    if let Some(every) = config.server_stats_every_s {
        server_tables.sample_every(
            Duration::from_secs_f64(every),
            tokio::time::Instant::from_std(clock.t0()),
            started_at,
            out,
        );
    }
    let mut outcome = engine::run(
        workload.clone(),
        clock,
        &engine_config,
        progress,
        &mut watched,
    )
    .await;
    let maintenance = match maintenance {
        Some(m) => Some(finish_maintenance(m).await),
        None => None,
    };
    if watched.ended && outcome.stop == StopReason::Interrupted && !stop.is_set() {
        // The watch ended the measured part: it is complete by the caller's rule.
        outcome.stop = StopReason::Completed;
    }
    let cpu = metrics::process::cpu_time().saturating_sub(cpu_before);
    let server_tables = server_tables.end(out).await;
    let spans = std::mem::take(&mut sink.spans);
    let op_weights = sink.op_weights.clone();
    let client_decided = sink.client_decided_windows();
    let verdict = sink.finish()?;
    let pauses = (!pause_nodes.is_empty()).then(|| {
        let from_ns = (config.warmup_s * 1e9) as u64;
        let span = RunSpan {
            start: started_at,
            measured_from_ns: from_ns,
            measured_to_ns: outcome.elapsed_ns.max(from_ns),
            intervals: &spans,
        };
        server_pauses::write_run_pauses(out, &pause_nodes, &span)
    });

    watcher.abort();
    let summary = summarize(
        config,
        &op_names,
        &outcome,
        started_at,
        cpu,
        populated,
        verdict,
        Client {
            op_weights: &op_weights,
            client_decided,
        },
    );
    for (i, name) in op_names.iter().enumerate() {
        let stats = &outcome.totals[i][Phase::Measure.index()];
        if stats.ok > 0 {
            write_hgrm(&out.join(format!("{name}.hgrm")), &stats.response_ns)?;
            write_hgrm(&out.join(format!("{name}.service.hgrm")), &stats.service_ns)?;
        }
    }
    write_json(&out.join("summary.json"), &summary)?;
    print_summary(&summary);
    if let Some(pauses) = &pauses {
        println!(
            "  server pauses in the measured part ({}):",
            server_pauses::PAUSES_JSON
        );
        for line in server_pauses::describe(pauses) {
            println!("  {line}");
        }
    }
    if let Some(maintenance) = &maintenance {
        println!(
            "  maintenance during the run ({}):",
            crate::maintenance::MAINTENANCE_JSON
        );
        for line in crate::maintenance::runner::describe(maintenance) {
            println!("    {line}");
        }
    }
    print_server_tables(&server_tables);
    if server_tables.samples_every_s.is_some() {
        print_server_samples(&server_tables, out, config.warmup_s);
    }
    println!("\nFiles: {}", out.display());
    if outcome.stop == StopReason::AllRequestsFailing {
        eprintln!(
            "Error: every request failed for {} s; the run stopped. See the error examples above.",
            engine::ALL_FAILING_LIMIT.as_secs()
        );
    }
    Ok(Executed::Finished(Box::new(summary)))
}

/// The nodes `--during` runs its operations on; none without `--during`.
fn maintenance_targets(
    config: &RunConfig,
    pauses: &PauseSource,
) -> Result<Vec<crate::maintenance::Target>, PlanError> {
    match &config.maintenance {
        Some(m) => crate::maintenance::targets_for(m, pauses, &config.hosts),
        None => Ok(Vec::new()),
    }
}

/// Starts `--during`'s plan on the run's time base (that of histograms.hlog).
fn start_maintenance(
    config: &RunConfig,
    targets: Vec<crate::maintenance::Target>,
    clock: &RealClock,
    started_at: SystemTime,
    out: &Path,
    stop: &Arc<StopSignal>,
) -> Option<crate::maintenance::runner::Maintenance> {
    let m = config.maintenance.as_ref()?;
    let names: Vec<String> = targets.iter().map(|t| t.name()).collect();
    println!(
        "Maintenance: nodetool {} on {}, one node after another.",
        m.plan
            .0
            .iter()
            .map(|p| format!("{}@{}s", p.operation, p.at_s))
            .collect::<Vec<_>>()
            .join(", "),
        names.join(", ")
    );
    Some(crate::maintenance::runner::Maintenance::start(
        m,
        targets,
        crate::maintenance::runner::Nodetool,
        tokio::time::Instant::from_std(clock.t0()),
        started_at,
        Some(out),
        stop.clone(),
    ))
}

/// Ends the maintenance with the load.
async fn finish_maintenance(
    m: crate::maintenance::runner::Maintenance,
) -> crate::maintenance::MaintenanceFile {
    m.finish().await
}

/// Cassandra's own view of the run's table, after the client's summary.
fn print_server_tables(file: &server_tables::ServerTablesFile) {
    println!(
        "  Cassandra's own histograms of {}.{} ({}; decaying server-side views):",
        file.keyspace,
        file.table,
        server_tables::SERVER_TABLES_JSON
    );
    for line in server_tables::describe(file) {
        println!("    {line}");
    }
}

/// What the readings during the measured part showed (`--server-stats-every`).
fn print_server_samples(file: &server_tables::ServerTablesFile, out: &Path, warmup_s: f64) {
    use crate::metrics::server_samples;
    let mut notes = Vec::new();
    let samples = server_samples::read_samples(out, &mut notes);
    println!(
        "  Cassandra's own figures every {} s during the measured part ({}, {} readings in all):",
        file.samples_every_s.unwrap_or_default(),
        server_samples::SERVER_SAMPLES_JSONL,
        file.samples
    );
    let lines = server_samples::describe(&samples, warmup_s);
    if lines.is_empty() {
        println!("    none of the table's requests counted in the readings");
    }
    for line in lines.iter().chain(&notes) {
        println!("    {line}");
    }
}

/// The nodes whose pauses a run against `hosts` records; says why when a running local
/// cluster is not the one loaded.
fn pause_nodes(pauses: &PauseSource, hosts: &[String]) -> Vec<PauseNode> {
    match pauses.nodes_for(hosts) {
        Ok(nodes) => {
            if !nodes.is_empty() {
                let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
                println!(
                    "Server pauses: from the GC logs of {} when the run ends.",
                    names.join(", ")
                );
            }
            nodes
        }
        Err(why) => {
            println!("Server pauses are not recorded: {why}.");
            Vec::new()
        }
    }
}

/// A count or rate that may be far beyond what anyone types: whole up to a billion,
/// in scientific notation above (`2.000e99`).
fn format_big(n: f64) -> String {
    if n < 1e9 {
        format!("{n:.0}")
    } else {
        format!("{n:.3e}")
    }
}

fn describe_mode(mode: &LoadMode) -> String {
    match mode {
        LoadMode::Open {
            rate_per_s,
            arrivals,
            max_in_flight,
        } => {
            format!(
                "open loop at {} requests/s, {arrivals:?} arrivals, at most {max_in_flight} in flight",
                format_big(*rate_per_s)
            )
        }
        LoadMode::Closed { concurrency } => format!("closed loop, {concurrency} in flight"),
    }
}

async fn populate_rows(
    workload: &Arc<AnyWorkload>,
    config: &RunConfig,
    progress: Arc<Progress>,
) -> PopulateSummary {
    let rows = config.workload.populate;
    println!("Populating {rows} rows ({POPULATE_CONCURRENCY} in flight)...");
    let engine_config = EngineConfig {
        mode: LoadMode::Closed {
            concurrency: POPULATE_CONCURRENCY,
        },
        end: End {
            warmup_ns: 0,
            duration_ns: None,
            ops: Some(rows),
        },
        interval: Duration::from_secs(5),
        workers: config.threads,
        first_seq: 0,
        only_op: Some(workload.populate_op()),
        seed: config.workload.seed,
        hiccups: false,
        send_resolution: Duration::ZERO,
        request_timeout: Some(Duration::from_secs_f64(config.request_timeout_s)),
        lag_limit: None,
    };
    struct Quiet(u64);
    impl IntervalSink for Quiet {
        fn interval(&mut self, interval: &Interval) {
            let done: u64 = interval.ops.iter().flatten().map(|s| s.total()).sum();
            self.0 += done;
            println!(
                "  populate {:>6.0}s {:>10} rows {:>9.0}/s",
                (interval.start_ns + interval.length_ns) as f64 / 1e9,
                self.0,
                done as f64 / (interval.length_ns as f64 / 1e9)
            );
        }
    }
    let started = Instant::now();
    let outcome = engine::run(
        workload.clone(),
        RealClock::start_now(),
        &engine_config,
        progress,
        &mut Quiet(0),
    )
    .await;
    let seconds = started.elapsed().as_secs_f64();
    let stats = &outcome.totals[workload.populate_op()][Phase::Measure.index()];
    let summary = PopulateSummary {
        rows,
        written: stats.ok,
        errors: stats.error_count(),
        seconds,
        rate_per_s: stats.ok as f64 / seconds.max(1e-9),
    };
    println!(
        "Populated {} rows in {:.1} s ({:.0} rows/s, {} errors).",
        summary.written, summary.seconds, summary.rate_per_s, summary.errors
    );
    summary
}

/// What the run's sink knew of the client, for its validity.
struct Client<'a> {
    /// Each op type's share: those with none are steps of compound requests, whose waits are
    /// their request's.
    op_weights: &'a [f64],
    /// Failing SLA windows the client's own wait decided.
    client_decided: u64,
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    config: &RunConfig,
    op_names: &[String],
    outcome: &engine::Outcome,
    started_at: SystemTime,
    cpu: Duration,
    populate: Option<PopulateSummary>,
    sla: Option<SlaSummary>,
    client: Client,
) -> RunSummary {
    let warmup_s = config.warmup_s;
    // A completed open-loop run is measured over its scheduled period (see
    // `engine::MeasuredPeriod`); a closed loop or a run cut short, until its last answer.
    let period = outcome
        .measured_period
        .filter(|_| outcome.stop == StopReason::Completed);
    let measured_s = match period {
        Some(p) => p.seconds(),
        None => (outcome.elapsed_ns as f64 / 1e9 - warmup_s).max(1e-9),
    };
    let phase = |p: Phase, seconds: f64| -> Vec<OpSummary> {
        op_names
            .iter()
            .enumerate()
            .map(|(i, name)| OpSummary::of(name, &outcome.totals[i][p.index()], seconds))
            .filter(|s| s.requests > 0)
            .collect()
    };
    let ops = phase(Phase::Measure, measured_s);
    let measured_ok: u64 = ops.iter().map(|o| o.ok).sum();
    let measured_failed: u64 = ops.iter().map(|o| o.requests - o.ok).sum();
    let hiccups = Latency::of(&outcome.hiccups);
    let validity = validity(config, outcome, cpu, &hiccups, &client);
    RunSummary {
        headroom_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: config.workload.name.clone(),
        mode: config.mode,
        latency_kind: config.mode.latency_kind().to_string(),
        stop: outcome.stop,
        started_at: humantime::format_rfc3339_millis(started_at).to_string(),
        warmup_s,
        measured_s,
        attempted_rate_per_s: match config.mode {
            LoadMode::Open { rate_per_s, .. } => Some(rate_per_s),
            LoadMode::Closed { .. } => None,
        },
        achieved_rate_per_s: match period {
            Some(p) => p.achieved_per_s(),
            None => measured_ok as f64 / measured_s,
        },
        failed_rate_per_s: match period {
            Some(p) => p.failed_per_s(),
            None => measured_failed as f64 / measured_s,
        },
        max_backlog: outcome.max_backlog,
        unsent_requests: outcome.unsent,
        validity: Some(validity),
        ops,
        warmup: phase(Phase::Warmup, warmup_s),
        populate,
        client: ClientCost {
            cpu_s: cpu.as_secs_f64(),
            // Per request sent: unsent requests cost nothing.
            cpu_us_per_request: if outcome.sent > 0 {
                cpu.as_secs_f64() * 1e6 / outcome.sent as f64
            } else {
                0.0
            },
            peak_rss_bytes: metrics::process::peak_rss_bytes(),
            hiccup_max_ms: hiccups.max_ms,
            hiccup_p999_ms: hiccups.p999_ms,
        },
        sla,
    }
}

/// Whether the client limited the run: its figures over the measured part and the verdict
/// (see [`crate::sla::validity`]).
fn validity(
    config: &RunConfig,
    outcome: &engine::Outcome,
    cpu: Duration,
    hiccups: &Latency,
    client: &Client,
) -> Validity {
    let mut wait = metrics::new_histogram();
    let mut measured_requests = 0;
    for (stats, weight) in outcome.totals.iter().zip(client.op_weights) {
        if *weight > 0.0 {
            let measured = &stats[Phase::Measure.index()];
            let _ = wait.add(&measured.wait_ns);
            measured_requests += measured.total();
        }
    }
    let wait = Latency::of(&wait);
    let wall_s = (outcome.elapsed_ns as f64 / 1e9).max(1e-9);
    let figures = ClientFigures {
        threads: config.threads,
        cpu_share_of_threads: cpu.as_secs_f64() / (wall_s * config.threads.max(1) as f64),
        wait_p99_ms: wait.p99_ms,
        wait_p999_ms: wait.p999_ms,
        wait_max_ms: wait.max_ms,
        lag_limit_ms: crate::sla::validity::lag_limit(Duration::from_secs_f64(
            config.send_resolution_s,
        ))
        .as_secs_f64()
            * 1e3,
        hiccup_p999_ms: hiccups.p999_ms,
        hiccup_max_ms: hiccups.max_ms,
        max_backlog: outcome.max_backlog,
        unsent: outcome.unsent,
        unsent_held: outcome.unsent_held,
        limit_waits: outcome.limit_waits,
        late_sends: outcome.client_late,
        measured_requests,
        client_decided_windows: client.client_decided,
    };
    Validity::decide(figures, matches!(config.mode, LoadMode::Open { .. }))
}

fn print_summary(s: &RunSummary) {
    println!("\nSummary ({}):", s.latency_kind);
    let failed = if s.failed_rate_per_s > 0.0 {
        format!(" (successful answers; {:.0}/s failed)", s.failed_rate_per_s)
    } else {
        String::new()
    };
    match s.attempted_rate_per_s {
        Some(rate) => {
            let note = if s.achieved_rate_per_s < rate * 0.99 {
                "  ← the target was NOT reached"
            } else {
                ""
            };
            println!(
                "  rate: attempted {}/s, achieved {:.0}/s{failed} over {:.1} s; largest client backlog {}{note}",
                format_big(rate),
                s.achieved_rate_per_s,
                s.measured_s,
                format_big(s.max_backlog as f64)
            );
            if s.unsent_requests > 0.0 {
                println!(
                    "  {} requests of the schedule were never sent (the client was still behind it {} s after its end)",
                    format_big(s.unsent_requests),
                    engine::SEND_GRACE.as_secs()
                );
            }
        }
        None => println!(
            "  rate: {:.0}/s{failed} over {:.1} s",
            s.achieved_rate_per_s, s.measured_s
        ),
    }
    if s.stop != StopReason::Completed {
        println!("  stopped early: {:?}", s.stop);
    }
    // The op column is as wide as the longest name (YCSB's READ-MODIFY-WRITE).
    let width = s.ops.iter().map(|o| o.op.len()).max().unwrap_or(0).max(8);
    println!(
        "  {:<width$} {:>10} {:>9}   {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}   (ms; service time in brackets)",
        "op", "requests", "rate/s", "mean", "p50", "p95", "p99", "p99.9", "p99.99", "max"
    );
    for op in &s.ops {
        let (r, v) = (&op.response_time, &op.service_time);
        if op.ok == 0 {
            println!(
                "  {:<width$} {:>10} {:>9.0}   no request was answered: every one failed",
                op.op, op.requests, op.rate_per_s
            );
        } else {
            print_latency_lines(&op.op, op.requests, op.rate_per_s, r, v, width);
        }
        let w = &op.wait_time;
        println!(
            "  {:<width$} wait in client before the send: p50 {:.3}, p99 {:.3}, p99.9 {:.3}, max {:.3}",
            "", w.p50_ms, w.p99_ms, w.p999_ms, w.max_ms
        );
        for (class, n) in &op.errors {
            let example = op
                .error_examples
                .get(class)
                .map(String::as_str)
                .unwrap_or("");
            println!("  {:<width$} {n} {class} errors, e.g. {example}", "");
        }
    }
    if let Some(sla) = &s.sla {
        print_sla(sla, s.is_valid());
    }
    if let Some(v) = &s.validity {
        print_validity(v);
    }
    let c = &s.client;
    println!(
        "  client: {:.2} s CPU ({:.2} µs per request), peak memory {} MiB, hiccups max {:.2} ms (p99.9 {:.2} ms)",
        c.cpu_s,
        c.cpu_us_per_request,
        c.peak_rss_bytes >> 20,
        c.hiccup_max_ms,
        c.hiccup_p999_ms
    );
}

/// The measurement's validity: one line when valid, the reasons and what to do when not.
fn print_validity(v: &Validity) {
    let f = &v.figures;
    if v.is_valid() && f.limit_waits > 0 {
        println!(
            "  measurement: valid — the server set the pace: {} requests found every in-flight \
             slot taken (--max-in-flight) and waited for the server to answer, so their wait \
             before the send is the server's",
            f.limit_waits
        );
        return;
    }
    if v.is_valid() {
        println!(
            "  measurement: valid — the client kept its schedule (wait before send p99 {:.2} ms)",
            f.wait_p99_ms
        );
        return;
    }
    println!(
        "  measurement: INVALID: client-bound — the client, not the server, limited this run:"
    );
    for reason in &v.reasons {
        println!("    - {reason}");
    }
    if let Some(advice) = &v.advice {
        println!("    what to do: {advice}");
    }
}

/// An op's line of response-time percentiles and its line of service-time ones.
fn print_latency_lines(op: &str, requests: u64, rate: f64, r: &Latency, v: &Latency, width: usize) {
    println!(
        "  {op:<width$} {requests:>10} {rate:>9.0}   {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
        r.mean_ms, r.p50_ms, r.p95_ms, r.p99_ms, r.p999_ms, r.p9999_ms, r.max_ms
    );
    println!(
        "  {:<width$} {:>10} {:>9}  ({:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3})",
        "", "", "", v.mean_ms, v.p50_ms, v.p95_ms, v.p99_ms, v.p999_ms, v.p9999_ms, v.max_ms
    );
}

/// The SLA verdict: overall, the worst window of each term, and the failing windows. A run
/// that is not `valid` has no verdict; its windows are shown as judged.
fn print_sla(sla: &SlaSummary, valid: bool) {
    let v = &sla.verdict;
    let verdict = if !valid {
        format!(
            "NO VERDICT (the run was client-bound; as judged, {} of {} windows failed)",
            v.failing.len(),
            v.windows
        )
    } else if v.pass {
        "PASS".to_string()
    } else if v.windows == 0 {
        "FAIL (no complete window to judge: make the run at least one window long)".to_string()
    } else if v.failing_by_failures > 0 {
        format!(
            "FAIL in {} of {} windows ({} of them on failed requests alone: a failed request \
             counts as slower than any threshold)",
            v.failing.len(),
            v.windows,
            v.failing_by_failures
        )
    } else {
        format!("FAIL in {} of {} windows", v.failing.len(), v.windows)
    };
    println!("  SLA {}: {verdict}", sla.spec);
    for worst in &v.worst {
        let Some(value) = worst.describe() else {
            continue;
        };
        let on_max = if worst.judged_on_max_windows > 0 {
            format!(
                " ({} windows had too few requests for the percentile and were judged on their max)",
                worst.judged_on_max_windows
            )
        } else {
            String::new()
        };
        println!(
            "    {:<16} worst window {} (window {}), failed in {} windows{on_max}",
            worst.term,
            value,
            worst.window_index.map_or(0, |i| i + 1),
            worst.failing_windows
        );
    }
    const LISTED: usize = 20;
    for window in v.failing.iter().take(LISTED) {
        println!(
            "    failing window {} ({:.0}-{:.0} s after warmup): {}",
            window.index + 1,
            window.start_ns as f64 / 1e9,
            (window.start_ns + window.length_ns) as f64 / 1e9,
            window.failures()
        );
    }
    if v.failing.len() > LISTED {
        println!(
            "    ... and {} more failing windows (summary.json lists them all)",
            v.failing.len() - LISTED
        );
    }
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value).expect("serializable");
    fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

fn write_hgrm(path: &Path, histogram: &hdrhistogram::Histogram<u64>) -> anyhow::Result<()> {
    let mut file = std::io::BufWriter::new(
        fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    hgrm::write_percentiles(&mut file, histogram, 5, 1e6)
        .with_context(|| format!("writing {}", path.display()))?;
    file.flush()
        .with_context(|| format!("writing {}", path.display()))
}

/// A bar counting the run's seconds, when standard output is a terminal and the run has a
/// planned length; plain lines otherwise (pipes, files, CI).
fn progress_bar(planned: Option<Duration>) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    let planned = planned?;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(planned.as_secs().max(1));
    let style = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} s  {msg}")
        .expect("a valid template");
    bar.set_style(style);
    Some(bar)
}

/// The run directory's interval files and the live output, fed one interval at a time.
struct RunFiles {
    hlog: HlogWriter<std::io::BufWriter<fs::File>>,
    csv: IntervalsCsv,
    op_names: Vec<String>,
    /// Each op type's share; those without one are left out of the live header.
    op_weights: Vec<f64>,
    has_warmup: bool,
    warmup_ns: u64,
    /// Judges the windows after the warmup, when the run has an SLA.
    sla: Option<SlaJudge>,
    error: Option<anyhow::Error>,
    header_printed: bool,
    /// A progress bar under the live lines, when standard output is a terminal.
    progress_bar: Option<indicatif::ProgressBar>,
    /// Every interval's (start, length) in ns, as histograms.hlog has them: the time base
    /// of pauses.hlog.
    spans: Vec<(u64, u64)>,
}

impl RunFiles {
    fn create(
        out: &Path,
        start: SystemTime,
        op_names: &[String],
        warmup_s: f64,
        planned: Option<Duration>,
        sla: Option<Sla>,
    ) -> anyhow::Result<Self> {
        let hlog_path = out.join("histograms.hlog");
        let hlog = HlogWriter::create(&hlog_path, start)
            .with_context(|| format!("creating {}", hlog_path.display()))?;
        let csv = IntervalsCsv::create(&out.join("intervals.csv"))?;
        Ok(RunFiles {
            hlog,
            csv,
            op_names: op_names.to_vec(),
            op_weights: vec![1.0; op_names.len()],
            has_warmup: warmup_s > 0.0,
            warmup_ns: (warmup_s * 1e9) as u64,
            sla: sla.map(|sla| SlaJudge {
                windows: WindowAccumulator::new(op_names.to_vec(), sla.window.as_nanos() as u64),
                verdict: RunVerdict::new(&sla),
                sla,
                measured_ns: planned
                    .map(|p| (p.as_nanos() as u64).saturating_sub((warmup_s * 1e9) as u64)),
                last: None,
                client_decided: 0,
            }),
            error: None,
            header_printed: false,
            progress_bar: progress_bar(planned),
            spans: Vec::new(),
        })
    }

    /// A line of live output, above the progress bar when there is one.
    fn say(&self, line: String) {
        match &self.progress_bar {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
    }

    /// Failing windows so far that the client's own wait decided. Call after the last window
    /// is judged ([`RunFiles::finish`] judges it), or before, for those so far.
    fn client_decided_windows(&mut self) -> u64 {
        self.judge_last();
        self.sla.as_ref().map_or(0, |j| j.client_decided)
    }

    /// Judges the last (partial) window, if not yet done.
    fn judge_last(&mut self) {
        if let Some(mut judge) = self.sla.take() {
            let open = std::mem::replace(&mut judge.windows, WindowAccumulator::new(Vec::new(), 1))
                .finish();
            if let Some(window) = judge.last.take().or(open) {
                self.judge(&mut judge, &window);
            }
            self.sla = Some(judge);
        }
    }

    /// Judges the last (partial) window, closes the files and returns the SLA verdict.
    fn finish(mut self) -> anyhow::Result<Option<SlaSummary>> {
        self.judge_last();
        if let Some(bar) = &self.progress_bar {
            bar.finish_and_clear();
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        self.csv.flush()?;
        Ok(self.sla.map(|judge| SlaSummary {
            spec: judge.sla.to_string(),
            window_s: judge.sla.window.as_secs_f64(),
            verdict: judge.verdict,
        }))
    }

    /// Adds an interval's measured statistics to the SLA's windows, judging each window
    /// it completes.
    fn judge_interval(&mut self, interval: &Interval) {
        let Some(mut judge) = self.sla.take() else {
            return;
        };
        let end_ns = interval.start_ns + interval.length_ns;
        if end_ns > self.warmup_ns {
            let measured = || {
                interval
                    .ops
                    .iter()
                    .map(|phases| &phases[Phase::Measure.index()])
            };
            let start = interval.start_ns.saturating_sub(self.warmup_ns);
            let length = end_ns - self.warmup_ns.max(interval.start_ns);
            match judge.measured_ns {
                // After the measured part: the answers to its last requests, which belong to
                // the last window (held back until the run ends), not to a window of their
                // own.
                Some(measured_ns) if start >= measured_ns => match &mut judge.last {
                    Some(last) => {
                        for ((_, into), from) in last.ops.iter_mut().zip(measured()) {
                            into.add(from);
                        }
                    }
                    None => {
                        // The last window is a partial one, still open: add without time.
                        let inside = measured_ns.saturating_sub(1);
                        if let Some(window) = judge.windows.push(inside, 0, measured()) {
                            self.judge(&mut judge, &window);
                        }
                    }
                },
                measured_ns => {
                    if let Some(window) = judge.windows.push(start, length, measured()) {
                        let is_last =
                            measured_ns.is_some_and(|m| window.start_ns + window.length_ns >= m);
                        if is_last {
                            judge.last = Some(window);
                        } else {
                            self.judge(&mut judge, &window);
                        }
                    }
                }
            }
        }
        self.sla = Some(judge);
    }

    fn judge(&mut self, judge: &mut SlaJudge, window: &WindowStats) {
        let verdict = judge_window(&judge.sla, window);
        judge.verdict.add(&verdict);
        if !verdict.pass {
            let by_client = crate::sla::validity::client_decided(&judge.sla, window, &verdict);
            judge.client_decided += u64::from(by_client);
            self.say(format!(
                "  SLA window {} ({:.0}-{:.0} s after warmup) FAILED: {}{}",
                window.index + 1,
                window.start_ns as f64 / 1e9,
                (window.start_ns + window.length_ns) as f64 / 1e9,
                verdict.failures(),
                if by_client {
                    " — the client's own wait before sending decided it"
                } else {
                    ""
                }
            ));
        }
        if self.error.is_none() {
            if let Err(e) = self.csv.window_row(self.warmup_ns, window, &verdict) {
                self.error = Some(e);
            }
        }
    }

    fn write(&mut self, interval: &Interval) -> anyhow::Result<()> {
        let offset = Duration::from_nanos(interval.start_ns);
        let length = Duration::from_nanos(interval.length_ns);
        for (i, name) in self.op_names.iter().enumerate() {
            for phase in Phase::ALL {
                let stats = &interval.ops[i][phase.index()];
                if stats.total() == 0 {
                    continue;
                }
                let prefix = if phase == Phase::Warmup {
                    "warmup."
                } else {
                    ""
                };
                self.hlog.write_interval(
                    Some(&format!("{prefix}{name}.rt")),
                    offset,
                    length,
                    &stats.response_ns,
                )?;
                self.hlog.write_interval(
                    Some(&format!("{prefix}{name}.st")),
                    offset,
                    length,
                    &stats.service_ns,
                )?;
                self.csv.row(interval, phase, name, stats)?;
            }
        }
        if let Some(h) = &interval.hiccups {
            self.hlog
                .write_interval(Some("client.hiccup"), offset, length, h)?;
        }
        self.csv.flush()?;
        Ok(())
    }

    fn print(&mut self, interval: &Interval) {
        if !self.header_printed {
            self.header_printed = true;
            let ops: Vec<String> = self
                .op_names
                .iter()
                .zip(&self.op_weights)
                .filter(|(_, w)| **w > 0.0)
                .map(|(n, _)| format!("{n}: rate p50 p99 p99.9 max"))
                .collect();
            self.say(format!(
                "{:>8} {:>9} {:>7} {:>8} | {}   (ms)",
                "time",
                "ops/s",
                "errors",
                "backlog",
                ops.join(" | ")
            ));
        }
        let seconds = interval.length_ns as f64 / 1e9;
        let mut total = 0;
        let mut errors = 0;
        let mut parts = Vec::new();
        let mut warmup = false;
        for (i, name) in self.op_names.iter().enumerate() {
            // Both phases' answers in one line; a copy only in the interval where they meet.
            let (m, w) = (
                &interval.ops[i][Phase::Measure.index()],
                &interval.ops[i][Phase::Warmup.index()],
            );
            warmup |= w.total() > 0;
            let merged;
            let stats = match (m.total(), w.total()) {
                (_, 0) => m,
                (0, _) => w,
                _ => {
                    let mut both = m.clone();
                    both.add(w);
                    merged = both;
                    &merged
                }
            };
            total += stats.total();
            errors += stats.error_count();
            if stats.total() == 0 {
                continue;
            }
            let l = Latency::of(&stats.response_ns);
            parts.push(format!(
                "{name}: {:.0} {:.2} {:.2} {:.2} {:.2}",
                stats.total() as f64 / seconds,
                l.p50_ms,
                l.p99_ms,
                l.p999_ms,
                l.max_ms
            ));
        }
        let phase = if warmup && self.has_warmup {
            " warmup"
        } else {
            ""
        };
        let end_s = (interval.start_ns + interval.length_ns) as f64 / 1e9;
        if parts.is_empty() {
            parts.push("no answers in this interval".to_string());
        }
        self.say(format!(
            "{end_s:>7.1}s {:>9.0} {:>7} {:>8} | {}{phase}",
            total as f64 / seconds,
            errors,
            interval.backlog,
            parts.join(" | ")
        ));
        if let Some(bar) = &self.progress_bar {
            bar.set_position(end_s as u64);
        }
    }
}

impl IntervalSink for RunFiles {
    fn interval(&mut self, interval: &Interval) {
        self.spans.push((interval.start_ns, interval.length_ns));
        self.print(interval);
        if self.error.is_none() {
            if let Err(e) = self.write(interval) {
                eprintln!("Error: {e:#}; the run goes on, but its files are incomplete");
                self.error = Some(e);
            }
        }
        self.judge_interval(interval);
    }
}

/// The SLA of a run and what it has judged so far.
struct SlaJudge {
    sla: Sla,
    windows: WindowAccumulator,
    verdict: RunVerdict,
    /// Length of the measured part, when the run has a duration.
    measured_ns: Option<u64>,
    /// The window that ends the measured part, held until the answers that arrive after the
    /// end (to requests intended before it) are in.
    last: Option<WindowStats>,
    /// Failing windows the client's own wait decided (see [`crate::sla::validity`]).
    client_decided: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn run_args(args: &[&str]) -> RunArgs {
        let mut argv = vec!["headroom", "run"];
        argv.extend_from_slice(args);
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Run(args) => *args,
            _ => unreachable!("a run command line"),
        }
    }

    #[test]
    fn during_goes_into_the_configuration_and_must_fit_in_the_run_with_its_warmup() {
        let args = run_args(&[
            "documents",
            "--duration",
            "25s",
            "--warmup",
            "10s",
            "--during",
            "compact@30s,flush@3s",
            "--keyspace",
            "docs",
        ]);
        let config = RunConfig::from_args(&args)
            .unwrap()
            .with_maintenance(&args.maintenance)
            .unwrap();
        let m = config.maintenance.as_ref().unwrap();
        assert_eq!(m.keyspace, "docs");
        assert_eq!(m.timeout_s, 600.0);
        let due: Vec<f64> = m.plan.0.iter().map(|p| p.at_s).collect();
        assert_eq!(due, [3.0, 30.0]);
        assert!((config.workload.read_ratio - 0.05).abs() < 1e-12);
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(json["maintenance"]["plan"][1]["operation"], "compact");

        // Without the warmup the run lasts 25 s: compact@30s would never start.
        let args = run_args(&["documents", "--duration", "25s", "--during", "compact@30s"]);
        let err = RunConfig::from_args(&args)
            .unwrap()
            .with_maintenance(&args.maintenance)
            .unwrap_err();
        assert!(err.to_string().contains("compact@30s"), "{err}");
        // --jmx alone means nothing.
        assert!(crate::cli::Cli::try_parse_from([
            "headroom", "run", "keyvalue", "--jmx", "h:7199"
        ])
        .is_err());
        // No --during: nothing stored, and the other built-ins keep reading nothing.
        let args = run_args(&["keyvalue"]);
        let config = RunConfig::from_args(&args)
            .unwrap()
            .with_maintenance(&args.maintenance)
            .unwrap();
        assert!(config.maintenance.is_none() && config.workload.read_ratio == 0.0);
        assert!(serde_json::to_value(&config)
            .unwrap()
            .get("maintenance")
            .is_none());
    }

    #[test]
    fn server_stats_every_goes_into_the_configuration_and_is_at_least_a_second() {
        let args = run_args(&["keyvalue", "--server-stats-every", "10s"]);
        let config = RunConfig::from_args(&args).unwrap();
        assert_eq!(config.server_stats_every_s, Some(10.0));
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(json["server_stats_every_s"], 10.0);
        let args = run_args(&["keyvalue", "--server-stats-every", "500ms"]);
        let err = RunConfig::from_args(&args).unwrap_err().to_string();
        assert!(err.contains("at least 1s"), "{err}");
        assert!(crate::cli::Cli::try_parse_from([
            "headroom",
            "run",
            "keyvalue",
            "--server-stats-every",
            "often"
        ])
        .is_err());
        // Without the flag nothing is stored.
        let config = RunConfig::from_args(&run_args(&["keyvalue"])).unwrap();
        assert!(serde_json::to_value(&config)
            .unwrap()
            .get("server_stats_every_s")
            .is_none());
    }

    #[test]
    fn the_exit_code_says_pass_fail_or_no_verdict() {
        let text =
            std::fs::read_to_string(crate::report::load::tests::run_fixture().join("summary.json"))
                .unwrap();
        let mut summary: RunSummary = serde_json::from_str(&text).unwrap();
        let code = |s: &RunSummary| format!("{:?}", exit_code_of(s));
        assert!(summary.sla.is_some(), "the fixture has an SLA");
        summary.sla.as_mut().unwrap().verdict.pass = true;
        summary.validity = None;
        assert_eq!(code(&summary), format!("{:?}", ExitCode::SUCCESS));
        summary.sla.as_mut().unwrap().verdict.pass = false;
        assert_eq!(
            code(&summary),
            format!("{:?}", ExitCode::from(EXIT_SLA_FAILED))
        );
        let figures = ClientFigures {
            threads: 1,
            cpu_share_of_threads: 1.0,
            wait_p99_ms: 900.0,
            wait_p999_ms: 900.0,
            wait_max_ms: 900.0,
            lag_limit_ms: 10.0,
            hiccup_p999_ms: 0.0,
            hiccup_max_ms: 0.0,
            max_backlog: 0,
            unsent: 10.0,
            unsent_held: false,
            limit_waits: 0,
            late_sends: 0,
            measured_requests: 100,
            client_decided_windows: 0,
        };
        summary.validity = Some(Validity::decide(figures, true));
        assert_eq!(
            code(&summary),
            format!("{:?}", ExitCode::from(EXIT_CLIENT_BOUND))
        );
        summary.stop = StopReason::Interrupted;
        assert_eq!(code(&summary), format!("{:?}", ExitCode::from(130)));
    }

    #[test]
    fn run_directories_are_named_after_the_workload_file_stem() {
        assert_eq!(out_dir_label("keyvalue"), "keyvalue");
        assert_eq!(out_dir_label("workloads/time series.yaml"), "time-series");
        let dir = default_out_dir("../x/kv.yml");
        assert_eq!(dir.parent(), Some(Path::new("runs")));
        assert!(dir.to_string_lossy().ends_with("-kv"), "{}", dir.display());
    }
}
