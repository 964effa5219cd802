//! headroom's own workload format: a YAML file of schema statements, named generators, named
//! operations (CQL or a batch of statements, weight, consistency, bind-variable generators)
//! and a populate count. See docs/workloads.md.
//!
//! ```yaml
//! schema:
//!   - CREATE TABLE IF NOT EXISTS {keyspace}.keyvalue (key text PRIMARY KEY, value text)
//! generators:
//!   key: uniform(1M)
//! operations:
//!   write:
//!     cql: INSERT INTO {keyspace}.keyvalue (key, value) VALUES (?, ?)
//!     args: [key, text(100..200)]
//!   read:
//!     cql: SELECT key, value FROM {keyspace}.keyvalue WHERE key = ?
//!     args: [key]
//!     weight: 0.2
//! populate: 100k
//! ```
//!
//! The file as written is [`raw`], checked into [`model`] ([`parse`]); [`grammar`] reads its
//! generators, [`values`] draws their values, [`bounds`] says how large they can get, and
//! [`bind`](mod@bind) fits them to the variables' CQL types when the statements are prepared;
//! [`vector_file`] holds the vectors a `vector_file(...)` generator reads from a file. This
//! file prepares a checked file against a session and sends its requests.

pub mod bind;
pub mod bounds;
pub mod grammar;
pub mod model;
pub mod raw;
pub mod values;
pub mod vector_file;

pub use model::{load, parse, Checked};

use scylla::errors::ExecutionError;
use scylla::frame::response::result::ColumnType;
use scylla::statement::batch::BatchType;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use scylla::value::CqlValue;

use super::common::error::WorkloadError;
use super::common::generators::{request_rng, TextPool};
use super::common::mix::{OpMix, Operations};
use super::common::schema::{
    await_agreement, create_keyspace, drop_keyspace, is_plain_name, run_schema,
};
use super::common::send::Requests;
use super::common::statements::{
    parse_consistency, prepare, MAX_BATCH_STATEMENTS, VECTOR_POPULATE_CONCURRENCY,
};
use super::common::settings::WorkloadSettings;
use super::common::workload::{Parts, Workload};
use bind::{bind, convert, type_name};
use values::{Ctx, Drawn, Generator};

/// A workload file, prepared against a session.
pub struct Declarative {
    /// The measured requests' path.
    requests: Requests,
    operations: Operations,
    ops: Vec<PreparedOp>,
    named: Vec<Generator>,
    text: TextPool,
    seed: u64,
    /// Fewer populate writes in flight, when the populate writes vectors.
    populate_concurrency: Option<usize>,
}

/// One operation, prepared: its statements with their arguments bound to the variables'
/// types, and for a batch, a batch of the operation's type and consistency to fill.
struct PreparedOp {
    statements: Vec<PreparedWithArgs>,
    batch: Option<PreparedBatch>,
}

/// A batch operation's type, consistency, rows and per-row generators.
struct PreparedBatch {
    kind: BatchType,
    consistency: Consistency,
    rows: Generator,
    per_row: Vec<usize>,
}

struct PreparedWithArgs {
    statement: PreparedStatement,
    types: Vec<ColumnType<'static>>,
    args: Vec<Generator>,
}

impl Declarative {
    /// Runs the schema, prepares every operation and checks each argument's generator
    /// against its variable's CQL type.
    pub async fn prepare<D: Sync>(
        requests: Requests,
        checked: &Checked,
        config: &WorkloadSettings<D>,
        op_mix: Option<&[(String, f64)]>,
    ) -> Result<Declarative, WorkloadError> {
        // The file's keyspace, else --keyspace (settled into the config).
        let session = requests.session().clone();
        let ks = config.keyspace.as_str();
        if !is_plain_name(ks) {
            return Err(WorkloadError::Invalid(format!(
                "keyspace '{ks}' is not a plain CQL name (letters, digits, underscores)"
            )));
        }
        let fill = |cql: &str| cql.replace("{keyspace}", ks);
        if config.drop {
            drop_keyspace(&session, ks).await?;
        }
        let creates_keyspace = checked.spec.schema.iter().any(|s| {
            s.trim_start()
                .to_ascii_uppercase()
                .starts_with("CREATE KEYSPACE")
        });
        if !creates_keyspace {
            create_keyspace(&session, ks, &config.replication).await?;
        }
        for statement in &checked.spec.schema {
            run_schema(&session, fill(statement)).await?;
        }
        await_agreement(&session).await?;

        let default_consistency = parse_consistency(&config.consistency)?;
        let unbound: Vec<Generator> = checked.named.iter().map(|(_, g)| g.clone()).collect();
        // Every statement prepared, with its variables' types.
        let mut prepared: Vec<Vec<(PreparedStatement, Vec<ColumnType<'static>>)>> = Vec::new();
        for ((name, op), plan) in checked.spec.operations.0.iter().zip(&checked.ops) {
            let consistency = match &op.consistency {
                Some(c) => parse_consistency(c)?,
                None => default_consistency,
            };
            let mut statements = Vec::new();
            for s in &plan.statements {
                let cql = fill(&s.cql);
                let action = format!("preparing operation {name}");
                let statement = prepare(&session, &cql, consistency, &action).await?;
                let types = statement
                    .get_variable_col_specs()
                    .iter()
                    .map(|spec| spec.typ().clone())
                    .collect();
                statements.push((statement, types));
            }
            prepared.push(statements);
        }
        // A populate that writes vectors goes slowly enough for Cassandra 5.0.9's vector
        // index (see VECTOR_POPULATE_CONCURRENCY).
        let writes_vectors = prepared.get(checked.populate.1).is_some_and(|statements| {
            statements
                .iter()
                .any(|(_, types)| types.iter().any(|t| matches!(t, ColumnType::Vector { .. })))
        });
        // A named generator takes the type of the first variable it is bound to (for its
        // `default` parts); its other uses convert the value drawn.
        let mut named = Vec::with_capacity(unbound.len());
        for (k, (gen_name, g)) in checked.named.iter().enumerate() {
            let first_use = checked
                .ops
                .iter()
                .zip(&prepared)
                .find_map(|(plan, statements)| {
                    plan.statements
                        .iter()
                        .zip(statements)
                        .find_map(|(s, (_, types))| {
                            s.args
                                .iter()
                                .position(|a| *a == Generator::Named(k))
                                .map(|i| &types[i])
                        })
                });
            let bound = match first_use {
                Some(typ) => bind(g, typ, &unbound).map_err(|e| {
                    WorkloadError::Invalid(format!(
                        "generator {gen_name}: cannot bind to type {}: {e}",
                        type_name(typ)
                    ))
                })?,
                None if has_default(g) => {
                    return Err(WorkloadError::Invalid(format!(
                        "generator {gen_name}: its `default` parts take the type of a variable, but no operation binds {gen_name} to one: write its generators out"
                    )))
                }
                None => g.clone(),
            };
            named.push(bound);
        }
        let mut ops = Vec::new();
        for (((name, op), plan), statements) in checked
            .spec
            .operations
            .0
            .iter()
            .zip(&checked.ops)
            .zip(prepared)
        {
            let mut bound_statements = Vec::new();
            for (s, (statement, types)) in plan.statements.iter().zip(statements) {
                let mut args = Vec::new();
                for (i, (g, typ)) in s.args.iter().zip(&types).enumerate() {
                    let column = statement
                        .get_variable_col_specs()
                        .get_by_index(i)
                        .map(|c| c.name().to_string())
                        .unwrap_or_default();
                    args.push(bind(g, typ, &named).map_err(|e| {
                        WorkloadError::Invalid(format!(
                            "operation {name}, argument {} ({}): cannot bind to {column} of type {}: {e}",
                            i + 1,
                            s.arg_texts[i],
                            type_name(typ)
                        ))
                    })?);
                }
                bound_statements.push(PreparedWithArgs {
                    statement,
                    types,
                    args,
                });
            }
            let batch = plan.batch.as_ref().map(|b| PreparedBatch {
                kind: b.kind.batch_type(),
                consistency: match &op.consistency {
                    // Checked when the file was read.
                    Some(c) => parse_consistency(c).unwrap_or(default_consistency),
                    None => default_consistency,
                },
                rows: b.rows.clone(),
                per_row: b.per_row.clone(),
            });
            ops.push(PreparedOp {
                statements: bound_statements,
                batch,
            });
        }
        let mut weights: Vec<f64> = checked
            .spec
            .operations
            .0
            .iter()
            .map(|(_, o)| o.weight)
            .collect();
        if let Some(mix) = op_mix {
            weights = mix_weights(&checked.op_names, mix)?;
        }
        Ok(Declarative {
            requests,
            operations: Operations::with_mix(
                checked.op_names.clone(),
                weights.clone(),
                OpMix::new(&normalise(&weights)),
                checked.populate.1,
            ),
            ops,
            named,
            text: TextPool::new(config.seed),
            seed: config.seed,
            populate_concurrency: writes_vectors.then_some(VECTOR_POPULATE_CONCURRENCY),
        })
    }

    /// One statement's values in `ctx`, converted to its variables' types.
    fn values(statement: &PreparedWithArgs, ctx: &mut Ctx<'_>) -> Vec<CqlValue> {
        statement
            .args
            .iter()
            .zip(&statement.types)
            .map(|(g, typ)| {
                // Checked at prepare time: every generator converts to its variable's type.
                convert(g.draw(ctx), typ).expect("generator checked against the variable's type")
            })
            .collect()
    }

    /// Sends one statement.
    async fn send(
        &self,
        statement: &PreparedStatement,
        values: Vec<CqlValue>,
    ) -> Result<(), ExecutionError> {
        self.requests.execute(statement, values).await
    }
}

/// Whether a generator has `default` parts, which only a variable's type can fill.
fn has_default(g: &Generator) -> bool {
    *g == Generator::Default || g.children().into_iter().any(has_default)
}

/// Weights from `--ops name=w,...`: every name must be an operation; the others get 0.
pub fn mix_weights(names: &[String], mix: &[(String, f64)]) -> Result<Vec<f64>, WorkloadError> {
    let mut weights = vec![0.0; names.len()];
    for (name, w) in mix {
        let i = names.iter().position(|n| n == name).ok_or_else(|| {
            WorkloadError::Invalid(format!(
                "--ops names '{name}', which the workload does not have; its operations are {}",
                names.join(", ")
            ))
        })?;
        weights[i] = *w;
    }
    Ok(weights)
}

fn normalise(weights: &[f64]) -> Vec<f64> {
    let total: f64 = weights.iter().sum();
    weights.iter().map(|w| w / total).collect()
}

impl Workload for Declarative {
    fn operations(&self) -> &Operations {
        &self.operations
    }

    fn populate_concurrency(&self) -> Option<usize> {
        self.populate_concurrency
    }

    async fn execute(&self, op: usize, seq: u64, _parts: &mut Parts) -> Result<(), ExecutionError> {
        let plan = &self.ops[op];
        // Named generators are drawn once per request (per row, for a batch's per-row
        // ones), on first use.
        let mut ctx = Ctx::new(seq, request_rng(self.seed, seq), &self.text, &self.named);
        let Some(batch) = &plan.batch else {
            let statement = &plan.statements[0];
            let values = Self::values(statement, &mut ctx);
            return self.send(&statement.statement, values).await;
        };
        let rows = match batch.rows.draw(&mut ctx) {
            Drawn::Int(n) => n.clamp(1, MAX_BATCH_STATEMENTS as i64) as u64,
            _ => 1,
        };
        let mut items = Vec::with_capacity(rows as usize * plan.statements.len());
        for row in 0..rows {
            ctx.row = row;
            if row > 0 {
                for k in &batch.per_row {
                    ctx.memo[*k] = None;
                }
            }
            for statement in &plan.statements {
                items.push((&statement.statement, Self::values(statement, &mut ctx)));
            }
        }
        // One batch is one request: counted and timed once, whatever its rows.
        self.requests
            .batch(batch.kind, batch.consistency, &items)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
