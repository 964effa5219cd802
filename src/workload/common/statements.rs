//! What every format does with a statement before it sends it: the consistency level read
//! from its name, the statement prepared for the engine, and a batch's kind.

use scylla::client::session::Session;
use scylla::statement::batch::BatchType;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;

use super::error::WorkloadError;

/// Cassandra refuses batches of more statements than this.
pub const MAX_BATCH_STATEMENTS: u64 = 65_535;

/// Populate writes in flight at once for a table with a vector column. Cassandra 5.0.9's
/// vector index fails a write that finds more writes adding to the memtable's graph at once
/// than the server has cores plus one ("Number of outstanding pooled objects has gone beyond
/// the limit", CASSANDRA-21644, fixed after 5.0.9); two at once is safe on any server, where
/// the populate's default 128 fails most of its writes.
pub const VECTOR_POPULATE_CONCURRENCY: usize = 2;

/// Parses a consistency level name such as LOCAL_ONE or quorum.
pub fn parse_consistency(name: &str) -> Result<Consistency, WorkloadError> {
    Ok(match name.to_ascii_uppercase().as_str() {
        "ANY" => Consistency::Any,
        "ONE" => Consistency::One,
        "TWO" => Consistency::Two,
        "THREE" => Consistency::Three,
        "QUORUM" => Consistency::Quorum,
        "ALL" => Consistency::All,
        "LOCAL_QUORUM" => Consistency::LocalQuorum,
        "EACH_QUORUM" => Consistency::EachQuorum,
        "LOCAL_ONE" => Consistency::LocalOne,
        _ => {
            return Err(WorkloadError::Invalid(format!(
                "--consistency {name} is not a consistency level: use ONE, TWO, THREE, QUORUM, ALL, LOCAL_ONE, LOCAL_QUORUM, EACH_QUORUM or ANY"
            )))
        }
    })
}

/// Prepares `cql` at `consistency` for the engine: no retries and no driver timeout (the
/// engine times its requests out). `action` says what a failure was doing.
pub(crate) async fn prepare(
    session: &Session,
    cql: &str,
    consistency: Consistency,
    action: &str,
) -> Result<PreparedStatement, WorkloadError> {
    let mut statement = session
        .prepare(cql)
        .await
        .map_err(WorkloadError::cql(action, cql))?;
    statement.set_consistency(consistency);
    crate::client::for_the_engine(session, &mut statement);
    Ok(statement)
}

/// The type of a batch a workload sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    /// Written to the batch log first: all or nothing.
    Logged,
    /// Sent as is, without the batch log.
    Unlogged,
    /// Counter updates: the only batch Cassandra takes them in, and it takes nothing else.
    Counter,
}

impl BatchKind {
    /// `logged`, `unlogged` or `counter`, in any case; None for another word.
    pub fn parse(name: &str) -> Option<BatchKind> {
        match name.to_ascii_lowercase().as_str() {
            "logged" => Some(BatchKind::Logged),
            "unlogged" => Some(BatchKind::Unlogged),
            "counter" => Some(BatchKind::Counter),
            _ => None,
        }
    }

    /// The driver's name for it.
    pub fn batch_type(self) -> BatchType {
        match self {
            BatchKind::Logged => BatchType::Logged,
            BatchKind::Unlogged => BatchType::Unlogged,
            BatchKind::Counter => BatchType::Counter,
        }
    }
}
