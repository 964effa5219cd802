//! `headroom run`: one run of a workload, and the maintenance it may run during the load.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::{parse_ops, ClientArgs, ConnectionArgs, OpsArg, OutputArgs, SlaArgs, WorkloadArgs};
use crate::results::config::RunPhase;
use crate::units;

/// `headroom run`
#[derive(Debug, Args, Clone)]
#[command(mut_arg("out", |a| a.help("Run directory. [default: runs/<timestamp>-<workload>]")))]
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
