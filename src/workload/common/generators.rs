//! The draws every format makes: a request's random-number generator (from the run's seed
//! and the request's sequence number), partition keys, text cut from a pool, and normal
//! draws.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// A random-number generator for one request: seeded from the run's seed and the request's
/// sequence number, so request i carries the same values in every run with that seed.
pub fn request_rng(seed: u64, seq: u64) -> SmallRng {
    // Spread consecutive sequence numbers over the seed space (a 64-bit odd multiplier
    // derived from the golden ratio), so neighbouring requests get unrelated streams.
    SmallRng::seed_from_u64(seed ^ seq.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// How partition keys are drawn from `0..partitions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PartitionGenerator {
    /// Uniformly at random.
    Random,
    /// Normally distributed around the middle (σ = partitions / 6): hot partitions in the middle.
    Normal,
    /// In order, 0, 1, 2, ..., wrapping around after the last.
    Sequence,
}

/// Chooses partition keys in `0..partitions`.
#[derive(Debug, Clone, Copy)]
pub struct PartitionKeys {
    partitions: u64,
    generator: PartitionGenerator,
}

impl PartitionKeys {
    /// Keys from `0..partitions`, drawn by `generator`.
    pub fn new(partitions: u64, generator: PartitionGenerator) -> Self {
        PartitionKeys {
            partitions: partitions.max(1),
            generator,
        }
    }

    /// The partition of request `seq`.
    pub fn key(&self, seq: u64, rng: &mut SmallRng) -> u64 {
        let n = self.partitions;
        match self.generator {
            PartitionGenerator::Sequence => seq % n,
            PartitionGenerator::Random => rng.random_range(0..n),
            PartitionGenerator::Normal => {
                let mean = (n as f64 - 1.0) / 2.0;
                let x = clamped_normal(
                    rng,
                    mean,
                    |z| z * n as f64 / 6.0,
                    f64::round,
                    (0.0, n as f64 - 1.0),
                );
                x as u64
            }
        }
    }
}

/// A standard normal draw (Box–Muller): one draw from two uniform ones.
fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A normal draw kept within `min..=max`: `mean + deviation(z)` for a standard normal draw z,
/// made a value of the caller's type by `value` (rounded, converted), then clamped in that
/// type. Each caller says how its deviation and rounding go, so each draws as it always did.
pub fn clamped_normal<R: Rng + ?Sized, T: PartialOrd>(
    rng: &mut R,
    mean: f64,
    deviation: impl FnOnce(f64) -> f64,
    value: impl FnOnce(f64) -> T,
    (min, max): (T, T),
) -> T {
    let v = value(mean + deviation(standard_normal(rng)));
    debug_assert!(min <= max, "an empty range");
    if v < min {
        min
    } else if v > max {
        max
    } else {
        v
    }
}

/// A pool of random printable text, made once, from which values are cut: a value costs a
/// slice, not the generation of every character.
#[derive(Debug, Clone)]
pub struct TextPool {
    text: String,
}

impl TextPool {
    /// The pool size: large enough that values cut at random offsets rarely repeat.
    const SIZE: usize = 1 << 20;

    /// A pool of letters and digits drawn from `seed`.
    pub fn new(seed: u64) -> Self {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x7E87_9001);
        let text = (0..Self::SIZE)
            .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
            .collect();
        TextPool { text }
    }

    /// A text of `min..=max` characters.
    pub fn text(&self, rng: &mut SmallRng, min: usize, max: usize) -> &str {
        let len = rng.random_range(min..=max).min(Self::SIZE);
        let start = rng.random_range(0..=Self::SIZE - len);
        &self.text[start..start + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_and_sequence_give_the_same_values() {
        let pool = TextPool::new(7);
        let keys = PartitionKeys::new(1000, PartitionGenerator::Random);
        let draw = |seq| {
            let mut rng = request_rng(42, seq);
            (
                keys.key(seq, &mut rng),
                pool.text(&mut rng, 100, 200).to_string(),
            )
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
        let (_, text) = draw(9);
        assert!((100..=200).contains(&text.len()));
        assert!(text.chars().all(|c| c.is_ascii_alphanumeric()));
    }

    #[test]
    fn sequence_wraps_around() {
        let keys = PartitionKeys::new(3, PartitionGenerator::Sequence);
        let mut rng = request_rng(1, 0);
        let seen: Vec<u64> = (0..7).map(|i| keys.key(i, &mut rng)).collect();
        assert_eq!(seen, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn random_and_normal_keys_stay_in_range_with_their_shapes() {
        let n = 1000;
        for generator in [PartitionGenerator::Random, PartitionGenerator::Normal] {
            let keys = PartitionKeys::new(n, generator);
            let draws: Vec<u64> = (0..100_000)
                .map(|i| keys.key(i, &mut request_rng(3, i)))
                .collect();
            assert!(draws.iter().all(|&k| k < n));
            let middle = draws.iter().filter(|&&k| (400..600).contains(&k)).count() as f64
                / draws.len() as f64;
            match generator {
                // 20% of the range holds 20% of uniform draws...
                PartitionGenerator::Random => assert!((middle - 0.2).abs() < 0.01, "{middle}"),
                // ...and about 45% of normal draws with σ = n/6 (±0.6σ).
                _ => assert!((middle - 0.4515).abs() < 0.01, "{middle}"),
            }
        }
    }
}
