//! Comparing configurations: is one garbage collector, instance type or Cassandra version
//! faster than another on the same workload, or is the difference noise?
//!
//! [`stats`] holds the statistics a comparison rests on (Welch's t-test on per-window
//! throughput, bootstrap intervals for latency percentiles and their differences, and the
//! verdict of one difference). The server's own pauses come from
//! [`crate::cluster::pauses`]. docs/compare.md describes the method.

pub mod stats;

pub use stats::{
    compare_means, compare_percentile, percentile_difference_interval, percentile_interval,
    welch_t_test, Better, Bootstrap, Difference, Evidence, Interval, StatsError, Verdict, Welch,
    DEFAULT_LEVEL,
};
