//! Why a workload of any format could not be set up: [`WorkloadError`], which says whether the
//! user can mend it (a setting, a file, a table of other columns) or the cluster failed.

/// Why a workload could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The workload's name is no built-in, no format and no file.
    #[error("unknown workload '{name}': give a built-in ({}), ycsb, or a workload file (.yaml: headroom's own format or a cassandra-stress profile)", .builtins.join(", "))]
    Unknown {
        /// The name given.
        name: String,
        /// The built-ins' names, to say which there are.
        builtins: &'static [&'static str],
    },
    /// A setting that cannot work.
    #[error("{0}")]
    Invalid(String),
    /// The table exists with other columns than the workload needs.
    #[error("table {table} exists with columns {found}, but the {workload} workload needs {expected}. Use another --keyspace, or --drop to recreate it (this deletes its data)")]
    Incompatible {
        /// keyspace.table
        table: String,
        /// The workload.
        workload: String,
        /// The columns found, `name type`.
        found: String,
        /// The columns needed.
        expected: String,
    },
    /// The server refused a statement made from the user's flags or files as invalid (a
    /// syntax error, an invalid request, a configuration error, no permission).
    #[error("the server refused {action}: {reason}\n  CQL: {cql}\n  (made from the workload and its flags: check --replication, --compaction, --keyspace, the workload file)")]
    Refused {
        /// What headroom was doing.
        action: String,
        /// The statement.
        cql: String,
        /// The server's message.
        reason: String,
    },
    /// A schema statement or a prepare failed.
    #[error("{action} failed: {reason}\n  CQL: {cql}")]
    Cql {
        /// What headroom was doing.
        action: String,
        /// The statement.
        cql: String,
        /// The server's or driver's message.
        reason: String,
    },
}

impl WorkloadError {
    /// Wraps a driver error with what was being done and the statement.
    pub(crate) fn cql<E: std::fmt::Display + 'static>(
        action: impl Into<String>,
        cql: &str,
    ) -> impl FnOnce(E) -> WorkloadError {
        let cql = cql.to_string();
        let action = action.into();
        move |e| {
            let reason = e.to_string();
            if refused_by_server(&e) {
                WorkloadError::Refused {
                    action,
                    cql,
                    reason,
                }
            } else {
                WorkloadError::Cql {
                    action,
                    cql,
                    reason,
                }
            }
        }
    }
}

/// Whether a driver error is the server refusing the statement itself (its syntax, its
/// meaning, its options, or the user's permissions), rather than failing to run it.
fn refused_by_server<E: 'static>(error: &E) -> bool {
    use scylla::errors::{DbError, ExecutionError, PrepareError, RequestAttemptError};
    let refused = |attempt: &RequestAttemptError| {
        matches!(
            attempt,
            RequestAttemptError::DbError(
                DbError::SyntaxError
                    | DbError::Invalid
                    | DbError::ConfigError
                    | DbError::Unauthorized,
                _
            )
        )
    };
    let any = error as &dyn std::any::Any;
    if let Some(ExecutionError::LastAttemptError(attempt)) = any.downcast_ref::<ExecutionError>() {
        return refused(attempt);
    }
    if let Some(PrepareError::AllAttemptsFailed { first_attempt }) =
        any.downcast_ref::<PrepareError>()
    {
        return refused(first_attempt);
    }
    false
}

impl crate::usage::Blame for WorkloadError {
    fn is_usage_error(&self) -> bool {
        matches!(
            self,
            WorkloadError::Unknown { .. }
                | WorkloadError::Invalid(_)
                | WorkloadError::Incompatible { .. }
                | WorkloadError::Refused { .. }
        )
    }
}
