//! `headroom cluster ...`: start, status, stop, destroy, nodetool, logs.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::cli::{ClusterArgs, ClusterCommand, LogsArgs, NodetoolArgs, StartArgs};
use crate::cluster::state::ClusterState;
use crate::cluster::{
    self, probe, process, ClusterConfig, ClusterSettings, LocalCluster, StartOptions,
};

/// Runs one `headroom cluster` subcommand.
pub fn run(mut args: ClusterArgs) -> anyhow::Result<ExitCode> {
    if let ClusterCommand::Nodetool(nodetool) = &mut args.command {
        // nodetool's arguments run to the end of the line, so a --dir after them lands among
        // them: it is headroom's (nodetool has no --dir).
        // As with any flag given twice, the last one counts (and over HEADROOM_CLUSTER_DIR).
        if let Some(dir) = take_dir_flag(&mut nodetool.args)? {
            args.dir = Some(dir);
        }
        if nodetool.args.is_empty() {
            return Err(crate::usage::UsageError::new(
                "cluster nodetool NODE ARGS: give nodetool's arguments, e.g. status",
            )
            .into());
        }
    }
    let dir = args.dir.unwrap_or_else(cluster::default_dir);
    if dir.exists() && !dir.is_dir() {
        return Err(crate::usage::UsageError::new(format!(
            "--dir {} is a file, not a cluster's directory: give the directory `headroom \
             cluster start` made (or a new one to start in)",
            dir.display()
        ))
        .into());
    }
    match args.command {
        ClusterCommand::Start(start) => start_cluster(&dir, &start),
        ClusterCommand::Status => {
            let cluster = LocalCluster::open(&dir)?;
            print_status(&cluster)?;
            Ok(ExitCode::SUCCESS)
        }
        ClusterCommand::Stop(stop) => {
            let mut cluster = LocalCluster::open(&dir)?;
            let running = cluster.running_pids().len();
            cluster.stop(stop.timeout)?;
            println!(
                "Stopped {running} running node(s) of the cluster in {}; its data is kept.",
                dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        ClusterCommand::Destroy(stop) => {
            let cluster = LocalCluster::open(&dir)?;
            cluster.destroy(stop.timeout)?;
            println!(
                "Destroyed the cluster in {}: nodes stopped, data and logs removed.",
                dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        ClusterCommand::Nodetool(nodetool) => run_nodetool(&dir, &nodetool),
        ClusterCommand::Logs(logs) => print_logs(&dir, &logs),
    }
}

fn start_cluster(dir: &Path, args: &StartArgs) -> anyhow::Result<ExitCode> {
    let stored = ClusterState::load(dir)?.map(|s| s.config);
    let config = ClusterConfig::from_settings(&cluster_settings(args), stored.as_ref())?;
    let options = StartOptions {
        node_timeout: args.start_timeout,
        ..StartOptions::default()
    };
    let cluster = LocalCluster::start(dir, config, &options)?;
    print_status(&cluster)?;
    let dir_flag = dir_flag(cluster.dir());
    println!(
        "\nThe nodes keep running. Contact points: {}",
        join(cluster.contact_points())
    );
    println!("Stop them with `headroom cluster stop{dir_flag}`; remove them with `headroom cluster destroy{dir_flag}`.");
    cluster.keep_running();
    Ok(ExitCode::SUCCESS)
}

/// Takes `--dir DIR` or `--dir=DIR` out of nodetool's arguments.
fn take_dir_flag(
    args: &mut Vec<String>,
) -> Result<Option<std::path::PathBuf>, crate::usage::UsageError> {
    let mut dir = None;
    let mut i = 0;
    while i < args.len() {
        if let Some(value) = args[i].strip_prefix("--dir=") {
            dir = Some(std::path::PathBuf::from(value));
            args.remove(i);
        } else if args[i] == "--dir" {
            let Some(value) = args.get(i + 1).cloned() else {
                return Err(crate::usage::UsageError::new("--dir needs a directory"));
            };
            dir = Some(std::path::PathBuf::from(value));
            args.drain(i..i + 2);
        } else {
            i += 1;
        }
    }
    Ok(dir)
}

/// The flags of `cluster start` as the library takes them.
pub fn cluster_settings(args: &StartArgs) -> ClusterSettings {
    ClusterSettings {
        nodes: args.nodes,
        dcs: args.dcs,
        cassandra_version: args.cassandra_version.clone(),
        heap: args.heap,
        gc: args.gc,
        jvm_opts: args.jvm_opts.clone(),
        yaml: args.yaml.clone(),
        first_address: args.first_address,
        cpus: args.cpus.clone(),
        nice: args.nice,
        auth: args.auth.then_some(true),
        tls: match (args.tls, args.tls_client_auth) {
            (_, true) => Some(cluster::ClientTls::RequiredWithClientCertificate),
            (true, false) => Some(cluster::ClientTls::Required),
            (false, false) => None,
        },
    }
}

/// ` --dir DIR` when `dir` is not the default, for commands printed as advice.
fn dir_flag(dir: &Path) -> String {
    let default = cluster::default_dir();
    let is_default = default.canonicalize().ok().as_deref() == dir.canonicalize().ok().as_deref();
    if is_default {
        String::new()
    } else {
        format!(" --dir {}", dir.display())
    }
}

fn join<T: ToString>(items: impl IntoIterator<Item = T>) -> String {
    items
        .into_iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row of `cluster status`.
struct NodeRow {
    index: u32,
    address: String,
    pid: Option<u32>,
    cql: Result<String, String>,
}

fn print_status(cluster: &LocalCluster) -> anyhow::Result<()> {
    let config = cluster.config();
    let rows = node_rows(cluster)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "Cluster in {}", cluster.dir().display())?;
    writeln!(
        out,
        "  {}; Java {}",
        config.describe(),
        cluster.java_description()
    )?;
    if config.dcs > 1 {
        let per_dc = config.nodes_per_dc();
        let each: Vec<String> = config
            .datacenters()
            .iter()
            .enumerate()
            .map(|(i, (dc, _))| {
                let first = i as u32 * per_dc + 1;
                format!("{dc} (nodes {first}-{})", first + per_dc - 1)
            })
            .collect();
        writeln!(out, "  data centres: {}", each.join(", "))?;
    }
    if config.tls.is_on() {
        let dir = cluster.dir();
        let client = if config.tls.requires_client_certificate() {
            format!(
                "; client certificate required: {} with its key {}",
                cluster::tls::client_cert_path(dir).display(),
                cluster::tls::client_key_path(dir).display()
            )
        } else {
            String::new()
        };
        writeln!(
            out,
            "  TLS required on CQL; CA {}{client}",
            cluster::tls::ca_path(dir).display()
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<5} {:<15} {:>8} {:<8} {:<5} {:<9} {:<6} {:<11} {:<9} {:>4} {:>9} {:>9}",
        "NODE",
        "ADDRESS",
        "PID",
        "PROCESS",
        "CQL",
        "VERSION",
        "HEAP",
        "GC",
        "CORES",
        "NICE",
        "RSS",
        "PEAK RSS"
    )?;
    let mut problems = Vec::new();
    for row in &rows {
        let (cql, version) = match &row.cql {
            Ok(version) => ("yes", version.clone()),
            Err(reason) => {
                if row.pid.is_some() {
                    problems.push(format!("node {}: CQL does not answer: {reason}", row.index));
                }
                ("no", "-".to_string())
            }
        };
        let memory = row.pid.and_then(process::memory);
        // What the kernel lets the running JVM use; the recorded cores of a node that is down.
        let cores = row
            .pid
            .and_then(crate::cpus::of_process)
            .or_else(|| config.placement.of_node(row.index).cloned())
            .map_or("any".to_string(), |c| c.to_string());
        // Likewise the niceness the kernel gives it, or the recorded one.
        let nice = row
            .pid
            .and_then(crate::cpus::niceness_of)
            .unwrap_or(config.placement.node_nice);
        let mib = |bytes: u64| format!("{} MiB", bytes >> 20);
        writeln!(
            out,
            "{:<5} {:<15} {:>8} {:<8} {:<5} {:<9} {:<6} {:<11} {:<9} {:>4} {:>9} {:>9}",
            row.index,
            row.address,
            row.pid.map_or("-".to_string(), |p| p.to_string()),
            if row.pid.is_some() { "up" } else { "down" },
            cql,
            version,
            config.heap.to_jvm(),
            config.gc.name(),
            cores,
            nice,
            memory.map_or("-".to_string(), |(rss, _)| mib(rss)),
            memory.map_or("-".to_string(), |(_, peak)| mib(peak)),
        )?;
    }
    for problem in problems {
        writeln!(out, "  {problem}")?;
    }
    Ok(())
}

fn node_rows(cluster: &LocalCluster) -> anyhow::Result<Vec<NodeRow>> {
    let nodes = cluster.nodes();
    let pids: Vec<Option<u32>> = nodes.iter().map(|n| cluster.pid(n.index)).collect();
    let login = cluster::auth::login(cluster);
    let tls = cluster::tls::probe_tls(cluster)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    // One session per node, knowing only that node, so each answers for itself even while
    // the others' gossip is still settling.
    let versions: Vec<Result<String, String>> = nodes
        .iter()
        .zip(&pids)
        .map(|(node, pid)| match pid {
            None => Err("not running".to_string()),
            Some(_) => runtime.block_on(async {
                let session = probe::connect(
                    &[node.native_addr()],
                    Duration::from_secs(5),
                    login
                        .as_ref()
                        .map(cluster::auth::Credentials::user_and_password),
                    tls.clone(),
                )
                .await?;
                probe::release_version(&session, node.native_addr()).await
            }),
        })
        .collect();
    Ok(nodes
        .iter()
        .zip(pids)
        .zip(versions)
        .map(|((node, pid), cql)| NodeRow {
            index: node.index,
            address: node.address.to_string(),
            pid,
            cql,
        })
        .collect())
}

fn run_nodetool(dir: &Path, args: &NodetoolArgs) -> anyhow::Result<ExitCode> {
    let cluster = LocalCluster::open(dir)?;
    let spec = cluster.node(args.node)?;
    if cluster.pid(args.node).is_none() {
        anyhow::bail!(
            "node {} ({}) is not running; start the cluster with `headroom cluster start{}`",
            args.node,
            spec.address,
            dir_flag(dir)
        );
    }
    let status = cluster
        .nodetool(args.node)?
        .args(&args.args)
        .status()
        .context("running nodetool")?;
    Ok(ExitCode::from(
        status.code().map_or(1, |c| c.clamp(0, 255) as u8),
    ))
}

fn print_logs(dir: &Path, args: &LogsArgs) -> anyhow::Result<ExitCode> {
    let cluster = LocalCluster::open(dir)?;
    let spec = cluster.node(args.node)?;
    let path = if args.gc {
        spec.gc_log_path()
    } else {
        spec.log_path()
    };
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let start = if args.lines == 0 {
        0
    } else {
        lines.len().saturating_sub(args.lines)
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "==> {} <==", path.display())?;
    for line in &lines[start..] {
        writeln!(out, "{line}")?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dir_after_nodetools_arguments_is_headrooms() {
        let mut args: Vec<String> = ["tablestats", "ks.t", "--dir", "/tmp/c", "-H"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            take_dir_flag(&mut args).unwrap(),
            Some(std::path::PathBuf::from("/tmp/c"))
        );
        assert_eq!(args, ["tablestats", "ks.t", "-H"]);
        let mut args: Vec<String> = ["status", "--dir=/x"].map(String::from).to_vec();
        assert_eq!(take_dir_flag(&mut args).unwrap(), Some("/x".into()));
        assert_eq!(args, ["status"]);
        let mut args: Vec<String> = ["status"].map(String::from).to_vec();
        assert_eq!(take_dir_flag(&mut args).unwrap(), None);
        let mut args: Vec<String> = ["status", "--dir"].map(String::from).to_vec();
        assert!(take_dir_flag(&mut args).is_err());
    }
}
