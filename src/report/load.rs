//! What a report is made of: each directory given, read by its own kind's reader (a run's
//! in [`crate::results::run_dir`], a capacity search's in [`crate::capacity::dir`], a
//! sweep's in [`crate::sweep::dir`], a configuration matrix's in [`crate::compare::matrix`]).
//! A directory that is none of these is the user's mistake (exit code 2).

use std::path::{Path, PathBuf};

use anyhow::bail;

use crate::capacity::dir::SearchData;
use crate::catalogue::{
    CAPACITY_JSON, CONFIG_JSON, INTERVALS_CSV, MATRIX_JSON, SEARCH_JSON, SUMMARY_JSON, SWEEP_JSON,
};
use crate::compare::matrix::MatrixFile;
use crate::compare::CompareOptions;
use crate::results::dir_label;
use crate::results::run_dir::RunData;
use crate::sweep::dir::SweepData;

/// What the report is made of: each directory given, in the order given.
#[derive(Debug, Default)]
pub struct Input {
    /// Run directories given directly.
    pub runs: Vec<RunData>,
    /// Capacity searches (each a "configuration" in the charts that compare them).
    pub searches: Vec<SearchData>,
    /// Concurrency sweeps.
    pub sweeps: Vec<SweepData>,
    /// How the capacity searches are compared when there are several.
    pub compare: CompareOptions,
}

impl Input {
    /// Reads every directory: a configuration matrix's searches when it holds matrix.json,
    /// a capacity search when it holds capacity.json or search.json,
    /// a run when it holds summary.json, config.json or intervals.csv. Fails for a directory
    /// that is neither, naming it.
    pub fn load(dirs: &[PathBuf]) -> anyhow::Result<Input> {
        let mut input = Input::default();
        for dir in dirs {
            // What a directory holds is the user's input: a directory that cannot be read as
            // what it claims to be is a usage error (exit code 2).
            input
                .load_dir(dir)
                .map_err(|e| crate::usage::UsageError::new(format!("{e:#}")))?;
        }
        Ok(input)
    }

    fn load_dir(&mut self, dir: &Path) -> anyhow::Result<()> {
        let input = self;
        {
            if !dir.is_dir() {
                bail!("{} is not a directory", dir.display());
            }
            if dir.join(MATRIX_JSON).exists() {
                // A configuration matrix: each configuration's search, compared as it asked.
                let matrix = MatrixFile::load(dir)?;
                for search in matrix.search_dirs(dir) {
                    input.searches.push(SearchData::load(&search)?);
                }
                input.compare = matrix.compare;
            } else if dir.join(SWEEP_JSON).exists() {
                input.sweeps.push(SweepData::load(dir)?);
            } else if dir.join(CAPACITY_JSON).exists() || dir.join(SEARCH_JSON).exists() {
                input.searches.push(SearchData::load(dir)?);
            } else if [SUMMARY_JSON, CONFIG_JSON, INTERVALS_CSV]
                .iter()
                .any(|f| dir.join(f).exists())
            {
                let run = RunData::load(dir, dir_label(dir));
                if !run.holds_anything() {
                    bail!(
                        "{} holds nothing headroom can read as a run: {}",
                        dir.display(),
                        run.notes.join(" ")
                    );
                }
                input.runs.push(run);
            } else {
                bail!(
                    "{} is neither a run directory (summary.json, config.json, intervals.csv), \
                     a capacity search (capacity.json, search.json) nor a sweep (sweep.json)",
                    dir.display()
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::fs;

    use super::*;
    use crate::fixtures::sweep_fixture;
    use crate::results::summary::RunSummary;

    #[test]
    fn a_sweep_reads_from_its_sweep_json() {
        let input = Input::load(&[sweep_fixture()]).unwrap();
        assert!(input.runs.is_empty() && input.searches.is_empty());
        let sweep = &input.sweeps[0];
        assert_eq!(sweep.label, "sweep");
        assert!(sweep.notes.is_empty(), "{:?}", sweep.notes);
        assert_eq!(sweep.file.workload, "keyvalue");
        assert_eq!(sweep.file.status, crate::sweep::SweepStatus::Completed);
        let concurrencies: Vec<usize> = sweep.file.steps.iter().map(|s| s.concurrency).collect();
        assert_eq!(concurrencies, [2, 3, 5, 7]);
        // Each record holds what its step's own summary says.
        for step in &sweep.file.steps {
            let summary: RunSummary = serde_json::from_str(
                &fs::read_to_string(sweep.dir.join(&step.dir).join("summary.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(summary.achieved_rate_per_s, step.achieved_per_s);
            assert_eq!(summary.ops[0].requests, step.requests);
            assert_eq!(summary.ops[0].service_time.p99_ms, step.service_time.p99_ms);
        }

        // A step directory that went missing is a note, not an error.
        let dir = tempfile::tempdir().unwrap();
        fs::copy(
            sweep_fixture().join(SWEEP_JSON),
            dir.path().join(SWEEP_JSON),
        )
        .unwrap();
        let torn = SweepData::load(dir.path()).unwrap();
        assert_eq!(torn.notes.len(), 4, "{:?}", torn.notes);
        assert!(torn.notes[0].contains("steps/concurrency-2"));
    }

    #[test]
    fn a_directory_with_nothing_to_show_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = Input::load(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(
            error.to_string().contains("is neither a run directory"),
            "{error}"
        );
        let missing = dir.path().join("missing");
        let error = Input::load(&[missing]).unwrap_err();
        assert!(error.to_string().contains("is not a directory"), "{error}");
        assert!(error.downcast_ref::<crate::usage::UsageError>().is_some());

        // Files named as a run's, holding nothing readable: no page, a usage error naming
        // what could not be read.
        for (name, bytes) in [
            ("summary.json", &b"\x00\xff garbage"[..]),
            ("config.json", b"{not json"),
            ("intervals.csv", b"\xfe\xff"),
            ("histograms.hlog", b"#[random]\nnonsense\n"),
        ] {
            fs::write(dir.path().join(name), bytes).unwrap();
        }
        let error = Input::load(&[dir.path().to_path_buf()]).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("holds nothing headroom can read as a run"),
            "{text}"
        );
        assert!(text.contains("config.json could not be read"), "{text}");
        assert!(error.downcast_ref::<crate::usage::UsageError>().is_some());
    }
}
