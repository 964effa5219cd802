//! The vector workload's settings as config.json keeps them ([`VectorDefinition`]), read from
//! the command line ([`VectorRequest`]) and checked before anything connects: every error here
//! is the user's input, one line naming the flag.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::vectors::files::{self, Format, Neighbours};
use crate::vectors::{Similarity, Vectors};
use crate::workload::common::error::WorkloadError;
use crate::workload::common::request::VectorRequest;

/// Components of each vector unless `--dimensions` says otherwise.
pub const DEFAULT_DIMENSIONS: usize = 128;
/// Neighbours an ANN query asks for unless `--top-k` says otherwise.
pub const DEFAULT_TOP_K: usize = 10;
/// Vectors in the table unless `--rows` says otherwise.
pub const DEFAULT_ROWS: u64 = 10_000;
/// Distinct query vectors unless `--queries` says otherwise.
pub const DEFAULT_QUERIES: usize = 1_000;
/// Share of ANN queries unless `-r` says otherwise: mostly searches, some writes beside them.
pub const DEFAULT_READ_RATIO: f64 = 0.9;
/// The most components Cassandra takes in a vector (its `vector<float, N>` stops at 8192
/// for an SAI index in 5.0).
pub const MAX_DIMENSIONS: usize = 8_192;
/// The most neighbours a query may ask for: far beyond any use, and few enough that the
/// exact search's lists stay small.
pub const MAX_TOP_K: usize = 1_000;

/// The most vectors a table takes: the client works out each query's exact neighbours
/// among all of them before the run.
pub const MAX_ROWS: u64 = 100_000_000;
/// Topics of the generated embeddings: each vector lies near one of them.
pub const CLUSTERS: usize = 64;
/// How far a generated vector lies from its topic (see `vectors::generate::Shape::noise`).
pub const NOISE: f32 = 0.6;

/// Where the vectors come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// Seeded embeddings (`vectors::generate`), clustered around topics.
    Generated {
        /// Topics.
        clusters: usize,
        /// Distance from the topic.
        noise: f32,
    },
    /// The user's files.
    Files {
        /// The base vectors: row `i` of the table is vector `i` of the file.
        base: PathBuf,
        /// The query vectors; `None`: the last `queries` vectors of the base file, which are
        /// then not written.
        queries: Option<PathBuf>,
        /// The exact neighbours of each query (an `.ivecs` ground truth); `None`: computed.
        neighbours: Option<PathBuf>,
        /// The base file's size in bytes when read, to tell another file of the same name.
        base_bytes: u64,
    },
}

/// The vector workload's settings, as config.json keeps them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorDefinition {
    /// Components of each vector.
    pub dimensions: usize,
    /// How the index compares vectors.
    pub similarity: Similarity,
    /// Neighbours each ANN query asks for (`LIMIT k`), and the k of recall@k.
    pub top_k: usize,
    /// Vectors in the table: ids 0..rows.
    pub rows: u64,
    /// Distinct query vectors, each with its exact neighbours.
    pub queries: usize,
    /// Where the vectors come from.
    pub source: Source,
}

impl VectorDefinition {
    /// The definition the flags give, the files' dimension checked against `--dimensions`
    /// (a file's own dimension is taken when the flag is not given).
    pub fn resolve(request: &VectorRequest) -> Result<VectorDefinition, WorkloadError> {
        let invalid = |m: String| WorkloadError::Invalid(m);
        let top_k = request.top_k.unwrap_or(DEFAULT_TOP_K);
        if !(1..=MAX_TOP_K).contains(&top_k) {
            return Err(invalid(format!(
                "--top-k {top_k}: an ANN query asks for 1 to {MAX_TOP_K} neighbours"
            )));
        }
        if let Some(d) = request.dimensions {
            if !(1..=MAX_DIMENSIONS).contains(&d) {
                return Err(invalid(format!(
                    "--dimensions {d}: a vector has 1 to {MAX_DIMENSIONS} components"
                )));
            }
        }
        let queries = request.queries.unwrap_or(DEFAULT_QUERIES);
        if queries == 0 {
            return Err(invalid(
                "--queries 0: an ANN query needs a query vector; give at least 1".into(),
            ));
        }
        if request.rows == Some(0) {
            return Err(invalid(
                "--rows 0: the index needs vectors to search; give at least 1".into(),
            ));
        }
        if let Some(rows) = request.rows.filter(|&r| r > MAX_ROWS) {
            return Err(invalid(format!(
                "--rows {rows}: at most {MAX_ROWS} vectors, since the client works out each \
                 query's exact neighbours among all of them"
            )));
        }
        if let Some(rows) = request.rows.filter(|&r| r < top_k as u64) {
            return Err(invalid(format!(
                "--rows {rows} --top-k {top_k}: a query would ask for more neighbours than the \
                 table holds; give --rows of at least {top_k}, or a smaller --top-k"
            )));
        }
        let similarity = request.similarity.unwrap_or(Similarity::Cosine);
        let Some(base) = &request.vectors else {
            for (given, flag) in [
                (request.query_vectors.is_some(), "--query-vectors"),
                (request.neighbours.is_some(), "--neighbours"),
            ] {
                if given {
                    return Err(invalid(format!(
                        "{flag} goes with --vectors (the base vectors file)"
                    )));
                }
            }
            return Ok(VectorDefinition {
                dimensions: request.dimensions.unwrap_or(DEFAULT_DIMENSIONS),
                similarity,
                top_k,
                rows: request.rows.unwrap_or(DEFAULT_ROWS),
                queries,
                source: Source::Generated {
                    clusters: CLUSTERS,
                    noise: NOISE,
                },
            });
        };
        if request.neighbours.is_some() && request.query_vectors.is_none() {
            return Err(invalid(
                "--neighbours needs --query-vectors: a ground truth belongs to its queries".into(),
            ));
        }
        // Read the files whole now: a truncated or wrong file is refused before anything
        // connects. (The workload reads them again when it prepares: config.json names
        // them, and a repeat reads them from there.)
        let data = Loaded::read(
            base,
            request.query_vectors.as_deref(),
            request.neighbours.as_deref(),
            request.dimensions,
            request.rows,
            queries,
            top_k,
        )?;
        if data.base.len() < top_k {
            return Err(invalid(format!(
                "--vectors {} holds {} vectors, fewer than --top-k {top_k} neighbours a query \
                 asks for: give a smaller --top-k",
                base.display(),
                data.base.len()
            )));
        }
        let base_bytes = std::fs::metadata(base).map(|m| m.len()).unwrap_or(0);
        Ok(VectorDefinition {
            dimensions: data.base.dim,
            similarity,
            top_k,
            rows: data.base.len() as u64,
            queries: data.queries.len(),
            source: Source::Files {
                base: absolute(base),
                queries: request.query_vectors.as_deref().map(absolute),
                neighbours: request.neighbours.as_deref().map(absolute),
                base_bytes,
            },
        })
    }

    /// The table's comment, naming the vectors it holds: a table written with other vectors
    /// (another seed, count, dimension or file) would make the exact neighbours wrong, so the
    /// workload refuses it.
    pub fn table_comment(&self, seed: u64) -> String {
        let source = match &self.source {
            Source::Generated { clusters, noise } => {
                format!("generated seed={seed} clusters={clusters} noise={noise}")
            }
            Source::Files {
                base,
                queries,
                base_bytes,
                ..
            } => format!(
                "file {} ({base_bytes} bytes){}",
                base.display(),
                if queries.is_none() {
                    ", queries held out"
                } else {
                    ""
                }
            ),
        };
        format!(
            "headroom vector: {source}, rows={}, dimensions={}, similarity={}",
            self.rows,
            self.dimensions,
            self.similarity.name()
        )
    }
}

/// The path made absolute, so that config.json names the file whatever the directory a
/// repeat runs from (as given when the working directory cannot be read).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The vectors of the user's files, read and checked: the base (ids 0..), the queries, and
/// their exact neighbours when a file gives them.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The base vectors written to the table.
    pub base: Vectors,
    /// The query vectors.
    pub queries: Vectors,
    /// The ground truth's neighbours of each query, when given.
    pub neighbours: Option<Neighbours>,
}

impl Loaded {
    /// Reads the files: at most `rows` base vectors (all when `None`), the first `queries`
    /// query vectors (of `query_file`, or else held out from the end of the base file), the
    /// ground truth of those queries. Every mistake is one line naming the flag and file.
    pub fn read(
        base_file: &Path,
        query_file: Option<&Path>,
        neighbours_file: Option<&Path>,
        dimensions: Option<usize>,
        rows: Option<u64>,
        queries: usize,
        top_k: usize,
    ) -> Result<Loaded, WorkloadError> {
        let invalid = |m: String| WorkloadError::Invalid(m);
        let usage = |e: crate::usage::UsageError| invalid(e.to_string());
        let cap =
            |n: Option<u64>| n.map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let (base, queries) = match query_file {
            Some(q) => {
                let base = files::read_vectors(base_file, "--vectors", dimensions, cap(rows))
                    .map_err(usage)?;
                let queries = files::read_vectors(q, "--query-vectors", Some(base.dim), queries)
                    .map_err(usage)?;
                (base, queries)
            }
            None => {
                let limit = cap(rows).saturating_add(queries);
                let all = files::read_vectors(base_file, "--vectors", dimensions, limit)
                    .map_err(usage)?;
                if all.len() <= queries {
                    return Err(invalid(format!(
                        "--vectors {}: {} vectors, and the last --queries {queries} of them would be \
                         the queries, leaving none to search: give --query-vectors, or fewer --queries",
                        base_file.display(),
                        all.len()
                    )));
                }
                let split = (all.len() - queries) * all.dim;
                let dim = all.dim;
                let mut data = all.data;
                let held_out = data.split_off(split);
                (Vectors::new(dim, data), Vectors::new(dim, held_out))
            }
        };
        if base.dim > MAX_DIMENSIONS {
            return Err(invalid(format!(
                "--vectors {}: vectors of dimension {}, more than Cassandra's {MAX_DIMENSIONS}",
                base_file.display(),
                base.dim
            )));
        }
        let neighbours = match neighbours_file {
            None => None,
            Some(n) => {
                if Format::of(n, "--neighbours").map_err(usage)? != Format::Ivecs {
                    return Err(invalid(format!(
                        "--neighbours {}: a ground truth is an .ivecs file (each query's neighbour ids)",
                        n.display()
                    )));
                }
                let truth =
                    files::read_neighbours(n, "--neighbours", queries.len()).map_err(usage)?;
                if truth.len() < queries.len() {
                    return Err(invalid(format!(
                        "--neighbours {}: the neighbours of {} queries, and --query-vectors has {}",
                        n.display(),
                        truth.len(),
                        queries.len()
                    )));
                }
                if truth.k < top_k {
                    return Err(invalid(format!(
                        "--neighbours {}: {} neighbours per query, fewer than --top-k {top_k}",
                        n.display(),
                        truth.k
                    )));
                }
                // Only the first k of each query's neighbours are used; those must be rows.
                let beyond = (0..queries.len())
                    .flat_map(|q| truth.of(q)[..top_k].iter())
                    .find(|id| u64::from(**id) >= base.len() as u64);
                if let Some(id) = beyond {
                    return Err(invalid(format!(
                        "--neighbours {}: the neighbour {id} is not among the {} base vectors \
                         (a ground truth of another base, or of more rows than --rows)",
                        n.display(),
                        base.len()
                    )));
                }
                Some(truth)
            }
        };
        Ok(Loaded {
            base,
            queries,
            neighbours,
        })
    }
}
