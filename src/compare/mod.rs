//! Comparing configurations: is one garbage collector, instance type or Cassandra version
//! faster than another on the same workload, or is the difference noise?
//!
//! The statistics a comparison rests on (Welch's t-test on per-window throughput, bootstrap
//! intervals for latency percentiles and their differences, and the verdict of one
//! difference) are in [`crate::stats::difference`]; [`samples`] reads a run's windows;
//! [`comparison`] compares capacity searches into what compare.json holds, [`runs`] runs
//! side by side; [`cost`] prices them, by each configuration's own capacity or, with
//! `--size-for degraded`, by its [`twins`]' with a node down; [`scaling`] fits how capacity
//! grows with nodes across configurations of several sizes; [`render`] makes the tables the
//! terminal and the report show. The server's own pauses come from [`crate::cluster::pauses`].
//! docs/compare.md describes the method.

pub mod comparison;
pub mod cost;
pub mod matrix;
pub mod render;
pub mod runs;
pub mod samples;
pub mod scaling;
pub mod twins;
pub mod usl_words;

pub use comparison::{compare, CompareOptions, Comparison};
pub use runs::{compare_runs, RunComparison};
