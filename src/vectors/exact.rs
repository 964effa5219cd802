//! The exact k nearest neighbours of each query among the base vectors, by brute force: the
//! truth that an index's answers are scored against (recall). Every query is compared with
//! every base vector by the similarity's score ([`super::similarity`]), so the order is the
//! one Cassandra's index aims at.
//!
//! Ties: of two base vectors with the same score, the one with the lower id comes first. A
//! score that is not a number (a NaN in the data) counts as the farthest of all.
//!
//! Speed: the base stays in one contiguous slice read in order; the queries are split over
//! the machine's cores with scoped threads. Cosine's lengths of the base vectors are worked
//! out once, not once per query; the scores are the very numbers
//! [`Similarity::score`] gives, since both use the same sums.

use super::similarity::{self, Similarity};
use super::Vectors;

/// The ids (positions in `base`) of the `k` base vectors closest to each query, closest first;
/// fewer than `k` when the base holds fewer. Panics when the dimensions differ (the caller
/// checks the user's files first).
pub fn nearest(
    base: &Vectors,
    queries: &Vectors,
    k: usize,
    similarity: Similarity,
) -> Vec<Vec<u32>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    nearest_on(base, queries, k, similarity, threads)
}

/// [`nearest`] on at most `threads` threads.
pub fn nearest_on(
    base: &Vectors,
    queries: &Vectors,
    k: usize,
    similarity: Similarity,
    threads: usize,
) -> Vec<Vec<u32>> {
    assert_eq!(
        base.dim, queries.dim,
        "base and queries of different dimensions"
    );
    assert!(
        base.len() <= u32::MAX as usize,
        "more base vectors than ids of 32 bits"
    );
    let norms: Vec<f32> = match similarity {
        Similarity::Cosine => base.iter().map(similarity::norm).collect(),
        _ => Vec::new(),
    };
    let scan = Scan {
        base,
        norms: &norms,
        k: k.min(base.len()),
        similarity,
    };
    let count = queries.len();
    let threads = threads.clamp(1, count.max(1));
    if threads == 1 {
        return queries.iter().map(|q| scan.query(q)).collect();
    }
    let per_thread = count.div_ceil(threads);
    let mut answers: Vec<Vec<u32>> = Vec::with_capacity(count);
    std::thread::scope(|scope| {
        let handles: Vec<_> = queries
            .data
            .chunks(per_thread * queries.dim)
            .map(|chunk| {
                let scan = &scan;
                scope.spawn(move || {
                    chunk
                        .chunks_exact(scan.base.dim)
                        .map(|q| scan.query(q))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for handle in handles {
            answers.extend(handle.join().expect("an exact search thread panicked"));
        }
    });
    answers
}

/// What every query's scan shares.
struct Scan<'a> {
    base: &'a Vectors,
    /// Cosine's length of each base vector; empty for the others.
    norms: &'a [f32],
    k: usize,
    similarity: Similarity,
}

impl Scan<'_> {
    /// The ids of the `k` closest base vectors to `query`, closest first.
    fn query(&self, query: &[f32]) -> Vec<u32> {
        if self.k == 0 {
            return Vec::new();
        }
        let mut best = Best::new(self.k);
        match self.similarity {
            Similarity::Cosine => {
                let query_norm = similarity::norm(query);
                for ((id, v), &n) in self.base.iter().enumerate().zip(self.norms) {
                    let dot = similarity::dot(query, v);
                    best.offer(similarity::cosine_score(dot, query_norm, n), id as u32);
                }
            }
            Similarity::DotProduct => {
                for (id, v) in self.base.iter().enumerate() {
                    let dot = similarity::dot(query, v);
                    best.offer(similarity::dot_product_score(dot), id as u32);
                }
            }
            Similarity::Euclidean => {
                for (id, v) in self.base.iter().enumerate() {
                    let d = similarity::square_distance(query, v);
                    best.offer(similarity::euclidean_score(d), id as u32);
                }
            }
        }
        best.ids()
    }
}

/// The best `k` (score, id) seen so far, best first. Kept sorted: a candidate that beats the
/// worst is put in its place, which after the first few thousand offers is rare, so a
/// sorted array beats a heap for the `k` of a LIMIT (tens to hundreds).
struct Best {
    k: usize,
    entries: Vec<(f32, u32)>,
}

impl Best {
    fn new(k: usize) -> Best {
        Best {
            k,
            entries: Vec::with_capacity(k + 1),
        }
    }

    /// Ids are offered in increasing order, so a score equal to the worst kept never displaces
    /// it: the lower id stays ahead of a tie.
    #[inline]
    fn offer(&mut self, score: f32, id: u32) {
        let score = if score.is_nan() {
            f32::NEG_INFINITY
        } else {
            score
        };
        if self.entries.len() == self.k {
            if score <= self.entries[self.k - 1].0 {
                return;
            }
            self.entries.pop();
        }
        // After every kept entry whose score is at least this one: ties keep the lower id first.
        let at = self.entries.partition_point(|&(s, _)| s >= score);
        self.entries.insert(at, (score, id));
    }

    fn ids(self) -> Vec<u32> {
        self.entries.into_iter().map(|(_, id)| id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random(count: usize, dim: usize, seed: u64) -> Vectors {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        Vectors::new(
            dim,
            (0..count * dim)
                .map(|_| rng.random_range(-1.0..1.0))
                .collect(),
        )
    }

    /// The reference: every score, sorted best first, ties by the lower id.
    fn naive(base: &Vectors, queries: &Vectors, k: usize, similarity: Similarity) -> Vec<Vec<u32>> {
        queries
            .iter()
            .map(|q| {
                let mut scored: Vec<(f32, u32)> = base
                    .iter()
                    .enumerate()
                    .map(|(id, v)| (similarity.score(q, v), id as u32))
                    .collect();
                scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                scored.into_iter().take(k).map(|(_, id)| id).collect()
            })
            .collect()
    }

    #[test]
    fn vectors_exact_matches_sorting_every_score() {
        for (i, similarity) in Similarity::ALL.into_iter().enumerate() {
            // 37 components: the eight-lane sums and their tail.
            let base = random(500, 37, i as u64);
            let queries = random(23, 37, 100 + i as u64);
            let truth = naive(&base, &queries, 10, similarity);
            for threads in [1, 3] {
                assert_eq!(
                    nearest_on(&base, &queries, 10, similarity, threads),
                    truth,
                    "{similarity} on {threads} threads"
                );
            }
        }
    }

    #[test]
    fn vectors_exact_with_k_beyond_the_base_gives_the_whole_base() {
        let base = random(7, 4, 1);
        let queries = random(3, 4, 2);
        for similarity in Similarity::ALL {
            let answers = nearest(&base, &queries, 50, similarity);
            assert_eq!(answers, naive(&base, &queries, 50, similarity));
            assert!(answers.iter().all(|a| a.len() == 7));
        }
        assert_eq!(
            nearest(&base, &queries, 0, Similarity::Cosine),
            vec![Vec::<u32>::new(); 3]
        );
        let empty = Vectors::new(4, vec![]);
        assert_eq!(
            nearest(&empty, &queries, 5, Similarity::Cosine),
            vec![Vec::<u32>::new(); 3]
        );
        assert!(nearest(&base, &empty, 5, Similarity::Cosine).is_empty());
    }

    #[test]
    fn vectors_exact_ties_go_to_the_lower_id_and_nan_is_farthest() {
        // Ids 1, 2 and 4 are the same vector; id 0 has a NaN.
        let base = Vectors::new(
            2,
            vec![f32::NAN, 0.0, 1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 1.0, 1.0],
        );
        let query = Vectors::new(2, vec![1.0, 1.0]);
        assert_eq!(
            nearest(&base, &query, 3, Similarity::Euclidean),
            vec![vec![1, 2, 4]]
        );
        assert_eq!(
            nearest(&base, &query, 5, Similarity::Euclidean),
            vec![vec![1, 2, 4, 3, 0]]
        );
    }

    /// The figure for docs: 100 000 base vectors of 128 components, 1 000 queries, k = 10.
    /// `cargo test --release --lib vectors_exact_speed -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn vectors_exact_speed() {
        let base = random(100_000, 128, 1);
        let queries = random(1_000, 128, 2);
        for similarity in Similarity::ALL {
            let start = std::time::Instant::now();
            let answers = nearest(&base, &queries, 10, similarity);
            println!(
                "{similarity}: {:.2} s for 1000 queries over 100000 × 128",
                start.elapsed().as_secs_f64()
            );
            assert_eq!(answers.len(), 1_000);
        }
    }
}
