//! The rows of an answer, as the workloads that read them see them: [`Answer`], made from the
//! driver's result or from a RESULT frame's body read by the native sender, both decoded by
//! the driver's own parsers.

use bytes::Bytes;
use scylla::errors::{BadQuery, ExecutionError};
use scylla::response::query_result::QueryResult;
use scylla::response::PagingStateResponse;
use scylla::serialize::SerializationError;
use scylla::value::{CqlValue, Row};
use scylla_cql::frame::response::result;

/// The rows of an answer, as CQL values by column; empty for an answer without rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// The columns' names, in order.
    pub columns: Vec<String>,
    /// The rows, each a value (None: null) per column.
    pub rows: Vec<Vec<Option<CqlValue>>>,
}

impl Answer {
    /// A conditional statement's `[applied]` (the first row's column of that name), if the
    /// answer has it.
    pub fn applied(&self) -> Option<bool> {
        match self.first("[applied]")? {
            CqlValue::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    /// The first row's value of `column`, if there is a row and the value is not null.
    pub fn first(&self, column: &str) -> Option<&CqlValue> {
        let at = self.columns.iter().position(|c| c == column)?;
        self.rows.first()?.get(at)?.as_ref()
    }

    /// The rows of the driver's `result` (none for a result that is not rows).
    pub fn of_driver(result: QueryResult) -> Result<Answer, Unreadable> {
        let Ok(rows) = result.into_rows_result() else {
            return Ok(Answer::default());
        };
        let columns = rows
            .column_specs()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        let rows = rows
            .rows::<Row>()
            .map_err(unreadable)?
            .map(|row| row.map(|r| r.columns).map_err(unreadable))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Answer { columns, rows })
    }

    /// The rows of a RESULT frame's body (protocol v4), and the paging state of the next
    /// page when there is one.
    pub fn of_frame(body: Vec<u8>) -> Result<(Answer, Option<Vec<u8>>), Unreadable> {
        if body.is_empty() {
            return Ok((Answer::default(), None));
        }
        let parsed =
            result::deserialize_with_features(Bytes::from(body), None, &Default::default())
                .map_err(unreadable)?;
        let result::Result::Rows((raw, paging)) = parsed else {
            return Ok((Answer::default(), None));
        };
        let rows = raw.deserialize_metadata().map_err(unreadable)?;
        let columns = rows
            .metadata()
            .col_specs()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        let values = rows
            .rows_iter::<Row>()
            .map_err(unreadable)?
            .map(|row| row.map(|r| r.columns).map_err(unreadable))
            .collect::<Result<Vec<_>, _>>()?;
        let next = match paging {
            PagingStateResponse::HasMorePages { state } => {
                state.as_bytes_slice().map(|s| s.to_vec())
            }
            PagingStateResponse::NoMorePages => None,
        };
        Ok((
            Answer {
                columns,
                rows: values,
            },
            next,
        ))
    }
}

/// Why an answer's rows could not be read.
#[derive(Debug, thiserror::Error)]
#[error("the answer's rows cannot be read: {0}")]
pub struct Unreadable(String);

fn unreadable(e: impl std::fmt::Display) -> Unreadable {
    Unreadable(e.to_string())
}

/// Reported as the driver reports values it cannot convert.
impl From<Unreadable> for ExecutionError {
    fn from(e: Unreadable) -> ExecutionError {
        ExecutionError::BadQuery(BadQuery::SerializationError(SerializationError::new(e)))
    }
}
