//! The collector's side of the engine: what the workers send it ([`Message`], [`Records`],
//! [`Tally`]) and the [`Collector`] that adds the workers' parts up, interval by interval,
//! and releases each interval to the sink once every worker has handed it over.
//!
//! Separate from the worker (`worker.rs`) because it runs on the caller's task, not on the
//! hot path: the workers only build these messages and send them.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::metrics::OpHistograms;
use crate::stats::new_histogram;

use super::schedule::Progress;
use super::{Interval, IntervalSink};

/// Messages from workers to the collector.
pub(super) enum Message {
    /// A worker's records for one interval; `complete` is false for the worker's last, partial
    /// interval, which may still be open for the other workers.
    Part {
        worker: usize,
        index: u64,
        records: Records,
        complete: bool,
    },
    WorkerDone {
        worker: usize,
        end_ns: u64,
        tally: Tally,
    },
}

/// What a worker counted over its whole run, added up over the workers by the collector.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Tally {
    /// Requests sent.
    pub(super) sent: u64,
    /// Successful answers within the measured period.
    pub(super) ok_in_period: u64,
    /// Failed requests within the measured period.
    pub(super) failed_in_period: u64,
    /// Requests recorded as unsent.
    pub(super) unsent: u64,
    /// Whether the unsent count stopped at [`UNSENT_COUNTED`](super::UNSENT_COUNTED) with
    /// requests left.
    pub(super) unsent_capped: bool,
    /// Whether it stopped sending, with requests left, while waiting for a free slot.
    pub(super) unsent_held: bool,
    /// Measured requests that waited for a free in-flight slot.
    pub(super) limit_waits: u64,
    /// Measured requests late by the client's doing.
    pub(super) client_late: u64,
    /// Whether a count or time of the worker's schedule went beyond u64 and saturated: its
    /// backlog, an intended start, a sequence number.
    pub(super) overflowed: bool,
}

impl Tally {
    pub(super) fn add(&mut self, other: &Tally) {
        self.sent += other.sent;
        self.ok_in_period += other.ok_in_period;
        self.failed_in_period += other.failed_in_period;
        self.unsent += other.unsent;
        self.unsent_capped |= other.unsent_capped;
        self.unsent_held |= other.unsent_held;
        self.limit_waits += other.limit_waits;
        self.client_late += other.client_late;
        self.overflowed |= other.overflowed;
    }
}

/// What one worker recorded in one interval.
pub(super) struct Records {
    /// Per operation type, per phase.
    pub(super) ops: Vec<[OpHistograms; 2]>,
    /// How late the worker's timer wake-ups came, ns (when hiccups are recorded).
    pub(super) hiccups: Option<Histogram<u64>>,
}

impl Records {
    pub(super) fn empty(n_ops: usize, hiccups: bool) -> Self {
        Records {
            ops: empty_ops(n_ops),
            hiccups: hiccups.then(new_histogram),
        }
    }
}

pub(super) fn empty_ops(n: usize) -> Vec<[OpHistograms; 2]> {
    (0..n)
        .map(|_| [OpHistograms::default(), OpHistograms::default()])
        .collect()
}

/// Adds up the workers' parts, interval by interval, and releases each interval once every
/// worker has handed it over.
pub(super) struct Collector {
    pub(super) interval_ns: u64,
    /// Per worker: every interval before this has been handed over (MAX once done).
    pub(super) marks: BTreeMap<usize, u64>,
    pub(super) pending: BTreeMap<u64, Interval>,
    pub(super) end_ns: u64,
    pub(super) totals: Vec<[OpHistograms; 2]>,
    pub(super) hiccup_total: Histogram<u64>,
    pub(super) max_backlog: u64,
    /// Whether the backlog summed over the workers went beyond u64 (and saturated).
    pub(super) backlog_overflowed: bool,
    pub(super) all_failing_ns: u64,
    pub(super) tally: Tally,
}

impl Collector {
    pub(super) fn new(workers: &[usize], n_ops: usize, interval_ns: u64) -> Self {
        Collector {
            interval_ns,
            marks: workers.iter().map(|&w| (w, 0)).collect(),
            pending: BTreeMap::new(),
            end_ns: 0,
            totals: empty_ops(n_ops),
            hiccup_total: new_histogram(),
            max_backlog: 0,
            backlog_overflowed: false,
            all_failing_ns: 0,
            tally: Tally::default(),
        }
    }

    fn workers_done(&self) -> bool {
        self.marks.values().all(|&m| m == u64::MAX)
    }

    fn slot(&mut self, index: u64) -> &mut Interval {
        let interval_ns = self.interval_ns;
        self.pending.entry(index).or_insert_with(|| Interval {
            index,
            start_ns: index * interval_ns,
            length_ns: interval_ns,
            // Filled by the first worker's part, or with empty statistics when released.
            ops: Vec::new(),
            hiccups: None,
            backlog: 0,
            in_flight: 0,
        })
    }

    /// Takes one message; says whether every worker is now done.
    pub(super) fn take(&mut self, message: Message) -> bool {
        match message {
            Message::Part {
                worker,
                index,
                records: Records { ops, hiccups },
                complete,
            } => {
                let slot = self.slot(index);
                match (&mut slot.hiccups, hiccups) {
                    (Some(into), Some(from)) => into
                        .add(&from)
                        .expect("auto-resizing histograms always add"),
                    (into @ None, from) => *into = from,
                    (Some(_), None) => {}
                }
                if slot.ops.is_empty() {
                    // The interval's first part (the only one with one worker): taken as it
                    // is rather than added into empty histograms.
                    slot.ops = ops;
                } else {
                    for (into, from) in slot.ops.iter_mut().zip(&ops) {
                        into[0].add(&from[0]);
                        into[1].add(&from[1]);
                    }
                }
                if complete {
                    self.marks.insert(worker, index + 1);
                }
            }
            Message::WorkerDone {
                worker,
                end_ns,
                tally,
            } => {
                self.marks.insert(worker, u64::MAX);
                self.end_ns = self.end_ns.max(end_ns);
                self.tally.add(&tally);
            }
        }
        self.workers_done()
    }

    /// Releases every interval all sources have handed over.
    pub(super) fn flush<S: IntervalSink>(
        &mut self,
        sink: &mut S,
        progress: &Progress,
        now_ns: u64,
    ) {
        let ready = self.marks.values().copied().min().unwrap_or(u64::MAX);
        let all_done = ready == u64::MAX;
        if all_done && self.end_ns == 0 {
            self.end_ns = now_ns;
        }
        while let Some((&index, _)) = self.pending.first_key_value() {
            if index >= ready {
                break;
            }
            let mut interval = self.pending.pop_first().expect("checked above").1;
            if all_done && self.pending.is_empty() {
                // The last interval ends with the run.
                interval.length_ns = self
                    .end_ns
                    .saturating_sub(interval.start_ns)
                    .clamp(1, self.interval_ns);
            }
            let backlog = progress.backlog();
            self.backlog_overflowed |= backlog.is_none();
            interval.backlog = backlog.unwrap_or(u64::MAX);
            interval.in_flight = progress.in_flight();
            self.max_backlog = self.max_backlog.max(interval.backlog);
            let (ok, failed) = interval
                .ops
                .iter()
                .flatten()
                .fold((0, 0), |(o, f), s| (o + s.ok, f + s.error_count()));
            if ok == 0 && failed > 0 {
                self.all_failing_ns += interval.length_ns;
            } else if ok > 0 {
                self.all_failing_ns = 0;
            }
            for (total, part) in self.totals.iter_mut().zip(&interval.ops) {
                total[0].add(&part[0]);
                total[1].add(&part[1]);
            }
            if let Some(h) = &interval.hiccups {
                self.hiccup_total
                    .add(h)
                    .expect("auto-resizing histograms always add");
            }
            sink.interval(&interval);
        }
    }
}
