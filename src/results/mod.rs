//! What a run directory holds, typed: each file's format, its writer beside its reader.
//!
//! - [`hlog`]: HdrHistogram interval logs (histograms.hlog, pauses.hlog), one compressed
//!   histogram per interval and tag, read by HistogramLogProcessor and HistogramLogAnalyzer.
//! - [`hgrm`]: percentile distribution text (`<op>.hgrm`), as Java's
//!   `outputPercentileDistribution` prints it, read by the HdrHistogram plotter.
//! - [`intervals_csv`]: intervals.csv, one row per interval, phase and operation type, and
//!   one per judged SLA window; [`interval_files`] writes an engine interval into it and
//!   histograms.hlog.
//! - [`summary`]: summary.json, a run's totals and verdicts.
//! - [`config`]: config.json, a run's settings.
//! - [`pauses`]: pauses.json and pauses.hlog, the server pauses of a run's nodes.
//! - [`run_dir`]: a whole run directory read back, for the report and the comparisons.
//! - vectors.json ([`crate::catalogue::VECTORS_JSON`]): a vector workload's vectors and how their exact
//!   neighbours were found (`workload::vector::VectorFacts`).
//!
//! This layer sits below the run, the searches and the report: it knows the types it
//! stores (the engine's, the SLA's, the metrics') and nothing of who writes or reads them.

pub mod config;
pub mod hgrm;
pub mod hlog;
pub mod interval_files;
pub mod intervals_csv;
pub mod pauses;
pub mod run_dir;
pub mod summary;

mod java_format;

use std::fs;
use std::path::Path;

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Reads a JSON file of a run directory, refusing one over the size headroom reads.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = crate::usage::read_input_file(path, "the file")?;
    serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
}

/// Writes a value as pretty JSON with a final newline.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value).expect("serializable");
    fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

/// A directory's name, for labels: the last component of its canonical path.
pub fn dir_label(dir: &Path) -> String {
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}
