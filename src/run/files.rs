//! The run directory's interval files, written as the run goes: every interval into
//! histograms.hlog and intervals.csv (flushed at once, so that a crash keeps every finished
//! interval), every judged SLA window into intervals.csv. The run's summary files are
//! written once it ends ([`super::summary`]).
//!
//! The tags of histograms.hlog: `<op>.rt` (response time of successful requests), `<op>.st`
//! (their service time), `warmup.` before either for the warmup, `client.hiccup`; a fleet's
//! worker also logs `<op>.wt` (every request's wait before its send), which a merge needs to
//! judge whether the client's wait decided a window. An operation judged for recall (an ANN
//! query) also logs `<op>.recall`: every request's recall in ten-thousandths
//! ([`crate::metrics::RECALL_SCALE`]), a failed request's 0.

use std::fs;
use std::io::BufWriter;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::Context;

use crate::engine::Interval;
use crate::results::hlog::HlogWriter;
use crate::results::interval_files::write_interval;
use crate::results::intervals_csv::IntervalsCsv;
use crate::sla::{Judged, Sla, StreamingJudge};

/// histograms.hlog, intervals.csv and the SLA judged as the intervals come.
pub(crate) struct RunFiles {
    hlog: HlogWriter<BufWriter<fs::File>>,
    csv: IntervalsCsv,
    op_names: Vec<String>,
    warmup_ns: u64,
    /// Judges the windows after the warmup, when the run has an SLA.
    judge: Option<StreamingJudge>,
    /// The first write that failed; the run goes on without its files.
    error: Option<anyhow::Error>,
    /// Every interval's (start, length) in ns, as histograms.hlog has them: the time base
    /// of pauses.hlog.
    pub(crate) spans: Vec<(u64, u64)>,
    /// Also log each interval's wait before the send (`<op>.wt`, every request, failed or
    /// not): a fleet's worker does, so that its directory merges exactly.
    wait_tags: bool,
}

impl RunFiles {
    /// Creates the files in `out` for a run that started at `start`.
    pub(crate) fn create(
        out: &Path,
        start: SystemTime,
        op_names: &[String],
        warmup_s: f64,
        planned: Option<Duration>,
        sla: Option<Sla>,
        wait_tags: bool,
    ) -> anyhow::Result<Self> {
        let hlog_path = out.join(crate::catalogue::HISTOGRAMS_HLOG);
        let hlog = HlogWriter::create(&hlog_path, start)
            .with_context(|| format!("creating {}", hlog_path.display()))?;
        let csv = IntervalsCsv::create(&out.join(crate::catalogue::INTERVALS_CSV))?;
        let warmup_ns = (warmup_s * 1e9) as u64;
        Ok(RunFiles {
            hlog,
            csv,
            op_names: op_names.to_vec(),
            warmup_ns,
            judge: sla.map(|sla| {
                // Saturating: `as u64` would drop the high bits of a plan beyond 584 years.
                let planned_ns = planned.map(|p| u64::try_from(p.as_nanos()).unwrap_or(u64::MAX));
                let measured_ns = planned_ns.map(|p| p.saturating_sub(warmup_ns));
                StreamingJudge::new(sla, op_names.to_vec(), warmup_ns, measured_ns)
            }),
            error: None,
            spans: Vec::new(),
            wait_tags,
        })
    }

    /// Writes one interval and judges the windows it completes (at most one per window
    /// length of the SLA). A write that fails is returned once (the run goes on, its files
    /// incomplete) and kept for [`RunFiles::finish`].
    pub(crate) fn interval(&mut self, interval: &Interval) -> (Vec<Judged>, Option<String>) {
        self.spans.push((interval.start_ns, interval.length_ns));
        let mut failed = None;
        if self.error.is_none() {
            if let Err(e) = self.write(interval) {
                failed = Some(format!("{e:#}"));
                self.error = Some(e);
            }
        }
        let judged = self.judge.as_mut().map_or_else(Vec::new, |judge| {
            judge.interval(interval.start_ns, interval.length_ns, &interval.ops)
        });
        for window in &judged {
            self.window_row(window);
        }
        (judged, failed)
    }

    /// Judges the last windows, if not yet done; the run is over, `completed` when it ran
    /// its measured part to the end (see [`crate::sla::StreamingJudge::finish`]).
    pub(crate) fn judge_last(&mut self, completed: bool) -> Vec<Judged> {
        let judged = self
            .judge
            .as_mut()
            .map_or_else(Vec::new, |judge| judge.finish(completed));
        for window in &judged {
            self.window_row(window);
        }
        judged
    }

    /// Failing windows that the client's own wait decided.
    pub(crate) fn client_decided(&self) -> u64 {
        self.judge
            .as_ref()
            .map_or(0, StreamingJudge::client_decided)
    }

    /// Closes the files; the SLA and its verdict, when the run had one.
    pub(crate) fn finish(mut self) -> anyhow::Result<Option<(Sla, crate::sla::RunVerdict)>> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.csv.flush()?;
        Ok(self.judge.take().map(StreamingJudge::into_verdict))
    }

    fn window_row(&mut self, judged: &Judged) {
        if self.error.is_none() {
            if let Err(e) = self
                .csv
                .window_row(self.warmup_ns, &judged.window, &judged.verdict)
            {
                self.error = Some(e);
            }
        }
    }

    fn write(&mut self, interval: &Interval) -> anyhow::Result<()> {
        write_interval(
            &mut self.hlog,
            &mut self.csv,
            &self.op_names,
            interval,
            self.wait_tags,
        )
    }
}
