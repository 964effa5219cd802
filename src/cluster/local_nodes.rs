//! The local nodes behind a run's `--hosts`: where a run looks for them ([`NodeSource`]) and
//! what it found ([`LocalNodes`]), found once per run. Their GC logs give the run's server
//! pauses, nodetool their tables' figures, and `--during` acts on them.
//!
//! The nodes are those of a local cluster headroom started, given by the caller
//! ([`NodeSource::Started`], e.g. the cluster a capacity search restarts) or found in a
//! cluster directory ([`NodeSource::Recorded`]) when that cluster runs and the run's `--hosts`
//! are its nodes.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};

use super::{GcKind, LocalCluster, NodeSpec};
use crate::cpus::Cores;

/// Where a run looks for the local nodes behind its `--hosts`.
#[derive(Debug, Clone, Default)]
pub enum NodeSource {
    /// Nowhere: the run has no local nodes.
    #[default]
    Nowhere,
    /// These nodes of a cluster the caller started, whatever the run's hosts (the caller
    /// knows the run loads them).
    Started {
        /// The nodes, in order.
        nodes: Vec<NodeSpec>,
        /// The collector they were started with.
        gc: GcKind,
    },
    /// The local cluster recorded in this directory, if it runs and the run's hosts are
    /// among its nodes' CQL addresses.
    Recorded(PathBuf),
}

impl NodeSource {
    /// Every node of a cluster the caller started.
    pub fn of_cluster(cluster: &LocalCluster) -> NodeSource {
        NodeSource::Started {
            nodes: cluster.nodes(),
            gc: cluster.config().gc,
        }
    }

    /// The cluster `headroom cluster` uses: `HEADROOM_CLUSTER_DIR`, else the default
    /// directory.
    pub fn recorded_default() -> NodeSource {
        let dir = std::env::var_os("HEADROOM_CLUSTER_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(super::default_dir);
        NodeSource::Recorded(dir)
    }

    /// The local nodes behind `hosts` (host:port): none when there is nothing to find, and
    /// why when a running local cluster is not the one the hosts name.
    pub fn resolve(&self, hosts: &[String]) -> LocalNodes {
        match self {
            NodeSource::Nowhere => LocalNodes::default(),
            NodeSource::Started { nodes, gc } => LocalNodes {
                found: Some(Found {
                    nodes: nodes.clone(),
                    gc: *gc,
                    cluster_dir: None,
                    client_cpus: None,
                }),
                ..LocalNodes::default()
            },
            NodeSource::Recorded(dir) => {
                let (found, refused) = match recorded(dir, hosts) {
                    Ok(found) => (found, None),
                    Err(why) => (None, Some(why)),
                };
                LocalNodes {
                    found,
                    looked_in: Some(dir.clone()),
                    refused,
                }
            }
        }
    }
}

/// The nodes of the local cluster recorded in `dir`, when it runs and `hosts` are among its
/// nodes' CQL addresses; `Err` says why a running cluster is not taken.
fn recorded(dir: &Path, hosts: &[String]) -> Result<Option<Found>, String> {
    // No cluster recorded there, or one that does not run: a run against another cluster,
    // with nothing to say about it.
    let Ok(cluster) = LocalCluster::open(dir) else {
        return Ok(None);
    };
    if cluster.running_pids().is_empty() {
        return Ok(None);
    }
    let specs = cluster.nodes();
    let addresses: Vec<SocketAddr> = specs.iter().map(NodeSpec::native_addr).collect();
    let outside: Vec<&String> = hosts
        .iter()
        .filter(|h| !resolve(h).iter().any(|a| addresses.contains(a)))
        .collect();
    if !outside.is_empty() {
        let local: Vec<String> = addresses.iter().map(ToString::to_string).collect();
        let outside: Vec<&str> = outside.iter().map(|h| h.as_str()).collect();
        return Err(format!(
            "the local cluster in {} answers at {}, and the run's hosts {} are not among its \
             nodes (give --cluster-dir for the cluster the run loads)",
            dir.display(),
            local.join(", "),
            outside.join(", ")
        ));
    }
    Ok(Some(Found {
        nodes: specs,
        gc: cluster.config().gc,
        cluster_dir: Some(cluster.dir().to_path_buf()),
        client_cpus: cluster.config().placement.client_cpus.clone(),
    }))
}

/// The local nodes behind a run's `--hosts`, as [`NodeSource::resolve`] found them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalNodes {
    found: Option<Found>,
    /// The directory looked in, for a [`NodeSource::Recorded`].
    looked_in: Option<PathBuf>,
    /// Why a running local cluster was not taken.
    refused: Option<String>,
}

/// Nodes found.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    nodes: Vec<NodeSpec>,
    gc: GcKind,
    /// The cluster's directory (absolute), when they were found through one.
    cluster_dir: Option<PathBuf>,
    /// The cores the cluster left to the client, when they were found through one.
    client_cpus: Option<Cores>,
}

impl LocalNodes {
    /// The nodes, in order; none when there were none to find or a running cluster was not
    /// taken.
    pub fn nodes(&self) -> &[NodeSpec] {
        self.found.as_ref().map_or(&[], |f| &f.nodes)
    }

    /// Every core a node is bound to; `None` when no node is.
    pub fn nodes_cores(&self) -> Option<Cores> {
        self.nodes()
            .iter()
            .filter_map(|n| n.cores.clone())
            .reduce(|a, b| a.union(&b))
    }

    /// The cores the recorded cluster left to the client ([`super::Placement`]).
    pub fn client_cpus(&self) -> Option<&Cores> {
        self.found.as_ref()?.client_cpus.as_ref()
    }

    /// The collector the nodes were started with; `None` without nodes.
    pub fn gc(&self) -> Option<GcKind> {
        self.found.as_ref().map(|f| f.gc)
    }

    /// The cluster directory the nodes were found through (absolute, as the cluster records
    /// its nodes' paths); `None` when none were found, or the caller gave them.
    pub fn cluster_dir(&self) -> Option<&Path> {
        self.found.as_ref()?.cluster_dir.as_deref()
    }

    /// The directory a [`NodeSource::Recorded`] looked in, as given, found or not.
    pub fn looked_in(&self) -> Option<&Path> {
        self.looked_in.as_deref()
    }

    /// Why a running local cluster was not taken: the run's hosts are not its nodes.
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }
}

/// The socket addresses a `host:port` stands for; none when it does not resolve.
fn resolve(host: &str) -> Vec<SocketAddr> {
    if let Ok(addr) = host.parse::<SocketAddr>() {
        return vec![addr];
    }
    host.to_socket_addrs()
        .map(|a| a.collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn node(dir: &Path, index: u32) -> NodeSpec {
        NodeSpec {
            index,
            address: Ipv4Addr::new(127, 0, 0, 4 + index as u8),
            jmx_port: 7199,
            dir: dir.join(format!("node{index}")),
            cores: None,
        }
    }

    #[test]
    fn a_local_cluster_is_taken_only_for_its_own_hosts() {
        let dir = tempfile::tempdir().unwrap();
        // Nothing recorded: nothing to say, but where it looked.
        let source = NodeSource::Recorded(dir.path().to_path_buf());
        let found = source.resolve(&["10.0.0.1:9042".into()]);
        assert!(found.nodes().is_empty());
        assert_eq!(
            (found.looked_in(), found.cluster_dir(), found.refused()),
            (Some(dir.path()), None, None)
        );
        assert_eq!(NodeSource::Nowhere.resolve(&[]), LocalNodes::default());
        assert_eq!(LocalNodes::default().looked_in(), None);

        // Given nodes are taken whatever the hosts, with no directory to name.
        let given = vec![node(dir.path(), 1), node(dir.path(), 2)];
        let source = NodeSource::Started {
            nodes: given.clone(),
            gc: GcKind::Zgc,
        };
        let found = source.resolve(&["10.0.0.1:9042".into()]);
        assert_eq!(found.nodes(), &given[..]);
        assert_eq!(found.gc(), Some(GcKind::Zgc));
        assert_eq!(
            (found.looked_in(), found.cluster_dir(), found.refused()),
            (None, None, None)
        );

        assert_eq!(
            resolve("127.0.0.5:9042"),
            vec!["127.0.0.5:9042".parse().unwrap()]
        );
        assert!(resolve("no port").is_empty());
    }
}
