//! Service level: what a run must achieve in every window, and whether it did.
//!
//! [`spec`] holds a service level as typed values ([`Sla`] and its terms); [`parse`] reads one
//! from text such as `p99.9<100ms, errors<0.1%, window=10s`; [`judge`] turns fixed-length
//! intervals into windows and judges each window against the SLA; [`verdict`] keeps the
//! failing windows and the worst value of each term over a run, and says whether they
//! amount to a pass, a fail or no verdict; [`stream`] does it as a run goes, interval by interval; [`validity`]
//! decides whether the run measured the server at all (a client that could not keep its
//! schedule gives no verdict); [`stored`] is how settings files hold an SLA.

pub mod judge;
pub mod parse;
pub mod spec;
pub mod stored;
pub mod stream;
pub mod validity;
pub mod verdict;

pub use judge::{
    check_window, check_windows, judge_window, TermOutcome, Value, WindowAccumulator, WindowStats,
    WindowVerdict,
};
pub use parse::SlaParseError;
pub use spec::{Bound, Metric, Percentile, Sla, Term, Threshold, DEFAULT_WINDOW};
pub use stream::{Judged, StreamingJudge};
pub use validity::{ClientFigures, Validity, ValidityVerdict};
pub use verdict::{Judgement, RunVerdict, WorstTerm};
