//! Maintenance and faults during a run: nodetool operations (compact, repair, garbagecollect,
//! flush, cleanup, drain) and, on a local cluster headroom started, faults of one node (kill,
//! stop, cont, restart), started at planned offsets while the load goes on, so that a run
//! measures what they cost the client, how long they take under load, and what losing a node
//! does to the service level.
//!
//! - [`parse_during`] reads `--during compact@5m,kill:3@20s,restart:3@35s` into a [`Plan`].
//! - [`targets_for`] finds the nodes: the local nodes behind the run's hosts, found through a
//!   cluster directory ([`LocalNodes`]), or JMX endpoints given with `--jmx`.
//! - [`runner`] runs the plan beside the load: one operation at a time, on one node after
//!   another, and records each in `maintenance.json` ([`MaintenanceFile`]) as it ends.

pub mod runner;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::cluster::LocalNodes;

pub use runner::{MaintenanceFile, OperationRecord, Status};

/// A nodetool operation that can run during a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// `nodetool compact`: a major compaction of the keyspace's tables.
    Compact,
    /// `nodetool repair`: Cassandra's default repair of the keyspace.
    Repair,
    /// `nodetool garbagecollect`: rewrites SSTables without their deleted and expired data.
    GarbageCollect,
    /// `nodetool flush`: writes the memtables to SSTables.
    Flush,
    /// `nodetool cleanup`: drops data the node no longer owns.
    Cleanup,
    /// `nodetool drain` of one node: it flushes, stops taking writes and leaves the ring's
    /// traffic (it stays down until restarted).
    Drain,
    /// SIGKILL to one node of a local cluster: it dies at once, as in a crash.
    Kill,
    /// SIGSTOP to one node of a local cluster: it freezes, its connections stay open.
    Stop,
    /// SIGCONT to a node stopped with `stop`.
    Cont,
    /// Starts a node of a local cluster that is down (killed, drained, stopped) and waits
    /// until it answers CQL.
    Restart,
}

impl Operation {
    /// Every operation, in the order the help lists them.
    pub const ALL: [Operation; 10] = [
        Operation::Compact,
        Operation::Repair,
        Operation::GarbageCollect,
        Operation::Flush,
        Operation::Cleanup,
        Operation::Drain,
        Operation::Kill,
        Operation::Stop,
        Operation::Cont,
        Operation::Restart,
    ];

    /// Its name in `--during`; for a nodetool operation, also the nodetool command.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Compact => "compact",
            Operation::Repair => "repair",
            Operation::GarbageCollect => "garbagecollect",
            Operation::Flush => "flush",
            Operation::Cleanup => "cleanup",
            Operation::Drain => "drain",
            Operation::Kill => "kill",
            Operation::Stop => "stop",
            Operation::Cont => "cont",
            Operation::Restart => "restart",
        }
    }

    /// How records and reports name it: `nodetool compact`, `kill (SIGKILL)`.
    pub fn describe(self) -> String {
        match self {
            Operation::Kill => "kill (SIGKILL)".into(),
            Operation::Stop => "stop (SIGSTOP)".into(),
            Operation::Cont => "cont (SIGCONT)".into(),
            Operation::Restart => "restart".into(),
            nodetool => format!("nodetool {}", nodetool.name()),
        }
    }

    /// Whether it acts on a node's process (a signal, or starting it), which only a local
    /// cluster headroom started allows.
    pub fn is_fault(self) -> bool {
        matches!(
            self,
            Operation::Kill | Operation::Stop | Operation::Cont | Operation::Restart
        )
    }

    /// Whether it needs one node named (`kill:3@20s`): the faults and drain. The other
    /// operations run on every node unless one is named.
    pub fn needs_node(self) -> bool {
        self.is_fault() || self == Operation::Drain
    }

    /// Whether nodetool takes the workload's keyspace after the command.
    pub fn takes_keyspace(self) -> bool {
        !self.needs_node()
    }

    fn parse(name: &str) -> Option<Operation> {
        Operation::ALL
            .into_iter()
            .find(|op| op.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One operation of the plan and when it is due.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    /// What runs.
    pub operation: Operation,
    /// The one node it runs on (1 for the first); every node when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// When it is due, seconds from the start of the run (warmup included).
    pub at_s: f64,
}

impl Planned {
    /// When it is due, from the start of the run.
    pub fn at(&self) -> Duration {
        Duration::from_secs_f64(self.at_s)
    }
}

impl fmt::Display for Planned {
    /// As `--during` writes it: `compact@5m`, `kill:3@20s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.operation.name())?;
        if let Some(node) = self.node {
            write!(f, ":{node}")?;
        }
        write!(f, "@{}", humantime::format_duration(self.at()))
    }
}

/// The operations of `--during`, in the order they run: by offset, and in the order given
/// for equal offsets.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Plan(pub Vec<Planned>);

/// Why `--during` or `--jmx` cannot be used as given; always the user's input (exit 2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// The `--during` text does not parse.
    #[error("--during '{input}': {why}")]
    Syntax {
        /// The entry (or whole value) at fault.
        input: String,
        /// What is wrong and what would be right.
        why: String,
    },
    /// The nodes cannot be reached, or a flag is missing.
    #[error("{0}")]
    Targets(String),
}

/// Checks the plan's nodes against `targets`: a named node exists, and faults have a local
/// cluster to act on.
pub fn check_nodes(plan: &Plan, targets: &[Target]) -> Result<(), PlanError> {
    for planned in &plan.0 {
        if planned.operation.is_fault()
            && !targets.iter().all(|t| matches!(t, Target::Local { .. }))
        {
            return Err(PlanError::Targets(format!(
                "--during {planned}: {} acts on the process of a node of a local cluster headroom started (--cluster-dir); with --jmx only nodetool operations can run",
                planned.operation.name()
            )));
        }
        if let Some(node) = planned.node {
            if node as usize > targets.len() {
                return Err(PlanError::Targets(format!(
                    "--during {planned}: there is no node {node}; the cluster has {} (numbered from 1{})",
                    targets.len(),
                    if targets.iter().any(|t| matches!(t, Target::Jmx { .. })) {
                        ", in the order of --jmx"
                    } else {
                        ""
                    }
                )));
            }
        }
    }
    Ok(())
}

/// The latest offset `--during` accepts: far beyond any run, well within the clock's range.
/// 100 years of 365.25 days, as durations count them (`100y`).
const MAX_OFFSET: Duration = Duration::from_secs(100 * 31_557_600);

/// Reads `--during`: comma-separated `OPERATION[:NODE]@OFFSET`, e.g.
/// `compact@5m,kill:3@20s,restart:3@35s`, with offsets in the syntax of every duration flag
/// (`90s`, `5m`, `1h 30m`). The faults and drain need their node; the other operations run on
/// every node unless one is named.
pub fn parse_during(text: &str) -> Result<Plan, PlanError> {
    let syntax = |input: &str, why: String| PlanError::Syntax {
        input: input.to_string(),
        why,
    };
    let names = Operation::ALL.map(Operation::name).join(", ");
    let mut plan: Vec<Planned> = Vec::new();
    for entry in text.split(',').map(str::trim) {
        if entry.is_empty() {
            return Err(syntax(
                text,
                "an empty entry: write OPERATION[:NODE]@OFFSET, comma-separated, e.g. compact@5m,kill:3@20s".into(),
            ));
        }
        let Some((name, offset)) = entry.split_once('@') else {
            return Err(syntax(
                entry,
                format!(
                    "write OPERATION@OFFSET or OPERATION:NODE@OFFSET, e.g. compact@5m or kill:3@20s (operations: {names})"
                ),
            ));
        };
        let (name, node) = match name.split_once(':') {
            Some((name, node)) => (name.trim(), Some(node.trim())),
            None => (name.trim(), None),
        };
        let operation = Operation::parse(name).ok_or_else(|| {
            syntax(
                entry,
                format!("'{name}' is not an operation: use one of {names}"),
            )
        })?;
        let node = match node {
            None if operation.needs_node() => {
                return Err(syntax(
                    entry,
                    format!(
                        "{name} acts on one node: name it, as in {name}:2@{}",
                        offset.trim()
                    ),
                ))
            }
            None => None,
            Some(node) => Some(
                node.parse::<u32>()
                    .ok()
                    .filter(|n| *n >= 1 && node.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| {
                        syntax(
                            entry,
                            format!(
                                "'{node}' is not a node number: nodes count from 1, as in {name}:2@{}",
                                offset.trim()
                            ),
                        )
                    })?,
            ),
        };
        let at = crate::units::parse_duration(offset).map_err(|e| {
            syntax(
                entry,
                format!("{e} (an offset from the start of the run, e.g. 90s, 5m, 1h)"),
            )
        })?;
        // The runner sleeps until the offset on the monotonic clock: an offset near the end
        // of what a Duration holds overflows it (and `Planned::at`).
        if at > MAX_OFFSET {
            return Err(syntax(
                entry,
                "the offset is more than 100 years: no run lasts that long".into(),
            ));
        }
        let planned = Planned {
            operation,
            node,
            at_s: at.as_secs_f64(),
        };
        if plan.contains(&planned) {
            return Err(syntax(
                entry,
                "given twice: each operation runs once at a given offset".into(),
            ));
        }
        plan.push(planned);
    }
    // Stable: operations due at the same offset run in the order given.
    plan.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    Ok(Plan(plan))
}

impl std::str::FromStr for Plan {
    type Err = PlanError;
    fn from_str(s: &str) -> Result<Plan, PlanError> {
        parse_during(s)
    }
}

/// The maintenance of a run, as stored in its config.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaintenanceConfig {
    /// The operations, in the order they run.
    pub plan: Plan,
    /// JMX endpoints (host:port) of the nodes of a cluster headroom did not start; empty
    /// for a local cluster headroom started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jmx: Vec<String>,
    /// How long an operation still running when the load ends is awaited, seconds.
    pub timeout_s: f64,
    /// The keyspace the operations work on: the workload's.
    pub keyspace: String,
}

impl MaintenanceConfig {
    /// Checks the plan against the run's length (warmup included), when it has one.
    pub fn check_length(&self, run_s: Option<f64>) -> Result<(), PlanError> {
        let Some(run_s) = run_s else { return Ok(()) };
        if let Some(late) = self.plan.0.iter().find(|p| p.at_s >= run_s) {
            return Err(PlanError::Syntax {
                input: format!("{late}"),
                why: format!(
                    "the run lasts {} (warmup included), so this would never start; plan it earlier or make --duration longer",
                    humantime::format_duration(Duration::from_secs_f64(run_s))
                ),
            });
        }
        Ok(())
    }
}

/// A node an operation runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Node `index` of the local cluster recorded in `dir`, through its own nodetool.
    Local {
        /// The cluster directory.
        dir: PathBuf,
        /// 1 for the first node.
        index: u32,
    },
    /// A node of another cluster, through its JMX port.
    Jmx {
        /// Host name or address.
        host: String,
        /// JMX port.
        port: u16,
    },
}

impl Target {
    /// Its name in records and tables: `node1`, ... or `host:port`.
    pub fn name(&self) -> String {
        match self {
            Target::Local { index, .. } => format!("node{index}"),
            Target::Jmx { host, port } => format!("{host}:{port}"),
        }
    }
}

/// Cassandra's JMX port, when `--jmx` names a host alone.
pub const DEFAULT_JMX_PORT: u16 = 7199;

/// The nodes the run's maintenance runs on: the `--jmx` endpoints when given, else the
/// `local` nodes behind `hosts` when they were found through a cluster directory (a run
/// against a cluster headroom started, whose processes a fault signals).
pub fn targets_for(
    config: &MaintenanceConfig,
    local: &LocalNodes,
    hosts: &[String],
) -> Result<Vec<Target>, PlanError> {
    let targets = all_targets(config, local, hosts)?;
    check_nodes(&config.plan, &targets)?;
    Ok(targets)
}

fn all_targets(
    config: &MaintenanceConfig,
    local: &LocalNodes,
    hosts: &[String],
) -> Result<Vec<Target>, PlanError> {
    if !config.jmx.is_empty() {
        return config.jmx.iter().map(|e| parse_jmx(e)).collect();
    }
    // A fault acts on a node's process, which only a local cluster headroom started
    // offers: --jmx would be no way out for it.
    let fault = config.plan.0.iter().find(|p| p.operation.is_fault());
    let advice = match fault {
        Some(planned) => format!(
            "{} acts on the process of a node of a local cluster headroom started: run against \
             one (`headroom cluster start`, and --cluster-dir when it is not the default); \
             --jmx carries nodetool operations only",
            planned.operation.name()
        ),
        None => "give --jmx HOST:PORT,... with every node's JMX endpoint for a cluster \
                 headroom did not start"
            .to_string(),
    };
    let Some(dir) = local.looked_in() else {
        return Err(PlanError::Targets(format!(
            "--during needs the cluster's nodes: {advice}"
        )));
    };
    if let Some(why) = local.refused() {
        return Err(PlanError::Targets(format!("--during: {why}; or {advice}")));
    }
    match local.cluster_dir() {
        Some(cluster) if !local.nodes().is_empty() => Ok(local
            .nodes()
            .iter()
            .map(|n| Target::Local {
                dir: cluster.to_path_buf(),
                index: n.index,
            })
            .collect()),
        _ => Err(PlanError::Targets(format!(
            "--during runs nodetool on every node, but --hosts {} is not a running local \
             cluster headroom started (looked in {}; --cluster-dir names another): {advice}",
            hosts.join(","),
            dir.display()
        ))),
    }
}

/// `host:port` or `host` (port 7199) of `--jmx`.
fn parse_jmx(entry: &str) -> Result<Target, PlanError> {
    let entry = entry.trim();
    let bad = |why: &str| PlanError::Targets(format!("--jmx '{entry}': {why}"));
    let (host, port) = match entry.rsplit_once(':') {
        Some((host, port)) => (
            host,
            port.parse::<u16>()
                .map_err(|_| bad("the port must be a number, as in 10.0.0.5:7199"))?,
        ),
        None => (entry, DEFAULT_JMX_PORT),
    };
    if host.is_empty() {
        return Err(bad("give HOST:PORT, e.g. 10.0.0.5:7199"));
    }
    Ok(Target::Jmx {
        host: host.to_string(),
        port,
    })
}

impl crate::usage::Blame for PlanError {
    fn is_usage_error(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::NodeSource;

    fn at(plan: &Plan) -> Vec<(Operation, f64)> {
        plan.0.iter().map(|p| (p.operation, p.at_s)).collect()
    }

    #[test]
    fn reads_operations_and_offsets() {
        let plan = parse_during("compact@5m, repair@10m,garbagecollect@1h 30m").unwrap();
        assert_eq!(
            at(&plan),
            vec![
                (Operation::Compact, 300.0),
                (Operation::Repair, 600.0),
                (Operation::GarbageCollect, 5400.0)
            ]
        );
        let plan = parse_during("FLUSH@3s,cleanup@0s").unwrap();
        assert_eq!(
            at(&plan),
            vec![(Operation::Cleanup, 0.0), (Operation::Flush, 3.0)]
        );
    }

    #[test]
    fn orders_by_offset_and_keeps_the_given_order_at_equal_offsets() {
        let plan = parse_during("repair@10m,flush@5m,compact@5m,flush@1m").unwrap();
        assert_eq!(
            at(&plan),
            vec![
                (Operation::Flush, 60.0),
                (Operation::Flush, 300.0),
                (Operation::Compact, 300.0),
                (Operation::Repair, 600.0)
            ]
        );
    }

    #[test]
    fn faults_and_drain_name_their_node_and_others_may() {
        let plan =
            parse_during("kill:3@20s, restart:3@35s,compact:2@5m,flush@1m,drain:1@2m").unwrap();
        let got: Vec<String> = plan.0.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            got,
            [
                "kill:3@20s",
                "restart:3@35s",
                "flush@1m",
                "drain:1@2m",
                "compact:2@5m"
            ]
        );
        assert_eq!(plan.0[0].node, Some(3));
        assert_eq!(plan.0[2].node, None);
        // The same operation on two nodes at one offset is two operations.
        assert_eq!(parse_during("stop:1@5s,stop:2@5s").unwrap().0.len(), 2);
        for (input, says) in [
            ("kill@20s", "acts on one node: name it, as in kill:2@20s"),
            ("drain@1m", "acts on one node"),
            ("restart:0@5s", "nodes count from 1"),
            ("stop:x@5s", "'x' is not a node number"),
            ("cont:-1@5s", "is not a node number"),
            ("cont:+1@5s", "is not a node number"),
            ("reboot:1@5s", "'reboot' is not an operation"),
        ] {
            let text = parse_during(input).unwrap_err().to_string();
            assert!(text.contains(says), "{input}: {text}");
        }
        // Stored and read back with its node; old plans (no node) still read.
        let json = serde_json::to_string(&plan).unwrap();
        assert_eq!(serde_json::from_str::<Plan>(&json).unwrap(), plan);
        let old: Plan = serde_json::from_str(r#"[{"operation":"flush","at_s":3.0}]"#).unwrap();
        assert_eq!(old.0[0].node, None);
    }

    #[test]
    fn a_plan_names_nodes_the_cluster_has_and_faults_need_a_local_one() {
        let local: Vec<Target> = (1..=3)
            .map(|index| Target::Local {
                dir: PathBuf::from("/c"),
                index,
            })
            .collect();
        assert!(check_nodes(&parse_during("kill:3@5s").unwrap(), &local).is_ok());
        let err = check_nodes(&parse_during("kill:4@5s").unwrap(), &local).unwrap_err();
        assert!(
            err.to_string()
                .contains("there is no node 4; the cluster has 3"),
            "{err}"
        );
        let jmx = vec![
            parse_jmx("10.0.0.5").unwrap(),
            parse_jmx("10.0.0.6").unwrap(),
        ];
        assert!(check_nodes(&parse_during("drain:2@5s,compact:1@6s").unwrap(), &jmx).is_ok());
        let err = check_nodes(&parse_during("stop:1@5s").unwrap(), &jmx).unwrap_err();
        assert!(
            err.to_string().contains("local cluster headroom started"),
            "{err}"
        );
        let err = check_nodes(&parse_during("drain:3@5s").unwrap(), &jmx).unwrap_err();
        assert!(err.to_string().contains("in the order of --jmx"), "{err}");
    }

    #[test]
    fn refuses_bad_input_naming_the_entry() {
        for (input, entry, says) in [
            ("compact", "compact", "OPERATION@OFFSET"),
            ("compact@5m,", "compact@5m,", "empty entry"),
            ("defrag@5m", "defrag@5m", "not an operation"),
            ("compact@soon", "compact@soon", "offset from the start"),
            ("compact@-5m", "compact@-5m", "offset from the start"),
            ("repair@@5m", "repair@@5m", "offset"),
            ("compact@5m,compact@300s", "compact@300s", "given twice"),
        ] {
            let err = parse_during(input).unwrap_err();
            let text = err.to_string();
            assert!(
                text.starts_with(&format!("--during '{entry}'")) && text.contains(says),
                "{input}: {text}"
            );
        }
        // The same operation at two offsets is two operations.
        assert_eq!(parse_during("compact@5m,compact@6m").unwrap().0.len(), 2);
    }

    /// An offset of u64::MAX seconds parsed, and its time as a Duration (or as an Instant,
    /// when the runner waited for it) overflowed: a panic.
    #[test]
    fn refuses_offsets_no_run_reaches() {
        for input in ["compact@18446744073709551615s", "flush@1m,repair@101y"] {
            let text = parse_during(input).unwrap_err().to_string();
            assert!(text.contains("more than 100 years"), "{input}: {text}");
        }
        let plan = parse_during("repair@100y").unwrap();
        assert_eq!(plan.0[0].at(), MAX_OFFSET);
    }

    #[test]
    fn an_operation_past_the_end_of_the_run_is_refused() {
        let config = MaintenanceConfig {
            plan: parse_during("flush@3s,compact@30s").unwrap(),
            jmx: Vec::new(),
            timeout_s: 600.0,
            keyspace: "headroom".into(),
        };
        assert!(config.check_length(Some(40.0)).is_ok());
        assert!(config.check_length(None).is_ok());
        let err = config.check_length(Some(25.0)).unwrap_err().to_string();
        assert!(err.contains("compact@30s") && err.contains("25s"), "{err}");
    }

    #[test]
    fn jmx_endpoints_default_to_port_7199() {
        assert_eq!(
            parse_jmx("10.0.0.5").unwrap(),
            Target::Jmx {
                host: "10.0.0.5".into(),
                port: 7199
            }
        );
        assert_eq!(parse_jmx("db1:7299").unwrap().name(), "db1:7299");
        assert!(parse_jmx("db1:jmx")
            .unwrap_err()
            .to_string()
            .contains("--jmx"));
    }

    #[test]
    fn without_jmx_a_cluster_headroom_did_not_start_is_refused() {
        let config = MaintenanceConfig {
            plan: parse_during("flush@3s").unwrap(),
            jmx: Vec::new(),
            timeout_s: 600.0,
            keyspace: "headroom".into(),
        };
        let empty = tempfile::tempdir().unwrap();
        let hosts = ["10.1.1.1:9042".to_string()];
        let local = NodeSource::Recorded(empty.path().to_path_buf()).resolve(&hosts);
        let err = targets_for(&config, &local, &hosts).unwrap_err();
        assert!(err.to_string().contains("--jmx HOST:PORT"), "{err}");
        assert!(
            err.to_string()
                .contains(&format!("looked in {}", empty.path().display())),
            "{err}"
        );
        let err = targets_for(&config, &NodeSource::Nowhere.resolve(&[]), &[]).unwrap_err();
        assert!(err.to_string().contains("--jmx"), "{err}");
        // Nodes the caller gave were not found through a cluster directory: no targets.
        let given = NodeSource::Started {
            nodes: crate::cluster::ClusterConfig::default().node_specs(empty.path()),
            gc: crate::cluster::GcKind::G1,
        };
        let err = targets_for(&config, &given.resolve(&hosts), &hosts).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--during needs the cluster's nodes: give --jmx"),
            "{err}"
        );
        // A fault has no --jmx way out: the message sends to a local cluster instead.
        let faults = MaintenanceConfig {
            plan: parse_during("kill:1@3s").unwrap(),
            ..config
        };
        let err = targets_for(&faults, &local, &hosts)
            .unwrap_err()
            .to_string();
        assert!(err.contains("kill acts on the process of a node"), "{err}");
        assert!(!err.contains("give --jmx"), "{err}");
    }
}
