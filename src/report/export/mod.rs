//! One file per output format.

pub mod hgrm;
pub mod hlog;
pub mod intervals_csv;

mod java_format;
