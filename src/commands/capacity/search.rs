//! One capacity search from the command line: flags into a search's settings, and the search
//! itself ([`crate::capacity::live::search`]) with the terminal watching every trial, the
//! table as it grows, and the report. `headroom capacity`, each configuration of a matrix and
//! the quickstart run their searches through here.

use std::time::Duration;

use crate::capacity::degraded::{self, Degraded};
use crate::capacity::rates::Rates;
use crate::capacity::settings::{Fresh, SearchSettings};
use crate::capacity::{self, RatePlan, Status, Store};
use crate::cli::CapacityArgs;
use crate::cluster::{self, LocalCluster};
use crate::commands::settings;
use crate::commands::terminal::{stop_on_ctrl_c_or_term, write_report, Terminal};
use crate::fleet::launch::Launcher;
use crate::fleet::local::LocalLauncher;
use crate::fleet::settings::{FleetSettings, LauncherKind};
use crate::live::Live;
use crate::results::config::RunSettings;
use crate::run::template::RunTemplate;
use crate::stop::StopSignal;
use crate::usage::{usage_error, UsageError};

/// Resolves and checks the flags of `headroom capacity`.
pub fn search_settings(args: &CapacityArgs) -> anyhow::Result<SearchSettings> {
    let interval_goal = goal_of(args) == crate::cli::Goal::Interval;
    let resolution = args
        .resolution
        .unwrap_or(if interval_goal { 0.10 } else { 0.02 });
    let mut workload = args.workload.clone();
    workload.op_mix = args.ops.clone().map(|m| m.0);
    let mut run = settings::settings(
        &workload,
        &args.connection,
        &args.client,
        // The template's: the rate is set per trial (and the probe is closed-loop).
        RunTemplate::open_loop(args.client.arrivals(), args.client.max_in_flight()),
        args.warmup,
        Some(args.duration),
        None,
    )?;
    // Trials are many: Cassandra's histograms over CQL only, no nodetool JVM per trial.
    run.nodetool_figures = false;
    // Cores named with --client-cpus are checked now; a search against a local cluster then
    // checks them against its nodes' cores (or, without the flag, takes those they left).
    settings::with_placement_cores(
        &mut run,
        args.client.client_cpus.as_ref(),
        &crate::cluster::Placement::default(),
    )?;
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
    let rates = Rates::parse(args.rates.text(), resolution).map_err(UsageError::new)?;
    let interval = if interval_goal {
        if !matches!(rates.plan(), RatePlan::Auto { .. }) {
            return Err(usage_error(format!(
                "--goal interval chooses its own rates: give --rates auto, not '{}'",
                args.rates.text()
            )));
        }
        if args.repeats.is_some() {
            return Err(usage_error(
                "--goal interval repeats a rate where a bound needs it: leave out --repeats, \
                 or give --goal strict to judge every window of every repeat",
            ));
        }
        let window = sla.windows().last().copied().unwrap_or(sla.window);
        let windows_per_trial = (args.duration.as_secs_f64() / window.as_secs_f64())
            .round()
            .max(1.0) as u32;
        Some(crate::capacity::interval::IntervalGoal {
            exceed_ratio: args.exceed_ratio.unwrap_or(0.10),
            confidence: args.confidence.unwrap_or(0.90),
            width: resolution,
            windows_per_trial,
            window_correlation: crate::capacity::interval::WINDOW_CORRELATION,
            max_trials: crate::capacity::interval::MAX_TRIALS,
        })
    } else {
        for (flag, given) in [
            ("--exceed-ratio", &args.exceed_ratio),
            ("--confidence", &args.confidence),
        ] {
            if given.is_some() {
                let why = match args.goal {
                    Some(_) => "",
                    None if args.repeats.is_some() => " (the strict goal, for --repeats)",
                    None => " (the strict goal, for a list or range of --rates)",
                };
                return Err(usage_error(format!(
                    "{flag} applies to --goal interval; the strict goal judges every \
                     window{why}"
                )));
            }
        }
        None
    };
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
    let degraded = degraded_node(args, &run)?;
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
        repeats: args.repeats.unwrap_or(1),
        duration_s: args.duration.as_secs_f64(),
        warmup_s: args.warmup.as_secs_f64(),
        probe_concurrency: args.probe_concurrency,
        probe_duration_s: args.probe_duration.as_secs_f64(),
        fresh: args.fresh,
        cluster_dir: match (args.fresh, &degraded) {
            (Fresh::Restart, _) => Some(
                args.cluster_dir
                    .clone()
                    .unwrap_or_else(cluster::default_dir),
            ),
            // Where a resumed search finds the node it stops.
            (_, Some(_)) => Some(
                args.cluster_dir
                    .clone()
                    .unwrap_or_else(settings::local_cluster_dir),
            ),
            _ => args.cluster_dir.clone(),
        },
        label: args.label.clone(),
        ladder_base_per_s: None,
        nodes: args.cost.nodes,
        cluster: None,
        fleet,
        degraded,
        interval,
    })
}

/// How the search states its capacity: `--goal` as given; else the interval, unless the flags
/// ask for what only the strict goal does (its own list or range of rates, or repeats).
pub fn goal_of(args: &CapacityArgs) -> crate::cli::Goal {
    args.goal.unwrap_or_else(|| {
        if args.rates.names_its_rates() || args.repeats.is_some() {
            crate::cli::Goal::Strict
        } else {
            crate::cli::Goal::Interval
        }
    })
}

/// `--degraded N`: the node of the local cluster the search keeps down, chosen now; `None`
/// for every node up. Refused for a cluster headroom did not start (it cannot stop one of
/// its nodes), with a matrix (an axis of its own) or a fleet.
fn degraded_node(args: &CapacityArgs, run: &RunSettings) -> anyhow::Result<Option<Degraded>> {
    let Some(value) = args.degraded else {
        return Ok(None);
    };
    let Some(nodes_down) = degraded::parse_nodes_down(value)
        .map_err(|why| usage_error(format!("--degraded {value}: {why}")))?
    else {
        return Ok(None);
    };
    if !args.matrix.is_empty() {
        return Err(usage_error(format!(
            "--degraded {nodes_down} with --matrix: make it an axis of the matrix, --matrix \
             degraded=0,{nodes_down} (every node up, then {nodes_down} down) or --matrix \
             degraded={nodes_down}"
        )));
    }
    if args.workers.is_some() {
        return Err(usage_error(
            "--degraded with --workers: a fleet's search cannot keep a node down yet; search \
             with one client process",
        ));
    }
    let refused = |why: String| usage_error(format!("--degraded {nodes_down}: {why}"));
    degraded::check_replicas(&run.workload, nodes_down).map_err(refused)?;
    let cluster_dir = args
        .cluster_dir
        .clone()
        .unwrap_or_else(settings::local_cluster_dir);
    let refuse = |why: String| {
        usage_error(format!(
            "--degraded {nodes_down} stops a node of a local cluster headroom started, and \
             {why}. For another cluster, stop a node yourself (`nodetool drain` on it, then \
             stop its service; `nodetool status` shows it DN), give --hosts without it, and \
             name the search, e.g. --label '3 nodes, 1 down' (docs/capacity.md)"
        ))
    };
    let cluster = match LocalCluster::open(&cluster_dir) {
        Ok(cluster) if !cluster.running_pids().is_empty() => cluster,
        _ => {
            return Err(refuse(format!(
                "none runs in {} (--cluster-dir)",
                cluster_dir.display()
            )))
        }
    };
    if !cluster.serves(&run.hosts) {
        let nodes: Vec<String> = cluster
            .contact_points()
            .iter()
            .map(ToString::to_string)
            .collect();
        return Err(refuse(format!(
            "--hosts {} are not the nodes of the one in {} ({})",
            run.hosts.join(","),
            cluster_dir.display(),
            nodes.join(", ")
        )));
    }
    let chosen = degraded::choose(
        &cluster.nodes(),
        cluster.config().dcs,
        &run.hosts,
        nodes_down,
    )
    .map_err(refused)?;
    // Exactly the chosen node down in every run: no other may be down already (the chosen
    // one may, left so by a search that was killed; the search starts it first).
    let down: Vec<String> = cluster
        .nodes()
        .iter()
        .filter(|n| n.index != chosen.node && cluster.pid(n.index).is_none())
        .map(|n| format!("{} ({})", n.index, n.address))
        .collect();
    if !down.is_empty() {
        return Err(usage_error(format!(
            "--degraded {nodes_down}: node(s) {} of the local cluster in {} are down already; \
             start them (`headroom cluster start --dir {}`) so that every run has exactly \
             {} down",
            down.join(", "),
            cluster_dir.display(),
            cluster_dir.display(),
            chosen.node_name()
        )));
    }
    Ok(Some(chosen))
}

/// Runs a whole search, printing the table as it grows; returns how it ended and its
/// outcome. `cluster` is the local cluster under test when the caller started it (a
/// matrix, the quickstart): `--fresh restart` restarts it.
pub fn search(
    config: &SearchSettings,
    mut store: Store,
    credentials: Option<(String, String)>,
    cluster: Option<&mut LocalCluster>,
    live: Option<&Live>,
) -> anyhow::Result<(Status, capacity::Outcome, Option<Vec<String>>)> {
    let plan = config.plan();
    let dir = store.dir().to_path_buf();
    let goal = match &config.interval {
        Some(goal) => format!(
            "bounds at {} confidence on the highest rate where at most {} of the windows fail, \
             short trials far from it and full ones near it",
            percent(goal.confidence),
            percent(goal.exceed_ratio)
        ),
        None => format!("{} repeat(s) per rate", config.repeats),
    };
    println!(
        "Capacity search of {} under SLA {} ({}), {goal}, trials of {} s + {} s warmup.",
        config.run.workload.name,
        config.sla,
        describe_plan(&plan.plan),
        config.duration_s,
        config.warmup_s
    );
    let done = Duration::from_secs_f64(
        store.records().len() as f64 * (config.warmup_s + config.duration_s + 3.0),
    );
    let (shortest, longest) = config.estimate_range();
    let minutes = |d: Duration| {
        (d.saturating_sub(done).as_secs_f64() / 60.0)
            .ceil()
            .max(1.0)
    };
    let length = if config.interval.is_some() {
        format!("{} to {}", minutes(shortest), minutes(longest))
    } else {
        minutes(longest).to_string()
    };
    if let Some(degraded) = &config.degraded {
        println!(
            "With {} down in every probe and trial: {}. It is stopped (it drains) before each \
             run, warmup included, and started again after it; the next run waits until the \
             other nodes have delivered the hints they kept for it.",
            degraded.node_name(),
            degraded.chosen
        );
    }
    println!(
        "This takes about {length} minutes. Results: {}",
        dir.display()
    );

    if let Some(cores) = &config.run.client_cpus {
        println!(
            "The client runs on {} {cores}{}.",
            if cores.len() == 1 { "core" } else { "cores" },
            cluster
                .as_ref()
                .and_then(|c| c.config().placement.nodes_cores())
                .map_or(String::new(), |n| format!(", the local nodes on {n}"))
        );
    } else if let Some(nice) = cluster
        .as_ref()
        .map(|c| c.config().placement.node_nice)
        .filter(|&n| n > 0)
    {
        println!(
            "The client and the local nodes share the cores; the nodes run at niceness {nice}, \
             after the client."
        );
    }
    // Before the runtime starts its threads: they inherit the binding.
    super::settings::bind_client(&config.run)?;
    let runtime = crate::run::runtime(crate::run::policy::control_threads(&config.run))?;
    let stop = StopSignal::new();
    stop_on_ctrl_c_or_term(&runtime, &stop);
    let terms: Vec<String> = config.sla.terms.iter().map(|t| t.name()).collect();
    // Over every table of a degraded search: what its figures are of.
    let heading = config
        .degraded
        .as_ref()
        .map(|d| format!("Capacity {}:\n", d.describe()))
        .unwrap_or_default();
    let mut printed = false;
    let launcher: Option<Box<dyn Launcher>> = match &config.fleet {
        None => None,
        Some(fleet) => {
            let launcher = launcher_for(fleet, credentials.clone(), &runtime, live)?;
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
    let mut terminal = Terminal::new();
    let mut watched;
    let observer: &mut dyn crate::run::RunObserver = match live {
        Some(live) => {
            let (outcome, _) =
                capacity::answer(store.records(), config.repeats, config.interval.as_ref());
            if let Some(goal) = &config.interval {
                live.search_bounds(bounds(store.records(), goal));
            }
            live.search_outcome(&outcome);
            watched = live.watch(&mut terminal);
            &mut watched
        }
        None => &mut terminal,
    };
    let render = |outcome: &capacity::Outcome, records: &[capacity::Record]| match &config.interval
    {
        Some(goal) => capacity::table::render_interval(outcome, &terms, records, goal),
        None => capacity::table::render(outcome, &terms),
    };
    let status =
        capacity::live::search(config, &mut store, context, observer, |outcome, records| {
            println!("\n{heading}{}", render(outcome, records));
            printed = true;
            if let Some(live) = live {
                if let Some(goal) = &config.interval {
                    live.search_bounds(bounds(records, goal));
                }
                live.search_outcome(outcome);
            }
        });
    runtime.shutdown_timeout(Duration::from_secs(1));
    let status = status?;
    let (outcome, _) = capacity::answer(store.records(), config.repeats, config.interval.as_ref());
    let statement = config
        .interval
        .as_ref()
        .map(|goal| capacity::interval::describe(store.records(), goal));
    if !printed {
        println!("\n{heading}{}", render(&outcome, store.records()));
    }
    write_report(&dir);
    match status {
        Status::Interrupted if statement.is_some() => println!(
            "\nInterrupted with {} Everything finished is in {}; continue with `headroom \
             capacity --resume {}`.",
            statement
                .as_ref()
                .and_then(|lines| lines.first())
                .map_or("no bounds yet.".to_string(), |line| format!(
                    "the bounds so far: {}.",
                    line.trim_start_matches("Capacity: ")
                )),
            dir.display(),
            dir.display()
        ),
        Status::Interrupted => println!(
            "\nInterrupted. Everything finished is in {}; continue with `headroom capacity --resume {}`.",
            dir.display(),
            dir.display()
        ),
        Status::Invalid if config.interval.is_some() => println!(
            "\nThe answer is incomplete: the client could not keep its schedule at some rates (see above). Files: {}",
            dir.display()
        ),
        Status::Invalid => println!(
            "\nNo capacity: a trial had no verdict (client-bound, or nothing to judge; see above). Files: {}",
            dir.display()
        ),
        _ => println!("\nFiles: {} (capacity.json, capacity.jsonl, one run directory per trial)", dir.display()),
    }
    Ok((status, outcome, statement))
}

/// An interval search's bounds so far, for the live page and the metrics.
fn bounds(
    records: &[capacity::Record],
    goal: &capacity::interval::IntervalGoal,
) -> crate::live::state::Bounds {
    let found = capacity::interval::interval(records, goal);
    crate::live::state::Bounds {
        lower_per_s: found.lower.map(|l| l.rate_per_s),
        upper_per_s: found.upper.map(|u| u.rate_per_s),
        confidence: goal.confidence,
    }
}

/// A fraction as a percentage, e.g. 0.9 → "90%".
fn percent(fraction: f64) -> String {
    format!("{}%", (fraction * 1000.0).round() / 10.0)
}

/// The launcher of a fleet search's workers.
fn launcher_for(
    fleet: &FleetSettings,
    credentials: Option<(String, String)>,
    runtime: &tokio::runtime::Runtime,
    live: Option<&Live>,
) -> anyhow::Result<Box<dyn Launcher>> {
    Ok(match (fleet.launcher, &fleet.kube) {
        (LauncherKind::Local, _) => {
            let mut launcher = LocalLauncher::new(credentials)?;
            launcher.watching = live.map(Live::for_workers);
            Box::new(launcher)
        }
        #[cfg(feature = "kubernetes")]
        (LauncherKind::Kubernetes, Some(options)) => {
            if live.is_some() {
                println!(
                    "Note: the pods of a Kubernetes fleet serve and push no metrics of their own; \
                     what is watched live here is the search (its trials' rates and verdicts)."
                );
            }
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
