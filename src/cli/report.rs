//! `headroom report`: the HTML page of run, search and sweep directories.

use std::path::PathBuf;

use clap::Args;

/// `headroom report`
#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Run, capacity-search or sweep directories, shown in this order.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,

    /// The HTML file to write. [default: report.html in the first DIR]
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Also write each chart as its own SVG file into DIR, for slides.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,

    /// The page's title. [default: made from what the directories hold]
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
}
