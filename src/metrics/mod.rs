//! Measurements: per-operation-type histograms of response and service time, error counts by
//! class, the client's hiccup meter, and the client's own CPU and memory.

pub mod errors;
pub mod hiccup;
pub mod process;
pub mod stats;

pub use errors::ErrorClass;
pub use stats::{new_histogram, percentile_rank, value_at_percentile, OpStats, Phase};
