//! `headroom sweep`: closed-loop steps at more and more requests in flight.

use std::time::Duration;

use clap::Args;

use super::ranges;
use super::{
    parse_op_mix, ClientArgs, ConnectionArgs, LiveArgs, OpMixArg, OutputArgs, WorkloadArgs,
};

/// `headroom sweep`
#[derive(Debug, Args, Clone)]
#[command(mut_arg("out", |a| a.help(
    "The sweep's directory: sweep.json, steps/concurrency-N/ and report.html. \
     [default: runs/<timestamp>-sweep-<workload>]"
)))]
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
    /// [range: 1s to 24h; at least two --interval]
    #[arg(long, value_name = "DURATION", value_parser = ranges::duration("1s", "24h"))]
    pub step_duration: Option<Duration>,

    /// A step is stable once the standard error of the mean of its per-interval throughputs
    /// is below this fraction of the mean (cassandra-stress's err<0.02), and the mean of its
    /// second half differs from the first half's by at most twice this. Also the least
    /// average improvement over the last 5 steps worth another step. [range: 0.1% to 50%]
    #[arg(long, default_value = "2%", value_name = "PERCENT", value_parser = ranges::fraction("0.1%", "50%"))]
    pub stable_error: f64,

    /// The shortest measured part of a step run until stable (cassandra-stress's n>30).
    /// [range: 1s to 24h; at least two --interval]
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = ranges::duration("1s", "24h"))]
    pub step_min: Duration,

    /// The longest measured part of a step run until stable (cassandra-stress's n<200); a
    /// step that reaches it is marked "not stable" and counts all the same. [range: 1s to
    /// 24h; at least --step-min]
    #[arg(long, default_value = "200s", value_name = "DURATION", value_parser = ranges::duration("1s", "24h"))]
    pub step_max: Duration,

    /// Load before each step's measured part, at the step's concurrency, excluded from its
    /// results. [range: 0s to 1h]
    #[arg(long, default_value = "5s", value_name = "DURATION", value_parser = ranges::duration("0s", "1h"))]
    pub warmup: Duration,

    /// What to send.
    #[command(flatten)]
    pub workload: WorkloadArgs,

    /// The cluster and the credentials.
    #[command(flatten)]
    pub connection: ConnectionArgs,

    /// How the client sends.
    #[command(flatten)]
    pub client: ClientArgs,

    /// The sweep's directory.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Watching it live.
    #[command(flatten)]
    pub live: LiveArgs,
}
