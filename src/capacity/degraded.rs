//! A capacity search with a node down (`capacity --degraded 1`, `--matrix degraded=0,1`):
//! which node, chosen how, and the checks that the cluster can serve at all with it down.
//! What search.json records ([`Degraded`]) and what each probe and trial records
//! ([`DownRecord`]) are here; stopping the node before each run and bringing it back with
//! its hints replayed is [`super::node_down`]'s. docs/decisions/0015 says why.

use std::net::{Ipv4Addr, SocketAddr};

use serde::{Deserialize, Serialize};

use crate::cluster::NodeSpec;
use crate::workload::{replication_total, Definition, WorkloadConfig};

/// The most nodes a search may take down: one. Two down at RF 3 leave a single replica of
/// some partitions, which no QUORUM request can use; a search of that is possible, but
/// which two nodes (neighbours on the ring or not) changes the answer, and headroom does
/// not choose that for the user yet.
pub const MAX_NODES_DOWN: u32 = 1;

/// How the node to stop is chosen, as recorded.
pub const CHOSEN: &str = "the last node of the first contact point's data centre, so that \
     the first contact point stays up; the same node for every probe and trial";

/// The node a degraded search stops before each probe and trial (search.json's
/// `degraded`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Degraded {
    /// How many nodes are down in each run: 1.
    pub nodes_down: u32,
    /// The node stopped, by number (1 for the first).
    pub node: u32,
    /// Its address.
    pub address: String,
    /// How it was chosen.
    pub chosen: String,
}

impl Degraded {
    /// `node 3 (127.0.0.3)`.
    pub fn node_name(&self) -> String {
        format!("node {} ({})", self.node, self.address)
    }

    /// `with node 3 (127.0.0.3) down`, for titles and tables.
    pub fn describe(&self) -> String {
        format!("with {} down", self.node_name())
    }
}

/// What a probe or trial of a degraded search records of its node down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DownRecord {
    /// The node stopped, by number.
    pub node: u32,
    /// Its address.
    pub address: String,
    /// The pid of the node's process that was stopped before the run.
    pub pid: u32,
    /// Whether the node was still down when the run ended (no process, its CQL port
    /// closed): the whole run, warmup included, had it down.
    pub down_throughout: bool,
    /// Seconds spent before this run bringing the node back from the run before and waiting
    /// until the other nodes had delivered its hints; `None` when it was up already.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_before_s: Option<f64>,
    /// Seconds from SIGTERM until the node's process had exited (it drains first).
    pub stop_s: f64,
}

/// Reads `--degraded N` or a matrix's `degraded=N`: `None` for 0 (every node up). The
/// error says why, for the caller to put after the flag.
pub fn parse_nodes_down(value: u32) -> Result<Option<u32>, String> {
    match value {
        0 => Ok(None),
        n if n <= MAX_NODES_DOWN => Ok(Some(n)),
        _ => Err(
            "headroom takes one node down (give 1); for more, stop the nodes yourself \
             and search the cluster at --hosts without them"
                .to_string(),
        ),
    }
}

/// Checks that the workload's keyspace keeps enough replicas for its consistency level
/// with `nodes_down` nodes down: with RF replicas of a partition and that many nodes down,
/// some partitions have only RF − down replicas up. Workloads whose keyspace comes from a
/// profile or file (not `--replication`) are not checked here.
pub fn check_replicas(workload: &WorkloadConfig, nodes_down: u32) -> Result<(), String> {
    if !matches!(
        workload.definition,
        Definition::Builtin | Definition::Ycsb(_)
    ) {
        return Ok(());
    }
    let Some(replicas) = replication_total(&workload.replication) else {
        return Ok(());
    };
    let level = workload.consistency.to_ascii_uppercase();
    let needed = replicas_needed(&level, replicas);
    let up = replicas.saturating_sub(u64::from(nodes_down));
    if up < needed {
        return Err(format!(
            "with {replicas} replica(s) of each partition (--replication) and {nodes_down} \
             node(s) down, some partitions have {up} replica(s) up, and --consistency {level} \
             needs {needed}: their requests would all fail. Give --replication simple:3 (the \
             usual production choice), or a lower --consistency"
        ));
    }
    Ok(())
}

/// The replicas a request of consistency `level` needs, of `replicas` (over all data
/// centres: a local level is counted as if there were one).
fn replicas_needed(level: &str, replicas: u64) -> u64 {
    let quorum = replicas / 2 + 1;
    match level {
        "ANY" => 0,
        "ONE" | "LOCAL_ONE" => 1,
        "TWO" => 2,
        "THREE" => 3,
        "ALL" => replicas,
        // QUORUM, LOCAL_QUORUM, EACH_QUORUM, SERIAL, LOCAL_SERIAL.
        _ => quorum,
    }
}

/// Chooses the node to stop among `nodes` (a local cluster of `dcs` data centres of
/// consecutive nodes) for a search whose contact points are `hosts`: the last node of the
/// first contact point's data centre that is not that contact point ([`CHOSEN`]). Fails
/// when that data centre has no other node.
pub fn choose(
    nodes: &[NodeSpec],
    dcs: u32,
    hosts: &[String],
    nodes_down: u32,
) -> Result<Degraded, String> {
    let first = hosts
        .first()
        .and_then(|h| h.parse::<SocketAddr>().ok().map(|a| a.ip()));
    let contact = nodes
        .iter()
        .position(|n| Some(std::net::IpAddr::V4(n.address)) == first)
        .unwrap_or(0);
    let per_dc = (nodes.len() / dcs.max(1) as usize).max(1);
    let dc = contact / per_dc;
    let members = &nodes[dc * per_dc..((dc + 1) * per_dc).min(nodes.len())];
    let chosen = members
        .iter()
        .rev()
        .find(|n| n.index as usize != contact + 1)
        .ok_or_else(|| {
            format!(
                "the data centre of the first contact point ({}) has no other node to stop; \
                 it needs at least 2 nodes (3 for RF 3)",
                nodes[contact].address
            )
        })?;
    Ok(Degraded {
        nodes_down,
        node: chosen.index,
        address: chosen.address.to_string(),
        chosen: CHOSEN.to_string(),
    })
}

/// Checks that `degraded`, read back from search.json, still names a node of the cluster
/// it runs on (same number, same address).
pub fn check_same_node(degraded: &Degraded, nodes: &[NodeSpec]) -> Result<(), String> {
    let address: Option<Ipv4Addr> = degraded.address.parse().ok();
    match nodes.iter().find(|n| n.index == degraded.node) {
        Some(n) if Some(n.address) == address => Ok(()),
        _ => Err(format!(
            "the search stops {}, which the local cluster no longer has: its nodes are {}",
            degraded.node_name(),
            nodes
                .iter()
                .map(|n| format!("{} ({})", n.index, n.address))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn nodes(count: u8, first: u8) -> Vec<NodeSpec> {
        (1..=count)
            .map(|i| NodeSpec {
                index: u32::from(i),
                address: Ipv4Addr::new(127, 0, 0, first + i - 1),
                jmx_port: 7199,
                dir: Path::new("/c").join(format!("node{i}")),
                cores: None,
            })
            .collect()
    }

    fn hosts(list: &[&str]) -> Vec<String> {
        list.iter().map(|h| format!("{h}:9042")).collect()
    }

    #[test]
    fn the_last_node_goes_down_and_the_first_contact_point_stays_up() {
        let three = nodes(3, 1);
        let d = choose(&three, 1, &hosts(&["127.0.0.1"]), 1).unwrap();
        assert_eq!((d.node, d.address.as_str()), (3, "127.0.0.3"));
        assert_eq!(d.nodes_down, 1);
        assert_eq!(d.chosen, CHOSEN);
        assert_eq!(d.describe(), "with node 3 (127.0.0.3) down");
        // Contact points in another order: the first one stays up.
        let d = choose(&three, 1, &hosts(&["127.0.0.3", "127.0.0.1"]), 1).unwrap();
        assert_eq!(d.node, 2);
        // A contact point that is no node of the cluster (a name): as if it were node 1.
        let d = choose(&three, 1, &["localhost:9042".to_string()], 1).unwrap();
        assert_eq!(d.node, 3);
        // Two data centres of two: the other node of the contact point's.
        let four = nodes(4, 21);
        let d = choose(&four, 2, &hosts(&["127.0.0.23"]), 1).unwrap();
        assert_eq!((d.node, d.address.as_str()), (4, "127.0.0.24"));
        let d = choose(&four, 2, &hosts(&["127.0.0.21"]), 1).unwrap();
        assert_eq!(d.node, 2);
        // One node alone has nothing to stop.
        let e = choose(&nodes(1, 1), 1, &hosts(&["127.0.0.1"]), 1).unwrap_err();
        assert!(e.contains("no other node to stop"), "{e}");
        let e = choose(&four, 4, &hosts(&["127.0.0.21"]), 1).unwrap_err();
        assert!(e.contains("at least 2 nodes"), "{e}");
    }

    #[test]
    fn one_node_down_is_taken_and_more_are_refused() {
        assert_eq!(parse_nodes_down(0), Ok(None));
        assert_eq!(parse_nodes_down(1), Ok(Some(1)));
        let e = parse_nodes_down(2).unwrap_err();
        assert!(e.starts_with("headroom takes one node down"), "{e}");
        assert!(e.contains("stop the nodes yourself"), "{e}");
    }

    fn workload(replication: &str, consistency: &str) -> WorkloadConfig {
        let mut w = crate::fixtures::search_settings().run.workload.clone();
        w.definition = Definition::Builtin;
        w.replication = crate::workload::replication_map(replication).unwrap();
        w.consistency = consistency.to_string();
        w
    }

    #[test]
    fn a_consistency_the_remaining_replicas_cannot_meet_is_refused() {
        for (replication, level) in [
            ("simple:3", "ONE"),
            ("simple:3", "QUORUM"),
            ("simple:3", "LOCAL_QUORUM"),
            ("simple:2", "LOCAL_ONE"),
            ("simple:3", "TWO"),
            ("simple:1", "ANY"),
        ] {
            assert_eq!(
                check_replicas(&workload(replication, level), 1),
                Ok(()),
                "{replication} {level}"
            );
        }
        for (replication, level, says) in [
            ("simple:1", "LOCAL_ONE", "have 0 replica(s) up"),
            ("simple:3", "ALL", "--consistency ALL needs 3"),
            ("simple:2", "QUORUM", "--consistency QUORUM needs 2"),
            ("simple:3", "THREE", "needs 3"),
        ] {
            let e = check_replicas(&workload(replication, level), 1).unwrap_err();
            assert!(e.contains(says), "{replication} {level}: {e}");
            assert!(e.contains("--replication simple:3"), "{e}");
        }
        // A keyspace the workload's own file makes is not --replication's to check.
        let mut own = workload("simple:1", "ONE");
        own.definition = Definition::Declarative {
            path: "w.yaml".into(),
            text: String::new(),
            op_mix: None,
        };
        assert_eq!(check_replicas(&own, 1), Ok(()));
    }

    #[test]
    fn a_resumed_search_stops_the_same_node_or_none() {
        let three = nodes(3, 1);
        let d = choose(&three, 1, &hosts(&["127.0.0.1"]), 1).unwrap();
        assert_eq!(check_same_node(&d, &three), Ok(()));
        let e = check_same_node(&d, &nodes(3, 11)).unwrap_err();
        assert!(e.contains("no longer has"), "{e}");
        assert!(check_same_node(&d, &nodes(2, 1)).is_err());
    }

    #[test]
    fn the_records_read_as_written() {
        let d = choose(&nodes(3, 1), 1, &hosts(&["127.0.0.1"]), 1).unwrap();
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json["nodes_down"], 1);
        assert_eq!(json["node"], 3);
        assert_eq!(json["address"], "127.0.0.3");
        assert_eq!(serde_json::from_value::<Degraded>(json).unwrap(), d);
        let r = DownRecord {
            node: 3,
            address: "127.0.0.3".into(),
            pid: 42,
            down_throughout: true,
            restored_before_s: None,
            stop_s: 6.5,
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("restored_before_s"), "{text}");
        assert_eq!(serde_json::from_str::<DownRecord>(&text).unwrap(), r);
    }
}
