//! Which cores a local cluster's nodes run on, and which the client keeps: `--cpus` as
//! `cluster start` (and the commands that start nodes) take it, resolved against the
//! machine's cores into a [`Placement`] that cluster.json records.
//!
//! Without `--cpus` a machine of 4 cores or more is split ([`crate::cpus::default_split`]):
//! the client keeps its lowest core (two on more than 8), the nodes share the rest. On fewer
//! cores nothing is bound, and that is said. `--cpus all` binds nothing. Wherever they
//! share cores, the nodes' processes start at a higher niceness than the client's
//! (`--nice`, 10 by default), so that the kernel runs the client's threads first. Why:
//! docs/decisions/0018-nodes-and-client-on-cores-apart.md.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::cpus::{self, CoreChoice, Cores};

/// One `--cpus` flag: cores for every node (or `all`), or `N=LIST` for node N alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpusFlag {
    /// `LIST` or `all`: every node not named by an `N=LIST`.
    Every(CoreChoice),
    /// `N=LIST`: node N (1 for the first).
    Node(u32, Cores),
}

impl FromStr for CpusFlag {
    type Err = String;

    fn from_str(text: &str) -> Result<CpusFlag, String> {
        match text.split_once('=') {
            None => text.parse().map(CpusFlag::Every),
            Some((node, list)) => {
                let index: u32 = node
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| {
                        format!(
                            "'{}' does not start with a node number: write N=LIST for node N (1 \
                         for the first), e.g. 2=3-4, or a LIST for every node",
                            crate::usage::cut(text, 60)
                        )
                    })?;
                Ok(CpusFlag::Node(index, list.parse()?))
            }
        }
    }
}

impl fmt::Display for CpusFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpusFlag::Every(choice) => choice.fmt(f),
            CpusFlag::Node(index, cores) => write!(f, "{index}={cores}"),
        }
    }
}

impl Serialize for CpusFlag {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CpusFlag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CpusFlag, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The niceness the nodes' processes start at unless `--nice` says otherwise.
pub const DEFAULT_NODE_NICE: i32 = 10;

/// The highest niceness the kernel gives.
pub const MAX_NICE: i32 = 19;

/// Where a cluster's nodes and the client run: recorded in cluster.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// The cores of node i at i − 1; `None` (or an empty list) for a node not bound.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_cpus: Vec<Option<Cores>>,
    /// The cores the nodes left to the client: runs against this cluster bind to them when
    /// they are not told otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpus: Option<Cores>,
    /// The niceness the nodes' processes (their JVMs, nodetool) start at: the client runs at
    /// 0 (or whatever it was started with), so above 0 the kernel runs the client's threads
    /// first wherever both wait for a core; 0 treats them alike.
    #[serde(default = "default_node_nice")]
    pub node_nice: i32,
}

fn default_node_nice() -> i32 {
    DEFAULT_NODE_NICE
}

impl Default for Placement {
    /// No node bound, the nodes at [`DEFAULT_NODE_NICE`].
    fn default() -> Placement {
        Placement {
            node_cpus: Vec::new(),
            client_cpus: None,
            node_nice: DEFAULT_NODE_NICE,
        }
    }
}

impl Placement {
    /// The cores of node `index` (1 for the first), if it is bound.
    pub fn of_node(&self, index: u32) -> Option<&Cores> {
        self.node_cpus
            .get(index as usize - 1)
            .and_then(Option::as_ref)
    }

    /// Whether this placement is one for a cluster of `nodes` nodes (an unbound one fits
    /// any).
    pub fn fits(&self, nodes: u32) -> bool {
        self.node_cpus.is_empty() || self.node_cpus.len() == nodes as usize
    }

    /// Whether no node is bound.
    pub fn is_unbound(&self) -> bool {
        self.node_cpus.iter().all(Option::is_none)
    }

    /// Every core some node is bound to.
    pub fn nodes_cores(&self) -> Option<Cores> {
        self.node_cpus
            .iter()
            .flatten()
            .cloned()
            .reduce(|a, b| a.union(&b))
    }

    /// One line for people: where the nodes and the client run, e.g. "nodes on core 1,
    /// the client on core 0 (of 0-1)", and at what priority the nodes run.
    pub fn describe(&self, machine: &Cores) -> String {
        let priority = match self.node_nice {
            0 => String::new(),
            n => format!("; the nodes at niceness {n}, after the client"),
        };
        if self.is_unbound() {
            return format!(
                "nodes and client not bound: the kernel schedules them on any of the cores \
                 {machine}{priority}"
            );
        }
        let mut nodes: Vec<(Option<&Cores>, Vec<u32>)> = Vec::new();
        for (i, cores) in self.node_cpus.iter().enumerate() {
            let index = i as u32 + 1;
            match nodes.iter_mut().find(|(c, _)| *c == cores.as_ref()) {
                Some((_, indices)) => indices.push(index),
                None => nodes.push((cores.as_ref(), vec![index])),
            }
        }
        // The same words whatever the number of nodes when they share their cores: a
        // matrix groups its sizes by the rest of the cluster's description.
        let parts: Vec<String> = if nodes.len() == 1 {
            vec![format!("nodes on {}", on(nodes[0].0))]
        } else {
            nodes
                .iter()
                .map(|(cores, indices)| {
                    let names: Vec<String> = indices.iter().map(u32::to_string).collect();
                    let what = if indices.len() == 1 { "node" } else { "nodes" };
                    format!("{what} {} on {}", names.join(", "), on(*cores))
                })
                .collect()
        };
        let client = match &self.client_cpus {
            Some(cores) => format!("the client on {}", on(Some(cores))),
            None => "no core left to the client alone".to_string(),
        };
        format!("{}; {client} (of {machine}){priority}", parts.join("; "))
    }
}

impl Placement {
    /// What a person should know beside [`Placement::describe`]: the machine could not be
    /// split, or more nodes than cores share a set of cores.
    pub fn remark(&self, machine: &Cores) -> Option<String> {
        if self.is_unbound() {
            return match machine.len() {
                1 => Some(format!(
                    "this machine gives headroom one core ({machine}), so the nodes and the \
                     client could not be split: they share it, and a trial's client may be \
                     held up by the nodes (its validity check says so)"
                )),
                n if n < cpus::SPLIT_FROM => Some(format!(
                    "this machine gives headroom {n} cores ({machine}), too few to split: a \
                     node on {} would be a smaller node, so the nodes and the client share \
                     them; --cpus binds the nodes",
                    if n == 2 { "one" } else { "two" }
                )),
                _ => None,
            };
        }
        let mut shared: Vec<(&Cores, usize)> = Vec::new();
        for cores in self.node_cpus.iter().flatten() {
            match shared.iter_mut().find(|(c, _)| *c == cores) {
                Some((_, n)) => *n += 1,
                None => shared.push((cores, 1)),
            }
        }
        let crowded: Vec<String> = shared
            .iter()
            .filter(|(cores, n)| *n > cores.len())
            .map(|(cores, n)| {
                format!(
                    "{n} nodes share {} core{} ({cores})",
                    cores.len(),
                    if cores.len() == 1 { "" } else { "s" }
                )
            })
            .collect();
        (!crowded.is_empty()).then(|| {
            format!(
                "{}: each JVM sizes its threads to the cores it is given, and the nodes take \
                 turns on them",
                crowded.join("; ")
            )
        })
    }
}

/// "core 1", "cores 1-3", or "any core".
fn on(cores: Option<&Cores>) -> String {
    match cores {
        None => "any core".into(),
        Some(c) if c.len() == 1 => format!("core {c}"),
        Some(c) => format!("cores {c}"),
    }
}

/// The placement of `nodes` nodes on `machine`'s cores from the `--cpus` flags given (none:
/// the default split). Refused: a node number beyond the cluster, a node named twice, a core
/// the machine lacks, or a node left without cores when others are named.
pub fn resolve(flags: &[CpusFlag], nodes: u32, machine: &Cores) -> Result<Placement, String> {
    let mut every: Option<&CoreChoice> = None;
    let mut named: Vec<Option<&Cores>> = vec![None; nodes as usize];
    for flag in flags {
        match flag {
            CpusFlag::Every(choice) => {
                if every.is_some_and(|e| *e != *choice) {
                    return Err(format!(
                        "--cpus is given for every node twice ({} and {choice}): give one \
                         LIST for every node, and N=LIST for a node of its own",
                        every.map(ToString::to_string).unwrap_or_default()
                    ));
                }
                every = Some(choice);
            }
            CpusFlag::Node(index, cores) => {
                let Some(slot) = named.get_mut(*index as usize - 1) else {
                    return Err(format!(
                        "--cpus {flag} names node {index}, and the cluster has {nodes} node{}",
                        if nodes == 1 { "" } else { "s" }
                    ));
                };
                if slot.is_some() {
                    return Err(format!("--cpus names node {index} twice"));
                }
                cpus::check_within(cores, machine, "--cpus")?;
                *slot = Some(cores);
            }
        }
    }
    if let Some(CoreChoice::Only(cores)) = every {
        cpus::check_within(cores, machine, "--cpus")?;
    }
    if flags.is_empty() {
        return Ok(match cpus::default_split(machine) {
            Some(split) => Placement {
                node_cpus: vec![Some(split.nodes); nodes as usize],
                client_cpus: Some(split.client),
                ..Placement::default()
            },
            None => Placement::default(),
        });
    }
    let node_cpus: Vec<Option<Cores>> = named
        .iter()
        .enumerate()
        .map(|(i, cores)| match (cores, every) {
            (Some(c), _) => Ok(Some((*c).clone())),
            (None, Some(CoreChoice::Only(c))) => Ok(Some(c.clone())),
            (None, Some(CoreChoice::All)) => Ok(None),
            (None, None) => Err(format!(
                "node {} has no cores: give --cpus {}=LIST for it, or a --cpus LIST (or all) \
                 for every node not named",
                i + 1,
                i + 1
            )),
        })
        .collect::<Result<_, _>>()?;
    if node_cpus.iter().all(Option::is_none) {
        return Ok(Placement::default());
    }
    let mut placement = Placement {
        node_cpus,
        ..Placement::default()
    };
    // Nodes left unbound may run anywhere: nothing is the client's alone then.
    if placement.node_cpus.iter().all(Option::is_some) {
        placement.client_cpus = placement
            .nodes_cores()
            .and_then(|taken| machine.without(&taken));
    }
    Ok(placement)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cores(text: &str) -> Cores {
        text.parse().unwrap()
    }

    fn flags(given: &[&str]) -> Vec<CpusFlag> {
        given.iter().map(|f| f.parse().unwrap()).collect()
    }

    fn nodes_of(r: &Placement) -> Vec<String> {
        r.node_cpus
            .iter()
            .map(|c| c.as_ref().map_or("-".into(), ToString::to_string))
            .collect()
    }

    #[test]
    fn flags_read_a_list_all_or_a_node_and_its_list() {
        assert_eq!(
            "1-2".parse::<CpusFlag>().unwrap(),
            CpusFlag::Every(CoreChoice::Only(cores("1-2")))
        );
        assert_eq!(
            "all".parse::<CpusFlag>().unwrap(),
            CpusFlag::Every(CoreChoice::All)
        );
        assert_eq!(
            "2=3,5".parse::<CpusFlag>().unwrap(),
            CpusFlag::Node(2, cores("3,5"))
        );
        for bad in ["0=1", "x=1", "=1", "1=", "1=all", "2=3-1"] {
            assert!(bad.parse::<CpusFlag>().is_err(), "{bad}");
        }
        assert_eq!("2=3,5".parse::<CpusFlag>().unwrap().to_string(), "2=3,5");
    }

    #[test]
    fn without_flags_a_machine_of_four_cores_or_more_is_split() {
        let machine = cores("0-3");
        let r = resolve(&[], 1, &machine).unwrap();
        assert_eq!(nodes_of(&r), ["1-3"]);
        assert_eq!(r.client_cpus, Some(cores("0")));
        assert_eq!(r.node_nice, DEFAULT_NODE_NICE);
        assert_eq!(r.remark(&machine), None);
        let r = resolve(&[], 3, &cores("0-15")).unwrap();
        assert_eq!(nodes_of(&r), ["2-15", "2-15", "2-15"]);
        assert_eq!(r.client_cpus, Some(cores("0-1")));
        // More nodes than the nodes' cores: allowed, and said.
        let r = resolve(&[], 5, &machine).unwrap();
        assert_eq!(nodes_of(&r), ["1-3"; 5]);
        let remark = r.remark(&machine).unwrap();
        assert!(remark.contains("5 nodes share 3 cores (1-3)"), "{remark}");
    }

    #[test]
    fn on_fewer_cores_nothing_is_bound_and_the_nodes_run_after_the_client() {
        for (machine, says) in [
            ("0-1", "2 cores (0-1), too few to split: a node on one"),
            ("0-2", "3 cores (0-2), too few to split: a node on two"),
            (
                "0",
                "one core (0), so the nodes and the client could not be split",
            ),
        ] {
            let machine = cores(machine);
            let r = resolve(&[], 2, &machine).unwrap();
            assert!(r.is_unbound(), "{machine}");
            assert_eq!(r.client_cpus, None);
            assert_eq!(r.node_nice, DEFAULT_NODE_NICE);
            let remark = r.remark(&machine).unwrap();
            assert!(remark.contains(says), "{remark}");
            let line = r.describe(&machine);
            assert!(
                line.ends_with("the nodes at niceness 10, after the client"),
                "{line}"
            );
        }
        // At the client's own niceness, nothing is said of priority.
        let alike = Placement {
            node_nice: 0,
            ..Placement::default()
        };
        assert!(!alike.describe(&cores("0-1")).contains("niceness"));
    }

    #[test]
    fn a_placement_without_a_niceness_reads_as_the_default() {
        // cluster.json written before the niceness was recorded.
        let old: Placement =
            serde_json::from_str(r#"{"node_cpus":["1"],"client_cpus":"0"}"#).unwrap();
        assert_eq!(old.node_nice, DEFAULT_NODE_NICE);
        let json = serde_json::to_string(&Placement::default()).unwrap();
        assert_eq!(json, r#"{"node_nice":10}"#);
    }

    #[test]
    fn all_binds_nothing() {
        let machine = cores("0-3");
        let r = resolve(&flags(&["all"]), 2, &machine).unwrap();
        assert_eq!(r, Placement::default());
        assert_eq!(r.remark(&machine), None);
    }

    #[test]
    fn a_list_binds_every_node_and_leaves_the_rest_to_the_client() {
        let r = resolve(&flags(&["2-3"]), 2, &cores("0-3")).unwrap();
        assert_eq!(nodes_of(&r), ["2-3", "2-3"]);
        assert_eq!(r.client_cpus, Some(cores("0-1")));
        // Nodes on every core: nothing is left to the client alone.
        let r = resolve(&flags(&["0-1"]), 1, &cores("0-1")).unwrap();
        assert_eq!(r.client_cpus, None);
    }

    #[test]
    fn nodes_named_alone_and_the_rest_by_a_list() {
        let r = resolve(&flags(&["1=1", "2=2", "3=3"]), 3, &cores("0-3")).unwrap();
        assert_eq!(nodes_of(&r), ["1", "2", "3"]);
        assert_eq!(r.client_cpus, Some(cores("0")));
        let r = resolve(&flags(&["3=3", "1-2"]), 3, &cores("0-3")).unwrap();
        assert_eq!(nodes_of(&r), ["1-2", "1-2", "3"]);
        // The rest unbound: no core is the client's alone.
        let r = resolve(&flags(&["1=1", "all"]), 2, &cores("0-3")).unwrap();
        assert_eq!(nodes_of(&r), ["1", "-"]);
        assert_eq!(r.client_cpus, None);
    }

    #[test]
    fn impossible_placements_are_refused() {
        let machine = cores("0-1");
        for (given, nodes, says) in [
            (&["2-3"][..], 1, "names cores 2-3"),
            (&["1=5"][..], 1, "names core 5"),
            (&["3=1"][..], 2, "names node 3, and the cluster has 2 nodes"),
            (&["2=1"][..], 1, "the cluster has 1 node"),
            (&["1=1", "1=0"][..], 2, "names node 1 twice"),
            (&["1=1"][..], 2, "node 2 has no cores"),
            (&["0", "1"][..], 1, "for every node twice"),
        ] {
            let err = resolve(&flags(given), nodes, &machine).unwrap_err();
            assert!(err.contains(says), "{given:?}: {err}");
        }
        // The same list twice is one list.
        assert!(resolve(&flags(&["1", "1"]), 1, &machine).is_ok());
    }

    #[test]
    fn the_placement_is_described_in_a_line() {
        let machine = cores("0-3");
        let line = |given: &[&str], nodes| {
            resolve(&flags(given), nodes, &machine)
                .unwrap()
                .describe(&machine)
        };
        assert_eq!(
            line(&[], 1),
            "nodes on cores 1-3; the client on core 0 (of 0-3); the nodes at niceness 10, \
             after the client"
        );
        assert_eq!(
            line(&[], 2),
            line(&[], 1),
            "the same for any number of nodes"
        );
        assert_eq!(
            line(&["1=1", "2=2-3"], 2),
            "node 1 on core 1; node 2 on cores 2-3; the client on core 0 (of 0-3); the nodes \
             at niceness 10, after the client"
        );
        assert_eq!(
            line(&["1=1", "all"], 3),
            "node 1 on core 1; nodes 2, 3 on any core; no core left to the client alone (of \
             0-3); the nodes at niceness 10, after the client"
        );
        assert!(line(&["all"], 2).starts_with("nodes and client not bound"));
    }

    #[test]
    fn a_placement_is_stored_as_lists() {
        let r = resolve(&flags(&["1=1", "all"]), 2, &cores("0-3")).unwrap();
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"node_cpus": ["1", null], "node_nice": 10})
        );
        let back: Placement = serde_json::from_value(json).unwrap();
        assert_eq!(back, r);
        let none: Placement = serde_json::from_value(serde_json::json!({})).unwrap();
        assert!(none.is_unbound());
    }
}
