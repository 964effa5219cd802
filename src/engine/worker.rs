//! The worker: one tokio task per lane (or runtime thread) that takes its share of the schedule (or
//! of the closed loop's slots), sends each request when it is due, keeps many in flight,
//! records each answer into histograms of its own and hands them to the collector at every
//! interval end.
//!
//! This is the engine's hot path; it lives apart from `run()` and the public types so that
//! the loop and what it calls per request read as one piece.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use tokio::sync::mpsc;

use crate::metrics::{ErrorClass, OpHistograms, Phase};
use crate::workload::{Parts, Workload};

use super::clock::{Clock, Timer};
use super::collector::{Message, Records, Tally};
use super::in_flight::{Answer, Completion, InFlight, NEVER};
use super::schedule::{overdue, ClosedSchedule, End, Progress, Ticket, WorkerSchedule};
use super::{MeasuredPeriod, SEND_GRACE, UNSENT_COUNTED};

/// Where a worker's requests come from.
pub(super) enum Source {
    /// Its share of the open-loop schedule.
    Open(WorkerSchedule),
    /// Closed loop: a new request whenever a slot is free.
    Closed(ClosedSchedule),
}

pub(super) struct WorkerContext<W, C: Clock> {
    pub(super) worker: usize,
    pub(super) workload: Arc<W>,
    pub(super) clock: C,
    pub(super) end: End,
    pub(super) limit: usize,
    /// Open loop: this worker's share of the rate, for its backlog estimate.
    pub(super) per_worker_rate: Option<f64>,
    pub(super) send_resolution_ns: u64,
    /// The request timeout (0: none).
    pub(super) timeout_ns: u64,
    pub(super) interval_ns: u64,
    /// Record how late the timer's wake-ups come.
    pub(super) hiccups: bool,
    /// Never sleep longer than this, ns (0: no limit): [`HICCUP_TICK`] for the first worker
    /// when hiccups are recorded, or, when the open loop is dealt by slots to W workers,
    /// W × [`HICCUP_TICK`] for every worker, their first ticks a millisecond apart.
    pub(super) tick_ns: u64,
    /// When the first tick comes, ns after the start.
    pub(super) first_tick_ns: u64,
    pub(super) first_seq: u64,
    pub(super) only_op: Option<usize>,
    pub(super) progress: Arc<Progress>,
    /// Open loop: the measured period whose answers this worker counts.
    pub(super) period: Option<MeasuredPeriod>,
    /// Open loop: the end of the measured period plus [`SEND_GRACE`]: what is unsent by
    /// then stays unsent ([`NEVER`] for a closed loop).
    pub(super) send_deadline_ns: u64,
    /// [`EngineConfig::lag_limit`](super::EngineConfig::lag_limit) in ns, [`NEVER`] for none.
    pub(super) lag_limit_ns: u64,
    pub(super) tx: mpsc::UnboundedSender<Message>,
}

/// How long a worker waits before it draws on when its schedule paused (see
/// [`WorkerSchedule::next_ticket`]): the loop sleeps, so a task that cannot find a request of
/// its own never keeps its thread from the others, nor a paused clock from advancing.
const PAUSE_NS: u64 = 100_000;

/// At most this many requests are sent in one turn of a worker's loop, so that answers
/// waiting to be recorded (and so their response times) are not held up by a long backlog.
const MAX_BURST: usize = 32;

impl<W: Workload, C: Clock> WorkerContext<W, C> {
    pub(super) async fn drive(self, mut source: Source) {
        let n_ops = self.workload.op_names().len();
        let mut timer = match self.clock.timer() {
            Ok(timer) => timer,
            Err(e) => panic!("cannot create a timer for the schedule: {e}"),
        };
        // The earliest deadline among the requests in flight (maybe one already answered).
        // The send timer wakes for it too: one timer, polled once per turn.
        let mut next_expiry = NEVER;
        let mut in_flight: FuturesUnordered<InFlight<_>> = FuturesUnordered::new();
        let mut current = 0u64;
        let mut records = Records::empty(n_ops, self.hiccups);
        let tick_ns = self.tick_ns;
        // When the loop must wake at the latest, to measure the client's hiccups.
        let mut next_tick = if tick_ns > 0 {
            self.clock.now_ns() + self.first_tick_ns
        } else {
            NEVER
        };
        // The next request to send, once its intended start comes and a slot is free.
        let mut pending: Option<Ticket> = None;
        // When to wake for it: its intended start, or that of the last request within the
        // send resolution, so that they leave together.
        let mut due = 0u64;
        let mut exhausted = false;
        let mut tally = Tally::default();
        // The pending request was drawn while every slot was taken: if it falls due before
        // one frees, it waits for the server (a limit wait), not for the client.
        let mut pending_held = false;
        // ...and it did: its lateness is the server's.
        let mut pending_waited_for_slot = false;
        // The last moment every slot was taken (the answer that freed one): a request due by
        // then was held by the in-flight limit, i.e. by the server, however many slots free
        // at once and however long the burst that sends them takes.
        let mut limit_full_until_ns: Option<u64> = None;
        // Wakes the worker to hand over finished intervals even when no answer arrives.
        let mut tick = tokio::time::interval(
            Duration::from_nanos(self.interval_ns / 4).max(Duration::from_millis(1)),
        );
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if self.progress.stop.load(Ordering::Relaxed) {
                exhausted = true;
                pending = None;
            }
            if pending.is_none() && !exhausted {
                pending = match &mut source {
                    Source::Open(schedule) => schedule.next_ticket(),
                    // Taken only when a slot is free, so that its intended start is its send.
                    Source::Closed(closed) if in_flight.len() < self.limit => {
                        closed.take(&self.clock, &self.progress)
                    }
                    Source::Closed(_) => None,
                };
                exhausted = pending.is_none()
                    && match &source {
                        Source::Open(schedule) => schedule.is_over(),
                        Source::Closed(_) => in_flight.len() < self.limit,
                    };
                due = match (&mut source, pending) {
                    (Source::Open(schedule), Some(t)) => {
                        self.wake_for(schedule, t, || self.clock.now_ns())
                    }
                    (_, Some(t)) => t.intended_ns,
                    (_, None) => 0,
                };
                pending_held = pending.is_some_and(|t| t.intended_ns >= self.end.warmup_ns)
                    && in_flight.len() >= self.limit;
            }
            if exhausted && pending.is_none() && in_flight.is_empty() {
                break;
            }
            let may_send = pending.is_some() && in_flight.len() < self.limit;
            // The schedule paused its draw (a long run of other workers' requests): look at
            // the answers, the clock and the stop signal, and draw on a moment later.
            let paused = pending.is_none() && !exhausted && matches!(source, Source::Open(_));
            let wake_at = if may_send {
                due.min(next_expiry)
            } else if paused {
                self.clock.now_ns() + PAUSE_NS
            } else {
                next_expiry
            }
            .min(next_tick);
            // Set before the answers are taken: however long they keep the loop, the next
            // wake-up's lateness counts from the moment the loop asked for.
            if wake_at != NEVER {
                timer.set(wake_at);
            }
            tokio::select! {
                biased;
                Some(done) = in_flight.next(), if !in_flight.is_empty() => {
                    let done: Completion = done;
                    if in_flight.len() + 1 >= self.limit {
                        limit_full_until_ns = limit_full_until_ns.max(Some(done.done_ns));
                    }
                    if self.period.is_some_and(|p| p.contains(done.done_ns)) {
                        if done.error.is_none() {
                            tally.ok_in_period += 1;
                        } else {
                            tally.failed_in_period += 1;
                        }
                    }
                    if pending_held {
                        // A slot is free now; the pending request waited for it if it was
                        // due before.
                        pending_held = false;
                        pending_waited_for_slot = due <= done.done_ns;
                        tally.limit_waits += u64::from(pending_waited_for_slot);
                    }
                    self.hand_over(&mut current, &mut records, done.done_ns / self.interval_ns);
                    let recall = self.workload.measures_recall(done.op);
                    record(&mut records.ops, done, recall);
                }
                late = timer.sleep_until_ns(wake_at), if wake_at != NEVER => {
                    // The timer's own reading when it slept: a stall between that reading
                    // and this line would otherwise leave the next tick computed after it,
                    // and the stall unmeasured.
                    let now = match late {
                        Some(late) => wake_at + late,
                        None => self.clock.now_ns(),
                    };
                    // A wake-up the loop slept for: how late it came is a hiccup. (A moment
                    // that had passed before the loop could sleep for it, such as a request
                    // that waited for a slot, is not.) A tick is always asked for (it was
                    // set a tick after a reading of the clock), so a tick the loop passed
                    // without sleeping, held by its own work or descheduled on its way to
                    // the timer, is a hiccup of the time since that tick.
                    let missed_tick = (late.is_none() && next_tick != NEVER && next_tick <= now)
                        .then(|| now - next_tick);
                    if let Some(late) = late.or(missed_tick) {
                        self.hand_over(&mut current, &mut records, now / self.interval_ns);
                        if let Some(hiccups) = &mut records.hiccups {
                            let _ = hiccups.record(late.max(1));
                        }
                    }
                    // The next tick comes a millisecond after the last sleep, or after the
                    // last tick the loop was too busy to sleep for.
                    if next_tick != NEVER && (late.is_some() || next_tick <= now) {
                        next_tick = now + tick_ns;
                    }
                    if next_expiry <= now {
                        next_expiry = NEVER;
                        for request in in_flight.iter_mut() {
                            if request.deadline_ns <= now {
                                request.expire(now);
                            } else {
                                next_expiry = next_expiry.min(request.deadline_ns);
                            }
                        }
                    }
                    if now >= self.send_deadline_ns && !exhausted {
                        tally.unsent_held = pending.is_some()
                            && (pending_held || pending_waited_for_slot || in_flight.len() >= self.limit);
                        self.stop_sending(&mut source, pending.take(), &mut records, &mut current, now, &mut tally);
                        exhausted = true;
                        continue;
                    }
                    if !may_send || due > now {
                        continue;
                    }
                    let ticket = pending.take().expect("may_send");
                    if !std::mem::take(&mut pending_waited_for_slot) {
                        self.count_lateness(ticket, now, limit_full_until_ns, &mut tally);
                    }
                    let request = self.start(ticket, &mut tally);
                    // Requests leave in order with one timeout: the first deadline stands.
                    next_expiry = next_expiry.min(request.deadline_ns);
                    in_flight.push(request);
                    // The other requests due by now join it: the burst takes one wake-up,
                    // one look at the clock and one poll of the new requests, not one each.
                    if let Source::Open(schedule) = &mut source {
                        for _ in 1..MAX_BURST {
                            if in_flight.len() >= self.limit {
                                break;
                            }
                            match schedule.next_ticket() {
                                Some(t) if t.intended_ns <= now => {
                                    self.count_lateness(t, now, limit_full_until_ns, &mut tally);
                                    in_flight.push(self.start(t, &mut tally));
                                }
                                next => {
                                    pending = next;
                                    exhausted = next.is_none() && schedule.is_over();
                                    if let Some(t) = next {
                                        due = self.wake_for(schedule, t, || now);
                                    }
                                    break;
                                }
                            }
                        }
                    }
                }
                _ = tick.tick() => {
                    let now = self.clock.now_ns();
                    if now >= self.send_deadline_ns && !exhausted {
                        // Held by the in-flight limit past the deadline: the send branch
                        // may not come again.
                        tally.unsent_held = pending.is_some()
                            && (pending_held || pending_waited_for_slot || in_flight.len() >= self.limit);
                        self.stop_sending(&mut source, pending.take(), &mut records, &mut current, now, &mut tally);
                        exhausted = true;
                    }
                    let overdue = match (pending, self.per_worker_rate) {
                        // A rate no client could keep overflows the count: it saturates, and
                        // the run says so.
                        (Some(t), Some(rate)) if t.intended_ns <= now => {
                            overdue(now - t.intended_ns, rate).unwrap_or_else(|| {
                                tally.overflowed = true;
                                u64::MAX
                            })
                        }
                        _ => 0,
                    };
                    self.progress.set_overdue(self.worker, overdue);
                    self.progress.set_in_flight(self.worker, in_flight.len() as u64);
                    self.hand_over(&mut current, &mut records, now / self.interval_ns);
                }
            }
        }
        self.progress.set_overdue(self.worker, 0);
        self.progress.set_in_flight(self.worker, 0);
        if let Source::Open(schedule) = &source {
            tally.overflowed |= schedule.overflowed();
        }
        let end_ns = self.clock.now_ns();
        let _ = self.tx.send(Message::Part {
            worker: self.worker,
            index: current,
            records,
            complete: false,
        });
        let _ = self.tx.send(Message::WorkerDone {
            worker: self.worker,
            end_ns,
            tally,
        });
    }

    /// Counts whose a measured request's lateness is, as it leaves at `now_ns`: the server's
    /// (a limit wait) when every slot was taken at some moment since its intended start
    /// (`limit_full_until_ns`), else the client's when it leaves later than the lag limit.
    fn count_lateness(
        &self,
        ticket: Ticket,
        now_ns: u64,
        limit_full_until_ns: Option<u64>,
        tally: &mut Tally,
    ) {
        let held = limit_full_until_ns.is_some_and(|until| ticket.intended_ns <= until);
        if ticket.intended_ns >= self.end.warmup_ns && held {
            tally.limit_waits += 1;
        } else {
            tally.client_late += u64::from(self.late(ticket, now_ns));
        }
    }

    /// Whether a measured request sent at `now_ns` leaves later than the lag limit.
    fn late(&self, ticket: Ticket, now_ns: u64) -> bool {
        ticket.intended_ns >= self.end.warmup_ns
            && now_ns.saturating_sub(ticket.intended_ns) > self.lag_limit_ns
    }

    /// Stops sending at the deadline: the pending request and the rest of this worker's
    /// schedule are recorded as unsent, in the interval of `now_ns`, each under its op type
    /// and phase, up to [`UNSENT_COUNTED`]. Notes in `tally` how many were recorded and
    /// whether the count stopped there with requests left.
    fn stop_sending(
        &self,
        source: &mut Source,
        pending: Option<Ticket>,
        records: &mut Records,
        current: &mut u64,
        now_ns: u64,
        tally: &mut Tally,
    ) {
        self.hand_over(current, records, now_ns / self.interval_ns);
        let Source::Open(schedule) = source else {
            (tally.unsent, tally.unsent_capped) = (0, false);
            return;
        };
        let mut counted = 0u64;
        let mut next = pending.or_else(|| schedule.next_ticket());
        // Counted while the schedule gives tickets; one that paused (see
        // [`WorkerSchedule::next_ticket`]) or holds more than can be counted is capped.
        let capped = |schedule: &WorkerSchedule| !schedule.is_over();
        while let Some(ticket) = next {
            if counted == UNSENT_COUNTED {
                (tally.unsent, tally.unsent_capped) = (counted, true);
                return;
            }
            let seq = self.seq(ticket, tally);
            let op = self.only_op.unwrap_or_else(|| self.workload.op_for(seq));
            let phase = if ticket.intended_ns < self.end.warmup_ns {
                Phase::Warmup
            } else {
                Phase::Measure
            };
            records.ops[op][phase.index()].record_error(ErrorClass::Unsent, || {
                format!(
                    "never sent: the client was still {:.3} s behind its schedule {} s after \
                     the last intended start",
                    now_ns.saturating_sub(ticket.intended_ns) as f64 / 1e9,
                    SEND_GRACE.as_secs()
                )
            });
            counted += 1;
            next = schedule.next_ticket();
        }
        (tally.unsent, tally.unsent_capped) = (counted, capped(schedule));
    }

    /// The workload's sequence number of `ticket`: after the rows a populate wrote. One
    /// beyond u64 saturates, and `tally` notes the overflow.
    fn seq(&self, ticket: Ticket, tally: &mut Tally) -> u64 {
        self.first_seq.checked_add(ticket.seq).unwrap_or_else(|| {
            tally.overflowed = true;
            u64::MAX
        })
    }

    /// When to wake for `ticket`: its intended start, or, when that is still ahead and
    /// requests within the send resolution follow it, the intended start of the last of
    /// them, so that they leave together.
    fn wake_for(
        &self,
        schedule: &mut WorkerSchedule,
        ticket: Ticket,
        now: impl FnOnce() -> u64,
    ) -> u64 {
        if self.send_resolution_ns > 0 && ticket.intended_ns > now() {
            schedule.last_within(ticket.intended_ns, self.send_resolution_ns)
        } else {
            ticket.intended_ns
        }
    }

    /// Hands every interval before `index` to the collector.
    fn hand_over(&self, current: &mut u64, records: &mut Records, index: u64) {
        while *current < index {
            let finished =
                std::mem::replace(records, Records::empty(records.ops.len(), self.hiccups));
            let _ = self.tx.send(Message::Part {
                worker: self.worker,
                index: *current,
                records: finished,
                complete: true,
            });
            *current += 1;
        }
    }

    /// Sends the ticket's request. Its future is boxed: with the driver's inside it, it is
    /// over 4 kB, and the set of requests in flight would copy it twice on its way in; a box
    /// is copied once and the set then moves a pointer (bench/instructions.py: 2 000 fewer
    /// instructions of memcpy per request).
    fn start(
        &self,
        ticket: Ticket,
        tally: &mut Tally,
    ) -> InFlight<impl Future<Output = Answer> + '_> {
        let seq = self.seq(ticket, tally);
        let op = self.only_op.unwrap_or_else(|| self.workload.op_for(seq));
        let phase = if ticket.intended_ns < self.end.warmup_ns {
            Phase::Warmup
        } else {
            Phase::Measure
        };
        tally.sent += 1;
        let send_ns = self.clock.now_ns();
        InFlight::new(
            self.send(op, seq),
            op,
            phase,
            ticket.intended_ns,
            send_ns,
            self.timeout_ns,
        )
    }

    async fn send(&self, op: usize, seq: u64) -> Answer {
        let mut parts = Parts::default();
        let result = self.workload.execute(op, seq, &mut parts).await;
        Answer {
            done_ns: self.clock.now_ns(),
            error: result.err().map(|e| (ErrorClass::of(&e), e.to_string())),
            parts,
        }
    }
}

/// Records one finished request in its interval's statistics, and each of its steps under
/// their own op types; with `recall`, the recall its answer noted (0 when it failed or noted
/// none: a request timed out has no answer to judge).
fn record(ops: &mut [[OpHistograms; 2]], done: Completion, recall: bool) {
    let phase = done.phase.index();
    let wait_ns = done.send_ns.saturating_sub(done.intended_ns);
    for (i, part) in done.parts.iter().enumerate() {
        let stats = &mut ops[part.op][phase];
        // Only the first step waited to be sent; the others follow the step before.
        let lead_ns = if i == 0 { wait_ns } else { 0 };
        if i == 0 {
            stats.record_wait(wait_ns);
        }
        match &done.error {
            Some((class, message)) if part.failed => stats.record_error(*class, || message.clone()),
            _ => stats.record_ok(lead_ns + part.elapsed_ns, part.elapsed_ns),
        }
    }
    let stats = &mut ops[done.op][phase];
    stats.record_wait(wait_ns);
    if recall {
        let answered = done.error.is_none();
        stats.record_recall(done.parts.recall().filter(|_| answered).unwrap_or(0.0));
    }
    match done.error {
        None => stats.record_ok(
            done.done_ns.saturating_sub(done.intended_ns),
            done.done_ns.saturating_sub(done.send_ns),
        ),
        Some((class, message)) => stats.record_error(class, || message),
    }
}
