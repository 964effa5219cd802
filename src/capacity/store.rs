//! A capacity search's directory: the settings it was started with (`search.json`), its
//! records (`capacity.jsonl`, one JSON line per finished run, fsynced before the search goes
//! on) and a summary rewritten after every run (`capacity.json`, replaced atomically).
//!
//! A crash can leave at most a torn last line in `capacity.jsonl`; resuming drops it with a
//! warning, and the run it described is done again.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::record::Record;
use super::search::Outcome;
use crate::catalogue::{CAPACITY_JSON, CAPACITY_JSONL, PARTIAL, PROBE, SEARCH_JSON, TRIALS};

/// Where a search stands, as the summary says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Runs are still going on.
    Running,
    /// The search is over.
    Complete,
    /// Stopped before the end (Ctrl-C); `--resume` continues it.
    Interrupted,
    /// Stopped at a client-bound trial: the client, not the server, limited it, so the
    /// search has no capacity to report (see `Outcome::invalid`).
    Invalid,
    /// Stopped by an error (say, the cluster could not be reached); `error` says which.
    /// `--resume` tries again once the cause is fixed.
    Failed,
}

/// The contents of `capacity.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Where the search stands.
    pub status: Status,
    /// The settings the search was started with, as stored in `search.json`.
    pub config: serde_json::Value,
    /// What the records say.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// When the summary was written (RFC 3339).
    pub updated_at: String,
    /// The error that stopped a failed search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// An interval search's bounds, what they rest on and its goal; `capacity_per_s` is then
    /// the lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<IntervalSummary>,
}

/// What capacity.json says of an interval search (decision 0019).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalSummary {
    /// The lower bound, per second (`None`: none confirmed).
    pub lower_bound_per_s: Option<f64>,
    /// The upper bound, per second (`None`: none confirmed).
    pub upper_bound_per_s: Option<f64>,
    /// Where the monotone fit crosses the exceed ratio, between the bounds.
    pub estimate_per_s: Option<f64>,
    /// The probability that the bounds hold the capacity.
    pub confidence: f64,
    /// The goal: the exceed ratio, the width asked for, windows per full trial, the
    /// correlation assumed between windows of a trial.
    pub goal: super::interval::IntervalGoal,
    /// The bounds and the windows each rests on.
    pub evidence: super::interval::Interval,
    /// Seconds of load spent: every trial's warmup and measured part, and the probe's.
    pub load_time_s: f64,
    /// `interval`, as decision 0019 describes it.
    pub method: String,
}

/// A capacity search's directory, with its records in memory.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    config: serde_json::Value,
    records: Vec<Record>,
    file: File,
    /// The goal of an interval search, for its summary.
    interval: Option<super::interval::IntervalGoal>,
}

impl Store {
    /// Starts a search in `dir` (created if needed), storing `config` as `search.json`.
    /// Fails when the directory already holds a search's records.
    pub fn create(dir: &Path, config: serde_json::Value) -> anyhow::Result<Store> {
        let records_path = dir.join(CAPACITY_JSONL);
        let exists = || {
            anyhow::anyhow!(
                "{} already holds a capacity search ({CAPACITY_JSONL}): pass --resume {} to \
                 continue it, or another --out",
                dir.display(),
                dir.display()
            )
        };
        if records_path.exists() {
            return Err(exists());
        }
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let text = serde_json::to_string_pretty(&config).context("encoding the settings")?;
        write_atomically(&dir.join(SEARCH_JSON), text.as_bytes())?;
        let file = match OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&records_path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => return Err(exists()),
            Err(e) => {
                return Err(e).with_context(|| format!("creating {}", records_path.display()))
            }
        };
        sync_dir(dir)?;
        Ok(Store {
            dir: dir.to_path_buf(),
            config,
            records: Vec::new(),
            file,
            interval: None,
        })
    }

    /// Reopens the search in `dir`: reads its records back and returns the stored settings,
    /// for the caller to compare with its own. A torn last line of `capacity.jsonl` (a crash
    /// while it was written) is dropped from the file, with a warning on stderr; any other
    /// unreadable line is an error. So are records that contradict the directory: two of
    /// one trial, or a finished trial or probe on disk with no record (the file cut short,
    /// emptied, missing or edited), which the search would otherwise run again over its
    /// results. Nothing is changed before these checks pass.
    pub fn resume(dir: &Path) -> anyhow::Result<(Store, serde_json::Value)> {
        let config_path = dir.join(SEARCH_JSON);
        let text =
            match crate::usage::read_bounded_text(&config_path, crate::usage::MAX_INPUT_FILE_BYTES)
            {
                Ok(text) => text,
                Err(e) if e.kind() == ErrorKind::NotFound => bail!(
                    "{} holds no capacity search to resume: {SEARCH_JSON} is missing",
                    dir.display()
                ),
                Err(e) => {
                    return Err(e).with_context(|| format!("reading {}", config_path.display()))
                }
            };
        let config: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("reading {}", config_path.display()))?;

        let records_path = dir.join(CAPACITY_JSONL);
        let read = read_records(&records_path)?;
        check_records(dir, &read, read.missing)?;
        if let Some(torn) = &read.torn {
            torn.cut(&records_path)?;
            eprintln!("Warning: {}", torn.warning(&records_path));
        }
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&records_path)
            .with_context(|| format!("opening {}", records_path.display()))?;
        let store = Store {
            dir: dir.to_path_buf(),
            config: config.clone(),
            records: read.records,
            file,
            interval: None,
        };
        Ok((store, config))
    }

    /// Adds a record: one JSON line, written, flushed and fsynced before this returns.
    pub fn append(&mut self, record: Record) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(&record).context("encoding a record")?;
        line.push('\n');
        let path = self.dir.join(CAPACITY_JSONL);
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .and_then(|()| self.file.sync_data())
            .with_context(|| format!("writing {}", path.display()))?;
        self.records.push(record);
        Ok(())
    }

    /// Makes the summary an interval search's, with this goal.
    pub fn set_interval(&mut self, goal: Option<super::interval::IntervalGoal>) {
        self.interval = goal;
    }

    /// The records so far, in the order they were written.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The directory of the search.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The settings the search was started with.
    pub fn config(&self) -> &serde_json::Value {
        &self.config
    }

    /// Writes `capacity.json` atomically (a reader sees the old or the new summary), each rate
    /// judged against `repeats` repeats.
    pub fn write_summary(&self, repeats: u32, status: Status) -> anyhow::Result<()> {
        self.write_summary_with(repeats, status, None)
    }

    /// [`Store::write_summary`] with the error that stopped a failed search.
    pub fn write_summary_with(
        &self,
        repeats: u32,
        status: Status,
        error: Option<String>,
    ) -> anyhow::Result<()> {
        let (outcome, found) = super::answer(&self.records, repeats, self.interval.as_ref());
        let interval = self
            .interval
            .zip(found)
            .map(|(goal, found)| IntervalSummary {
                lower_bound_per_s: found.lower.as_ref().map(|l| l.rate_per_s),
                upper_bound_per_s: found.upper.as_ref().map(|u| u.rate_per_s),
                estimate_per_s: found.estimate_per_s,
                confidence: goal.confidence,
                goal,
                evidence: found,
                load_time_s: super::interval::load_time_s(&self.records),
                method: "interval".to_string(),
            });
        let summary = Summary {
            status,
            config: self.config.clone(),
            outcome,
            updated_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            error,
            interval,
        };
        let mut text = serde_json::to_string_pretty(&summary).context("encoding the summary")?;
        text.push('\n');
        write_atomically(&self.dir.join(CAPACITY_JSON), text.as_bytes())
    }
}

/// What `capacity.jsonl` holds.
#[derive(Debug)]
struct ReadRecords {
    /// The whole records, in order, with the line each is on.
    records: Vec<Record>,
    /// Its line numbers, from 1, one per record.
    lines: Vec<usize>,
    /// A torn last line, to be cut.
    torn: Option<Torn>,
    /// Whether the file was missing.
    missing: bool,
}

/// A last line without its newline: a record cut short by a crash while it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Torn {
    /// Where the line starts: the length of the whole lines before it.
    at: u64,
    /// Its number, from 1.
    number: usize,
}

impl Torn {
    /// Cuts the line from the file.
    fn cut(self, path: &Path) -> anyhow::Result<()> {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.set_len(self.at)
            .and_then(|()| file.sync_all())
            .with_context(|| format!("truncating {}", path.display()))
    }

    fn warning(self, path: &Path) -> String {
        format!(
            "{}: line {} is incomplete (the search stopped while writing it); dropped it, its \
             run will be done again",
            path.display(),
            self.number
        )
    }
}

/// Reads `capacity.jsonl` without changing it: the whole records and a torn last line,
/// if any. A missing file holds no records.
fn read_records(path: &Path) -> anyhow::Result<ReadRecords> {
    let mut read = ReadRecords {
        records: Vec::new(),
        lines: Vec::new(),
        torn: None,
        missing: false,
    };
    let bytes = match crate::usage::read_bounded(path, crate::usage::MAX_INPUT_FILE_BYTES) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            read.missing = true;
            return Ok(read);
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut start = 0;
    let mut number = 0;
    while start < bytes.len() {
        number += 1;
        let newline = bytes[start..].iter().position(|&b| b == b'\n');
        let end = newline.map_or(bytes.len(), |i| start + i);
        let next = newline.map_or(bytes.len(), |_| end + 1);
        let line = &bytes[start..end];
        let parsed = std::str::from_utf8(line)
            .map_err(anyhow::Error::from)
            .and_then(|text| {
                if text.trim().is_empty() {
                    Ok(None)
                } else {
                    serde_json::from_str::<Record>(text)
                        .map(Some)
                        .map_err(anyhow::Error::from)
                }
            });
        let last = next >= bytes.len();
        match parsed {
            // A line is whole only with its newline: the record is written in one piece
            // ending with it, so a crash can only leave a piece without.
            Ok(record) if newline.is_some() => {
                if let Some(record) = record {
                    read.records.push(record);
                    read.lines.push(number);
                }
            }
            _ if last => {
                read.torn = Some(Torn {
                    at: start as u64,
                    number,
                });
                return Ok(read);
            }
            Ok(_) => unreachable!("only the last line can lack its newline"),
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "reading {}: line {number} is not a capacity record",
                        path.display()
                    )
                })
            }
        }
        start = next;
    }
    Ok(read)
}

/// Checks the records against each other and against the search's directory: each run is
/// recorded once, and every run under `trials/` or `probe/` that finished has its record.
/// `missing`: capacity.jsonl itself is absent. The errors are the user's to mend.
fn check_records(dir: &Path, read: &ReadRecords, missing: bool) -> anyhow::Result<()> {
    let mut seen: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for (record, &line) in read.records.iter().zip(&read.lines) {
        let run_dir = match record {
            Record::Probe(p) => p.dir.clone(),
            Record::Trial(t) => t.dir.clone(),
        };
        if let Some(first) = seen.insert(run_dir.clone(), line) {
            return Err(crate::usage::UsageError::new(format!(
                "{}: lines {first} and {line} record the same run ({run_dir}): the file was \
                 edited or damaged, and the search would count that run twice. Remove the \
                 extra line",
                dir.join(CAPACITY_JSONL).display(),
            ))
            .into());
        }
    }
    let mut unrecorded = Vec::new();
    let mut candidates = vec![dir.join(PROBE)];
    if let Ok(trials) = fs::read_dir(dir.join(TRIALS)) {
        candidates.extend(trials.filter_map(Result::ok).map(|e| e.path()));
    }
    for run_dir in candidates {
        let finished = crate::results::summary::RunSummary::read(&run_dir)
            .is_ok_and(|s| s.stop != crate::engine::StopReason::Interrupted);
        let relative = run_dir
            .strip_prefix(dir)
            .unwrap_or(&run_dir)
            .display()
            .to_string();
        if finished && !seen.contains_key(&relative) {
            unrecorded.push(relative);
        }
    }
    if unrecorded.is_empty() {
        return Ok(());
    }
    let what = if missing {
        format!("{CAPACITY_JSONL} is missing")
    } else {
        format!("{CAPACITY_JSONL} has no record of them (it was cut short, emptied or edited)")
    };
    unrecorded.sort();
    Err(crate::usage::UsageError::new(format!(
        "{} holds finished runs ({}{}) but {what}: headroom will not run them again over \
         their results. Restore {CAPACITY_JSONL}, or move those directories away to run them \
         again",
        dir.display(),
        unrecorded[..unrecorded.len().min(3)].join(", "),
        if unrecorded.len() > 3 {
            format!(", ... {} in all", unrecorded.len())
        } else {
            String::new()
        }
    ))
    .into())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(PARTIAL);
    let partial = PathBuf::from(partial);
    let mut file =
        File::create(&partial).with_context(|| format!("writing {}", partial.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", partial.display()))?;
    fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))
}

/// Makes a new entry in `dir` durable.
fn sync_dir(dir: &Path) -> anyhow::Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("syncing {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::search::outcome;
    use crate::capacity::sim::Simulated;

    fn config() -> serde_json::Value {
        serde_json::json!({"rates": "auto", "repeats": 2, "sla": ["p99.9<100ms"]})
    }

    #[test]
    fn a_second_search_in_the_same_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("search");
        Store::create(&path, config()).unwrap();
        let message = Store::create(&path, config()).unwrap_err().to_string();
        assert!(
            message.contains("already holds a capacity search"),
            "{message}"
        );
        assert!(
            message.contains(&format!("--resume {}", path.display())),
            "{message}"
        );
        assert!(message.contains("another --out"), "{message}");
    }

    #[test]
    fn records_and_settings_come_back_on_resume() {
        let dir = tempfile::tempdir().unwrap();
        let sim = Simulated::new(f64::INFINITY, 1500.0);
        let written = vec![sim.record(1000.0, 1), sim.record(2000.0, 1)];
        let mut store = Store::create(dir.path(), config()).unwrap();
        for record in &written {
            store.append(record.clone()).unwrap();
        }
        drop(store);
        let text = fs::read_to_string(dir.path().join(CAPACITY_JSONL)).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.ends_with('\n'));

        let (store, stored) = Store::resume(dir.path()).unwrap();
        assert_eq!(stored, config());
        assert_eq!(store.records(), &written[..]);
    }

    #[test]
    fn resume_needs_a_search() {
        let dir = tempfile::tempdir().unwrap();
        let message = Store::resume(dir.path()).unwrap_err().to_string();
        assert!(message.contains("holds no capacity search"), "{message}");
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_cut_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let sim = Simulated::new(f64::INFINITY, 1500.0);
        let mut store = Store::create(dir.path(), config()).unwrap();
        store.append(sim.record(1000.0, 1)).unwrap();
        drop(store);
        let path = dir.path().join(CAPACITY_JSONL);
        let whole = fs::read(&path).unwrap();
        let torn_bytes = |whole: &[u8]| {
            let mut torn = whole.to_vec();
            torn.extend_from_slice(br#"{"kind":"trial","rate_per_s":2000.0,"rep"#);
            torn
        };
        let torn = torn_bytes(&whole);
        fs::write(&path, &torn).unwrap();

        let read = read_records(&path).unwrap();
        assert_eq!(read.records, vec![sim.record(1000.0, 1)]);
        let cut = read.torn.unwrap();
        assert!(cut.warning(&path).contains("line 2 is incomplete"));
        assert_eq!(fs::read(&path).unwrap(), torn, "read, not changed");
        cut.cut(&path).unwrap();
        assert_eq!(fs::read(&path).unwrap(), whole);
        fs::write(&path, &torn).unwrap();

        // The resumed store appends after the last whole line.
        let (mut store, _) = Store::resume(dir.path()).unwrap();
        store.append(sim.record(2000.0, 1)).unwrap();
        let (store, _) = Store::resume(dir.path()).unwrap();
        assert_eq!(
            store.records(),
            &[sim.record(1000.0, 1), sim.record(2000.0, 1)]
        );
    }

    /// A search directory with one finished trial on disk, `trials/rate-1000-repeat-1`,
    /// and capacity.jsonl holding `lines`.
    fn search_with_a_finished_trial(lines: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        Store::create(dir.path(), config()).unwrap();
        let trial = dir.path().join("trials/rate-1000-repeat-1");
        fs::create_dir_all(&trial).unwrap();
        fs::copy(
            crate::fixtures::run_fixture().join("summary.json"),
            trial.join("summary.json"),
        )
        .unwrap();
        fs::write(dir.path().join(CAPACITY_JSONL), lines).unwrap();
        dir
    }

    #[test]
    fn a_damaged_record_file_is_refused_before_anything_changes() {
        let sim = Simulated::new(f64::INFINITY, 1500.0);
        let mut record = sim.record(1000.0, 1);
        if let Record::Trial(t) = &mut record {
            t.dir = "trials/rate-1000-repeat-1".into();
        }
        let line = serde_json::to_string(&record).unwrap();

        // Whole: it resumes.
        let whole = search_with_a_finished_trial(&format!("{line}\n"));
        let (store, _) = Store::resume(whole.path()).unwrap();
        assert_eq!(store.records().len(), 1);

        // The same trial twice would count twice in the table.
        let twice = search_with_a_finished_trial(&format!("{line}\n{line}\n"));
        let e = format!("{:#}", Store::resume(twice.path()).unwrap_err());
        assert!(e.contains("lines 1 and 2 record the same run"), "{e}");

        // Emptied, cut short or missing: the finished trial would be run again.
        for (name, text) in [
            ("emptied", Some("")),
            ("torn", Some(&line[..20])),
            ("missing", None),
        ] {
            let dir = search_with_a_finished_trial(text.unwrap_or(""));
            let path = dir.path().join(CAPACITY_JSONL);
            if text.is_none() {
                fs::remove_file(&path).unwrap();
            }
            let before = fs::read(&path).ok();
            let e = format!("{:#}", Store::resume(dir.path()).unwrap_err());
            assert!(
                e.contains("holds finished runs (trials/rate-1000-repeat-1)"),
                "{name}: {e}"
            );
            assert!(e.contains("will not run them again"), "{name}: {e}");
            assert_eq!(
                fs::read(&path).ok(),
                before,
                "{name}: the file is left as it was"
            );
            let is_usage = crate::usage::Blame::is_usage_error(
                Store::resume(dir.path())
                    .unwrap_err()
                    .downcast_ref::<crate::usage::UsageError>()
                    .unwrap(),
            );
            assert!(is_usage, "{name}");
        }
    }

    #[test]
    fn a_whole_record_without_its_newline_is_dropped_too() {
        let dir = tempfile::tempdir().unwrap();
        let sim = Simulated::new(f64::INFINITY, 1500.0);
        let path = dir.path().join(CAPACITY_JSONL);
        let line = serde_json::to_string(&sim.record(1000.0, 1)).unwrap();
        fs::write(&path, &line).unwrap();
        let read = read_records(&path).unwrap();
        assert!(read.records.is_empty());
        let torn = read.torn.unwrap();
        assert!(torn.warning(&path).contains("line 1 is incomplete"));
        torn.cut(&path).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"");
    }

    #[test]
    fn a_bad_line_before_the_last_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let sim = Simulated::new(f64::INFINITY, 1500.0);
        let path = dir.path().join(CAPACITY_JSONL);
        let line = serde_json::to_string(&sim.record(1000.0, 1)).unwrap();
        fs::write(&path, format!("{line}\nnot json\n{line}\n")).unwrap();
        let message = format!("{:#}", read_records(&path).unwrap_err());
        assert!(
            message.contains("line 2 is not a capacity record"),
            "{message}"
        );
    }

    #[test]
    fn the_summary_holds_status_settings_and_outcome() {
        let dir = tempfile::tempdir().unwrap();
        let sim = Simulated::new(f64::INFINITY, 1500.0);
        let mut store = Store::create(dir.path(), config()).unwrap();
        for (rate, repeat) in [(1000.0, 1), (1000.0, 2), (2000.0, 1)] {
            store.append(sim.record(rate, repeat)).unwrap();
        }
        store.write_summary(2, Status::Complete).unwrap();
        let text = fs::read_to_string(dir.path().join(CAPACITY_JSON)).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["status"], "complete");
        assert_eq!(json["config"], config());
        assert_eq!(json["capacity_per_s"], 1000.0);
        assert_eq!(json["highest_achieved_per_s"], 2000.0);
        assert_eq!(json["probe"], serde_json::Value::Null);
        assert_eq!(json["unstable"], serde_json::json!([]));
        assert_eq!(json["rows"][1]["verdict"], "fail");
        assert_eq!(json["rows"][0]["trials"].as_array().unwrap().len(), 2);
        let stamp = json["updated_at"].as_str().unwrap();
        assert!(humantime::parse_rfc3339(stamp).is_ok(), "{stamp}");
        let summary: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(summary.outcome, outcome(store.records(), 2));
        assert!(!dir.path().join("capacity.json.partial").exists());
    }
}
