//! `headroom capacity`: flags into a search's settings, the search itself
//! ([`crate::capacity::live::search`]) with the terminal watching every trial, the table as
//! it grows, and the report.

use std::process::ExitCode;
use std::time::Duration;

use super::run::Terminal;
use super::settings;
use crate::capacity::settings::{Fresh, SearchSettings};
use crate::capacity::{self, RatePlan, Status, Store};
use crate::cli::CapacityArgs;
use crate::cluster::{self, LocalCluster};
use crate::compare::matrix::MATRIX_FILE;
use crate::engine::LoadMode;
use crate::run::StopSignal;
use crate::workload::builtin::WorkloadError;

/// Resolves and checks the flags of `headroom capacity`.
pub fn search_settings(args: &CapacityArgs) -> anyhow::Result<SearchSettings> {
    let resolution = parse_fraction("--resolution", &args.resolution)?;
    let mut workload = args.workload.clone();
    workload.op_mix = args.ops.clone().map(|m| m.0);
    let mut run = settings::settings(
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
    let sla =
        settings::sla_settings(Some(&args.sla), args.window, &run)?.expect("an SLA was given");
    if args.duration < sla.window {
        return Err(WorkloadError::Invalid(format!(
            "--duration {} is shorter than one SLA window ({} s): no window could be judged",
            humantime::format_duration(args.duration),
            sla.window.as_secs_f64()
        ))
        .into());
    }
    if args.repeats == 0 {
        return Err(WorkloadError::Invalid("--repeats must be at least 1".into()).into());
    }
    if args.probe_concurrency == 0 {
        return Err(WorkloadError::Invalid("--probe-concurrency must be at least 1".into()).into());
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
    Ok(SearchSettings {
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
    let credentials = settings::credentials(&args.client);
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
            let config: SearchSettings = serde_json::from_value(stored).map_err(|e| {
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
            let config = search_settings(&args)?;
            let out = args.out.clone().unwrap_or_else(|| {
                crate::output_dir::default_out_dir(&format!(
                    "capacity-{}",
                    config.run.workload.name
                ))
            });
            crate::output_dir::claim(&out, args.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
            let store = Store::create(&out, serde_json::to_value(&config)?)?;
            (config, store)
        }
    };
    let status = search(&config, store, credentials, None)?;
    Ok(match status.0 {
        Status::Interrupted => ExitCode::from(130),
        Status::Invalid => ExitCode::from(super::run::EXIT_CLIENT_BOUND),
        _ => ExitCode::SUCCESS,
    })
}

/// Runs a whole search, printing the table as it grows; returns how it ended and its
/// outcome. `cluster` is the local cluster under test when the caller started it (a
/// matrix, the quickstart): `--fresh restart` restarts it.
pub fn search(
    config: &SearchSettings,
    mut store: Store,
    credentials: Option<(String, String)>,
    cluster: Option<&mut LocalCluster>,
) -> anyhow::Result<(Status, capacity::Outcome)> {
    let plan = config.plan();
    let dir = store.dir().to_path_buf();
    println!(
        "Capacity search of {} under SLA {} ({}), {} repeat(s) per rate, trials of {} s + {} s warmup.",
        config.run.workload.name,
        config.sla,
        describe_plan(&plan.plan),
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

    let runtime = crate::run::runtime(config.run.threads)?;
    let stop = StopSignal::new();
    super::run::stop_on_ctrl_c_or_term(&runtime, &stop);
    let terms: Vec<String> = config.sla.terms.iter().map(|t| t.name()).collect();
    let mut printed = false;
    let context = capacity::live::SearchContext {
        runtime: &runtime,
        stop,
        credentials,
        cluster,
    };
    let status = capacity::live::search(
        config,
        &mut store,
        context,
        &mut Terminal::new(),
        |outcome| {
            println!("\n{}", capacity::table::render(outcome, &terms));
            printed = true;
        },
    );
    runtime.shutdown_timeout(Duration::from_secs(1));
    let status = status?;
    let outcome = capacity::outcome(store.records(), config.repeats);
    if !printed {
        println!("\n{}", capacity::table::render(&outcome, &terms));
    }
    super::run::write_report(&dir);
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
