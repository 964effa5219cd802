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

    /// The merged run directory: a new one, never one of the DIRs.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,

    /// Remove an earlier run's files from --out first (only what headroom wrote; a
    /// directory that also holds other files, or any of the DIRs, is refused).
    #[arg(long)]
    pub force: bool,
}
