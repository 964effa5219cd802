//! The command line: clap definitions only. The doc comments here are the `--help` text.
//!
//! One file per subcommand, and the groups of flags that several subcommands share, each
//! defined once and flattened into those that take it: the workload ([`WorkloadArgs`]), the
//! cluster to reach and the credentials ([`ConnectionArgs`]), the client's way of sending
//! ([`ClientArgs`]), the service level ([`SlaArgs`]) and the output directory
//! ([`OutputArgs`]). Values are parsed into typed values here (sizes, durations, rates);
//! checking them against each other and filling in defaults happens in `commands/`, where
//! the flags become the library's settings. Nothing below `commands/` sees a type of this
//! module.

mod capacity;
mod client;
mod cluster;
pub(crate) mod combinations;
mod compare;
mod connection;
mod kube;
mod live;
mod merge;
mod output;
mod quickstart;
mod ranges;
mod report;
mod run;
mod sla;
mod sweep;
mod values;
mod workload;

use clap::{Parser, Subcommand};

pub use capacity::{CapacityArgs, CostArgs, Goal};
pub use client::ClientArgs;
pub use cluster::{ClusterArgs, ClusterCommand, LogsArgs, NodetoolArgs, StartArgs};
pub use compare::CompareArgs;
pub use connection::{redacted_command_line, secret_on_command_line, ConnectionArgs};
pub use kube::{
    ImageArgs, KubeArgs, KubeCommand, KubeLauncherArgs, PackArgs, UnpackArgs, WorkerArgs,
};
// Read by `kube manifest`, which the `kubernetes` feature builds.
#[cfg(feature = "kubernetes")]
pub use kube::ManifestArgs;
pub use live::LiveArgs;
pub use merge::MergeArgs;
pub use output::OutputArgs;
pub use quickstart::QuickstartArgs;
pub use report::ReportArgs;
pub use run::{FleetWorkerArgs, MaintenanceArgs, RunArgs};
pub use sla::{SlaArgs, DEFAULT_SLA, DEFAULT_WINDOW};
pub use sweep::SweepArgs;
pub use workload::{parse_op_mix, parse_ops, OpMixArg, OpsArg, WorkloadArgs};

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
    #[command(allow_negative_numbers = true)]
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
    #[command(allow_negative_numbers = true)]
    Run(Box<RunArgs>),

    /// Find the load-carrying capacity: the highest fixed rate at which the SLA's windows
    /// are met, stated as an interval with its confidence.
    ///
    /// Each trial is a full `run` at one attempted rate, with its own run directory. By
    /// default (--goal interval, --rates auto) the search probes the highest throughput,
    /// then places trials until it can state a lower and an upper bound, at --confidence, on
    /// the highest rate at which at most --exceed-ratio of the windows fail. With a list or
    /// range of --rates, or --repeats, it is strict instead: a trial passes when every
    /// window after the warmup meets --sla and the achieved rate is at least 99% of the
    /// attempted one, and the capacity is the highest rate at which every repeat passed and
    /// every lower rate tried passed too. Results are written after every trial
    /// (capacity.jsonl and capacity.json); Ctrl-C leaves a consistent result and --resume
    /// continues it.
    ///
    /// Example: headroom capacity timeseries -r 0.2 --sla 'p99.9<100ms'
    ///
    /// Example (strict, a ladder as the articles ran it): headroom capacity timeseries -r
    /// 0.2 --rates 2k:12k:2k --repeats 3 --duration 2m
    #[command(allow_negative_numbers = true)]
    Capacity(Box<CapacityArgs>),

    /// Find the concurrency where throughput stops growing: closed-loop steps at more and
    /// more requests in flight, as cassandra-stress's `-rate auto` does.
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
    #[command(allow_negative_numbers = true)]
    Sweep(Box<SweepArgs>),

    /// From nothing to an answer: start a local Cassandra node, find the capacity of an
    /// 80% write / 20% read time-series workload under p99.9<100ms, write the results, stop
    /// the node.
    ///
    /// Takes 13 to 17 minutes on a 2-core machine (plus about a minute the first time, to
    /// fetch Cassandra from Maven Central); it says how long at the start. A longer
    /// --duration and a narrower --resolution make the answer more faithful.
    #[command(allow_negative_numbers = true)]
    Quickstart(Box<QuickstartArgs>),

    /// Write an HTML report of run and capacity-search directories: one self-contained
    /// page with charts and tables, to read on screen, print or send.
    ///
    /// Give one directory or several: a run directory (from `run`), a capacity search's
    /// (from `capacity` or `quickstart`) or a concurrency sweep's (from `sweep`). Several
    /// capacity searches of the same workload, say one per garbage collector, are compared
    /// as configurations, each named after its directory. The page shows, where the directories hold the data:
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
    /// heap, instance type, Cassandra version), as Azul's article on Cassandra's capacity and
    /// cost compared garbage collectors and the Graviton2 study compared instance types:
    /// capacity and highest throughput per configuration, the worst window's SLA percentile
    /// per attempted rate, the change against a baseline with whether it is more than noise
    /// (Welch's t-test on per-window throughput, bootstrap intervals for the percentile), and
    /// with --node-price the cost per hour, capacity per dollar-hour and the nodes and yearly
    /// cost for --target-load.
    ///
    /// Prints the tables, writes compare.json and an HTML report (one line per configuration
    /// in each chart) to --out. Name searches with `capacity --label`.
    ///
    /// Example: headroom compare runs/c5d runs/c6gd --node-price c5d=0.576/h
    /// --node-price c6gd=0.461/h --target-load 100k
    #[command(allow_negative_numbers = true)]
    Compare(Box<CompareArgs>),

    /// Merge the run directories of a fleet's workers into one run directory, as if one
    /// process had sent the whole schedule.
    ///
    /// Each worker (`headroom run --worker K/N --start-at TIME`, on this machine or others)
    /// sent its share of one schedule; the merge adds their histograms interval by interval
    /// on absolute time (percentiles are never averaged), sums requests, errors by class,
    /// rates and client cost, judges the SLA again on every merged window, and writes
    /// config.json, summary.json (with each worker's achieved rate and send lag),
    /// histograms.hlog, intervals.csv, the .hgrm files and report.html. `report` and
    /// `compare` read the result as any run.
    ///
    /// Refused (exit 2, nothing written): directories of different workloads, schedules,
    /// SLAs or interval lengths, a worker given twice or missing. Workers whose start times
    /// differ by more than a tenth of the interval are merged with a warning saying by how
    /// much (clocks out of step). Exit code as a run's: 3 when the SLA failed, 4 when a
    /// worker or the fleet could not keep the schedule.
    ///
    /// Example: headroom merge runs/w1 runs/w2 runs/w3 --out runs/fleet
    Merge(MergeArgs),

    /// Run a fleet of workers on Kubernetes by hand: the manifest of an Indexed Job whose
    /// pods run one config.json as workers 1..N of one schedule, and the packing of each
    /// worker's run directory into its pod's log and out again.
    ///
    /// `capacity --workers N --launcher kubernetes` does all of it for each trial; these
    /// are for those who apply the objects with their own tooling (docs/distributed.md).
    #[command(allow_negative_numbers = true)]
    Kube(KubeArgs),
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// clap's own checks of the definitions (conflicting settings, unknown argument ids).
    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// Each subcommand's --out says what goes there and its default.
    #[test]
    fn every_out_says_what_it_holds() {
        let command = Cli::command();
        for (name, words) in [
            ("run", "Run directory"),
            ("capacity", "capacity.json"),
            ("sweep", "sweep.json"),
            ("compare", "compare.json"),
            ("quickstart", "The search's directory"),
        ] {
            let sub = command.find_subcommand(name).unwrap();
            let out = sub.get_arguments().find(|a| a.get_id() == "out").unwrap();
            let help = out.get_help().unwrap().to_string();
            assert!(help.contains(words), "{name}: {help}");
            assert!(help.contains("[default: runs/"), "{name}: {help}");
        }
    }
}
