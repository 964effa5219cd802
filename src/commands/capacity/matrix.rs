//! `headroom capacity --matrix`: the whole capacity search once per configuration of a local
//! cluster. For each combination the matrix starts a fresh local cluster with that
//! configuration, runs the search into its own directory, keeps the nodes' GC and system logs
//! there, and removes the cluster again, whatever happened. At the end it compares the
//! configurations (compare.json, the tables) and writes one report of them all. The
//! `degraded` axis changes the search, not the cluster: `degraded=1` keeps one node of the
//! configuration's cluster down in every probe and trial (`capacity --degraded 1`).
//!
//! matrix.json is rewritten after every configuration; `--resume` keeps the finished ones
//! and starts the interrupted one again (its cluster is gone, so its data would be too).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::capacity::degraded;
use crate::capacity::dir::SearchData;
use crate::capacity::settings::{Fresh, SearchSettings};
use crate::capacity::{RatePlan, Status, Store};
use crate::catalogue::{CLUSTER, COMPARE_JSON, SERVER};
use crate::cli::CapacityArgs;
use crate::cluster::{ClusterConfig, ClusterSettings, LocalCluster, StartOptions};
use crate::commands::settings;
use crate::compare::matrix::{self, Entry, EntryStatus, MatrixFile};
use crate::compare::{compare, render};
use crate::live::Live;
use crate::usage::{usage_error, UsageError};

/// How long a node may take to stop before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(60);

/// Starts a new matrix from the command line and runs it.
pub fn run(
    args: &CapacityArgs,
    credentials: Option<(String, String)>,
    live: Option<&Live>,
) -> anyhow::Result<ExitCode> {
    let axes = matrix::parse(&args.matrix).map_err(UsageError::new)?;
    let compare_options = crate::commands::settings::compare_options(&args.cost)?;
    if compare_options.size_for == crate::compare::cost::SizeFor::Degraded
        && !axes
            .iter()
            .any(|a| a.key == "degraded" && a.values.len() > 1)
    {
        return Err(usage_error(
            "--size-for degraded prices each healthy configuration by its twin with a node \
             down: add the axis --matrix degraded=0,1",
        ));
    }
    let search = crate::commands::settings::search_settings(args)?;
    let base_cluster = ClusterSettings {
        nodes: args.cost.nodes,
        heap: args.heap,
        first_address: args.first_address,
        ..ClusterSettings::default()
    };
    let mut entries = Vec::new();
    for combination in matrix::combinations(&axes) {
        let start = combination.apply(&base_cluster).map_err(UsageError::new)?;
        // Every configuration is checked before the first one starts.
        let config = ClusterConfig::from_settings(&start, None)?;
        if let Some(nodes_down) = combination.nodes_down() {
            check_degraded(&search, &config, nodes_down, &combination.label)?;
        }
        entries.push(Entry {
            label: combination.label.clone(),
            dir: combination.dir_name.clone(),
            cluster: Some(config.describe()),
            combination,
            status: EntryStatus::Pending,
            error: None,
        });
    }
    let dir = args.output.out.clone().unwrap_or_else(|| {
        crate::output_dir::default_out_dir(&format!("matrix-{}", search.run.workload.name))
    });
    crate::output_dir::claim(&dir, args.output.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let cluster_dir = args
        .cluster_dir
        .clone()
        .unwrap_or_else(|| dir.join(CLUSTER));
    if LocalCluster::open(&cluster_dir).is_ok() {
        return Err(usage_error(format!(
            "{} holds a cluster already; the matrix starts and removes its own clusters: give \
             another --cluster-dir, or remove that one with `headroom cluster destroy --dir {}`",
            cluster_dir.display(),
            cluster_dir.display()
        )));
    }
    let file = MatrixFile {
        axes,
        base_cluster,
        cluster_dir,
        search,
        compare: compare_options,
        entries,
    };
    file.save(&dir)?;
    drive(&dir, file, credentials, live)
}

/// Continues the matrix in `dir`.
pub fn resume(
    dir: &Path,
    credentials: Option<(String, String)>,
    live: Option<&Live>,
) -> anyhow::Result<ExitCode> {
    let file = MatrixFile::load(dir)?;
    let done = file
        .entries
        .iter()
        .filter(|e| e.status == EntryStatus::Complete)
        .count();
    println!(
        "Resuming the matrix in {}: {done} of {} configurations done.",
        dir.display(),
        file.entries.len()
    );
    drive(dir, file, credentials, live)
}

fn drive(
    dir: &Path,
    mut file: MatrixFile,
    credentials: Option<(String, String)>,
    live: Option<&Live>,
) -> anyhow::Result<ExitCode> {
    let search = file.search.clone();
    let estimate = search.estimate().as_secs_f64() + 25.0;
    let left = file
        .entries
        .iter()
        .filter(|e| e.status != EntryStatus::Complete)
        .count();
    println!(
        "Configuration matrix: {} configurations ({}), a capacity search each on a local \
         cluster started for it. This takes about {:.0} minutes. Results: {}",
        file.entries.len(),
        file.entries
            .iter()
            .map(|e| e.label.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        (estimate * left as f64 / 60.0).ceil(),
        dir.display()
    );
    let cluster_dir = file.cluster_dir.clone();
    let mut interrupted = false;
    for i in 0..file.entries.len() {
        if file.entries[i].status == EntryStatus::Complete {
            continue;
        }
        let ladder_base = first_ceiling(dir, &file, &search);
        let entry_dir = dir.join(&file.entries[i].dir);
        // Left by an interrupted attempt: its cluster, and so its data, are gone.
        crate::output_dir::replace_unfinished(&entry_dir, false)?;
        file.entries[i].status = EntryStatus::Running;
        file.entries[i].error = None;
        file.save(dir)?;
        println!(
            "\n=== Configuration {} of {}: {} ===",
            i + 1,
            file.entries.len(),
            file.entries[i].label
        );
        let result = run_entry(
            &file,
            i,
            &search,
            ladder_base,
            &cluster_dir,
            &entry_dir,
            credentials.clone(),
            live,
        );
        match result {
            Ok(Status::Interrupted) => {
                file.entries[i].status = EntryStatus::Interrupted;
                interrupted = true;
            }
            Ok(Status::Invalid) => file.entries[i].status = EntryStatus::Invalid,
            Ok(_) => file.entries[i].status = EntryStatus::Complete,
            Err(e) => {
                eprintln!("The configuration {} failed: {e:#}", file.entries[i].label);
                file.entries[i].status = EntryStatus::Failed;
                file.entries[i].error = Some(format!("{e:#}"));
            }
        }
        file.save(dir)?;
        if interrupted {
            break;
        }
    }

    let searches: Vec<SearchData> = file
        .search_dirs(dir)
        .iter()
        .filter_map(|d| SearchData::load(d).ok())
        .collect();
    if searches.len() >= 2 {
        match compare(&searches, &file.compare) {
            Ok(comparison) => {
                println!("\n{}", render::text(&comparison));
                fs::write(
                    dir.join(COMPARE_JSON),
                    serde_json::to_string_pretty(&comparison)?,
                )
                .with_context(|| format!("writing {}", dir.join(COMPARE_JSON).display()))?;
            }
            Err(e) => eprintln!("The configurations could not be compared: {e:#}"),
        }
    }
    crate::commands::terminal::write_report(dir);
    let failed: Vec<&Entry> = file
        .entries
        .iter()
        .filter(|e| e.status == EntryStatus::Failed)
        .collect();
    for entry in &failed {
        println!(
            "{} failed: {}",
            entry.label,
            entry.error.as_deref().unwrap_or("")
        );
    }
    if interrupted {
        println!(
            "Interrupted. Finished configurations are kept in {}; continue with `headroom \
             capacity --resume {}`.",
            dir.display(),
            dir.display()
        );
        return Ok(ExitCode::from(crate::commands::exit::EXIT_INTERRUPTED));
    }
    println!(
        "Files: {} (matrix.json, compare.json, report.html, one search directory per \
         configuration)",
        dir.display()
    );
    let invalid: Vec<&str> = file
        .entries
        .iter()
        .filter(|e| e.status == EntryStatus::Invalid)
        .map(|e| e.label.as_str())
        .collect();
    if !invalid.is_empty() {
        println!(
            "No capacity for {}: the search stopped at a client-bound trial (invalid: the \
             client, not the cluster, limited it; see its capacity table).",
            invalid.join(", ")
        );
    }
    // --validate: a configuration that did not keep its data is marked whatever its capacity.
    let defective: Vec<&str> = searches
        .iter()
        .filter(|s| {
            s.summary
                .outcome
                .data
                .as_ref()
                .is_some_and(|d| d.defects > 0)
        })
        .map(|s| s.label.as_str())
        .collect();
    if !defective.is_empty() {
        println!(
            "The data of {} has defects (--validate): acknowledged writes lost, values \
             corrupt or reads stale where the levels forbid it; see capacity.json's `data`.",
            defective.join(", ")
        );
    }
    Ok(if !failed.is_empty() {
        ExitCode::from(1)
    } else if !defective.is_empty() {
        ExitCode::from(crate::commands::exit::EXIT_DATA_DEFECT)
    } else if !invalid.is_empty() {
        ExitCode::from(crate::commands::exit::EXIT_NO_VERDICT)
    } else {
        ExitCode::SUCCESS
    })
}

/// With `--rates auto`: the first configuration's probed ceiling, once it has one, so that
/// the others climb the same ladder.
fn first_ceiling(dir: &Path, file: &MatrixFile, search: &SearchSettings) -> Option<f64> {
    if !matches!(search.rates.plan(), RatePlan::Auto { .. }) {
        return None;
    }
    let first = file.entries.first()?;
    let data = SearchData::load(&dir.join(&first.dir)).ok()?;
    data.summary
        .outcome
        .probe
        .map(|p| p.achieved_per_s)
        .filter(|c| c.is_finite() && *c > 0.0)
}

/// One configuration: a fresh cluster, the search, the nodes' logs kept, the cluster
/// removed.
// The configuration, where it runs, and what the whole matrix shares (credentials, the live view).
#[allow(clippy::too_many_arguments)]
fn run_entry(
    file: &MatrixFile,
    i: usize,
    search: &SearchSettings,
    ladder_base: Option<f64>,
    cluster_dir: &Path,
    entry_dir: &Path,
    credentials: Option<(String, String)>,
    live: Option<&Live>,
) -> anyhow::Result<Status> {
    let entry = &file.entries[i];
    let start = entry
        .combination
        .apply(&file.base_cluster)
        .map_err(UsageError::new)?;
    let cluster_config = ClusterConfig::from_settings(&start, None)?;
    let matrix_dir = entry_dir.parent().unwrap_or(entry_dir);
    let owner = format!(
        "matrix {}",
        matrix_dir
            .canonicalize()
            .unwrap_or_else(|_| matrix_dir.to_path_buf())
            .display()
    );
    if let Ok(old) = LocalCluster::open(cluster_dir) {
        // Left by a matrix run that did not finish is removed; a cluster anyone else
        // started there since is not the matrix's to remove.
        match old.owner() {
            Some(o) if o.command == owner && !o.is_alive() => old.destroy(STOP_GRACE)?,
            _ => {
                return Err(usage_error(format!(
                    "{} holds a cluster the matrix did not leave there: remove it with \
                     `headroom cluster destroy --dir {}`, then resume",
                    cluster_dir.display(),
                    cluster_dir.display()
                )))
            }
        }
    }
    println!("Starting {}...", cluster_config.describe());
    let options = StartOptions {
        verbose: false,
        owner: Some(crate::cluster::state::Owner::this_process(owner)),
        ..StartOptions::default()
    };
    let mut cluster = LocalCluster::start(cluster_dir, cluster_config, &options)?;
    // From here on the nodes are stopped when `cluster` is dropped, whatever happens.
    let mut config = search.clone();
    config.label = Some(entry.label.clone());
    config.nodes = Some(cluster.config().nodes);
    config.cluster = Some(cluster.config().describe());
    config.ladder_base_per_s = ladder_base.filter(|_| i > 0);
    config.run.hosts = cluster
        .contact_points()
        .iter()
        .map(|a| a.to_string())
        .collect();
    // Cores named with --client-cpus were resolved with the search; otherwise the client
    // takes those this configuration's nodes left it.
    if config.run.client_cpus.is_none() {
        settings::with_placement_cores(&mut config.run, None, &cluster.config().placement)?;
    }
    config.degraded = entry
        .combination
        .nodes_down()
        .map(|n| degraded::choose(&cluster.nodes(), cluster.config().dcs, &config.run.hosts, n))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    if config.fresh == Fresh::Restart || config.degraded.is_some() {
        config.cluster_dir = Some(cluster_dir.to_path_buf());
    }
    let result = Store::create(entry_dir, serde_json::to_value(&config)?).and_then(|store| {
        crate::commands::terminal::search(&config, store, credentials, Some(&mut cluster), live)
    });
    keep_server_logs(&cluster, entry_dir);
    println!("Removing the cluster of {}...", entry.label);
    cluster.destroy(STOP_GRACE)?;
    result.map(|(status, _, _)| status)
}

/// Checks a configuration that keeps `nodes_down` nodes down before any starts: its
/// cluster has another node than the contact point to stop, and its keyspace keeps enough
/// replicas for the consistency level.
fn check_degraded(
    search: &SearchSettings,
    config: &ClusterConfig,
    nodes_down: u32,
    label: &str,
) -> anyhow::Result<()> {
    if search.run.validate && nodes_down > 0 {
        return Err(usage_error(format!(
            "--matrix configuration {label}: --validate with a node down: the final check \
             reads every row at ALL, which a node kept down cannot answer; validate the \
             configurations with every node up"
        )));
    }
    let specs = config.node_specs(Path::new(CLUSTER));
    let hosts: Vec<String> = specs.iter().map(|n| n.native_addr().to_string()).collect();
    degraded::choose(&specs, config.dcs, &hosts, nodes_down)
        .and_then(|_| degraded::check_replicas(&search.run.workload, nodes_down))
        .map_err(|why| usage_error(format!("--matrix configuration {label}: {why}")))
}

/// Copies each node's logs (gc.log*, system.log) into `<dir>/server/node<i>/`: the cluster's
/// own directory is removed with it. A copy that fails is said, not fatal.
fn keep_server_logs(cluster: &LocalCluster, dir: &Path) {
    for node in cluster.nodes() {
        let target: PathBuf = dir.join(SERVER).join(format!("node{}", node.index));
        let Ok(entries) = fs::read_dir(node.logs_dir()) else {
            continue;
        };
        if let Err(e) = fs::create_dir_all(&target) {
            eprintln!("Could not keep the logs of node {}: {e}", node.index);
            continue;
        }
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            let text = name.to_string_lossy();
            if text.starts_with("gc.log") || text == "system.log" {
                if let Err(e) = fs::copy(entry.path(), target.join(&name)) {
                    eprintln!("Could not keep {}: {e}", entry.path().display());
                }
            }
        }
    }
}
