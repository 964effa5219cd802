//! `--validate` in a run: the write record kept from the populate to the load's end, and the
//! final check that reads every row back (docs/validation.md).
//!
//! The record starts before the workload is prepared (the workload's requests note into
//! it), and ends after the measured run, when every fault action has ended. The final check
//! then reads the whole table at consistency ALL, page by page, and judges each key with an
//! acknowledged write: found, lost (no row, or a value older than an acknowledged write),
//! or corrupt (or, where each write is a row of its own, each acknowledged write). It is bounded in time; its time is not part of the measured run.

use std::time::{Duration, Instant};

use scylla::client::session::Session;
use scylla::response::PagingState;
use scylla::statement::Consistency;
use scylla::value::Row;

use super::observer::RunObserver;
use crate::format::group_thousands;
use crate::results::config::RunSettings;
use crate::stop::StopSignal;
use crate::validation::levels::{read_must_see_writes, replication_factors};
use crate::validation::{
    Checker, FinalCheck, FinalTally, Ledger, Reads, Recorder, Seen, Validation,
};
use crate::workload::common::checked::FinalRead;
use crate::workload::common::schema::keyspace_replication;
use crate::workload::AnyWorkload;

/// The longest the final check reads before it stops and says it is incomplete.
pub const FINAL_CHECK_LIMIT: Duration = Duration::from_secs(15 * 60);

/// Rows per page of the final check.
const PAGE_ROWS: i32 = 5000;

/// The longest one page of the final check may take, its tries again included.
const PAGE_LIMIT: Duration = Duration::from_secs(120);

/// The pause before a page that could not be read is asked for again: a node just restarted
/// answers CQL before every other node has heard it is up, and a read at ALL needs them all.
const PAGE_RETRY_PAUSE: Duration = Duration::from_secs(2);

/// What the end of a validated run needs: its record, the session and workload the final
/// check reads with, and the stop signal that cuts it short.
pub(super) struct Finishing<'a> {
    pub(super) validating: Validating,
    pub(super) session: &'a Session,
    pub(super) workload: &'a AnyWorkload,
    pub(super) stop: &'a StopSignal,
}

/// The record of a validated run, from before the populate to the final check.
pub(super) struct Validating {
    checker: Checker,
    recorder: Recorder,
}

impl Validating {
    /// Starts the record when the run validates.
    pub(super) fn start(settings: &RunSettings) -> anyhow::Result<Option<Validating>> {
        if !settings.validate {
            return Ok(None);
        }
        let (checker, recorder) = Checker::start()?;
        Ok(Some(Validating { checker, recorder }))
    }

    /// The handle the workload's requests note into.
    pub(super) fn recorder(&self) -> Recorder {
        self.recorder.clone()
    }

    /// Ends the record and reads every row back: what summary.json's `validation` says.
    pub(super) async fn finish(
        self,
        session: &Session,
        workload: &AnyWorkload,
        settings: &RunSettings,
        stop: &StopSignal,
        observer: &mut dyn RunObserver,
    ) -> Validation {
        let (ledger, counts) = self.checker.finish();
        let keyspace = &settings.workload.keyspace;
        let strong = reads_must_see_writes(session, settings).await;
        let read_sent_ns = self.recorder.now_ns();
        let final_check = match workload.final_check(keyspace) {
            Some(mut read) => {
                read.judge.prepare(&ledger);
                let check = final_check(session, &read, &ledger, read_sent_ns, stop, observer);
                Some(check.await)
            }
            None => None,
        };
        Validation {
            reads_must_see_writes: strong,
            reads: Reads::of(counts, strong),
            writes_acknowledged: ledger.acknowledged(),
            writes_unknown: ledger.unknown(),
            record_bytes: ledger.memory_bytes(),
            final_check,
        }
    }
}

/// Whether the run's reads must see every write acknowledged before them: its level for
/// both (W + R > RF), by the keyspace's replication as the cluster holds it.
async fn reads_must_see_writes(session: &Session, settings: &RunSettings) -> bool {
    let (write, read) = AnyWorkload::validation_levels(&settings.workload);
    let Ok(Some(replication)) = keyspace_replication(session, &settings.workload.keyspace).await
    else {
        return false;
    };
    match replication_factors(&replication, settings.local_dc.as_deref()) {
        Some((total, local)) => read_must_see_writes(&write, &read, total, local),
        None => false,
    }
}

/// Reads the whole table at ALL and judges each key (or write) the record holds.
async fn final_check(
    session: &Session,
    read: &FinalRead<'_>,
    ledger: &Ledger,
    read_sent_ns: u64,
    stop: &StopSignal,
    observer: &mut dyn RunObserver,
) -> FinalCheck {
    let started = Instant::now();
    let mut tally = FinalTally::new(ledger, read_sent_ns, "ALL", read.counted);
    let to_find = tally.to_find();
    observer.note(&format!(
        "Final check: reading back the {} {}, at ALL.",
        group_thousands(to_find),
        read.counted.to_find()
    ));
    let mut statement = scylla::statement::Statement::new(read.cql.as_str());
    statement.set_consistency(Consistency::All);
    statement.set_page_size(PAGE_ROWS);
    let mut paging = PagingState::start();
    let mut rows_read = 0u64;
    let mut said = Instant::now();
    loop {
        if stop.is_set() {
            tally.incomplete("stopped (Ctrl-C or SIGTERM) with rows left to read".into());
            break;
        }
        if started.elapsed() > FINAL_CHECK_LIMIT {
            tally.incomplete(format!(
                "stopped after {} s with rows left to read",
                FINAL_CHECK_LIMIT.as_secs()
            ));
            break;
        }
        let Some((result, next)) =
            read_page(session, &statement, &paging, stop, observer, &mut tally).await
        else {
            break;
        };
        let rows = match result.into_rows_result() {
            Ok(rows) => rows,
            Err(e) => {
                tally.incomplete(format!("a page held no rows: {e}"));
                break;
            }
        };
        let rows = match rows.rows::<Row>() {
            Ok(rows) => rows,
            Err(e) => {
                tally.incomplete(format!("a page's rows could not be read: {e}"));
                break;
            }
        };
        for row in rows {
            let Ok(row) = row else {
                tally.row(None, Seen::Foreign);
                continue;
            };
            rows_read += 1;
            read.judge.row(row.columns, &mut tally);
        }
        if said.elapsed() > Duration::from_secs(5) {
            said = Instant::now();
            observer.note(&format!(
                "Final check: {} rows read, {} of {} {} found, {:.0} s.",
                group_thousands(rows_read),
                group_thousands(tally.found()),
                group_thousands(to_find),
                read.counted.noun(),
                started.elapsed().as_secs_f64()
            ));
        }
        match next.into_paging_control_flow() {
            std::ops::ControlFlow::Continue(state) => paging = state,
            std::ops::ControlFlow::Break(()) => break,
        }
    }
    tally.finish(started.elapsed().as_secs_f64())
}

/// One page of the final check, asked for again every [`PAGE_RETRY_PAUSE`] while it fails
/// and [`PAGE_LIMIT`] allows; `None` (and the check incomplete) when it cannot be read.
async fn read_page(
    session: &Session,
    statement: &scylla::statement::Statement,
    paging: &PagingState,
    stop: &StopSignal,
    observer: &mut dyn RunObserver,
    tally: &mut FinalTally<'_>,
) -> Option<(
    scylla::response::query_result::QueryResult,
    scylla::response::PagingStateResponse,
)> {
    let started = Instant::now();
    let mut said = false;
    loop {
        let left = PAGE_LIMIT.saturating_sub(started.elapsed());
        let page = session.query_single_page(statement.clone(), &[], paging.clone());
        match tokio::time::timeout(left, page).await {
            Ok(Ok(page)) => return Some(page),
            Ok(Err(e)) if started.elapsed() + PAGE_RETRY_PAUSE < PAGE_LIMIT && !stop.is_set() => {
                if !said {
                    said = true;
                    observer.note(&format!(
                        "Final check: a page could not be read ({e}); asking again every {} s \
                         for up to {} s.",
                        PAGE_RETRY_PAUSE.as_secs(),
                        PAGE_LIMIT.as_secs()
                    ));
                }
                tokio::time::sleep(PAGE_RETRY_PAUSE).await;
            }
            Ok(Err(e)) => {
                tally.incomplete(format!("a page could not be read: {e}"));
                return None;
            }
            Err(_) => {
                tally.incomplete(format!(
                    "a page took longer than {} s",
                    PAGE_LIMIT.as_secs()
                ));
                return None;
            }
        }
    }
}
