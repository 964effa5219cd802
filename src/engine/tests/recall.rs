//! Recall recorded per request of an operation judged for it: an answer's own, a failed or
//! timed-out request's 0, and nothing for the other types.

use std::sync::Arc;
use std::time::Duration;

use scylla::errors::ExecutionError;

use super::{config, open, run_kept};
use crate::engine::clock::TokioClock;
use crate::metrics::{Phase, RECALL_SCALE};
use crate::workload::common::mix::Operations;
use crate::workload::{Parts, Workload};

/// `write` and `ann`, half each (every other request); of the ann requests, by `(seq / 2) % 4`:
/// 0 fails, 1 outlives the timeout, 2 answers with recall 0.5, 3 with recall 1.
struct Searching {
    operations: Operations,
}

impl Workload for Searching {
    fn operations(&self) -> &Operations {
        &self.operations
    }

    async fn execute(&self, op: usize, seq: u64, parts: &mut Parts) -> Result<(), ExecutionError> {
        tokio::time::sleep(Duration::from_millis(1)).await;
        if op == 0 {
            return Ok(());
        }
        match (seq / 2) % 4 {
            0 => {
                // A failed request notes a recall it will not be credited with.
                parts.set_recall(1.0);
                Err(ExecutionError::EmptyPlan)
            }
            1 => {
                tokio::time::sleep(Duration::from_secs(5)).await;
                parts.set_recall(1.0);
                Ok(())
            }
            2 => {
                parts.set_recall(0.5);
                Ok(())
            }
            _ => {
                parts.set_recall(1.0);
                Ok(())
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn recall_is_recorded_per_request_and_a_failed_one_counts_zero() {
    let clock = TokioClock::start_now();
    let workload = Arc::new(Searching {
        operations: Operations::new(vec!["write".into(), "ann".into()], vec![0.5, 0.5], 0)
            .with_recall(1),
    });
    let config = crate::engine::EngineConfig {
        request_timeout: Some(Duration::from_millis(500)),
        ..config(open(400.0, 10_000), 10)
    };
    let (out, intervals) = run_kept(workload, clock, &config).await;
    let writes = &out.totals[0][Phase::Measure.index()];
    assert!(writes.ok > 1000);
    assert!(writes.recall.is_none(), "a write records no recall");
    let ann = &out.totals[1][Phase::Measure.index()];
    let recall = ann.recall.as_ref().expect("the ANN type records recall");
    // Every request of the type has one, failed and timed out too.
    assert_eq!(recall.len(), ann.total());
    assert!(ann.error_count() > 400, "{:?}", ann.errors);
    // A quarter of the ann requests fail and a quarter time out, each counting 0; a quarter
    // count 0.5 and a quarter 1: a mean of 0.375.
    let mean = recall.mean() / RECALL_SCALE;
    assert!((mean - 0.375).abs() < 0.01, "mean recall {mean}");
    assert_eq!(recall.min(), 0);
    assert_eq!(recall.lowest_equivalent(recall.max()), RECALL_SCALE as u64);
    assert_eq!(recall.count_at(5_000), recall.len() / 4, "a quarter at 0.5");
    // The intervals' histograms add up to the totals'.
    let per_interval: u64 = intervals
        .iter()
        .filter_map(|i| i.ops[1][Phase::Measure.index()].recall.as_ref())
        .map(|h| h.len())
        .sum();
    assert_eq!(per_interval, recall.len());
}
