//! The vectors of a run and their truth: the base vectors (row `id` of the table is vector
//! `id`), the query vectors, and each query's exact `k` nearest rows, made or read once
//! before the run, out of its timing.

use std::time::Instant;

use super::model::{Loaded, Source, VectorDefinition};
use crate::vectors::exact::nearest;
use crate::vectors::generate::{Generator, Shape};
use crate::vectors::Vectors;
use crate::workload::common::error::WorkloadError;
use serde::{Deserialize, Serialize};

/// The vectors a run writes and searches for, and the truth its answers are scored against.
#[derive(Debug)]
pub struct Data {
    /// The base vectors: row `id` holds vector `id`.
    pub base: Vectors,
    /// The query vectors.
    pub queries: Vectors,
    /// Each query's exact neighbours, `top_k` of them (fewer only when the base is smaller),
    /// closest first, query after query.
    truth: Vec<u32>,
    /// Neighbours per query in `truth`.
    stride: usize,
    /// The k of recall@k.
    pub top_k: usize,
    /// What vectors.json says of them.
    pub facts: VectorFacts,
}

impl Data {
    /// The vectors of `definition` for `seed`, and their exact neighbours (computed, or
    /// read from the ground truth file).
    pub fn make(definition: &VectorDefinition, seed: u64) -> Result<Data, WorkloadError> {
        let started = Instant::now();
        let (base, queries, given, source) = match &definition.source {
            Source::Generated { clusters, noise } => {
                let generator = Generator::new(
                    seed,
                    Shape {
                        dim: definition.dimensions,
                        clusters: *clusters,
                        noise: *noise,
                        similarity: definition.similarity,
                    },
                );
                (
                    generator.base_vectors(0..definition.rows),
                    generator.query_vectors(0..definition.queries as u64),
                    None,
                    format!("generated: {clusters} clusters, seed {seed}"),
                )
            }
            Source::Files {
                base,
                queries,
                neighbours,
                ..
            } => {
                let loaded = Loaded::read(
                    base,
                    queries.as_deref(),
                    neighbours.as_deref(),
                    Some(definition.dimensions),
                    Some(definition.rows),
                    definition.queries,
                    definition.top_k,
                )?;
                if loaded.base.len() as u64 != definition.rows
                    || loaded.queries.len() != definition.queries
                {
                    return Err(WorkloadError::Invalid(format!(
                        "--vectors {}: the file changed since the run was set up ({} base and {} \
                         query vectors, where {} and {} were read)",
                        base.display(),
                        loaded.base.len(),
                        loaded.queries.len(),
                        definition.rows,
                        definition.queries
                    )));
                }
                let source = match queries {
                    Some(q) => format!("{} (queries {})", base.display(), q.display()),
                    None => format!(
                        "{} (the last {} held out as queries)",
                        base.display(),
                        definition.queries
                    ),
                };
                (loaded.base, loaded.queries, loaded.neighbours, source)
            }
        };
        let load_s = started.elapsed().as_secs_f64();
        let k = definition.top_k;
        let started = Instant::now();
        let (truth, stride, kind) = match given {
            Some(n) => {
                let mut truth = Vec::with_capacity(queries.len() * k);
                for q in 0..queries.len() {
                    truth.extend_from_slice(&n.of(q)[..k]);
                }
                (truth, k, "file")
            }
            None => {
                let lists = nearest(&base, &queries, k, definition.similarity);
                let stride = k.min(base.len());
                (lists.concat(), stride, "computed")
            }
        };
        let truth_s = if kind == "file" {
            0.0
        } else {
            started.elapsed().as_secs_f64()
        };
        Ok(Data {
            facts: VectorFacts {
                rows: base.len() as u64,
                queries: queries.len(),
                dimensions: base.dim,
                similarity: definition.similarity.name().to_string(),
                top_k: k,
                source,
                truth: kind.to_string(),
                truth_s,
                load_s,
            },
            base,
            queries,
            truth,
            stride,
            top_k: k,
        })
    }

    /// Query `q`'s exact neighbours, closest first.
    pub fn truth(&self, q: usize) -> &[u32] {
        &self.truth[q * self.stride..(q + 1) * self.stride]
    }
}

/// What a run of the vector workload searched and how its truth was found: vectors.json in
/// the run directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorFacts {
    /// Vectors in the table.
    pub rows: u64,
    /// Distinct query vectors.
    pub queries: usize,
    /// Components of each vector.
    pub dimensions: usize,
    /// The index's similarity function.
    pub similarity: String,
    /// Neighbours each ANN query asks for: the k of recall@k.
    pub top_k: usize,
    /// Where the vectors came from, in words.
    pub source: String,
    /// `computed` (by the client, exactly, before the run) or `file` (a ground truth).
    pub truth: String,
    /// How long working the exact neighbours out took, seconds (0 when read from a file).
    pub truth_s: f64,
    /// How long making or reading the vectors took, seconds.
    pub load_s: f64,
}
