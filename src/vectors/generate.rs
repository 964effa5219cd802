//! Seeded embeddings shaped like real ones, for a vector workload without a data set: real
//! embeddings are not spread evenly over the sphere but gather around topics, and an ANN
//! index's recall depends on that. `clusters` centres are drawn from the seed; each vector is
//! a centre plus Gaussian noise, made unit length for cosine and dot product (Cassandra's
//! dot product assumes unit vectors); euclidean vectors keep their length.
//!
//! Vector `id` is a pure function of (seed, id, dim, clusters, noise): its random stream is
//! seeded from the seed and the id through SplitMix64's finaliser, so any client of a fleet,
//! and any repeat, makes the same vector for the same id without making the others. Queries
//! come from a stream of their own (the seed with [`QUERY_STREAM`] mixed in), so query `i` is
//! not base vector `i`. The streams are rand's `SmallRng`, which rand does not promise to keep
//! the same across its versions: the same build makes the same vectors.

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

use super::{Similarity, Vectors};

/// Mixed into the seed for the queries' stream.
pub const QUERY_STREAM: u64 = 0x5155_4552_5953_5452;
/// Mixed into the seed for the centres' stream.
const CENTRE_STREAM: u64 = 0x4345_4e54_5245_5321;

/// SplitMix64's finaliser. The same function as `workload::common::hash::splitmix_finalise`,
/// written again here because the foundation imports nothing of the workload layer above it.
fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The shape of the embeddings: how many components, how many topics, how far from them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// Components of each vector.
    pub dim: usize,
    /// How many cluster centres (at least 1).
    pub clusters: usize,
    /// The length of a vector's offset from its centre (a unit vector), before normalising:
    /// 0.5 gives a cosine of about 0.9 to the own centre.
    pub noise: f32,
    /// The similarity the vectors are for: cosine and dot product make them unit length.
    pub similarity: Similarity,
}

/// Makes the vectors of one [`Shape`] and seed.
#[derive(Debug, Clone)]
pub struct Generator {
    seed: u64,
    shape: Shape,
    /// The cluster centres, unit vectors, one after another.
    centres: Vectors,
}

impl Generator {
    /// The generator of `shape` for `seed`; panics when `dim` or `clusters` is 0 (the caller
    /// checks the user's values).
    pub fn new(seed: u64, shape: Shape) -> Generator {
        assert!(
            shape.dim > 0 && shape.clusters > 0,
            "a shape without vectors: {shape:?}"
        );
        let mut data = Vec::with_capacity(shape.dim * shape.clusters);
        for c in 0..shape.clusters as u64 {
            let mut rng = stream(seed ^ CENTRE_STREAM, c);
            let mut centre: Vec<f32> = (0..shape.dim).map(|_| gaussian(&mut rng)).collect();
            normalise(&mut centre);
            data.extend(centre);
        }
        Generator {
            seed,
            shape,
            centres: Vectors::new(shape.dim, data),
        }
    }

    /// The cluster centres.
    pub fn centres(&self) -> &Vectors {
        &self.centres
    }

    /// Base vector `id`, and the cluster it belongs to.
    pub fn base(&self, id: u64) -> (Vec<f32>, usize) {
        self.make(self.seed, id)
    }

    /// Query vector `id`, and the cluster it belongs to.
    pub fn query(&self, id: u64) -> (Vec<f32>, usize) {
        self.make(self.seed ^ QUERY_STREAM, id)
    }

    /// Base vectors `ids`, one after another.
    pub fn base_vectors(&self, ids: std::ops::Range<u64>) -> Vectors {
        self.many(ids, |id| self.base(id).0)
    }

    /// Query vectors `ids`, one after another.
    pub fn query_vectors(&self, ids: std::ops::Range<u64>) -> Vectors {
        self.many(ids, |id| self.query(id).0)
    }

    fn many(&self, ids: std::ops::Range<u64>, make: impl Fn(u64) -> Vec<f32>) -> Vectors {
        let mut data =
            Vec::with_capacity(self.shape.dim * (ids.end.saturating_sub(ids.start)) as usize);
        for id in ids {
            data.extend(make(id));
        }
        Vectors::new(self.shape.dim, data)
    }

    fn make(&self, seed: u64, id: u64) -> (Vec<f32>, usize) {
        let mut rng = stream(seed, id);
        let cluster = rng.random_range(0..self.shape.clusters);
        let sigma = self.shape.noise / (self.shape.dim as f32).sqrt();
        let mut v: Vec<f32> = self
            .centres
            .get(cluster)
            .iter()
            .map(|c| c + sigma * gaussian(&mut rng))
            .collect();
        if self.shape.similarity != Similarity::Euclidean {
            normalise(&mut v);
        }
        (v, cluster)
    }
}

/// The random stream of item `id` of the stream seeded `seed`.
fn stream(seed: u64, id: u64) -> rand::rngs::SmallRng {
    rand::rngs::SmallRng::seed_from_u64(splitmix(seed ^ splitmix(id)))
}

fn gaussian(rng: &mut rand::rngs::SmallRng) -> f32 {
    StandardNormal.sample(rng)
}

/// Scales `v` to length 1 (a zero vector, which Gaussian draws never give, stays as it is).
fn normalise(v: &mut [f32]) {
    let n = super::similarity::norm(v);
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(similarity: Similarity) -> Shape {
        Shape {
            dim: 64,
            clusters: 8,
            noise: 0.5,
            similarity,
        }
    }

    #[test]
    fn vectors_generated_are_a_function_of_seed_and_id() {
        let a = Generator::new(7, shape(Similarity::Cosine));
        let b = Generator::new(7, shape(Similarity::Cosine));
        assert_eq!(a.base(12345), b.base(12345));
        assert_eq!(a.base_vectors(10..20).get(3), a.base(13).0.as_slice());
        assert_ne!(a.base(1).0, a.base(2).0);
        assert_ne!(
            a.base(1).0,
            a.query(1).0,
            "queries come from their own stream"
        );
        assert_ne!(
            a.base(1).0,
            Generator::new(8, shape(Similarity::Cosine)).base(1).0
        );
        // The stream's first numbers, fixed: a change here changes every generated workload.
        assert_eq!(splitmix(0x9E37_79B9_7F4A_7C15), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn vectors_generated_for_cosine_are_unit_length() {
        for similarity in [Similarity::Cosine, Similarity::DotProduct] {
            let g = Generator::new(1, shape(similarity));
            for v in g
                .base_vectors(0..100)
                .iter()
                .chain(g.query_vectors(0..100).iter())
            {
                assert!((super::super::similarity::norm(v) - 1.0).abs() < 1e-5);
            }
        }
        let g = Generator::new(1, shape(Similarity::Euclidean));
        let lengths: Vec<f32> = g
            .base_vectors(0..100)
            .iter()
            .map(super::super::similarity::norm)
            .collect();
        assert!(
            lengths.iter().any(|&n| (n - 1.0).abs() > 1e-3),
            "euclidean keeps lengths"
        );
    }

    #[test]
    fn vectors_generated_gather_around_their_centres() {
        let g = Generator::new(3, shape(Similarity::Cosine));
        let (mut own, mut other, mut others) = (0.0, 0.0, 0);
        for id in 0..400 {
            let (v, cluster) = g.base(id);
            for (c, centre) in g.centres().iter().enumerate() {
                let cos = super::super::similarity::dot(&v, centre);
                if c == cluster {
                    own += cos;
                } else {
                    other += cos;
                    others += 1;
                }
            }
        }
        let (own, other) = (own / 400.0, other / others as f32);
        assert!(own > 0.85 && other.abs() < 0.1, "own {own}, others {other}");
        // Every cluster is used.
        let mut seen = [false; 8];
        (0..400).for_each(|id| seen[g.query(id).1] = true);
        assert!(seen.iter().all(|&s| s));
    }
}
