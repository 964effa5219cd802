//! Classes of failed requests. A failure is data: it is counted by class, per window and
//! operation type, and the first message of each class is kept as an example.

use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use serde::{Deserialize, Serialize};

/// What kind of failure a request met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The server's read or write timeout, or the client's request timeout.
    Timeout,
    /// Not enough replicas alive for the consistency level.
    Unavailable,
    /// The coordinator refused the request because it is overloaded (or rate limited).
    Overloaded,
    /// A replica failed to read or write (e.g. tombstone overflow, disk failure).
    Failure,
    /// No connection, a broken connection, or no free stream on one.
    Connection,
    /// Anything else.
    Other,
    /// Never sent: the client was still behind its schedule when sending stopped, a grace
    /// period after the last intended start (see `engine::SEND_GRACE`).
    Unsent,
}

impl ErrorClass {
    /// Every class, in report order.
    pub const ALL: [ErrorClass; 7] = [
        ErrorClass::Timeout,
        ErrorClass::Unavailable,
        ErrorClass::Overloaded,
        ErrorClass::Failure,
        ErrorClass::Connection,
        ErrorClass::Other,
        ErrorClass::Unsent,
    ];

    /// The class's name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Timeout => "timeout",
            ErrorClass::Unavailable => "unavailable",
            ErrorClass::Overloaded => "overloaded",
            ErrorClass::Failure => "failure",
            ErrorClass::Connection => "connection",
            ErrorClass::Other => "other",
            ErrorClass::Unsent => "unsent",
        }
    }

    /// The class of a driver error.
    pub fn of(error: &ExecutionError) -> ErrorClass {
        match error {
            ExecutionError::RequestTimeout(_) => ErrorClass::Timeout,
            ExecutionError::ConnectionPoolError(_) | ExecutionError::EmptyPlan => {
                ErrorClass::Connection
            }
            ExecutionError::LastAttemptError(attempt) => match attempt {
                RequestAttemptError::DbError(db, _) => match db {
                    DbError::ReadTimeout { .. } | DbError::WriteTimeout { .. } => {
                        ErrorClass::Timeout
                    }
                    DbError::Unavailable { .. } => ErrorClass::Unavailable,
                    DbError::Overloaded | DbError::RateLimitReached { .. } => {
                        ErrorClass::Overloaded
                    }
                    DbError::ReadFailure { .. } | DbError::WriteFailure { .. } => {
                        ErrorClass::Failure
                    }
                    _ => ErrorClass::Other,
                },
                RequestAttemptError::BrokenConnectionError(_)
                | RequestAttemptError::UnableToAllocStreamId => ErrorClass::Connection,
                _ => ErrorClass::Other,
            },
            _ => ErrorClass::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scylla::statement::Consistency;
    use std::time::Duration;

    #[test]
    fn server_and_client_errors_fall_into_their_classes() {
        let db = |e: DbError| {
            ExecutionError::LastAttemptError(RequestAttemptError::DbError(e, "msg".into()))
        };
        assert_eq!(
            ErrorClass::of(&ExecutionError::RequestTimeout(Duration::from_secs(1))),
            ErrorClass::Timeout
        );
        assert_eq!(
            ErrorClass::of(&db(DbError::WriteTimeout {
                consistency: Consistency::One,
                received: 0,
                required: 1,
                write_type: scylla::errors::WriteType::Simple,
            })),
            ErrorClass::Timeout
        );
        assert_eq!(
            ErrorClass::of(&db(DbError::Unavailable {
                consistency: Consistency::Quorum,
                required: 2,
                alive: 1
            })),
            ErrorClass::Unavailable
        );
        assert_eq!(
            ErrorClass::of(&db(DbError::Overloaded)),
            ErrorClass::Overloaded
        );
        assert_eq!(
            ErrorClass::of(&db(DbError::ReadFailure {
                consistency: Consistency::One,
                received: 0,
                required: 1,
                numfailures: 1,
                data_present: false,
            })),
            ErrorClass::Failure
        );
        assert_eq!(
            ErrorClass::of(&ExecutionError::EmptyPlan),
            ErrorClass::Connection
        );
        assert_eq!(ErrorClass::of(&db(DbError::SyntaxError)), ErrorClass::Other);
        assert_eq!(
            ErrorClass::of(&ExecutionError::LastAttemptError(
                RequestAttemptError::UnableToAllocStreamId
            )),
            ErrorClass::Connection
        );
    }
}
