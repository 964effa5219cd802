//! What the command line says of the workload before it is read ([`WorkloadRequest`]), the
//! vector workload's flags among it ([`VectorRequest`]), and the keyspace used when none is
//! named. The commands build it from their flags; each format reads the flags it takes and
//! refuses those it does not.

use std::path::PathBuf;
use std::time::Duration;

use crate::vectors::Similarity;

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
    pub vector: VectorRequest,
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

/// What the command line says of vectors: each `None` when the flag was not given, so that
/// another workload can refuse them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VectorRequest {
    /// `--dimensions`.
    pub dimensions: Option<usize>,
    /// `--similarity`.
    pub similarity: Option<Similarity>,
    /// `--top-k`.
    pub top_k: Option<usize>,
    /// `--rows`.
    pub rows: Option<u64>,
    /// `--queries`.
    pub queries: Option<usize>,
    /// `--vectors`.
    pub vectors: Option<PathBuf>,
    /// `--query-vectors`.
    pub query_vectors: Option<PathBuf>,
    /// `--neighbours`.
    pub neighbours: Option<PathBuf>,
}

impl VectorRequest {
    /// The first vector flag given, for refusing it on another workload.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (self.dimensions.is_some(), "--dimensions"),
            (self.similarity.is_some(), "--similarity"),
            (self.top_k.is_some(), "--top-k"),
            (self.rows.is_some(), "--rows"),
            (self.queries.is_some(), "--queries"),
            (self.vectors.is_some(), "--vectors"),
            (self.query_vectors.is_some(), "--query-vectors"),
            (self.neighbours.is_some(), "--neighbours"),
        ]
        .into_iter()
        .find(|(given, _)| *given)
        .map(|(_, flag)| flag)
    }
}
