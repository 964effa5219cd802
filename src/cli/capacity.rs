//! `headroom capacity`: the capacity search, its configurations (`--matrix`) and what
//! they cost; `--resume` and the flags it refuses.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::ranges;
use super::{
    parse_op_mix, ClientArgs, ConnectionArgs, LiveArgs, OpMixArg, OutputArgs, SlaArgs,
    WorkloadArgs, DEFAULT_SLA,
};
use crate::capacity::rates::RatesArg;
use crate::capacity::settings::Fresh;
use crate::compare::cost::NodePrice;
use crate::units;

/// The flags of `capacity` that `--resume` refuses: a resumed search keeps the settings it
/// was started with (search.json), so these would be silently ignored. Credentials are
/// accepted (they are never stored), and so is --cluster-dir (it can come from the
/// environment).
const RESUME_TAKES_NOTHING_ELSE: [&str; 87] = [
    // A resumed search binds to the cores it recorded.
    "client_cpus",
    "image",
    "host_network",
    "namespace",
    "image_pull_policy",
    "image_pull_secret",
    "service_account",
    "cpu",
    "cpu_limit",
    "memory",
    "memory_limit",
    "password_secret",
    "password_secret_key",
    "tls_secret",
    "lead",
    "deadline_margin",
    "job_ttl",
    "max_log_bytes",
    "workers",
    "launcher",
    "local_dc",
    "tls",
    "tls_ca",
    "tls_cert",
    "tls_key",
    "tls_server_name",
    "tls_no_verify",
    "name",
    "dimensions",
    "similarity",
    "top_k",
    "rows",
    "queries",
    "vectors",
    "query_vectors",
    "neighbours",
    "ops",
    "sla",
    "window",
    "rates",
    "resolution",
    "repeats",
    "goal",
    "exceed_ratio",
    "confidence",
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
    "degraded",
    "size_for",
    "validate",
];

/// How a search states the capacity (`--goal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Goal {
    /// Every window of every repeat passes.
    Strict,
    /// Bounds at a confidence, with an exceed ratio of windows.
    Interval,
}

/// `headroom capacity`
#[derive(Debug, Args, Clone)]
#[command(mut_arg("name", |a| a.required(false).required_unless_present("resume")))]
#[command(mut_arg("resume", |a| a.conflicts_with_all(RESUME_TAKES_NOTHING_ELSE)))]
#[command(mut_arg("sla", |a| a.default_value(DEFAULT_SLA)))]
#[command(mut_arg("out", |a| a.help(
    "The search's directory: capacity.json, capacity.jsonl and one run directory per trial. \
     [default: runs/<timestamp>-capacity-<workload>]"
)))]
pub struct CapacityArgs {
    /// For a cassandra-stress profile or a workload file: the mix of its operations by
    /// weight, e.g. 'insert=1,simple1=9'.
    #[arg(long, value_name = "OP=W,...", value_parser = parse_op_mix)]
    pub ops: Option<OpMixArg>,

    /// The attempted rates: `auto` (probe the highest throughput, climb a ladder of
    /// fractions of it, then bisect between the last pass and the first fail), a range
    /// START:STOP:STEP such as 20k:120k:10k, or a list such as 1000,2000,5000; at most 200
    /// rates, each 0.001 to 1G.
    #[arg(long, default_value = "auto", value_name = "RATES", value_parser = RatesArg::parse)]
    pub rates: RatesArg,

    /// With --goal interval, the width asked of the bounds: (upper − lower) / upper; with
    /// --goal strict and --rates auto, bisect until the gap between the highest pass and the
    /// lowest fail is at most this fraction of the fail, e.g. 2%. [range: 0.1% to 50%]
    /// [default: 10% with --goal interval; 2% with --goal strict]
    #[arg(long, value_name = "PERCENT", value_parser = ranges::fraction("0.1%", "50%"))]
    pub resolution: Option<f64>,

    /// How the capacity is stated. `strict`: the highest rate at which every window of every
    /// repeat met the SLA, and every lower rate's did. `interval`: a lower and an upper bound
    /// at --confidence on the highest rate at which at most --exceed-ratio of the windows
    /// fail, from every window of every trial (short trials far from the answer, full ones
    /// where a bound needs them; --repeats does not apply; only with --rates auto). See
    /// docs/capacity.md. [default: interval; strict when --rates lists its rates or
    /// --repeats is given, since those judge every window of every repeat]
    #[arg(long, value_enum, value_name = "GOAL")]
    pub goal: Option<Goal>,

    /// With --goal interval: the share of the SLA's windows that may fail at the capacity.
    /// [range: 0.1% to 50%] [default: 10%]
    #[arg(long, value_name = "PERCENT", value_parser = ranges::fraction("0.1%", "50%"))]
    pub exceed_ratio: Option<f64>,

    /// With --goal interval: the probability that the stated bounds hold the capacity.
    /// [range: 50% to 99.9%] [default: 90%]
    #[arg(long, value_name = "PERCENT", value_parser = ranges::fraction("50%", "99.9%"))]
    pub confidence: Option<f64>,

    /// With --goal strict: runs per attempted rate; a rate passes only when every repeat
    /// passes. [range: 1 to 100] [default: 1]
    #[arg(long, value_name = "N", value_parser = ranges::count::<u32>("1", "100"))]
    pub repeats: Option<u32>,

    /// Measured length of each trial. [range: 1s to 24h; a whole number of --window]
    #[arg(long, short = 'd', default_value = "60s", value_name = "DURATION", value_parser = ranges::duration("1s", "24h"))]
    pub duration: Duration,

    /// Load at the trial's rate before each measured part, excluded from the verdict.
    /// [range: 0s to 1h]
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = ranges::duration("0s", "1h"))]
    pub warmup: Duration,

    /// Requests in flight during the closed-loop probe of --rates auto. [range: 1 to 1M]
    #[arg(long, default_value = "256", value_name = "N", value_parser = ranges::count::<usize>("1", "1M"))]
    pub probe_concurrency: usize,

    /// Length of the closed-loop probe of --rates auto (after a warmup of a quarter of it).
    /// [range: 1s to 1h]
    #[arg(long, default_value = "20s", value_name = "DURATION", value_parser = ranges::duration("1s", "1h"))]
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

    /// Keep N nodes of the local cluster down in every probe and trial: the capacity on the
    /// day a node is down (0: all up; 1 is the most). The last node of the first contact
    /// point's data centre is stopped (SIGTERM: it drains) before each run, warmup included,
    /// and started again after it; the next run waits until the other nodes have delivered
    /// the hints they kept for it. Only for a local cluster headroom started (see
    /// --cluster-dir): for another, stop a node yourself, give --hosts without it and a
    /// --label. See docs/capacity.md. [range: 0 to 1]
    #[arg(long, value_name = "N", value_parser = ranges::count::<u32>("0", "1"))]
    pub degraded: Option<u32>,

    /// Check the data in every trial as `run --validate` does (the probe, a closed loop,
    /// is not checked): a trial's reads are checked against its writes, and after it every
    /// row is read back at ALL. capacity.json's `data` sums the trials; a defect marks the
    /// search (and its configuration in `headroom compare`) whatever its capacity, and ends
    /// it with exit code 5. Off by default: it costs client CPU. Needs --fresh truncate or
    /// restart (each trial's record holds only its own writes); keyvalue, timeseries or
    /// YCSB, without deletes or --ttl; see docs/validation.md.
    #[arg(long, help_heading = "Checking the data")]
    pub validate: bool,

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

    /// The search's directory.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Watching it live.
    #[command(flatten)]
    pub live: LiveArgs,

    /// Continue the interrupted (or failed) search in DIR with its own settings, without
    /// redoing the trials it finished; it takes no other flag but the credentials
    /// (--username, --password, --password-file). For a --matrix directory, finished configurations are kept and the
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
    /// parallel), heap (e.g. 1G,2G), nodes (e.g. 1,3), version (Cassandra versions) or
    /// degraded (nodes down in every trial, 0 or 1, as --degraded: degraded=0,1 gives the
    /// capacity with every node up and with one down side by side).
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
    #[arg(long, value_name = "IPV4", help_heading = "Comparing configurations")]
    pub first_address: Option<std::net::Ipv4Addr>,

    /// With --matrix: every node's JVM heap unless the matrix varies it, e.g. 2G. [range:
    /// 512M to 1T] [default: as `headroom cluster start`]
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = ranges::size("512M", "1T"),
        help_heading = "Comparing configurations"
    )]
    pub heap: Option<units::ByteSize>,

    /// The price of the configurations.
    #[command(flatten)]
    pub cost: CostArgs,

    /// Run the probe and every trial with N client processes that send one schedule
    /// together (each `run --worker K/N`, all starting at one agreed time), merged into one
    /// run (`headroom merge`) and judged as one: for a cluster that one client machine
    /// cannot load. Each trial's directory holds the merged run, and workers/worker-K with
    /// each worker's own; the table and the report say how many workers ran and how each
    /// kept its schedule. A worker that fails fails the search, naming it and why. [range: 1
    /// to 1024]
    #[arg(
        long,
        value_name = "N",
        value_parser = ranges::count::<u32>("1", "1024"),
        conflicts_with = "matrix",
        help_heading = "Fleet"
    )]
    pub workers: Option<u32>,

    /// Where the workers run: local (processes of this machine, as the tests run them) or
    /// kubernetes (one Indexed Job per trial; see docs/distributed.md).
    #[arg(
        long,
        value_name = "WHERE",
        default_value = "local",
        help_heading = "Fleet"
    )]
    pub launcher: crate::fleet::settings::LauncherKind,

    /// The workers' pods, with --launcher kubernetes.
    #[command(flatten)]
    pub kube: crate::cli::KubeLauncherArgs,
}

/// What the tested configurations cost (`capacity --matrix` and `compare`).
#[derive(Debug, Args, Clone, Default)]
pub struct CostArgs {
    /// The price of one node: 0.576/h, 420/month or 5000/year; for one configuration when
    /// prices differ: zgc=0.576/h (repeat the flag). Gives the cluster's cost per hour and
    /// the capacity per dollar-hour. [range: above 0, at most ten million an hour]
    #[arg(long, value_name = "PRICE", help_heading = "Cost", value_parser = NodePrice::parse)]
    pub node_price: Vec<NodePrice>,

    /// The nodes of the tested cluster, for the cost of a search against --hosts (a local
    /// cluster's are known). With --matrix: the local cluster's nodes unless the matrix
    /// sets them. [range: 1 to 10k] [default: 1]
    #[arg(long, value_name = "N", help_heading = "Cost", value_parser = ranges::count::<u32>("1", "10k"))]
    pub nodes: Option<u32>,

    /// The load to plan for, e.g. 100k: the nodes each configuration needs to carry it at
    /// the SLA, and what they cost a year, assuming capacity grows with the nodes. [range:
    /// 0.001 to 1G]
    #[arg(long, value_name = "RATE", help_heading = "Cost", value_parser = ranges::rate("0.001", "1G"))]
    pub target_load: Option<f64>,

    /// The capacity the cost is sized by: healthy (each configuration's own), or degraded
    /// (each healthy configuration is priced by the capacity of its twin searched with a
    /// node down: the same workload, SLA and cluster, --degraded 1 or --matrix
    /// degraded=0,1).
    #[arg(long, value_name = "CAPACITY", value_enum, help_heading = "Cost")]
    pub size_for: Option<crate::compare::cost::SizeFor>,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::cli::{Cli, Command};

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
            "password_file",
            "cluster_dir",
            // Watching a resumed search changes nothing it measures.
            "metrics_listen",
            "metrics_push",
            "live",
            "linger",
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
    fn capacity_judges_p999_under_100ms_unless_told() {
        let cli = Cli::try_parse_from(["headroom", "capacity", "keyvalue"]).unwrap();
        let Command::Capacity(args) = cli.command else {
            panic!("not capacity")
        };
        assert_eq!(args.sla.terms.as_deref(), Some(DEFAULT_SLA));
        let cli = Cli::try_parse_from(["headroom", "capacity", "kv", "--sla", "p99<5ms"]).unwrap();
        let Command::Capacity(args) = cli.command else {
            panic!("not capacity")
        };
        assert_eq!(args.sla.terms.as_deref(), Some("p99<5ms"));
        let cli = Cli::try_parse_from(["headroom", "run", "kv"]).unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(args.sla.terms, None);
    }
}
