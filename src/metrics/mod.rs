//! Measurements: per-operation-type histograms of response and service time, error counts by
//! class, the client's own CPU and memory, and the server pauses of the nodes a run loaded,
//! and Cassandra's own figures of the run's table. (The client's hiccups are measured by the
//! engine's workers: see `engine`.)

pub mod errors;
pub mod op_histograms;
pub mod process;
pub mod server_pauses;
pub mod server_samples;
pub mod server_tables;

pub use errors::ErrorClass;
pub use op_histograms::{OpHistograms, Phase, RECALL_SCALE};
