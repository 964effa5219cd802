//! `headroom merge`: a fleet's workers' run directories added into one.

use std::path::PathBuf;

use clap::Args;

/// `headroom merge`
#[derive(Debug, Args, Clone)]
pub struct MergeArgs {
    /// The workers' run directories (each written by `run --worker K/N`), every worker of
    /// the fleet once, in any order.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,

    /// The merged run directory.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,

    /// Empty --out first when it holds an earlier run's files (only a directory headroom
    /// wrote).
    #[arg(long)]
    pub force: bool,
}
