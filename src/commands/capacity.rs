//! `headroom capacity`: the load-carrying-capacity search against a real cluster. The search
//! itself (which rate next, what passed, the table) is [`crate::capacity`]; this file runs
//! each trial as a full `run` in its own directory, makes the data fresh when asked, and
//! keeps the search's directory consistent after every trial and on Ctrl-C.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::run::{self, Executed, RunConfig, SlaConfig, StopSignal};
use crate::capacity::{
    self, ProbeRecord, RatePlan, SearchSettings, Status, Store, TermValue, TrialRecord, TrialRunner,
};
use crate::cli::{CapacityArgs, Fresh};
use crate::client::{self, ClientConfig};
use crate::cluster::{self, LocalCluster, StartOptions};
use crate::compare::matrix::MATRIX_FILE;
use crate::engine::{LoadMode, StopReason};
use crate::metrics::server_pauses::PauseSource;
use crate::report::summary::RunSummary;
use crate::sla::{Sla, Value};
use crate::workload::builtin::WorkloadError;

/// Everything that decides what a search does, stored as search.json so that `--resume`
/// continues with the same settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchConfig {
    /// Each trial's run configuration; the mode, warmup and duration are set per trial.
    pub run: RunConfig,
    /// The SLA every window must meet.
    pub sla: SlaConfig,
    /// `--rates` as given.
    pub rates: String,
    /// `--resolution`, as a fraction.
    pub resolution: f64,
    /// Runs per attempted rate.
    pub repeats: u32,
    /// Measured seconds per trial.
    pub duration_s: f64,
    /// Warmup seconds per trial.
    pub warmup_s: f64,
    /// In-flight requests of the closed-loop probe.
    pub probe_concurrency: usize,
    /// Measured seconds of the probe.
    pub probe_duration_s: f64,
    /// How each trial begins.
    pub fresh: Fresh,
    /// The local cluster to restart, for `--fresh restart`; otherwise the one given with
    /// `--cluster-dir`, whose server pauses the trials record when they load it.
    pub cluster_dir: Option<PathBuf>,
    /// The search's name in reports and comparisons (`--label`, or a matrix's configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// With `--rates auto`: climb the ladder by fractions of this rate instead of the probe's
    /// (a matrix gives every configuration the first one's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ladder_base_per_s: Option<f64>,
    /// Nodes of the tested cluster: a matrix's local cluster, or `--nodes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    /// The local cluster tested, described, when headroom started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
}

impl SearchConfig {
    /// Resolves and checks the flags of `headroom capacity`.
    pub fn from_args(args: &CapacityArgs) -> anyhow::Result<SearchConfig> {
        let resolution = parse_fraction("--resolution", &args.resolution)?;
        let mut workload = args.workload.clone();
        workload.op_mix = args.ops.clone().map(|m| m.0);
        let mut run = RunConfig::new(
            &workload,
            &args.client,
            // The rate is set per trial (and the probe is closed-loop).
            LoadMode::Open {
                rate_per_s: 1.0,
                arrivals: args.client.arrivals,
                max_in_flight: args.client.max_in_flight,
            },
            args.warmup,
            Some(args.duration),
            None,
        )?;
        // Trials are many: Cassandra's histograms over CQL only, no nodetool JVM per trial.
        run.nodetool_figures = false;
        let sla = run::sla_config(Some(&args.sla), args.window, &run)?.expect("an SLA was given");
        if args.duration.as_nanos() < Duration::from_secs_f64(sla.window_s).as_nanos() {
            return Err(WorkloadError::Invalid(format!(
                "--duration {} is shorter than one SLA window ({} s): no window could be judged",
                humantime::format_duration(args.duration),
                sla.window_s
            ))
            .into());
        }
        if args.repeats == 0 {
            return Err(WorkloadError::Invalid("--repeats must be at least 1".into()).into());
        }
        if args.probe_concurrency == 0 {
            return Err(
                WorkloadError::Invalid("--probe-concurrency must be at least 1".into()).into(),
            );
        }
        if args.probe_duration < Duration::from_secs(1) {
            return Err(WorkloadError::Invalid(format!(
                "--probe-duration {} is too short to measure a throughput: give at least 1s",
                humantime::format_duration(args.probe_duration)
            ))
            .into());
        }
        RatePlan::parse(&args.rates, resolution).map_err(WorkloadError::Invalid)?;
        if args.fresh == Fresh::Restart && !args.client.hosts.is_empty() {
            return Err(WorkloadError::Invalid(
                "--fresh restart restarts a local cluster headroom started (see --cluster-dir); \
                 against the cluster at --hosts use --fresh truncate or --fresh none"
                    .into(),
            )
            .into());
        }
        Ok(SearchConfig {
            run,
            sla,
            rates: args.rates.clone(),
            resolution,
            repeats: args.repeats,
            duration_s: args.duration.as_secs_f64(),
            warmup_s: args.warmup.as_secs_f64(),
            probe_concurrency: args.probe_concurrency,
            probe_duration_s: args.probe_duration.as_secs_f64(),
            fresh: args.fresh,
            cluster_dir: match args.fresh {
                Fresh::Restart => Some(
                    args.cluster_dir
                        .clone()
                        .unwrap_or_else(cluster::default_dir),
                ),
                _ => args.cluster_dir.clone(),
            },
            label: args.label.clone(),
            ladder_base_per_s: None,
            nodes: args.cost.nodes,
            cluster: None,
        })
    }

    /// The search's plan.
    pub fn settings(&self) -> SearchSettings {
        SearchSettings {
            plan: RatePlan::parse(&self.rates, self.resolution)
                .expect("checked when the search was configured"),
            repeats: self.repeats,
            ladder_base_per_s: self.ladder_base_per_s,
        }
    }

    /// A rough length of the whole search, for the user to plan by.
    pub fn estimate(&self) -> Duration {
        let settings = self.settings();
        let trials = capacity::estimate_trials(&settings) as f64;
        // Connecting, schema checks and writing files: a few seconds per trial.
        let per_trial = self.warmup_s + self.duration_s + 3.0 + self.fresh_cost_s();
        let probe = match settings.plan {
            RatePlan::Auto { .. } => self.probe_duration_s * 1.25 + 3.0,
            RatePlan::Ladder(_) => 0.0,
        };
        Duration::from_secs_f64(trials * per_trial + probe)
    }

    fn fresh_cost_s(&self) -> f64 {
        let populate = self.run.workload.populate as f64 / 5000.0;
        match self.fresh {
            Fresh::Restart => 15.0 + populate,
            Fresh::Truncate => 2.0 + populate,
            Fresh::None => 0.0,
        }
    }
}

/// Reads a fraction written as `2%` or `0.02`.
pub(crate) fn parse_fraction(flag: &str, text: &str) -> Result<f64, WorkloadError> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match value {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(WorkloadError::Invalid(format!(
            "{flag} '{text}' is not valid: give a percentage such as 2% (above 0, below 100%)"
        ))),
    }
}

/// Runs `headroom capacity`.
pub fn run(args: CapacityArgs) -> anyhow::Result<ExitCode> {
    let credentials = run::credentials(&args.client);
    if let Some(dir) = args
        .resume
        .as_deref()
        .filter(|d| d.join(MATRIX_FILE).exists())
    {
        return super::matrix::resume(dir, credentials);
    }
    if !args.matrix.is_empty() {
        return super::matrix::run(&args, credentials);
    }
    let (config, store) = match &args.resume {
        Some(dir) => {
            // The directory given is the user's input: one that holds no search to resume
            // is a usage error.
            let (store, stored) = Store::resume(dir)
                .map_err(|e| crate::usage::UsageError::new(format!("--resume: {e:#}")))?;
            let config: SearchConfig = serde_json::from_value(stored).map_err(|e| {
                crate::usage::UsageError::new(format!(
                    "--resume: the search's settings in {} cannot be read: {}",
                    dir.display(),
                    crate::usage::cut(&e.to_string(), 200)
                ))
            })?;
            println!(
                "Resuming the search in {}: {} trials done.",
                dir.display(),
                store.records().len()
            );
            (config, store)
        }
        None => {
            let config = SearchConfig::from_args(&args)?;
            let out = args.out.clone().unwrap_or_else(|| {
                run::default_out_dir(&format!("capacity-{}", config.run.workload.name))
            });
            crate::output_dir::claim(&out, args.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
            let store = Store::create(&out, serde_json::to_value(&config)?)?;
            (config, store)
        }
    };
    let status = search(&config, store, credentials, None)?;
    Ok(match status.0 {
        Status::Interrupted => ExitCode::from(130),
        Status::Invalid => ExitCode::from(run::EXIT_CLIENT_BOUND),
        _ => ExitCode::SUCCESS,
    })
}

/// Runs a whole search, printing the table as it grows; returns how it ended and its
/// outcome. `cluster` is the local cluster under test when the caller started it (a
/// matrix, the quickstart): `--fresh restart` restarts it.
pub fn search(
    config: &SearchConfig,
    mut store: Store,
    credentials: Option<(String, String)>,
    cluster: Option<&mut LocalCluster>,
) -> anyhow::Result<(Status, capacity::Outcome)> {
    let settings = config.settings();
    let dir = store.dir().to_path_buf();
    println!(
        "Capacity search of {} under SLA {} ({}), {} repeat(s) per rate, trials of {} s + {} s warmup.",
        config.run.workload.name,
        config.sla.terms,
        describe_plan(&settings.plan),
        config.repeats,
        config.duration_s,
        config.warmup_s
    );
    let remaining = config.estimate().saturating_sub(Duration::from_secs_f64(
        store.records().len() as f64 * (config.warmup_s + config.duration_s + 3.0),
    ));
    println!(
        "This takes about {} minutes. Results: {}",
        (remaining.as_secs_f64() / 60.0).ceil().max(1.0),
        dir.display()
    );

    let runtime = run::runtime(config.run.threads)?;
    let stop = StopSignal::new();
    runtime.spawn(stop.clone().on_ctrl_c_or_term());
    let mut opened;
    let cluster = match (config.fresh, cluster) {
        // A cluster the caller started (the quickstart, a matrix) is the one measured,
        // whatever --fresh says: its nodes' logs tell the server's side.
        (_, Some(c)) => Some(c),
        (Fresh::Restart, None) => {
            let cluster_dir = config
                .cluster_dir
                .clone()
                .unwrap_or_else(cluster::default_dir);
            opened = LocalCluster::open(&cluster_dir)?;
            if opened.running_pids().is_empty() {
                bail!(
                    "--fresh restart needs the local cluster in {} running; start it with `headroom cluster start --dir {}`",
                    cluster_dir.display(),
                    cluster_dir.display()
                );
            }
            Some(&mut opened)
        }
        _ => None,
    };
    // The trials record the pauses of the cluster this search restarts, else of the local
    // cluster headroom started when the trials load it.
    let pauses = match &cluster {
        Some(c) => PauseSource::of_cluster(c),
        None => PauseSource::Discover(
            config
                .cluster_dir
                .clone()
                .unwrap_or_else(cluster::default_dir),
        ),
    };
    let mut runner = LiveRunner {
        config,
        dir: dir.clone(),
        runtime: &runtime,
        stop: stop.clone(),
        credentials,
        // With the data kept, an earlier part of this search populated it already.
        populated: config.fresh == Fresh::None && !store.records().is_empty(),
        cluster,
        pauses,
    };
    let terms = term_names(&config.sla)?;
    let mut printed = false;
    let status = capacity::drive(&settings, &mut runner, &mut store, |outcome| {
        println!("\n{}", capacity::table::render(outcome, &terms));
        printed = true;
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    let status = status?;
    let outcome = capacity::outcome(store.records(), config.repeats);
    if !printed {
        println!("\n{}", capacity::table::render(&outcome, &terms));
    }
    run::write_report(&dir);
    match status {
        Status::Interrupted => println!(
            "\nInterrupted. Everything finished is in {}; continue with `headroom capacity --resume {}`.",
            dir.display(),
            dir.display()
        ),
        Status::Invalid => println!(
            "\nNo capacity: a trial was client-bound (see above). Files: {}",
            dir.display()
        ),
        _ => println!("\nFiles: {} (capacity.json, capacity.jsonl, one run directory per trial)", dir.display()),
    }
    Ok((status, outcome))
}

fn describe_plan(plan: &RatePlan) -> String {
    match plan {
        RatePlan::Auto { resolution } => format!(
            "rates found automatically to within {:.0}%",
            resolution * 100.0
        ),
        RatePlan::Ladder(rates) => format!("{} rates", rates.len()),
    }
}

/// The canonical names of the SLA's terms, as the trial records carry them.
fn term_names(sla: &SlaConfig) -> anyhow::Result<Vec<String>> {
    let sla = Sla::parse(&sla.terms, Duration::from_secs_f64(sla.window_s))?;
    Ok(sla.terms.iter().map(|t| t.name()).collect())
}

/// Runs trials as real runs against the cluster.
struct LiveRunner<'a> {
    config: &'a SearchConfig,
    dir: PathBuf,
    runtime: &'a tokio::runtime::Runtime,
    stop: Arc<StopSignal>,
    credentials: Option<(String, String)>,
    /// Whether the workload's rows are in the cluster already.
    populated: bool,
    cluster: Option<&'a mut LocalCluster>,
    /// Whose server pauses each trial records.
    pauses: PauseSource,
}

impl LiveRunner<'_> {
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
                println!("Restarting the local cluster with no data...");
                let options = StartOptions {
                    verbose: false,
                    ..StartOptions::default()
                };
                cluster.restart_fresh(Duration::from_secs(60), &options)?;
                Ok(true)
            }
        }
    }

    /// One run in `out`; `None` when it was interrupted.
    fn execute(&mut self, config: &RunConfig, out: &Path) -> anyhow::Result<Option<RunSummary>> {
        if out.exists() {
            // Left by an interrupted attempt at this same trial.
            fs::remove_dir_all(out).with_context(|| format!("removing {}", out.display()))?;
        }
        let populate = self.prepare()?;
        if self.stop.is_set() {
            return Ok(None);
        }
        let executed = self.runtime.block_on(run::execute_with(
            config,
            out,
            self.credentials.clone(),
            &self.stop,
            populate,
            None,
            &self.pauses,
        ))?;
        match executed {
            // Trials always run both phases; a load-only run cannot happen here.
            Executed::StoppedDuringPopulate | Executed::LoadedOnly => Ok(None),
            Executed::Finished(summary) if summary.stop == StopReason::Interrupted => Ok(None),
            Executed::Finished(summary) => {
                self.populated = true;
                Ok(Some(*summary))
            }
        }
    }

    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.dir)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

impl TrialRunner for LiveRunner<'_> {
    fn probe(&mut self) -> anyhow::Result<Option<ProbeRecord>> {
        let mut config = self.config.run.clone();
        config.mode = LoadMode::Closed {
            concurrency: self.config.probe_concurrency,
        };
        config.warmup_s = self.config.probe_duration_s / 4.0;
        config.duration_s = Some(self.config.probe_duration_s);
        config.sla = None;
        println!(
            "\n== Probe: the highest throughput with {} requests in flight ==",
            self.config.probe_concurrency
        );
        let out = self.dir.join("probe");
        let started = Instant::now();
        let Some(summary) = self.execute(&config, &out)? else {
            return Ok(None);
        };
        Ok(Some(ProbeRecord {
            concurrency: self.config.probe_concurrency,
            achieved_per_s: summary.achieved_rate_per_s,
            seconds: started.elapsed().as_secs_f64(),
            dir: self.relative(&out),
        }))
    }

    fn trial(&mut self, rate_per_s: f64, repeat: u32) -> anyhow::Result<Option<TrialRecord>> {
        let mut config = self.config.run.clone();
        let LoadMode::Open {
            arrivals,
            max_in_flight,
            ..
        } = self.config.run.mode
        else {
            bail!("a capacity search's runs are open-loop");
        };
        config.mode = LoadMode::Open {
            rate_per_s,
            arrivals,
            max_in_flight,
        };
        config.warmup_s = self.config.warmup_s;
        config.duration_s = Some(self.config.duration_s);
        config.sla = Some(self.config.sla.clone());
        println!(
            "\n== Trial: {rate_per_s:.0}/s, repeat {repeat} of {} ==",
            self.config.repeats
        );
        let out = self
            .dir
            .join("trials")
            .join(format!("rate-{rate_per_s:.0}-repeat-{repeat}"));
        let started = Instant::now();
        let Some(summary) = self.execute(&config, &out)? else {
            return Ok(None);
        };
        Ok(Some(trial_record(
            &summary,
            rate_per_s,
            repeat,
            self.relative(&out),
            started.elapsed(),
        )))
    }
}

/// A trial's record, from its run's summary.
fn trial_record(
    summary: &RunSummary,
    rate_per_s: f64,
    repeat: u32,
    dir: String,
    wall: Duration,
) -> TrialRecord {
    let requests: u64 = summary.ops.iter().map(|o| o.requests).sum();
    let errors: u64 = summary.ops.iter().map(|o| o.requests - o.ok).sum();
    let verdict = summary.sla.as_ref().map(|s| &s.verdict);
    let sla_pass = verdict.is_some_and(|v| v.pass);
    let terms = verdict
        .map(|v| {
            v.worst
                .iter()
                .map(|w| {
                    let (value, unit) = match w.value {
                        Some(Value::LatencyNs(ns)) => (ns as f64 / 1e6, "ms"),
                        Some(Value::Fraction(f)) => (f * 100.0, "%"),
                        None => (0.0, "ms"),
                    };
                    TermValue {
                        term: w.term.clone(),
                        value,
                        unit: unit.to_string(),
                        pass: w.failing_windows == 0,
                        failed_percent: if unit == "ms" {
                            w.failed_share * 100.0
                        } else {
                            0.0
                        },
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let completed = summary.stop == StopReason::Completed;
    let (pass, mut reason) =
        capacity::trial_passes(rate_per_s, summary.achieved_rate_per_s, sla_pass, completed);
    // A client-bound trial is neither a pass nor a fail: it has no verdict.
    let invalid = summary
        .validity
        .as_ref()
        .filter(|v| !v.is_valid())
        .map(|v| v.reasons.clone());
    let pass = pass && invalid.is_none();
    if let Some(v) = verdict {
        if !v.pass {
            let failed: Vec<String> = v
                .worst
                .iter()
                .filter(|w| w.failing_windows > 0)
                .map(|w| {
                    format!(
                        "{} failed in {} of {} windows",
                        w.term, w.failing_windows, v.windows
                    )
                })
                .collect();
            if !failed.is_empty() {
                reason = Some(failed.join("; "));
            }
        }
    }
    TrialRecord {
        rate_per_s,
        repeat,
        achieved_per_s: summary.achieved_rate_per_s,
        requests,
        errors,
        sla_pass,
        terms,
        pass,
        reason: if invalid.is_some() { None } else { reason },
        invalid,
        dir,
        wall_s: wall.as_secs_f64(),
    }
}

/// Empties the workload's table (if it exists yet).
async fn truncate(config: &RunConfig, credentials: Option<(String, String)>) -> anyhow::Result<()> {
    let session = client::connect(&ClientConfig {
        hosts: config.hosts.clone(),
        request_timeout: Duration::from_secs(120),
        connections: 1,
        credentials,
    })
    .await?;
    let (keyspace, table) = (
        config.workload.keyspace.as_str(),
        crate::workload::AnyWorkload::table_of(&config.workload)?,
    );
    let exists = session
        .query_unpaged(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
            (keyspace, table.as_str()),
        )
        .await?
        .into_rows_result()?
        .rows_num()
        > 0;
    if !exists {
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
