//! headroom: load testing and capacity planning for Apache Cassandra.
//!
//! The library behind the `headroom` binary. [`main`] reads and runs the process's command
//! line (its flags are the binary's, not part of the library's API); the modules below are
//! usable on their own, e.g. [`cluster::LocalCluster`] starts real local
//! Cassandra nodes for a test and stops them when dropped.

pub mod capacity;
pub mod catalogue;
mod cli;
pub mod client;
pub mod cluster;
mod commands;
pub mod compare;
pub mod cpus;
pub mod engine;
pub mod figures;
/// The recorded directories the unit tests read; kept with them in tests/fixtures/.
#[cfg(test)]
#[path = "../tests/fixtures/unit.rs"]
mod fixtures;
pub mod fleet;
pub mod format;
pub mod lanes;
pub mod limits;
pub mod live;
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
pub mod validation;
pub mod vectors;
pub mod workload;

use std::process::ExitCode;

pub use commands::exit::exit_code_for;

/// The `headroom` command: reads the process's command line, runs it, prints an error the
/// way a person can act on it, and returns the exit code (the README's table).
pub fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let parsed = cli::Cli::command()
        .try_get_matches()
        .and_then(|matches| Ok((cli::Cli::from_arg_matches(&matches)?, matches)));
    let cli = match parsed {
        Ok((cli, matches)) => {
            // A flag that would do nothing with the others given is refused before
            // anything runs.
            if let Err(e) = cli::combinations::check(&matches) {
                eprintln!("Error: {e}");
                return ExitCode::from(2);
            }
            cli
        }
        // --help and --version, on standard output.
        Err(e) if !e.use_stderr() => e.exit(),
        // clap quotes the value it refused whole: a pasted file would fill the terminal.
        Err(e) => {
            eprint!("{}", usage::cut_lines(&e.render().to_string(), 300));
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            let message = usage::cut_lines(&format!("{err:#}"), 1000);
            eprintln!("Error: {message}");
            ExitCode::from(exit_code_for(&err))
        }
    }
}

/// Runs one parsed command line and returns the process exit code.
fn run(cli: cli::Cli) -> anyhow::Result<ExitCode> {
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
