//! The command line: clap definitions only. The doc comments here are the `--help` text.
//!
//! Values are parsed into typed settings here (sizes, durations); checking them against
//! each other and filling in defaults happens where they become configurations
//! (e.g. [`crate::cluster::ClusterConfig::from_start_args`]).

mod values;

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::capacity::settings::Fresh;
use crate::cluster::GcKind;
use crate::engine::ArrivalKind;
use crate::results::config::RunPhase;
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
    ///
    /// YCSB (docs/ycsb.md): headroom run ycsb -P workloads/workloadf --rate 5k
    ///
    /// cassandra-stress profile (docs/stress-profiles.md): headroom run profile.yaml --ops
    /// 'insert=1,simple1=9'
    ///
    /// headroom's own format (docs/workloads.md): headroom run workloads/keyvalue.yaml
    Run(Box<RunArgs>),

    /// Find the load-carrying capacity: the highest fixed rate at which every window of
    /// every repeat meets the SLA.
    ///
    /// Each trial is a full `run` at one attempted rate, with its own run directory. A trial
    /// passes when every window after the warmup meets --sla and the achieved rate is at
    /// least 99% of the attempted one. The capacity is the highest rate at which every
    /// repeat passed and every lower rate tried passed too; a pass above a failure is
    /// reported as unstable. Results are written after every trial (capacity.jsonl and
    /// capacity.json); Ctrl-C leaves a consistent result and --resume continues it.
    ///
    /// Example: headroom capacity timeseries -r 0.2 --sla 'p99.9<100ms' --rates 2k:12k:2k
    /// --repeats 3 --duration 2m
    Capacity(Box<CapacityArgs>),

    /// Find the concurrency where throughput stops growing: closed-loop steps at more and
    /// more requests in flight, as cassandra-stress's `-rate auto` (seed 001).
    ///
    /// Each step is a full closed-loop `run` with its own directory under steps/: a warmup,
    /// then a measured part that lasts until its throughput is stable (the standard error of
    /// the mean of the per-interval throughputs below --stable-error, and the second half of
    /// the step within twice that of the first; at least --step-min, at most --step-max), or
    /// exactly --step-duration. The sweep stops when the average improvement of the
    /// throughput over the last 3 steps is 0 or less, or over the last 5 steps below
    /// --stable-error; at the last concurrency; when a step fails entirely; or on Ctrl-C
    /// (exit code 130, every finished step kept). --populate writes its rows once, before
    /// the first step.
    ///
    /// The sweep's directory (--out) holds sweep.json (settings, steps, why it stopped),
    /// steps/concurrency-N/ and report.html: the table, throughput against concurrency and
    /// latency against throughput. Latencies of a closed loop are service times, which hide
    /// stalls (coordinated omission): judge an SLA with `capacity`, not with a sweep.
    ///
    /// Example: headroom sweep keyvalue --concurrency 4..256 --populate 100k
    ///
    /// Example: headroom sweep timeseries -r 0.2 --concurrency 8,16,32,64 --step-duration 20s
    Sweep(Box<SweepArgs>),

    /// From nothing to an answer: start a local Cassandra node, find the capacity of an
    /// 80% write / 20% read time-series workload under p99.9<100ms, write the results, stop
    /// the node.
    ///
    /// Takes about 5 minutes on a 2-core machine (plus about a minute the first time,
    /// to fetch Cassandra from Maven Central); it says how long at the start. Longer
    /// --duration and more --repeats make the answer more faithful.
    Quickstart(Box<QuickstartArgs>),

    /// Write an HTML report of run and capacity-search directories: one self-contained
    /// page with charts and tables, to read on screen, print or send.
    ///
    /// Give one directory or several: a run directory (from `run`), a capacity search's
    /// (from `capacity` or `quickstart`) or a concurrency sweep's (from `sweep`). Several capacity searches of the same workload, say
    /// one per garbage collector, are compared as configurations, each named after its
    /// directory. The page shows, where the directories hold the data:
    ///
    /// 1. the worst window's SLA percentile against the attempted rate, the SLA threshold
    ///    and each configuration's capacity;
    ///
    /// 2. latency percentiles (p50, p99, p99.9, max) against achieved throughput;
    ///
    /// 3. percentile spectra on a 90% / 99% / 99.9% axis with the SLA as a step line;
    ///
    /// 4. a timeline of each run: latency and throughput per interval, the warmup shaded,
    ///    failing SLA windows marked, client hiccups and errors;
    ///
    /// 5. throughput and latency against concurrency for several closed-loop runs;
    ///
    /// 6. for a sweep: its table, throughput against concurrency, and p50/p99/p99.9
    ///    against throughput;
    ///
    /// and the capacity table, each run's summary, SLA, errors by class and configuration.
    ///
    /// The page needs no network: inline SVG and CSS, no scripts or external fonts.
    ///
    /// Example: headroom report runs/capacity-g1 runs/capacity-zgc -o gc.html --svg charts/
    Report(ReportArgs),

    /// Compare capacity searches of one workload, one per configuration (garbage collector,
    /// heap, instance type, Cassandra version), as seeds 000 and 002 do: capacity and
    /// highest throughput per configuration, the worst window's SLA percentile per attempted
    /// rate, the change against a baseline with whether it is more than noise (Welch's
    /// t-test on per-window throughput, bootstrap intervals for the percentile), and with
    /// --node-price the cost per hour, capacity per dollar-hour and the nodes and yearly cost
    /// for --target-load.
    ///
    /// Prints the tables, writes compare.json and an HTML report (one line per configuration
    /// in each chart) to --out. Name searches with `capacity --label`.
    ///
    /// Example: headroom compare runs/c5d runs/c6gd --node-price c5d=0.576/h
    /// --node-price c6gd=0.461/h --target-load 100k
    Compare(Box<CompareArgs>),
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

/// Flags whose values are secrets: never written to a file, printed or shown in a report.
pub const SECRET_FLAGS: [&str; 1] = ["--password"];

/// What stands in for a secret in a recorded command line.
pub const REDACTED: &str = "<redacted>";

/// The command line as typed, with the value of every [`SECRET_FLAGS`] flag replaced by
/// [`REDACTED`] (`--password X` and `--password=X` alike), for config.json and the report.
pub fn redacted_command_line(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut secret_next = false;
    for arg in args {
        if std::mem::take(&mut secret_next) {
            out.push(REDACTED.to_string());
            continue;
        }
        match SECRET_FLAGS
            .iter()
            .find(|flag| arg == **flag || arg.starts_with(&format!("{flag}=")))
        {
            Some(flag) if arg == *flag => {
                secret_next = true;
                out.push(arg);
            }
            Some(flag) => out.push(format!("{flag}={REDACTED}")),
            None => out.push(arg),
        }
    }
    out
}

/// What `--ops` says: a count of requests, or a mix of named operations.
#[derive(Debug, Clone, PartialEq)]
pub enum OpsArg {
    /// Requests in the measured run.
    Count(u64),
    /// Operation names and their weights, in the order given.
    Mix(Vec<(String, f64)>),
}

/// Reads `--ops`: `20k`, or `insert=1,simple1=9` (cassandra-stress's `ops(insert=1,...)` too).
pub fn parse_ops(text: &str) -> Result<OpsArg, String> {
    let text = text.trim();
    if !text.contains('=') {
        return units::parse_count(text)
            .map(OpsArg::Count)
            .map_err(|e| e.to_string());
    }
    let inner = text
        .strip_prefix("ops(")
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(text);
    let mut mix = Vec::new();
    for item in inner.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, weight) = item
            .split_once('=')
            .ok_or_else(|| format!("'{item}': write each operation as NAME=WEIGHT"))?;
        let weight: f64 = weight
            .trim()
            .parse()
            .ok()
            .filter(|w: &f64| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| format!("'{item}': the weight must be a number, 0 or more"))?;
        mix.push((name.trim().to_string(), weight));
    }
    if mix.iter().all(|(_, w)| *w == 0.0) {
        return Err("at least one operation needs a weight above 0".into());
    }
    Ok(OpsArg::Mix(mix))
}

/// `--ops` of `capacity` and `sweep`: only a mix (their length is set otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct OpMixArg(pub Vec<(String, f64)>);

/// Reads a mix for `capacity` and `sweep`: `insert=1,simple1=9`.
pub fn parse_op_mix(text: &str) -> Result<OpMixArg, String> {
    match parse_ops(text)? {
        OpsArg::Mix(mix) => Ok(OpMixArg(mix)),
        OpsArg::Count(_) => Err(
            "here --ops is the mix of a profile's operations, e.g. 'insert=1,simple1=9'; the length of each run is set by its own flags"
                .into(),
        ),
    }
}

/// `headroom run`
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// Fixed rate in requests per second (open loop), e.g. 2000, 20k, 1.5M.
    #[arg(long, value_name = "RATE", value_parser = units::parse_rate)]
    pub rate: Option<f64>,

    /// Requests kept in flight at all times (closed loop), when no --rate is given.
    /// [default: 64]
    #[arg(long, value_name = "N", conflicts_with = "rate")]
    pub concurrency: Option<usize>,

    /// Length of the measured run (after --warmup). [default: 60s unless --ops is given;
    /// for ycsb, operationcount requests]
    #[arg(long, short = 'd', value_name = "DURATION", value_parser = units::parse_duration)]
    pub duration: Option<Duration>,

    /// Requests in the measured run, instead of a --duration; or, for a cassandra-stress
    /// profile, the mix of its operations by weight, e.g. 'insert=1,simple1=9'.
    #[arg(long, value_name = "N|OP=W,...", value_parser = parse_ops)]
    pub ops: Option<OpsArg>,

    /// Which phases to run: load (the populate alone: --populate rows, or YCSB's
    /// recordcount), run (the measured run alone, on data loaded before), or both.
    #[arg(long, value_enum, default_value = "both", value_name = "PHASE")]
    pub phase: RunPhase,

    /// Load before the measured run, excluded from the results and logged on its own.
    #[arg(long, default_value = "0s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub warmup: Duration,

    /// A service level to judge every window of the measured run against, e.g.
    /// 'p99.9<100ms, max<1s, errors<0.1%'. Terms: pNN (percentile of response time),
    /// max, mean, errors (failed / all requests, as a percentage); `op:term` judges one
    /// operation type only, e.g. read:p99<10ms.
    #[arg(long, value_name = "TERMS")]
    pub sla: Option<String>,

    /// Length of the windows the SLA is judged on, aligned to the end of the warmup; a
    /// whole number of intervals.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub window: Duration,

    /// What to send.
    #[command(flatten)]
    pub workload: WorkloadArgs,

    /// How to reach the cluster and how the client sends.
    #[command(flatten)]
    pub client: ClientArgs,

    /// Run directory. [default: runs/<timestamp>-<workload>]
    #[arg(long, short = 'o', value_name = "DIR", help_heading = "Output")]
    pub out: Option<PathBuf>,

    /// Empty --out first when it holds an earlier run's files (only a directory headroom
    /// wrote); without it such a directory is refused, so that two runs never mix.
    #[arg(long, help_heading = "Output")]
    pub force: bool,

    /// The local cluster headroom started whose nodes' GC logs give the run's server pauses
    /// (pauses.hlog and pauses.json in the run directory). Read when that cluster runs and
    /// every --hosts entry is one of its nodes; otherwise no pauses are recorded.
    /// [default: the one `headroom cluster` uses]
    #[arg(
        long,
        env = "HEADROOM_CLUSTER_DIR",
        value_name = "DIR",
        help_heading = "Output"
    )]
    pub cluster_dir: Option<PathBuf>,

    /// Also read Cassandra's own figures of the workload's table every DURATION while the
    /// load runs (at least 1s), besides just before and after: each node's system_views over
    /// CQL (read and write latency 50P/99P/max, the requests it counted), one line per
    /// reading in server-samples.jsonl. The summary gives each node's range of 99P and the
    /// rate it counted; the report draws them over the run beside the client's p99. The
    /// server's percentiles decay with a half-life of 60 s and step by 1 ms. [default: only
    /// before and after]
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = units::parse_duration,
        help_heading = "Output"
    )]
    pub server_stats_every: Option<Duration>,

    /// Maintenance during the run.
    #[command(flatten)]
    pub maintenance: MaintenanceArgs,
}

/// nodetool operations while the load goes on (`headroom run --during`).
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Maintenance")]
pub struct MaintenanceArgs {
    /// nodetool operations to run while the load goes on, as OPERATION@OFFSET, comma-separated,
    /// offsets from the start of the run (warmup included), e.g.
    /// 'compact@5m,repair@10m,garbagecollect@15m'. Operations: compact, repair,
    /// garbagecollect, flush, cleanup, each on the workload's keyspace. Each runs on every node
    /// of the cluster, one node after another; operations never overlap (one due while
    /// another runs starts when that ends). The nodes: those of the local cluster headroom
    /// started (--cluster-dir), or --jmx for another cluster. Each start and end is printed,
    /// and recorded with its wall time and exit status in maintenance.json; the report shades
    /// each on the run's timeline.
    #[arg(long, value_name = "OP@OFFSET,...")]
    pub during: Option<crate::maintenance::Plan>,

    /// JMX endpoints (host[:port], port 7199 by default) of every node, comma-separated, for
    /// --during against a cluster headroom did not start (JMX without authentication; the
    /// nodetool of headroom's default Cassandra release runs here).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "HOST:PORT",
        requires = "during"
    )]
    pub jmx: Vec<String>,

    /// How long an operation still running when the load ends is awaited before its
    /// nodetool is killed (the node finishes what it began).
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = units::parse_duration)]
    pub during_timeout: Duration,
}

/// The workload and its settings, shared by `run`, `capacity` and `quickstart`.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Workload")]
pub struct WorkloadArgs {
    /// The workload: keyvalue, timeseries, documents, ycsb, or a YAML file (a cassandra-stress user
    /// profile, or headroom's own format; see docs/workloads.md).
    ///
    /// keyvalue: table keyvalue (key text PRIMARY KEY, value text); write inserts 100–200
    /// characters, read selects a key, delete deletes it. timeseries: table sensor_data
    /// (sensor_id text, timestamp timeuuid, data text), newest first; write inserts a row,
    /// read fetches a partition's latest 500 rows, delete removes its rows older than 60 s.
    /// documents: table documents ((source, bucket), ts, seq, doc text): write inserts a JSON
    /// document of a few hundred bytes with a TTL (--ttl, default 8640 s) into partitions of
    /// --rows-per-partition rows ordered by time, TWCS unless --compaction; read (-r, default
    /// 0.05) fetches the newest 100 rows of a recent partition.
    /// ycsb: YCSB's core workloads on table ycsb.usertable (-P, -p, --workload).
    #[arg(value_name = "WORKLOAD", required = true)]
    pub name: Option<String>,

    /// Number of distinct partition keys, e.g. 100M.
    #[arg(long, default_value = "1M", value_name = "N", value_parser = units::parse_count)]
    pub partitions: u64,

    /// -p N: the number of partitions, as --partitions (tlp-stress). -p KEY=VALUE: a YCSB
    /// property, overriding the -P files and --workload (YCSB). Repeatable.
    #[arg(short = 'p', value_name = "N|KEY=VALUE", action = clap::ArgAction::Append)]
    pub p: Vec<String>,

    /// YCSB: a workload property file, as YCSB reads them (e.g. workloads/workloadf).
    /// Repeatable; later files override earlier ones.
    #[arg(short = 'P', long = "property-file", value_name = "FILE")]
    pub property_files: Vec<PathBuf>,

    /// YCSB: one of YCSB's core workloads, a to f, with the values of its own files.
    #[arg(long = "workload", value_name = "A-F")]
    pub ycsb_workload: Option<String>,

    /// The mix of a cassandra-stress profile's operations, set from --ops.
    #[arg(skip)]
    pub op_mix: Option<Vec<(String, f64)>>,

    /// How partition keys are chosen: uniformly, normally around the middle, or in
    /// sequence (wrapping around).
    #[arg(long, value_enum, default_value = "random", value_name = "KIND")]
    pub partition_generator: PartitionGenerator,

    /// Fraction of requests that are reads, e.g. 0.2. The mix is exact over the run.
    /// [default: 0; 0.05 for documents]
    #[arg(long, short = 'r', value_name = "FRACTION")]
    pub read_ratio: Option<f64>,

    /// documents: rows each partition receives before its source moves on to a new one.
    /// [default: 1000]
    #[arg(long, value_name = "N", value_parser = units::parse_count)]
    pub rows_per_partition: Option<u64>,

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
}

/// The connection to the cluster and the client's way of sending, shared by `run`,
/// `capacity` and `quickstart`.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Client")]
pub struct ClientArgs {
    /// Contact points, host[:port], comma-separated. [default: 127.0.0.1:9042]
    #[arg(long, value_delimiter = ',', value_name = "HOSTS")]
    pub hosts: Vec<String>,

    /// Spacing of intended starts at a fixed rate: evenly, or as a Poisson process.
    #[arg(long, value_enum, default_value = "fixed", value_name = "KIND")]
    pub arrivals: ArrivalKind,

    /// At a fixed rate, at most this many requests in flight; more wait in the client (and
    /// the wait counts in their response time).
    #[arg(long, default_value_t = 4096, value_name = "N")]
    pub max_in_flight: usize,

    /// At a fixed rate, requests whose intended starts lie within this span are sent
    /// together, when the last of them is due: fewer wake-ups and system calls per request,
    /// at the price of at most this much extra wait, which is measured and counted in
    /// response time. Rates below 1/DURATION are unaffected. 0 sends every request at its
    /// own moment: the most precise, about twice the client CPU per request at 10k/s.
    #[arg(long, default_value = "1ms", value_name = "DURATION", value_parser = units::parse_duration)]
    pub send_resolution: Duration,

    /// Client threads (tokio workers). [default: the number of cores]
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Length of one interval: a live-output line and a histogram-log entry each.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub interval: Duration,

    /// Client-side timeout of one request, from its send (a compound operation's steps
    /// together); a request that takes longer counts as a timeout error. Set-up statements
    /// (schema, reads of the server's tables) have the same limit.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub timeout: Duration,

    /// Connections to each node.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub connections: usize,

    /// What sends the measured requests. `native`: headroom's own CQL connections, about
    /// half the client CPU per request of the driver's path (protocol v4, password
    /// authentication, no TLS); built-in workloads only. `driver`: the scylla driver. `auto`:
    /// native for the built-in workloads, the driver for the others or when the native
    /// connections cannot be opened. Schema, prepare and the ring always go through the driver.
    #[arg(long, value_enum, default_value = "auto", value_name = "SENDER")]
    pub sender: crate::client::native::Sender,

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

/// The flags of `capacity` that `--resume` refuses: a resumed search keeps the settings it
/// was started with (search.json), so these would be silently ignored. Credentials are
/// accepted (they are never stored), and so is --cluster-dir (it can come from the
/// environment).
const RESUME_TAKES_NOTHING_ELSE: [&str; 46] = [
    "name",
    "ops",
    "sla",
    "window",
    "rates",
    "resolution",
    "repeats",
    "duration",
    "warmup",
    "probe_concurrency",
    "probe_duration",
    "fresh",
    "out",
    "label",
    "matrix",
    "first_address",
    "heap",
    "node_price",
    "nodes",
    "target_load",
    "partitions",
    "p",
    "property_files",
    "ycsb_workload",
    "partition_generator",
    "read_ratio",
    "rows_per_partition",
    "delete_ratio",
    "populate",
    "replication",
    "compaction",
    "ttl",
    "consistency",
    "drop",
    "seed",
    "keyspace",
    "hosts",
    "arrivals",
    "max_in_flight",
    "send_resolution",
    "threads",
    "interval",
    "timeout",
    "connections",
    "sender",
    "force",
];

/// `headroom capacity`
#[derive(Debug, Args, Clone)]
#[command(mut_arg("name", |a| a.required(false).required_unless_present("resume")))]
#[command(mut_arg("resume", |a| a.conflicts_with_all(RESUME_TAKES_NOTHING_ELSE)))]
pub struct CapacityArgs {
    /// For a cassandra-stress profile or a workload file: the mix of its operations by
    /// weight, e.g. 'insert=1,simple1=9'.
    #[arg(long, value_name = "OP=W,...", value_parser = parse_op_mix)]
    pub ops: Option<OpMixArg>,

    /// The service level every window of every trial must meet, e.g.
    /// 'p99.9<100ms, errors<0.1%' (terms as for `run --sla`).
    #[arg(long, default_value = "p99.9<100ms", value_name = "TERMS")]
    pub sla: String,

    /// Length of the windows the SLA is judged on.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub window: Duration,

    /// The attempted rates: `auto` (probe the highest throughput, climb a ladder of
    /// fractions of it, then bisect between the last pass and the first fail), a range
    /// START:STOP:STEP such as 20k:120k:10k, or a list such as 1000,2000,5000.
    #[arg(long, default_value = "auto", value_name = "RATES")]
    pub rates: String,

    /// With --rates auto, bisect until the gap between the highest pass and the lowest
    /// fail is at most this fraction of the fail, e.g. 2%.
    #[arg(long, default_value = "2%", value_name = "PERCENT")]
    pub resolution: String,

    /// Runs per attempted rate; a rate passes only when every repeat passes.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeats: u32,

    /// Measured length of each trial (a whole number of --window).
    #[arg(long, short = 'd', default_value = "60s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub duration: Duration,

    /// Load at the trial's rate before each measured part, excluded from the verdict.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub warmup: Duration,

    /// Requests in flight during the closed-loop probe of --rates auto.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub probe_concurrency: usize,

    /// Length of the closed-loop probe of --rates auto (after a warmup of a quarter of it).
    #[arg(long, default_value = "20s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub probe_duration: Duration,

    /// Before each trial: restart the local cluster with no data (only for a cluster
    /// headroom started, see --cluster-dir), truncate the workload's tables, or keep the
    /// data. The workload's --populate is repeated whenever the data is fresh.
    #[arg(long, value_enum, default_value = "none", value_name = "HOW")]
    pub fresh: Fresh,

    /// The local cluster to restart with --fresh restart. Its nodes' GC logs also give each
    /// trial's server pauses (pauses.hlog, pauses.json) when the trials load it (every
    /// --hosts entry one of its nodes). With --matrix: where each configuration's cluster
    /// lives while it runs.
    /// [default: the one `headroom cluster` uses; with --matrix, cluster/ in --out]
    #[arg(long, env = "HEADROOM_CLUSTER_DIR", value_name = "DIR")]
    pub cluster_dir: Option<PathBuf>,

    /// What to send.
    #[command(flatten)]
    pub workload: WorkloadArgs,

    /// How to reach the cluster and how the client sends.
    #[command(flatten)]
    pub client: ClientArgs,

    /// The search's directory: capacity.json, capacity.jsonl and one run directory per
    /// trial. [default: runs/<timestamp>-capacity-<workload>]
    #[arg(
        long,
        short = 'o',
        value_name = "DIR",
        conflicts_with = "resume",
        help_heading = "Output"
    )]
    pub out: Option<PathBuf>,

    /// Empty --out first when it holds an earlier run's files (only a directory headroom
    /// wrote); without it such a directory is refused, so that two runs never mix.
    #[arg(long, help_heading = "Output")]
    pub force: bool,

    /// Continue the interrupted (or failed) search in DIR with its own settings, without
    /// redoing the trials it finished; it takes no other flag but --username and
    /// --password. For a --matrix directory, finished configurations are kept and the
    /// interrupted one starts again.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub resume: Option<PathBuf>,

    /// The search's name in reports and comparisons, e.g. the instance type of the cluster
    /// at --hosts: searches run separately can then be compared with `headroom compare`.
    /// [default: the directory's name]
    #[arg(long, value_name = "NAME", help_heading = "Comparing configurations")]
    pub label: Option<String>,

    /// Run the whole search once per configuration of a local cluster that headroom starts,
    /// restarts and removes itself: KEY=V1,V2,... with KEY one of gc (g1, zgc, shenandoah,
    /// parallel), heap (e.g. 1G,2G), nodes (e.g. 1,3) or version (Cassandra versions).
    /// Repeat the flag for more keys; every combination runs, in the order given. All
    /// results go in one directory (--out) with matrix.json, one search directory per
    /// configuration, compare.json and one report. With --rates auto every configuration
    /// probes its own ceiling, but all climb the first configuration's ladder, so that
    /// their rates line up in the tables.
    ///
    /// Example: --matrix gc=g1,zgc,shenandoah --matrix heap=2G
    #[arg(
        long,
        value_name = "KEY=V1,V2",
        conflicts_with = "hosts",
        help_heading = "Comparing configurations"
    )]
    pub matrix: Vec<String>,

    /// With --matrix: the loopback address of the local cluster's first node (the others
    /// follow it). [default: 127.0.0.1]
    #[arg(
        long,
        value_name = "IPV4",
        requires = "matrix",
        help_heading = "Comparing configurations"
    )]
    pub first_address: Option<std::net::Ipv4Addr>,

    /// With --matrix: every node's JVM heap unless the matrix varies it, e.g. 2G.
    /// [default: as `headroom cluster start`]
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = units::parse_heap,
        requires = "matrix",
        help_heading = "Comparing configurations"
    )]
    pub heap: Option<units::ByteSize>,

    /// The price of the configurations.
    #[command(flatten)]
    pub cost: CostArgs,
}

/// What the tested configurations cost (`capacity --matrix` and `compare`).
#[derive(Debug, Args, Clone, Default)]
pub struct CostArgs {
    /// The price of one node: 0.576/h, 420/month or 5000/year; for one configuration when
    /// prices differ: zgc=0.576/h (repeat the flag). Gives the cluster's cost per hour and
    /// the capacity per dollar-hour.
    #[arg(long, value_name = "PRICE", help_heading = "Cost")]
    pub node_price: Vec<String>,

    /// The nodes of the tested cluster, for the cost of a search against --hosts (a local
    /// cluster's are known). With --matrix: the local cluster's nodes unless the matrix
    /// sets them. [default: 1]
    #[arg(long, value_name = "N", help_heading = "Cost")]
    pub nodes: Option<u32>,

    /// The load to plan for, e.g. 100k: the nodes each configuration needs to carry it at
    /// the SLA, and what they cost a year, assuming capacity grows with the nodes.
    #[arg(long, value_name = "RATE", help_heading = "Cost")]
    pub target_load: Option<String>,
}

/// `headroom compare`
#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// Capacity-search directories (from `capacity`, one per configuration), or a
    /// `capacity --matrix` directory (its configurations in order).
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,

    /// The configuration the others are measured against, by its label.
    /// [default: the first]
    #[arg(long, value_name = "LABEL")]
    pub baseline: Option<String>,

    /// Where compare.json and report.html go. [default: runs/<timestamp>-compare]
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Empty --out first when it holds an earlier run's files (only a directory headroom
    /// wrote); without it such a directory is refused, so that two runs never mix.
    #[arg(long)]
    pub force: bool,

    /// Print compare.json to standard output instead of the tables.
    #[arg(long)]
    pub json: bool,

    /// The price of the configurations.
    #[command(flatten)]
    pub cost: CostArgs,
}

/// `headroom sweep`
#[derive(Debug, Args, Clone)]
pub struct SweepArgs {
    /// For a cassandra-stress profile or a workload file: the mix of its operations by
    /// weight, e.g. 'insert=1,simple1=9'.
    #[arg(long, value_name = "OP=W,...", value_parser = parse_op_mix)]
    pub ops: Option<OpMixArg>,

    /// The requests in flight of each step: a range A..B starts at A and grows ×1.5 a step
    /// (rounded, always at least +1) while at most B, e.g. 4..1024 runs 4, 6, 9, 14, 20,
    /// 30, 46, 68, 103, 154, 231, 346, 519, 778; a list such as 4,8,16,32 runs exactly
    /// those, in that order.
    #[arg(long, default_value = "4..1024", value_name = "A..B|N,N,...")]
    pub concurrency: String,

    /// Measure every step for exactly this long instead of until its throughput is stable.
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration)]
    pub step_duration: Option<Duration>,

    /// A step is stable once the standard error of the mean of its per-interval throughputs
    /// is below this fraction of the mean (cassandra-stress's err<0.02), and the mean of its
    /// second half differs from the first half's by at most twice this. Also the least
    /// average improvement over the last 5 steps worth another step.
    #[arg(long, default_value = "2%", value_name = "PERCENT")]
    pub stable_error: String,

    /// The shortest measured part of a step run until stable (cassandra-stress's n>30).
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub step_min: Duration,

    /// The longest measured part of a step run until stable (cassandra-stress's n<200); a
    /// step that reaches it is marked "not stable" and counts all the same.
    #[arg(long, default_value = "200s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub step_max: Duration,

    /// Load before each step's measured part, at the step's concurrency, excluded from its
    /// results.
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub warmup: Duration,

    /// What to send.
    #[command(flatten)]
    pub workload: WorkloadArgs,

    /// How to reach the cluster and how the client sends.
    #[command(flatten)]
    pub client: ClientArgs,

    /// The sweep's directory: sweep.json, steps/concurrency-N/ and report.html.
    /// [default: runs/<timestamp>-sweep-<workload>]
    #[arg(long, short = 'o', value_name = "DIR", help_heading = "Output")]
    pub out: Option<PathBuf>,

    /// Empty --out first when it holds an earlier run's files (only a directory headroom
    /// wrote); without it such a directory is refused, so that two runs never mix.
    #[arg(long, help_heading = "Output")]
    pub force: bool,
}

/// `headroom report`
#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Run, capacity-search or sweep directories, shown in this order.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,

    /// The HTML file to write. [default: report.html in the first DIR]
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Also write each chart as its own SVG file into DIR, for slides.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,

    /// The page's title. [default: made from what the directories hold]
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
}

/// `headroom quickstart`
#[derive(Debug, Args, Clone)]
pub struct QuickstartArgs {
    /// The service level every window must meet.
    #[arg(long, default_value = "p99.9<100ms", value_name = "TERMS")]
    pub sla: String,

    /// Measured length of each trial; longer is more faithful.
    #[arg(long, short = 'd', default_value = "30s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub duration: Duration,

    /// Warmup before each trial.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = units::parse_duration)]
    pub warmup: Duration,

    /// Runs per attempted rate; more show how repeatable the answer is.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeats: u32,

    /// Bisect until the capacity is known to within this fraction.
    #[arg(long, default_value = "5%", value_name = "PERCENT")]
    pub resolution: String,

    /// Rows written before the search.
    #[arg(long, default_value = "100k", value_name = "N", value_parser = units::parse_count)]
    pub populate: u64,

    /// Apache Cassandra release to run. [default: 5.0.9]
    #[arg(long, value_name = "VERSION")]
    pub cassandra_version: Option<String>,

    /// Java heap of the node. [default: a quarter of this machine's memory, at most 4G]
    #[arg(long, value_name = "SIZE", value_parser = units::parse_heap)]
    pub heap: Option<ByteSize>,

    /// Garbage collector of the node's JVM. [default: g1]
    #[arg(long, value_enum, value_name = "GC")]
    pub gc: Option<GcKind>,

    /// Where the node lives while the quickstart runs; deleted at the end.
    /// [default: headroom/quickstart-cluster under the user's local data directory]
    #[arg(long, value_name = "DIR")]
    pub cluster_dir: Option<PathBuf>,

    /// The search's directory. [default: runs/<timestamp>-quickstart]
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Empty --out first when it holds an earlier run's files (only a directory headroom
    /// wrote); without it such a directory is refused, so that two runs never mix.
    #[arg(long)]
    pub force: bool,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    /// clap's own checks of the definitions (conflicting settings, unknown argument ids).
    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_recorded_command_line_never_holds_the_password() {
        let line =
            |args: &[&str]| redacted_command_line(args.iter().map(|a| a.to_string())).join(" ");
        assert_eq!(
            line(&[
                "headroom",
                "run",
                "kv",
                "--password",
                "s3cret",
                "--rate",
                "10"
            ]),
            "headroom run kv --password <redacted> --rate 10"
        );
        assert_eq!(
            line(&["headroom", "run", "--password=s3cret", "kv"]),
            "headroom run --password=<redacted> kv"
        );
        assert_eq!(
            line(&["headroom", "run", "kv", "--password"]),
            "headroom run kv --password"
        );
        // Only the flag itself: a workload named like it, or another flag, is kept.
        assert_eq!(
            line(&["headroom", "run", "--passwords", "x"]),
            "headroom run --passwords x"
        );
    }

    #[test]
    fn resume_refuses_the_flags_it_would_ignore() {
        for flag in [
            &["--hosts", "10.0.0.1"][..],
            &["--rates", "1k"],
            &["keyvalue"],
            &["-d", "5s"],
        ] {
            let mut line = vec!["headroom", "capacity", "--resume", "runs/x"];
            line.extend_from_slice(flag);
            let err = Cli::try_parse_from(&line).unwrap_err();
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::ArgumentConflict,
                "{flag:?}"
            );
            assert!(err.to_string().contains("--resume"), "{err}");
        }
        assert!(Cli::try_parse_from([
            "headroom",
            "capacity",
            "--resume",
            "runs/x",
            "--username",
            "u",
            "--password",
            "p"
        ])
        .is_ok());
        // Every id in the list is one of capacity's arguments.
        let command = Cli::command();
        let capacity = command.find_subcommand("capacity").unwrap();
        for id in RESUME_TAKES_NOTHING_ELSE {
            assert!(
                capacity.get_arguments().any(|a| a.get_id() == id),
                "{id} is not an argument of capacity"
            );
        }
        // ...and every argument but these is in the list: a new flag must choose.
        let accepted = [
            "resume",
            "username",
            "password",
            "cluster_dir",
            "help",
            "version",
        ];
        for arg in capacity.get_arguments() {
            let id = arg.get_id().as_str();
            assert!(
                accepted.contains(&id) || RESUME_TAKES_NOTHING_ELSE.contains(&id),
                "does --resume take {id}?"
            );
        }
    }

    #[test]
    fn capacity_needs_a_workload_unless_it_resumes() {
        assert!(Cli::try_parse_from(["headroom", "capacity"]).is_err());
        let resumed = Cli::try_parse_from(["headroom", "capacity", "--resume", "runs/x"]).unwrap();
        let Command::Capacity(args) = resumed.command else {
            panic!("not capacity")
        };
        assert_eq!(args.resume.as_deref(), Some(std::path::Path::new("runs/x")));
        assert!(args.workload.name.is_none());
        assert!(Cli::try_parse_from(["headroom", "run"]).is_err());
    }

    #[test]
    fn ops_is_a_count_or_a_mix() {
        assert_eq!(parse_ops("20k"), Ok(OpsArg::Count(20_000)));
        let mix = OpsArg::Mix(vec![("insert".into(), 1.0), ("simple1".into(), 9.0)]);
        assert_eq!(parse_ops("insert=1,simple1=9").as_ref(), Ok(&mix));
        assert_eq!(parse_ops("ops(insert=1, simple1=9)").as_ref(), Ok(&mix));
        assert!(parse_ops("insert=x").unwrap_err().contains("number"));
        assert!(parse_ops("insert=0").is_err());
        assert!(parse_ops("many").is_err());
    }

    #[test]
    fn capacity_and_sweep_take_a_mix_but_no_count() {
        let cli =
            Cli::try_parse_from(["headroom", "sweep", "p.yaml", "--ops", "insert=1,q=3"]).unwrap();
        let Command::Sweep(args) = cli.command else {
            panic!("not sweep")
        };
        assert_eq!(
            args.ops,
            Some(OpMixArg(vec![("insert".into(), 1.0), ("q".into(), 3.0)]))
        );
        let err =
            Cli::try_parse_from(["headroom", "capacity", "p.yaml", "--ops", "1000"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("the mix of a profile's operations"),
            "{err}"
        );
    }

    #[test]
    fn dash_p_is_partitions_or_a_property() {
        let cli = Cli::try_parse_from([
            "headroom",
            "run",
            "ycsb",
            "-P",
            "w",
            "-p",
            "recordcount=5",
            "-p",
            "10k",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(args.workload.p, ["recordcount=5", "10k"]);
        assert_eq!(args.workload.property_files, [PathBuf::from("w")]);
        assert_eq!(args.phase, RunPhase::Both);
    }
}
