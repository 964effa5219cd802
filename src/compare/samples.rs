//! The samples a comparison tests: per window of a run, its throughput and the histogram of
//! its response times.
//!
//! A window is one interval of the run's measured part (`--interval`, 1 s by default; one
//! entry per operation type in histograms.hlog). The window is the sampled unit
//! (docs/compare.md): the requests inside one window share the server's state (a compaction,
//! a GC pause) and are not independent, while windows are nearly so. An interval that reaches
//! past the planned end (the last one, collecting late answers) is left out.

use hdrhistogram::Histogram;

use crate::catalogue::HISTOGRAMS_HLOG;
use crate::results::hlog::{for_each_interval, is_measured_response_tag};
use crate::results::run_dir::RunData;

/// One run's windows.
#[derive(Debug, Clone, Default)]
pub struct RunWindows {
    /// Successful requests per second in each window.
    pub throughput: Vec<f64>,
    /// The response times of each window, every operation type merged (ns).
    pub latency: Vec<Histogram<u64>>,
    /// What could not be read.
    pub notes: Vec<String>,
}

impl RunWindows {
    /// Appends another run's windows (the repeats at one rate are pooled).
    pub fn extend(&mut self, other: RunWindows) {
        self.throughput.extend(other.throughput);
        self.latency.extend(other.latency);
        self.notes.extend(other.notes);
    }

    /// The number of windows.
    pub fn len(&self) -> usize {
        self.throughput.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.throughput.is_empty()
    }
}

/// Reads a run's windows from its histograms.hlog; `run` gives the warmup and planned end.
pub fn run_windows(run: &RunData) -> RunWindows {
    let mut notes = Vec::new();
    let bytes = match crate::usage::read_bounded(
        &run.dir.join(HISTOGRAMS_HLOG),
        crate::usage::MAX_DATA_FILE_BYTES,
    ) {
        Ok(bytes) => bytes,
        Err(e) => {
            notes.push(format!(
                "{}: {HISTOGRAMS_HLOG} could not be read ({e})",
                run.dir.display()
            ));
            return RunWindows {
                notes,
                ..RunWindows::default()
            };
        }
    };
    // Each logged interval: (start, length, merged measured response times).
    let mut intervals: Vec<(f64, f64, Histogram<u64>)> = Vec::new();
    for_each_interval(
        &bytes,
        HISTOGRAMS_HLOG,
        &mut notes,
        is_measured_response_tag,
        |logged| {
            let same = intervals
                .iter_mut()
                .find(|(start, _, _)| (start - logged.start_s).abs() < 1e-3);
            match same {
                Some((_, _, h)) => {
                    let _ = h.add(&logged.histogram);
                }
                None => intervals.push((logged.start_s, logged.length_s, logged.histogram)),
            }
        },
    );
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let end = run.planned_end_s.unwrap_or(f64::INFINITY);

    let mut out = RunWindows {
        notes,
        ..RunWindows::default()
    };
    for (start, length, histogram) in intervals {
        let measured = start >= run.warmup_s - 1e-6 && start + length <= end + 1e-6;
        if !measured || length <= 0.0 {
            continue;
        }
        out.throughput.push(histogram.len() as f64 / length);
        out.latency.push(histogram);
    }
    out
}
