//! Latency data in the formats of the HdrHistogram tool family, so that the tools people
//! already use (HistogramLogProcessor, HistogramLogAnalyzer, the HdrHistogram plotter) read
//! headroom's results as they are.
//!
//! - [`hlog`]: interval logs, one compressed histogram per interval and tag.
//! - [`hgrm`]: percentile distribution text, as Java's `outputPercentileDistribution` prints it.

pub mod hgrm;
pub mod hlog;

mod java_format;
