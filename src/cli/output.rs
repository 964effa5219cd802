//! Where a command writes its files: `--out` and `--force`, shared by `run`, `capacity`,
//! `sweep`, `compare` and `quickstart`. Each subcommand gives `--out` its own help (what
//! the directory holds, its default) with `mut_arg`.

use std::path::PathBuf;

use clap::Args;

/// The directory a command writes, and whether it may empty an earlier one.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// The directory of the results.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Remove an earlier run's files from --out first; without it such a directory is
    /// refused, so that two runs never mix. Only what headroom wrote is removed: a
    /// directory that also holds other files is refused whole.
    #[arg(long)]
    pub force: bool,
}
