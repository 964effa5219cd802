//! The `vector` built-in: Cassandra 5's vector search (a `vector<float, D>` column under a
//! storage-attached index, `ORDER BY v ANN OF ? LIMIT k`), judged on recall as well as
//! latency.
//!
//! Table `vectors (id bigint PRIMARY KEY, v vector<float, D>)` with an SAI index of the chosen
//! similarity. Two operation types: `write` writes row `id`'s vector; `ann` asks for the `k`
//! rows nearest one of the query vectors and records the answer's recall@k against the exact
//! neighbours ([`data`]), which the client works out before the run (or reads from a ground
//! truth file), out of the run's timing.
//!
//! *How the truth stays true under writes.* The populate writes rows 0..rows once each (the
//! populate's request `seq` writes row `seq`); every later write rewrites a random row with
//! the vector that row already has (vector `id` is a function of the seed and `id`, or row
//! `id` of the file). The set of vectors in the table, and so every query's exact neighbours,
//! never changes, while each write still costs what a write costs the index (a new entry in
//! the memtable's graph, the old one shadowed until compaction). A run never inserts a new
//! vector: its neighbours would be true or not depending on whether its write was answered
//! before the query was, which no client can know. The table's comment names the vectors it
//! holds ([`model::VectorDefinition::table_comment`]); a table written with other vectors
//! (another seed, count, dimension, similarity or file) is refused rather than searched
//! against the wrong truth.

pub mod data;
pub mod model;

use std::sync::Arc;

use rand::Rng;
use scylla::errors::ExecutionError;
use scylla::statement::prepared::PreparedStatement;
use scylla::value::CqlValue;

pub use self::data::VectorFacts;

use self::data::Data;
use self::model::VectorDefinition;
use super::common::error::WorkloadError;
use super::common::generators::request_rng;
use super::common::mix::Operations;
use super::common::schema::{
    await_agreement, check_table_columns, create_keyspace, drop_keyspace, check_keyspace_flag,
    run_schema, table_comment, table_options,
};
use super::common::send::Requests;
use super::common::statements::{parse_consistency, prepare, VECTOR_POPULATE_CONCURRENCY};
use super::common::settings::WorkloadSettings;
use super::common::workload::{Parts, Workload};
use crate::vectors::recall::recall_at_k;

/// The workload's name on the command line.
pub const NAME: &str = "vector";
/// The table the vectors are written to.
pub const TABLE: &str = "vectors";
/// The operation types, by index.
pub const OP_NAMES: &[&str] = &["write", "ann"];
/// The ANN query's operation type.
pub const ANN_OP: &str = "ann";
const WRITE: usize = 0;
const ANN: usize = 1;


/// The vector workload, ready to send requests.
pub struct VectorWorkload {
    operations: Operations,
    data: Arc<Data>,
    /// Requests below this number are the populate's: request `seq` writes row `seq`.
    populate: u64,
    seed: u64,
    write: PreparedStatement,
    ann: PreparedStatement,
    requests: Requests,
}

impl std::fmt::Debug for VectorWorkload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorWorkload")
            .field("facts", &self.data.facts)
            .finish_non_exhaustive()
    }
}

/// The CQL of the table, without options, in keyspace `ks`.
pub fn create_table(ks: &str, dimensions: usize, options: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {ks}.{TABLE} (id bigint PRIMARY KEY, v vector<float, {dimensions}>){options}"
    )
}

/// The CQL of the index.
pub fn create_index(ks: &str, definition: &VectorDefinition) -> String {
    format!(
        "CREATE CUSTOM INDEX IF NOT EXISTS {TABLE}_v ON {ks}.{TABLE} (v) USING 'StorageAttachedIndex' \
         WITH OPTIONS = {{'similarity_function': '{}'}}",
        definition.similarity.name().to_ascii_uppercase()
    )
}

/// The write and the ANN query.
pub fn statements(ks: &str, top_k: usize) -> [String; 2] {
    [
        format!("INSERT INTO {ks}.{TABLE} (id, v) VALUES (?, ?)"),
        format!("SELECT id FROM {ks}.{TABLE} ORDER BY v ANN OF ? LIMIT {top_k}"),
    ]
}

impl VectorWorkload {
    /// Creates the keyspace, table and index when missing (or anew with `drop`), refuses a
    /// table that holds other vectors, prepares the statements, and makes the vectors and
    /// their exact neighbours.
    pub async fn prepare<D: Sync>(
        requests: Requests,
        config: &WorkloadSettings<D>,
        definition: &VectorDefinition,
    ) -> Result<VectorWorkload, WorkloadError> {
        let session = requests.session().clone();
        config.check(false).map_err(WorkloadError::Invalid)?;
        let consistency = parse_consistency(&config.consistency)?;
        let ks = &config.keyspace;
        check_keyspace_flag(ks)?;
        // The vectors and their truth first: a file that changed since the flags were read
        // is refused before the schema is touched. The exact search keeps the cores busy for
        // a while on a large set: off the runtime's thread, which the driver's connections use.
        let (for_truth, seed) = (definition.clone(), config.seed);
        let data = tokio::task::spawn_blocking(move || Data::make(&for_truth, seed))
            .await
            .map_err(|e| WorkloadError::Invalid(format!("working out the exact neighbours: {e}")))?;
        let data = Arc::new(data?);
        if config.drop {
            drop_keyspace(&session, ks).await?;
        }
        create_keyspace(&session, ks, &config.replication).await?;
        let expected = [
            ("id".to_string(), "bigint".to_string()),
            (
                "v".to_string(),
                format!("vector<float, {}>", definition.dimensions),
            ),
        ];
        check_table_columns(&session, ks, TABLE, &expected, NAME).await?;
        let comment = definition.table_comment(config.seed);
        if let Some(found) = table_comment(&session, ks, TABLE).await? {
            if found != comment {
                return Err(WorkloadError::Invalid(format!(
                    "table {ks}.{TABLE} holds other vectors ({found:?}) than this run's \
                     ({comment:?}): the exact neighbours would be wrong. Use another \
                     --keyspace, or --drop to recreate it (this deletes its data)"
                )));
            }
        }
        let mut options = table_options(config.compaction.as_deref(), config.ttl_s);
        let with_comment = format!("comment = '{}'", comment.replace('\'', "''"));
        options = if options.is_empty() {
            format!(" WITH {with_comment}")
        } else {
            format!("{options} AND {with_comment}")
        };
        run_schema(&session, create_table(ks, definition.dimensions, &options)).await?;
        run_schema(&session, create_index(ks, definition)).await?;
        await_agreement(&session).await?;

        let [write, ann] = statements(ks, definition.top_k);
        let write = prepare(&session, &write, consistency, "preparing the write").await?;
        let ann = prepare(&session, &ann, consistency, "preparing the ANN query").await?;
        let weights = vec![1.0 - config.read_ratio, config.read_ratio];
        Ok(VectorWorkload {
            operations: Operations::new(
                OP_NAMES.iter().map(|s| s.to_string()).collect(),
                weights,
                WRITE,
            )
            .with_recall(ANN),
            data,
            populate: config.populate,
            seed: config.seed,
            write,
            ann,
            requests,
        })
    }

    /// What the run searches and how its truth was found.
    pub fn facts(&self) -> &VectorFacts {
        &self.data.facts
    }
}

impl Workload for VectorWorkload {
    fn operations(&self) -> &Operations {
        &self.operations
    }

    fn populate_concurrency(&self) -> Option<usize> {
        // Every row must be written for the truth to hold; see the constant for why two.
        Some(VECTOR_POPULATE_CONCURRENCY)
    }

    async fn execute(&self, op: usize, seq: u64, parts: &mut Parts) -> Result<(), ExecutionError> {
        let mut rng = request_rng(self.seed, seq);
        let data = &self.data;
        match op {
            WRITE => {
                let rows = data.base.len() as u64;
                let id = if seq < self.populate {
                    seq % rows
                } else {
                    rng.random_range(0..rows)
                };
                let vector = data.base.get(id as usize);
                self.requests
                    .execute(&self.write, (id as i64, vector))
                    .await
            }
            ANN => {
                let q = rng.random_range(0..data.queries.len());
                let answer = self
                    .requests
                    .fetch(&self.ann, (data.queries.get(q),))
                    .await?;
                let ids: Vec<u32> = answer
                    .rows
                    .iter()
                    .filter_map(|row| match row.first() {
                        Some(Some(CqlValue::BigInt(id))) => u32::try_from(*id).ok(),
                        _ => None,
                    })
                    .collect();
                parts.set_recall(recall_at_k(&ids, data.truth(q), data.top_k));
                Ok(())
            }
            _ => unreachable!("the vector workload has two operation types"),
        }
    }
}

#[cfg(test)]
mod tests;
