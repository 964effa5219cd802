//! `headroom run`: one run of a workload, and the maintenance it may run during the load.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use clap::Args;

use super::ranges;
use super::{
    parse_ops, ClientArgs, ConnectionArgs, LiveArgs, OpsArg, OutputArgs, SlaArgs, WorkloadArgs,
};
use crate::limits;
use crate::results::config::RunPhase;

/// `headroom run`
#[derive(Debug, Args, Clone)]
#[command(mut_arg("out", |a| a.help("Run directory. [default: runs/<timestamp>-<workload>]")))]
#[command(mut_arg("name", |a| a.required(false).required_unless_present("config")))]
pub struct RunArgs {
    /// Fixed rate in requests per second (open loop), e.g. 2000, 20k, 1.5M. [range: 0.001
    /// to 1G]
    #[arg(long, value_name = "RATE", value_parser = ranges::rate(limits::RATE.0, limits::RATE.1))]
    pub rate: Option<f64>,

    /// Requests kept in flight at all times (closed loop), when no --rate is given. [range:
    /// 1 to 1M] [default: 64]
    #[arg(long, value_name = "N", conflicts_with = "rate", value_parser = ranges::count::<usize>(limits::CONCURRENCY.0, limits::CONCURRENCY.1))]
    pub concurrency: Option<usize>,

    /// Length of the measured run (after --warmup). [range: 10ms to 30d; at least one
    /// --interval] [default: 60s unless --ops is given; for ycsb, operationcount requests]
    #[arg(long, short = 'd', value_name = "DURATION", value_parser = ranges::duration(limits::RUN_DURATION.0, limits::RUN_DURATION.1))]
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
    /// [range: 0s to 24h]
    #[arg(long, default_value = "0s", value_name = "DURATION", value_parser = ranges::duration(limits::RUN_WARMUP.0, limits::RUN_WARMUP.1))]
    pub warmup: Duration,

    /// The service level and its windows.
    #[command(flatten)]
    pub sla: SlaArgs,

    /// What to send.
    #[command(flatten)]
    pub workload: WorkloadArgs,

    /// The cluster and the credentials.
    #[command(flatten)]
    pub connection: ConnectionArgs,

    /// How the client sends.
    #[command(flatten)]
    pub client: ClientArgs,

    /// The run directory.
    #[command(flatten)]
    pub output: OutputArgs,

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
    /// load runs, besides just before and after: each node's system_views over
    /// CQL (read and write latency 50P/99P/max, the requests it counted), one line per
    /// reading in server-samples.jsonl. The summary gives each node's range of 99P and the
    /// rate it counted; the report draws them over the run beside the client's p99. The
    /// server's percentiles decay with a half-life of 60 s and step by 1 ms. [range: 1s to
    /// 1h] [default: only before and after]
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = ranges::duration(limits::SERVER_STATS_EVERY.0, limits::SERVER_STATS_EVERY.1),
        help_heading = "Output"
    )]
    pub server_stats_every: Option<Duration>,

    /// Watching it live.
    #[command(flatten)]
    pub live: LiveArgs,

    /// The run's name in its metrics' `run` label (and its Pushgateway group).
    /// [default: the run directory's name]
    #[arg(long, value_name = "NAME", help_heading = "Watching it live")]
    pub label: Option<String>,

    /// Check the data as well as the time: every write is recorded (its value names the
    /// request that wrote it), every read's answer is checked against them (a value no
    /// write produced is corrupt; one older than a write acknowledged before the read was
    /// sent is stale, a defect where write and read levels overlap, W + R > RF), and after
    /// the load every row is read back at ALL to count the acknowledged writes the cluster
    /// lost. summary.json's `validation`; exit code 5 on a defect. For keyvalue, timeseries
    /// and YCSB (values of at least 29 characters), open loop (--rate), without deletes or
    /// --ttl; see docs/validation.md.
    #[arg(long, help_heading = "Checking the data", conflicts_with = "worker")]
    pub validate: bool,

    /// Maintenance during the run.
    #[command(flatten)]
    pub maintenance: MaintenanceArgs,

    /// A fleet's worker.
    #[command(flatten)]
    pub fleet: FleetWorkerArgs,
}

/// One worker of a fleet of client processes that send one schedule together.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Fleet")]
pub struct FleetWorkerArgs {
    /// Run the settings of a config.json (a file, or the run directory holding it): an
    /// earlier run repeated, or a fleet's workers all running one. Only --worker,
    /// --start-at, --phase, --out, --force, the credentials and --cluster-dir may come with
    /// it; everything else is the file's.
    #[arg(long, value_name = "FILE|DIR")]
    pub config: Option<PathBuf>,

    /// Be worker K of a fleet of N processes (on this machine or others) that send the
    /// schedule of --rate together: this one sends exactly the requests i ≡ K−1 (mod N), so
    /// the N together send what one process would (the same Poisson arrivals too), and
    /// writes its share of the --populate rows. Needs --start-at. Merge the workers' run
    /// directories with `headroom merge`; `headroom capacity --workers N` does all of it.
    #[arg(long, value_name = "K/N", value_parser = parse_worker, requires = "start_at")]
    pub worker: Option<(u32, u32)>,

    /// When the fleet's schedule starts, the same for every worker: an RFC 3339 time
    /// (2026-11-26T17:00:00Z) or +DURATION from now (+30s). A worker connects, prepares and
    /// populates, then waits for it; one ready more than a second after it refuses to run.
    /// Clocks of different machines must agree (NTP): the merge warns of a skew.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at_now, requires = "worker")]
    pub start_at: Option<SystemTime>,
}

fn parse_worker(text: &str) -> Result<(u32, u32), String> {
    crate::fleet::worker::parse_worker(text)
}

fn parse_start_at_now(text: &str) -> Result<SystemTime, String> {
    crate::fleet::worker::parse_start_at(text, SystemTime::now())
}

/// nodetool operations and node faults while the load goes on (`headroom run --during`).
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Maintenance")]
pub struct MaintenanceArgs {
    /// Operations and faults while the load goes on, as OPERATION[:NODE]@OFFSET,
    /// comma-separated, offsets from the start of the run (warmup included), e.g.
    /// 'compact@5m,repair@10m' or 'kill:3@20s,restart:3@35s'. nodetool operations: compact,
    /// repair, garbagecollect, flush, cleanup (on the workload's keyspace, on every node one
    /// after another, or on NODE alone), drain (one node). Faults, on a local cluster headroom
    /// started: kill (SIGKILL), stop (SIGSTOP: the node freezes), cont (SIGCONT), restart
    /// (start the node again and wait until it answers CQL); a node the plan froze is
    /// continued when the run ends. Nodes are numbered from 1. Operations never overlap (one
    /// due while another runs starts when that ends). The nodes: those of the local cluster
    /// headroom started (--cluster-dir), or --jmx for another cluster (nodetool operations
    /// only). Each start and end is printed, and recorded with its wall time and status in
    /// maintenance.json; the report shades each on the run's timeline, beside the errors per
    /// interval.
    #[arg(long, value_name = "OP[:NODE]@OFFSET,...")]
    pub during: Option<crate::maintenance::Plan>,

    /// JMX endpoints (host[:port], port 7199 by default) of every node, comma-separated, for
    /// --during against a cluster headroom did not start (JMX without authentication; the
    /// nodetool of headroom's default Cassandra release runs here).
    #[arg(long, value_delimiter = ',', value_name = "HOST:PORT")]
    pub jmx: Vec<String>,

    /// How long an operation still running when the load ends is awaited before its
    /// nodetool is killed (the node finishes what it began). [range: 1s to 24h]
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = ranges::duration("1s", "24h"))]
    pub during_timeout: Duration,
}
