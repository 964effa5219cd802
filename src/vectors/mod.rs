//! Vectors for the capacity of vector search (Cassandra 5's SAI vector index, `ORDER BY v ANN
//! OF ? LIMIT k`), judged on recall as well as latency: pure computation, no server. The
//! similarity functions the index orders by, the exact nearest neighbours that recall is
//! measured against, readers of the standard ANN benchmark files, a seeded generator of
//! embeddings shaped like real ones, and recall@k itself.

pub mod exact;
pub mod files;
pub mod generate;
pub mod recall;
pub mod similarity;

pub use similarity::Similarity;

/// Vectors of one dimension, laid out one after another in one allocation: vector `i` is
/// `data[i * dim..(i + 1) * dim]`. Contiguous so that a scan over all of them reads memory in
/// order.
#[derive(Debug, Clone, PartialEq)]
pub struct Vectors {
    /// The number of components of each vector (at least 1).
    pub dim: usize,
    /// The components, `len() * dim` of them.
    pub data: Vec<f32>,
}

impl Vectors {
    /// Vectors of `dim` components from `data`; panics unless `dim` is at least 1 and divides
    /// the length of `data` (a caller's mistake, not the user's).
    pub fn new(dim: usize, data: Vec<f32>) -> Vectors {
        assert!(dim > 0, "vectors of dimension 0");
        assert_eq!(
            data.len() % dim,
            0,
            "{} components for dimension {dim}",
            data.len()
        );
        Vectors { dim, data }
    }

    /// How many vectors there are.
    pub fn len(&self) -> usize {
        self.data.len() / self.dim
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Vector `i`; panics when there is no such vector.
    pub fn get(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Every vector, in order.
    pub fn iter(&self) -> std::slice::ChunksExact<'_, f32> {
        self.data.chunks_exact(self.dim)
    }
}
