//! The report's charts as data: each chart's axes, series, shaded spans and reference lines,
//! computed from the loaded directories ([`super::load`]). [`draw`] turns a [`Chart`] into
//! SVG; keeping the numbers apart from the drawing lets tests check every series.
//!
//! The charts, after the field reports headroom grew from (Azul's capacity and cost
//! article, Mark Price's load-testing article, Azul's HotSpot and Zing study):
//! 1. [`sla_vs_rate`](fn@sla_vs_rate): the worst window's value of an SLA term against the
//!    attempted rate, one line per configuration, the SLA threshold and each capacity marked
//!    (Azul's capacity and cost article).
//! 2. [`latency_vs_throughput`](fn@latency_vs_throughput): whole-run p50/p99/p99.9/max
//!    against achieved throughput (Mark Price's article).
//! 3. [`spectrum`](fn@spectrum): the percentile spectrum, x = 1/(1−p) on a log scale, with
//!    the SLA as a step line (the HotSpot and Zing study, jHiccup's charts).
//! 4. [`timeline`](fn@timeline): latency and throughput per interval, warmup shaded, failing
//!    windows marked, client hiccups overlaid, errors per interval.
//! 5. [`concurrency`](fn@concurrency): throughput and latency against concurrency, for
//!    closed-loop sweeps (Mark Price's article).
//! 6. [`sweep`](fn@sweep): for a `headroom sweep` directory, its throughput against
//!    concurrency and its p50/p99/p99.9 against throughput (Mark Price's two charts).
//! 7. [`pauses::pause_timeline`]: the client's latency per interval and each node's
//!    stop-the-world pauses over the same time axis (the HotSpot and Zing study, figure 5).
//! 8. [`capacity_vs_nodes`]: capacity against cluster size, each repeat, the Universal
//!    Scalability Law fitted with its interval, the linear rule and the target load.
//! 9. [`recall_timeline`]: the mean and first percentile of the ANN queries' recall per
//!    interval, for a run of the vector workload.
//! 10. [`windows_vs_rate`](fn@windows_vs_rate): an interval search's share of failing
//!     windows at each rate, the exceed ratio and the bounds it confirmed.
//!
//! The model's types are in `model.rs`, labels and SLA wording in `labels.rs`, what several
//! charts draw alike in `common.rs`, and each chart in a file of its own name; they are all
//! used from here.

pub mod draw;
pub mod maintenance;
pub mod pauses;
pub mod server_latency;

mod axes;
mod common;
mod concurrency;
mod labels;
mod latency_vs_throughput;
mod model;
mod recall;
mod scaling;
mod sla_vs_rate;
mod spectrum;
mod sweep;
mod timeline;
mod windows_vs_rate;

pub use concurrency::concurrency;
pub use labels::{sla_words, slug};
pub use latency_vs_throughput::latency_vs_throughput;
pub use model::{
    palette, Axis, Band, Chart, Color, Kind, Rule, Scale, Series, Style, ERROR_RED, HICCUP_GREY,
    LATENCY_LINES, PALETTE, SLA_RED, THROUGHPUT_BLUE, WARMUP_GREY,
};
pub use recall::recall_timeline;
pub use scaling::capacity_vs_nodes;
pub use sla_vs_rate::sla_vs_rate;
pub use spectrum::spectrum;
pub use sweep::sweep;
pub use timeline::{timeline, timeline_trials};
pub use windows_vs_rate::windows_vs_rate;

#[cfg(test)]
pub(crate) mod tests {
    use crate::capacity::dir::SearchData;
    use crate::engine::LoadMode;
    use crate::fixtures::{capacity_fixture, run_fixture};
    use crate::results::run_dir::RunData;

    pub(crate) fn fixture_run() -> RunData {
        RunData::load(&run_fixture(), "run".into())
    }

    pub(crate) fn fixture_search() -> SearchData {
        SearchData::load(&capacity_fixture()).unwrap()
    }

    /// Copies of the run fixture as closed-loop runs at these concurrencies and rates.
    pub(crate) fn closed_loop_runs(sweep: &[(usize, f64)]) -> Vec<RunData> {
        sweep
            .iter()
            .map(|&(concurrency, rate)| {
                let mut run = RunData::load(&run_fixture(), format!("c{concurrency}"));
                run.mode = Some(LoadMode::Closed { concurrency });
                let summary = run.summary.as_mut().unwrap();
                summary.mode = LoadMode::Closed { concurrency };
                summary.attempted_rate_per_s = None;
                summary.achieved_rate_per_s = rate;
                run
            })
            .collect()
    }
}
