//! A request in flight, with the engine's own timeout.
//!
//! The driver could time each request out itself, but it would arm a timer per request (a
//! timer-wheel entry, its registration and removal, and clock reads). A worker's requests
//! share one timeout and leave in order, so the worker keeps one timer, for the oldest
//! deadline among its requests, and expires what is overdue when it fires: the request's
//! future is dropped (the driver forgets the answer when it comes) and a timeout error is
//! recorded in its place.
//!
//! The request's two ends live here too: the [`Answer`] the workload's execution gives back
//! and the [`Completion`] this future yields, so that the worker depends on this module and
//! not the other way round.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::metrics::{ErrorClass, Phase};
use crate::workload::Parts;

/// What the workload's execution of a request gives back.
pub(super) struct Answer {
    pub(super) done_ns: u64,
    pub(super) error: Option<(ErrorClass, String)>,
    /// The steps of a compound request.
    pub(super) parts: Parts,
}

/// One request's life.
pub(super) struct Completion {
    pub(super) op: usize,
    pub(super) phase: Phase,
    pub(super) intended_ns: u64,
    pub(super) send_ns: u64,
    pub(super) done_ns: u64,
    pub(super) error: Option<(ErrorClass, String)>,
    /// The steps of a compound request, each also recorded under its own op type.
    pub(super) parts: Parts,
}

/// No deadline: the run has no request timeout.
pub(super) const NEVER: u64 = u64::MAX;

/// One request: its future (boxed, see `WorkerContext::start`), and what its completion
/// records besides the answer.
pub(super) struct InFlight<F> {
    request: Pin<Box<F>>,
    op: usize,
    phase: Phase,
    intended_ns: u64,
    send_ns: u64,
    /// `send_ns` plus the timeout, or [`NEVER`].
    pub(super) deadline_ns: u64,
    /// When it was found overdue.
    expired_at: Option<u64>,
    /// The waker of its last pending poll, to have it polled once it has expired.
    waker: Option<Waker>,
}

impl<F> InFlight<F> {
    /// A request sent at `send_ns`; `timeout_ns` 0 means none.
    pub(super) fn new(
        request: F,
        op: usize,
        phase: Phase,
        intended_ns: u64,
        send_ns: u64,
        timeout_ns: u64,
    ) -> Self {
        InFlight {
            request: Box::pin(request),
            op,
            phase,
            intended_ns,
            send_ns,
            deadline_ns: if timeout_ns == 0 {
                NEVER
            } else {
                send_ns.saturating_add(timeout_ns)
            },
            expired_at: None,
            waker: None,
        }
    }

    /// Gives up on the request at `now_ns`: its next poll ends it with a timeout error.
    pub(super) fn expire(&mut self, now_ns: u64) {
        if self.expired_at.is_none() {
            self.expired_at = Some(now_ns);
            if let Some(waker) = self.waker.take() {
                waker.wake();
            }
        }
    }

    fn completion(&self, answer: Answer) -> Completion {
        Completion {
            op: self.op,
            phase: self.phase,
            intended_ns: self.intended_ns,
            send_ns: self.send_ns,
            done_ns: answer.done_ns,
            error: answer.error,
            parts: answer.parts,
        }
    }
}

impl<F: Future<Output = Answer>> Future for InFlight<F> {
    type Output = Completion;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Completion> {
        let this = self.get_mut();
        if let Some(done_ns) = this.expired_at {
            // Only a request with a deadline expires.
            let timeout = std::time::Duration::from_nanos(this.deadline_ns - this.send_ns);
            let message = format!(
                "no answer within {} (the client's --timeout)",
                humantime::format_duration(timeout)
            );
            return Poll::Ready(this.completion(Answer {
                done_ns,
                error: Some((ErrorClass::Timeout, message)),
                parts: Default::default(),
            }));
        }
        match this.request.as_mut().poll(cx) {
            Poll::Ready(answer) => Poll::Ready(this.completion(answer)),
            Poll::Pending => {
                if this.deadline_ns != NEVER
                    && !this.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker()))
                {
                    this.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}
