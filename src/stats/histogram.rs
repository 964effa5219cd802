//! HdrHistogram as headroom keeps it: latencies in nanoseconds with 3 significant digits,
//! and percentiles by the rule of Java's HdrHistogram, so that every figure headroom prints
//! is the one HistogramLogProcessor prints for the same log.

use hdrhistogram::Histogram;

/// A histogram for latencies in nanoseconds with 3 significant digits, growing as needed.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is a valid precision")
}

/// The value at `percentile` (0–100) of a histogram, by the rule of Java's HdrHistogram
/// (`getValueAtPercentile`), so that headroom's percentiles are the ones HistogramLogProcessor
/// prints for the same log: the bucket where the running count reaches
/// ceil(p′ · count / 100), p′ being the double just below `percentile`. The crate's own
/// `value_at_percentile` divides by 100 first; 99.9 / 100 is a hair above 0.999, so for
/// 20 000 values it takes the 19 981st where Java takes the 19 980th, and in a sparse tail
/// those lie far apart. 0 for an empty histogram.
pub fn value_at_percentile(h: &Histogram<u64>, percentile: f64) -> u64 {
    if h.is_empty() {
        return 0;
    }
    value_at_rank(h, percentile_rank(percentile, h.len()))
}

/// The `rank`-th smallest value of a histogram (from 1), as its bucket's highest equivalent
/// value, by the rule of [`value_at_percentile`]; the largest value for a rank beyond the
/// count, 0 for an empty histogram.
pub fn value_at_rank(h: &Histogram<u64>, rank: u64) -> u64 {
    if h.is_empty() {
        return 0;
    }
    let mut count = 0;
    for recorded in h.iter_recorded() {
        count += recorded.count_at_value();
        if count >= rank {
            return recorded.value_iterated_to();
        }
    }
    h.max()
}

/// The values at several `percentiles` (0–100, ascending) and the mean, in one walk over the
/// histogram: each [`value_at_percentile`] and `Histogram::mean` walks every bucket up to the
/// largest value (some 17 000 for a 100 ms maximum), and an interval's line, row and summary
/// ask for six of them. Same values, by the same rules, as those calls one by one. Zeros for
/// an empty histogram.
pub fn percentiles_and_mean<const N: usize>(
    h: &Histogram<u64>,
    percentiles: [f64; N],
) -> ([u64; N], f64) {
    debug_assert!(percentiles.windows(2).all(|w| w[0] <= w[1]), "ascending");
    let mut values = [0u64; N];
    if h.is_empty() {
        return (values, 0.0);
    }
    let total = h.len();
    let ranks = percentiles.map(|p| percentile_rank(p, total));
    let (mut next, mut count, mut mean) = (0, 0u64, 0.0f64);
    for recorded in h.iter_recorded() {
        let value = recorded.value_iterated_to();
        count += recorded.count_at_value();
        // Summed as `Histogram::mean` sums, so that the mean is the same to the last bit.
        mean += h.median_equivalent(value) as f64 * recorded.count_at_value() as f64 / total as f64;
        while next < N && count >= ranks[next] {
            values[next] = value;
            next += 1;
        }
    }
    for v in &mut values[next..] {
        *v = h.max();
    }
    (values, mean)
}

/// The rank (from 1) of the value at `percentile` (0–100) among `count` values, by the rule
/// of [`value_at_percentile`]; for code that keeps counts outside a histogram.
pub fn percentile_rank(percentile: f64, count: u64) -> u64 {
    let percentile = percentile.clamp(0.0, 100.0);
    let just_below = if percentile > 0.0 {
        f64::from_bits(percentile.to_bits() - 1)
    } else {
        0.0
    };
    ((just_below * count as f64 / 100.0).ceil() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_walk_gives_what_the_single_calls_give() {
        let mut h = new_histogram();
        for (i, v) in [
            1_000u64,
            2_000,
            50_000,
            1_000_000,
            75_000_000,
            3_000_000_000,
        ]
        .iter()
        .enumerate()
        {
            h.record_n(*v, 10u64.pow(i as u32 % 4)).unwrap();
        }
        let ps = [0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0];
        let (values, mean) = percentiles_and_mean(&h, ps);
        for (p, v) in ps.iter().zip(values) {
            assert_eq!(v, value_at_percentile(&h, *p), "p{p}");
        }
        assert_eq!(mean.to_bits(), h.mean().to_bits());
        assert_eq!(percentiles_and_mean(&new_histogram(), [50.0]), ([0], 0.0));
    }

    #[test]
    fn percentiles_follow_java_s_rule() {
        let mut h = new_histogram();
        for v in 1..=20_000u64 {
            h.record(v * 1000).unwrap();
        }
        // The 19 980th value, not the 19 981st.
        assert_eq!(
            value_at_percentile(&h, 99.9),
            h.highest_equivalent(19_980_000)
        );
        assert_eq!(
            value_at_percentile(&h, 50.0),
            h.highest_equivalent(10_000_000)
        );
        assert_eq!(
            value_at_percentile(&h, 100.0),
            h.highest_equivalent(20_000_000)
        );
        assert_eq!(value_at_percentile(&h, 0.0), h.highest_equivalent(1_000));
        assert_eq!(value_at_percentile(&new_histogram(), 99.0), 0);
    }
}
