//! What can go wrong with a local cluster, each with what to do next.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// An error from starting, inspecting or stopping local Cassandra nodes.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// No `java` executable was found.
    #[error("no Java found ({looked}). Install a JDK, e.g. `apt-get install openjdk-17-jdk-headless`, or set JAVA_HOME to one")]
    JavaNotFound {
        /// Where headroom looked.
        looked: String,
    },

    /// `java -version` could not be run or read.
    #[error("could not run '{path} -version': {reason}. Set JAVA_HOME to a working JDK")]
    JavaUnusable {
        /// The executable.
        path: PathBuf,
        /// What failed.
        reason: String,
    },

    /// The JDK's major version does not run the asked-for Cassandra release.
    #[error("Cassandra {cassandra} runs on Java {supported}, but {path} is Java {found}. Set JAVA_HOME to a supported JDK, or pick another --cassandra-version")]
    JavaUnsupported {
        /// The Cassandra release.
        cassandra: String,
        /// The Java executable found.
        path: PathBuf,
        /// Its major version.
        found: u32,
        /// The supported major versions, written out.
        supported: String,
    },

    /// Maven is needed to fetch the jars and is not installed.
    #[error("Maven (mvn) was not found on PATH. headroom uses it once per Cassandra version to fetch the jars from Maven Central; install it (e.g. `apt-get install maven`) or set HEADROOM_MVN to its path")]
    MavenNotFound,

    /// Maven ran and failed to resolve cassandra-all or one of its dependencies.
    #[error("Maven could not resolve org.apache.cassandra:cassandra-all:{version} and its dependencies (is the version published on Maven Central, and is Maven Central reachable?). Full log: {log}. Last lines:\n{tail}")]
    MavenFailed {
        /// The Cassandra release.
        version: String,
        /// Maven's full output.
        log: PathBuf,
        /// The end of that output.
        tail: String,
    },

    /// A port a node needs is taken by another process.
    #[error("{what} port {addr} is already in use, so node {node} cannot start. Another Cassandra may be running: see `headroom cluster status` (with its --dir), stop it, or give this cluster other addresses with --first-address")]
    PortInUse {
        /// The node that needed the port.
        node: u32,
        /// Which of its ports: CQL, storage or JMX.
        what: &'static str,
        /// The address and port.
        addr: SocketAddr,
    },

    /// A node's JVM ended before it answered CQL.
    #[error("node {node} ({address}) exited while starting ({status}). Last lines of {}:\n{tail}", log.display())]
    NodeExited {
        /// The node.
        node: u32,
        /// Its address.
        address: String,
        /// How the JVM ended.
        status: String,
        /// The node's log.
        log: PathBuf,
        /// The end of that log.
        tail: String,
    },

    /// A node did not answer CQL in time.
    #[error("node {node} ({address}) did not answer CQL within {waited:.0?}; it was stopped. If the machine is busy, raise --start-timeout. Last lines of {}:\n{tail}", log.display())]
    StartTimeout {
        /// The node.
        node: u32,
        /// Its address.
        address: String,
        /// How long headroom waited.
        waited: Duration,
        /// The node's log.
        log: PathBuf,
        /// The end of that log.
        tail: String,
    },

    /// `--dir` holds no cluster.
    #[error("there is no cluster in {}: start one with `headroom cluster start` (and the same --dir)", dir.display())]
    NoCluster {
        /// The directory.
        dir: PathBuf,
    },

    /// The cluster in `--dir` already runs.
    #[error("the cluster in {} is already running (pids {pids}); stop it first with `headroom cluster stop`", dir.display())]
    AlreadyRunning {
        /// The directory.
        dir: PathBuf,
        /// Its running nodes' pids.
        pids: String,
    },

    /// `cluster start` was asked for a different configuration than the stopped cluster has.
    #[error("the cluster in {} is {stored}, but this start asks for {requested}. Start it without those flags, or remove it first with `headroom cluster destroy`", dir.display())]
    ConfigMismatch {
        /// The directory.
        dir: PathBuf,
        /// The stored configuration, described.
        stored: String,
        /// The requested configuration, described.
        requested: String,
    },

    /// A node that must be running for what was asked is not.
    #[error("node {node} is not running (start it with `headroom cluster start`, which starts the nodes that are down)")]
    NodeDown {
        /// The node's number.
        node: u32,
    },
    /// A node number that the cluster does not have.
    #[error("the cluster has no node {node}: its nodes are numbered 1 to {count}")]
    NoSuchNode {
        /// The number asked for.
        node: u32,
        /// How many nodes there are.
        count: u32,
    },

    /// A setting that cannot work, with the flag to change.
    #[error("{0}")]
    InvalidConfig(String),

    /// A node kept running after SIGKILL.
    #[error("node {node} (pid {pid}) was still running after SIGKILL")]
    StopFailed {
        /// The node.
        node: u32,
        /// Its pid.
        pid: u32,
    },

    /// A file operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What headroom was doing, with the path.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl ClusterError {
    /// Wraps an I/O error with what was being done.
    pub fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ClusterError {
        let context = context.into();
        move |source| ClusterError::Io { context, source }
    }
}

impl crate::usage::Blame for ClusterError {
    fn is_usage_error(&self) -> bool {
        matches!(
            self,
            ClusterError::InvalidConfig(_)
                | ClusterError::NoSuchNode { .. }
                | ClusterError::NoCluster { .. }
        )
    }
}
