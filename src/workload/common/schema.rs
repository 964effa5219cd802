//! The schema side of every format: its statements (keyspaces, tables, their options, the
//! wait for agreement) and the one reader of system_schema, which tells whether a keyspace
//! or table exists, what columns a table has and what a keyspace's user types are.
//!
//! The readers return the driver's own error ([`SchemaReadError`]): a workload turns it into
//! a [`WorkloadError`] naming the statement, and a caller outside the workloads (the capacity
//! search's truncate) keeps it as the driver said it.

use std::collections::BTreeMap;
use std::fmt;

use scylla::client::session::Session;
use scylla::errors::{DeserializationError, ExecutionError, IntoRowsResultError, RowsError};

use super::error::WorkloadError;

/// A plain CQL name: letters, digits, underscores.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Refuses a `--keyspace` that is not a plain CQL name, naming the flag.
pub fn check_keyspace_flag(ks: &str) -> Result<(), WorkloadError> {
    if is_plain_name(ks) {
        return Ok(());
    }
    Err(WorkloadError::Invalid(format!(
        "--keyspace '{ks}' is not a plain CQL name (letters, digits, underscores)"
    )))
}

/// Runs one schema statement (CREATE, DROP).
pub(crate) async fn run_schema(session: &Session, cql: String) -> Result<(), WorkloadError> {
    session
        .query_unpaged(cql.as_str(), &[])
        .await
        .map(|_| ())
        .map_err(|e| WorkloadError::cql("a schema change", &cql)(e))
}

/// Drops keyspace `ks` if it exists (`--drop`).
pub(crate) async fn drop_keyspace(session: &Session, ks: &str) -> Result<(), WorkloadError> {
    run_schema(session, format!("DROP KEYSPACE IF EXISTS {ks}")).await
}

/// Creates keyspace `ks` with `replication` (a CQL map) unless it exists.
pub(crate) async fn create_keyspace(
    session: &Session,
    ks: &str,
    replication: &str,
) -> Result<(), WorkloadError> {
    run_schema(
        session,
        format!("CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {replication}"),
    )
    .await
}

/// Waits until every node has the schema the statements before made.
pub(crate) async fn await_agreement(session: &Session) -> Result<(), WorkloadError> {
    session
        .await_schema_agreement()
        .await
        .map(|_| ())
        .map_err(WorkloadError::cql("waiting for schema agreement", ""))
}

/// The ` WITH ...` of a table made from `--compaction` and `--ttl`, or nothing.
pub fn table_options(compaction: Option<&str>, ttl_s: Option<u32>) -> String {
    let mut options = Vec::new();
    if let Some(compaction) = compaction {
        options.push(format!("compaction = {compaction}"));
    }
    if let Some(ttl) = ttl_s {
        options.push(format!("default_time_to_live = {ttl}"));
    }
    if options.is_empty() {
        String::new()
    } else {
        format!(" WITH {}", options.join(" AND "))
    }
}

/// A read of system_schema that failed: the driver's error, as it came, and the statement.
/// It shows and chains as the driver's error alone.
#[derive(Debug)]
pub struct SchemaReadError {
    cql: &'static str,
    /// Boxed: the driver's errors are large, and a read seldom fails.
    failure: Box<ReadFailure>,
}

/// The step of a read that failed.
#[derive(Debug)]
enum ReadFailure {
    Execution(ExecutionError),
    IntoRows(IntoRowsResultError),
    Rows(RowsError),
    Row(DeserializationError),
}

impl ReadFailure {
    fn error(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            ReadFailure::Execution(e) => e,
            ReadFailure::IntoRows(e) => e,
            ReadFailure::Rows(e) => e,
            ReadFailure::Row(e) => e,
        }
    }
}

impl fmt::Display for SchemaReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.failure.error(), f)
    }
}

impl std::error::Error for SchemaReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.failure.error().source()
    }
}

impl From<SchemaReadError> for WorkloadError {
    fn from(e: SchemaReadError) -> WorkloadError {
        let (action, cql) = ("reading the schema", e.cql);
        match *e.failure {
            ReadFailure::Execution(e) => WorkloadError::cql(action, cql)(e),
            ReadFailure::IntoRows(e) => WorkloadError::cql(action, cql)(e),
            ReadFailure::Rows(e) => WorkloadError::cql(action, cql)(e),
            ReadFailure::Row(e) => WorkloadError::cql(action, cql)(e),
        }
    }
}

/// The rows system_schema answers `cql` with, as `R`.
async fn read<V, R>(
    session: &Session,
    cql: &'static str,
    values: V,
) -> Result<Vec<R>, SchemaReadError>
where
    V: scylla::serialize::row::SerializeRow,
    R: for<'f> scylla::deserialize::row::DeserializeRow<'f, 'f>,
{
    let failed = |failure| SchemaReadError {
        cql,
        failure: Box::new(failure),
    };
    let result = session
        .query_unpaged(cql, values)
        .await
        .map_err(|e| failed(ReadFailure::Execution(e)))?
        .into_rows_result()
        .map_err(|e| failed(ReadFailure::IntoRows(e)))?;
    let rows = result
        .rows::<R>()
        .map_err(|e| failed(ReadFailure::Rows(e)))?;
    rows.map(|row| row.map_err(|e| failed(ReadFailure::Row(e))))
        .collect()
}

/// Whether keyspace `ks` exists.
pub async fn keyspace_exists(session: &Session, ks: &str) -> Result<bool, SchemaReadError> {
    let cql = "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?";
    Ok(!read::<_, (String,)>(session, cql, (ks,)).await?.is_empty())
}

/// The replication map of keyspace `ks` (`class` and its factors); none when it does not
/// exist.
pub async fn keyspace_replication(
    session: &Session,
    ks: &str,
) -> Result<Option<std::collections::BTreeMap<String, String>>, SchemaReadError> {
    let cql = "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?";
    let rows: Vec<(std::collections::BTreeMap<String, String>,)> =
        read(session, cql, (ks,)).await?;
    Ok(rows.into_iter().next().map(|(r,)| r))
}

/// Whether table `ks.table` exists.
pub async fn table_exists(
    session: &Session,
    ks: &str,
    table: &str,
) -> Result<bool, SchemaReadError> {
    let cql =
        "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?";
    Ok(!read::<_, (String,)>(session, cql, (ks, table))
        .await?
        .is_empty())
}

/// The comment of table `ks.table`; none when the table does not exist.
pub async fn table_comment(
    session: &Session,
    ks: &str,
    table: &str,
) -> Result<Option<String>, SchemaReadError> {
    let cql =
        "SELECT comment FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?";
    let rows: Vec<(Option<String>,)> = read(session, cql, (ks, table)).await?;
    Ok(rows.into_iter().next().map(|(c,)| c.unwrap_or_default()))
}

/// What a column is in its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ColumnKind {
    /// Part of the partition key.
    PartitionKey,
    /// A clustering column.
    Clustering,
    /// A static column: one value per partition.
    Static,
    /// Any other column.
    Regular,
}

/// One column of a table as system_schema.columns has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaColumn {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: ColumnKind,
    /// Its type as system_schema writes it: `text` for varchar, `frozen<list<int>>`...
    pub ty: String,
}

/// The columns of `ks.table` in key order (partition key, clustering columns, each by its
/// position in the key; then static and regular columns, each by name); none when the table
/// does not exist.
pub async fn table_columns(
    session: &Session,
    ks: &str,
    table: &str,
) -> Result<Vec<SchemaColumn>, SchemaReadError> {
    let cql = "SELECT column_name, kind, position, type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?";
    let rows: Vec<(String, String, i32, String)> = read(session, cql, (ks, table)).await?;
    let mut columns: Vec<(ColumnKind, i32, SchemaColumn)> = rows
        .into_iter()
        .map(|(name, kind, position, ty)| {
            let kind = match kind.as_str() {
                "partition_key" => ColumnKind::PartitionKey,
                "clustering" => ColumnKind::Clustering,
                "static" => ColumnKind::Static,
                _ => ColumnKind::Regular,
            };
            (kind, position, SchemaColumn { name, kind, ty })
        })
        .collect();
    columns.sort_by(|a, b| (a.0, a.1, &a.2.name).cmp(&(b.0, b.1, &b.2.name)));
    Ok(columns.into_iter().map(|(_, _, c)| c).collect())
}

/// The user types of a keyspace as system_schema.types has them: name → (field names,
/// field types as text).
pub type UserTypes = BTreeMap<String, (Vec<String>, Vec<String>)>;

/// The user-defined types of keyspace `ks`.
pub async fn user_types(session: &Session, ks: &str) -> Result<UserTypes, SchemaReadError> {
    let cql = "SELECT type_name, field_names, field_types FROM system_schema.types WHERE keyspace_name = ?";
    let rows: Vec<(String, Vec<String>, Vec<String>)> = read(session, cql, (ks,)).await?;
    Ok(rows
        .into_iter()
        .map(|(name, fields, types)| (name, (fields, types)))
        .collect())
}

/// Fails when `ks.table` exists with other columns than `expected` (name, type as
/// system_schema.columns reports it, e.g. `text` for varchar).
pub(crate) async fn check_table_columns(
    session: &Session,
    ks: &str,
    table: &str,
    expected: &[(String, String)],
    workload: &str,
) -> Result<(), WorkloadError> {
    let found: BTreeMap<String, String> = table_columns(session, ks, table)
        .await?
        .into_iter()
        .map(|c| (c.name, c.ty))
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    let expected: BTreeMap<String, String> = expected.iter().cloned().collect();
    if found != expected {
        let describe = |m: &BTreeMap<String, String>| {
            m.iter()
                .map(|(n, t)| format!("{n} {t}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(WorkloadError::Incompatible {
            table: format!("{ks}.{table}"),
            workload: workload.to_string(),
            found: describe(&found),
            expected: describe(&expected),
        });
    }
    Ok(())
}
