//! The similarity functions of a vector index, with the scores Cassandra's SAI orders ANN
//! results by: higher is closer, for all three.
//!
//! Cassandra 5.0's SAI builds its vector index with jvector and orders by jvector's
//! `VectorSimilarityFunction` (chosen by the index option `similarity_function`: `COSINE`,
//! the default, `DOT_PRODUCT` or `EUCLIDEAN`). jvector's definitions (jvector-base,
//! `io.github.jbellis.jvector.vector.VectorSimilarityFunction` and the batch forms in
//! `VectorUtilSupport`: `dotProductMultiScore`, `squareL2DistanceMultiScore`,
//! `cosineMultiScore`) are:
//!
//! - cosine: `(1 + cos(a, b)) / 2`
//! - dot product: `(1 + a·b) / 2` (meant for unit vectors, where it equals cosine's)
//! - euclidean: `1 / (1 + |a − b|²)`, the squared distance
//!
//! ScyllaDB's CQL functions `similarity_cosine`, `similarity_dot_product` and
//! `similarity_euclidean` (cql3/functions/vector_similarity_fcts.cc) state that they follow
//! these same formulas of Cassandra's (jvector's) to stay compatible, citing jvector's
//! VectorSimilarityFunction.java lines 36–69.
//!
//! The sums are in f32, as the index's are, with eight running sums so that the compiler can
//! use vector instructions; the same functions serve the single score and the exact search,
//! so both give the same number to the bit.

use crate::usage::UsageError;

/// How a vector index compares vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Similarity {
    /// The angle between the vectors, whatever their length (`cosine`, Cassandra's default).
    Cosine,
    /// The dot product, for unit vectors (`dot_product`).
    DotProduct,
    /// The Euclidean distance (`euclidean`).
    Euclidean,
}

impl Similarity {
    /// Every similarity, in the order of the names in [`std::str::FromStr`]'s message.
    pub const ALL: [Similarity; 3] = [
        Similarity::Cosine,
        Similarity::DotProduct,
        Similarity::Euclidean,
    ];

    /// The name users type, as in the index option `similarity_function` (lower case).
    pub fn name(self) -> &'static str {
        match self {
            Similarity::Cosine => "cosine",
            Similarity::DotProduct => "dot_product",
            Similarity::Euclidean => "euclidean",
        }
    }

    /// The score of `a` against `b`, higher when closer; panics when their lengths differ.
    pub fn score(self, a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len(), "vectors of different dimensions");
        match self {
            Similarity::Cosine => cosine_score(dot(a, b), norm(a), norm(b)),
            Similarity::DotProduct => dot_product_score(dot(a, b)),
            Similarity::Euclidean => euclidean_score(square_distance(a, b)),
        }
    }
}

impl std::fmt::Display for Similarity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Similarity {
    type Err = UsageError;

    /// `cosine`, `dot_product` or `euclidean`, in any case (CQL writes them in capitals).
    fn from_str(text: &str) -> Result<Similarity, UsageError> {
        let lower = text.trim().to_ascii_lowercase();
        Similarity::ALL
            .into_iter()
            .find(|s| s.name() == lower)
            .ok_or_else(|| {
                UsageError::new(format!(
                    "unknown similarity {:?}: give cosine, dot_product or euclidean",
                    crate::usage::cut(text, 40)
                ))
            })
    }
}

/// Cosine's score from the dot product and the two lengths. A vector of length 0 has no
/// direction (Cassandra refuses it in a cosine index); its cosine is taken as 0 here, the
/// middle score, rather than a NaN that would sort nowhere.
pub fn cosine_score(dot: f32, norm_a: f32, norm_b: f32) -> f32 {
    let lengths = norm_a * norm_b;
    let cos = if lengths > 0.0 { dot / lengths } else { 0.0 };
    (1.0 + cos) / 2.0
}

/// Dot product's score from the dot product.
pub fn dot_product_score(dot: f32) -> f32 {
    (1.0 + dot) / 2.0
}

/// Euclidean's score from the squared distance.
pub fn euclidean_score(square_distance: f32) -> f32 {
    1.0 / (1.0 + square_distance)
}

/// Lanes of running sums: enough for the compiler to fill a 256-bit register.
const LANES: usize = 8;

/// Σ aᵢbᵢ over the common length.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..LANES {
            sums[l] += x[l] * y[l];
        }
    }
    sums.iter().sum::<f32>() + tail
}

/// Σ (aᵢ − bᵢ)² over the common length.
pub fn square_distance(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| (x - y) * (x - y))
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..LANES {
            let d = x[l] - y[l];
            sums[l] += d * d;
        }
    }
    sums.iter().sum::<f32>() + tail
}

/// The Euclidean length √(Σ aᵢ²).
pub fn norm(a: &[f32]) -> f32 {
    dot(a, a).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-6
    }

    /// Scores worked by hand from the formulas of the module's documentation.
    #[test]
    fn vectors_scores_follow_cassandras_formulas() {
        let a = [1.0, 0.0];
        let b = [0.0, 1.0];
        let c = [-2.0, 0.0];
        assert!(close(Similarity::Cosine.score(&a, &a), 1.0));
        assert!(close(Similarity::Cosine.score(&a, &b), 0.5));
        assert!(close(Similarity::Cosine.score(&a, &c), 0.0));
        assert!(close(Similarity::DotProduct.score(&a, &b), 0.5));
        assert!(close(Similarity::DotProduct.score(&a, &a), 1.0));
        assert!(close(Similarity::DotProduct.score(&a, &c), -0.5));
        assert!(close(Similarity::Euclidean.score(&a, &a), 1.0));
        assert!(close(Similarity::Euclidean.score(&a, &b), 1.0 / 3.0));
        assert!(close(Similarity::Euclidean.score(&a, &c), 0.1));
        assert!(close(Similarity::Cosine.score(&[0.0, 0.0], &a), 0.5));
    }

    /// The eight running sums give what a plain sum gives, tail included.
    #[test]
    fn vectors_sums_over_lanes_match_plain_sums() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.25 - 2.0).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.125).collect();
        let plain_dot: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let plain_sq: f32 = a.iter().zip(&b).map(|(x, y)| (x - y) * (x - y)).sum();
        assert!((dot(&a, &b) - plain_dot).abs() < 1e-4);
        assert!((square_distance(&a, &b) - plain_sq).abs() < 1e-4);
    }

    #[test]
    fn vectors_similarity_names_parse_and_others_are_refused() {
        for s in Similarity::ALL {
            assert_eq!(s.name().parse::<Similarity>().unwrap(), s);
            assert_eq!(s.to_string(), s.name());
        }
        assert_eq!(
            "DOT_PRODUCT".parse::<Similarity>().unwrap(),
            Similarity::DotProduct
        );
        let e = "l2".parse::<Similarity>().unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown similarity \"l2\": give cosine, dot_product or euclidean"
        );
    }
}
