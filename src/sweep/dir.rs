//! A concurrency sweep's directory read back, for the report.

use std::path::{Path, PathBuf};

use super::SweepFile;
use crate::results::dir_label;

/// A concurrency sweep's directory (see [`crate::sweep`]).
#[derive(Debug, Clone)]
pub struct SweepData {
    /// The directory.
    pub dir: PathBuf,
    /// Its name in headings: the directory's name.
    pub label: String,
    /// sweep.json: the settings, the steps and why the sweep stopped.
    pub file: SweepFile,
    /// Steps whose run directory is missing.
    pub notes: Vec<String>,
}

impl SweepData {
    /// Reads a sweep's directory. The charts and the table come from sweep.json alone
    /// (each step's record holds its percentiles, from the sum of its measured
    /// histograms); a step's run directory that is missing becomes a note.
    pub fn load(dir: &Path) -> anyhow::Result<SweepData> {
        let file = SweepFile::read(dir)?;
        let notes = file
            .steps
            .iter()
            .filter(|s| !dir.join(&s.dir).is_dir() && s.end != crate::sweep::StepEnd::Failed)
            .map(|s| {
                format!(
                    "The run directory of the step at concurrency {}, {}, is missing.",
                    s.concurrency, s.dir
                )
            })
            .collect();
        Ok(SweepData {
            dir: dir.to_path_buf(),
            label: dir_label(dir),
            file,
            notes,
        })
    }
}
