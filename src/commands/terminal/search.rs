//! One capacity search on the terminal: the search itself ([`crate::capacity::live::search`])
//! with the terminal watching every trial, the table as it grows, and the report.
//! `headroom capacity`, each configuration of a matrix and the quickstart run their searches
//! through here.

use std::time::Duration;

use super::ending::{stop_on_ctrl_c_or_term, write_report};
use super::watch::Terminal;
use crate::capacity::settings::SearchSettings;
use crate::capacity::{self, RatePlan, Status, Store};
use crate::cluster::LocalCluster;
use crate::fleet::launch::Launcher;
use crate::fleet::local::LocalLauncher;
use crate::fleet::settings::{FleetSettings, LauncherKind};
use crate::live::Live;
use crate::stop::StopSignal;
use crate::usage::usage_error;

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
    crate::commands::settings::bind_client(&config.run)?;
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
    if let Some(data) = &outcome.data {
        println!("\nThe data (--validate, every trial): {}.", data.describe());
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
