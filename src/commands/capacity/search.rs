//! One capacity search from the command line: flags into a search's settings, and the search
//! itself ([`crate::capacity::live::search`]) with the terminal watching every trial, the
//! table as it grows, and the report. `headroom capacity`, each configuration of a matrix and
//! the quickstart run their searches through here.

use std::time::Duration;

use crate::capacity::rates::Rates;
use crate::capacity::settings::{Fresh, SearchSettings};
use crate::capacity::{self, RatePlan, Status, Store};
use crate::cli::CapacityArgs;
use crate::cluster::{self, LocalCluster};
use crate::commands::settings::{self, parse_fraction};
use crate::commands::terminal::{stop_on_ctrl_c_or_term, write_report, Terminal};
use crate::engine::LoadMode;
use crate::fleet::launch::Launcher;
use crate::fleet::local::LocalLauncher;
use crate::fleet::settings::{FleetSettings, LauncherKind};
use crate::run::template::RunTemplate;
use crate::stop::StopSignal;
use crate::usage::{usage_error, UsageError};

/// Resolves and checks the flags of `headroom capacity`.
pub fn search_settings(args: &CapacityArgs) -> anyhow::Result<SearchSettings> {
    let resolution = parse_fraction("--resolution", &args.resolution)?;
    let mut workload = args.workload.clone();
    workload.op_mix = args.ops.clone().map(|m| m.0);
    let mut run = settings::settings(
        &workload,
        &args.connection,
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
    let sla = settings::sla_settings(
        Some(args.sla.terms.as_deref().unwrap_or(crate::cli::DEFAULT_SLA)),
        args.sla.window,
        &run,
    )?
    .expect("an SLA was given");
    settings::check_duration_in_windows(args.duration, &sla)?;
    if args
        .label
        .as_deref()
        .is_some_and(|l| l.trim().is_empty() || l.chars().any(char::is_control))
    {
        return Err(usage_error(
            "--label is empty: give the name the search goes by in reports and comparisons, \
             e.g. --label c5d.2xlarge",
        ));
    }
    if args.repeats == 0 {
        return Err(usage_error("--repeats must be at least 1"));
    }
    if args.probe_concurrency == 0 {
        return Err(usage_error("--probe-concurrency must be at least 1"));
    }
    if args.probe_duration < Duration::from_secs(1) {
        return Err(usage_error(format!(
            "--probe-duration {} is too short to measure a throughput: give at least 1s",
            humantime::format_duration(args.probe_duration)
        )));
    }
    let rates = Rates::parse(&args.rates, resolution).map_err(UsageError::new)?;
    let fleet = match args.workers {
        None => None,
        Some(n) if n == 0 || n > crate::fleet::worker::MAX_WORKERS => {
            return Err(usage_error(format!(
                "--workers {n}: give from 1 to {}",
                crate::fleet::worker::MAX_WORKERS
            )))
        }
        Some(workers) => Some(FleetSettings {
            workers,
            launcher: args.launcher,
            kube: match args.launcher {
                LauncherKind::Kubernetes if !crate::fleet::kube::BUILT => {
                    return Err(crate::fleet::kube::not_built().into())
                }
                LauncherKind::Kubernetes => {
                    let options =
                        settings::kube_options(&args.kube, args.connection.username.as_deref())?;
                    crate::fleet::kube::names::check_hosts(&run, options.host_network)?;
                    Some(options)
                }
                LauncherKind::Local => None,
            },
        }),
    };
    if args.fresh == Fresh::Restart && !args.connection.hosts.is_empty() {
        return Err(usage_error(
            "--fresh restart restarts a local cluster headroom started (see --cluster-dir); \
             against the cluster at --hosts use --fresh truncate or --fresh none",
        ));
    }
    Ok(SearchSettings {
        run: RunTemplate::new(run),
        sla,
        rates,
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
        fleet,
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

    let runtime = crate::run::runtime(crate::run::policy::control_threads(&config.run))?;
    let stop = StopSignal::new();
    stop_on_ctrl_c_or_term(&runtime, &stop);
    let terms: Vec<String> = config.sla.terms.iter().map(|t| t.name()).collect();
    let mut printed = false;
    let launcher: Option<Box<dyn Launcher>> = match &config.fleet {
        None => None,
        Some(fleet) => {
            let launcher = launcher_for(fleet, credentials.clone(), &runtime)?;
            println!(
                "Each probe and trial runs on a fleet: {}.",
                launcher.describe(fleet.workers)
            );
            Some(launcher)
        }
    };
    let context = capacity::live::SearchContext {
        runtime: &runtime,
        stop,
        credentials,
        cluster,
        launcher: launcher.as_deref(),
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
    write_report(&dir);
    match status {
        Status::Interrupted => println!(
            "\nInterrupted. Everything finished is in {}; continue with `headroom capacity --resume {}`.",
            dir.display(),
            dir.display()
        ),
        Status::Invalid => println!(
            "\nNo capacity: a trial had no verdict (client-bound, or nothing to judge; see above). Files: {}",
            dir.display()
        ),
        _ => println!("\nFiles: {} (capacity.json, capacity.jsonl, one run directory per trial)", dir.display()),
    }
    Ok((status, outcome))
}

/// The launcher of a fleet search's workers.
fn launcher_for(
    fleet: &FleetSettings,
    credentials: Option<(String, String)>,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<Box<dyn Launcher>> {
    Ok(match (fleet.launcher, &fleet.kube) {
        (LauncherKind::Local, _) => Box::new(LocalLauncher::new(credentials)?),
        #[cfg(feature = "kubernetes")]
        (LauncherKind::Kubernetes, Some(options)) => {
            Box::new(runtime.block_on(crate::fleet::kube::connect(options.clone()))?)
        }
        #[cfg(not(feature = "kubernetes"))]
        (LauncherKind::Kubernetes, Some(_)) => {
            let _ = runtime;
            return Err(crate::fleet::kube::not_built().into());
        }
        (LauncherKind::Kubernetes, None) => {
            return Err(usage_error(
                "the search's settings name no pods for --launcher kubernetes (--image)",
            ))
        }
    })
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
