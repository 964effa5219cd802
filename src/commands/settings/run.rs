//! `headroom run`'s flags into a run's settings, and the parts every command that runs load
//! shares: the workload's request, the client's threads and in-flight limit against the
//! open-file limit, `--during`'s plan, a fleet worker's share, and a `--config` file read
//! back. Every error here is the user's input, found before anything connects.

use std::path::Path;
use std::time::Duration;

use super::connection::{local_dc, tls_settings};
use crate::cli::{ClientArgs, ConnectionArgs, OpsArg, RunArgs, WorkloadArgs};
use crate::client;
use crate::engine::LoadMode;
use crate::maintenance::{MaintenanceConfig, PlanError};
use crate::results::config::{RunPhase, RunSettings};
use crate::run::policy::{effective_sender, run_threads};
use crate::run::template::TemplateLoad;
use crate::usage::{usage_error, UsageError};
use crate::workload::{
    compaction_map, replication_map, AnyWorkload, WorkloadConfig, WorkloadRequest,
};

/// The workload's flags as the workload formats take them.
pub fn workload_request(args: &WorkloadArgs) -> WorkloadRequest {
    WorkloadRequest {
        name: args.name.clone().unwrap_or_default(),
        p: args.p.clone(),
        property_files: args.property_files.clone(),
        ycsb_workload: args.ycsb_workload.clone(),
        op_mix: args.op_mix.clone(),
        read_ratio: args.read_ratio,
        delete_ratio: args.delete_ratio,
        populate: args.populate,
        keyspace: args.keyspace.clone(),
        compaction: args.compaction.clone(),
        ttl: args.ttl,
        vector: args.vector.request(),
    }
}

/// The contact point when no --hosts is given: the first local node.
pub const DEFAULT_HOST: &str = "127.0.0.1:9042";

/// The most client threads a run takes (the engine keeps per-worker counters for this many).
pub const MAX_THREADS: usize = crate::engine::schedule::MAX_WORKERS;

/// The most requests in flight a run takes: far more than any cluster answers at once.
const MAX_IN_FLIGHT: usize = 10_000_000;

/// Resolves and checks the flags of `headroom run`; every error here is the user's input.
pub fn run_settings(args: &RunArgs) -> anyhow::Result<RunSettings> {
    let client = &args.client;
    let mode = match (args.rate, args.concurrency) {
        (Some(rate), _) => LoadMode::Open {
            rate_per_s: rate,
            arrivals: client.arrivals(),
            max_in_flight: client.max_in_flight(),
        },
        // --arrivals and --max-in-flight without --rate are refused by the table of flag
        // combinations (cli/combinations.rs).
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
        (Some(_), Some(_)) => return Err(usage_error("give --duration or --ops N, not both")),
        (Some(d), _) => Some(d),
        (None, Some(_)) => None,
        (None, None) => Some(Duration::from_secs(60)),
    };
    if duration.is_some_and(|d| d.is_zero()) {
        return Err(usage_error(
            "--duration 0s measures nothing: give a length above 0, e.g. 60s",
        ));
    }
    if let Some(d) = duration.filter(|d| *d < client.interval) {
        return Err(usage_error(format!(
            "--duration {} is shorter than one --interval ({}): no interval of it would be \
             logged or measured; give at least {}",
            humantime::format_duration(d),
            humantime::format_duration(client.interval),
            humantime::format_duration(client.interval)
        )));
    }
    if ops == Some(0) {
        return Err(usage_error(
            "--ops 0 measures nothing: give at least 1 request",
        ));
    }
    let mut config = settings(
        &workload,
        &args.connection,
        client,
        mode,
        args.warmup,
        duration,
        ops,
    )?;
    config.phase = args.phase;
    if args.validate {
        check_validation(&config)?;
        config.validate = true;
    }
    if let Some(every) = args.server_stats_every {
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

/// Refuses `--validate` where it cannot check, in one line that says why.
fn check_validation(config: &RunSettings) -> Result<(), UsageError> {
    if let LoadMode::Closed { .. } = config.mode {
        return Err(UsageError::new(
            "--validate needs an open loop (--rate): in a closed loop the checking's cost per \
             request would slow the load it measures",
        ));
    }
    if config.phase == RunPhase::Load {
        return Err(UsageError::new(
            "--validate with --phase load: nothing is read back after a load alone; validate \
             a run with a measured part (--phase both or run)",
        ));
    }
    AnyWorkload::check_validation(&config.workload).map_err(UsageError::new)
}

/// Adds `--during` to a resolved configuration; the plan must fit in the run.
pub fn with_maintenance(
    mut settings: RunSettings,
    args: &crate::cli::MaintenanceArgs,
) -> Result<RunSettings, PlanError> {
    if let Some(plan) = &args.during {
        let maintenance = MaintenanceConfig {
            plan: plan.clone(),
            jmx: args.jmx.clone(),
            timeout_s: args.during_timeout.as_secs_f64(),
            keyspace: settings.workload.keyspace.clone(),
        };
        maintenance.check_length(settings.duration_s.map(|d| d + settings.warmup_s))?;
        settings.maintenance = Some(maintenance);
    }
    Ok(settings)
}

/// The flags that may come with `run --config` (the rest are the file's): where it runs and
/// writes, the credentials, and how it is watched (a fleet's worker is watched live too).
const WITH_CONFIG: [&str; 18] = [
    "--config",
    "--worker",
    "--start-at",
    "--phase",
    "--out",
    "-o",
    "--force",
    "--username",
    "--password",
    "--password-file",
    "--cluster-dir",
    "--label",
    "--metrics-listen",
    "--metrics-push",
    "--live",
    "--linger",
    "--help",
    "-h",
];

/// `run --config FILE|DIR`: the settings of a config.json, made this process's (its command
/// line, its version), with `--phase` when typed; refuses any flag that would decide
/// something the file decides.
pub fn from_config_file(path: &Path, phase: RunPhase) -> anyhow::Result<RunSettings> {
    let file = if path.is_dir() {
        path.join(crate::catalogue::CONFIG_JSON)
    } else {
        path.to_path_buf()
    };
    let args: Vec<String> = std::env::args().collect();
    let typed = typed_flags(&args);
    let others: Vec<&str> = typed
        .iter()
        .copied()
        .filter(|f| !WITH_CONFIG.contains(f))
        .collect();
    if !others.is_empty() {
        return Err(usage_error(format!(
            "--config takes the run's settings from {}: {} cannot come with it (only --worker, \
             --start-at, --phase, --out, --force, the credentials, --cluster-dir and the flags \
             that watch it live can)",
            file.display(),
            others.join(", ")
        )));
    }
    let mut settings: RunSettings = crate::results::read_json(&file).map_err(|e| {
        usage_error(format!(
            "--config {}: not a run's config.json ({e:#})",
            file.display()
        ))
    })?;
    settings.check_domain().map_err(|e| {
        usage_error(format!(
            "--config {}: {e}, which the flags would not take",
            file.display()
        ))
    })?;
    if typed.contains(&"--phase") {
        settings.phase = phase;
    }
    settings.headroom_version = env!("CARGO_PKG_VERSION").to_string();
    settings.command_line = crate::cli::redacted_command_line(args.iter().cloned());
    settings.worker = None;
    settings.fleet = None;
    Ok(settings)
}

/// The flags a command line names (`--name` or `--name=value`, and one-letter `-x`), after
/// the program and its subcommand.
fn typed_flags(args: &[String]) -> Vec<&str> {
    args.iter()
        .skip(2)
        .filter_map(|a| {
            if a.starts_with("--") && a.len() > 2 {
                Some(a.split('=').next().unwrap_or(a))
            } else if a.len() == 2 && a.starts_with('-') && a.as_bytes()[1].is_ascii_alphabetic() {
                Some(a.as_str())
            } else {
                None
            }
        })
        .collect()
}

/// `--worker K/N --start-at TIME`, checked against the run: `--during` would run once per
/// worker. (A closed loop's workers each keep their `--concurrency` in flight.)
pub fn with_worker(
    settings: &mut RunSettings,
    fleet: &crate::cli::FleetWorkerArgs,
) -> Result<(), UsageError> {
    let (Some((index, count)), Some(start_at)) = (fleet.worker, fleet.start_at) else {
        return Ok(());
    };
    if settings.phase != RunPhase::Load {
        crate::fleet::worker::check_not_past(start_at, std::time::SystemTime::now())
            .map_err(UsageError::new)?;
    }
    if settings.maintenance.is_some() {
        return Err(UsageError::new(
            "--worker with --during: every worker would run the operations; run them from one \
             process without --worker",
        ));
    }
    settings.worker = Some(crate::results::config::WorkerSlot::new(
        index, count, start_at,
    ));
    Ok(())
}

/// A run of `workload` against `connection`'s cluster, sent by `client` in `mode`, checked.
pub fn settings(
    workload_args: &WorkloadArgs,
    connection: &ConnectionArgs,
    client: &ClientArgs,
    mode: LoadMode,
    warmup: Duration,
    duration: Option<Duration>,
    ops: Option<u64>,
) -> anyhow::Result<RunSettings> {
    let shared = shared_settings(workload_args, connection, client, warmup, duration, ops)?;
    match mode {
        LoadMode::Open {
            rate_per_s,
            max_in_flight,
            ..
        } => {
            check_in_flight_limit(max_in_flight)?;
            if rate_per_s.is_nan() || rate_per_s <= 0.0 {
                return Err(usage_error("the rate must be above 0"));
            }
        }
        LoadMode::Closed { concurrency: 0 } => {
            return Err(usage_error("--concurrency must be at least 1"))
        }
        LoadMode::Closed { .. } => {}
    }
    let settings = shared.with_mode(mode);
    check_in_flight(&settings)?;
    check_open_files(&settings, run_threads(&settings))?;
    Ok(settings)
}

/// The settings every trial of a capacity search shares, checked: open-loop runs of
/// `workload` against `connection`'s cluster, sent by `client` with its arrivals and
/// in-flight limit, each trial at its own rate.
pub fn open_loop_template(
    workload_args: &WorkloadArgs,
    connection: &ConnectionArgs,
    client: &ClientArgs,
    warmup: Duration,
    duration: Option<Duration>,
) -> anyhow::Result<RunSettings<TemplateLoad>> {
    let shared = shared_settings(workload_args, connection, client, warmup, duration, None)?;
    let max_in_flight = client.max_in_flight();
    check_in_flight_limit(max_in_flight)?;
    let settings = shared.with_mode(TemplateLoad::Open {
        arrivals: client.arrivals(),
        max_in_flight,
    });
    // The trial at the highest rate may take every thread the settings allow.
    check_open_files(&settings, settings.threads.max(1))?;
    Ok(settings)
}

/// Refuses an open loop's `--max-in-flight` of 0 or more than one client holds.
fn check_in_flight_limit(max_in_flight: usize) -> Result<(), UsageError> {
    if max_in_flight == 0 {
        return Err(UsageError::new("--max-in-flight must be at least 1"));
    }
    if max_in_flight > MAX_IN_FLIGHT {
        return Err(UsageError::new(format!(
            "--max-in-flight {max_in_flight} is more than {MAX_IN_FLIGHT} requests in flight, \
             which one client cannot hold"
        )));
    }
    Ok(())
}

/// The settings of a run of `workload` against `connection`'s cluster, sent by `client`,
/// checked, but for its load.
fn shared_settings(
    workload_args: &WorkloadArgs,
    connection: &ConnectionArgs,
    client: &ClientArgs,
    warmup: Duration,
    duration: Option<Duration>,
    ops: Option<u64>,
) -> anyhow::Result<RunSettings<()>> {
    let args = workload_args;
    let name = args.name.clone().unwrap_or_default();
    let definition = crate::workload::any::resolve(&name, &workload_request(args))?;
    // -p N is --partitions (tlp-stress); -p KEY=VALUE is a YCSB property.
    let partitions = match args.p.iter().rev().find(|p| !p.contains('=')) {
        Some(n) => {
            crate::units::parse_count(n).map_err(|e| UsageError::new(format!("-p {n}: {e}")))?
        }
        None => args.partitions,
    };
    let mut workload = WorkloadConfig {
        name,
        definition,
        keyspace: args.keyspace.clone(),
        partitions,
        partition_generator: args.partition_generator,
        read_ratio: args.read_ratio.unwrap_or(match args.name.as_deref() {
            Some("documents") => crate::workload::builtin::documents::DEFAULT_READ_RATIO,
            Some(crate::workload::vector::NAME) => {
                crate::workload::vector::model::DEFAULT_READ_RATIO
            }
            _ => 0.0,
        }),
        delete_ratio: args.delete_ratio,
        populate: args.populate,
        replication: replication_map(&args.replication).map_err(UsageError::new)?,
        compaction: args
            .compaction
            .as_deref()
            .map(compaction_map)
            .transpose()
            .map_err(UsageError::new)?,
        ttl_s: args.ttl.map(|d| d.as_secs() as u32),
        consistency: args.consistency.to_ascii_uppercase(),
        drop: args.drop,
        seed: args.seed,
        rows_per_partition: args.rows_per_partition,
    };
    crate::workload::any::settle(&mut workload)?;
    workload.validate().map_err(UsageError::new)?;
    crate::workload::common::statements::parse_consistency(&workload.consistency)?;
    if client.send_resolution > client.interval {
        return Err(usage_error(format!(
            "--send-resolution {} is longer than an --interval ({}): requests would wait up \
             to that long to leave together, and every wait counts in their response time; \
             give at most {}",
            humantime::format_duration(client.send_resolution),
            humantime::format_duration(client.interval),
            humantime::format_duration(client.interval)
        )));
    }
    // The keyspace as settled: --keyspace, or the one a workload file names (checked here,
    // before anything connects, as the flag is).
    let keyspace = &workload.keyspace;
    if !crate::workload::common::schema::is_plain_name(keyspace) || keyspace.len() > 48 {
        let whose = if *keyspace == args.keyspace {
            "--keyspace".to_string()
        } else {
            format!("{}: keyspace:", workload.name)
        };
        return Err(usage_error(format!(
            "{whose} '{}' is not a CQL keyspace name: up to 48 letters, digits and \
             underscores",
            crate::usage::cut(keyspace, 60)
        )));
    }
    let threads = client.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(2, |n| n.get().min(MAX_THREADS))
    });
    let hosts = if connection.hosts.is_empty() {
        vec![DEFAULT_HOST.to_string()]
    } else {
        connection.hosts.clone()
    };
    let tls = tls_settings(connection)?;
    Ok(RunSettings {
        headroom_version: env!("CARGO_PKG_VERSION").to_string(),
        hosts: client::parse_hosts(&hosts).map_err(|e| UsageError::new(e.to_string()))?,
        local_dc: local_dc(connection)?,
        workload,
        mode: (),
        warmup_s: warmup.as_secs_f64(),
        duration_s: duration.map(|d| d.as_secs_f64()),
        ops,
        interval_s: client.interval.as_secs_f64(),
        threads,
        threads_from_rate: client.threads.is_none(),
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
        tls,
        worker: None,
        fleet: None,
        client_cpus: None,
        validate: false,
    })
}

/// Refuses connections the process could not open with `client_threads` client threads,
/// counting the contact points as the nodes (a ring of more is found when connecting);
/// raises the soft limit when the hard one allows them.
fn check_open_files<M>(settings: &RunSettings<M>, client_threads: usize) -> Result<(), UsageError> {
    let threads = match effective_sender(settings) {
        client::native::Sender::Driver => 0,
        _ => client_threads,
    };
    let needed = client::open_files::needed(threads, settings.connections, settings.hosts.len());
    client::open_files::make_room(needed).map_err(|(soft, hard)| {
        UsageError::new(format!(
            "--connections {} needs about {needed} open files ({threads} client thread(s) and \
             the driver, {} connection(s) each to each of {} node(s)), more than this process \
             may open ({soft}, at most {hard}: ulimit -n): give fewer --connections or \
             --threads",
            settings.connections,
            settings.connections,
            settings.hosts.len()
        ))
    })
}

/// Streams one CQL connection (protocol v4) carries at once.
const STREAMS_PER_CONNECTION: usize = 32_768;

/// A closed loop keeps all its `--concurrency` in flight at once, so the client's
/// connections must carry them: each client thread's share on its own connections to one
/// node (the replica the requests may all go to), or with the driver its session's. More
/// would fail on the client ("unable to allocate a stream id") and measure the client.
pub fn check_in_flight(settings: &RunSettings) -> Result<(), UsageError> {
    let LoadMode::Closed { concurrency } = settings.mode else {
        return Ok(());
    };
    if concurrency > MAX_IN_FLIGHT {
        return Err(UsageError::new(format!(
            "--concurrency {concurrency} is more than {MAX_IN_FLIGHT} requests in flight, \
             which one client cannot hold"
        )));
    }
    let (threads, per_thread_streams, how) = match effective_sender(settings) {
        client::native::Sender::Driver => (
            1,
            settings.connections * STREAMS_PER_CONNECTION,
            format!("the driver's {} connection(s)", settings.connections),
        ),
        _ => {
            let threads = run_threads(settings);
            (
                threads,
                settings.connections * STREAMS_PER_CONNECTION,
                format!(
                    "{threads} client thread(s) × {} connection(s)",
                    settings.connections
                ),
            )
        }
    };
    let per_thread = concurrency.div_ceil(threads);
    if per_thread > per_thread_streams {
        let needed = per_thread.div_ceil(STREAMS_PER_CONNECTION);
        return Err(UsageError::new(format!(
            "--concurrency {concurrency} is more than {how} to a node can carry ({} requests \
             at once, {STREAMS_PER_CONNECTION} per connection): give --connections {needed}, \
             or a lower --concurrency",
            threads * per_thread_streams
        )));
    }
    Ok(())
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
        let config = with_maintenance(run_settings(&args).unwrap(), &args.maintenance).unwrap();
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
        let err = with_maintenance(run_settings(&args).unwrap(), &args.maintenance).unwrap_err();
        assert!(err.to_string().contains("compact@30s"), "{err}");
        // --jmx alone means nothing: the table of flag combinations refuses it.
        let alone = <crate::cli::Cli as clap::CommandFactory>::command()
            .try_get_matches_from(["headroom", "run", "keyvalue", "--jmx", "h:7199"])
            .unwrap();
        let err = crate::cli::combinations::check(&alone).unwrap_err();
        assert!(
            err.to_string().starts_with("--jmx h:7199 needs --during"),
            "{err}"
        );
        // No --during: nothing stored, and the other built-ins keep reading nothing.
        let args = run_args(&["keyvalue"]);
        let config = with_maintenance(run_settings(&args).unwrap(), &args.maintenance).unwrap();
        assert!(config.maintenance.is_none() && config.workload.read_ratio == 0.0);
        assert!(serde_json::to_value(&config)
            .unwrap()
            .get("maintenance")
            .is_none());
    }

    #[test]
    fn server_stats_every_goes_into_the_configuration_and_is_at_least_a_second() {
        let args = run_args(&["keyvalue", "--server-stats-every", "10s"]);
        let config = run_settings(&args).unwrap();
        assert_eq!(config.server_stats_every_s, Some(10.0));
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(json["server_stats_every_s"], 10.0);
        // The range is the command line's: the sampler's shortest period is its low bound.
        for refused in ["500ms", "often"] {
            assert!(crate::cli::Cli::try_parse_from([
                "headroom",
                "run",
                "keyvalue",
                "--server-stats-every",
                refused
            ])
            .is_err());
        }
        assert_eq!(
            crate::metrics::server_samples::MIN_EVERY,
            Duration::from_secs(1)
        );
        // Without the flag nothing is stored.
        let config = run_settings(&run_args(&["keyvalue"])).unwrap();
        assert!(serde_json::to_value(&config)
            .unwrap()
            .get("server_stats_every_s")
            .is_none());
    }

    /// `headroom run ycsb ARGS...`'s settings, or the error's message.
    fn run_config(args: &[&str]) -> Result<RunSettings, String> {
        let mut argv = vec!["ycsb", "--hosts", "127.0.0.2:9042"];
        argv.extend_from_slice(args);
        run_settings(&run_args(&argv)).map_err(|e| e.to_string())
    }

    #[test]
    fn the_command_line_settles_keyspace_load_and_length() {
        let config = run_config(&[
            "--workload",
            "f",
            "-p",
            "recordcount=500",
            "-p",
            "operationcount=2000",
        ])
        .unwrap();
        assert_eq!(config.workload.keyspace, "ycsb");
        assert_eq!(config.workload.populate, 500);
        assert_eq!(
            config.ops,
            Some(2000),
            "operationcount when no --duration or --ops"
        );
        assert_eq!(config.duration_s, None);
        let crate::workload::Definition::Ycsb(y) = &config.workload.definition else {
            panic!("ycsb")
        };
        assert_eq!(y.readmodifywriteproportion, 0.5);
        // Stored in config.json and read back the same.
        let json = serde_json::to_string(&config.workload).unwrap();
        assert!(json.contains(r#""format":"ycsb""#), "{json}");
        let back: WorkloadConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, config.workload);

        let config =
            run_config(&["--workload", "a", "--keyspace", "bench", "--duration", "5s"]).unwrap();
        assert_eq!(config.workload.keyspace, "bench");
        assert_eq!((config.duration_s, config.ops), (Some(5.0), None));
        let config = run_config(&["--workload", "a", "--ops", "77"]).unwrap();
        assert_eq!(config.ops, Some(77));

        let error = run_config(&["--workload", "a", "--read-ratio", "0.5"]).unwrap_err();
        assert!(
            error.contains("--read-ratio") && error.contains("readproportion"),
            "{error}"
        );
        let error = run_config(&["--workload", "a", "--populate", "10"]).unwrap_err();
        assert!(error.contains("recordcount"), "{error}");
    }

    #[test]
    fn a_property_file_is_read_with_its_lines_in_errors() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("workloadf");
        std::fs::write(
            &file,
            "# Workload F\nrecordcount=100\noperationcount=100\nworkload=site.ycsb.workloads.CoreWorkload\n\n\
             readallfields=true\nreadproportion=0.5\nreadmodifywriteproportion=0.5\nupdateproportion=0\n\
             requestdistribution=zipfian\n",
        )
        .unwrap();
        let path = file.to_str().unwrap();
        let config = run_config(&["-P", path, "-p", "recordcount=50"]).unwrap();
        assert_eq!(config.workload.populate, 50, "-p overrides the file");
        assert_eq!(config.ops, Some(100));
        std::fs::write(&file, "recordcount=100\n\nfieldcount=many\n").unwrap();
        let error = run_config(&["-P", path]).unwrap_err();
        assert_eq!(
            error,
            format!(
                "{path}:3: fieldcount=many: not a whole number (YCSB reads it as a plain integer)"
            )
        );
    }
}
