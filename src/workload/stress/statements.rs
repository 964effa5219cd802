//! The CQL headroom makes of a profile, and the checks Cassandra (or cassandra-stress) would
//! make of it first: the insert (an INSERT, or an UPDATE for counters and conditions), the
//! token range queries, the read before a conditional update, each bind variable's column,
//! the batch's kind and size, and the types of the table's columns.

use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;

use super::model::{self, Profile, TokenRangeQuery};
use super::types::{self, Column, CqlType, COMPOSITE_TYPES, SUPPORTED_TYPES};
use super::values::{self, Rows};
use crate::workload::common::error::WorkloadError;
use crate::workload::common::schema::{user_types, ColumnKind, SchemaColumn};
use crate::workload::common::statements::{prepare, BatchKind, MAX_BATCH_STATEMENTS};

/// The read that comes before a conditional update binding its IF values, as in
/// cassandra-stress's CASQuery: the row's current values of the conditioned columns, bound
/// in place of the generated ones so that the condition holds unless another writer came
/// between.
#[derive(Debug)]
pub(super) struct ConditionRead {
    /// `SELECT <conditioned columns> FROM ks.table WHERE <every key column> = ?`.
    pub(super) statement: PreparedStatement,
    /// The column (in [`Rows`] order) of each of the read's variables.
    pub(super) keys: Vec<usize>,
    /// The update's variables from this one on are the condition's.
    pub(super) first: usize,
    /// The operation the read is recorded under (`NAME-read`).
    pub(super) step_op: usize,
}

/// What a failed prepare was doing.
pub(super) const PREPARING: &str = "preparing a statement";

/// A token range query's CQL: the partition key's token first (as cassandra-stress adds it to
/// count partitions), then the columns as the profile writes them (`*`: every column).
pub(super) fn token_range_cql(
    ks: &str,
    table: &str,
    rows: &Rows,
    query: &TokenRangeQuery,
) -> String {
    let keys: Vec<String> = rows
        .columns()
        .filter(|c| c.kind == ColumnKind::PartitionKey)
        .map(|c| quoted(&c.name))
        .collect();
    let token = format!("token({})", keys.join(", "));
    let columns = if query.columns == "*" {
        rows.columns()
            .map(|c| quoted(&c.name))
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        query.columns.clone()
    };
    format!("SELECT {token}, {columns} FROM {ks}.{table} WHERE {token} > ? AND {token} <= ?")
}

/// The insert's CQL. As cassandra-stress: a table with counters, or an insert with a
/// `condition`, is written with `UPDATE ks.table SET c = ? (counters: c = c + ?) WHERE
/// <key> = ? ... [condition]`; any other table with `INSERT INTO ks.table (every column)`.
pub(super) fn insert_cql(
    profile: &Profile,
    rows: &Rows,
    path: &str,
) -> Result<String, WorkloadError> {
    let (ks, table) = (&profile.keyspace, &profile.table);
    let counters = rows.columns().any(|c| c.ty == CqlType::Counter);
    if !counters && profile.insert.condition.is_none() {
        let names: Vec<String> = rows.columns().map(|c| quoted(&c.name)).collect();
        return Ok(format!(
            "INSERT INTO {ks}.{table} ({}) VALUES ({})",
            names.join(", "),
            vec!["?"; names.len()].join(", ")
        ));
    }
    let is_key = |k: ColumnKind| matches!(k, ColumnKind::PartitionKey | ColumnKind::Clustering);
    let set: Vec<String> = rows
        .columns()
        .filter(|c| !is_key(c.kind))
        .map(|c| {
            let name = quoted(&c.name);
            if c.ty == CqlType::Counter {
                format!("{name} = {name} + ?")
            } else {
                format!("{name} = ?")
            }
        })
        .collect();
    if set.is_empty() {
        return Err(WorkloadError::Invalid(format!(
            "{path}: insert, condition: {ks}.{table} has only key columns, so there is no UPDATE to put the condition on (cassandra-stress refuses it too)"
        )));
    }
    let keys: Vec<String> = rows
        .columns()
        .filter(|c| is_key(c.kind))
        .map(|c| format!("{} = ?", quoted(&c.name)))
        .collect();
    let mut cql = format!(
        "UPDATE {ks}.{table} SET {} WHERE {}",
        set.join(", "),
        keys.join(" AND ")
    );
    if let Some(condition) = &profile.insert.condition {
        cql.push(' ');
        cql.push_str(condition);
    }
    Ok(cql)
}

/// The column (in [`Rows`] order) of each variable of a prepared statement, by its name as
/// cassandra-stress binds them; `not_a_column` words the error for a variable that is not.
pub(super) fn variable_columns(
    statement: &PreparedStatement,
    rows: &Rows,
    not_a_column: impl Fn(&str) -> String,
) -> Result<Vec<usize>, WorkloadError> {
    statement
        .get_variable_col_specs()
        .iter()
        .map(|spec| {
            rows.index_of(spec.name())
                .ok_or_else(|| WorkloadError::Invalid(not_a_column(spec.name())))
        })
        .collect()
}

/// The read before a conditional update: the current values of the columns its last
/// `condition_variables` variables are compared with, in that order, by the row's whole
/// primary key.
pub(super) async fn condition_read(
    session: &Session,
    update: &PreparedStatement,
    rows: &Rows,
    query: &model::Query,
    step_op: usize,
    consistency: Consistency,
) -> Result<ConditionRead, WorkloadError> {
    let specs = update.get_variable_col_specs();
    let first = specs.len().saturating_sub(query.condition_variables);
    let conditioned: Vec<String> = specs.iter().skip(first).map(|s| quoted(s.name())).collect();
    let key_columns: Vec<(usize, String)> = rows
        .columns()
        .enumerate()
        .filter(|(_, c)| matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering))
        .map(|(i, c)| (i, format!("{} = ?", quoted(&c.name))))
        .collect();
    let cql = format!(
        "SELECT {} FROM {} WHERE {}",
        conditioned.join(", "),
        update.get_table_spec().map_or_else(
            || "".to_string(),
            |t| format!("{}.{}", t.ks_name(), t.table_name())
        ),
        key_columns
            .iter()
            .map(|(_, w)| w.as_str())
            .collect::<Vec<_>>()
            .join(" AND ")
    );
    Ok(ConditionRead {
        statement: prepare(session, &cql, consistency, PREPARING).await?,
        keys: key_columns.into_iter().map(|(i, _)| i).collect(),
        first,
        step_op,
    })
}

/// Refuses an insert whose batches Cassandra would refuse: counter updates go only in a
/// COUNTER batch, and a COUNTER batch takes nothing else. One row per insert needs no batch.
pub(super) fn check_batch_kind(
    profile: &Profile,
    rows: &Rows,
    path: &str,
) -> Result<(), WorkloadError> {
    let insert = &profile.insert;
    let per_partition = ((insert.select.max() * rows.max_rows() as f64).round() as u64).max(1);
    let most = per_partition.saturating_mul(insert.partitions.max());
    if most <= 1 {
        return Ok(());
    }
    let counters = rows.columns().any(|c| c.ty == CqlType::Counter);
    let table = format!("{}.{}", profile.keyspace, profile.table);
    match (counters, insert.batch) {
        (true, BatchKind::Logged | BatchKind::Unlogged) => Err(WorkloadError::Invalid(format!(
            "{path}: insert, batchtype: {table} has counter columns and an insert can write {most} rows, which Cassandra takes only in a COUNTER batch: write batchtype: COUNTER"
        ))),
        (false, BatchKind::Counter) => Err(WorkloadError::Invalid(format!(
            "{path}: insert, batchtype: COUNTER batches take only counter updates, and {table} has no counter column: write LOGGED or UNLOGGED"
        ))),
        _ => Ok(()),
    }
}

/// Refuses, as cassandra-stress does, a LOGGED insert that can exceed Cassandra's limit of
/// statements in a batch; an UNLOGGED one is sent in several batches instead.
pub(super) fn check_batch_size(
    profile: &Profile,
    rows: &Rows,
    path: &str,
) -> Result<(), WorkloadError> {
    let insert = &profile.insert;
    // A visit writes its part of the partition: 1/visits of its rows, as cassandra-stress
    // counts them.
    let part = rows.max_rows().div_ceil(insert.visits.min().max(1));
    let per_partition = ((insert.select.max() * part as f64).round() as u64).max(1);
    let most = per_partition.saturating_mul(insert.partitions.max());
    if insert.batch == BatchKind::Logged && most > MAX_BATCH_STATEMENTS {
        return Err(WorkloadError::Invalid(format!(
            "{path}: an insert can write {most} rows ({} partitions × {per_partition} rows), more than the {MAX_BATCH_STATEMENTS} statements a LOGGED batch can hold: lower insert.partitions, insert.select or the cluster counts, or use batchtype: UNLOGGED",
            insert.partitions.max()
        )));
    }
    Ok(())
}

/// A column name as CQL must write it to keep its case.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The columns with their types read (user types through system_schema.types); a type
/// headroom cannot generate values for is an error naming the column, and so is a
/// collection whose `size` can exceed [`values::MAX_ELEMENTS`] elements.
pub(super) async fn column_types(
    session: &Session,
    profile: &Profile,
    columns: Vec<SchemaColumn>,
    path: &str,
) -> Result<Vec<Column>, WorkloadError> {
    let (ks, table) = (profile.keyspace.as_str(), profile.table.as_str());
    let udts = if columns.iter().any(|c| CqlType::parse(&c.ty).is_none()) {
        user_types(session, ks).await?
    } else {
        types::UserTypes::new()
    };
    let mut typed = Vec::with_capacity(columns.len());
    for SchemaColumn { name, kind, ty } in columns {
        let cql_type = types::parse_type(&ty, ks, &udts).map_err(|part| {
            WorkloadError::Invalid(format!(
                "{path}: column {name} of {ks}.{table} has type {ty}, for which headroom cannot generate values ({part}); the types it can: {SUPPORTED_TYPES}, and {COMPOSITE_TYPES} of them"
            ))
        })?;
        let collection = matches!(
            cql_type,
            CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)
        );
        let size = profile.column(&name).size;
        if collection && size.max() > values::MAX_ELEMENTS {
            return Err(WorkloadError::Invalid(format!(
                "{path}: column {name} of {ks}.{table} is a collection whose size {size} can draw more than {} elements: lower its columnspec size (a collection's size is its element count)",
                values::MAX_ELEMENTS
            )));
        }
        typed.push(Column {
            name,
            kind,
            ty: cql_type,
        });
    }
    Ok(typed)
}
