//! One file per output format.
//!
//! - [`hlog`]: HdrHistogram interval logs, one compressed histogram per interval and tag,
//!   read by HistogramLogProcessor and HistogramLogAnalyzer.
//! - [`hgrm`]: percentile distribution text, as Java's `outputPercentileDistribution` prints
//!   it, read by the HdrHistogram plotter.
//! - [`intervals_csv`]: one row per interval, phase and operation type.
//! - [`html`]: the report page made of run and capacity directories.

pub mod hgrm;
pub mod hlog;
pub mod html;
pub mod intervals_csv;

mod java_format;
