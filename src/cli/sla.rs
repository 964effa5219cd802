//! The service level and the windows it is judged on, shared by `run` (no SLA unless
//! given) and `capacity` (which gives [`DEFAULT_SLA`] as the default).

use std::time::Duration;

use clap::Args;

/// The SLA of `capacity` when none is given, and of the quickstart.
pub const DEFAULT_SLA: &str = "p99.9<100ms";

/// `--sla` and `--window`.
#[derive(Debug, Args, Clone)]
pub struct SlaArgs {
    /// The service level every window after the warmup must meet (in a search, every window
    /// of every trial), e.g.
    /// 'p99.9<100ms, max<1s, errors<0.1%'. Terms: pNN (percentile of response time),
    /// max, mean, errors (failed / all requests, as a percentage); `op:term` judges one
    /// operation type only, e.g. read:p99<10ms. `term@WINDOW` judges a term over windows of
    /// its own length (tumbling, like Azul's Tussle), so one SLA can hold several horizons:
    /// 'p99<20ms@10s, p99.9<50ms@1m, p99.99<200ms@5m'; a term without @ uses --window.
    #[arg(long = "sla", id = "sla", value_name = "TERMS")]
    pub terms: Option<String>,

    /// Length of the windows the SLA's terms without an @WINDOW of their own are judged on,
    /// aligned to the end of the warmup; a whole number of intervals. Every window, the
    /// terms' own too, must fit the run's --duration a whole number of times. Only with an
    /// SLA, and not beside a window=... inside --sla. [range: 10ms to 24h] [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = super::ranges::duration("10ms", "24h"))]
    pub window: Option<Duration>,
}

/// `--window` when not given.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(10);
