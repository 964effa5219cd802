//! The workload's flags, shared by `run`, `capacity` and `sweep`, and `--ops`: a count of
//! requests or a mix of a profile's operations.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::ranges;
use crate::units;
use crate::workload::common::generators::PartitionGenerator;

/// The workload and its settings, shared by `run`, `capacity` and `sweep`.
#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Workload")]
pub struct WorkloadArgs {
    /// The workload: keyvalue, timeseries, documents, vector, ycsb, or a YAML file (a
    /// cassandra-stress user profile, or headroom's own format; see docs/workloads.md).
    ///
    /// keyvalue: table keyvalue (key text PRIMARY KEY, value text); write inserts 100–200
    /// characters, read selects a key, delete deletes it. timeseries: table sensor_data
    /// (sensor_id text, timestamp timeuuid, data text), newest first; write inserts a row,
    /// read fetches a partition's latest 500 rows, delete removes its rows older than 60 s.
    /// documents: table documents ((source, bucket), ts, seq, doc text): write inserts a JSON
    /// document of a few hundred bytes with a TTL (--ttl, default 8640 s) into partitions of
    /// --rows-per-partition rows ordered by time, TWCS unless --compaction; read (-r, default
    /// 0.05) fetches the newest 100 rows of a recent partition.
    /// vector: table vectors (id bigint, v vector<float, D>) under an SAI vector index; write
    /// rewrites a row's vector, ann (-r, default 0.9) asks for the --top-k rows nearest a
    /// query vector and records the answer's recall@k (see "Vector search" below).
    /// ycsb: YCSB's core workloads on table ycsb.usertable (-P, -p, --workload).
    #[arg(value_name = "WORKLOAD", required = true)]
    pub name: Option<String>,

    /// Number of distinct partition keys, e.g. 100M. [range: 1 to 1000G]
    #[arg(long, default_value = "1M", value_name = "N", value_parser = ranges::count::<u64>("1", "1000G"))]
    pub partitions: u64,

    /// -p N: the number of partitions, as --partitions (tlp-stress). -p KEY=VALUE: a YCSB
    /// property, overriding the -P files and --workload (YCSB). Repeatable.
    #[arg(short = 'p', value_name = "N|KEY=VALUE", action = clap::ArgAction::Append)]
    pub p: Vec<String>,

    /// YCSB: a workload property file, as YCSB reads them (e.g. workloads/workloadf).
    /// Repeatable; later files override earlier ones.
    #[arg(short = 'P', long = "property-file", value_name = "FILE")]
    pub property_files: Vec<PathBuf>,

    /// YCSB: one of YCSB's core workloads, a to f, with the values of its own files.
    #[arg(long = "workload", value_name = "A-F")]
    pub ycsb_workload: Option<String>,

    /// The mix of a cassandra-stress profile's operations, set from --ops.
    #[arg(skip)]
    pub op_mix: Option<Vec<(String, f64)>>,

    /// How partition keys are chosen: uniformly, normally around the middle, or in
    /// sequence (wrapping around).
    #[arg(long, value_enum, default_value = "random", value_name = "KIND")]
    pub partition_generator: PartitionGenerator,

    /// Fraction of requests that are reads, e.g. 0.2 or 20%. The mix is exact over the run.
    /// [range: 0 to 1] [default: 0; 0.05 for documents; 0.9 for vector]
    #[arg(long, short = 'r', value_name = "FRACTION", value_parser = ranges::fraction("0", "1"))]
    pub read_ratio: Option<f64>,

    /// documents: rows each partition receives before its source moves on to a new one.
    /// [range: 1 to 1G] [default: 1000]
    #[arg(long, value_name = "N", value_parser = ranges::count::<u64>("1", "1G"))]
    pub rows_per_partition: Option<u64>,

    /// Fraction of requests that are deletes; with --read-ratio, at most 1 in all. [range: 0
    /// to 1]
    #[arg(long, default_value = "0", value_name = "FRACTION", value_parser = ranges::fraction("0", "1"))]
    pub delete_ratio: f64,

    /// Rows written before the run (as fast as the cluster takes them), reported on their own.
    /// [range: 0 to 1000G]
    #[arg(long, default_value = "0", value_name = "N", value_parser = ranges::count::<u64>("0", "1000G"))]
    pub populate: u64,

    /// Keyspace replication: simple:RF, nts:DC=RF[,DC=RF...], or a CQL map.
    #[arg(long, default_value = "simple:1", value_name = "REPLICATION")]
    pub replication: String,

    /// Table compaction: stcs, lcs, twcs, ucs, or a CQL map. [default: Cassandra's]
    #[arg(long, value_name = "COMPACTION")]
    pub compaction: Option<String>,

    /// Table default time to live, e.g. 1h: rows expire this long after they are written.
    /// [range: 1s to 7300d; Cassandra's 20 years]
    #[arg(long, value_name = "DURATION", value_parser = ranges::duration("1s", "7300d"))]
    pub ttl: Option<Duration>,

    /// Consistency level of every request.
    #[arg(long, default_value = "LOCAL_ONE", value_name = "LEVEL")]
    pub consistency: String,

    /// Drop and recreate the keyspace first (deletes its data).
    #[arg(long)]
    pub drop: bool,

    /// Seed of every value generator: the same seed sends the same requests. [range: 0 to
    /// 18446744073709551615]
    #[arg(long, default_value = "1", value_name = "N", value_parser = ranges::count::<u64>("0", "18446744073709551615"))]
    pub seed: u64,

    /// Keyspace of the workload's table.
    #[arg(long, default_value = "headroom", value_name = "NAME")]
    pub keyspace: String,

    /// The vector workload's own flags.
    #[command(flatten)]
    pub vector: VectorArgs,
}

/// The vector workload's flags: its vectors, how they are compared, what a query asks for.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Vector search (the vector workload)")]
pub struct VectorArgs {
    /// Components of each vector. [range: 1 to 8192] [default: 128; a file's own with
    /// --vectors]
    #[arg(long, value_name = "D", value_parser = ranges::count::<usize>("1", "8192"))]
    pub dimensions: Option<usize>,

    /// How the index compares vectors: cosine, dot_product (unit vectors) or euclidean.
    /// [default: cosine]
    #[arg(long, value_name = "FUNCTION", value_parser = parse_similarity)]
    pub similarity: Option<crate::vectors::Similarity>,

    /// Neighbours each ANN query asks for (LIMIT k): the k of recall@k. [range: 1 to 1000]
    /// [default: 10]
    #[arg(long, value_name = "K", value_parser = ranges::count::<usize>("1", "1000"))]
    pub top_k: Option<usize>,

    /// Vectors in the table, e.g. 100k: generated, or the first N of --vectors. The populate
    /// writes each once. [range: 1 to 100M; at least --top-k] [default: 10k; the whole file
    /// with --vectors]
    #[arg(long, value_name = "N", value_parser = ranges::count::<u64>("1", "100M"))]
    pub rows: Option<u64>,

    /// Distinct query vectors; the client works out each one's exact neighbours before the
    /// run (or reads them from --neighbours). [range: 1 to 100k] [default: 1000]
    #[arg(long, value_name = "N", value_parser = ranges::count::<usize>("1", "100k"))]
    pub queries: Option<usize>,

    /// The base vectors to write and search, instead of generated ones: .fvecs, .bvecs
    /// (as the SIFT and GIST sets ship them) or .npy (a 2-D float array). Without
    /// --query-vectors the file's last --queries vectors are the queries and are not written.
    /// HDF5 files (ann-benchmarks) are not read: see docs/workloads.md to convert one.
    #[arg(long, value_name = "FILE")]
    pub vectors: Option<PathBuf>,

    /// The query vectors, of the same dimension as --vectors.
    #[arg(long, value_name = "FILE")]
    pub query_vectors: Option<PathBuf>,

    /// Each query's true nearest neighbours (an .ivecs ground truth, as SIFT's
    /// *_groundtruth.ivecs); without it the client computes them exactly.
    #[arg(long, value_name = "FILE")]
    pub neighbours: Option<PathBuf>,
}

fn parse_similarity(text: &str) -> Result<crate::vectors::Similarity, String> {
    text.parse()
        .map_err(|e: crate::usage::UsageError| e.to_string())
}

impl VectorArgs {
    /// The flags as the vector workload takes them.
    pub fn request(&self) -> crate::workload::VectorRequest {
        crate::workload::VectorRequest {
            dimensions: self.dimensions,
            similarity: self.similarity,
            top_k: self.top_k,
            rows: self.rows,
            queries: self.queries,
            vectors: self.vectors.clone(),
            query_vectors: self.query_vectors.clone(),
            neighbours: self.neighbours.clone(),
        }
    }
}

/// What `--ops` says: a count of requests, or a mix of named operations.
#[derive(Debug, Clone, PartialEq)]
pub enum OpsArg {
    /// Requests in the measured run.
    Count(u64),
    /// Operation names and their weights, in the order given.
    Mix(Vec<(String, f64)>),
}

/// Reads `--ops`: `20k`, or `insert=1,simple1=9` (cassandra-stress's `ops(insert=1,...)` too).
pub fn parse_ops(text: &str) -> Result<OpsArg, String> {
    let text = text.trim();
    if !text.contains('=') {
        return units::parse_count(text)
            .map(OpsArg::Count)
            .map_err(|e| e.to_string());
    }
    let inner = text
        .strip_prefix("ops(")
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(text);
    let mut mix = Vec::new();
    for item in inner.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, weight) = item
            .split_once('=')
            .ok_or_else(|| format!("'{item}': write each operation as NAME=WEIGHT"))?;
        let weight: f64 = weight
            .trim()
            .parse()
            .ok()
            .filter(|w: &f64| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| format!("'{item}': the weight must be a number, 0 or more"))?;
        mix.push((name.trim().to_string(), weight));
    }
    if mix.iter().all(|(_, w)| *w == 0.0) {
        return Err("at least one operation needs a weight above 0".into());
    }
    Ok(OpsArg::Mix(mix))
}

/// `--ops` of `capacity` and `sweep`: only a mix (their length is set otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct OpMixArg(pub Vec<(String, f64)>);

/// Reads a mix for `capacity` and `sweep`: `insert=1,simple1=9`.
pub fn parse_op_mix(text: &str) -> Result<OpMixArg, String> {
    match parse_ops(text)? {
        OpsArg::Mix(mix) => Ok(OpMixArg(mix)),
        OpsArg::Count(_) => Err(
            "here --ops is the mix of a profile's operations, e.g. 'insert=1,simple1=9'; the length of each run is set by its own flags"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};
    use crate::results::config::RunPhase;

    #[test]
    fn ops_is_a_count_or_a_mix() {
        assert_eq!(parse_ops("20k"), Ok(OpsArg::Count(20_000)));
        let mix = OpsArg::Mix(vec![("insert".into(), 1.0), ("simple1".into(), 9.0)]);
        assert_eq!(parse_ops("insert=1,simple1=9").as_ref(), Ok(&mix));
        assert_eq!(parse_ops("ops(insert=1, simple1=9)").as_ref(), Ok(&mix));
        assert!(parse_ops("insert=x").unwrap_err().contains("number"));
        assert!(parse_ops("insert=0").is_err());
        assert!(parse_ops("many").is_err());
    }

    #[test]
    fn capacity_and_sweep_take_a_mix_but_no_count() {
        let cli =
            Cli::try_parse_from(["headroom", "sweep", "p.yaml", "--ops", "insert=1,q=3"]).unwrap();
        let Command::Sweep(args) = cli.command else {
            panic!("not sweep")
        };
        assert_eq!(
            args.ops,
            Some(OpMixArg(vec![("insert".into(), 1.0), ("q".into(), 3.0)]))
        );
        let err =
            Cli::try_parse_from(["headroom", "capacity", "p.yaml", "--ops", "1000"]).unwrap_err();
        assert!(
            err.to_string()
                .contains("the mix of a profile's operations"),
            "{err}"
        );
    }

    #[test]
    fn dash_p_is_partitions_or_a_property() {
        let cli = Cli::try_parse_from([
            "headroom",
            "run",
            "ycsb",
            "-P",
            "w",
            "-p",
            "recordcount=5",
            "-p",
            "10k",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run")
        };
        assert_eq!(args.workload.p, ["recordcount=5", "10k"]);
        assert_eq!(args.workload.property_files, [PathBuf::from("w")]);
        assert_eq!(args.phase, RunPhase::Both);
    }
}
