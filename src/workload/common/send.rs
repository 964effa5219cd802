//! How a workload's measured requests reach the cluster: [`Requests`], one front for every
//! format, which sends through headroom's native sender when the run has one and through the
//! scylla driver otherwise.
//!
//! A workload says what it needs of the answer, and no more: [`Requests::execute`] reads
//! nothing of it (most requests), [`Requests::fetch`] the first page of rows (a read whose
//! values the workload uses, a lightweight transaction's `[applied]`), [`Requests::scan`]
//! every page, counting the rows, and [`Requests::batch`] sends several prepared statements in
//! one BATCH. The driver is the fallback where the native sender cannot serve a request: it
//! serves all four kinds, so there is none today but a run whose native connections could not
//! be opened (`--sender auto` then says so).

use std::sync::Arc;

use scylla::client::session::Session;
use scylla::errors::ExecutionError;
use scylla::serialize::row::SerializeRow;
use scylla::statement::batch::{Batch, BatchStatement, BatchType};
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;

pub use crate::client::answer::Answer;
use crate::client::native::NativeClient;

/// The measured requests' path: the run's native sender if it has one, else the driver.
#[derive(Clone, Debug)]
pub struct Requests {
    session: Arc<Session>,
    native: Option<Arc<NativeClient>>,
}

impl Requests {
    /// Requests through `native` when given, else through `session`'s driver.
    pub fn new(session: Arc<Session>, native: Option<Arc<NativeClient>>) -> Requests {
        Requests { session, native }
    }

    /// The driver's session, for schema statements and preparing.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// Whether the native sender carries the requests.
    pub fn is_native(&self) -> bool {
        self.native.is_some()
    }

    /// One EXECUTE of a prepared statement; the answer's rows are not read.
    pub async fn execute(
        &self,
        statement: &PreparedStatement,
        values: impl SerializeRow,
    ) -> Result<(), ExecutionError> {
        match &self.native {
            Some(native) => native.execute(statement, values).await,
            None => self
                .session
                .execute_unpaged(statement, values)
                .await
                .map(|_| ()),
        }
    }

    /// One EXECUTE whose first page of rows is wanted.
    pub async fn fetch(
        &self,
        statement: &PreparedStatement,
        values: impl SerializeRow,
    ) -> Result<Answer, ExecutionError> {
        match &self.native {
            Some(native) => native.fetch(statement, values).await,
            None => Ok(Answer::of_driver(
                self.session.execute_unpaged(statement, values).await?,
            )?),
        }
    }

    /// A BATCH of `kind` at `consistency`: each prepared statement with its values. The
    /// answer has rows only for a conditional batch (its `[applied]`).
    pub async fn batch<V: SerializeRow>(
        &self,
        kind: BatchType,
        consistency: Consistency,
        items: &[(&PreparedStatement, V)],
    ) -> Result<Answer, ExecutionError> {
        match &self.native {
            Some(native) => native.batch(kind, consistency, items).await,
            None => {
                let mut batch = Batch::new(kind);
                let mut values = Vec::with_capacity(items.len());
                for (statement, v) in items {
                    batch.append_statement(BatchStatement::PreparedStatement((*statement).clone()));
                    values.push(v);
                }
                batch.set_consistency(consistency);
                // The statements' profile: for the engine's, no driver timeout (the engine
                // times each request out itself).
                if let Some((first, _)) = items.first() {
                    batch.set_execution_profile_handle(
                        first.get_execution_profile_handle().cloned(),
                    );
                }
                if let Some(serial) = items.first().and_then(|(s, _)| s.get_serial_consistency()) {
                    batch.set_serial_consistency(Some(serial));
                }
                batch.set_is_idempotent(false);
                Ok(Answer::of_driver(
                    self.session.batch(&batch, values).await?,
                )?)
            }
        }
    }

    /// Every page of a query, `page_size` rows a page; the rows read.
    pub async fn scan(
        &self,
        statement: &PreparedStatement,
        values: impl SerializeRow,
        page_size: i32,
    ) -> Result<u64, ExecutionError> {
        match &self.native {
            Some(native) => native.scan(statement, values, page_size).await,
            None => {
                use scylla::response::PagingState;
                let mut statement = statement.clone();
                statement.set_page_size(page_size.max(1));
                let mut paging = PagingState::start();
                let mut rows = 0u64;
                loop {
                    let (result, next) = self
                        .session
                        .execute_single_page(&statement, &values, paging)
                        .await?;
                    rows += result
                        .into_rows_result()
                        .map(|r| r.rows_num() as u64)
                        .unwrap_or(0);
                    match next.into_paging_control_flow() {
                        std::ops::ControlFlow::Continue(state) => paging = state,
                        std::ops::ControlFlow::Break(()) => return Ok(rows),
                    }
                }
            }
        }
    }
}
