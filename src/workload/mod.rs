//! What the load consists of: schemas, operation types and their mix, and value generators.
//!
//! A [`Workload`] turns a sequence number into one request. Everything about request `i` (its
//! operation type, partition, values) is a function of the run's seed and `i` alone, so a run
//! repeats exactly whichever worker sends which request. Every format implements the same
//! trait.
//!
//! Three layers, which the layer test checks: [`common`], the core every format shares; the
//! formats above it, none importing another ([`builtin`], [`declarative`], [`stress`],
//! [`ycsb`]); [`any`] on top, which picks one. This file, the folder's face, holds the trait
//! and the settings every format takes.

pub mod any;
pub mod builtin;
pub mod common;
pub mod declarative;
pub mod stress;
pub mod vector;
pub mod ycsb;

use std::future::Future;
use std::time::Duration;

use scylla::errors::ExecutionError;
use serde::{Deserialize, Serialize};

use common::cql_map::{CqlMap, MapValue};
use common::generators::PartitionGenerator;
use common::mix::Operations;

pub use any::AnyWorkload;
pub use common::mix::OpMix;

/// One workload, prepared against a session (schema created, statements prepared).
pub trait Workload: Send + Sync + 'static {
    /// The operation types, their mix and the populate type: the table the methods below
    /// answer from.
    fn operations(&self) -> &Operations;

    /// The operation types, by index: e.g. `["write", "read", "delete"]`.
    fn op_names(&self) -> &[String] {
        self.operations().names()
    }

    /// The operation type of request `seq`.
    fn op_for(&self, seq: u64) -> usize {
        self.operations().op_for(seq)
    }

    /// Each operation type's share of the requests, by index. Types with no share are left
    /// out of the live output.
    fn op_weights(&self) -> Vec<f64> {
        self.operations().shares().to_vec()
    }

    /// The operation type used to populate the tables before a run.
    fn populate_op(&self) -> usize {
        self.operations().populate()
    }

    /// How many populate requests may be in flight at once, when the workload needs fewer
    /// than the run's default.
    fn populate_concurrency(&self) -> Option<usize> {
        None
    }

    /// Whether requests of type `op` record a recall (an ANN query whose answer is compared
    /// with the exact neighbours): the engine then records one for each, 0 for a failed one.
    fn measures_recall(&self, op: usize) -> bool {
        self.operations().measures_recall(op)
    }

    /// Sends request `seq` of operation type `op` and waits for its answer. A compound
    /// request (YCSB's read-modify-write) also notes its steps in `parts`, each of which is
    /// then recorded under its own operation type as well.
    fn execute(
        &self,
        op: usize,
        seq: u64,
        parts: &mut Parts,
    ) -> impl Future<Output = Result<(), ExecutionError>> + Send;
}

/// One step of a compound request: its operation type, how long it took, and whether the
/// request's error (if any) happened in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// The step's operation type (an index into `op_names`).
    pub op: usize,
    /// From the step's start (the end of the step before it) to its answer.
    pub elapsed_ns: u64,
    /// The request's error happened in this step.
    pub failed: bool,
}

/// The steps of one compound request, in order; empty for a simple request (no allocation).
///
/// The engine records each step under its own operation type: its service time is its own
/// length; its response time adds, for the first step only, the request's wait before it was
/// sent. The steps' response times thus add up to the whole request's.
///
/// An ANN query also notes here the recall of its answer ([`Parts::set_recall`]).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Parts {
    steps: [Option<Part>; Parts::MAX],
    recall: Option<f32>,
}

impl Parts {
    /// The most steps a request can note.
    pub const MAX: usize = 2;

    /// Notes a step that took `elapsed`; `failed` when the request's error happened in it.
    /// Steps past [`Parts::MAX`] are a bug in the workload.
    pub fn push(&mut self, op: usize, elapsed: Duration, failed: bool) {
        let slot = self
            .steps
            .iter_mut()
            .find(|s| s.is_none())
            .expect("a request notes at most Parts::MAX steps");
        *slot = Some(Part {
            op,
            elapsed_ns: elapsed.as_nanos() as u64,
            failed,
        });
    }

    /// The steps noted, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Part> {
        self.steps.iter().map_while(Option::as_ref)
    }

    /// No step noted: a simple request.
    pub fn is_empty(&self) -> bool {
        self.steps[0].is_none()
    }

    /// Notes the recall of the request's answer, between 0 and 1.
    pub fn set_recall(&mut self, recall: f64) {
        self.recall = Some(recall.clamp(0.0, 1.0) as f32);
    }

    /// The recall noted, if any.
    pub fn recall(&self) -> Option<f64> {
        self.recall.map(f64::from)
    }
}

/// Where a workload's definition comes from, beyond the shared settings of
/// [`WorkloadConfig`]: as stored in config.json, so that a run can be repeated from it alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "format", rename_all = "kebab-case")]
pub enum Definition {
    /// A built-in workload, named by [`WorkloadConfig::name`].
    #[default]
    Builtin,
    /// A file in headroom's own format (docs/workloads.md).
    Declarative {
        /// Where it was read from.
        path: String,
        /// The file's text, as read: the run can be repeated from config.json alone.
        text: String,
        /// Weights from `--ops NAME=W,...`, replacing the file's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        op_mix: Option<Vec<(String, f64)>>,
    },
    /// A cassandra-stress user profile.
    CassandraStress(stress::StressDefinition),
    /// Several cassandra-stress profiles in one run (`a.yaml,b.yaml`).
    CassandraStressSet(stress::multi::StressSet),
    /// YCSB's CoreWorkload, from its property format.
    Ycsb(Box<ycsb::YcsbConfig>),
    /// The vector search built-in: its vectors, similarity and k.
    Vector(vector::model::VectorDefinition),
}

/// The settings of a workload, as stored in the run's config.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadConfig {
    /// The workload's name: a built-in (keyvalue, timeseries), or the format's name for a
    /// workload read from a file.
    pub name: String,
    /// The definition beyond the shared settings.
    #[serde(default)]
    pub definition: Definition,
    /// Keyspace of the workload's table.
    pub keyspace: String,
    /// Number of distinct partition keys.
    pub partitions: u64,
    /// How partition keys are chosen.
    pub partition_generator: PartitionGenerator,
    /// Fraction of requests that are reads.
    pub read_ratio: f64,
    /// Fraction of requests that are deletes.
    pub delete_ratio: f64,
    /// Rows written before the measured run.
    pub populate: u64,
    /// The keyspace's replication, as a CQL map.
    pub replication: String,
    /// The table's compaction, as a CQL map, when not Cassandra's default.
    pub compaction: Option<String>,
    /// The table's default time to live in seconds.
    pub ttl_s: Option<u32>,
    /// Consistency level of every request.
    pub consistency: String,
    /// Drop and recreate the keyspace before the run.
    pub drop: bool,
    /// Seed of every value generator.
    pub seed: u64,
    /// Rows per partition (documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_partition: Option<u64>,
}

impl WorkloadConfig {
    /// Checks the ratios; the error names the flag.
    pub fn validate(&self) -> Result<(), String> {
        for (flag, value) in [
            ("--read-ratio", self.read_ratio),
            ("--delete-ratio", self.delete_ratio),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(format!("{flag} {value} must be between 0 and 1"));
            }
        }
        if self.read_ratio + self.delete_ratio > 1.0 + 1e-9 {
            return Err(format!(
                "--read-ratio {} plus --delete-ratio {} is more than 1",
                self.read_ratio, self.delete_ratio
            ));
        }
        if self.partitions == 0 {
            return Err("--partitions must be at least 1".into());
        }
        // TWO and THREE ask for that many replicas of every partition: a keyspace with
        // fewer could never answer one request. (Only where --replication makes the
        // keyspace: a profile or workload file may create its own.)
        let uses_replication = matches!(self.definition, Definition::Builtin | Definition::Ycsb(_));
        let needed = match self.consistency.to_ascii_uppercase().as_str() {
            _ if !uses_replication => 0,
            "TWO" => 2,
            "THREE" => 3,
            _ => 0,
        };
        if let Some(total) = replication_total(&self.replication).filter(|t| *t < needed) {
            return Err(format!(
                "--consistency {} needs {needed} replicas of every partition, but the keyspace's \
                 replication keeps {total}: every request would fail. Give --replication \
                 simple:{needed} (or more), or a lower --consistency",
                self.consistency.to_ascii_uppercase()
            ));
        }
        Ok(())
    }
}

/// The replicas a keyspace's replication (a CQL map) keeps of each partition, over all data
/// centres, for SimpleStrategy and NetworkTopologyStrategy; `None` for another class.
pub fn replication_total(map: &str) -> Option<u64> {
    let map = CqlMap::parse(map).ok()?;
    let class = map.get("class")?.as_text();
    if !(class.ends_with("SimpleStrategy") || class.ends_with("NetworkTopologyStrategy")) {
        return None;
    }
    map.0
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("class"))
        .map(|(_, v)| v.as_text().parse::<u64>().ok())
        .sum()
}

/// What the command line says of the workload before it is read: the name or file, and the
/// flags each format takes or refuses (a built-in refuses YCSB's `-P`, a profile refuses
/// `--read-ratio`...). The commands build it from their flags.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadRequest {
    /// A built-in's name, `ycsb`, or a workload file's path.
    pub name: String,
    /// `-p`: a number of partitions, or YCSB properties `KEY=VALUE`.
    pub p: Vec<String>,
    /// YCSB property files (`-P`).
    pub property_files: Vec<std::path::PathBuf>,
    /// One of YCSB's core workloads (`--workload a`..`f`).
    pub ycsb_workload: Option<String>,
    /// A mix of a profile's named operations (`--ops insert=1,q=9`).
    pub op_mix: Option<Vec<(String, f64)>>,
    /// `--read-ratio`, when given.
    pub read_ratio: Option<f64>,
    /// `--delete-ratio`.
    pub delete_ratio: f64,
    /// `--populate`.
    pub populate: u64,
    /// `--keyspace`.
    pub keyspace: String,
    /// `--compaction`, when given.
    pub compaction: Option<String>,
    /// `--ttl`, when given.
    pub ttl: Option<Duration>,
    /// The vector workload's flags.
    pub vector: vector::model::VectorRequest,
}

/// The keyspace a workload uses when none is named.
pub const DEFAULT_KEYSPACE: &str = "headroom";

impl Default for WorkloadRequest {
    fn default() -> Self {
        WorkloadRequest {
            name: String::new(),
            p: Vec::new(),
            property_files: Vec::new(),
            ycsb_workload: None,
            op_mix: None,
            read_ratio: None,
            delete_ratio: 0.0,
            populate: 0,
            keyspace: DEFAULT_KEYSPACE.to_string(),
            compaction: None,
            ttl: None,
            vector: Default::default(),
        }
    }
}

#[cfg(test)]
impl WorkloadRequest {
    /// A request for `name` with the flags `words` (the few the formats look at), as the
    /// command line would give them: for tests of the formats.
    pub(crate) fn with_flags(name: &str, words: &[&str]) -> WorkloadRequest {
        let mut request = WorkloadRequest {
            name: name.to_string(),
            ..WorkloadRequest::default()
        };
        let mut words = words.iter();
        while let Some(flag) = words.next() {
            let mut value = || words.next().expect("a value").to_string();
            match *flag {
                "-p" => request.p.push(value()),
                "-P" => request.property_files.push(value().into()),
                "--workload" => request.ycsb_workload = Some(value()),
                "--ops" => {
                    let mix = value()
                        .split(',')
                        .map(|item| {
                            let (name, weight) = item.split_once('=').expect("NAME=WEIGHT");
                            (name.to_string(), weight.parse().expect("a weight"))
                        })
                        .collect();
                    request.op_mix = Some(mix);
                }
                "-r" | "--read-ratio" => request.read_ratio = Some(value().parse().unwrap()),
                "--delete-ratio" => request.delete_ratio = value().parse().unwrap(),
                "--populate" => request.populate = value().parse().unwrap(),
                "--keyspace" => request.keyspace = value(),
                "--compaction" => request.compaction = Some(value()),
                "--ttl" => request.ttl = Some(crate::units::parse_duration(&value()).unwrap()),
                "--dimensions" => request.vector.dimensions = Some(value().parse().unwrap()),
                "--top-k" => request.vector.top_k = Some(value().parse().unwrap()),
                "--rows" => request.vector.rows = Some(value().parse().unwrap()),
                "--queries" => request.vector.queries = Some(value().parse().unwrap()),
                "--vectors" => request.vector.vectors = Some(value().into()),
                "--query-vectors" => request.vector.query_vectors = Some(value().into()),
                "--neighbours" => request.vector.neighbours = Some(value().into()),
                other => panic!("{other} is not a flag the formats look at"),
            }
        }
        request
    }
}

/// Turns the `--replication` shorthand into a CQL map: `simple:3`,
/// `nts:datacenter1=3,dc2=2`, or a CQL map given as is (checked: a class, and for the two
/// strategies Cassandra ships, factors that place the data on at least one node).
pub fn replication_map(text: &str) -> Result<String, String> {
    let text = text.trim();
    let bad = |why: String| format!("--replication '{}': {why}", crate::usage::cut(text, 80));
    if text.starts_with('{') {
        let map = CqlMap::parse(text).map_err(bad)?;
        let class = map
            .get("class")
            .map(MapValue::as_text)
            .ok_or_else(|| bad("the map needs a 'class', e.g. 'SimpleStrategy'".into()))?;
        let factors: Vec<(&str, String)> = map
            .0
            .iter()
            .filter(|(k, _)| !k.eq_ignore_ascii_case("class"))
            .map(|(k, v)| (k.as_str(), v.as_text()))
            .collect();
        if class.ends_with("SimpleStrategy") || class.ends_with("NetworkTopologyStrategy") {
            let mut total = 0u64;
            for (key, value) in &factors {
                let rf: u32 = value
                    .parse()
                    .map_err(|_| bad(format!("'{key}': '{value}' is not a replication factor")))?;
                total += u64::from(rf);
            }
            if class.ends_with("SimpleStrategy")
                && !factors
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("replication_factor"))
            {
                return Err(bad("SimpleStrategy needs a 'replication_factor'".into()));
            }
            if total == 0 {
                return Err(bad(NO_REPLICA.into()));
            }
        }
        return Ok(map.to_cql());
    }
    if let Some(rf) = text.strip_prefix("simple:") {
        let rf: u32 = rf
            .trim()
            .parse()
            .map_err(|_| bad("the factor must be a whole number, as in simple:3".into()))?;
        if rf == 0 {
            return Err(bad(NO_REPLICA.into()));
        }
        return Ok(format!(
            "{{'class': 'SimpleStrategy', 'replication_factor': {rf}}}"
        ));
    }
    if let Some(dcs) = text.strip_prefix("nts:") {
        let mut parts = vec!["'class': 'NetworkTopologyStrategy'".to_string()];
        let mut total = 0u64;
        for dc in dcs.split(',') {
            let (name, rf) = dc.split_once('=').ok_or_else(|| {
                bad("write each data centre as NAME=FACTOR, as in nts:datacenter1=3".into())
            })?;
            let name = name.trim();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            {
                return Err(bad(format!(
                    "'{}' is not a data centre's name (letters, digits, _ - .)",
                    crate::usage::cut(name, 40)
                )));
            }
            let rf: u32 = rf.trim().parse().map_err(|_| {
                bad(format!(
                    "'{}' is not a factor",
                    crate::usage::cut(rf.trim(), 40)
                ))
            })?;
            total += u64::from(rf);
            parts.push(format!("'{name}': {rf}"));
        }
        if total == 0 {
            return Err(bad(NO_REPLICA.into()));
        }
        return Ok(format!("{{{}}}", parts.join(", ")));
    }
    Err(bad(
        "not understood: use simple:RF, nts:DC=RF[,DC=RF...] or a CQL map".into(),
    ))
}

/// Why a replication factor of 0 is refused.
const NO_REPLICA: &str = "a replication factor of 0 stores the data on no node, so every \
     request would fail as unavailable: give at least 1";

/// Turns the `--compaction` shorthand into a CQL map: stcs, lcs, twcs, ucs, or a CQL map
/// (checked: it names a class).
pub fn compaction_map(text: &str) -> Result<String, String> {
    let text = text.trim();
    let bad = |why: String| format!("--compaction '{}': {why}", crate::usage::cut(text, 80));
    let class = match text.to_ascii_lowercase().as_str() {
        t if t.starts_with('{') => {
            let map = CqlMap::parse(text).map_err(bad)?;
            if map.get("class").is_none() {
                return Err(bad(
                    "the map needs a 'class', e.g. 'LeveledCompactionStrategy'".into(),
                ));
            }
            return Ok(map.to_cql());
        }
        "stcs" => "SizeTieredCompactionStrategy",
        "lcs" => "LeveledCompactionStrategy",
        "twcs" => "TimeWindowCompactionStrategy",
        "ucs" => "UnifiedCompactionStrategy",
        _ => {
            return Err(bad(
                "not understood: use stcs, lcs, twcs, ucs or a CQL map".into()
            ))
        }
    };
    Ok(format!("{{'class': '{class}'}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replication_shorthands() {
        assert_eq!(
            replication_map("simple:3").unwrap(),
            "{'class': 'SimpleStrategy', 'replication_factor': 3}"
        );
        assert_eq!(
            replication_map("nts:datacenter1=3, dc2=1").unwrap(),
            "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3, 'dc2': 1}"
        );
        assert_eq!(replication_map("{'class': 'X'}").unwrap(), "{'class': 'X'}");
        assert!(replication_map("three").unwrap_err().contains("simple:RF"));
        assert!(replication_map("nts:dc1").is_err());
    }

    #[test]
    fn replication_that_cannot_work_is_refused_before_the_server_sees_it() {
        for (text, expected) in [
            ("simple:0", "stores the data on no node"),
            ("nts:dc1=0,dc2=0", "stores the data on no node"),
            (
                "{'class': 'SimpleStrategy', 'replication_factor': 0}",
                "no node",
            ),
            (
                "{'class': 'SimpleStrategy'}",
                "needs a 'replication_factor'",
            ),
            (
                "{'class': 'SimpleStrategy', 'replication_factor': 'x'}",
                "not a replication factor",
            ),
            (
                "{'class': 'SimpleStrategy', 'replication_factor': 1",
                "not closed",
            ),
            ("{'replication_factor': 1}", "needs a 'class'"),
            ("nts:dc'1=3", "not a data centre's name"),
            ("simple:-1", "whole number"),
        ] {
            let e = replication_map(text).unwrap_err();
            assert!(e.starts_with("--replication '"), "{text}: {e}");
            assert!(e.contains(expected), "{text}: {e}");
        }
        // A data centre may hold no replica when another holds some.
        assert!(replication_map("nts:dc1=3,dc2=0").is_ok());
        // A map is written back in one canonical form.
        assert_eq!(
            replication_map("{ 'class':'NetworkTopologyStrategy','dc1':3 }").unwrap(),
            "{'class': 'NetworkTopologyStrategy', 'dc1': 3}"
        );
        // Long input is quoted cut short.
        let long = format!("simple:{}", "9".repeat(500));
        assert!(replication_map(&long).unwrap_err().len() < 250);
    }

    #[test]
    fn compaction_shorthands() {
        assert_eq!(
            compaction_map("LCS").unwrap(),
            "{'class': 'LeveledCompactionStrategy'}"
        );
        assert!(compaction_map("fast").is_err());
        assert!(compaction_map("{'min_threshold': 4}")
            .unwrap_err()
            .contains("needs a 'class'"));
        assert!(compaction_map("{'class': 'LeveledCompactionStrategy'")
            .unwrap_err()
            .starts_with("--compaction '"));
    }
}
