//! Percentile distribution text (`.hgrm`): what Java HdrHistogram's
//! `outputPercentileDistribution` prints and `HistogramLogProcessor` writes, and what the
//! HdrHistogram plotter and similar tools read.
//!
//! The output matches Java's row for row and digit for digit: the same percentile steps, the
//! same values, the same rounding (see `java_format`).

use std::io::{self, Write};

use hdrhistogram::Histogram;

use super::java_format::fixed;

/// Writes the percentile distribution of `histogram` as Java's
/// Writes `histogram` (ns) into the file at `path` as Java's tools do (5 ticks per half
/// distance, values in ms).
pub fn write_file(path: &std::path::Path, histogram: &Histogram<u64>) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    write_percentiles(&mut file, histogram, 5, 1e6)
        .with_context(|| format!("writing {}", path.display()))?;
    file.flush()
        .with_context(|| format!("writing {}", path.display()))
}

/// `histogram.outputPercentileDistribution(out, ticks_per_half_distance, value_unit_ratio)`
/// prints it: a header, one row per percentile step (value, percentile, count up to the value,
/// 1/(1-percentile)), and the mean, standard deviation, maximum, count and bucket layout.
///
/// `ticks_per_half_distance`: percentile steps in each half of the distance still left to 100%
/// (Java's tools use 5). `value_unit_ratio`: divide recorded values by this for output (1e6:
/// ns -> ms). Values are printed with as many decimals as the histogram has significant digits,
/// as Java does (3 for a 3-digit histogram).
///
/// Returns an error of kind `InvalidInput` when `ticks_per_half_distance` is 0.
pub fn write_percentiles(
    out: &mut impl Write,
    histogram: &Histogram<u64>,
    ticks_per_half_distance: u32,
    value_unit_ratio: f64,
) -> io::Result<()> {
    if ticks_per_half_distance == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the percentile ticks per half distance must be at least 1",
        ));
    }
    let value_decimals = usize::from(histogram.sigfig());
    let mut text = format!(
        "{:>12} {:>14} {:>10} {:>14}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    for step in percentile_steps(histogram, ticks_per_half_distance) {
        let value = fixed(step.value as f64 / value_unit_ratio, value_decimals);
        let quantile = step.percentile / 100.0;
        // Java prints the last row, at 100%, without the infinite 1/(1-percentile).
        #[allow(clippy::float_cmp)]
        let last = step.percentile == 100.0;
        if last {
            text.push_str(&format!(
                "{value:>12} {:>2} {:>10}\n",
                fixed(quantile, 12),
                step.total_count
            ));
        } else {
            text.push_str(&format!(
                "{value:>12} {:>2} {:>10} {:>14}\n",
                fixed(quantile, 12),
                step.total_count,
                fixed(1.0 / (1.0 - quantile), 2)
            ));
        }
    }
    let (mean, std_deviation) = mean_and_std_deviation(histogram);
    text.push_str(&format!(
        "#[Mean    = {:>12}, StdDeviation   = {:>12}]\n",
        fixed(mean / value_unit_ratio, value_decimals),
        fixed(std_deviation / value_unit_ratio, value_decimals)
    ));
    text.push_str(&format!(
        "#[Max     = {:>12}, Total count    = {:>12}]\n",
        fixed(histogram.max() as f64 / value_unit_ratio, value_decimals),
        histogram.len()
    ));
    let (buckets, sub_buckets) = bucket_layout(histogram);
    text.push_str(&format!(
        "#[Buckets = {buckets:>12}, SubBuckets     = {sub_buckets:>12}]\n"
    ));
    out.write_all(text.as_bytes())
}

/// One row of the distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Step {
    /// The highest value equivalent to the bucket where the step was reached.
    value: u64,
    /// The percentile level stepped to, in percent (the row shows it divided by 100).
    percentile: f64,
    /// How many values were recorded up to and including `value`.
    total_count: u64,
}

/// The percentile steps of Java's `PercentileIterator`, computed as it computes them.
///
/// The level starts at 0% and advances by 100 / (ticks * 2^(halvings + 1)) percent, where
/// halvings counts how often the distance to 100% has halved so far; a step is reached at the
/// first recorded bucket whose cumulative count is at or above the level, and one bucket can
/// reach several steps. After the bucket of the largest value, a last step at 100%.
///
/// The level is kept in percent, as Java keeps it: there the increments (20%, 10%, 5%... for 5
/// ticks) are exact in binary, so a level such as 30% is exactly 30 and a bucket that ends at
/// exactly 30% of the values reaches it. The crate's `iter_quantiles` steps in fractions
/// (0.1 + 0.1 + 0.1 > 0.3) and then reports the next bucket instead, so it is not used here.
fn percentile_steps(histogram: &Histogram<u64>, ticks_per_half_distance: u32) -> Vec<Step> {
    let total = histogram.len();
    let mut steps = Vec::new();
    if total == 0 {
        return steps;
    }
    let mut level = 0.0_f64;
    let mut count_so_far = 0_u64;
    for recorded in histogram.iter_recorded() {
        count_so_far += recorded.count_at_value();
        let value = recorded.value_iterated_to();
        while 100.0 * count_so_far as f64 / total as f64 >= level {
            steps.push(Step {
                value,
                percentile: level,
                total_count: count_so_far,
            });
            if count_so_far == total {
                steps.push(Step {
                    value,
                    percentile: 100.0,
                    total_count: count_so_far,
                });
                return steps;
            }
            let next = next_level(level, ticks_per_half_distance);
            if next <= level {
                // Only for counts beyond 2^53, where the levels stop moving in a double.
                break;
            }
            level = next;
        }
    }
    steps
}

/// Java's `PercentileIterator.incrementIterationLevel`, in the same floating-point steps.
fn next_level(level: f64, ticks_per_half_distance: u32) -> f64 {
    // Truncated as Java's (long) cast truncates; ln/ln as Java's Math.log(x)/Math.log(2).
    let halvings = ((100.0 / (100.0 - level)).ln() / 2.0_f64.ln()) as u64;
    let reporting_ticks = 2_u64
        .checked_pow(u32::try_from(halvings + 1).unwrap_or(u32::MAX))
        .unwrap_or(u64::MAX)
        .saturating_mul(u64::from(ticks_per_half_distance));
    level + 100.0 / reporting_ticks as f64
}

/// Java's `getMean` and `getStdDeviation`: every recorded bucket counted at its median
/// equivalent value, the sum divided once at the end (the crate's `mean` divides term by term,
/// which can differ in the last bits).
fn mean_and_std_deviation(histogram: &Histogram<u64>) -> (f64, f64) {
    let total = histogram.len();
    if total == 0 {
        return (0.0, 0.0);
    }
    let mut sum = 0.0_f64;
    for recorded in histogram.iter_recorded() {
        let median = histogram.median_equivalent(recorded.value_iterated_to());
        sum += (u128::from(median) * u128::from(recorded.count_at_value())) as f64;
    }
    let mean = sum / total as f64;
    let mut squares = 0.0_f64;
    for recorded in histogram.iter_recorded() {
        let deviation = histogram.median_equivalent(recorded.value_iterated_to()) as f64 - mean;
        squares += deviation * deviation * recorded.count_at_value() as f64;
    }
    (mean, (squares / total as f64).sqrt())
}

/// Java's `bucketCount` and `subBucketCount` for the histogram.
///
/// The crate exposes the bucket count (`buckets()`) but not the sub-bucket count. Both
/// implementations size the counts array as (buckets + 1) * (sub-buckets / 2), the first bucket
/// using all its sub-buckets and every later one only its upper half, so the sub-bucket count
/// is 2 * distinct_values() / (buckets + 1). (From the settings alone it is the power of two at
/// or above 2 * 10^sigfig: 2048 for 3 significant digits.)
fn bucket_layout(histogram: &Histogram<u64>) -> (u64, u64) {
    let buckets = u64::from(histogram.buckets());
    let counts_len = histogram.distinct_values() as u64;
    (buckets, 2 * counts_len / (buckets + 1))
}

/// A percentile distribution (`<op>.hgrm`): the steps of HdrHistogram's text layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Spectrum {
    /// The operation type (the file's stem).
    pub op: String,
    /// (percentile as a fraction below 1, value in ms), in file order; the final 100% row
    /// is left out (its 1/(1−p) is infinite): see `max_ms`.
    pub points: Vec<(f64, f64)>,
    /// The largest value, ms.
    pub max_ms: f64,
    /// Values in the distribution.
    pub count: u64,
}

/// A `.hgrm` file's rows (Value, Percentile, TotalCount, 1/(1−Percentile)) and footer.
pub fn parse_hgrm(op: &str, text: &str) -> Option<Spectrum> {
    let mut points = Vec::new();
    let mut max_ms = None;
    let mut count = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(footer) = line.strip_prefix("#[Max") {
            // #[Max     =       21.381, Total count    =        16000]
            let mut parts = footer.split(',');
            max_ms = parts
                .next()
                .and_then(|p| p.split('=').nth(1))
                .and_then(|v| v.trim().parse::<f64>().ok());
            count = parts
                .next()
                .and_then(|p| p.split('=').nth(1))
                .and_then(|v| v.trim().trim_end_matches(']').trim().parse::<u64>().ok());
            continue;
        }
        let cells: Vec<&str> = line.split_whitespace().collect();
        if cells.len() != 4 {
            // The header, blank lines, the last (100%) row and the other footer lines.
            continue;
        }
        let (Ok(value), Ok(percentile)) = (cells[0].parse::<f64>(), cells[1].parse::<f64>()) else {
            continue;
        };
        if percentile < 1.0 {
            points.push((percentile, value));
        }
    }
    let max_ms = max_ms.or_else(|| points.last().map(|p| p.1))?;
    Some(Spectrum {
        op: op.to_string(),
        points,
        max_ms,
        count: count.unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 µs to 10 ms in steps of 1 µs, recorded in nanoseconds.
    fn one_to_ten_thousand_micros() -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for micros in 1..=10_000_u64 {
            h.record(micros * 1_000).unwrap();
        }
        h
    }

    fn text(h: &Histogram<u64>, ticks: u32, ratio: f64) -> String {
        let mut out = Vec::new();
        write_percentiles(&mut out, h, ticks, ratio).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_distribution_reads_as_javas() {
        let text = text(&one_to_ten_thousand_micros(), 5, 1e6);
        let lines: Vec<&str> = text.lines().collect();
        let expected_start = GOLDEN_START.lines().collect::<Vec<_>>();
        assert_eq!(lines[..expected_start.len()], expected_start[..], "{text}");
        let expected_end = GOLDEN_END.lines().collect::<Vec<_>>();
        assert_eq!(
            lines[lines.len() - expected_end.len()..],
            expected_end[..],
            "{text}"
        );
        assert_eq!(lines.len(), GOLDEN_LINES, "{text}");
    }

    #[test]
    fn an_empty_histogram_has_no_rows_and_a_zero_footer() {
        let h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        let text = text(&h, 5, 1e6);
        assert_eq!(
            text,
            "       Value     Percentile TotalCount 1/(1-Percentile)\n\
             \n\
             #[Mean    =        0.000, StdDeviation   =        0.000]\n\
             #[Max     =        0.000, Total count    =            0]\n\
             #[Buckets =           26, SubBuckets     =         2048]\n"
        );
    }

    #[test]
    fn one_value_gives_a_first_and_a_last_row() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        h.record(1_500_000).unwrap();
        let text = text(&h, 5, 1e6);
        let rows: Vec<&str> = text.lines().skip(2).take(2).collect();
        assert_eq!(
            rows,
            [
                "       1.500 0.000000000000          1           1.00",
                "       1.500 1.000000000000          1",
            ]
        );
    }

    #[test]
    fn zero_ticks_are_refused() {
        let mut out = Vec::new();
        let err = write_percentiles(&mut out, &one_to_ten_thousand_micros(), 0, 1e6).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(out.is_empty());
    }

    #[test]
    fn the_sub_bucket_count_follows_the_significant_digits() {
        for (sigfig, sub_buckets) in [(1, 32), (2, 256), (3, 2048), (4, 32_768), (5, 262_144)] {
            let h = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, sigfig).unwrap();
            let (buckets, subs) = bucket_layout(&h);
            assert_eq!(subs, sub_buckets, "sigfig {sigfig}");
            assert_eq!(buckets, u64::from(h.buckets()));
        }
    }

    #[test]
    fn levels_step_as_javas_percentile_iterator() {
        let mut level = 0.0;
        let mut levels = Vec::new();
        for _ in 0..14 {
            levels.push(level);
            level = next_level(level, 5);
        }
        assert_eq!(
            levels,
            [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 55.0, 60.0, 65.0, 70.0, 75.0, 77.5, 80.0, 82.5]
        );
    }

    /// The start and end of what Java HdrHistogram 2.2.2 prints for
    /// `one_to_ten_thousand_micros()` (HistogramLogProcessor, 5 ticks, ratio 1e6). At 30% the
    /// bucket ending at exactly 3000 values reaches the step; the crate's `iter_quantiles`
    /// reports the next bucket there (3.002, 3002).
    const GOLDEN_START: &str = "       Value     Percentile TotalCount 1/(1-Percentile)

       0.001 0.000000000000          1           1.00
       1.000 0.100000000000       1000           1.11
       2.001 0.200000000000       2000           1.25
       3.000 0.300000000000       3000           1.43
       4.002 0.400000000000       4001           1.67
       5.001 0.500000000000       5001           2.00
       5.501 0.550000000000       5500           2.22
       6.001 0.600000000000       6000           2.50
";
    const GOLDEN_END: &str = "       9.994 0.999316406250       9994        1462.86
      10.002 0.999414062500      10000        1706.67
      10.002 1.000000000000      10000
#[Mean    =        5.001, StdDeviation   =        2.887]
#[Max     =       10.002, Total count    =        10000]
#[Buckets =           26, SubBuckets     =         2048]
";
    /// Header, blank line, 56 rows, 3 footer lines.
    const GOLDEN_LINES: usize = 61;

    #[test]
    fn the_reader_takes_the_layout_the_writer_writes() {
        let text = "       Value     Percentile TotalCount 1/(1-Percentile)\n\n\
                    \x20      0.100 0.000000000000          1           1.00\n\
                    \x20      0.500 0.500000000000          5           2.00\n\
                    \x20      9.000 0.900000000000          9          10.00\n\
                    \x20     12.000 1.000000000000         10\n\
                    #[Mean    =        1.000, StdDeviation   =        2.000]\n\
                    #[Max     =       12.000, Total count    =           10]\n\
                    #[Buckets =           15, SubBuckets     =         2048]\n";
        let s = parse_hgrm("write", text).unwrap();
        assert_eq!(s.points, [(0.0, 0.1), (0.5, 0.5), (0.9, 9.0)]);
        assert_eq!((s.max_ms, s.count), (12.0, 10));
    }
}
