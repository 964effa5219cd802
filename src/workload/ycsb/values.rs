//! YCSB's generators of key numbers and lengths, with the semantics of its CoreWorkload:
//! uniform, zipfian (scrambled), latest (skewed towards the newest keys), hotspot,
//! exponential (counted back from the newest key) and sequential key choosers, and the FNV-64
//! hash YCSB uses to scatter key numbers.
//!
//! Every draw takes its randomness from the caller's per-request generator, so a request's
//! key is a function of the run's seed and the request's sequence number.

use rand::rngs::SmallRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::histogram::HistogramLengths;
use crate::workload::common::hash::fnv1a;

/// YCSB's 64-bit FNV hash of a number (`Utils.fnvhash64`): FNV-1a of its eight bytes, lowest
/// first; then made non-negative as Java's `Math.abs` does (which leaves `i64::MIN` negative).
pub fn fnv_hash64(value: i64) -> i64 {
    (fnv1a(&value.to_le_bytes()) as i64).wrapping_abs()
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
    /// The newest key minus an exponentially distributed distance.
    Exponential,
    /// The loaded records in order, from the first again after the last.
    Sequential,
}

/// What a [`KeyChooser`] is made from: YCSB's properties about keys.
#[derive(Debug, Clone, Copy)]
pub struct KeySettings {
    /// How keys are chosen.
    pub distribution: RequestDistribution,
    /// The first loaded key number of the range chosen from (insertstart).
    pub start: u64,
    /// The loaded key numbers chosen from, from `start` on (insertcount).
    pub count: u64,
    /// All the records (recordcount): the exponential's scale.
    pub records: u64,
    /// The inserts the run is expected to make (operationcount × insertproportion).
    pub expected_inserts: f64,
    /// The exponent of zipfian and latest.
    pub theta: f64,
    /// hotspot: the share of keys that are hot.
    pub hotspot_data_fraction: f64,
    /// hotspot: the share of requests that go to them.
    pub hotspot_opn_fraction: f64,
    /// exponential: the percentile of requests...
    pub exponential_percentile: f64,
    /// ...that fall in this fraction of the records, counted back from the newest.
    pub exponential_frac: f64,
}

/// Chooses key numbers among the keys that exist, by a [`RequestDistribution`].
#[derive(Debug, Clone)]
pub enum KeyChooser {
    /// Uniform over `start..start + count`.
    Uniform {
        /// The first key number.
        start: u64,
        /// How many.
        count: u64,
    },
    /// Zipfian ranks over [`SCRAMBLED_ITEMS`], hashed onto `start..start + space`; keys
    /// not inserted yet are drawn again, as YCSB does.
    Zipfian {
        /// The ranks.
        zipfian: Zipfian,
        /// The first key number.
        start: u64,
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
        /// The first key number.
        start: u64,
        /// The key numbers from `start` on.
        count: u64,
        /// The size of the hot set, at the low end of the key numbers.
        hot: u64,
        /// The share of requests that go to the hot set.
        hot_fraction: f64,
    },
    /// The newest key minus a distance drawn from an exponential of rate `gamma`; negative
    /// key numbers are drawn again.
    Exponential {
        /// The rate: -ln(1 - percentile/100) / (records × frac).
        gamma: f64,
    },
    /// The n-th key choice of the run takes `start + n mod count`.
    Sequential {
        /// The first key number.
        start: u64,
        /// The key numbers from `start` on.
        count: u64,
    },
}

impl KeyChooser {
    /// Draws tried before a zipfian key beyond the newest, or an exponential one below 0, is
    /// folded into range.
    const REDRAWS: u32 = 1000;

    /// A chooser by YCSB's CoreWorkload: uniform, sequential and hotspot keys among the
    /// loaded range `start..start + count`; zipfian keys from `start` over that range plus
    /// twice the inserts expected; latest and exponential keys counted back from the newest.
    pub fn new(s: &KeySettings) -> KeyChooser {
        let count = s.count.max(1);
        match s.distribution {
            RequestDistribution::Uniform => KeyChooser::Uniform {
                start: s.start,
                count,
            },
            RequestDistribution::Zipfian => KeyChooser::Zipfian {
                zipfian: Zipfian::new(SCRAMBLED_ITEMS, s.theta),
                start: s.start,
                // YCSB: ScrambledZipfianGenerator(insertstart, insertstart + insertcount +
                // expectednewkeys), bounds included, with expectednewkeys = (int)
                // (operationcount × proportion × 2). At most i64::MAX, as YCSB's longs:
                // `scramble` works in i64, and a huge operationcount × insertproportion must
                // not overflow the sum.
                space: s
                    .count
                    .saturating_add((s.expected_inserts * 2.0) as u64)
                    .saturating_add(1)
                    .min(i64::MAX as u64),
            },
            RequestDistribution::Latest => KeyChooser::Latest {
                theta: s.theta,
                zeta: Zeta::new(s.theta),
            },
            RequestDistribution::Hotspot => KeyChooser::Hotspot {
                start: s.start,
                count,
                hot: (count as f64 * s.hotspot_data_fraction) as u64,
                hot_fraction: s.hotspot_opn_fraction,
            },
            RequestDistribution::Exponential => KeyChooser::Exponential {
                gamma: -(1.0 - s.exponential_percentile / 100.0).ln()
                    / (s.records as f64 * s.exponential_frac),
            },
            RequestDistribution::Sequential => KeyChooser::Sequential {
                start: s.start,
                count,
            },
        }
    }

    /// A key number in `0..=newest`, `newest` being the newest key inserted so far, for the
    /// run's `nth` key choice (from 0; only the sequential chooser uses it).
    pub fn choose(&self, newest: u64, nth: u64, rng: &mut SmallRng) -> u64 {
        match *self {
            KeyChooser::Uniform { start, count } => start + rng.random_range(0..count),
            KeyChooser::Zipfian {
                zipfian,
                start,
                space,
            } => {
                let mut key = 0;
                for _ in 0..Self::REDRAWS {
                    key = start.saturating_add(scramble(zipfian.rank(rng), space));
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
                start,
                count,
                hot,
                hot_fraction,
            } => {
                let cold = count - hot.min(count);
                let to_hot = rng.random::<f64>() < hot_fraction;
                start
                    + if (to_hot && hot > 0) || cold == 0 {
                        rng.random_range(0..hot.max(1))
                    } else {
                        hot + rng.random_range(0..cold)
                    }
            }
            KeyChooser::Exponential { gamma } => {
                let mut distance = 0;
                for _ in 0..Self::REDRAWS {
                    distance = exponential_distance(rng.random(), gamma);
                    if distance <= newest {
                        return newest - distance;
                    }
                }
                newest - distance % (newest + 1)
            }
            KeyChooser::Sequential { start, count } => start + nth % count,
        }
    }
}

/// The distance YCSB's exponential generator draws from the uniform number `u` in [0, 1):
/// -ln(u) / gamma, cut to a whole number as Java's `intValue` cuts a double (towards 0, at
/// most `i32::MAX`).
pub fn exponential_distance(u: f64, gamma: f64) -> u64 {
    let x = -u.ln() / gamma;
    if x.is_nan() {
        0
    } else {
        x.min(i32::MAX as f64) as u64
    }
}

/// Where a zipfian rank lands in a key range of `space`: YCSB's FNV hash, modulo the range.
pub fn scramble(rank: u64, space: u64) -> u64 {
    fnv_hash64(rank as i64).rem_euclid(space as i64) as u64
}

/// Chooses a length (of a scan, or of a field's value) in `min..=max`.
#[derive(Debug, Clone)]
pub enum LengthChooser {
    /// Always `max`.
    Constant(u64),
    /// Uniformly in `min..=max`.
    Uniform(u64, u64),
    /// Zipfian from `min` (the most frequent) to `max`: short lengths favoured.
    Zipfian(u64, Zipfian),
    /// By the buckets of a histogram file.
    Histogram(HistogramLengths),
}

impl LengthChooser {
    /// A zipfian over `min..=max` with YCSB's exponent 0.99.
    pub fn zipfian(min: u64, max: u64) -> LengthChooser {
        LengthChooser::Zipfian(min, Zipfian::new(max - min + 1, 0.99))
    }

    /// A length.
    pub fn choose(&self, rng: &mut SmallRng) -> u64 {
        match self {
            LengthChooser::Constant(n) => *n,
            LengthChooser::Uniform(min, max) => rng.random_range(*min..=*max),
            LengthChooser::Zipfian(min, zipfian) => min + zipfian.rank(rng),
            LengthChooser::Histogram(lengths) => lengths.choose(rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::common::generators::request_rng;

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

    /// YCSB's defaults, for `records` loaded records.
    fn settings(distribution: RequestDistribution, records: u64) -> KeySettings {
        KeySettings {
            distribution,
            start: 0,
            count: records,
            records,
            expected_inserts: 0.0,
            theta: 0.99,
            hotspot_data_fraction: 0.2,
            hotspot_opn_fraction: 0.8,
            exponential_percentile: 95.0,
            exponential_frac: 0.8571428571,
        }
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
        let chooser = KeyChooser::new(&settings(RequestDistribution::Zipfian, space - 1));
        let KeyChooser::Zipfian { space: s, .. } = chooser else {
            panic!("zipfian")
        };
        assert_eq!(s, space, "recordcount + 2 × expected inserts + 1");
        let freq = histogram(
            &draws(500_000, |r| chooser.choose(space - 1, 0, r)),
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
        let chooser = KeyChooser::new(&KeySettings {
            expected_inserts: 1000.0,
            ..settings(RequestDistribution::Zipfian, 100)
        });
        let keys = draws(20_000, |r| chooser.choose(149, 0, r));
        assert!(keys.iter().all(|&k| k <= 149));
        assert!(keys.iter().any(|&k| k > 99), "inserted keys are chosen too");
    }

    #[test]
    fn hotspot_sends_its_share_to_the_hot_set() {
        let chooser = KeyChooser::new(&settings(RequestDistribution::Hotspot, 1000));
        let keys = draws(200_000, |r| chooser.choose(999, 0, r));
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
        let chooser = KeyChooser::new(&settings(RequestDistribution::Latest, 10_000));
        let newest = 9_999;
        let keys = draws(200_000, |r| chooser.choose(newest, 0, r));
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
        assert!(draws(1000, |r| chooser.choose(20_000, 0, r))
            .iter()
            .any(|&k| k > newest));
        assert_eq!(chooser.choose(0, 0, &mut request_rng(1, 1)), 0);
    }

    #[test]
    fn exponential_counts_back_from_the_newest_key() {
        // 95% of the requests within the newest 10% of 10 000 records.
        let chooser = KeyChooser::new(&KeySettings {
            exponential_frac: 0.1,
            ..settings(RequestDistribution::Exponential, 10_000)
        });
        let newest = 9_999;
        let keys = draws(100_000, |r| chooser.choose(newest, 0, r));
        assert!(keys.iter().all(|&k| k <= newest));
        let share = |from: u64| keys.iter().filter(|&&k| k >= from).count() as f64 / 1e5;
        assert!((share(9_000) - 0.95).abs() < 0.005, "{}", share(9_000));
        // Exponential: half the requests within the median distance, ln 2 / gamma.
        let median = (2f64.ln() / (20f64.ln() / 1000.0)) as u64;
        assert!(
            (share(newest - median) - 0.5).abs() < 0.01,
            "{}",
            share(newest - median)
        );
        // It follows the newest key as inserts go on, and never goes below key 0.
        assert!(draws(100, |r| chooser.choose(20_000, 0, r))
            .iter()
            .all(|&k| k > 15_000));
        assert!(draws(1000, |r| chooser.choose(3, 0, r))
            .iter()
            .all(|&k| k <= 3));
        // YCSB's default: 95% within 6/7 of the records, before the redraws.
        let default = KeyChooser::new(&settings(RequestDistribution::Exponential, 7_000));
        let keys = draws(100_000, |r| default.choose(6_999, 0, r));
        let within = keys.iter().filter(|&&k| k >= 1_000).count() as f64 / 1e5;
        // Distances past key 0 (5% ^ (7000 / 6000) of them) are drawn again.
        let expected = 0.95 / (1.0 - 0.05f64.powf(7.0 / 6.0));
        assert!((within - expected).abs() < 0.005, "{within} vs {expected}");
        assert_eq!(exponential_distance(0.0, 1.0), i32::MAX as u64);
        assert_eq!(exponential_distance(1.0, 1.0), 0);
    }

    #[test]
    fn sequential_takes_the_loaded_range_in_order() {
        let chooser = KeyChooser::new(&KeySettings {
            start: 100,
            count: 5,
            ..settings(RequestDistribution::Sequential, 1000)
        });
        let keys: Vec<u64> = (0..12)
            .map(|n| chooser.choose(999, n, &mut request_rng(1, n)))
            .collect();
        assert_eq!(
            keys,
            [100, 101, 102, 103, 104, 100, 101, 102, 103, 104, 100, 101]
        );
    }

    #[test]
    fn insertstart_and_insertcount_bound_the_keys_chosen() {
        for distribution in [
            RequestDistribution::Uniform,
            RequestDistribution::Hotspot,
            RequestDistribution::Sequential,
        ] {
            let chooser = KeyChooser::new(&KeySettings {
                start: 300,
                count: 200,
                ..settings(distribution, 1000)
            });
            let keys: Vec<u64> = (0..10_000)
                .map(|n| chooser.choose(999, n, &mut request_rng(2, n)))
                .collect();
            assert!(
                keys.iter().all(|k| (300..500).contains(k)),
                "{distribution:?}"
            );
            assert!(
                keys.contains(&300) && keys.contains(&499),
                "{distribution:?}"
            );
        }
        // Zipfian: from insertstart over insertcount plus twice the expected inserts.
        let chooser = KeyChooser::new(&KeySettings {
            start: 300,
            count: 200,
            expected_inserts: 50.0,
            ..settings(RequestDistribution::Zipfian, 1000)
        });
        let keys = draws(10_000, |r| chooser.choose(999, 0, r));
        assert!(keys.iter().all(|k| (300..=600).contains(k)));
        assert!(
            keys.iter().any(|&k| k >= 500),
            "the expected inserts' allowance"
        );
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
