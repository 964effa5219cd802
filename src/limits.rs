//! The range of each number a run's settings hold, in the notation of the command line
//! (`"10ms"`, `"1k"`, `"1G"`): one home read by the flags' value parsers (`cli/ranges.rs`,
//! whose `--help` states the same bounds, checked by a test) and by the check of a
//! config.json that `run --config` takes, so that a file edited by hand is refused as the
//! flags would have been.

use std::time::Duration;

use crate::units;

/// A number's lowest and highest value, both allowed, as the command line writes them.
pub type Range = (&'static str, &'static str);

/// `run --rate`, and the rate of a run's settings: one request in about 17 minutes to one a
/// nanosecond ([`units::MIN_RATE_PER_S`], [`units::MAX_RATE_PER_S`]).
pub const RATE: Range = ("0.001", "1G");
/// `run --duration`: at least the shortest interval, at most a month of load.
pub const RUN_DURATION: Range = ("10ms", "30d");
/// `run --warmup`.
pub const RUN_WARMUP: Range = ("0s", "24h");
/// `--interval`.
pub const INTERVAL: Range = ("10ms", "1h");
/// `--timeout`, one request's.
pub const TIMEOUT: Range = ("1ms", "1h");
/// `--send-resolution` (and at most one `--interval`, checked with it).
pub const SEND_RESOLUTION: Range = ("0s", "1s");
/// `--server-stats-every`: each reading is a few queries per node.
pub const SERVER_STATS_EVERY: Range = ("1s", "1h");
/// `--threads`: the engine keeps per-worker counters for this many.
pub const THREADS: Range = ("1", "256");
/// `--connections` to each node from each thread.
pub const CONNECTIONS: Range = ("1", "1k");
/// `--max-in-flight`: far more than any cluster answers at once.
pub const MAX_IN_FLIGHT: Range = ("1", "10M");
/// `--concurrency` of a closed loop.
pub const CONCURRENCY: Range = ("1", "1M");

fn bound_seconds(text: &str) -> f64 {
    units::parse_duration(text)
        .unwrap_or_else(|e| panic!("the bound {text} does not read: {e}"))
        .as_secs_f64()
}

fn bound_count(text: &str) -> u64 {
    units::parse_count(text).unwrap_or_else(|e| panic!("the bound {text} does not read: {e}"))
}

/// Seconds as a settings file holds them, within `range`; the error names the field.
pub fn check_seconds(field: &str, seconds: f64, (low, high): Range) -> Result<Duration, String> {
    if seconds.is_finite() && seconds >= bound_seconds(low) && seconds <= bound_seconds(high) {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!("{field} is {seconds} s, outside {low} to {high}"))
    }
}

/// A count as a settings file holds it, within `range`.
pub fn check_count(field: &str, count: u64, (low, high): Range) -> Result<(), String> {
    if count >= bound_count(low) && count <= bound_count(high) {
        Ok(())
    } else {
        Err(format!("{field} is {count}, outside {low} to {high}"))
    }
}

/// A rate per second as a settings file holds it, within `range`.
pub fn check_rate(field: &str, rate: f64, (low, high): Range) -> Result<(), String> {
    let read = |t: &str| units::parse_rate(t).unwrap_or_else(|e| panic!("{e}"));
    if rate.is_finite() && rate >= read(low) && rate <= read(high) {
        Ok(())
    } else {
        Err(format!("{field} is {rate}/s, outside {low} to {high}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_outside_their_range_are_named() {
        assert_eq!(
            check_seconds("warmup_s", 5.0, RUN_WARMUP),
            Ok(Duration::from_secs(5))
        );
        for bad in [-1.0, f64::NAN, f64::INFINITY, 86_401.0] {
            let e = check_seconds("warmup_s", bad, RUN_WARMUP).unwrap_err();
            assert!(e.contains("warmup_s") && e.contains("0s to 24h"), "{e}");
        }
        assert!(check_count("threads", 256, THREADS).is_ok());
        assert!(check_count("threads", 0, THREADS).is_err());
        assert!(check_count("threads", 257, THREADS).is_err());
        assert!(check_rate("rate_per_s", 1e9, RATE).is_ok());
        for bad in [0.0, 1e99, f64::NAN, -5.0] {
            assert!(check_rate("rate_per_s", bad, RATE).is_err(), "{bad}");
        }
    }
}
