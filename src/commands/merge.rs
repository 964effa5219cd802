//! `headroom merge`: the fleet read and checked ([`crate::fleet::merge`]), `--out` claimed,
//! the merged run written and summed up on the terminal, its report, and a run's exit code.

use std::process::ExitCode;

use crate::cli::MergeArgs;
use crate::fleet::merge;

use super::exit::exit_code_of;
use super::terminal::{watch, write_report};

/// Runs `headroom merge`.
pub fn run(args: MergeArgs) -> anyhow::Result<ExitCode> {
    crate::output_dir::claim_apart(&args.out, &args.dirs, "--out")?;
    let fleet = merge::read(&args.dirs)?;
    crate::output_dir::claim(&args.out, args.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
    for warning in &fleet.warnings {
        eprintln!("Warning: {warning}");
    }
    let summary = fleet.write(
        &args.out,
        crate::cli::redacted_command_line(std::env::args()),
    )?;
    println!(
        "Merged {} workers into {}.",
        fleet.len(),
        args.out.display()
    );
    // The k of each recall@k, from the merged run's settings (none when they do not read).
    let recall_ops = crate::results::config::RunSettings::read(&args.out)
        .map(|c| crate::workload::AnyWorkload::recall_ops_of(&c.workload))
        .unwrap_or_default();
    watch::print_summary(&summary, &recall_ops);
    println!("\nFiles: {}", args.out.display());
    write_report(&args.out);
    Ok(exit_code_of(&summary))
}
