//! `headroom report`: the HTML report of run and capacity-search directories, and each
//! chart as an SVG file when asked.

use std::process::ExitCode;

use crate::cli::ReportArgs;
use crate::report::{write_report_with, ReportOptions};

/// Runs `headroom report`.
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.dirs[0].join(crate::catalogue::REPORT_HTML));
    let options = ReportOptions {
        title: args.title.clone(),
        svg_dir: args.svg.clone(),
        ..ReportOptions::default()
    };
    let written = write_report_with(&args.dirs, &out, &options)?;
    println!(
        "Report: {} ({} charts)",
        written.html.display(),
        written.charts
    );
    if let Some(dir) = &args.svg {
        println!(
            "Charts: {} SVG files in {}",
            written.svgs.len(),
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use clap::Parser;

    use crate::cli::{Cli, Command};

    #[test]
    fn the_report_command_line() {
        let cli = Cli::try_parse_from([
            "headroom", "report", "runs/a", "runs/b", "--svg", "slides", "--title", "GC",
        ])
        .unwrap();
        let Command::Report(args) = cli.command else {
            panic!("not report")
        };
        assert_eq!(args.dirs, [Path::new("runs/a"), Path::new("runs/b")]);
        assert_eq!(args.svg.as_deref(), Some(Path::new("slides")));
        assert_eq!(args.title.as_deref(), Some("GC"));
        assert!(args.out.is_none());
        assert!(Cli::try_parse_from(["headroom", "report"]).is_err());
    }

    #[test]
    fn the_report_goes_into_the_first_directory_by_default() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        crate::report::export::html::tests::copy_dir(&crate::fixtures::run_fixture(), &run);
        let cli = Cli::try_parse_from(["headroom", "report", run.to_str().unwrap()]).unwrap();
        let Command::Report(args) = cli.command else {
            panic!("not report")
        };
        super::run(args).unwrap();
        assert!(run.join("report.html").exists());
    }
}
