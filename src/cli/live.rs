//! Watching a run while it goes: `--metrics-listen`, `--metrics-push`, `--live` and
//! `--linger`, shared by `run`, `capacity` and `sweep` (and so by a fleet's workers, which
//! are runs). docs/live.md is the user's side.

use std::time::Duration;

use clap::Args;

/// Where to watch a run or search from.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Watching it live")]
pub struct LiveArgs {
    /// Serve the run's metrics in the OpenMetrics text format at http://ADDR/metrics for
    /// Prometheus to scrape: requests and errors per op type, the latest interval's and
    /// the current SLA window's percentiles, attempted and achieved rate, backlog, in
    /// flight, send lag, the client's CPU, memory and hiccups, the SLA windows by verdict
    /// and, in a search, the trial's rate and the bracket (docs/live.md lists them). ADDR
    /// is HOST:PORT, or a PORT alone for 127.0.0.1; any address other than loopback is
    /// served to whoever can reach it. With --workers N, worker K of a local fleet serves
    /// the port K above ADDR's.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,

    /// Also push the metrics to a Prometheus Pushgateway at URL (http://HOST:PORT) after
    /// every interval and once at the end, for runs too short to scrape. Each process
    /// pushes to the group job=headroom, run=NAME, worker=K/N (or single), which each push
    /// replaces.
    #[arg(long, value_name = "URL")]
    pub metrics_push: Option<String>,

    /// Serve a page at http://ADDR/ that follows the run or search as it goes: rates,
    /// latency percentiles with the SLA's thresholds, errors, backlog, the client's CPU and
    /// hiccups, each SLA window's verdict and a search's ladder; it needs no network
    /// beyond this address. ADDR as for --metrics-listen (it may be the same address).
    #[arg(long, value_name = "ADDR")]
    pub live: Option<String>,

    /// After the run or search ends, go on serving the final metrics and page this long,
    /// so that the last scrape and the page (with its link to the report) see the end;
    /// Ctrl-C ends it sooner. [range: 0s to 24h] [default: 10s with --live, else 0s]
    #[arg(long, value_name = "DURATION", value_parser = super::ranges::duration("0s", "24h"))]
    pub linger: Option<Duration>,
}
