//! YCSB's generators of key numbers and lengths, with the semantics of its CoreWorkload:
//! uniform, zipfian (scrambled), latest (skewed towards the newest keys) and hotspot key
//! choosers, and the FNV-64 hash YCSB uses to scatter key numbers.
//!
//! Every draw takes its randomness from the caller's per-request generator, so a request's
//! key is a function of the run's seed and the request's sequence number.

use rand::rngs::SmallRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// FNV-1a's 64-bit offset basis and prime, as YCSB's `Utils.fnvhash64` uses them.
const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's 64-bit FNV hash of a number: its eight bytes, lowest first, each xor-ed into the
/// hash and multiplied by the prime; then made non-negative as Java's `Math.abs` does (which
/// leaves `i64::MIN` negative).
pub fn fnv_hash64(value: i64) -> i64 {
    let mut hash = FNV_OFFSET_BASIS_64;
    let mut rest = value as u64;
    for _ in 0..8 {
        hash ^= rest & 0xff;
        hash = hash.wrapping_mul(FNV_PRIME_64);
        rest >>= 8;
    }
    (hash as i64).wrapping_abs()
}

/// The key YCSB stores for key number `keynum`: "user" and the number (hashed first unless
/// the inserts are ordered), left-padded with zeros to `zeropadding` digits.
pub fn key_name(keynum: u64, hashed: bool, zeropadding: usize) -> String {
    let number = if hashed {
        fnv_hash64(keynum as i64)
    } else {
        keynum as i64
    };
    format!("user{number:0zeropadding$}")
}

/// zeta(n, θ) = Σ 1/i^θ for i in 1..=n, for any n in constant time: the first terms added
/// exactly, the rest by the Euler–Maclaurin formula (error below 1e-12 for 0 < θ < 1).
#[derive(Debug, Clone, Copy)]
pub struct Zeta {
    theta: f64,
    /// Σ 1/i^θ for i in 1..HEAD.
    head: f64,
}

impl Zeta {
    /// Terms below this index are added one by one.
    const HEAD: u64 = 64;

    /// zeta for the exponent `theta`.
    pub fn new(theta: f64) -> Zeta {
        let head = (1..Self::HEAD).map(|i| (i as f64).powf(-theta)).sum();
        Zeta { theta, head }
    }

    /// zeta(n, θ).
    pub fn at(&self, n: u64) -> f64 {
        let t = self.theta;
        if n < Self::HEAD {
            return (1..=n).map(|i| (i as f64).powf(-t)).sum();
        }
        // Σ_{i=m}^{n} f(i) ≈ ∫_m^n f + (f(m) + f(n))/2 + (f'(n) - f'(m))/12
        //                   - (f'''(n) - f'''(m))/720, with f(x) = x^-θ.
        let (m, x) = (Self::HEAD as f64, n as f64);
        let f = |x: f64| x.powf(-t);
        let f1 = |x: f64| -t * x.powf(-t - 1.0);
        let f3 = |x: f64| -t * (t + 1.0) * (t + 2.0) * x.powf(-t - 3.0);
        let integral = (x.powf(1.0 - t) - m.powf(1.0 - t)) / (1.0 - t);
        self.head + integral + (f(m) + f(x)) / 2.0 + (f1(x) - f1(m)) / 12.0
            - (f3(x) - f3(m)) / 720.0
    }
}

/// YCSB's zipfian generator (Gray et al., "Quickly generating billion-record synthetic
/// databases", SIGMOD 1994): ranks 0..items, rank k drawn with probability about
/// 1/(k+1)^θ / zeta(items, θ). Rank 0 is the most popular.
#[derive(Debug, Clone, Copy)]
pub struct Zipfian {
    items: u64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    /// 1 + 1/2^θ: the cumulative weight of the first two ranks.
    first_two: f64,
}

impl Zipfian {
    /// Ranks `0..items` (at least one) with exponent `theta` (between 0 and 1).
    pub fn new(items: u64, theta: f64) -> Zipfian {
        Zipfian::with_zeta(items, theta, &Zeta::new(theta))
    }

    /// As [`Zipfian::new`], with zeta computed by `zeta` (made for the same θ).
    pub fn with_zeta(items: u64, theta: f64, zeta: &Zeta) -> Zipfian {
        let items = items.max(1);
        let zetan = zeta.at(items);
        let zeta2 = zeta.at(2);
        Zipfian {
            items,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
            first_two: 1.0 + 0.5f64.powf(theta),
        }
    }

    /// The rank drawn by the uniform number `u` in [0, 1).
    pub fn rank_of(&self, u: f64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < self.first_two {
            return 1;
        }
        let rank = (self.items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        rank.min(self.items - 1)
    }

    /// A rank drawn from `rng`.
    pub fn rank(&self, rng: &mut SmallRng) -> u64 {
        self.rank_of(rng.random())
    }
}

/// The item space of YCSB's scrambled zipfian: the zipfian ranks drawn before hashing onto
/// the key range. YCSB's precomputed zeta (26.469... for θ = 0.99) belongs to this size.
pub const SCRAMBLED_ITEMS: u64 = 10_000_000_000;

/// How YCSB chooses the key of a read, update, scan or read-modify-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RequestDistribution {
    /// Uniformly among the loaded records.
    Uniform,
    /// Scrambled zipfian: a few hot keys, scattered across the key range.
    Zipfian,
    /// Skewed towards the most recently inserted keys.
    Latest,
    /// A hot set of the lowest key numbers takes a fixed share of the requests.
    Hotspot,
}

/// Chooses key numbers among the keys that exist, by a [`RequestDistribution`].
#[derive(Debug, Clone)]
pub enum KeyChooser {
    /// Uniform over `0..records`.
    Uniform {
        /// The loaded records.
        records: u64,
    },
    /// Zipfian ranks over [`SCRAMBLED_ITEMS`], hashed onto `0..space`; keys not inserted
    /// yet are drawn again, as YCSB does.
    Zipfian {
        /// The ranks.
        zipfian: Zipfian,
        /// The key range: the records plus twice the inserts expected (YCSB's fudge factor).
        space: u64,
    },
    /// The newest key minus a zipfian rank over the keys before it.
    Latest {
        /// The exponent.
        theta: f64,
        /// zeta for the exponent, to size the zipfian to each request's newest key.
        zeta: Zeta,
    },
    /// `hot_fraction` of the requests go to the first `hot` keys, the rest to the others.
    Hotspot {
        /// The loaded records.
        records: u64,
        /// The size of the hot set, at the low end of the key numbers.
        hot: u64,
        /// The share of requests that go to the hot set.
        hot_fraction: f64,
    },
}

impl KeyChooser {
    /// Draws tried before a zipfian key beyond the newest is folded into range.
    const REDRAWS: u32 = 1000;

    /// A chooser for `records` loaded records and about `expected_inserts` inserted by the
    /// run (YCSB's operationcount × insertproportion).
    pub fn new(
        distribution: RequestDistribution,
        records: u64,
        expected_inserts: f64,
        theta: f64,
        hotspot_data_fraction: f64,
        hotspot_opn_fraction: f64,
    ) -> KeyChooser {
        match distribution {
            RequestDistribution::Uniform => KeyChooser::Uniform {
                records: records.max(1),
            },
            RequestDistribution::Zipfian => KeyChooser::Zipfian {
                zipfian: Zipfian::new(SCRAMBLED_ITEMS, theta),
                // YCSB: ScrambledZipfianGenerator(0, recordcount + expectednewkeys), bounds
                // included, with expectednewkeys = (int) (operationcount × proportion × 2).
                // At most i64::MAX, as YCSB's longs: `scramble` works in i64, and a huge
                // operationcount × insertproportion must not overflow the sum.
                space: records
                    .saturating_add((expected_inserts * 2.0) as u64)
                    .saturating_add(1)
                    .min(i64::MAX as u64),
            },
            RequestDistribution::Latest => KeyChooser::Latest {
                theta,
                zeta: Zeta::new(theta),
            },
            RequestDistribution::Hotspot => KeyChooser::Hotspot {
                records: records.max(1),
                hot: (records as f64 * hotspot_data_fraction) as u64,
                hot_fraction: hotspot_opn_fraction,
            },
        }
    }

    /// A key number in `0..=newest`, `newest` being the newest key inserted so far.
    pub fn choose(&self, newest: u64, rng: &mut SmallRng) -> u64 {
        match *self {
            KeyChooser::Uniform { records } => rng.random_range(0..records),
            KeyChooser::Zipfian { zipfian, space } => {
                let mut key = 0;
                for _ in 0..Self::REDRAWS {
                    key = scramble(zipfian.rank(rng), space);
                    if key <= newest {
                        return key;
                    }
                }
                key % (newest + 1)
            }
            KeyChooser::Latest { theta, zeta } => {
                // YCSB's SkewedLatestGenerator: newest - zipfian(newest items).
                if newest == 0 {
                    return 0;
                }
                newest - Zipfian::with_zeta(newest, theta, &zeta).rank(rng)
            }
            KeyChooser::Hotspot {
                records,
                hot,
                hot_fraction,
            } => {
                let cold = records - hot.min(records);
                let to_hot = rng.random::<f64>() < hot_fraction;
                if (to_hot && hot > 0) || cold == 0 {
                    rng.random_range(0..hot.max(1))
                } else {
                    hot + rng.random_range(0..cold)
                }
            }
        }
    }
}

/// Where a zipfian rank lands in a key range of `space`: YCSB's FNV hash, modulo the range.
pub fn scramble(rank: u64, space: u64) -> u64 {
    fnv_hash64(rank as i64).rem_euclid(space as i64) as u64
}

/// Chooses a length (of a scan, or of a field's value) in `min..=max`.
#[derive(Debug, Clone, Copy)]
pub enum LengthChooser {
    /// Always `max`.
    Constant(u64),
    /// Uniformly in `min..=max`.
    Uniform(u64, u64),
    /// Zipfian from `min` (the most frequent) to `max`: short lengths favoured.
    Zipfian(u64, Zipfian),
}

impl LengthChooser {
    /// A zipfian over `min..=max` with YCSB's exponent 0.99.
    pub fn zipfian(min: u64, max: u64) -> LengthChooser {
        LengthChooser::Zipfian(min, Zipfian::new(max - min + 1, 0.99))
    }

    /// A length.
    pub fn choose(&self, rng: &mut SmallRng) -> u64 {
        match *self {
            LengthChooser::Constant(n) => n,
            LengthChooser::Uniform(min, max) => rng.random_range(min..=max),
            LengthChooser::Zipfian(min, zipfian) => min + zipfian.rank(rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::generators::request_rng;

    /// Values computed with YCSB's own `Utils.fnvhash64` (Java).
    #[test]
    fn fnv_hash_matches_ycsb() {
        for (value, hash) in [
            (0, 6284781860667377211),
            (1, 8517097267634966620),
            (2, 1820151046732198393),
            (42, 55488592825689361),
            (999, 2071219101098386137),
            (123456789, 2350796791908741607),
            (10_000_000_000, 1201321332300452516),
        ] {
            assert_eq!(fnv_hash64(value), hash, "fnvhash64({value})");
        }
    }

    #[test]
    fn key_names_are_ycsbs() {
        assert_eq!(key_name(42, false, 1), "user42");
        assert_eq!(key_name(5, false, 8), "user00000005");
        assert_eq!(key_name(42, true, 1), "user55488592825689361");
    }

    #[test]
    fn zeta_is_exact_enough() {
        for theta in [0.5, 0.99] {
            let zeta = Zeta::new(theta);
            for n in [1, 2, 63, 64, 65, 1000, 123_457] {
                let exact: f64 = (1..=n).map(|i| (i as f64).powf(-theta)).sum();
                assert!(
                    (zeta.at(n) - exact).abs() < 1e-9 * exact,
                    "θ={theta} n={n}: {} vs {exact}",
                    zeta.at(n)
                );
            }
        }
        // YCSB's precomputed ZETAN for its scrambled item space.
        let zetan = Zeta::new(0.99).at(SCRAMBLED_ITEMS);
        assert!((zetan - 26.46902820178302).abs() < 1e-8, "{zetan}");
    }

    fn draws(n: u64, mut draw: impl FnMut(&mut SmallRng) -> u64) -> Vec<u64> {
        (0..n).map(|i| draw(&mut request_rng(11, i))).collect()
    }

    fn histogram(values: &[u64], size: usize) -> Vec<f64> {
        let mut counts = vec![0.0; size];
        for &v in values {
            counts[v as usize] += 1.0;
        }
        counts.iter().map(|c| c / values.len() as f64).collect()
    }

    #[test]
    fn zipfian_ranks_follow_the_power_law() {
        let (items, theta) = (1000, 0.99);
        let zipfian = Zipfian::new(items, theta);
        let freq = histogram(&draws(1_000_000, |r| zipfian.rank(r)), items as usize);
        let zetan = Zeta::new(theta).at(items);
        let expected = |k: usize| 1.0 / (k as f64).powf(theta) / zetan;
        // Gray's method is exact for the two first ranks; it draws ranks 3 to 7 somewhat too
        // often (rank 3 by about 17%: YCSB's generator does the same), the next ones within
        // a few percent. Past them, single ranks stray up to ±15% (the continuous
        // approximation is floored to a rank), so they are checked cumulatively below.
        for k in 1..=12 {
            let tolerance = match k {
                1 | 2 => 0.015,
                3..=7 => 0.2,
                _ => 0.06,
            };
            let got = freq[k - 1];
            assert!(
                (got - expected(k)).abs() < tolerance * expected(k),
                "rank {k}: {got} vs {}",
                expected(k)
            );
        }
        // Cumulatively, within 5% at every rank.
        let (mut got, mut want) = (0.0, 0.0);
        for k in 1..=items as usize {
            got += freq[k - 1];
            want += expected(k);
            assert!(
                (got / want - 1.0).abs() < 0.05,
                "ranks 1..={k}: {got} vs {want}"
            );
        }
        // The head as a whole: the 100 first ranks hold zeta(100)/zeta(1000) of the draws.
        let head: f64 = freq[..100].iter().sum();
        let expected = Zeta::new(theta).at(100) / zetan;
        assert!((head - expected).abs() < 0.02, "{head} vs {expected}");
        // Popularity falls with rank.
        assert!(freq[0] > freq[1] && freq[1] > freq[9] && freq[9] > freq[99]);
    }

    #[test]
    fn scrambled_zipfian_scatters_the_hot_keys_and_keeps_the_profile() {
        let space = 1000;
        let chooser = KeyChooser::new(RequestDistribution::Zipfian, space - 1, 0.0, 0.99, 0.0, 0.0);
        let KeyChooser::Zipfian { space: s, .. } = chooser else {
            panic!("zipfian")
        };
        assert_eq!(s, space, "recordcount + 2 × expected inserts + 1");
        let freq = histogram(
            &draws(500_000, |r| chooser.choose(space - 1, r)),
            space as usize,
        );
        // The hottest key is where rank 0 lands, with rank 0's share (1/zeta) plus its
        // part of the tail spread evenly over the range.
        let zetan = Zeta::new(0.99).at(SCRAMBLED_ITEMS);
        let hottest = scramble(0, space);
        let spread = (1.0 - 1.0 / zetan) / space as f64;
        let expected = 1.0 / zetan + spread;
        assert!(
            (freq[hottest as usize] - expected).abs() < 0.1 * expected,
            "{} vs {expected}",
            freq[hottest as usize]
        );
        // The ten hottest ranks land far apart, not in one corner of the range.
        let hot: Vec<u64> = (0..10).map(|r| scramble(r, space)).collect();
        let (lo, hi) = (hot.iter().min().unwrap(), hot.iter().max().unwrap());
        assert!(hi - lo > space / 2, "{hot:?}");
        // The same profile: sorted by frequency, the keys fall off like the ranks.
        let mut sorted = freq.clone();
        sorted.sort_by(|a, b| b.total_cmp(a));
        let rank2 = 1.0 / 2f64.powf(0.99) / zetan + spread;
        assert!(
            (sorted[1] - rank2).abs() < 0.15 * rank2,
            "{} vs {rank2}",
            sorted[1]
        );
        assert!(sorted[0] > 5.0 * sorted[500], "a skewed profile");
    }

    #[test]
    fn zipfian_keys_beyond_the_newest_are_drawn_again() {
        let chooser = KeyChooser::new(RequestDistribution::Zipfian, 100, 1000.0, 0.99, 0.0, 0.0);
        let keys = draws(20_000, |r| chooser.choose(149, r));
        assert!(keys.iter().all(|&k| k <= 149));
        assert!(keys.iter().any(|&k| k > 99), "inserted keys are chosen too");
    }

    #[test]
    fn hotspot_sends_its_share_to_the_hot_set() {
        let chooser = KeyChooser::new(RequestDistribution::Hotspot, 1000, 0.0, 0.99, 0.2, 0.8);
        let keys = draws(200_000, |r| chooser.choose(999, r));
        let hot = keys.iter().filter(|&&k| k < 200).count() as f64 / keys.len() as f64;
        assert!((hot - 0.8).abs() < 0.01, "{hot}");
        assert!(keys.iter().all(|&k| k < 1000));
        // Uniform within each set: half the hot set gets half its share, and so on.
        let share = |range: std::ops::Range<u64>| {
            keys.iter().filter(|k| range.contains(k)).count() as f64 / keys.len() as f64
        };
        assert!((share(0..100) - 0.4).abs() < 0.01, "{}", share(0..100));
        assert!((share(200..600) - 0.1).abs() < 0.01, "{}", share(200..600));
    }

    #[test]
    fn latest_favours_the_newest_keys() {
        let chooser = KeyChooser::new(RequestDistribution::Latest, 10_000, 0.0, 0.99, 0.0, 0.0);
        let newest = 9_999;
        let keys = draws(200_000, |r| chooser.choose(newest, r));
        assert!(keys.iter().all(|&k| k <= newest));
        let freq = histogram(&keys, 10_000);
        let zetan = Zeta::new(0.99).at(newest);
        // The newest key is rank 0 of a zipfian over the keys before it.
        assert!((freq[newest as usize] - 1.0 / zetan).abs() < 0.05 / zetan);
        assert!(freq[9_999] > freq[9_998] && freq[9_998] > freq[9_990]);
        let newest_tenth = keys.iter().filter(|&&k| k >= 9_000).count() as f64 / keys.len() as f64;
        let oldest_tenth = keys.iter().filter(|&&k| k < 1_000).count() as f64 / keys.len() as f64;
        assert!(
            newest_tenth > 0.5 && oldest_tenth < 0.05,
            "{newest_tenth} {oldest_tenth}"
        );
        // It follows the newest key as inserts go on.
        assert!(draws(1000, |r| chooser.choose(20_000, r))
            .iter()
            .any(|&k| k > newest));
        assert_eq!(chooser.choose(0, &mut request_rng(1, 1)), 0);
    }

    #[test]
    fn lengths_stay_in_their_range() {
        let uniform = LengthChooser::Uniform(1, 100);
        let lengths = draws(10_000, |r| uniform.choose(r));
        assert!(lengths.iter().all(|l| (1..=100).contains(l)));
        let mean = lengths.iter().sum::<u64>() as f64 / lengths.len() as f64;
        assert!((mean - 50.5).abs() < 2.0, "{mean}");
        let zipfian = LengthChooser::zipfian(1, 100);
        let lengths = draws(10_000, |r| zipfian.choose(r));
        assert!(lengths.iter().all(|l| (1..=100).contains(l)));
        let ones = lengths.iter().filter(|&&l| l == 1).count();
        assert!(ones > lengths.len() / 10, "short scans favoured: {ones}");
    }
}
