//! The request path's side of validation and the thread that keeps the write record.
//!
//! A request that writes or reads notes what happened through a [`Recorder`]: a send into
//! a channel, no lock and no wait (the channel's queue is lock-free). One thread, the
//! [`Checker`], owns the [`Ledger`] and judges each read as it arrives, so the record needs
//! no atomics and the request path pays two clock readings and a send.
//!
//! Events from different threads can arrive out of their order in time. A write's answer
//! that arrives after a read it preceded only hides a stale read from the judgement (the
//! read is judged against fewer writes), never makes a current one stale.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Instant;

use super::findings::ReadCounts;
use super::ledger::{Ledger, ReadClass, Seen};
use super::stamp::RunTag;

/// One request's outcome, as the checker hears it.
#[derive(Debug, Clone)]
enum Event {
    Write {
        key: u64,
        seq: u64,
        sent_ns: u64,
        acked_ns: Option<u64>,
    },
    Read {
        key: u64,
        sent_ns: u64,
        seen: Seen,
    },
    /// A write of several cells (a row's fields), one write.
    WriteCells {
        cells: Box<[u64]>,
        seq: u64,
        sent_ns: u64,
        acked_ns: Option<u64>,
    },
    /// A read of several cells, one read: judged by its worst cell.
    ReadCells {
        cells: Box<[(u64, Seen)]>,
        sent_ns: u64,
    },
    End,
}

/// What one write wrote: a key, or several cells (a row's fields) at once.
#[derive(Debug, Clone)]
pub enum Cells {
    /// One key.
    One(u64),
    /// Several cells, one write.
    Many(Box<[u64]>),
}

/// A write sent and not yet answered. Dropped unanswered — the engine drops a request it
/// times out before the answer comes — the write is noted as one that may or may not have
/// applied.
#[derive(Debug)]
pub struct PendingWrite<'a> {
    recorder: &'a Recorder,
    cells: Option<Cells>,
    seq: u64,
    sent_ns: u64,
}

impl PendingWrite<'_> {
    /// The answer came: acknowledged (`ok`) or failed.
    pub fn answered(mut self, ok: bool) {
        let acked_ns = ok.then(|| self.recorder.now_ns());
        self.note(acked_ns);
    }

    fn note(&mut self, acked_ns: Option<u64>) {
        match self.cells.take() {
            Some(Cells::One(key)) => self.recorder.write(key, self.seq, self.sent_ns, acked_ns),
            Some(Cells::Many(cells)) => {
                let _ = self.recorder.events.send(Event::WriteCells {
                    cells,
                    seq: self.seq,
                    sent_ns: self.sent_ns,
                    acked_ns,
                });
            }
            None => {}
        }
    }
}

impl Drop for PendingWrite<'_> {
    fn drop(&mut self) {
        self.note(None);
    }
}

/// The request path's handle: the clock every time of the record is read from, and the
/// channel to the checker. Cloned into each workload that validates.
#[derive(Debug, Clone)]
pub struct Recorder {
    epoch: Instant,
    tag: RunTag,
    events: mpsc::Sender<Event>,
    tally: Arc<Tally>,
}

/// What the checker has judged so far, for the live view while the run goes on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SoFar {
    /// The reads judged, by their class.
    pub reads: ReadCounts,
    /// Writes acknowledged.
    pub writes_acknowledged: u64,
    /// Writes that failed or timed out.
    pub writes_unknown: u64,
}

impl std::ops::AddAssign for SoFar {
    fn add_assign(&mut self, other: SoFar) {
        self.reads.current += other.reads.current;
        self.reads.corrupt += other.reads.corrupt;
        self.reads.stale += other.reads.stale;
        self.reads.unchecked += other.reads.unchecked;
        self.writes_acknowledged += other.writes_acknowledged;
        self.writes_unknown += other.writes_unknown;
    }
}

impl SoFar {
    /// A finished run's counts, from what summary.json's `validation` says of it.
    pub fn of(v: &super::findings::Validation) -> SoFar {
        let stale = v.reads.stale_unexpected + v.reads.stale_expected;
        SoFar {
            reads: ReadCounts {
                current: v.reads.checked.saturating_sub(v.reads.corrupt + stale),
                corrupt: v.reads.corrupt,
                stale,
                unchecked: v.reads.unchecked,
            },
            writes_acknowledged: v.writes_acknowledged,
            writes_unknown: v.writes_unknown,
        }
    }
}

/// The checker's counts, written by its thread alone and read by anyone: [`SoFar`] as
/// atomics.
#[derive(Debug, Default)]
struct Tally([AtomicU64; 6]);

impl Tally {
    fn set(&self, reads: &ReadCounts, ledger: &Ledger) {
        let values = [
            reads.current,
            reads.corrupt,
            reads.stale,
            reads.unchecked,
            ledger.acknowledged(),
            ledger.unknown(),
        ];
        for (cell, value) in self.0.iter().zip(values) {
            cell.store(value, Ordering::Relaxed);
        }
    }

    fn get(&self) -> SoFar {
        let [current, corrupt, stale, unchecked, acknowledged, unknown] =
            self.0.each_ref().map(|c| c.load(Ordering::Relaxed));
        SoFar {
            reads: ReadCounts {
                current,
                corrupt,
                stale,
                unchecked,
            },
            writes_acknowledged: acknowledged,
            writes_unknown: unknown,
        }
    }
}

impl Recorder {
    /// What the checker has judged so far (a moment ago: events still queued are not in it).
    pub fn so_far(&self) -> SoFar {
        self.tally.get()
    }

    /// The run's tag, which marks every value it writes.
    pub fn tag(&self) -> RunTag {
        self.tag
    }

    /// Nanoseconds since the record began: read before a request is sent and after its
    /// answer arrives.
    pub fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Write `seq` of `key`, sent at `sent_ns`: acknowledged (`Some(answered_ns)`), or
    /// failed or timed out (`None`).
    pub fn write(&self, key: u64, seq: u64, sent_ns: u64, acked_ns: Option<u64>) {
        // After the checker ended (a request answered after the load's end), the event has
        // nowhere to go and is not needed.
        let _ = self.events.send(Event::Write {
            key,
            seq,
            sent_ns,
            acked_ns,
        });
    }

    /// A read of `key` sent at `sent_ns` that returned `seen`.
    pub fn read(&self, key: u64, sent_ns: u64, seen: Seen) {
        let _ = self.events.send(Event::Read { key, sent_ns, seen });
    }

    /// Write `seq` of `cells` is being sent now: the guard notes its answer, or its loss.
    pub fn pending_write(&self, cells: Cells, seq: u64) -> PendingWrite<'_> {
        PendingWrite {
            recorder: self,
            cells: Some(cells),
            seq,
            sent_ns: self.now_ns(),
        }
    }

    /// A read of several cells (a row's fields) sent at `sent_ns`, each with what it
    /// returned: one read, judged by its worst cell.
    pub fn read_cells(&self, cells: Box<[(u64, Seen)]>, sent_ns: u64) {
        let _ = self.events.send(Event::ReadCells { cells, sent_ns });
    }
}

/// The thread that keeps the record and judges the reads.
#[derive(Debug)]
pub struct Checker {
    events: mpsc::Sender<Event>,
    thread: JoinHandle<(Ledger, ReadCounts)>,
}

impl Checker {
    /// Starts the checker.
    pub fn start() -> std::io::Result<(Checker, Recorder)> {
        let (events, inbox) = mpsc::channel();
        let tally = Arc::new(Tally::default());
        let counts = tally.clone();
        let thread = std::thread::Builder::new()
            .name("headroom-validate".into())
            .spawn(move || keep(inbox, &counts))?;
        let recorder = Recorder {
            epoch: Instant::now(),
            tag: RunTag::new(),
            events: events.clone(),
            tally,
        };
        Ok((Checker { events, thread }, recorder))
    }

    /// Ends the record once every event sent so far is judged: the record, for the final
    /// check, and the reads' counts.
    pub fn finish(self) -> (Ledger, ReadCounts) {
        let _ = self.events.send(Event::End);
        self.thread
            .join()
            .expect("the validation thread does not panic")
    }
}

fn keep(inbox: mpsc::Receiver<Event>, tally: &Tally) -> (Ledger, ReadCounts) {
    let mut ledger = Ledger::new();
    let mut reads = ReadCounts::default();
    while let Ok(event) = inbox.recv() {
        match event {
            Event::Write {
                key,
                seq,
                sent_ns,
                acked_ns,
            } => ledger.write(key, seq, sent_ns, acked_ns),
            Event::Read { key, sent_ns, seen } => reads.count(ledger.read(key, sent_ns, seen)),
            Event::WriteCells {
                cells,
                seq,
                sent_ns,
                acked_ns,
            } => ledger.write_cells(&cells, seq, sent_ns, acked_ns),
            Event::ReadCells { cells, sent_ns } => {
                let class = cells
                    .iter()
                    .map(|&(cell, seen)| ledger.read(cell, sent_ns, seen))
                    .fold(ReadClass::Unchecked, ReadClass::worse);
                reads.count(class);
            }
            Event::End => break,
        }
        // Six relaxed stores to a line only this thread writes: a reader (the live view,
        // once an interval) sees the counts of a moment ago.
        tally.set(&reads, &ledger);
    }
    tally.set(&reads, &ledger);
    (ledger, reads)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events from several threads reach one record; the reads are judged against it.
    #[test]
    fn the_checker_judges_reads_against_the_writes_it_heard() {
        let (checker, recorder) = Checker::start().unwrap();
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let recorder = recorder.clone();
                std::thread::spawn(move || {
                    for i in 0..1000u64 {
                        let seq = t * 1000 + i;
                        recorder.write(seq, seq, 10, Some(20));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        recorder.write(5000, 5000, 10, None);
        // A row of three cells written at once, then read: one write, one read.
        recorder
            .pending_write(Cells::Many(Box::new([7001, 7002, 7003])), 7000)
            .answered(true);
        let cells = Box::new([
            (7001, Seen::Written(7000)),
            (7002, Seen::Foreign),
            (7003, Seen::Written(7000)),
        ]);
        recorder.read_cells(cells, recorder.now_ns());
        // Dropped before its answer: may or may not have applied.
        drop(recorder.pending_write(Cells::One(7004), 7004));
        recorder.read(1, 30, Seen::Written(1));
        recorder.read(2, 30, Seen::Missing);
        recorder.read(3, 30, Seen::Corrupt);
        recorder.read(4, 30, Seen::Foreign);
        let (ledger, reads) = checker.finish();
        assert_eq!((ledger.acknowledged(), ledger.unknown()), (4001, 2));
        // The live counts say the same once every event is judged.
        let so_far = recorder.so_far();
        assert_eq!(
            (so_far.writes_acknowledged, so_far.writes_unknown),
            (4001, 2)
        );
        assert_eq!(so_far.reads, reads);
        assert_eq!(
            reads,
            ReadCounts {
                // Key 1's read, and the row's: current where checked, whatever its foreign
                // cell.
                current: 2,
                corrupt: 1,
                stale: 1,
                unchecked: 1
            }
        );
        // After the end, the request path's notes go nowhere, quietly.
        recorder.write(1, 9, 40, Some(50));
    }
}
