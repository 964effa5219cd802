//! `headroom compare`: capacity searches (or runs) of one workload side by side.

use std::path::PathBuf;

use clap::Args;

use super::{CostArgs, OutputArgs};

/// `headroom compare`
#[derive(Debug, Args, Clone)]
#[command(mut_arg("out", |a| a.help(
    "Where compare.json and report.html go. [default: runs/<timestamp>-compare]"
)))]
pub struct CompareArgs {
    /// Capacity-search directories (from `capacity`, one per configuration), or a
    /// `capacity --matrix` directory (its configurations in order).
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,

    /// The configuration the others are measured against, by its label.
    /// [default: the first]
    #[arg(long, value_name = "LABEL")]
    pub baseline: Option<String>,

    /// Where the comparison goes.
    #[command(flatten)]
    pub output: OutputArgs,

    /// Print compare.json to standard output instead of the tables.
    #[arg(long)]
    pub json: bool,

    /// The price of the configurations.
    #[command(flatten)]
    pub cost: CostArgs,
}
