//! Stop-the-world pauses of a node's JVM, read from its GC log.
//!
//! The nodes headroom starts on Java 9 and later log with
//! `-Xlog:gc*,safepoint:file=<node>/logs/gc.log:time,uptime,level,tags` (see
//! [`super::render`]): every line carries the wall-clock time, the JVM's uptime, the level and
//! the tags, e.g.
//!
//! ```text
//! [2026-11-22T07:03:57.631+0000][3.050s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 52M->10M(1024M) 31.938ms
//! [2026-11-22T07:03:57.634+0000][3.052s][info][safepoint   ] Safepoint "G1CollectForAllocation", Time since last: 1228815594 ns, Reaching safepoint: 6401 ns, Cleanup: 152713 ns, At safepoint: 34637699 ns, Total: 34796813 ns
//! ```
//!
//! Two kinds of line matter:
//!
//! - **GC pause lines** (tag `gc` or `gc,phases`): `GC(n) Pause <name> [heap before->after]
//!   <duration>ms`. G1 and Parallel log `Pause Young (...)`, `Pause Full (...)`,
//!   `Pause Remark`, `Pause Cleanup`; ZGC `Pause Mark Start`, `Pause Mark End`,
//!   `Pause Relocate Start`; Shenandoah `Pause Init Mark (...)`, `Pause Final Mark (...)`,
//!   `Pause Init Update Refs`, `Pause Final Update Refs`. The duration is the collector's own
//!   work. Shenandoah's `gc,stats` summary (`Pause Init Mark (G) 3021 us`) has no `GC(n)`
//!   and is not a pause.
//! - **Safepoint lines** (tag `safepoint`, Java 17's format): `Safepoint "<VM operation>", ...,
//!   Reaching safepoint: N ns, ..., Total: N ns`, written when the safepoint ends. Every
//!   stop-the-world pause, GC or not (deoptimisation, `ICBufferFull`, the periodic `Cleanup`,
//!   class unloading), runs inside one.
//!
//! **How GC pauses and safepoints relate.** A GC pause runs inside a safepoint, so adding both
//! would count the same stopped time twice. The safepoint's `Total` (time to bring every thread
//! to the safepoint, plus the operation) is the time the application was stopped, and it is
//! never shorter than the GC's own figure (seen in the fixtures: a G1 young pause of 31.9 ms in
//! a safepoint of 34.8 ms; a ZGC `Pause Mark Start` of 0.009 ms in one of 0.22 ms). So:
//!
//! - each safepoint line is one [`PauseEvent`], its duration the `Total`;
//! - the GC pause lines logged since the previous safepoint line whose uptime falls inside
//!   that safepoint (between its end minus `Total` and its end, give or take the 1 ms
//!   resolution of the uptime stamp) become its [`PauseEvent::gc`] causes; Parallel can run a
//!   young and a full collection in one safepoint, and both are kept;
//! - a GC pause line that no safepoint line claims (a log without the `safepoint` tag, or one
//!   cut between the two lines) becomes an event of its own with the GC's duration, the best
//!   figure the log has.
//!
//! A node's log rotates (`filecount=10,filesize=20M`): the JVM renames the full `gc.log` to
//! `gc.log.<k>`, `k` counting up and wrapping, and also moves an existing `gc.log` aside when
//! it starts. File numbers therefore do not give the order; [`PauseLog::read_dir`] orders the
//! files by the first wall-clock stamp in each. A JVM restart shows as the uptime going back
//! while the JVM's start (wall clock minus uptime) moves on; lines of different JVM threads
//! can come a few milliseconds out of order, their start unmoved.
//!
//! Only Java 17's lines were checked against real logs (the fixtures). Not parsed: Java 8's
//! `-Xloggc` format (rejected with [`PauseLogError::LegacyFormat`]) and the safepoint lines of
//! older releases such as Java 11 (`Total time for which application threads were stopped`),
//! which are counted in [`PauseLog::unrecognised_lines`] so that a caller can warn; Java 21's
//! generational ZGC (`GC(n) Y: Pause Mark Start`) gives safepoint events without their GC
//! names.
//!
//! The syntax of one line (its decorations, a GC pause's message, a safepoint's message) is
//! read in `line`, statelessly; this file keeps what spans lines: pairing GC pauses with
//! their safepoints across rotated files and JVM restarts, the files, and the queries over
//! the events. The collectors differ only in the names of their pauses, which pass through
//! as logged, so there is no per-collector code to separate.

mod line;

use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use thiserror::Error;

use super::NodeSpec;
use crate::stats::new_histogram;
use line::{parse_gc_pause, parse_line, parse_safepoint};

/// Slack for comparing uptime stamps, which the JVM prints to the millisecond.
const UPTIME_RESOLUTION_NS: u64 = 2_000_000;

/// How far the JVM's start (wall clock minus uptime) must move for lines to belong to another
/// JVM run. Within one run it stays put to a few milliseconds; a restarted JVM starts at least
/// as much later as the old one ran, which for a Cassandra node is many seconds.
const RESTART_SHIFT: Duration = Duration::from_secs(1);

/// One GC pause as the collector reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcPause {
    /// The collection's number, `n` in `GC(n)`.
    pub gc_id: u64,
    /// The pause's name as logged, e.g. `Pause Young (Normal) (G1 Evacuation Pause)`.
    pub name: String,
    /// The collector's own duration of the pause.
    pub duration_ns: u64,
}

/// One stop-the-world pause of the application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PauseEvent {
    /// When the pause ended: the wall-clock stamp of the line that reports it (1 ms resolution).
    pub end: SystemTime,
    /// The JVM's uptime at that line (1 ms resolution).
    pub uptime: Duration,
    /// How long the application was stopped: the safepoint's `Total`, or the GC's duration for
    /// a GC pause that no safepoint line reports.
    pub duration_ns: u64,
    /// The safepoint's VM operation, e.g. `G1CollectForAllocation` or `ICBufferFull`; `None`
    /// for a GC pause without its safepoint line.
    pub operation: Option<String>,
    /// The part of [`duration_ns`](Self::duration_ns) spent bringing the threads to the
    /// safepoint, when the log says.
    pub reaching_ns: Option<u64>,
    /// The GC pauses that ran inside, in log order; empty for a safepoint without a GC.
    pub gc: Vec<GcPause>,
}

impl PauseEvent {
    /// When the pause began: [`end`](Self::end) minus the duration.
    pub fn start(&self) -> SystemTime {
        self.end - Duration::from_nanos(self.duration_ns)
    }

    /// Whether a garbage collection caused the pause.
    pub fn is_gc(&self) -> bool {
        !self.gc.is_empty()
    }

    /// What the pause was, for tables and charts: the GC pause names joined with ` + `, or the
    /// safepoint's VM operation when no GC ran in it.
    pub fn kind(&self) -> String {
        if self.gc.is_empty() {
            return self.operation.clone().unwrap_or_default();
        }
        let names: Vec<&str> = self.gc.iter().map(|g| g.name.as_str()).collect();
        names.join(" + ")
    }
}

/// Why a GC log could not be read.
#[derive(Debug, Error)]
pub enum PauseLogError {
    /// A file could not be read.
    #[error("reading {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// No `gc.log` in the directory.
    #[error(
        "no GC log in {}: expected gc.log (and gc.log.0, gc.log.1, ... once it rotated)",
        dir.display()
    )]
    NoLog {
        /// The directory searched.
        dir: PathBuf,
    },
    /// A line lacks the decorations the parser needs.
    #[error(
        "{}, line {line}: the line lacks the `{missing}` decoration; pauses need a log written \
         with -Xlog:gc*,safepoint:file=...:time,uptime,level,tags",
        path.display()
    )]
    MissingDecoration {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// `time`, `uptime` or `tags`.
        missing: &'static str,
    },
    /// A Java 8 log.
    #[error(
        "{} is a Java 8 GC log (-Xloggc); only the unified logging of Java 9 and later \
         (-Xlog:gc*,safepoint) is parsed",
        path.display()
    )]
    LegacyFormat {
        /// The file.
        path: PathBuf,
    },
}

/// The pauses of one node's JVM, from its GC log files.
#[derive(Debug, Clone, Default)]
pub struct PauseLog {
    /// The pauses in log order (which is time order within one JVM run).
    pub events: Vec<PauseEvent>,
    /// The files read, oldest first.
    pub files: Vec<PathBuf>,
    /// Lines tagged `safepoint` that are not Java 17's `Safepoint "..."` line. Not zero means
    /// the log comes from another Java and stopped time may be missing.
    pub unrecognised_lines: usize,
    /// How many JVM runs the files cover (1 unless the node restarted).
    pub jvm_runs: usize,
}

impl PauseLog {
    /// Reads the GC log of a node headroom started: [`NodeSpec::gc_log_path`] and the files
    /// it rotated into.
    pub fn read_node(node: &NodeSpec) -> Result<PauseLog, PauseLogError> {
        PauseLog::read_dir(&node.logs_dir())
    }

    /// Reads a node's logs directory: `gc.log` and its rotated files `gc.log.<k>`.
    pub fn read_dir(dir: &Path) -> Result<PauseLog, PauseLogError> {
        PauseLog::read_files(&log_files(dir)?)
    }

    /// Reads the files of a node's logs directory that were written to at or after `since`
    /// (by their modification time): a file last written before then holds no pause that
    /// ended after it. For a run's pauses, this spares reading up to ten full archives of
    /// earlier runs. When no file is that recent, the newest is read.
    pub fn read_dir_since(dir: &Path, since: SystemTime) -> Result<PauseLog, PauseLogError> {
        let mut files = log_files(dir)?;
        let modified = |path: &PathBuf| fs::metadata(path).and_then(|m| m.modified()).ok();
        let newest = files.iter().max_by_key(|p| modified(p)).cloned();
        files.retain(|p| modified(p).is_none_or(|m| m >= since));
        if files.is_empty() {
            files.extend(newest);
        }
        PauseLog::read_files(&files)
    }

    /// Reads log files of one node in any order: they are put in the order of the first
    /// wall-clock stamp in each (files without one first), then read line by line, so memory
    /// does not grow with the size of the logs.
    pub fn read_files(paths: &[PathBuf]) -> Result<PauseLog, PauseLogError> {
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            let mut first = None;
            for_each_line(path, open(path)?, |_, line| {
                first = parse_line(line).and_then(|d| d.time);
                Ok(first.is_none())
            })?;
            files.push((first, path.clone()));
        }
        files.sort();
        let mut parser = Parser::default();
        for (_, path) in &files {
            parser.file(path, open(path)?)?;
        }
        Ok(parser.finish(files.into_iter().map(|(_, p)| p).collect()))
    }

    /// Parses the text of one log file; `path` only names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<PauseLog, PauseLogError> {
        let mut parser = Parser::default();
        parser.file(path, text.as_bytes())?;
        Ok(parser.finish(vec![path.to_path_buf()]))
    }

    /// The pauses that ended in `[from, to)`.
    pub fn events_between(
        &self,
        from: SystemTime,
        to: SystemTime,
    ) -> impl Iterator<Item = &PauseEvent> {
        self.events
            .iter()
            .filter(move |e| e.end >= from && e.end < to)
    }

    /// The durations, in nanoseconds, of the pauses that ended in `[from, to)`.
    pub fn histogram(&self, from: SystemTime, to: SystemTime) -> Histogram<u64> {
        let mut histogram = new_histogram();
        for event in self.events_between(from, to) {
            histogram
                .record(event.duration_ns)
                .expect("the histogram grows to any value");
        }
        histogram
    }

    /// Stopped time per interval: element `i` is the time, in nanoseconds, that pauses
    /// stopped the application within `[from + i·interval, from + (i+1)·interval)`, up to
    /// `to` (the last interval may be shorter). A pause that spans a boundary is split
    /// between the intervals it covers.
    ///
    /// # Panics
    /// When `interval` is zero.
    pub fn timeline(&self, from: SystemTime, to: SystemTime, interval: Duration) -> Vec<u64> {
        assert!(
            !interval.is_zero(),
            "a timeline needs an interval above zero"
        );
        let span_ns = nanos_between(from, to);
        let step = interval.as_nanos() as u64;
        let count = span_ns.div_ceil(step) as usize;
        let mut stopped = vec![0u64; count];
        for event in &self.events {
            // Relative to `from`, clipped to the range.
            let start = signed_nanos(from, event.start()).clamp(0, span_ns as i128) as u64;
            let end = signed_nanos(from, event.end).clamp(0, span_ns as i128) as u64;
            let mut at = start;
            while at < end {
                let slot = (at / step) as usize;
                let slot_end = ((slot as u64 + 1) * step).min(end);
                stopped[slot] += slot_end - at;
                at = slot_end;
            }
        }
        stopped
    }

    /// The total time pauses stopped the application within `[from, to)`, in nanoseconds.
    pub fn stopped_ns(&self, from: SystemTime, to: SystemTime) -> u64 {
        let span = Duration::from_nanos(nanos_between(from, to).max(1));
        self.timeline(from, to, span).iter().sum()
    }
}

/// The GC log files of a node's logs directory: `gc.log` and `gc.log.<k>`, in no order.
pub fn log_files(dir: &Path) -> Result<Vec<PathBuf>, PauseLogError> {
    let entries = fs::read_dir(dir).map_err(|source| PauseLogError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| PauseLogError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let rotated = name
            .strip_prefix("gc.log.")
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
        if name == "gc.log" || rotated {
            files.push(entry.path());
        }
    }
    if files.is_empty() {
        return Err(PauseLogError::NoLog {
            dir: dir.to_path_buf(),
        });
    }
    Ok(files)
}

fn open(path: &Path) -> Result<BufReader<File>, PauseLogError> {
    File::open(path)
        .map(BufReader::new)
        .map_err(|source| PauseLogError::Io {
            path: path.to_path_buf(),
            source,
        })
}

/// Calls `f` with each line (number from 1, text without its line end) until it returns
/// `Ok(false)` or an error. A file cut by a crash can end mid character: bytes that are not
/// UTF-8 are replaced, the rest of the line is kept.
fn for_each_line(
    path: &Path,
    mut reader: impl BufRead,
    mut f: impl FnMut(usize, &str) -> Result<bool, PauseLogError>,
) -> Result<(), PauseLogError> {
    let mut buffer = Vec::new();
    let mut number = 0;
    loop {
        buffer.clear();
        let read = reader
            .read_until(b'\n', &mut buffer)
            .map_err(|source| PauseLogError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if read == 0 {
            return Ok(());
        }
        number += 1;
        let line = String::from_utf8_lossy(&buffer);
        if !f(number, line.trim_end_matches(['\n', '\r']))? {
            return Ok(());
        }
    }
}

/// `to − from` in nanoseconds, 0 when `to` is earlier.
fn nanos_between(from: SystemTime, to: SystemTime) -> u64 {
    to.duration_since(from).map_or(0, |d| d.as_nanos() as u64)
}

/// `at − from` in nanoseconds, negative when `at` is earlier.
fn signed_nanos(from: SystemTime, at: SystemTime) -> i128 {
    match at.duration_since(from) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// A GC pause waiting for the safepoint line that reports its stopped time.
#[derive(Debug)]
struct Pending {
    pause: GcPause,
    end: SystemTime,
    uptime: Duration,
}

/// Reads lines one file after another, carrying state across rotated files.
#[derive(Debug, Default)]
struct Parser {
    events: Vec<PauseEvent>,
    pending: Vec<Pending>,
    last_uptime: Option<Duration>,
    /// The wall-clock time the JVM of the last line started: its time minus its uptime.
    last_jvm_start: Option<SystemTime>,
    jvm_runs: usize,
    unrecognised_lines: usize,
}

impl Parser {
    fn file(&mut self, path: &Path, reader: impl BufRead) -> Result<(), PauseLogError> {
        let mut decorated_lines = 0usize;
        let mut legacy_lines = 0usize;
        for_each_line(path, reader, |number, line| {
            let Some(decorated) = parse_line(line) else {
                if line.contains(" secs]") || line.starts_with("Total time for which") {
                    legacy_lines += 1;
                }
                return Ok(true);
            };
            decorated_lines += 1;
            match (decorated.time, decorated.uptime, decorated.tags) {
                (Some(time), Some(uptime), Some(tags)) => {
                    self.line(time, uptime, tags, decorated.message);
                    Ok(true)
                }
                (time, uptime, _) => Err(PauseLogError::MissingDecoration {
                    path: path.to_path_buf(),
                    line: number,
                    missing: if time.is_none() {
                        "time"
                    } else if uptime.is_none() {
                        "uptime"
                    } else {
                        "tags"
                    },
                }),
            }
        })?;
        if decorated_lines == 0 && legacy_lines > 0 {
            return Err(PauseLogError::LegacyFormat {
                path: path.to_path_buf(),
            });
        }
        Ok(())
    }

    fn line(&mut self, time: SystemTime, uptime: Duration, tags: &str, message: &str) {
        // Uptime going back, and with it the JVM's start moving: the JVM started again. Lines
        // of different threads (the VM thread's safepoint line after a concurrent GC thread's)
        // can come out of order by several milliseconds of uptime; their JVM start stays put.
        let jvm_start = time.checked_sub(uptime).unwrap_or(time);
        let went_back = self
            .last_uptime
            .is_some_and(|last| uptime + Duration::from_nanos(UPTIME_RESOLUTION_NS) < last);
        let moved = self.last_jvm_start.is_some_and(|last| {
            let shift = jvm_start
                .duration_since(last)
                .unwrap_or_else(|e| e.duration());
            shift > RESTART_SHIFT
        });
        if self.last_uptime.is_none() || (went_back && moved) {
            self.flush_pending();
            self.jvm_runs += 1;
        }
        self.last_uptime = Some(uptime);
        self.last_jvm_start = Some(jvm_start);

        let first_tag = tags.split(',').next().unwrap_or("");
        if first_tag == "gc" {
            if let Some(pause) = parse_gc_pause(message) {
                self.pending.push(Pending {
                    pause,
                    end: time,
                    uptime,
                });
            }
        } else if tags == "safepoint" {
            match parse_safepoint(message) {
                Some((operation, reaching_ns, total_ns)) => {
                    self.safepoint(time, uptime, operation, reaching_ns, total_ns)
                }
                None => self.unrecognised_lines += 1,
            }
        }
    }

    fn safepoint(
        &mut self,
        end: SystemTime,
        uptime: Duration,
        operation: String,
        reaching_ns: Option<u64>,
        total_ns: u64,
    ) {
        let end_ns = uptime.as_nanos() as u64;
        let earliest_ns = end_ns.saturating_sub(total_ns + UPTIME_RESOLUTION_NS);
        let (inside, outside): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| {
                let at = p.uptime.as_nanos() as u64;
                at >= earliest_ns && at <= end_ns + UPTIME_RESOLUTION_NS
            });
        self.pending = outside;
        self.flush_pending();
        self.events.push(PauseEvent {
            end,
            uptime,
            duration_ns: total_ns,
            operation: Some(operation),
            reaching_ns,
            gc: inside.into_iter().map(|p| p.pause).collect(),
        });
    }

    /// GC pauses no safepoint line claimed: events of their own.
    fn flush_pending(&mut self) {
        for pending in self.pending.drain(..) {
            self.events.push(PauseEvent {
                end: pending.end,
                uptime: pending.uptime,
                duration_ns: pending.pause.duration_ns,
                operation: None,
                reaching_ns: None,
                gc: vec![pending.pause],
            });
        }
    }

    fn finish(mut self, files: Vec<PathBuf>) -> PauseLog {
        self.flush_pending();
        PauseLog {
            events: self.events,
            files,
            unrecognised_lines: self.unrecognised_lines,
            jvm_runs: self.jvm_runs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::line::parse_time;
    use super::*;
    use std::time::UNIX_EPOCH;

    /// Real logs of one node each, captured from `headroom cluster start --heap 1G --gc <gc>`
    /// on OpenJDK 17.0.15 and Cassandra 5.0.9 under 30 s of `headroom run keyvalue` at 3k/s.
    fn fixture(gc: &str) -> (PathBuf, String) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/gc")
            .join(format!("{gc}.log"));
        let text = fs::read_to_string(&path).unwrap();
        (path, text)
    }

    fn parse_fixture(gc: &str) -> PauseLog {
        let (path, text) = fixture(gc);
        PauseLog::parse(&path, &text).unwrap()
    }

    fn at(stamp: &str) -> SystemTime {
        parse_time(stamp).unwrap()
    }

    /// Counts read off each file with grep: safepoint lines, GC pause lines (`GC(n) Pause ...
    /// <d>ms`), and the sum of the safepoints' `Total`.
    #[test]
    fn every_safepoint_is_an_event_and_every_gc_pause_finds_its_safepoint() {
        for (gc, safepoints, gc_pauses, gc_events, total_ns) in [
            ("g1", 64, 14, 14, 1_001_843_547u64),
            ("parallel", 45, 9, 7, 924_992_518),
            ("zgc", 59, 15, 15, 1_333_458_218),
            ("shenandoah", 62, 20, 20, 375_393_751),
        ] {
            let log = parse_fixture(gc);
            assert_eq!(log.events.len(), safepoints, "{gc}");
            assert!(log.events.iter().all(|e| e.operation.is_some()), "{gc}");
            let inside: usize = log.events.iter().map(|e| e.gc.len()).sum();
            assert_eq!(inside, gc_pauses, "{gc}");
            assert_eq!(log.events.iter().filter(|e| e.is_gc()).count(), gc_events);
            let sum: u64 = log.events.iter().map(|e| e.duration_ns).sum();
            assert_eq!(sum, total_ns, "{gc}");
            assert_eq!((log.unrecognised_lines, log.jvm_runs), (0, 1), "{gc}");
            // A GC's stopped time is never shorter than the collector's own figure.
            for e in &log.events {
                let gc_ns: u64 = e.gc.iter().map(|g| g.duration_ns).sum();
                assert!(e.duration_ns + 1_000_000 >= gc_ns, "{gc}: {e:?}");
            }
        }
    }

    #[test]
    fn g1_young_and_remark_pauses() {
        let log = parse_fixture("g1");
        let young = log.events.iter().find(|e| e.is_gc()).unwrap();
        assert_eq!(young.end, at("2026-11-22T07:03:57.634+0000"));
        assert_eq!(young.uptime, Duration::from_millis(3052));
        assert_eq!(young.duration_ns, 34_796_813);
        assert_eq!(young.reaching_ns, Some(6_401));
        assert_eq!(young.operation.as_deref(), Some("G1CollectForAllocation"));
        assert_eq!(
            young.gc,
            vec![GcPause {
                gc_id: 0,
                name: "Pause Young (Normal) (G1 Evacuation Pause)".into(),
                duration_ns: 31_938_000,
            }]
        );
        assert_eq!(young.kind(), "Pause Young (Normal) (G1 Evacuation Pause)");
        assert_eq!(
            young.start(),
            at("2026-11-22T07:03:57.634+0000") - Duration::from_nanos(34_796_813)
        );

        let remark = log
            .events
            .iter()
            .find(|e| e.kind() == "Pause Remark")
            .unwrap();
        assert_eq!(remark.gc[0].gc_id, 2);
        assert_eq!(remark.gc[0].duration_ns, 4_736_000);
        assert_eq!(remark.duration_ns, 13_379_111);
        assert_eq!(remark.operation.as_deref(), Some("G1PauseRemark"));

        // The first event is the periodic cleanup safepoint, no GC in it.
        let first = &log.events[0];
        assert_eq!(first.kind(), "Cleanup");
        assert!(!first.is_gc());
        assert_eq!(first.duration_ns, 122_008);
        // The longest stop of this run was no GC: threads took 206 ms to reach a cleanup
        // safepoint on a busy machine.
        let longest = log.events.iter().max_by_key(|e| e.duration_ns).unwrap();
        assert_eq!(
            (longest.kind(), longest.duration_ns),
            ("Cleanup".into(), 281_443_464)
        );
        assert_eq!(longest.reaching_ns, Some(205_583_014));
    }

    #[test]
    fn parallel_runs_a_young_and_a_full_collection_in_one_safepoint() {
        let log = parse_fixture("parallel");
        let first = log.events.iter().find(|e| e.is_gc()).unwrap();
        assert_eq!(first.duration_ns, 95_444_910);
        assert_eq!(
            first.operation.as_deref(),
            Some("CollectForMetadataAllocation")
        );
        assert_eq!(
            first.kind(),
            "Pause Young (Metadata GC Threshold) + Pause Full (Metadata GC Threshold)"
        );
        let ids: Vec<(u64, u64)> = first.gc.iter().map(|g| (g.gc_id, g.duration_ns)).collect();
        assert_eq!(ids, vec![(0, 44_811_000), (1, 49_378_000)]);
        let failed = log
            .events
            .iter()
            .filter(|e| e.operation.as_deref() == Some("ParallelGCFailedAllocation"))
            .count();
        assert_eq!(failed, 5);
        let last = log.events.iter().rfind(|e| e.is_gc()).unwrap();
        assert_eq!(last.kind(), "Pause Young (Allocation Failure)");
        assert_eq!((last.gc[0].gc_id, last.gc[0].duration_ns), (8, 121_429_000));
        assert_eq!(last.duration_ns, 139_989_351);
    }

    #[test]
    fn zgc_pauses_are_logged_as_phases() {
        let log = parse_fixture("zgc");
        let kinds: Vec<String> = log
            .events
            .iter()
            .filter(|e| e.is_gc())
            .take(3)
            .map(PauseEvent::kind)
            .collect();
        assert_eq!(
            kinds,
            ["Pause Mark Start", "Pause Mark End", "Pause Relocate Start"]
        );
        let mark_start = log.events.iter().find(|e| e.is_gc()).unwrap();
        assert_eq!(mark_start.gc[0].duration_ns, 9_000);
        assert_eq!(mark_start.duration_ns, 222_108);
        assert_eq!(mark_start.operation.as_deref(), Some("ZMarkStart"));
        assert_eq!(mark_start.end, at("2026-11-22T07:05:04.558+0000"));
        assert_eq!(mark_start.uptime, Duration::from_millis(3884));
    }

    #[test]
    fn shenandoah_pauses_and_not_its_statistics_table() {
        let log = parse_fixture("shenandoah");
        let gc: Vec<&PauseEvent> = log.events.iter().filter(|e| e.is_gc()).collect();
        let first: Vec<(String, u64, u64)> = gc[..4]
            .iter()
            .map(|e| (e.kind(), e.gc[0].duration_ns, e.duration_ns))
            .collect();
        assert_eq!(
            first,
            vec![
                ("Pause Init Mark (unload classes)".into(), 110_000, 319_312),
                ("Pause Final Mark (unload classes)".into(), 194_000, 309_549),
                ("Pause Init Update Refs".into(), 25_000, 4_861_203),
                ("Pause Final Update Refs".into(), 147_000, 3_472_141),
            ]
        );
        assert_eq!(
            gc[0].operation.as_deref(),
            Some("ShenandoahInitMark"),
            "{:?}",
            gc[0]
        );
    }

    #[test]
    fn rotated_files_are_read_in_time_order_whatever_their_numbers() {
        let (_, text) = fixture("g1");
        let lines: Vec<&str> = text.lines().collect();
        let dir = tempfile::tempdir().unwrap();
        // After wrapping, the oldest archive can carry the highest number.
        let parts = [
            ("gc.log.7", &lines[..100]),
            ("gc.log.0", &lines[100..200]),
            ("gc.log", &lines[200..]),
        ];
        for (name, part) in parts {
            fs::write(dir.path().join(name), part.join("\n") + "\n").unwrap();
        }
        fs::write(dir.path().join("system.log"), "not a GC log\n").unwrap();
        let rotated = PauseLog::read_dir(dir.path()).unwrap();
        let whole = parse_fixture("g1");
        assert_eq!(rotated.events, whole.events);
        let names: Vec<String> = rotated
            .files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["gc.log.7", "gc.log.0", "gc.log"]);
        assert_eq!(rotated.jvm_runs, 1);
    }

    #[test]
    fn a_file_cut_mid_line_and_mid_character_keeps_its_whole_lines() {
        let (_, text) = fixture("zgc");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gc.log");
        let mut bytes = text.into_bytes();
        bytes.extend_from_slice(b"[2026-11-22T07:05:50.000+0000][49.3s][info][safep\xe2\x82");
        fs::write(&path, bytes).unwrap();
        let log = PauseLog::read_files(std::slice::from_ref(&path)).unwrap();
        assert_eq!(log.events, parse_fixture("zgc").events);
    }

    /// A loaded node's log (Cassandra 5.0.9, G1, Java 17): the concurrent mark thread logged
    /// at uptime 123.583 s before the VM thread's safepoint line stamped 123.577 s.
    #[test]
    fn lines_out_of_order_between_threads_are_one_jvm_run() {
        let (path, text) = fixture("g1-out-of-order");
        let log = PauseLog::parse(&path, &text).unwrap();
        assert_eq!(log.jvm_runs, 1);
        // The young collection stays inside its safepoint: one stop, not two.
        assert_eq!(log.events.len(), 1, "{:#?}", log.events);
        let young = &log.events[0];
        assert_eq!(young.duration_ns, 73_778_109);
        assert_eq!(young.operation.as_deref(), Some("G1CollectForAllocation"));
        assert_eq!(
            young.kind(),
            "Pause Young (Concurrent Start) (G1 Evacuation Pause)"
        );
        assert_eq!(young.gc[0].duration_ns, 73_239_000);
    }

    #[test]
    fn a_restarted_jvm_starts_a_new_run() {
        let dir = tempfile::tempdir().unwrap();
        // The G1 run came first, the Parallel run after it (an earlier wall clock).
        fs::write(dir.path().join("gc.log.0"), fixture("g1").1).unwrap();
        fs::write(dir.path().join("gc.log"), fixture("parallel").1).unwrap();
        let log = PauseLog::read_dir(dir.path()).unwrap();
        assert_eq!(log.jvm_runs, 2);
        assert_eq!(log.events.len(), 64 + 45);
    }

    #[test]
    fn without_safepoint_lines_gc_pauses_stand_alone() {
        let (path, text) = fixture("g1");
        let gc_only: String = text
            .lines()
            .filter(|l| !l.contains("[safepoint"))
            .map(|l| format!("{l}\n"))
            .collect();
        let log = PauseLog::parse(&path, &gc_only).unwrap();
        assert_eq!(log.events.len(), 14);
        let first = &log.events[0];
        assert_eq!(first.operation, None);
        assert_eq!(first.duration_ns, 31_938_000);
        assert_eq!(first.end, at("2026-11-22T07:03:57.631+0000"));
    }

    #[test]
    fn a_gc_pause_cut_off_from_its_safepoint_is_kept() {
        let (path, text) = fixture("g1");
        // Up to the G1 young pause's own line, without the safepoint line after it.
        let cut: Vec<&str> = text.lines().take(35).collect();
        assert!(cut[33].ends_with("31.938ms"), "{}", cut[33]);
        let log = PauseLog::parse(&path, &cut.join("\n")).unwrap();
        let last = log.events.last().unwrap();
        assert_eq!(
            (last.operation.as_ref(), last.duration_ns),
            (None, 31_938_000)
        );
        assert_eq!(log.events.len(), 2);
    }

    #[test]
    fn other_formats_are_named_in_the_error() {
        let path = Path::new("/n/logs/gc.log");
        let java8 = "2026-11-22T07:03:57.631+0000: 3.050: [GC pause (G1 Evacuation Pause) \
                     (young), 0.0319380 secs]\n";
        assert!(matches!(
            PauseLog::parse(path, java8),
            Err(PauseLogError::LegacyFormat { .. })
        ));
        let no_time = "[3.050s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) \
                       52M->10M(1024M) 31.938ms\n";
        let err = PauseLog::parse(path, no_time).unwrap_err();
        assert!(matches!(
            err,
            PauseLogError::MissingDecoration {
                line: 1,
                missing: "time",
                ..
            }
        ));
        assert!(err.to_string().contains("time,uptime,level,tags"), "{err}");
        // Java 11's safepoint lines are counted, not silently taken for nothing.
        let java11 = "[2026-11-22T07:03:57.631+0000][3.050s][info][safepoint] Total time for \
                      which application threads were stopped: 0.0348 seconds, Stopping threads \
                      took: 0.0000064 seconds\n";
        let log = PauseLog::parse(path, java11).unwrap();
        assert_eq!((log.events.len(), log.unrecognised_lines), (0, 1));
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            PauseLog::read_dir(empty.path()),
            Err(PauseLogError::NoLog { .. })
        ));
    }

    fn event(end: SystemTime, duration_ms: u64) -> PauseEvent {
        PauseEvent {
            end,
            uptime: Duration::ZERO,
            duration_ns: duration_ms * 1_000_000,
            operation: Some("Test".into()),
            reaching_ns: None,
            gc: Vec::new(),
        }
    }

    #[test]
    fn the_timeline_splits_pauses_across_intervals() {
        let t0 = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let s = Duration::from_secs;
        let log = PauseLog {
            // 1 s ending at 1.5 s: half in interval 0, half in 1. 200 ms in 2. One before
            // the range that reaches into it by 100 ms, one after it.
            events: vec![
                event(t0 + Duration::from_millis(100), 300),
                event(t0 + Duration::from_millis(1500), 1000),
                event(t0 + Duration::from_millis(2800), 200),
                event(t0 + s(10), 50),
            ],
            ..PauseLog::default()
        };
        let ms = 1_000_000;
        assert_eq!(
            log.timeline(t0, t0 + s(3), s(1)),
            vec![600 * ms, 500 * ms, 200 * ms]
        );
        // A range that ends inside an interval: a shorter last interval.
        assert_eq!(
            log.timeline(t0, t0 + Duration::from_millis(2500), s(1)),
            vec![600 * ms, 500 * ms, 0]
        );
        assert_eq!(log.stopped_ns(t0, t0 + s(3)), 1300 * ms);
        assert_eq!(log.stopped_ns(t0, t0 + s(20)), 1350 * ms);

        let h = log.histogram(t0, t0 + s(3));
        assert_eq!(h.len(), 3);
        assert_eq!(h.max(), h.highest_equivalent(1000 * ms));
        assert_eq!(log.events_between(t0, t0 + s(3)).count(), 3);
    }

    #[test]
    fn the_timeline_of_a_real_log_adds_up_to_its_stopped_time() {
        let log = parse_fixture("zgc");
        let from = at("2026-11-22T07:05:00.000+0000");
        let to = at("2026-11-22T07:06:00.000+0000");
        let timeline = log.timeline(from, to, Duration::from_secs(1));
        assert_eq!(timeline.len(), 60);
        assert_eq!(timeline.iter().sum::<u64>(), 1_333_458_218);
        // The 869 ms stop ended at 07:05:21.201: 201 ms of it in second 21, the rest in 20.
        assert_eq!(timeline[21], 201_000_000 + other_stops_in(&log, from, 21));
        let h = log.histogram(from, to);
        assert_eq!(h.len(), 59);
        assert_eq!(h.max(), h.highest_equivalent(868_673_474));
    }

    /// Stopped time in second `second` after `from` of every event but the longest.
    fn other_stops_in(log: &PauseLog, from: SystemTime, second: u64) -> u64 {
        let longest = log.events.iter().max_by_key(|e| e.duration_ns).unwrap();
        let rest = PauseLog {
            events: log
                .events
                .iter()
                .filter(|e| *e != longest)
                .cloned()
                .collect(),
            ..PauseLog::default()
        };
        rest.timeline(from, from + Duration::from_secs(60), Duration::from_secs(1))[second as usize]
    }
}
