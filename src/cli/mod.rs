//! The command line: clap definitions only. The doc comments here are the `--help` text.
//!
//! Values are parsed into typed settings here (sizes, durations); checking them against
//! each other and filling in defaults happens where they become configurations
//! (e.g. [`crate::cluster::ClusterConfig::from_start_args`]).

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::cluster::GcKind;
use crate::engine::ArrivalKind;
use crate::units::{self, ByteSize};
use crate::workload::PartitionGenerator;

/// Load testing and capacity planning for Apache Cassandra.
///
/// headroom answers one question: how much traffic can a cluster carry while every window
/// still meets its service level? It can start real Cassandra nodes on this machine, so one
/// command takes you from nothing to an answer.
#[derive(Debug, Parser)]
#[command(
    name = "headroom",
    version,
    about,
    long_about,
    propagate_version = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `headroom`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start, inspect and stop real Cassandra nodes on this machine (127.0.0.1, 127.0.0.2, ...).
    ///
    /// The nodes run from Cassandra's jars on Maven Central, fetched once with the machine's
    /// Maven into headroom's cache, on the machine's JDK. A cluster lives in one directory
    /// (data, logs, configuration and the pids headroom recorded); every subcommand works on
    /// the cluster in --dir.
    Cluster(ClusterArgs),

    /// Drive a cluster with a workload at a fixed rate (open loop) or fixed concurrency
    /// (closed loop), print a line per interval and a summary, and keep every interval in
    /// standard files.
    ///
    /// At a fixed --rate, each request has an intended start on one global schedule and its
    /// latency is measured from there: time spent waiting in the client counts, so a server
    /// stall shows in full (no coordinated omission). Without --rate, --concurrency keeps that
    /// many requests in flight and latency is service time.
    ///
    /// The run directory (--out) gets config.json, histograms.hlog (HdrHistogram interval log,
    /// readable by HistogramLogProcessor and HistogramLogAnalyzer), intervals.csv, one .hgrm
    /// per operation type and summary.json, written as the run goes.
    ///
    /// Example: headroom run timeseries --rate 2k --duration 60s --warmup 10s -r 0.2
    Run(Box<RunArgs>),
}

/// `headroom cluster ...`
#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// The cluster's directory: configuration, data, logs and recorded pids of its nodes.
    /// [default: headroom/cluster under the user's local data directory,
    /// e.g. ~/.local/share/headroom/cluster]
    #[arg(long, global = true, env = "HEADROOM_CLUSTER_DIR", value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// What to do with the cluster.
    #[command(subcommand)]
    pub command: ClusterCommand,
}

/// The subcommands of `headroom cluster`.
#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Start a local cluster, or start again a stopped one that is in --dir.
    ///
    /// Node i listens on the i-th address from --first-address (127.0.0.1, 127.0.0.2, ...),
    /// CQL on port 9042, storage on port 7000, JMX on 127.0.0.1 port 7199 + 100 × (last octet
    /// − 1). The nodes start one after another; each must answer CQL before the next starts.
    /// They keep running after this command returns; stop them with `headroom cluster stop`.
    Start(StartArgs),
    /// Show each node: address, pid, process up or down, CQL reachable, Cassandra version,
    /// heap and garbage collector.
    Status,
    /// Stop every node headroom recorded in --dir (SIGTERM, then SIGKILL after --timeout).
    /// Data is kept; `cluster start` starts the same nodes again.
    Stop(StopArgs),
    /// Stop the nodes, then delete the cluster's directory with all its data and logs.
    Destroy(StopArgs),
    /// Run Cassandra's nodetool against one node, e.g. `headroom cluster nodetool 1 status`.
    Nodetool(NodetoolArgs),
    /// Print the end of one node's log (the node's console output at INFO level).
    Logs(LogsArgs),
}

/// `headroom cluster start`
#[derive(Debug, Args, Default, Clone)]
pub struct StartArgs {
    /// Number of nodes. [default: 1]
    #[arg(long, short = 'n', value_name = "N")]
    pub nodes: Option<u32>,

    /// Apache Cassandra release to run, as published on Maven Central
    /// (org.apache.cassandra:cassandra-all). Resolved once into the cache, offline after that.
    /// [default: 5.0.9, the newest 5.0 release]
    #[arg(long, value_name = "VERSION")]
    pub cassandra_version: Option<String>,

    /// Java heap of each node (-Xms and -Xmx), e.g. 2G or 768M.
    /// [default: a quarter of this machine's memory divided among the nodes, at most 4G,
    /// at least 1G]
    #[arg(long, value_name = "SIZE", value_parser = units::parse_heap)]
    pub heap: Option<ByteSize>,

    /// Garbage collector of each node's JVM. [default: g1]
    #[arg(long, value_enum, value_name = "GC")]
    pub gc: Option<GcKind>,

    /// Extra JVM option for every node, added after headroom's own; repeat for several,
    /// e.g. --jvm-opt=-XX:MaxGCPauseMillis=100.
    #[arg(long = "jvm-opt", value_name = "ARG", allow_hyphen_values = true)]
    pub jvm_opts: Vec<String>,

    /// A cassandra.yaml setting for every node, replacing headroom's where it has the key;
    /// repeat for several, e.g. --yaml authenticator=PasswordAuthenticator
    /// --yaml concurrent_writes=64. The value is YAML, written as is.
    #[arg(long, value_name = "KEY=VALUE")]
    pub yaml: Vec<String>,

    /// Address of the first node; node i gets this address plus i − 1. Must be in
    /// 127.0.0.0/8 with room for every node in its last octet. [default: 127.0.0.1]
    #[arg(long, value_name = "IPV4")]
    pub first_address: Option<Ipv4Addr>,

    /// How long one node may take from launch until it answers CQL.
    #[arg(long, value_name = "DURATION", default_value = "3m", value_parser = units::parse_duration)]
    pub start_timeout: Duration,
}

/// `headroom cluster stop` and `headroom cluster destroy`
#[derive(Debug, Args)]
pub struct StopArgs {
    /// How long each node may take to shut down after SIGTERM before it gets SIGKILL.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = units::parse_duration)]
    pub timeout: Duration,
}

/// `headroom cluster nodetool`
#[derive(Debug, Args)]
pub struct NodetoolArgs {
    /// The node, by number: 1 for the first node.
    #[arg(value_name = "NODE")]
    pub node: u32,

    /// nodetool's arguments, e.g. `status`, `tablestats ks.table`, `compact`.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true
    )]
    pub args: Vec<String>,
}

/// `headroom cluster logs`
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The node, by number: 1 for the first node.
    #[arg(value_name = "NODE")]
    pub node: u32,

    /// How many lines from the end to print; 0 prints the whole log.
    #[arg(long, short = 'n', default_value_t = 50, value_name = "N")]
    pub lines: usize,

    /// Print the JVM's GC and safepoint log instead of the node's log.
    #[arg(long)]
    pub gc: bool,
}

/// `headroom run`
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// The workload: keyvalue or timeseries.
    ///
    /// keyvalue: table keyvalue (key text PRIMARY KEY, value text); write inserts 100–200
    /// characters, read selects a key, delete deletes it. timeseries: table sensor_data
    /// (sensor_id text, timestamp timeuuid, data text), newest first; write inserts a row,
    /// read fetches a partition's latest 500 rows, delete removes its rows older than 60 s.
    #[arg(value_name = "WORKLOAD")]
    pub workload: String,

    /// Contact points, host[:port], comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "127.0.0.1:9042",
        value_name = "HOSTS"
    )]
    pub hosts: Vec<String>,

    /// Fixed rate in requests per second (open loop), e.g. 2000, 20k, 1.5M.
    #[arg(long, value_name = "RATE", value_parser = units::parse_rate)]
    pub rate: Option<f64>,

    /// Requests kept in flight at all times (closed loop), when no --rate is given.
    /// [default: 64]
    #[arg(long, value_name = "N", conflicts_with = "rate")]
    pub concurrency: Option<usize>,

    /// Spacing of intended starts at a fixed rate: evenly, or as a Poisson process.
    #[arg(long, value_enum, default_value = "fixed", value_name = "KIND")]
    pub arrivals: ArrivalKind,

    /// At a fixed rate, at most this many requests in flight; more wait in the client (and
    /// the wait counts in their response time).
    #[arg(long, default_value_t = 4096, value_name = "N")]
    pub max_in_flight: usize,

    /// At a fixed rate, requests whose intended starts lie within this span are sent
    /// together, when the last of them is due: fewer wake-ups and system calls per request,
    /// at the price of at most this much extra wait (which is measured and counted in
    /// response time). 0 sends every request at its own moment.
    #[arg(long, default_value = "0s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub send_resolution: Duration,

    /// Length of the measured run (after --warmup). [default: 60s unless --ops is given]
    #[arg(long, short = 'd', value_name = "DURATION", value_parser = units::parse_duration)]
    pub duration: Option<Duration>,

    /// Requests in the measured run, instead of a --duration.
    #[arg(long, value_name = "N", value_parser = units::parse_count, conflicts_with = "duration")]
    pub ops: Option<u64>,

    /// Load before the measured run, excluded from the results and logged on its own.
    #[arg(long, default_value = "0s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub warmup: Duration,

    /// Client threads (tokio workers). [default: the number of cores]
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Length of one interval: a live-output line and a histogram-log entry each.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub interval: Duration,

    /// Client-side timeout of one request; a request that takes longer counts as a timeout
    /// error.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub timeout: Duration,

    /// Connections to each node.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub connections: usize,

    /// Number of distinct partition keys, e.g. 100M.
    #[arg(long, short = 'p', default_value = "1M", value_name = "N", value_parser = units::parse_count)]
    pub partitions: u64,

    /// How partition keys are chosen: uniformly, normally around the middle, or in
    /// sequence (wrapping around).
    #[arg(long, value_enum, default_value = "random", value_name = "KIND")]
    pub partition_generator: PartitionGenerator,

    /// Fraction of requests that are reads, e.g. 0.2. The mix is exact over the run.
    #[arg(long, short = 'r', default_value_t = 0.0, value_name = "FRACTION")]
    pub read_ratio: f64,

    /// Fraction of requests that are deletes.
    #[arg(long, default_value_t = 0.0, value_name = "FRACTION")]
    pub delete_ratio: f64,

    /// Rows written before the run (as fast as the cluster takes them), reported on their own.
    #[arg(long, default_value = "0", value_name = "N", value_parser = units::parse_count)]
    pub populate: u64,

    /// Keyspace replication: simple:RF, nts:DC=RF[,DC=RF...], or a CQL map.
    #[arg(long, default_value = "simple:1", value_name = "REPLICATION")]
    pub replication: String,

    /// Table compaction: stcs, lcs, twcs, ucs, or a CQL map. [default: Cassandra's]
    #[arg(long, value_name = "COMPACTION")]
    pub compaction: Option<String>,

    /// Table default time to live, e.g. 1h.
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration)]
    pub ttl: Option<Duration>,

    /// Consistency level of every request.
    #[arg(long, default_value = "LOCAL_ONE", value_name = "LEVEL")]
    pub consistency: String,

    /// Drop and recreate the keyspace first (deletes its data).
    #[arg(long)]
    pub drop: bool,

    /// Seed of every value generator: the same seed sends the same requests.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,

    /// Keyspace of the workload's table.
    #[arg(long, default_value = "headroom", value_name = "NAME")]
    pub keyspace: String,

    /// Run directory. [default: runs/<timestamp>-<workload>]
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// User name, for a cluster that requires authentication.
    #[arg(long, value_name = "NAME", env = "HEADROOM_USERNAME")]
    pub username: Option<String>,

    /// Password, for a cluster that requires authentication.
    #[arg(
        long,
        value_name = "PASSWORD",
        env = "HEADROOM_PASSWORD",
        hide_env_values = true
    )]
    pub password: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn start_flags_parse_into_typed_values() {
        let cli = Cli::try_parse_from([
            "headroom",
            "cluster",
            "--dir",
            "/tmp/c",
            "start",
            "--nodes",
            "3",
            "--heap",
            "768M",
            "--gc",
            "zgc",
            "--jvm-opt=-XX:+AlwaysPreTouch",
            "--jvm-opt",
            "-Dfoo=bar",
            "--start-timeout",
            "90s",
        ])
        .unwrap();
        let Command::Cluster(args) = cli.command else {
            panic!("not cluster")
        };
        assert_eq!(args.dir, Some(PathBuf::from("/tmp/c")));
        let ClusterCommand::Start(start) = args.command else {
            panic!("not start")
        };
        assert_eq!(start.nodes, Some(3));
        assert_eq!(start.heap, Some(ByteSize::mib(768)));
        assert_eq!(start.gc, Some(GcKind::Zgc));
        assert_eq!(start.jvm_opts, ["-XX:+AlwaysPreTouch", "-Dfoo=bar"]);
        assert_eq!(start.start_timeout, Duration::from_secs(90));
    }

    #[test]
    fn nodetool_passes_its_arguments_through() {
        let cli = Cli::try_parse_from([
            "headroom",
            "cluster",
            "nodetool",
            "2",
            "tablestats",
            "-H",
            "ks.t",
        ])
        .unwrap();
        let Command::Cluster(args) = cli.command else {
            panic!("not cluster")
        };
        let ClusterCommand::Nodetool(nt) = args.command else {
            panic!("not nodetool")
        };
        assert_eq!(nt.node, 2);
        assert_eq!(nt.args, ["tablestats", "-H", "ks.t"]);
    }

    #[test]
    fn run_flags_parse_into_typed_values() {
        let cli = Cli::try_parse_from([
            "headroom",
            "run",
            "timeseries",
            "--rate",
            "2k",
            "--duration",
            "60s",
            "--warmup",
            "10s",
            "-r",
            "0.2",
            "-p",
            "100M",
            "--partition-generator",
            "sequence",
            "--populate",
            "200k",
        ])
        .unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.workload, "timeseries");
        assert_eq!(run.rate, Some(2000.0));
        assert_eq!(run.duration, Some(Duration::from_secs(60)));
        assert_eq!(run.warmup, Duration::from_secs(10));
        assert_eq!(run.read_ratio, 0.2);
        assert_eq!(run.partitions, 100_000_000);
        assert_eq!(run.partition_generator, PartitionGenerator::Sequence);
        assert_eq!(run.populate, 200_000);
        assert_eq!(run.hosts, ["127.0.0.1:9042"]);
    }

    #[test]
    fn rate_and_concurrency_exclude_each_other() {
        let err = Cli::try_parse_from([
            "headroom",
            "run",
            "keyvalue",
            "--rate",
            "1k",
            "--concurrency",
            "8",
        ])
        .unwrap_err();
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn bad_values_are_rejected_by_the_parser() {
        for bad in [
            vec!["headroom", "cluster", "start", "--heap", "lots"],
            vec!["headroom", "cluster", "start", "--gc", "cms"],
            vec![
                "headroom",
                "cluster",
                "start",
                "--first-address",
                "localhost",
            ],
            vec!["headroom", "cluster", "stop", "--timeout", "forever"],
            vec!["headroom", "cluster", "nodetool", "1"],
            vec!["headroom", "run", "keyvalue", "--rate", "fast"],
            vec!["headroom", "run", "keyvalue", "--duration", "a while"],
        ] {
            let err = Cli::try_parse_from(&bad).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?} should be a usage error");
        }
    }
}
