//! Statistics every layer shares, knowing nothing else of headroom: percentiles of
//! HdrHistograms as Java computes them ([`histogram`]), and whether two samples differ or
//! only their noise does ([`difference`]).

pub mod difference;
pub mod histogram;
pub mod usl;

pub use histogram::{
    new_histogram, percentile_rank, percentiles_and_mean, value_at_percentile, value_at_rank,
};
