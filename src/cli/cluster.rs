//! `headroom cluster`: start, inspect and stop local Cassandra nodes.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::ranges;
use crate::cluster::{CpusFlag, GcKind};
use crate::units::ByteSize;

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
    /// heap, garbage collector, the cores it runs on, and its memory.
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
    /// Number of nodes (of each data centre, with --dcs). [range: 1 to 254; 254 in all]
    /// [default: 1]
    #[arg(long, short = 'n', value_name = "N", value_parser = ranges::count::<u32>("1", "254"))]
    pub nodes: Option<u32>,

    /// Number of data centres, named dc1, dc2, ..., each of --nodes consecutive nodes (e.g.
    /// --dcs 2 --nodes 2: dc1 is 127.0.0.1-2, dc2 127.0.0.3-4), one seed each. With one, the
    /// data centre is Cassandra's default, datacenter1. Keyspaces across them:
    /// --replication nts:dc1=2,dc2=2. [range: 1 to 254] [default: 1]
    #[arg(long, value_name = "N", value_parser = ranges::count::<u32>("1", "254"))]
    pub dcs: Option<u32>,

    /// Apache Cassandra release to run, as published on Maven Central
    /// (org.apache.cassandra:cassandra-all). Resolved once into the cache, offline after that.
    /// [default: 5.0.9, the newest 5.0 release]
    #[arg(long, value_name = "VERSION")]
    pub cassandra_version: Option<String>,

    /// Java heap of each node (-Xms and -Xmx), e.g. 2G or 768M. [range: 512M to 1T]
    /// [default: a quarter of this machine's memory divided among the nodes, at most 4G,
    /// at least 1G]
    #[arg(long, value_name = "SIZE", value_parser = ranges::size("512M", "1T"))]
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

    /// Require a password (Cassandra's PasswordAuthenticator): headroom creates the role
    /// `headroom` with a random password and keeps it in the cluster directory
    /// (credentials.json, readable by this user only); `run`, `capacity` and `sweep` against
    /// this cluster (--cluster-dir) log in with it without further flags.
    #[arg(long)]
    pub auth: bool,

    /// Require TLS on the nodes' CQL port (Cassandra 4.1 or later): headroom makes a CA and a
    /// certificate per node (its address as the name) in the cluster directory's tls/ folder
    /// (private keys readable by this user only; the CA is tls/ca.pem); `run`, `capacity`
    /// and `sweep` against this cluster (--cluster-dir) use it without further flags; other
    /// clients give --tls-ca <DIR>/tls/ca.pem.
    #[arg(long)]
    pub tls: bool,

    /// Like --tls, and the nodes also require a client certificate signed by the cluster's
    /// CA (mutual TLS): headroom makes one, tls/client.pem with its key tls/client-key.pem.
    #[arg(long)]
    pub tls_client_auth: bool,

    /// The cores the nodes run on: a LIST for every node (`1-3`, `0,2-3`), or N=LIST for
    /// node N alone (repeat the flag; a LIST then covers the nodes not named). Each JVM is
    /// bound to its cores and told how many it has (-XX:ActiveProcessorCount), and the cores
    /// no node has are left to the client: `run`, `capacity` and `sweep` against this
    /// cluster bind to them. `all` binds nothing. Kept for the cluster's next start.
    /// [default: from 4 cores, the machine split: the client keeps its lowest core (two
    /// above 8 cores), the nodes share the rest; on fewer cores nothing is bound, and --nice
    /// keeps the nodes from holding up the client]
    #[arg(long, value_name = "LIST|N=LIST|all", value_parser = parse_cpus_flag)]
    pub cpus: Vec<CpusFlag>,

    /// The scheduling niceness of the nodes' processes (their JVMs, and nodetool): above the
    /// client's 0, the kernel runs the client's threads first wherever both wait for a
    /// core, so a node busy on every core does not delay the requests' time stamps; the
    /// nodes still take every core the client leaves idle. 0 treats them alike. Kept for
    /// the cluster's next start. (Within one login session, as the kernel groups processes
    /// for scheduling: start the cluster and the runs from the same terminal.)
    /// [default: 10]
    #[arg(
        long,
        value_name = "0-19",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(i32).range(0..=19)
    )]
    pub nice: Option<i32>,

    /// How long one node may take from launch until it answers CQL. [range: 1s to 24h]
    #[arg(long, value_name = "DURATION", default_value = "3m", value_parser = ranges::duration("1s", "24h"))]
    pub start_timeout: Duration,
}

/// One `--cpus` value of `cluster start`.
pub fn parse_cpus_flag(text: &str) -> Result<CpusFlag, String> {
    text.parse()
}

/// `headroom cluster stop` and `headroom cluster destroy`
#[derive(Debug, Args)]
pub struct StopArgs {
    /// How long each node may take to shut down after SIGTERM before it gets SIGKILL.
    /// [range: 0s to 1h]
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = ranges::duration("0s", "1h"))]
    pub timeout: Duration,
}

/// `headroom cluster nodetool`
#[derive(Debug, Args)]
pub struct NodetoolArgs {
    /// The node, by number: 1 for the first node. [range: 1 to 254]
    #[arg(value_name = "NODE", value_parser = ranges::count::<u32>("1", "254"))]
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
    /// The node, by number: 1 for the first node. [range: 1 to 254]
    #[arg(value_name = "NODE", value_parser = ranges::count::<u32>("1", "254"))]
    pub node: u32,

    /// How many lines from the end to print; 0 prints the whole log. [range: 0 to 1G]
    #[arg(long, short = 'n', default_value = "50", value_name = "N", value_parser = ranges::count::<usize>("0", "1G"))]
    pub lines: usize,

    /// Print the JVM's GC and safepoint log instead of the node's log.
    #[arg(long)]
    pub gc: bool,
}
