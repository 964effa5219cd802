//! The report page made of run, capacity-search and sweep directories ([`html`]). The
//! run directory's own files (histogram logs, percentile distributions, intervals.csv,
//! summary.json) are [`crate::results`]'.

pub mod html;
