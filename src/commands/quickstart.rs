//! `headroom quickstart`: from nothing to an answer. Starts a local Cassandra node (fetching
//! Cassandra first if needed), runs a short automatic capacity search of an 80% write / 20%
//! read time-series workload, prints the capacity and where the files are, and removes the
//! node again — also when the search fails or is interrupted.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use super::{settings, terminal};
use crate::capacity::settings::SearchSettings;
use crate::capacity::{Status, Store};
use crate::cli::{CapacityArgs, QuickstartArgs};
use crate::cluster::state::Owner;
use crate::cluster::{
    self, ClusterConfig, ClusterError, ClusterSettings, CpusFlag, LocalCluster, StartOptions,
};
use crate::cpus::{CoreChoice, Cores};
use crate::usage::UsageError;

/// Partition keys of the quickstart's time series: few enough that reads find rows.
const PARTITIONS: &str = "10k";

/// Trials after which the quickstart's interval search states the bounds it has: a first
/// answer in a bounded time. A node whose windows fail at every rate (a GC pause over the
/// SLA now and then) would otherwise take `capacity`'s 40 trials to say so.
const MAX_TRIALS: usize = 24;

/// Length of the closed-loop probe.
const PROBE: &str = "15s";

/// Parses the arguments of the capacity search the quickstart runs, so that it gets the
/// same defaults and checks as `headroom capacity`.
#[derive(Debug, Parser)]
#[command(name = "headroom capacity")]
struct CapacityLine {
    #[command(flatten)]
    args: CapacityArgs,
}

/// Runs `headroom quickstart`.
pub fn run(args: QuickstartArgs) -> anyhow::Result<ExitCode> {
    let cluster_dir = args.cluster_dir.clone().unwrap_or_else(default_cluster_dir);
    let out = args
        .output
        .out
        .clone()
        .unwrap_or_else(|| crate::output_dir::default_out_dir("quickstart"));
    let mut config = search_config(&args, &out)?;
    let start = ClusterSettings {
        nodes: Some(1),
        cassandra_version: args.cassandra_version.clone(),
        heap: args.heap,
        gc: args.gc,
        cpus: node_cpus(&args)?,
        ..ClusterSettings::default()
    };
    let cluster_config = ClusterConfig::from_settings(&start, None)?;
    // Where the node and the client run, checked before anything starts.
    super::settings::with_placement_cores(
        &mut config.run,
        args.client_cpus.as_ref(),
        &cluster_config.placement,
    )?;
    let leftover = claim_cluster_dir(&cluster_dir)?;
    crate::output_dir::claim(&out, args.output.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
    let fetch = !cluster::jars::is_cached(&cluster_config.cassandra_version);
    let setup = if fetch { 90.0 } else { 20.0 };
    let (shortest, longest) = config.estimate_range();
    let minutes = |d: Duration| ((d.as_secs_f64() + setup) / 60.0).ceil();
    let minutes = if shortest == longest {
        format!("{:.0}", minutes(longest))
    } else {
        format!("{:.0} to {:.0}", minutes(shortest), minutes(longest))
    };
    println!(
        "headroom quickstart: the capacity of one local Cassandra {} node for a time series \
         (80% writes, 20% reads of the latest rows) under SLA {}.",
        cluster_config.cassandra_version, config.sla
    );
    println!(
        "{}.",
        cores_line(&cluster_config, config.run.client_cpus.as_ref())
    );
    println!(
        "It takes about {minutes} minutes{}. Ctrl-C stops it cleanly.\n",
        if fetch {
            ", including about a minute to fetch Cassandra from Maven Central (once)"
        } else {
            ""
        }
    );

    let started = Instant::now();
    if let Some(old) = leftover {
        println!(
            "Removing the node an earlier quickstart left in {}...",
            cluster_dir.display()
        );
        old.destroy(Duration::from_secs(30))?;
    }
    let options = StartOptions {
        owner: Some(Owner::this_process(OWNER)),
        ..StartOptions::default()
    };
    let mut cluster = LocalCluster::start(&cluster_dir, cluster_config, &options)?;
    // From here on the node is stopped when `cluster` is dropped, whatever happens.
    let store = Store::create(&out, serde_json::to_value(&config)?)?;
    let result = terminal::search(&config, store, None, Some(&mut cluster), None);
    println!("\nRemoving the quickstart's node...");
    cluster.destroy(Duration::from_secs(60))?;
    let (status, outcome, statement) = result?;
    let took = started.elapsed().as_secs_f64() / 60.0;
    if let Some(lines) = statement {
        interval_end(status, &lines, took, &out, &config);
        return Ok(super::exit::of_search(status, outcome.capacity_per_s, outcome.data.as_ref()));
    }
    match (status, outcome.capacity_per_s) {
        (Status::Interrupted, _) => {
            println!(
                "Stopped after {took:.1} minutes. What finished is in {}.",
                out.display()
            );
            return Ok(ExitCode::from(crate::commands::exit::EXIT_INTERRUPTED));
        }
        (_, Some(capacity)) => println!(
            "\nCapacity: {capacity:.0} requests/s on this machine under {} ({took:.1} minutes). \
             The highest throughput without an SLA was {:.0}/s.",
            config.sla, outcome.highest_achieved_per_s
        ),
        (Status::Invalid, _) => {
            println!(
                "\nNo capacity: this machine's client could not keep up with a trial's rate \
                 (invalid: client-bound; see the table above) ({took:.1} minutes). Its files \
                 are in {}.",
                out.display()
            );
            return Ok(ExitCode::from(super::exit::EXIT_NO_VERDICT));
        }
        (_, None) => {
            println!(
                "\nNo capacity: the SLA {} failed at every rate tried ({took:.1} minutes). Its \
                 files are in {}.",
                config.sla,
                out.display()
            );
            return Ok(super::exit::of_search(status, None, None));
        }
    }
    println!(
        "Open {}/report.html for the charts; the figures are in {}/capacity.json and one run \
         directory per trial under {}/trials.\n\
         One repeat per rate gives an upper bound: repeats (--repeats 3) and longer trials \
         (--duration 2m) give a capacity to plan by.",
        out.display(),
        out.display(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// How a quickstart with `--goal interval` ends: the bounds (or what stopped them) and
/// where the files are.
fn interval_end(
    status: Status,
    statement: &[String],
    took: f64,
    out: &Path,
    config: &SearchSettings,
) {
    let answer = statement.first().map(String::as_str).unwrap_or_default();
    println!("\n{answer}");
    println!(
        "On this machine, under SLA {}; {took:.1} minutes in all.",
        config.sla
    );
    if status == Status::Interrupted {
        println!(
            "Stopped: the bounds are those of the trials that finished; the files are in {}.",
            out.display()
        );
        return;
    }
    println!(
        "Open {}/report.html for the charts; the figures are in {}/capacity.json and one run \
         directory per trial under {}/trials. `headroom capacity` with longer \
         trials (--duration 2m) and a narrower --resolution gives bounds to plan by.",
        out.display(),
        out.display(),
        out.display()
    );
}

/// `--cpus` as the cluster takes it: the node's cores, `all`, or (absent) the default split;
/// with `--client-cpus` alone, the node gets every core but the client's.
fn node_cpus(args: &QuickstartArgs) -> Result<Vec<CpusFlag>, UsageError> {
    Ok(match (&args.cpus, &args.client_cpus) {
        (Some(choice), _) => vec![CpusFlag::Every(choice.clone())],
        (None, Some(CoreChoice::Only(client))) => match crate::cpus::machine().without(client) {
            Some(rest) => vec![CpusFlag::Every(CoreChoice::Only(rest))],
            None => {
                return Err(UsageError::new(format!(
                    "--client-cpus {client} takes every core this process may use, and \
                         leaves none to the node: give the node its own with --cpus, or \
                         --cpus all to let both run anywhere"
                )))
            }
        },
        (None, _) => Vec::new(),
    })
}

/// Where the node and the client run, in words.
fn cores_line(cluster: &ClusterConfig, client: Option<&Cores>) -> String {
    let machine = crate::cpus::machine();
    let node = cluster
        .placement
        .of_node(1)
        .map_or("any core".to_string(), cores_words);
    let client = client.map_or("any core".to_string(), cores_words);
    let mut line = format!("Cores: the node on {node}, the client on {client} (of {machine})");
    if cluster.placement.node_nice > 0 {
        line.push_str(&format!(
            "; the node at niceness {}, after the client",
            cluster.placement.node_nice
        ));
    }
    if let Some(remark) = cluster.placement.remark(machine) {
        line.push_str(&format!("; {remark}"));
    } else if cluster.placement.is_unbound() {
        line.push_str("; neither is bound (--cpus all)");
    }
    line
}

/// "core 1" or "cores 1-3".
fn cores_words(cores: &Cores) -> String {
    if cores.len() == 1 {
        format!("core {cores}")
    } else {
        format!("cores {cores}")
    }
}

/// What a quickstart records as the owner of the cluster it starts.
const OWNER: &str = "quickstart";

/// Checks the quickstart may use `dir` for its node, which it removes when it ends: a new
/// or empty directory, or one holding a node an earlier quickstart left behind (returned,
/// to be removed). A cluster anyone else started, a quickstart still running, or files
/// of any other kind are refused: the quickstart deletes only what it made.
fn claim_cluster_dir(dir: &Path) -> Result<Option<LocalCluster>, UsageError> {
    let refuse = |what: String| {
        UsageError::new(format!(
            "--cluster-dir {} {what}: the quickstart removes its node's directory when it ends, \
             so it needs one of its own. Give another --cluster-dir",
            dir.display()
        ))
    };
    if dir.exists() && !dir.is_dir() {
        return Err(refuse("is not a directory".to_string()));
    }
    match LocalCluster::open(dir) {
        Ok(cluster) => match cluster.owner() {
            Some(owner) if owner.command == OWNER && owner.is_alive() => Err(refuse(format!(
                "is in use by a quickstart still running (pid {})",
                owner.pid
            ))),
            Some(owner) if owner.command == OWNER => Ok(Some(cluster)),
            _ => Err(refuse(format!(
                "holds a cluster the quickstart did not start ({}; remove it with `headroom \
                 cluster destroy --dir {}` if it is no longer needed)",
                cluster.config().describe(),
                dir.display()
            ))),
        },
        Err(ClusterError::NoCluster { .. }) => {
            if crate::output_dir::may_leave_note(dir) {
                Ok(None)
            } else if dir.is_dir() {
                Err(refuse("holds other files".to_string()))
            } else {
                Err(refuse("is not a directory".to_string()))
            }
        }
        Err(e) => Err(refuse(format!("cannot be read as a cluster ({e})"))),
    }
}

/// headroom/quickstart-cluster under the user's local data directory.
fn default_cluster_dir() -> PathBuf {
    cluster::default_dir()
        .parent()
        .map(|p| p.join("quickstart-cluster"))
        .unwrap_or_else(|| PathBuf::from("quickstart-cluster"))
}

/// The capacity search the quickstart runs, checked like `headroom capacity`'s.
fn search_config(args: &QuickstartArgs, out: &std::path::Path) -> anyhow::Result<SearchSettings> {
    let duration = humantime::format_duration(args.duration).to_string();
    let warmup = humantime::format_duration(args.warmup).to_string();
    let populate = args.populate.to_string();
    let interval = args.goal == crate::cli::Goal::Interval;
    let resolution = args
        .resolution
        .unwrap_or(if interval { 0.20 } else { 0.10 })
        .to_string();
    let out = out.display().to_string();
    let mut line = vec![
        "capacity",
        "timeseries",
        "--read-ratio",
        "0.2",
        "--partitions",
        PARTITIONS,
        "--populate",
        &populate,
        "--sla",
        &args.sla,
        "--rates",
        "auto",
        "--resolution",
        &resolution,
        "--goal",
        if interval { "interval" } else { "strict" },
        "--duration",
        &duration,
        "--warmup",
        &warmup,
        "--probe-duration",
        PROBE,
        "--fresh",
        "none",
        "--out",
        &out,
    ];
    let repeats = args.repeats.map(|n| n.to_string());
    let exceed_ratio = args.exceed_ratio.map(|f| f.to_string());
    let confidence = args.confidence.map(|f| f.to_string());
    let given = [
        ("--repeats", repeats.as_deref()),
        ("--exceed-ratio", exceed_ratio.as_deref()),
        ("--confidence", confidence.as_deref()),
    ];
    for (flag, value) in given {
        if let Some(value) = value {
            line.extend([flag, value]);
        }
    }
    let parsed = CapacityLine::try_parse_from(line)?;
    let mut settings = settings::search_settings(&parsed.args)?;
    if let Some(goal) = &mut settings.interval {
        goal.max_trials = MAX_TRIALS;
    }
    Ok(settings)
}
