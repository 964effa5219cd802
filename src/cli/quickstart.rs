//! `headroom quickstart`: from nothing to a capacity on one local node.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::ranges;
use super::{OutputArgs, DEFAULT_SLA};
use crate::cluster::GcKind;
use crate::cpus::CoreChoice;
use crate::units::ByteSize;

/// `headroom quickstart`
#[derive(Debug, Args, Clone)]
#[command(mut_arg("out", |a| a.help("The search's directory. [default: runs/<timestamp>-quickstart]")))]
pub struct QuickstartArgs {
    /// The service level every window must meet.
    #[arg(long, default_value = DEFAULT_SLA, value_name = "TERMS")]
    pub sla: String,

    /// Measured length of each trial; longer is more faithful. [range: 1s to 24h; a whole
    /// number of the SLA's windows]
    #[arg(long, short = 'd', default_value = "30s", value_name = "DURATION", value_parser = ranges::duration("1s", "24h"))]
    pub duration: Duration,

    /// Warmup before each trial. [range: 0s to 1h]
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = ranges::duration("0s", "1h"))]
    pub warmup: Duration,

    /// How the capacity is stated: `interval`, a lower and an upper bound at --confidence on
    /// the highest rate at which at most --exceed-ratio of the windows fail; `strict`, the
    /// highest rate at which every window of every repeat passed (one number, no confidence).
    #[arg(long, value_enum, default_value = "interval", value_name = "GOAL")]
    pub goal: super::Goal,

    /// With --goal interval: the share of the SLA's windows that may fail at the capacity.
    /// [range: 0.1% to 50%] [default: 10%]
    #[arg(long, value_name = "PERCENT", value_parser = ranges::fraction("0.1%", "50%"))]
    pub exceed_ratio: Option<f64>,

    /// With --goal interval: the probability that the stated bounds hold the capacity.
    /// [range: 50% to 99.9%] [default: 90%]
    #[arg(long, value_name = "PERCENT", value_parser = ranges::fraction("50%", "99.9%"))]
    pub confidence: Option<f64>,

    /// With --goal strict: runs per attempted rate; more show how repeatable the answer is.
    /// [range: 1 to 100] [default: 1]
    #[arg(long, value_name = "N", value_parser = ranges::count::<u32>("1", "100"))]
    pub repeats: Option<u32>,

    /// With --goal interval, the width asked of the bounds, (upper − lower) / upper; with
    /// --goal strict, bisect until the capacity is known to within this fraction. The
    /// default is coarse on purpose: a first answer in minutes; `capacity` narrows further.
    /// [range: 0.1% to 50%] [default: 20% with --goal interval, 10% with --goal strict]
    #[arg(long, value_name = "PERCENT", value_parser = ranges::fraction("0.1%", "50%"))]
    pub resolution: Option<f64>,

    /// Rows written before the search. [range: 0 to 1000G]
    #[arg(long, default_value = "100k", value_name = "N", value_parser = ranges::count::<u64>("0", "1000G"))]
    pub populate: u64,

    /// Apache Cassandra release to run. [default: 5.0.9]
    #[arg(long, value_name = "VERSION")]
    pub cassandra_version: Option<String>,

    /// Java heap of the node. [range: 512M to 1T] [default: a quarter of this machine's
    /// memory, at most 4G]
    #[arg(long, value_name = "SIZE", value_parser = ranges::size("512M", "1T"))]
    pub heap: Option<ByteSize>,

    /// Garbage collector of the node's JVM. [default: g1]
    #[arg(long, value_enum, value_name = "GC")]
    pub gc: Option<GcKind>,

    /// The cores the node runs on (a LIST such as 1 or 1-3, or all for any core). Wherever
    /// it shares cores with the client it runs at niceness 10, after the client. [default:
    /// from 4 cores, every core but the client's; on fewer, any core]
    #[arg(long, value_name = "LIST|all", value_parser = super::client::parse_core_choice)]
    pub cpus: Option<CoreChoice>,

    /// The cores the client runs on (a LIST, or all for any core). [default: from 4 cores,
    /// the lowest core (the two lowest above 8 cores); on fewer, any core]
    #[arg(long, value_name = "LIST|all", value_parser = super::client::parse_core_choice)]
    pub client_cpus: Option<CoreChoice>,

    /// Where the node lives while the quickstart runs; deleted at the end.
    /// [default: headroom/quickstart-cluster under the user's local data directory]
    #[arg(long, value_name = "DIR")]
    pub cluster_dir: Option<PathBuf>,

    /// The search's directory.
    #[command(flatten)]
    pub output: OutputArgs,
}
