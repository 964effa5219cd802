//! The figures of one run: [`TablesRecording`] reads them before the measured run and after
//! it and writes server-tables.json, and with `--server-stats-every` starts a [`Sampler`]
//! that reads them over CQL every few seconds into server-samples.jsonl.
//!
//! The sampler lives here, beside the reader it calls, rather than in `server_samples`
//! (which reads the samples back and sums them up, and re-exports these names): so
//! `server_samples` depends on this module and this module does not depend on it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use scylla::client::session::Session;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::cluster::LocalNodes;
use crate::workload::any::AnyWorkload;
use crate::workload::WorkloadConfig;

use super::cql::TablesReader;
use super::model::{write, ServerSample, ServerTablesFile};
use crate::catalogue::SERVER_SAMPLES_JSONL;

/// The figures of one run: read once before the measured run ([`TablesRecording::begin`])
/// and once after ([`TablesRecording::end`]).
pub struct TablesRecording {
    reader: Option<Arc<TablesReader>>,
    file: ServerTablesFile,
    sampler: Option<Sampler>,
}

impl TablesRecording {
    /// Reads the "before" figures of the table `workload` loads, over `session`, with
    /// nodetool's for the run's `local` nodes when `nodetool` is true. Writes
    /// server-tables.json into `out` at once, so the before figures survive a run that never
    /// ends cleanly.
    pub async fn begin(
        session: Arc<Session>,
        workload: &WorkloadConfig,
        local: &LocalNodes,
        nodetool: bool,
        out: &Path,
    ) -> TablesRecording {
        let mut file = ServerTablesFile {
            keyspace: workload.keyspace.clone(),
            table: String::new(),
            before: None,
            after: None,
            notes: Vec::new(),
            samples_every_s: None,
            samples: 0,
        };
        let reader = match AnyWorkload::table_of(workload) {
            Ok(table) => {
                file.table = table.clone();
                let nodes = if nodetool { local.nodes() } else { &[] };
                Some(Arc::new(TablesReader::new(
                    session,
                    &workload.keyspace,
                    &table,
                    nodes,
                )))
            }
            Err(e) => {
                file.notes.push(format!(
                    "the workload's table is not known, nothing read: {e}"
                ));
                None
            }
        };
        if let Some(reader) = &reader {
            file.before = Some(reader.snapshot(&mut file.notes).await);
        }
        write(out, &file);
        TablesRecording {
            reader,
            file,
            sampler: None,
        }
    }

    /// Reads the figures over CQL every `every` from the run's start `t0` until
    /// [`TablesRecording::end`], into `out`/server-samples.jsonl (see [`Sampler`]).
    pub fn sample_every(
        &mut self,
        every: Duration,
        t0: tokio::time::Instant,
        started_at: SystemTime,
        out: &Path,
    ) {
        if let Some(reader) = &self.reader {
            self.file.samples_every_s = Some(every.as_secs_f64());
            self.sampler = Some(Sampler::start(reader.clone(), every, t0, started_at, out));
        }
    }

    /// Stops the readings during the run, reads the "after" figures and writes
    /// server-tables.json again.
    pub async fn end(mut self, out: &Path) -> ServerTablesFile {
        if let Some(sampler) = self.sampler.take() {
            let end = sampler.finish().await;
            self.file.samples = end.samples;
            self.file.notes.extend(end.notes);
        }
        if let Some(reader) = &self.reader {
            self.file.after = Some(reader.snapshot(&mut self.file.notes).await);
        }
        write(out, &self.file);
        self.file
    }
}

/// The shortest period between readings.
pub const MIN_EVERY: Duration = Duration::from_secs(1);

/// Readings taken in the background until [`Sampler::finish`].
pub struct Sampler {
    stop: watch::Sender<bool>,
    task: JoinHandle<SamplingEnd>,
}

/// What a sampler did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SamplingEnd {
    /// Readings written.
    pub samples: u64,
    /// Failures to write the file (reading failures are in each sample's notes).
    pub notes: Vec<String>,
}

impl Sampler {
    /// Reads every `every` from `t0` (the run's start) on, appending each reading to
    /// `out`/server-samples.jsonl. A reading still going at the next due time delays it (no
    /// catching up: readings never overlap).
    pub fn start(
        reader: Arc<TablesReader>,
        every: Duration,
        t0: tokio::time::Instant,
        started_at: SystemTime,
        out: &Path,
    ) -> Sampler {
        let every = every.max(MIN_EVERY);
        let (stop, mut stopped) = watch::channel(false);
        let path: PathBuf = out.join(SERVER_SAMPLES_JSONL);
        let task = tokio::spawn(async move {
            let mut end = SamplingEnd::default();
            let mut file = match std::fs::File::create(&path) {
                Ok(f) => f,
                Err(e) => {
                    end.notes
                        .push(format!("{} could not be created: {e}", path.display()));
                    return end;
                }
            };
            let mut due = t0 + every;
            loop {
                tokio::select! {
                    _ = tokio::time::sleep_until(due) => {}
                    _ = stopped.changed() => break,
                }
                let at = tokio::time::Instant::now();
                let at_s = at.duration_since(t0).as_secs_f64();
                let taken_at = humantime::format_rfc3339_millis(started_at + at.duration_since(t0))
                    .to_string();
                let mut notes = Vec::new();
                // A reading the end of the run interrupts is dropped.
                let nodes = tokio::select! {
                    nodes = reader.cql_figures(&mut notes) => nodes,
                    _ = stopped.changed() => break,
                };
                let sample = ServerSample {
                    at_s,
                    taken_at,
                    nodes,
                    notes,
                };
                let line = serde_json::to_string(&sample).expect("samples serialize");
                if let Err(e) = writeln!(file, "{line}") {
                    end.notes
                        .push(format!("{} could not be written: {e}", path.display()));
                    break;
                }
                end.samples += 1;
                while due <= tokio::time::Instant::now() {
                    due += every;
                }
            }
            end
        });
        Sampler { stop, task }
    }

    /// Stops the readings (one in progress is dropped) and says what was written.
    pub async fn finish(self) -> SamplingEnd {
        let _ = self.stop.send(true);
        self.task.await.unwrap_or_else(|e| SamplingEnd {
            samples: 0,
            notes: vec![format!("the server readings stopped: {e}")],
        })
    }
}
