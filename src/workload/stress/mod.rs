//! cassandra-stress user profiles, run unmodified: `headroom run profile.yaml --ops
//! 'insert=1,simple1=9'`.
//!
//! The profile's keyspace and table are created from its CQL when missing; the column types
//! are read back from system_schema; `insert` writes rows of the partitions the insert
//! section chooses (in one batch of its batchtype; counters and conditional inserts as
//! `UPDATE`), and each named query binds its `?` variables by column name from the same rows
//! (see [`rows`]). A conditional UPDATE whose IF binds values reads the row's current
//! values first; a token range query reads one range of a fixed split of the ring, page by
//! page. docs/stress-profiles.md says what is supported and how it maps onto
//! cassandra-stress.

pub mod distribution;
pub mod model;
pub mod multi;
mod raw;
pub mod types;
pub mod values;

use std::path::Path;
use std::time::Instant;

use rand::Rng;
use scylla::client::session::Session;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::statement::batch::BatchType;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use scylla::value::{CqlValue, MaybeUnset};
use serde::{Deserialize, Serialize};

use self::model::{Fields, Profile, TokenRangeQuery, INSERT};
use self::types::{Column, CqlType, COMPOSITE_TYPES, SUPPORTED_TYPES};
use self::values::{pick_rows, Rows};
use super::common::error::WorkloadError;
use super::common::generators::{request_rng, PartitionKeys};
use super::common::mix::{OpMix, Operations};
use super::common::schema::{
    await_agreement, create_keyspace, drop_keyspace, keyspace_exists, run_schema, table_columns,
    table_exists, user_types, ColumnKind, SchemaColumn,
};
use super::common::send::Requests;
use super::common::statements::{parse_consistency, prepare, BatchKind, MAX_BATCH_STATEMENTS};
use super::{Parts, Workload, WorkloadConfig};
use crate::workload::WorkloadRequest;

/// `--keyspace` when not given: a profile's own keyspace replaces it.
use crate::workload::DEFAULT_KEYSPACE;

/// A cassandra-stress profile as stored in config.json: its text, so that a run can be
/// repeated from config.json alone, and the operation mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StressDefinition {
    /// The profile's path, as given.
    pub path: String,
    /// The profile's keyspace.
    pub keyspace: String,
    /// The profile's text.
    pub profile: String,
    /// Each operation's weight, in the profile's order: insert, then the queries.
    pub ops: Vec<(String, f64)>,
}

impl StressDefinition {
    /// The profile's table.
    pub fn table(&self) -> Result<String, WorkloadError> {
        Ok(self.parsed()?.table)
    }

    /// The profile, parsed (it was checked when the definition was made).
    fn parsed(&self) -> Result<Profile, WorkloadError> {
        Profile::parse(&self.profile)
            .map_err(|e| WorkloadError::Invalid(format!("{}: {e}", self.path)))
    }
}

/// Whether the WORKLOAD argument names a cassandra-stress profile: a .yaml or .yml file
/// whose top-level mapping has no `operations` key (that key marks headroom's own format).
pub fn is_profile_path(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if !(lower.ends_with(".yaml") || lower.ends_with(".yml")) {
        return false;
    }
    // An unreadable file is this format's to report.
    crate::usage::read_input_file(Path::new(name), "the profile")
        .map_or(true, |text| model::is_stress_profile(&text))
}

/// Reads the profile `path` and the operation mix from the command line.
pub fn resolve(path: &str, args: &WorkloadRequest) -> Result<StressDefinition, WorkloadError> {
    let text = crate::usage::read_input_file(Path::new(path), "the profile")
        .map_err(|e| WorkloadError::Invalid(e.to_string()))?;
    let profile =
        Profile::parse(&text).map_err(|e| WorkloadError::Invalid(format!("{path}: {e}")))?;
    refuse_foreign_flags(args)?;
    let names = profile.op_names();
    let steps = profile.step_names();
    let ops = match &args.op_mix {
        None if names.len() == 1 => vec![(INSERT.to_string(), 1.0)],
        None => {
            let example: Vec<String> = names.iter().map(|n| format!("{n}=1")).collect();
            return Err(WorkloadError::Invalid(format!(
                "{path} has the operations {}: give their mix with --ops, e.g. --ops '{}'",
                names.join(", "),
                example.join(",")
            )));
        }
        Some(mix) => {
            let mut weights = vec![0.0; names.len()];
            let mut given = vec![false; names.len()];
            for (name, weight) in mix {
                let lower = name.to_ascii_lowercase();
                if steps.contains(&lower) {
                    return Err(WorkloadError::Invalid(format!(
                        "--ops: '{name}' is the read step of the conditional update '{}': it is recorded whenever that query runs, and has no weight of its own",
                        lower.trim_end_matches(model::READ_STEP)
                    )));
                }
                let Some(i) = names.iter().position(|n| *n == lower) else {
                    return Err(WorkloadError::Invalid(format!(
                        "--ops: '{name}' is not an operation of {path}; its operations are {}",
                        names.join(", ")
                    )));
                };
                if given[i] {
                    return Err(WorkloadError::Invalid(format!(
                        "--ops names '{name}' twice"
                    )));
                }
                given[i] = true;
                weights[i] = *weight;
            }
            names.into_iter().zip(weights).collect()
        }
    };
    Ok(StressDefinition {
        path: path.to_string(),
        keyspace: profile.keyspace.clone(),
        profile: text,
        ops,
    })
}

/// Flags of other formats, and table settings the profile's CQL owns: refused, not ignored.
fn refuse_foreign_flags(args: &WorkloadRequest) -> Result<(), WorkloadError> {
    let ycsb = "is for the ycsb workload, not a cassandra-stress profile";
    let refused = if !args.property_files.is_empty() {
        Some(format!("-P {ycsb}"))
    } else if args.ycsb_workload.is_some() {
        Some(format!("--workload {ycsb}"))
    } else if args.p.iter().any(|p| p.contains('=')) {
        Some(format!("-p KEY=VALUE {ycsb}"))
    } else if args.read_ratio.is_some_and(|r| r != 0.0) || args.delete_ratio != 0.0 {
        Some("--read-ratio and --delete-ratio are for the built-in workloads: a cassandra-stress profile's mix is --ops 'insert=W,QUERY=W,...'".to_string())
    } else if args.keyspace != DEFAULT_KEYSPACE {
        Some("--keyspace does not apply: a cassandra-stress profile names its keyspace (its `keyspace:` key)".to_string())
    } else if args.compaction.is_some() || args.ttl.is_some() {
        Some("--compaction and --ttl cannot change a cassandra-stress profile's table: write them in its table_definition".to_string())
    } else {
        None
    };
    refused.map_or(Ok(()), |why| Err(WorkloadError::Invalid(why)))
}

/// The operation names of a definition, before connecting: those of the mix, then the
/// steps recorded within them (the reads of conditional updates).
pub fn op_names_of(definition: &StressDefinition) -> Vec<String> {
    let steps = definition
        .parsed()
        .map(|p| p.step_names())
        .unwrap_or_default();
    definition
        .ops
        .iter()
        .map(|(n, _)| n.clone())
        .chain(steps)
        .collect()
}

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

/// The read that comes before a conditional update binding its IF values, as in
/// cassandra-stress's CASQuery: the row's current values of the conditioned columns, bound
/// in place of the generated ones so that the condition holds unless another writer came
/// between.
#[derive(Debug)]
struct ConditionRead {
    /// `SELECT <conditioned columns> FROM ks.table WHERE <every key column> = ?`.
    statement: PreparedStatement,
    /// The column (in [`Rows`] order) of each of the read's variables.
    keys: Vec<usize>,
    /// The update's variables from this one on are the condition's.
    first: usize,
    /// The operation the read is recorded under (`NAME-read`).
    step_op: usize,
}

/// A token range query, prepared: `SELECT token(key), columns FROM ks.table WHERE
/// token(key) > ? AND token(key) <= ?`.
#[derive(Debug)]
struct PreparedRangeQuery {
    statement: PreparedStatement,
    page_size: i32,
}

/// What a failed prepare was doing.
const PREPARING: &str = "preparing a statement";

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
    pub async fn prepare(
        requests: Requests,
        config: &WorkloadConfig,
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

/// A token range query's CQL: the partition key's token first (as cassandra-stress adds it to
/// count partitions), then the columns as the profile writes them (`*`: every column).
fn token_range_cql(ks: &str, table: &str, rows: &Rows, query: &TokenRangeQuery) -> String {
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
fn insert_cql(profile: &Profile, rows: &Rows, path: &str) -> Result<String, WorkloadError> {
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
fn variable_columns(
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
async fn condition_read(
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
fn check_batch_kind(profile: &Profile, rows: &Rows, path: &str) -> Result<(), WorkloadError> {
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

/// Refuses, as cassandra-stress does, a LOGGED insert that can exceed Cassandra's limit of
/// statements in a batch; an UNLOGGED one is sent in several batches instead.
fn check_batch_size(profile: &Profile, rows: &Rows, path: &str) -> Result<(), WorkloadError> {
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
async fn column_types(
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

impl Workload for StressWorkload {
    fn operations(&self) -> &Operations {
        &self.operations
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

    fn args(extra: &[&str], profile: &Path) -> WorkloadRequest {
        WorkloadRequest::with_flags(profile.to_str().unwrap(), extra)
    }

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/profiles")
            .join(name)
    }

    #[test]
    fn the_mix_names_the_profile_operations() {
        let path = fixture("blogposts.yaml");
        let def = resolve(
            path.to_str().unwrap(),
            &args(&["--ops", "insert=1,Timeline=2"], &path),
        )
        .unwrap();
        assert_eq!(def.keyspace, "stress_blog");
        assert_eq!(
            def.ops,
            [
                ("insert".to_string(), 1.0),
                ("timeline".to_string(), 2.0),
                ("since".to_string(), 0.0)
            ]
        );
        let err = |extra: &[&str]| {
            resolve(path.to_str().unwrap(), &args(extra, &path))
                .unwrap_err()
                .to_string()
        };
        assert!(err(&["--ops", "insert=1,read=1"]).contains("'read' is not an operation of"));
        assert!(err(&["--ops", "insert=1,read=1"])
            .contains("its operations are insert, timeline, since"));
        assert!(err(&[])
            .contains("give their mix with --ops, e.g. --ops 'insert=1,timeline=1,since=1'"));
        assert!(err(&["--ops", "insert=1,insert=2"]).contains("twice"));
        assert!(err(&["--ops", "insert=1", "-r", "0.5"]).contains("--read-ratio"));
        assert!(err(&["--ops", "insert=1", "--ttl", "1h"]).contains("table_definition"));
        assert!(err(&["--ops", "insert=1", "--keyspace", "other"]).contains("names its keyspace"));
        assert!(err(&["--ops", "insert=1", "-P", "w"]).contains("-P is for the ycsb"));
    }

    #[test]
    fn paths_are_told_apart_by_extension_and_operations_key() {
        assert!(!is_profile_path("keyvalue"));
        assert!(is_profile_path(fixture("blogposts.yaml").to_str().unwrap()));
        assert!(is_profile_path("missing.yml"), "its error is this format's");
        let own = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        std::fs::write(own.path(), "operations:\n  read: {}\n").unwrap();
        assert!(!is_profile_path(own.path().to_str().unwrap()));
        let text = resolve("missing.yml", &args(&[], Path::new("missing.yml")))
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("cannot read the profile missing.yml"),
            "{text}"
        );
    }

    #[test]
    fn a_profile_error_names_the_file_and_line() {
        let file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        std::fs::write(
            file.path(),
            "keyspace: k\ntable: t\ninsert:\n  batchsize: 3\n",
        )
        .unwrap();
        let path = file.path().to_str().unwrap();
        let text = resolve(path, &args(&[], file.path()))
            .unwrap_err()
            .to_string();
        assert!(text.starts_with(&format!("{path}: line 4: ")), "{text}");
        assert!(text.contains("unknown field `batchsize`"), "{text}");
    }

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
    fn a_read_step_takes_no_weight_and_follows_the_mix() {
        let file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        std::fs::write(
            file.path(),
            "keyspace: k\ntable: t\nqueries:\n  lwt:\n    cql: update t set v = ? where k = ? if v = ?\n    fields: samerow\ntoken_range_queries:\n  all:\n    columns: '*'\n",
        )
        .unwrap();
        let path = file.path().to_str().unwrap();
        let def = resolve(path, &args(&["--ops", "insert=1,lwt=2,all=1"], file.path())).unwrap();
        assert_eq!(op_names_of(&def), ["insert", "lwt", "all", "lwt-read"]);
        let text = resolve(path, &args(&["--ops", "insert=1,lwt-read=1"], file.path()))
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("'lwt-read' is the read step of the conditional update 'lwt'"),
            "{text}"
        );
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

    #[test]
    fn an_insert_only_profile_needs_no_mix() {
        let file = tempfile::Builder::new().suffix(".yml").tempfile().unwrap();
        std::fs::write(file.path(), "keyspace: k\ntable: t\n").unwrap();
        let path = file.path().to_str().unwrap();
        let def = resolve(path, &args(&[], file.path())).unwrap();
        assert_eq!(def.ops, [("insert".to_string(), 1.0)]);
        assert_eq!(op_names_of(&def), ["insert"]);
    }
}
