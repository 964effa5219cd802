//! A capacity search's settings from the command line: `headroom capacity`'s flags (and the
//! quickstart's, and each configuration of a matrix) resolved and checked into a
//! [`SearchSettings`] before anything connects, and the node `--degraded` keeps down.

use super::connection::local_cluster_dir;
use super::cores::with_placement_cores;
use super::kube::kube_options;
use super::run;
use super::sla::{check_duration_in_windows, sla_settings};
use crate::capacity::degraded::{self, Degraded};
use crate::capacity::rates::Rates;
use crate::capacity::settings::{Fresh, SearchSettings};
use crate::capacity::RatePlan;
use crate::cli::CapacityArgs;
use crate::cluster::{self, LocalCluster};
use crate::fleet::settings::{FleetSettings, LauncherKind};
use crate::results::config::RunSettings;
use crate::run::template::{RunTemplate, TemplateLoad};
use crate::usage::{usage_error, UsageError};

/// Resolves and checks the flags of `headroom capacity`.
pub fn search_settings(args: &CapacityArgs) -> anyhow::Result<SearchSettings> {
    let interval_goal = goal_of(args) == crate::cli::Goal::Interval;
    let resolution = args
        .resolution
        .unwrap_or(if interval_goal { 0.10 } else { 0.02 });
    let mut workload = args.workload.clone();
    workload.op_mix = args.ops.clone().map(|m| m.0);
    // Each trial is given its rate (and the probe, closed-loop, its concurrency).
    let mut run = run::open_loop_template(
        &workload,
        &args.connection,
        &args.client,
        args.warmup,
        Some(args.duration),
    )?;
    // Trials are many: Cassandra's histograms over CQL only, no nodetool JVM per trial.
    run.nodetool_figures = false;
    // Cores named with --client-cpus are checked now; a search against a local cluster then
    // checks them against its nodes' cores (or, without the flag, takes those they left).
    with_placement_cores(
        &mut run,
        args.client.client_cpus.as_ref(),
        &crate::cluster::Placement::default(),
    )?;
    let sla = sla_settings(
        Some(args.sla.terms.as_deref().unwrap_or(crate::cli::DEFAULT_SLA)),
        args.sla.window,
        &run,
    )?
    .expect("an SLA was given");
    check_duration_in_windows(args.duration, &sla)?;
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
                    let options = kube_options(&args.kube, args.connection.username.as_deref())?;
                    crate::fleet::kube::names::check_hosts(&run, options.host_network)?;
                    Some(options)
                }
                LauncherKind::Local => None,
            },
        }),
    };
    if args.validate {
        check_search_validation(args, &run)?;
        run.validate = true;
    }
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
            (_, Some(_)) => Some(args.cluster_dir.clone().unwrap_or_else(local_cluster_dir)),
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
fn degraded_node<M>(args: &CapacityArgs, run: &RunSettings<M>) -> anyhow::Result<Option<Degraded>> {
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
    let cluster_dir = args.cluster_dir.clone().unwrap_or_else(local_cluster_dir);
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

/// Refuses a validated search where its trials cannot be checked, in one line that says why.
fn check_search_validation(
    args: &CapacityArgs,
    run: &RunSettings<TemplateLoad>,
) -> Result<(), UsageError> {
    if args.fresh == Fresh::None {
        return Err(UsageError::new(
            "--validate with --fresh none: a trial's record holds only its own writes, and a \
             row an earlier trial left could hide a write this trial lost; give --fresh \
             truncate (or restart, for a local cluster headroom started)",
        ));
    }
    if args.workers.is_some() {
        return Err(UsageError::new(
            "--validate with --workers: each worker would check only its share; validate a \
             search with one client process",
        ));
    }
    if args.degraded.is_some_and(|n| n > 0) {
        return Err(UsageError::new(
            "--validate with --degraded: the final check reads every row at ALL, which a node \
             kept down cannot answer; validate a search with every node up",
        ));
    }
    crate::workload::AnyWorkload::check_validation(&run.workload).map_err(UsageError::new)
}
