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
pub mod maintenance;
pub mod metrics;
pub mod output_dir;
pub mod report;
pub mod results;
pub mod run;
pub mod sla;
pub mod sweep;
pub mod units;
pub mod usage;
pub mod workload;

use std::process::ExitCode;

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
    }
}

/// The exit code for an error that ended a command: 2 when the user's input was wrong
/// (the same code clap uses for a bad command line), 1 for everything else.
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    let is_usage = err.chain().any(|cause| {
        cause
            .downcast_ref::<cluster::ClusterError>()
            .is_some_and(cluster::ClusterError::is_usage_error)
            || cause.downcast_ref::<units::ParseError>().is_some()
            || cause.downcast_ref::<sla::SlaParseError>().is_some()
            || cause.downcast_ref::<usage::UsageError>().is_some()
            || cause.downcast_ref::<maintenance::PlanError>().is_some()
            || cause
                .downcast_ref::<workload::builtin::WorkloadError>()
                .is_some_and(workload::builtin::WorkloadError::is_usage_error)
            // An unreachable contact point or missing credentials: the command line is wrong.
            || cause.downcast_ref::<client::ConnectError>().is_some()
    });
    if is_usage {
        2
    } else {
        1
    }
}
