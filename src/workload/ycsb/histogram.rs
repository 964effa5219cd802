//! YCSB's field-length histogram files (`fieldlengthdistribution=histogram`,
//! `fieldlengthhistogram=FILE`): the file read when the workload is resolved, its buckets
//! kept in config.json, and lengths drawn from them as YCSB's `HistogramGenerator` draws them.
//!
//! The format: a first line `BlockSize<TAB>B`, then one line `I<TAB>COUNT` per bucket, the
//! buckets numbered 0, 1, 2... in order. Bucket i stands for values of (i + 1) × B: a draw
//! picks a whole number below the sum of the counts and walks the buckets, subtracting each
//! count until the number is at most 0. Like YCSB, the walk stops before the last bucket,
//! whose share therefore goes to (last index) × B, the length of the bucket before it, and
//! bucket 0 gets one draw more than its count.

use serde::{Deserialize, Serialize};

/// The longest field value a histogram may give, as `fieldlength`'s limit.
pub const MAX_LENGTH: u64 = 1 << 20;

/// A field-length histogram, as read from its file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LengthHistogram {
    /// The file it was read from, as given.
    pub file: String,
    /// The length of one bucket.
    pub block_size: u64,
    /// The count of each bucket, from bucket 0.
    pub buckets: Vec<u64>,
}

impl LengthHistogram {
    /// Reads the file's text; errors say the line and what is wrong with it.
    pub fn parse(file: &str, text: &str) -> Result<LengthHistogram, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty());
        let Some((line, first)) = lines.next() else {
            return Err("the file is empty; its first line is BlockSize<TAB>N".into());
        };
        let block_size = match first.split_whitespace().collect::<Vec<_>>()[..] {
            ["BlockSize", n] => n.parse::<u64>().ok().filter(|&b| b >= 1).ok_or_else(|| {
                format!("line {line}: the block size '{n}' is not a whole number of at least 1")
            })?,
            _ => {
                return Err(format!(
                    "line {line}: the first line must be BlockSize<TAB>N, not '{first}'"
                ))
            }
        };
        let mut buckets = Vec::new();
        for (line, text) in lines {
            let (index, count) = match text.split_whitespace().collect::<Vec<_>>()[..] {
                [i, c] => (i, c),
                _ => return Err(format!("line {line}: '{text}' is not BUCKET<TAB>COUNT")),
            };
            if index.parse::<usize>().ok() != Some(buckets.len()) {
                return Err(format!(
                    "line {line}: bucket '{index}' where bucket {} comes next (buckets are numbered from 0, in order)",
                    buckets.len()
                ));
            }
            let count = count
                .parse::<u64>()
                .map_err(|_| format!("line {line}: the count '{count}' is not a whole number"))?;
            buckets.push(count);
        }
        let histogram = LengthHistogram {
            file: file.to_string(),
            block_size,
            buckets,
        };
        if histogram
            .buckets
            .iter()
            .try_fold(0u64, |a, &c| a.checked_add(c))
            .is_none_or(|sum| sum == 0)
        {
            return Err("the counts add up to 0 (or overflow): no length to draw".into());
        }
        if histogram.longest().is_none_or(|l| l > MAX_LENGTH) {
            return Err(format!(
                "its longest value, (last bucket) × BlockSize, is over {MAX_LENGTH} characters"
            ));
        }
        Ok(histogram)
    }

    /// The longest length a draw gives: (last index) × block size, or bucket 0's.
    fn longest(&self) -> Option<u64> {
        let last = (self.buckets.len() as u64).saturating_sub(1).max(1);
        last.checked_mul(self.block_size)
    }

    /// The chooser of lengths.
    pub fn lengths(&self) -> HistogramLengths {
        let mut sum = 0;
        let cumulative = self
            .buckets
            .iter()
            .map(|&c| {
                sum += c;
                sum
            })
            .collect();
        HistogramLengths {
            block_size: self.block_size,
            cumulative,
        }
    }
}

/// Draws lengths from a [`LengthHistogram`].
#[derive(Debug, Clone)]
pub struct HistogramLengths {
    block_size: u64,
    /// The counts summed up to each bucket, included.
    cumulative: Vec<u64>,
}

impl HistogramLengths {
    /// The length the whole number `n` (below the counts' sum) draws.
    pub fn length_of(&self, n: u64) -> u64 {
        let walked = self.cumulative.len().saturating_sub(1);
        // The first bucket i (before the last) whose sum through it is at least n.
        let i = self.cumulative[..walked].partition_point(|&through| through < n);
        if i < walked {
            (i as u64 + 1) * self.block_size
        } else {
            walked as u64 * self.block_size
        }
    }

    /// A length drawn from `rng`.
    pub fn choose(&self, rng: &mut rand::rngs::SmallRng) -> u64 {
        use rand::Rng;
        let area = *self.cumulative.last().expect("a histogram has a bucket");
        self.length_of(rng.random_range(0..area))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ycsbs_format_is_read_and_bad_lines_are_named() {
        let h = LengthHistogram::parse("h", "BlockSize\t10\n0\t1\n1\t2\n2\t3\n").unwrap();
        assert_eq!((h.block_size, h.buckets.clone()), (10, vec![1, 2, 3]));
        // Spaces as well as tabs, and a blank line at the end.
        let h = LengthHistogram::parse("h", "BlockSize 4\n0 5\n\n").unwrap();
        assert_eq!((h.block_size, h.buckets), (4, vec![5]));
        for (text, expected) in [
            ("", "empty"),
            ("0\t1\n", "line 1: the first line must be BlockSize"),
            ("BlockSize\t0\n0\t1\n", "line 1: the block size '0'"),
            (
                "BlockSize\t8\n0\t1\n2\t1\n",
                "line 3: bucket '2' where bucket 1 comes next",
            ),
            ("BlockSize\t8\n0\tmany\n", "line 2: the count 'many'"),
            (
                "BlockSize\t8\n0\t1\t2\n",
                "line 2: '0\t1\t2' is not BUCKET<TAB>COUNT",
            ),
            ("BlockSize\t8\n0\t0\n1\t0\n", "add up to 0"),
            ("BlockSize\t8\n", "add up to 0"),
            ("BlockSize\t1048576\n0\t1\n1\t1\n2\t1\n", "over 1048576"),
        ] {
            let error = LengthHistogram::parse("h", text).unwrap_err();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }

    #[test]
    fn draws_walk_the_buckets_as_ycsb_does() {
        // Counts 2, 3, 5 (area 10): n = 0..=2 → bucket 0 (length 10), n = 3..=5 → bucket
        // 1 (20), n = 6..=9 → past the walk, (last index) × 10 = 20.
        let lengths = LengthHistogram::parse("h", "BlockSize\t10\n0\t2\n1\t3\n2\t5\n")
            .unwrap()
            .lengths();
        let drawn: Vec<u64> = (0..10).map(|n| lengths.length_of(n)).collect();
        assert_eq!(drawn, [10, 10, 10, 20, 20, 20, 20, 20, 20, 20]);
        // A single bucket gives 0, as in YCSB.
        let one = LengthHistogram::parse("h", "BlockSize\t10\n0\t4\n")
            .unwrap()
            .lengths();
        assert_eq!(one.length_of(3), 0);
        // Drawn from a generator, the shares follow the walk.
        let lengths = LengthHistogram::parse("h", "BlockSize\t1\n0\t0\n1\t50\n2\t30\n3\t20\n")
            .unwrap()
            .lengths();
        let mut counts = [0u32; 4];
        for seq in 0..100_000 {
            counts[lengths.choose(&mut crate::workload::common::generators::request_rng(
                5, seq,
            )) as usize] += 1;
        }
        // n = 0 → 1; n = 1..=50 → 2; n = 51..=80 → 3; n = 81..=99 → 3 (the last bucket's).
        assert_eq!(counts[0], 0);
        let share = |c: u32| c as f64 / 100_000.0;
        assert!((share(counts[1]) - 0.01).abs() < 0.003, "{counts:?}");
        assert!((share(counts[2]) - 0.50).abs() < 0.01, "{counts:?}");
        assert!((share(counts[3]) - 0.49).abs() < 0.01, "{counts:?}");
    }
}
