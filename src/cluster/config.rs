//! What a local cluster is: the validated, serializable configuration of its nodes, and
//! the addresses, ports and directories that follow from it.
//!
//! **Why one file of about 620 lines.** The configuration, its checks and what follows from
//! it (addresses, ports, data centres, each node's spec) are one type's methods, read
//! together whenever a setting is added.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::placement::{self, CpusFlag, Placement};
use super::ClusterError;
use crate::cpus::Cores;
use crate::units::ByteSize;

/// The Cassandra release started when none is asked for: the newest 5.0 release on Maven
/// Central when this was written. Pinned so that results stay comparable across machines.
pub const DEFAULT_CASSANDRA_VERSION: &str = "5.0.9";
/// The data centre name of every local node; LOCAL_* consistency levels and
/// NetworkTopologyStrategy use it.
pub const DATACENTER: &str = "datacenter1";
/// The CQL (native protocol) port of every node, on the node's own address.
pub const NATIVE_PORT: u16 = 9042;
/// The inter-node (storage) port of every node, on the node's own address.
pub const STORAGE_PORT: u16 = 7000;
/// Tokens (vnodes) per node. Each node's tokens are spread evenly over the ring, so data and
/// load divide equally among nodes, as they would after a balanced token allocation.
pub const TOKENS_PER_NODE: u32 = 16;
/// The smallest heap accepted: below this Cassandra 5.0 runs out of memory at start-up.
pub const MIN_HEAP: ByteSize = ByteSize::mib(512);

/// A JVM garbage collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GcKind {
    /// Garbage-First, the JVM's and Cassandra 5.0's default.
    G1,
    /// Z Garbage Collector: concurrent, pauses under a millisecond.
    Zgc,
    /// Shenandoah: concurrent compaction, short pauses.
    Shenandoah,
    /// The parallel (throughput) collector: stop-the-world young and old collections.
    Parallel,
}

impl GcKind {
    /// The JVM option that selects this collector.
    pub fn jvm_flag(self) -> &'static str {
        match self {
            GcKind::G1 => "-XX:+UseG1GC",
            GcKind::Zgc => "-XX:+UseZGC",
            GcKind::Shenandoah => "-XX:+UseShenandoahGC",
            GcKind::Parallel => "-XX:+UseParallelGC",
        }
    }

    /// The collector named `name` (as [`GcKind::name`] writes it, in any case).
    pub fn parse(name: &str) -> Option<GcKind> {
        [
            GcKind::G1,
            GcKind::Zgc,
            GcKind::Shenandoah,
            GcKind::Parallel,
        ]
        .into_iter()
        .find(|gc| gc.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The collector's name as users write it on the command line.
    pub fn name(self) -> &'static str {
        match self {
            GcKind::G1 => "g1",
            GcKind::Zgc => "zgc",
            GcKind::Shenandoah => "shenandoah",
            GcKind::Parallel => "parallel",
        }
    }
}

/// A local cluster's configuration: everything that decides how its nodes are started.
/// Stored in the cluster directory, so a stopped cluster starts again the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterConfig {
    /// Number of nodes, in all data centres.
    pub nodes: u32,
    /// Number of data centres, each with `nodes / dcs` consecutive nodes (`dc1`, `dc2`, ...;
    /// `datacenter1` when there is one).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub dcs: u32,
    /// Apache Cassandra release (Maven Central version of cassandra-all).
    pub cassandra_version: String,
    /// Heap of each node.
    pub heap: ByteSize,
    /// Garbage collector of each node.
    pub gc: GcKind,
    /// Extra JVM options, after headroom's own.
    pub jvm_opts: Vec<String>,
    /// Address of node 1; node i has this address + i − 1.
    pub first_address: Ipv4Addr,
    /// cassandra.yaml settings that replace or add to headroom's, as (key, YAML value).
    #[serde(default)]
    pub yaml: Vec<(String, String)>,
    /// Password authentication, with a role headroom creates (see [`super::auth`]).
    #[serde(default)]
    pub auth: bool,
    /// TLS on the nodes' CQL port, with certificates headroom generates (see [`super::tls`]).
    #[serde(default)]
    pub tls: ClientTls,
    /// The cores of each node and those left to the client (see [`super::placement`]);
    /// nothing bound when absent.
    #[serde(default, flatten)]
    pub placement: Placement,
}

/// Whether a local cluster's nodes require TLS from clients, and a client certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientTls {
    /// Plain CQL.
    #[default]
    Off,
    /// TLS required; any client may connect.
    Required,
    /// TLS required, with a client certificate signed by the cluster's CA (mutual TLS).
    RequiredWithClientCertificate,
}

impl ClientTls {
    /// Whether the nodes require TLS.
    pub fn is_on(self) -> bool {
        self != ClientTls::Off
    }

    /// Whether the nodes require a client certificate.
    pub fn requires_client_certificate(self) -> bool {
        self == ClientTls::RequiredWithClientCertificate
    }
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            nodes: 1,
            dcs: 1,
            cassandra_version: DEFAULT_CASSANDRA_VERSION.to_string(),
            heap: default_heap(1, total_memory()),
            gc: GcKind::G1,
            jvm_opts: Vec::new(),
            first_address: Ipv4Addr::new(127, 0, 0, 1),
            yaml: Vec::new(),
            auth: false,
            tls: ClientTls::Off,
            placement: Placement::default(),
        }
    }
}

/// A local cluster's settings as given, each `None` (or empty) when left to the stored
/// configuration or the default: what `cluster start` takes, what the quickstart asks for,
/// and what a configuration matrix varies (matrix.json stores them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterSettings {
    /// Number of nodes (per data centre when `dcs` is given).
    pub nodes: Option<u32>,
    /// Number of data centres.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dcs: Option<u32>,
    /// Apache Cassandra release.
    pub cassandra_version: Option<String>,
    /// Java heap of each node.
    pub heap: Option<ByteSize>,
    /// Garbage collector of each node.
    pub gc: Option<GcKind>,
    /// Extra JVM options, after headroom's own.
    pub jvm_opts: Vec<String>,
    /// cassandra.yaml settings, `KEY=VALUE`.
    pub yaml: Vec<String>,
    /// Address of the first node.
    pub first_address: Option<Ipv4Addr>,
    /// Password authentication.
    #[serde(default)]
    pub auth: Option<bool>,
    /// TLS on the CQL port.
    #[serde(default)]
    pub tls: Option<ClientTls>,
    /// `--cpus`: the cores of every node, or of one; none given, the machine is split
    /// between the nodes and the client (see [`super::placement`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<CpusFlag>,
    /// `--nice`: the niceness the nodes' processes start at (see [`Placement::node_nice`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
}

impl ClusterConfig {
    /// Builds a configuration from settings as given. Settings not given take their value
    /// from `base` (a stopped cluster's stored configuration) or else the defaults.
    pub fn from_settings(
        args: &ClusterSettings,
        base: Option<&ClusterConfig>,
    ) -> Result<Self, ClusterError> {
        let dcs = args.dcs.or(base.map(|b| b.dcs)).unwrap_or(1);
        // --nodes counts the nodes of one data centre.
        let nodes = match args.nodes {
            Some(per_dc) => per_dc.saturating_mul(dcs.max(1)),
            None => base.map(|b| b.nodes).unwrap_or(dcs.max(1)),
        };
        let config = ClusterConfig {
            nodes,
            dcs,
            cassandra_version: args
                .cassandra_version
                .clone()
                .or(base.map(|b| b.cassandra_version.clone()))
                .unwrap_or_else(|| DEFAULT_CASSANDRA_VERSION.to_string()),
            heap: args
                .heap
                .or(base.map(|b| b.heap))
                .unwrap_or_else(|| default_heap(nodes, total_memory())),
            gc: args.gc.or(base.map(|b| b.gc)).unwrap_or(GcKind::G1),
            jvm_opts: if args.jvm_opts.is_empty() {
                base.map(|b| b.jvm_opts.clone()).unwrap_or_default()
            } else {
                args.jvm_opts.clone()
            },
            first_address: args
                .first_address
                .or(base.map(|b| b.first_address))
                .unwrap_or(Ipv4Addr::new(127, 0, 0, 1)),
            yaml: if args.yaml.is_empty() {
                base.map(|b| b.yaml.clone()).unwrap_or_default()
            } else {
                args.yaml
                    .iter()
                    .map(|kv| parse_yaml_setting(kv))
                    .collect::<Result<_, _>>()?
            },
            auth: args.auth.or(base.map(|b| b.auth)).unwrap_or(false),
            tls: args.tls.or(base.map(|b| b.tls)).unwrap_or_default(),
            placement: Placement {
                node_nice: args
                    .nice
                    .or(base.map(|b| b.placement.node_nice))
                    .unwrap_or(placement::DEFAULT_NODE_NICE),
                ..match base {
                    // A stopped cluster starts again where it ran, unless told otherwise.
                    Some(b) if args.cpus.is_empty() && b.placement.fits(nodes) => {
                        b.placement.clone()
                    }
                    _ => placement::resolve(&args.cpus, nodes, crate::cpus::machine())
                        .map_err(ClusterError::InvalidConfig)?,
                }
            },
        };
        config.validate()?;
        config.check_fits(total_memory())?;
        Ok(config)
    }

    /// Refuses nodes whose JVMs would not fit in `memory` together: each takes its heap and
    /// about [`JVM_BEYOND_HEAP`] more (metaspace, thread stacks, off-heap buffers). Such a
    /// cluster would start node after node until the kernel's OOM killer ends one.
    pub fn check_fits(&self, memory: ByteSize) -> Result<(), ClusterError> {
        let needed = u64::from(self.nodes)
            .saturating_mul(self.heap.bytes.saturating_add(JVM_BEYOND_HEAP.bytes));
        if needed <= memory.bytes {
            return Ok(());
        }
        let gib = |b: u64| b as f64 / ByteSize::GIB as f64;
        Err(ClusterError::InvalidConfig(format!(
            "{} node(s) of --heap {} need about {:.1} GiB of memory (each JVM takes about {} \
             beyond its heap), and this machine has {:.1} GiB: give fewer --nodes or --dcs, or \
             a smaller --heap",
            self.nodes,
            self.heap.to_jvm(),
            gib(needed),
            JVM_BEYOND_HEAP.to_jvm(),
            gib(memory.bytes)
        )))
    }

    /// Checks the values against each other; the error says which flag to change.
    pub fn validate(&self) -> Result<(), ClusterError> {
        let invalid = |msg: String| Err(ClusterError::InvalidConfig(msg));
        if self.nodes == 0 {
            return invalid("--nodes must be at least 1".into());
        }
        if self.dcs == 0 {
            return invalid("--dcs must be at least 1".into());
        }
        if !self.nodes.is_multiple_of(self.dcs) {
            return invalid(format!(
                "{} nodes do not split evenly into {} data centres",
                self.nodes, self.dcs
            ));
        }
        let octets = self.first_address.octets();
        if octets[0] != 127 {
            return invalid(format!(
                "--first-address {} is not a loopback address; local nodes listen on 127.0.0.0/8 only",
                self.first_address
            ));
        }
        if octets[3] == 0 || u32::from(octets[3]) + self.nodes - 1 > 254 {
            return invalid(format!(
                "{} nodes from {} do not fit in the last octet (1 to 254); use a lower --first-address or fewer --nodes",
                self.nodes, self.first_address
            ));
        }
        if self.heap < MIN_HEAP {
            return invalid(format!(
                "--heap {} is too small; Cassandra needs at least {}",
                self.heap.to_jvm(),
                MIN_HEAP.to_jvm()
            ));
        }
        if !(0..=placement::MAX_NICE).contains(&self.placement.node_nice) {
            return invalid(format!(
                "--nice {} is not a niceness the nodes can be given: 0 (the client's own) to \
                 {}; the higher, the later the kernel runs the nodes when the client waits",
                self.placement.node_nice,
                placement::MAX_NICE
            ));
        }
        if !self.placement.fits(self.nodes) {
            return invalid(format!(
                "the cores of {} nodes are recorded for a cluster of {}: give --cpus again",
                self.placement.node_cpus.len(),
                self.nodes
            ));
        }
        for cores in self.placement.node_cpus.iter().flatten() {
            crate::cpus::check_on_machine(cores, "--cpus").map_err(|e| {
                ClusterError::InvalidConfig(format!(
                    "{e}; a cluster started elsewhere starts here with --cpus for this \
                     machine, or --cpus all"
                ))
            })?;
        }
        let version = CassandraVersion::parse(&self.cassandra_version)?;
        version.supported_java()?;
        if self.tls.is_on() && !version.has_pem_certificates() {
            return invalid(format!(
                "--tls needs Cassandra 4.1 or later (nodes read PEM certificates from 4.1 on); \
                 Cassandra {} would need a password-protected keystore: give \
                 --cassandra-version 4.1 or later, e.g. {DEFAULT_CASSANDRA_VERSION}",
                self.cassandra_version
            ));
        }
        Ok(())
    }

    /// The addresses, ports and directories of every node, for a cluster in `dir`.
    pub fn node_specs(&self, dir: &Path) -> Vec<NodeSpec> {
        (1..=self.nodes)
            .map(|index| {
                let address = Ipv4Addr::from(u32::from(self.first_address) + index - 1);
                NodeSpec {
                    index,
                    address,
                    jmx_port: jmx_port_for(address),
                    dir: dir.join(format!("node{index}")),
                    cores: self.placement.of_node(index).cloned(),
                }
            })
            .collect()
    }

    /// The seed nodes' addresses: the first node of each data centre.
    pub fn seeds(&self) -> Vec<Ipv4Addr> {
        (0..self.dcs)
            .map(|dc| Ipv4Addr::from(u32::from(self.first_address) + dc * self.nodes_per_dc()))
            .collect()
    }

    /// Nodes in each data centre.
    pub fn nodes_per_dc(&self) -> u32 {
        self.nodes / self.dcs.max(1)
    }

    /// The data centre of node `index` (1 for the first).
    pub fn datacenter_of(&self, index: u32) -> String {
        if self.dcs <= 1 {
            return DATACENTER.to_string();
        }
        format!("dc{}", (index - 1) / self.nodes_per_dc() + 1)
    }

    /// Every data centre's name with its number of nodes, in order.
    pub fn datacenters(&self) -> Vec<(String, u32)> {
        (0..self.dcs)
            .map(|dc| {
                (
                    self.datacenter_of(dc * self.nodes_per_dc() + 1),
                    self.nodes_per_dc(),
                )
            })
            .collect()
    }

    /// One line that tells the configuration apart, e.g. `3 × Cassandra 5.0.9, heap 2G, g1`.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{} × Cassandra {} from {}, heap {}, {}",
            self.nodes,
            self.cassandra_version,
            self.first_address,
            self.heap.to_jvm(),
            self.gc.name()
        );
        if self.dcs > 1 {
            text.push_str(&format!(
                ", {} data centres of {} nodes",
                self.dcs,
                self.nodes_per_dc()
            ));
        }
        if !self.jvm_opts.is_empty() {
            text.push_str(&format!(", JVM options {}", self.jvm_opts.join(" ")));
        }
        for (key, value) in &self.yaml {
            text.push_str(&format!(", {key}: {value}"));
        }
        if self.auth {
            text.push_str(", password authentication");
        }
        match self.tls {
            ClientTls::Off => {}
            ClientTls::Required => text.push_str(", TLS"),
            ClientTls::RequiredWithClientCertificate => {
                text.push_str(", TLS with client certificates")
            }
        }
        if !self.placement.is_unbound() || self.placement.node_nice != 0 {
            text.push_str(&format!(
                ", {}",
                self.placement.describe(crate::cpus::machine())
            ));
        }
        text
    }
}

/// Reads `--yaml KEY=VALUE`.
fn parse_yaml_setting(text: &str) -> Result<(String, String), ClusterError> {
    match text.split_once('=') {
        Some((key, value))
            if !key.trim().is_empty()
                && !value.trim().is_empty()
                && key.trim().chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
        {
            Ok((key.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(ClusterError::InvalidConfig(format!(
            "--yaml '{text}' is not KEY=VALUE with a cassandra.yaml key, e.g. --yaml authenticator=PasswordAuthenticator"
        ))),
    }
}

/// The JMX port of the node at `address`. JMX listens on 127.0.0.1 whatever the node's own
/// address, so each node needs its own port: 7199 for 127.0.0.1 (Cassandra's default),
/// then one hundred higher for each further address.
pub fn jmx_port_for(address: Ipv4Addr) -> u16 {
    7199 + 100 * (u16::from(address.octets()[3]) - 1)
}

/// One node of a local cluster: where it listens and where it keeps its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSpec {
    /// 1 for the first node.
    pub index: u32,
    /// The node's own address (listen, broadcast and CQL).
    pub address: Ipv4Addr,
    /// JMX port on 127.0.0.1, used by nodetool.
    pub jmx_port: u16,
    /// The node's directory: conf/, data/, commitlog/, hints/, saved_caches/, cdc_raw/, logs/.
    pub dir: PathBuf,
    /// The cores its JVM is bound to; any core when `None`.
    pub cores: Option<Cores>,
}

impl NodeSpec {
    /// The node's CQL endpoint.
    pub fn native_addr(&self) -> SocketAddr {
        SocketAddr::from((self.address, NATIVE_PORT))
    }
    /// The node's inter-node endpoint.
    pub fn storage_addr(&self) -> SocketAddr {
        SocketAddr::from((self.address, STORAGE_PORT))
    }
    /// The node's JMX endpoint.
    pub fn jmx_addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.jmx_port))
    }
    /// Rendered configuration files.
    pub fn conf_dir(&self) -> PathBuf {
        self.dir.join("conf")
    }
    /// cassandra.yaml; its path also marks the node's JVM on its command line.
    pub fn yaml_path(&self) -> PathBuf {
        self.conf_dir().join("cassandra.yaml")
    }
    /// Logs: system.log (console output), gc.log.
    pub fn logs_dir(&self) -> PathBuf {
        self.dir.join("logs")
    }
    /// The node's console output at INFO level.
    pub fn log_path(&self) -> PathBuf {
        self.logs_dir().join("system.log")
    }
    /// The JVM's unified GC and safepoint log.
    pub fn gc_log_path(&self) -> PathBuf {
        self.logs_dir().join("gc.log")
    }
    /// Where the node keeps the hints it holds for other nodes (cassandra.yaml's
    /// `hints_directory`).
    pub fn hints_dir(&self) -> PathBuf {
        self.dir.join("hints")
    }
    /// The pid file headroom writes when it launches the node.
    pub fn pid_path(&self) -> PathBuf {
        self.dir.join("cassandra.pid")
    }
    /// The text that appears on this node's JVM command line and no other process's: used to
    /// check that a recorded pid still belongs to this node before signalling it.
    pub fn command_line_marker(&self) -> String {
        format!("-Dcassandra.config=file://{}", self.yaml_path().display())
    }
}

/// A Cassandra release number, e.g. 5.0.9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CassandraVersion {
    /// e.g. 5
    pub major: u32,
    /// e.g. 0
    pub minor: u32,
}

impl CassandraVersion {
    /// Reads `5.0.9`, `4.1.7`, `5.0-rc1` and the like.
    pub fn parse(text: &str) -> Result<Self, ClusterError> {
        let mut parts = text.split(['.', '-']);
        let mut number = || parts.next().and_then(|p| p.parse::<u32>().ok());
        match (number(), number()) {
            (Some(major), Some(minor)) => Ok(CassandraVersion { major, minor }),
            _ => Err(ClusterError::InvalidConfig(format!(
                "--cassandra-version '{text}' is not a Cassandra release number such as {DEFAULT_CASSANDRA_VERSION}"
            ))),
        }
    }

    /// The Java major versions this release runs on, per the Cassandra project's
    /// documentation.
    pub fn supported_java(self) -> Result<&'static [u32], ClusterError> {
        match (self.major, self.minor) {
            (4, _) => Ok(&[8, 11]),
            (5, _) => Ok(&[11, 17]),
            _ => Err(ClusterError::InvalidConfig(format!(
                "Cassandra {}.{} is not supported; headroom starts Cassandra 4.0 to 5.0 (default {DEFAULT_CASSANDRA_VERSION})",
                self.major, self.minor
            ))),
        }
    }

    /// Whether the nodes read PEM certificates and keys (`PEMBasedSslContextFactory`, from
    /// 4.1 on); 4.0 needs a Java keystore.
    pub fn has_pem_certificates(self) -> bool {
        (self.major, self.minor) >= (4, 1)
    }

    /// Whether cassandra.yaml takes the newer names with units (`commitlog_sync_period: 10s`),
    /// introduced in 4.1.
    pub fn has_unit_names(self) -> bool {
        (self.major, self.minor) >= (4, 1)
    }
}

/// What a node's JVM takes beyond its heap, roughly.
pub const JVM_BEYOND_HEAP: ByteSize = ByteSize {
    bytes: 512 * ByteSize::MIB,
};

/// The heap that suits `nodes` nodes on a machine with `memory` bytes: a quarter of the
/// memory shared among the nodes (the rest is for off-heap memory, page cache and the load
/// generator), at most 4 GiB (beyond that a 2-core node gains nothing but longer pauses),
/// at least 1 GiB, in whole 256 MiB steps.
pub fn default_heap(nodes: u32, memory: ByteSize) -> ByteSize {
    let step = 256 * ByteSize::MIB;
    let share = memory.bytes / 4 / u64::from(nodes.max(1));
    let bytes = share.clamp(ByteSize::GIB, 4 * ByteSize::GIB) / step * step;
    ByteSize { bytes }
}

/// The machine's physical memory, from /proc/meminfo; 8 GiB where that cannot be read.
pub fn total_memory() -> ByteSize {
    let kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("MemTotal:"))
                .and_then(|rest| {
                    rest.trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
        });
    ByteSize {
        bytes: kib.map_or(8 * ByteSize::GIB, |k| k * 1024),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn nodes_that_would_not_fit_in_memory_are_refused() {
        let gib = |n: u64| ByteSize {
            bytes: n * ByteSize::GIB,
        };
        let config = |nodes, heap| ClusterConfig {
            nodes,
            heap,
            ..ClusterConfig::default()
        };
        config(3, gib(1)).check_fits(gib(24)).unwrap();
        let e = config(50, gib(1))
            .check_fits(gib(24))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("50 node(s) of --heap 1G need about 75.0 GiB"),
            "{e}"
        );
        assert!(e.contains("this machine has 24.0 GiB"), "{e}");
        let e = config(1, gib(900))
            .check_fits(gib(24))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--heap 900G"), "{e}");
    }

    #[test]
    fn nodes_count_per_data_centre_and_a_stopped_cluster_keeps_its_own() {
        let two = |nodes: Option<u32>, dcs: Option<u32>, base: Option<&ClusterConfig>| {
            ClusterConfig::from_settings(
                &ClusterSettings {
                    nodes,
                    dcs,
                    heap: Some(ByteSize::mib(768)),
                    ..Default::default()
                },
                base,
            )
        };
        let config = two(Some(3), Some(2), None).unwrap();
        assert_eq!((config.nodes, config.dcs, config.nodes_per_dc()), (6, 2, 3));
        assert_eq!(config.datacenter_of(3), "dc1");
        assert_eq!(config.datacenter_of(4), "dc2");
        assert_eq!(
            config.seeds(),
            [Ipv4Addr::new(127, 0, 0, 1), Ipv4Addr::new(127, 0, 0, 4)]
        );
        assert!(config.describe().contains("2 data centres of 3 nodes"));
        // Started again without flags: the same cluster.
        assert_eq!(two(None, None, Some(&config)).unwrap(), config);
        // --dcs alone: one node each.
        assert_eq!(two(None, Some(3), None).unwrap().nodes, 3);
        let err = two(Some(1), Some(0), None).unwrap_err().to_string();
        assert!(err.contains("--dcs must be at least 1"), "{err}");
        // An old cluster.json has no dcs: one data centre.
        let json = serde_json::to_string(&ClusterConfig::default()).unwrap();
        assert!(!json.contains("dcs"));
        let back: ClusterConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back.dcs, 1);
    }

    use super::*;

    fn gib(n: u64) -> ByteSize {
        ByteSize {
            bytes: n * ByteSize::GIB,
        }
    }

    #[test]
    fn default_heap_shares_a_quarter_of_memory() {
        assert_eq!(default_heap(1, gib(24)), gib(4));
        assert_eq!(default_heap(3, gib(24)), gib(2));
        assert_eq!(
            default_heap(5, gib(24)),
            gib(1),
            "1.2 GiB rounds down to whole 256 MiB steps"
        );
        assert_eq!(default_heap(2, gib(24)), gib(3));
        assert_eq!(default_heap(2, gib(8)), gib(1));
        assert_eq!(default_heap(1, gib(2)), gib(1));
        assert_eq!(default_heap(1, gib(256)), gib(4));
    }

    #[test]
    fn nodes_get_consecutive_addresses_and_their_own_jmx_ports() {
        let config = ClusterConfig {
            nodes: 3,
            ..ClusterConfig::default()
        };
        let specs = config.node_specs(Path::new("/c"));
        let addrs: Vec<_> = specs.iter().map(|s| s.native_addr().to_string()).collect();
        assert_eq!(
            addrs,
            ["127.0.0.1:9042", "127.0.0.2:9042", "127.0.0.3:9042"]
        );
        let jmx: Vec<_> = specs.iter().map(|s| s.jmx_port).collect();
        assert_eq!(jmx, [7199, 7299, 7399]);
        assert_eq!(
            specs[2].yaml_path(),
            Path::new("/c/node3/conf/cassandra.yaml")
        );
        assert_eq!(
            specs[0].command_line_marker(),
            "-Dcassandra.config=file:///c/node1/conf/cassandra.yaml"
        );
    }

    #[test]
    fn flags_override_the_stored_configuration_and_defaults_fill_the_rest() {
        let stored = ClusterConfig {
            nodes: 3,
            heap: gib(2),
            gc: GcKind::Zgc,
            ..ClusterConfig::default()
        };
        let args = ClusterSettings {
            heap: Some(gib(1)),
            ..ClusterSettings::default()
        };
        let config = ClusterConfig::from_settings(&args, Some(&stored)).unwrap();
        assert_eq!(
            (config.nodes, config.heap, config.gc),
            (3, gib(1), GcKind::Zgc)
        );
        let fresh = ClusterConfig::from_settings(&ClusterSettings::default(), None).unwrap();
        assert_eq!(fresh.nodes, 1);
        assert_eq!(fresh.cassandra_version, DEFAULT_CASSANDRA_VERSION);
        assert_eq!(fresh.gc, GcKind::G1);
    }

    #[test]
    fn invalid_configurations_name_the_flag_to_change() {
        let check = |config: ClusterConfig, expected: &str| {
            let err = config.validate().unwrap_err();
            assert!(crate::usage::Blame::is_usage_error(&err));
            assert!(
                err.to_string().contains(expected),
                "'{err}' should mention '{expected}'"
            );
        };
        check(
            ClusterConfig {
                nodes: 0,
                ..Default::default()
            },
            "--nodes must be at least 1",
        );
        check(
            ClusterConfig {
                first_address: Ipv4Addr::new(10, 0, 0, 1),
                ..Default::default()
            },
            "not a loopback",
        );
        check(
            ClusterConfig {
                nodes: 10,
                first_address: Ipv4Addr::new(127, 0, 0, 250),
                ..Default::default()
            },
            "do not fit",
        );
        check(
            ClusterConfig {
                heap: ByteSize::mib(256),
                ..Default::default()
            },
            "--heap 256M is too small",
        );
        check(
            ClusterConfig {
                cassandra_version: "latest".into(),
                ..Default::default()
            },
            "not a Cassandra release number",
        );
        check(
            ClusterConfig {
                cassandra_version: "3.11.17".into(),
                ..Default::default()
            },
            "Cassandra 3.11 is not supported",
        );
    }

    #[test]
    fn cassandra_versions_and_their_java() {
        let v = CassandraVersion::parse("5.0.9").unwrap();
        assert_eq!(v.supported_java().unwrap(), &[11, 17]);
        assert!(v.has_unit_names());
        let v = CassandraVersion::parse("4.0.13").unwrap();
        assert_eq!(v.supported_java().unwrap(), &[8, 11]);
        assert!(!v.has_unit_names());
        assert_eq!(
            CassandraVersion::parse("5.0-rc1").unwrap(),
            CassandraVersion { major: 5, minor: 0 }
        );
    }
}
