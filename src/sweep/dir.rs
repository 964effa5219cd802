//! A concurrency sweep's directory read back, for the report.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

use super::SweepFile;
use crate::catalogue::SWEEP_JSON;
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
    /// sweep.json's settings as written, for a grid of every setting: a file of another
    /// version shows as it is, without the settings it did not have.
    pub settings_written: serde_json::Value,
    /// Steps whose run directory is missing.
    pub notes: Vec<String>,
}

impl SweepData {
    /// Reads a sweep's directory. The charts and the table come from sweep.json alone
    /// (each step's record holds its percentiles, from the sum of its measured
    /// histograms); a step's run directory that is missing becomes a note.
    pub fn load(dir: &Path) -> anyhow::Result<SweepData> {
        /// The settings alone, untyped.
        #[derive(Deserialize)]
        struct Written {
            settings: serde_json::Value,
        }
        let path = dir.join(SWEEP_JSON);
        let text = crate::usage::read_input_file(&path, "the file")?;
        let file: SweepFile =
            serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
        let Written {
            settings: settings_written,
        } = serde_json::from_str(&text)?;
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
            settings_written,
            notes,
        })
    }
}
