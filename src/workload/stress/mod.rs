//! cassandra-stress user profiles, run unmodified: `headroom run profile.yaml --ops
//! 'insert=1,simple1=9'`.
//!
//! The profile's keyspace and table are created from its CQL when missing; the column types
//! are read back from system_schema; `insert` writes rows of the partitions the insert
//! section chooses (in one batch of its batchtype; counters and conditional inserts as
//! `UPDATE`), and each named query binds its `?` variables by column name from the same rows
//! (see [`values`]). A conditional UPDATE whose IF binds values reads the row's current
//! values first; a token range query reads one range of a fixed split of the ring, page by
//! page. docs/stress-profiles.md says what is supported and how it maps onto
//! cassandra-stress.
//!
//! Laid out as the other file formats: `raw.rs` the profile as written, [`model`] the profile
//! checked (with `insert.rs` and `queries.rs`, its insert and query sections), [`values`] the
//! rows it describes, this file the workload that prepares and sends; with [`distribution`]
//! (cassandra-stress's distribution grammar), [`types`] (the table's columns and their CQL
//! types), `definition.rs` (the profile and mix the command line names), `statements.rs` (the
//! CQL made of a profile) and [`multi`] (several profiles in one run).

mod definition;
pub mod distribution;
mod insert;
pub mod model;
pub mod multi;
mod queries;
pub mod raw;
mod statements;
pub mod types;
pub mod values;

pub use definition::{is_profile_path, op_names_of, resolve, StressDefinition};

use std::time::Instant;

use rand::Rng;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::statement::batch::BatchType;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use scylla::value::{CqlValue, MaybeUnset};

use self::model::{Fields, Profile};
use self::statements::{
    check_batch_kind, check_batch_size, column_types, condition_read, insert_cql, token_range_cql,
    variable_columns, ConditionRead, PREPARING,
};
use self::types::CqlType;
use self::values::{pick_rows, Rows};
use super::common::error::WorkloadError;
use super::common::generators::{request_rng, PartitionKeys};
use super::common::mix::{OpMix, Operations};
use super::common::schema::{
    await_agreement, create_keyspace, drop_keyspace, keyspace_exists, run_schema, table_columns,
    table_exists, ColumnKind,
};
use super::common::send::Requests;
use super::common::statements::{
    parse_consistency, prepare, MAX_BATCH_STATEMENTS, VECTOR_POPULATE_CONCURRENCY,
};
use super::common::settings::WorkloadSettings;
use super::common::workload::{Parts, Workload};

/// A named query, prepared.
#[derive(Debug)]
struct PreparedQuery {
    statement: PreparedStatement,
    fields: Fields,
    /// For each bind variable, its column's index in [`Rows`] order.
    columns: Vec<usize>,
    /// A variable of the partition key takes its value from the partition, whichever row.
    partition_key: Vec<bool>,
    /// For an UPDATE whose IF condition binds values: the read of the row's current values.
    read: Option<ConditionRead>,
}

/// A token range query, prepared: `SELECT token(key), columns FROM ks.table WHERE
/// token(key) > ? AND token(key) <= ?`.
#[derive(Debug)]
struct PreparedRangeQuery {
    statement: PreparedStatement,
    page_size: i32,
}

/// The ring is split into this many equal token ranges; a token range query's request reads
/// one of them whole. cassandra-stress walks the cluster's own ranges instead (see
/// [`token_range`]).
pub const TOKEN_RANGES: u64 = 256;

/// A cassandra-stress profile, ready to send requests.
#[derive(Debug)]
pub struct StressWorkload {
    /// The measured requests' path.
    requests: Requests,
    rows: Rows,
    profile: Profile,
    insert: PreparedStatement,
    /// The column (in [`Rows`] order) of each of the insert's variables.
    insert_columns: Vec<usize>,
    /// The insert binds every column in [`Rows`] order (an INSERT, not an UPDATE).
    insert_in_row_order: bool,
    queries: Vec<PreparedQuery>,
    range_queries: Vec<PreparedRangeQuery>,
    /// insert, the queries, the token range queries, then the read steps of conditional
    /// updates (recorded within their query, never dealt).
    operations: Operations,
    keys: PartitionKeys,
    seed: u64,
    consistency: Consistency,
}

impl StressWorkload {
    /// Creates the keyspace, table and extra definitions when missing, reads the table's
    /// columns, and prepares the insert and the queries.
    pub async fn prepare<D: Sync>(
        requests: Requests,
        config: &WorkloadSettings<D>,
        definition: &StressDefinition,
    ) -> Result<StressWorkload, WorkloadError> {
        let session = requests.session().clone();
        let profile = definition.parsed()?;
        let consistency = parse_consistency(&config.consistency)?;
        let (ks, table) = (profile.keyspace.as_str(), profile.table.as_str());
        let path = &definition.path;
        if config.drop {
            drop_keyspace(&session, ks).await?;
        }
        if !keyspace_exists(&session, ks).await? {
            match &profile.keyspace_definition {
                Some(cql) => run_schema(&session, cql.clone()).await?,
                // cassandra-stress needs the keyspace to exist; headroom makes it with
                // --replication instead.
                None => create_keyspace(&session, ks, &config.replication).await?,
            }
        }
        session
            .use_keyspace(ks, false)
            .await
            .map_err(WorkloadError::cql("using the profile's keyspace", ks))?;
        let created = if table_exists(&session, ks, table).await? {
            false
        } else {
            let Some(cql) = &profile.table_definition else {
                return Err(WorkloadError::Invalid(format!(
                    "{path}: table {ks}.{table} does not exist and the profile has no table_definition to create it"
                )));
            };
            run_schema(&session, cql.to_string()).await?;
            true
        };
        for cql in &profile.extra_definitions {
            match session.query_unpaged(cql.as_str(), &[]).await {
                Ok(_) => {}
                // Run again on an existing schema: cassandra-stress ignores these too.
                Err(ExecutionError::LastAttemptError(RequestAttemptError::DbError(
                    DbError::AlreadyExists { .. },
                    _,
                ))) => {}
                Err(e) => return Err(WorkloadError::cql("an extra definition", cql)(e)),
            }
        }
        await_agreement(&session).await?;

        let columns = table_columns(&session, ks, table).await?;
        if columns.is_empty() {
            return Err(WorkloadError::Invalid(format!(
                "{path}: table {ks}.{table} was not found after creating it; is `table: {table}` the table table_definition creates?"
            )));
        }
        let typed = column_types(&session, &profile, columns, path).await?;
        for spec in &profile.columns {
            if !typed.iter().any(|c| c.name == spec.name) {
                let names: Vec<&str> = typed.iter().map(|c| c.name.as_str()).collect();
                let how = if created {
                    ""
                } else {
                    " (the table existed before: use another keyspace, or --drop to recreate it, which deletes its data)"
                };
                return Err(WorkloadError::Incompatible {
                    table: format!("{ks}.{table}"),
                    workload: path.to_string(),
                    found: names.join(", "),
                    expected: format!(
                        "the column '{}' of its columnspec (line {}){how}",
                        spec.name, spec.line
                    ),
                });
            }
        }
        let rows = Rows::new(&profile, typed, config.seed);
        check_batch_size(&profile, &rows, path)?;
        check_batch_kind(&profile, &rows, path)?;

        let insert_cql = insert_cql(&profile, &rows, path)?;
        let insert = prepare(&session, &insert_cql, consistency, PREPARING).await?;
        let insert_columns = variable_columns(&insert, &rows, |name| {
            format!("{path}: insert, condition: the bind variable '{name}' is not a column of {ks}.{table}")
        })?;
        let op_names = op_names_of(definition);
        let mut queries = Vec::with_capacity(profile.queries.len());
        for query in &profile.queries {
            let statement = prepare(&session, &query.cql, consistency, PREPARING).await?;
            let columns = variable_columns(&statement, &rows, |name| {
                format!(
                    "{path}: line {}: query {}: the bind variable '{name}' is not a column of {ks}.{table}; cassandra-stress binds each ? by the column of that name and stops on this one too (NoSuchElementException): write the value in the CQL (e.g. LIMIT 10)",
                    query.line, query.name
                )
            })?;
            let partition_key = columns
                .iter()
                .map(|&i| rows.columns().nth(i).map(|c| c.kind) == Some(ColumnKind::PartitionKey))
                .collect();
            let read = if query.condition_variables > 0 {
                let step = format!("{}{}", query.name, model::READ_STEP);
                let step_op = op_names
                    .iter()
                    .position(|n| *n == step)
                    .expect("each conditional update has its read step");
                Some(
                    condition_read(&session, &statement, &rows, query, step_op, consistency)
                        .await?,
                )
            } else {
                None
            };
            queries.push(PreparedQuery {
                statement,
                fields: query.fields,
                columns,
                partition_key,
                read,
            });
        }
        let insert_in_row_order = insert_columns.iter().copied().eq(0..rows.columns().count());
        let mut range_queries = Vec::with_capacity(profile.token_range_queries.len());
        for query in &profile.token_range_queries {
            let cql = token_range_cql(ks, table, &rows, query);
            range_queries.push(PreparedRangeQuery {
                statement: prepare(&session, &cql, consistency, PREPARING).await?,
                page_size: query.page_size,
            });
        }

        // The steps have no weight of their own: the mix never deals them.
        let mut weights: Vec<f64> = definition.ops.iter().map(|(_, w)| *w).collect();
        let mut shown = weights.clone();
        for query in profile.queries.iter().filter(|q| q.condition_variables > 0) {
            weights.push(0.0);
            // A step shows in the live output whenever its query does.
            let i = op_names.iter().position(|n| *n == query.name).unwrap_or(0);
            shown.push(shown.get(i).copied().unwrap_or(0.0));
        }
        Ok(StressWorkload {
            requests,
            rows,
            insert,
            insert_in_row_order,
            insert_columns,
            queries,
            range_queries,
            operations: Operations::with_mix(op_names, shown, OpMix::new(&weights), 0),
            keys: PartitionKeys::new(config.partitions, config.partition_generator),
            seed: config.seed,
            consistency,
            profile,
        })
    }

    /// One insert: the rows the insert section selects, of the partitions it chooses, in
    /// one statement or a batch.
    async fn insert(&self, seq: u64) -> Result<(), ExecutionError> {
        let spec = &self.profile.insert;
        let values = self.insert_values(seq);
        // The UPDATE of a counter table or a conditional insert binds the row's columns in
        // its own order.
        let values: Vec<Vec<MaybeUnset<CqlValue>>> = if self.insert_in_row_order {
            values
        } else {
            values
                .iter()
                .map(|row| {
                    self.insert_columns
                        .iter()
                        .map(|&c| row[c].clone())
                        .collect()
                })
                .collect()
        };
        if values.len() == 1 {
            if spec.condition.is_some() {
                // A conditional write answers with its `[applied]` row; one not applied
                // (the row is there already) is a success, as cassandra-stress counts it.
                self.requests.fetch(&self.insert, &values[0]).await?;
                return Ok(());
            }
            return self.requests.execute(&self.insert, &values[0]).await;
        }
        let kind = spec.batch.batch_type();
        for chunk in values.chunks(MAX_BATCH_STATEMENTS as usize) {
            self.send_batch(kind, chunk).await?;
        }
        Ok(())
    }

    /// The rows insert `seq` writes: of each partition it chooses, the rows its visit covers
    /// (all of them without `visits`) selected with the `select` chance, each row's non-key
    /// columns past the `row-population` share left unset.
    fn insert_values(&self, seq: u64) -> Vec<Vec<MaybeUnset<CqlValue>>> {
        let mut rng = request_rng(self.seed, seq);
        let spec = &self.profile.insert;
        let count = spec.partitions.sample(&mut rng);
        let mut values = Vec::new();
        for i in 0..count {
            // In sequence, insert n covers partitions n·max .. n·max + count.
            let place = seq.wrapping_mul(spec.partitions.max()).wrapping_add(i);
            let (partition, rows) = if spec.visits.max() <= 1 {
                let partition = self.rows.partition(self.keys.key(place, &mut rng));
                let all = 0..partition.rows;
                (partition, all)
            } else {
                self.visit(place)
            };
            let chance = spec.select.sample(&mut rng);
            let wanted = (chance * (rows.end - rows.start) as f64).round() as u64;
            // Drawn apart from the request's stream, which stays as it was without the key.
            let populated = self.populated_columns(seq, i);
            for row in pick_rows(&mut rng, rows.end - rows.start, wanted) {
                let row = self.rows.row(&partition, rows.start + row);
                values.push(
                    row.into_iter()
                        .enumerate()
                        .map(|(c, v)| {
                            if c < populated {
                                MaybeUnset::Set(v)
                            } else {
                                MaybeUnset::Unset
                            }
                        })
                        .collect(),
                );
            }
        }
        values
    }

    /// The partition and rows of place `place` when partitions are written in several visits
    /// (cassandra-stress's `visits`): `visits.max()` consecutive places make one slot, whose
    /// partition is chosen by the slot alone; a partition drawing V visits has its rows cut
    /// into V consecutive parts, and visit k writes part k mod V. So with `visits: fixed(V)`
    /// and `partitions: fixed(N)`, V·N consecutive places write N partitions whole, each in V
    /// inserts, and no request depends on another.
    fn visit(&self, place: u64) -> (values::Partition, std::ops::Range<u64>) {
        let spec = &self.profile.insert;
        let most = spec.visits.max();
        let (slot, k) = (place / most, place % most);
        let mut slot_rng = request_rng(self.seed ^ VISITS, slot);
        let partition = self.rows.partition(self.keys.key(slot, &mut slot_rng));
        let mut partition_rng = request_rng(self.seed ^ VISITS, values::mix(partition.number));
        let visits = spec.visits.sample(&mut partition_rng).max(1);
        let range = visit_rows(partition.rows, visits, k % visits);
        (partition, range)
    }

    /// How many of a row's columns (in insert order: keys first) insert `seq` writes in its
    /// partition `i`: the keys, and of the T other columns the k-th when k / T is within the
    /// `row-population` ratio drawn for this partition and insert, as cassandra-stress does.
    fn populated_columns(&self, seq: u64, i: u64) -> usize {
        let ratio = &self.profile.insert.row_population;
        let total = self.rows.columns().count();
        if ratio.max() >= 1.0 {
            return total;
        }
        let keys = self
            .rows
            .columns()
            .filter(|c| matches!(c.kind, ColumnKind::PartitionKey | ColumnKind::Clustering))
            .count();
        let others = total - keys;
        let mut rng = request_rng(self.seed ^ ROW_POPULATION, values::mix(seq) ^ i);
        let share = ratio.sample(&mut rng);
        keys + (1..=others)
            .take_while(|&k| k as f64 / others as f64 <= share)
            .count()
    }

    /// One named query, its variables bound from the rows of one partition: all from one
    /// row (samerow), or each from a row of its own (multirow).
    async fn query(
        &self,
        query: &PreparedQuery,
        seq: u64,
        parts: &mut Parts,
    ) -> Result<(), ExecutionError> {
        if let Some(read) = &query.read {
            return self.conditional_update(query, read, seq, parts).await;
        }
        let mut rng = request_rng(self.seed, seq);
        let partition = self.rows.partition(self.keys.key(seq, &mut rng));
        let same_row = rng.random_range(0..partition.rows);
        let values: Vec<CqlValue> = query
            .columns
            .iter()
            .zip(&query.partition_key)
            .map(|(&column, &is_key)| {
                let row = match query.fields {
                    Fields::MultiRow if !is_key => rng.random_range(0..partition.rows),
                    _ => same_row,
                };
                self.rows.value(column, &partition, row)
            })
            .collect();
        self.requests.execute(&query.statement, &values).await
    }

    /// A conditional update whose IF binds values, as cassandra-stress's CASQuery: one row
    /// of one partition; its conditioned columns' current values are read first (a step of
    /// the request, recorded under `NAME-read`) and bound to the condition, the generated
    /// values to the rest. A missing row binds nulls. The answer's `[applied]` row is read.
    async fn conditional_update(
        &self,
        query: &PreparedQuery,
        read: &ConditionRead,
        seq: u64,
        parts: &mut Parts,
    ) -> Result<(), ExecutionError> {
        let mut rng = request_rng(self.seed, seq);
        let partition = self.rows.partition(self.keys.key(seq, &mut rng));
        let row = rng.random_range(0..partition.rows);
        let keys: Vec<CqlValue> = read
            .keys
            .iter()
            .map(|&c| self.rows.value(c, &partition, row))
            .collect();
        let start = Instant::now();
        let current = match self.requests.fetch(&read.statement, &keys).await {
            Ok(answer) => answer,
            Err(e) => {
                parts.push(read.step_op, start.elapsed(), true);
                return Err(e);
            }
        };
        parts.push(read.step_op, start.elapsed(), false);
        let current = current.rows.into_iter().next();
        let values: Vec<Option<CqlValue>> = query
            .columns
            .iter()
            .enumerate()
            .map(|(i, &column)| match i.checked_sub(read.first) {
                None => Some(self.rows.value(column, &partition, row)),
                Some(j) => current.as_ref().and_then(|r| r.get(j).cloned().flatten()),
            })
            .collect();
        self.requests.fetch(&query.statement, &values).await?;
        Ok(())
    }

    /// One token range query: a range of the ring's fixed split, drawn from the seed and
    /// `seq`, read whole, `page_size` rows a page.
    async fn token_range_query(
        &self,
        query: &PreparedRangeQuery,
        seq: u64,
    ) -> Result<(), ExecutionError> {
        let mut rng = request_rng(self.seed, seq);
        let (start, end) = token_range(rng.random_range(0..TOKEN_RANGES));
        self.requests
            .scan(&query.statement, (start, end), query.page_size)
            .await?;
        Ok(())
    }

    /// The insert statement for each row of `rows`, in one BATCH of `kind`.
    async fn send_batch(
        &self,
        kind: BatchType,
        rows: &[Vec<MaybeUnset<CqlValue>>],
    ) -> Result<(), ExecutionError> {
        let items: Vec<(&PreparedStatement, &Vec<MaybeUnset<CqlValue>>)> =
            rows.iter().map(|row| (&self.insert, row)).collect();
        self.requests.batch(kind, self.consistency, &items).await?;
        Ok(())
    }
}

/// Range `i` of the ring's split into [`TOKEN_RANGES`] equal ranges of Murmur3 tokens, as
/// (start, end]: the first starts at the ring's lowest token (which Murmur3 never gives a
/// key), the last ends at its highest.
pub fn token_range(i: u64) -> (i64, i64) {
    let n = TOKEN_RANGES as i128;
    let i = (i % TOKEN_RANGES) as i128;
    let width = (1i128 << 64) / n;
    let start = i64::MIN as i128 + i * width;
    let end = if i == n - 1 {
        i64::MAX as i128
    } else {
        start + width
    };
    (start as i64, end as i64)
}

/// Tags separating the streams of `visits` and `row-population` from the request's own.
const VISITS: u64 = 0x5157_0000_0000_0001;
const ROW_POPULATION: u64 = 0x9090_0000_0000_0002;

/// Rows `part` of `rows` cut into `parts` consecutive parts (at least one row each: a
/// partition of fewer rows than parts has its rows written again by the parts past them).
fn visit_rows(rows: u64, parts: u64, part: u64) -> std::ops::Range<u64> {
    if rows < parts {
        let row = part % rows.max(1);
        return row..row + 1;
    }
    let at = |k: u64| (k as u128 * rows as u128 / parts as u128) as u64;
    at(part)..at(part + 1)
}

impl Workload for StressWorkload {
    fn operations(&self) -> &Operations {
        &self.operations
    }

    /// Fewer populate writes in flight for a table with a vector column, which Cassandra
    /// 5.0.9's vector index fails under concurrent writes (see VECTOR_POPULATE_CONCURRENCY).
    fn populate_concurrency(&self) -> Option<usize> {
        self.rows
            .columns()
            .any(|c| matches!(c.ty, CqlType::Vector(..)))
            .then_some(VECTOR_POPULATE_CONCURRENCY)
    }

    async fn execute(&self, op: usize, seq: u64, parts: &mut Parts) -> Result<(), ExecutionError> {
        let queries = self.queries.len();
        match op {
            0 => self.insert(seq).await,
            q if q <= queries => self.query(&self.queries[q - 1], seq, parts).await,
            t => {
                self.token_range_query(&self.range_queries[t - 1 - queries], seq)
                    .await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranges tile the whole ring: each starts where the one before ends, the first at
    /// the lowest token (which Murmur3 never gives), the last at the highest.
    #[test]
    fn token_ranges_split_the_ring_evenly() {
        assert_eq!(token_range(0).0, i64::MIN);
        assert_eq!(token_range(TOKEN_RANGES - 1).1, i64::MAX);
        for i in 1..TOKEN_RANGES {
            assert_eq!(token_range(i).0, token_range(i - 1).1, "range {i}");
        }
        let width = |i| token_range(i).1 as i128 - token_range(i).0 as i128;
        assert_eq!(width(0), 1i128 << 56);
        assert_eq!(width(TOKEN_RANGES - 1), (1i128 << 56) - 1);
        assert_eq!(token_range(TOKEN_RANGES + 3), token_range(3));
    }

    #[test]
    fn visits_cut_a_partition_into_consecutive_parts_covering_every_row() {
        for (rows, parts) in [(12, 3), (10, 3), (100, 7), (2, 5), (1, 1)] {
            let mut covered = vec![0; rows as usize];
            for k in 0..parts {
                let range = visit_rows(rows, parts, k);
                assert!(
                    !range.is_empty() && range.end <= rows,
                    "{rows}/{parts}: {range:?}"
                );
                for r in range {
                    covered[r as usize] += 1;
                }
            }
            assert!(
                covered.iter().all(|&c| c >= 1),
                "{rows}/{parts}: {covered:?}"
            );
            if rows >= parts {
                assert!(
                    covered.iter().all(|&c| c == 1),
                    "{rows}/{parts}: {covered:?}"
                );
            }
        }
        assert_eq!(visit_rows(12, 3, 1), 4..8);
    }
}
