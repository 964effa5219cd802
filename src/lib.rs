//! headroom: load testing and capacity planning for Apache Cassandra.
//!
//! The library behind the `headroom` binary. [`run`] executes a parsed command line; the
//! modules below are usable on their own, e.g. [`cluster::LocalCluster`] starts real local
//! Cassandra nodes for a test and stops them when dropped.

pub mod capacity;
pub mod cli;
pub mod client;
pub mod cluster;
mod commands;
pub mod compare;
pub mod engine;
#[cfg(test)]
mod fixtures;
pub mod fleet;
pub mod format;
pub mod lanes;
pub mod maintenance;
pub mod metrics;
pub mod output_dir;
pub mod report;
pub mod results;
pub mod run;
pub mod sla;
pub mod stats;
pub mod stop;
pub mod sweep;
pub mod units;
pub mod usage;
pub mod workload;

use std::process::ExitCode;

pub use commands::exit::exit_code_for;

/// Runs one parsed command line and returns the process exit code.
pub fn run(cli: cli::Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        cli::Command::Cluster(args) => commands::cluster::run(args),
        cli::Command::Run(args) => commands::run::run(*args),
        cli::Command::Capacity(args) => commands::capacity::run(*args),
        cli::Command::Sweep(args) => commands::sweep::run(*args),
        cli::Command::Quickstart(args) => commands::quickstart::run(*args),
        cli::Command::Report(args) => commands::report::run(args),
        cli::Command::Compare(args) => commands::compare::run(*args),
        cli::Command::Merge(args) => commands::merge::run(args),
        cli::Command::Kube(args) => commands::kube::run(args),
    }
}
