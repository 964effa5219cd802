//! The [`Workload`] trait every format implements, and the steps of a compound request
//! ([`Parts`]) a format notes for the engine.
//!
//! A workload turns a sequence number into one request. Everything about request `i` (its
//! operation type, partition, values) is a function of the run's seed and `i` alone, so a run
//! repeats exactly whichever worker sends which request.

use std::future::Future;
use std::time::Duration;

use scylla::errors::ExecutionError;

use super::mix::Operations;

/// One workload, prepared against a session (schema created, statements prepared).
pub trait Workload: Send + Sync + 'static {
    /// The operation types, their mix and the populate type: the table the methods below
    /// answer from.
    fn operations(&self) -> &Operations;

    /// The operation types, by index: e.g. `["write", "read", "delete"]`.
    fn op_names(&self) -> &[String] {
        self.operations().names()
    }

    /// The operation type of request `seq`.
    fn op_for(&self, seq: u64) -> usize {
        self.operations().op_for(seq)
    }

    /// Each operation type's share of the requests, by index. Types with no share are left
    /// out of the live output.
    fn op_weights(&self) -> Vec<f64> {
        self.operations().shares().to_vec()
    }

    /// The operation type used to populate the tables before a run.
    fn populate_op(&self) -> usize {
        self.operations().populate()
    }

    /// How many populate requests may be in flight at once, when the workload needs fewer
    /// than the run's default.
    fn populate_concurrency(&self) -> Option<usize> {
        None
    }

    /// Whether requests of type `op` record a recall (an ANN query whose answer is compared
    /// with the exact neighbours): the engine then records one for each, 0 for a failed one.
    fn measures_recall(&self, op: usize) -> bool {
        self.operations().measures_recall(op)
    }

    /// Sends request `seq` of operation type `op` and waits for its answer. A compound
    /// request (YCSB's read-modify-write) also notes its steps in `parts`, each of which is
    /// then recorded under its own operation type as well.
    fn execute(
        &self,
        op: usize,
        seq: u64,
        parts: &mut Parts,
    ) -> impl Future<Output = Result<(), ExecutionError>> + Send;
}

/// One step of a compound request: its operation type, how long it took, and whether the
/// request's error (if any) happened in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// The step's operation type (an index into `op_names`).
    pub op: usize,
    /// From the step's start (the end of the step before it) to its answer.
    pub elapsed_ns: u64,
    /// The request's error happened in this step.
    pub failed: bool,
}

/// The steps of one compound request, in order; empty for a simple request (no allocation).
///
/// The engine records each step under its own operation type: its service time is its own
/// length; its response time adds, for the first step only, the request's wait before it was
/// sent. The steps' response times thus add up to the whole request's.
///
/// An ANN query also notes here the recall of its answer ([`Parts::set_recall`]).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Parts {
    steps: [Option<Part>; Parts::MAX],
    recall: Option<f32>,
}

impl Parts {
    /// The most steps a request can note.
    pub const MAX: usize = 2;

    /// Notes a step that took `elapsed`; `failed` when the request's error happened in it.
    /// Steps past [`Parts::MAX`] are a bug in the workload.
    pub fn push(&mut self, op: usize, elapsed: Duration, failed: bool) {
        let slot = self
            .steps
            .iter_mut()
            .find(|s| s.is_none())
            .expect("a request notes at most Parts::MAX steps");
        *slot = Some(Part {
            op,
            elapsed_ns: elapsed.as_nanos() as u64,
            failed,
        });
    }

    /// The steps noted, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Part> {
        self.steps.iter().map_while(Option::as_ref)
    }

    /// No step noted: a simple request.
    pub fn is_empty(&self) -> bool {
        self.steps[0].is_none()
    }

    /// Notes the recall of the request's answer, between 0 and 1.
    pub fn set_recall(&mut self, recall: f64) {
        self.recall = Some(recall.clamp(0.0, 1.0) as f32);
    }

    /// The recall noted, if any.
    pub fn recall(&self) -> Option<f64> {
        self.recall.map(f64::from)
    }
}
