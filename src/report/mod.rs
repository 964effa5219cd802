//! The HTML report of run, capacity-search, sweep and comparison directories, made after
//! the fact from their files: [`load`] reads what a page is made of (through
//! [`crate::results`], [`crate::capacity`] and [`crate::sweep`]'s readers), [`compared`]
//! holds a comparison computed by [`crate::compare`] and handed in, [`charts`] turns the
//! data into charts and [`export::html`] into one self-contained page.

pub mod charts;
pub mod compared;
pub mod export;
pub mod load;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::output_dir::Made;

/// How a report is made, beyond its directories and output file.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// The page's title; by default one is made from what the directories hold.
    pub title: Option<String>,
    /// Also write each chart as its own SVG file into this directory (created if needed).
    pub svg_dir: Option<PathBuf>,
    /// How several capacity searches are compared (baseline, prices); by default a matrix
    /// directory's own, else the first search as the baseline and no cost.
    pub compare: Option<crate::compare::CompareOptions>,
}

/// What writing a report produced.
#[derive(Debug, Clone)]
pub struct Written {
    /// The HTML file.
    pub html: PathBuf,
    /// The SVG files written for `--svg`, in page order.
    pub svgs: Vec<PathBuf>,
    /// The number of charts on the page.
    pub charts: usize,
}

/// Writes the HTML report of run and capacity-search directories to `out`: one
/// self-contained page with the charts and tables of every directory, in the order given.
/// Commands call this when they finish, with their own directory.
pub fn write_report(dirs: &[PathBuf], out: &Path) -> anyhow::Result<()> {
    write_report_with(dirs, out, &ReportOptions::default()).map(|_| ())
}

/// [`write_report`] with a title and SVG files.
pub fn write_report_with(
    dirs: &[PathBuf],
    out: &Path,
    options: &ReportOptions,
) -> anyhow::Result<Written> {
    anyhow::ensure!(!dirs.is_empty(), "a report needs at least one directory");
    let mut input = load::Input::load(dirs)?;
    if let Some(compare) = &options.compare {
        input.compare = compare.clone();
    }
    let compared = compared::Compared::of(&input);
    let (html, charts) = export::html::render(&input, &compared, options.title.as_deref())?;
    // Where the page and the SVG files go is checked before anything is written: a report
    // is written whole or not at all, and replaces only a report or charts headroom drew.
    crate::output_dir::claim_file(out, "-o", Made::Report)?;
    let svg_paths: Vec<PathBuf> = match &options.svg_dir {
        Some(dir) => {
            if dir.exists() && !dir.is_dir() {
                return Err(crate::usage::UsageError::new(format!(
                    "--svg {} is a file: give a directory for the charts' SVG files",
                    dir.display()
                ))
                .into());
            }
            let paths: Vec<PathBuf> = charts
                .iter()
                .map(|placed| dir.join(format!("{}.svg", placed.chart.id)))
                .collect();
            for path in &paths {
                crate::output_dir::claim_file(path, "--svg", Made::Chart)?;
            }
            paths
        }
        None => Vec::new(),
    };
    if let Some(dir) = &options.svg_dir {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    fs::write(out, html).with_context(|| format!("writing {}", out.display()))?;
    for (placed, path) in charts.iter().zip(&svg_paths) {
        let svg = format!("{}\n{}", crate::output_dir::SVG_MARK, placed.svg);
        fs::write(path, svg).with_context(|| format!("writing {}", path.display()))?;
    }
    let svgs = svg_paths;
    Ok(Written {
        html: out.to_path_buf(),
        svgs,
        charts: charts.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{capacity_fixture, run_fixture};

    #[test]
    fn a_report_is_written_with_each_chart_as_its_own_svg() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("deeper/report.html");
        let options = ReportOptions {
            title: Some("Two directories".into()),
            svg_dir: Some(dir.path().join("svg")),
            ..ReportOptions::default()
        };
        let written =
            write_report_with(&[capacity_fixture(), run_fixture()], &out, &options).unwrap();
        let html = fs::read_to_string(&out).unwrap();
        assert!(html.contains("<h1>Two directories</h1>"));
        assert_eq!(written.charts, html.matches("<figure").count());
        assert_eq!(written.svgs.len(), written.charts);
        let mut names: Vec<String> = written
            .svgs
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names[0], "01-sla-vs-rate-p99.svg");
        names.dedup();
        assert_eq!(names.len(), written.charts);
        for path in &written.svgs {
            let svg = fs::read_to_string(path).unwrap();
            // A standalone SVG file needs its namespace; headroom's mark comes first, so
            // that a later --svg into the same folder knows the file as its own.
            let svg = svg
                .strip_prefix(crate::output_dir::SVG_MARK)
                .expect("the mark first");
            assert!(svg.starts_with("\n<svg "), "{}", path.display());
            assert!(svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
            assert!(svg.trim_end().ends_with("</svg>"));
        }

        write_report(&[run_fixture()], &dir.path().join("plain.html")).unwrap();

        // --svg naming a file is refused before the page is written.
        let file = dir.path().join("a-file");
        fs::write(&file, "x").unwrap();
        let options = ReportOptions {
            svg_dir: Some(file),
            ..ReportOptions::default()
        };
        let page = dir.path().join("not-written.html");
        let e = write_report_with(&[run_fixture()], &page, &options).unwrap_err();
        assert!(e.to_string().contains("is a file"), "{e}");
        assert!(!page.exists(), "nothing half-written");
        assert!(dir.path().join("plain.html").exists());
        assert!(write_report(&[], &dir.path().join("none.html")).is_err());
    }

    #[test]
    fn a_report_replaces_only_a_report_and_charts_headroom_drew() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        crate::report::export::html::tests::copy_dir(&run_fixture(), &run);
        let svg = dir.path().join("svg");
        let options = ReportOptions {
            svg_dir: Some(svg.clone()),
            ..ReportOptions::default()
        };
        let page = run.join("report.html");
        let first = write_report_with(std::slice::from_ref(&run), &page, &options).unwrap();
        // Again: its own page and charts are replaced.
        write_report_with(std::slice::from_ref(&run), &page, &options).unwrap();
        // The run's own files are not a report: refused, and left as they were.
        for name in ["config.json", "summary.json"] {
            let before = fs::read(run.join(name)).unwrap();
            let e = write_report(std::slice::from_ref(&run), &run.join(name)).unwrap_err();
            assert!(
                e.to_string().contains("is not a report headroom wrote"),
                "{e}"
            );
            assert_eq!(fs::read(run.join(name)).unwrap(), before, "{name}");
        }
        // A chart someone else drew under a chart's name: nothing is written.
        fs::write(&first.svgs[1], "<svg>mine</svg>").unwrap();
        fs::remove_file(&page).unwrap();
        let e = write_report_with(std::slice::from_ref(&run), &page, &options).unwrap_err();
        assert!(
            e.to_string().contains("is not a chart headroom wrote"),
            "{e}"
        );
        assert!(!page.exists(), "nothing half-written");
        assert_eq!(
            fs::read_to_string(&first.svgs[1]).unwrap(),
            "<svg>mine</svg>"
        );
    }
}
