//! `headroom compare`: capacity searches side by side, one per configuration, or runs side
//! by side. Reads the directories (a matrix directory stands for its configurations), prints
//! the tables of [`crate::compare::render`], and writes compare.json and an HTML report.

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::catalogue::{COMPARE_JSON, MATRIX_JSON, REPORT_HTML};
use crate::cli::CompareArgs;
use crate::compare::matrix::MatrixFile;
use crate::compare::{compare, compare_runs, render};
use crate::report::load::Input;
use crate::report::{write_report_with, ReportOptions};
use crate::usage::{usage_error, UsageError};

/// Runs `headroom compare`.
pub fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let mut options = super::settings::compare_options(&args.cost)?;
    options.baseline = args.baseline.clone();
    let dirs = expand(&args.dirs)?;
    let input = Input::load(&dirs).map_err(|e| UsageError::new(format!("{e:#}")))?;
    let (json, text) = match (input.searches.len(), input.runs.len()) {
        (searches, 0) if searches >= 2 && input.sweeps.is_empty() => {
            let comparison =
                compare(&input.searches, &options).map_err(|e| UsageError::new(e.to_string()))?;
            (
                serde_json::to_string_pretty(&comparison)?,
                render::text(&comparison),
            )
        }
        (0, runs) if runs >= 2 && input.sweeps.is_empty() => {
            if !options.prices.is_empty() || options.target_per_s.is_some() {
                return Err(usage_error(
                    "--node-price and --target-load price capacity searches; runs have no \
                     capacity to price"
                        .to_string(),
                ));
            }
            let comparison = compare_runs(&input.runs, options.baseline.as_deref())
                .map_err(|e| UsageError::new(e.to_string()))?;
            (
                serde_json::to_string_pretty(&comparison)?,
                render::run_text(&comparison),
            )
        }
        (searches, runs) => {
            return Err(usage_error(format!(
                "compare takes two or more capacity searches, or two or more runs; got {searches} \
                 search(es), {runs} run(s) and {} sweep(s)",
                input.sweeps.len()
            )))
        }
    };

    let out = args
        .output
        .out
        .clone()
        .unwrap_or_else(|| crate::output_dir::default_out_dir("compare"));
    crate::output_dir::claim_apart(&out, &dirs, "--out")?;
    crate::output_dir::claim(&out, args.output.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
    fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    fs::write(out.join(COMPARE_JSON), &json)
        .with_context(|| format!("writing {}", out.join(COMPARE_JSON).display()))?;
    let report = out.join(REPORT_HTML);
    write_report_with(
        &dirs,
        &report,
        &ReportOptions {
            compare: Some(options),
            ..ReportOptions::default()
        },
    )?;
    if args.json {
        println!("{json}");
    } else {
        print!("{text}");
        println!(
            "Files: {} and {}",
            out.join(COMPARE_JSON).display(),
            report.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The directories given, with a matrix directory replaced by its configurations'.
pub fn expand(dirs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for dir in dirs {
        if !dir.is_dir() {
            return Err(UsageError::new(format!("{} is not a directory", dir.display())).into());
        }
        if !seen.insert(dir.canonicalize().unwrap_or_else(|_| dir.clone())) {
            return Err(UsageError::new(format!(
                "{} is given twice: compare each directory once",
                dir.display()
            ))
            .into());
        }
        if dir.join(MATRIX_JSON).exists() {
            out.extend(MatrixFile::load(dir)?.search_dirs(dir));
        } else {
            out.push(dir.clone());
        }
    }
    Ok(out)
}
