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
//! [`parse`] reads generators, [`generator`] draws their values, [`bind`] fits them to the
//! variables' CQL types when the statements are prepared.

pub mod bind;
pub mod bounds;
pub mod generator;
pub mod parse;

use std::collections::BTreeMap;
use std::path::Path;

use scylla::errors::ExecutionError;
use scylla::frame::response::result::ColumnType;
use scylla::statement::batch::BatchType;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use scylla::value::CqlValue;
use serde::Deserialize;

use super::common::error::WorkloadError;
use super::common::generators::{request_rng, TextPool};
use super::common::mix::{OpMix, Operations};
use super::common::schema::{
    await_agreement, create_keyspace, drop_keyspace, is_plain_name, run_schema,
};
use super::common::send::Requests;
use super::common::statements::{parse_consistency, prepare, BatchKind, MAX_BATCH_STATEMENTS};
use super::{Parts, Workload, WorkloadConfig};
use bind::{bind, convert, type_name};
use generator::{Ctx, Drawn, Generator, Kind};

/// A workload file, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a workload: a mapping of description, keyspace, schema, generators, operations and populate"
)]
pub struct Spec {
    /// What the workload is, for people.
    #[serde(default)]
    pub description: Option<String>,
    /// The keyspace; `--keyspace` when not given. `{keyspace}` in CQL text stands for it.
    #[serde(default)]
    pub keyspace: Option<String>,
    /// Statements run in order before the run (make them idempotent: IF NOT EXISTS). The
    /// keyspace is created first with `--replication` unless a statement creates it.
    #[serde(default)]
    pub schema: Vec<String>,
    /// Named generators: each is drawn once per request, however often its name is used.
    #[serde(default)]
    pub generators: BTreeMap<String, String>,
    /// The operations, by name, in the order written.
    pub operations: OrderedOps,
    /// Requests of the populate operation sent before the run (`--populate` overrides).
    #[serde(default)]
    pub populate: Option<Populate>,
}

/// The operations in the order the file lists them (the first is the populate default).
#[derive(Debug, Clone)]
pub struct OrderedOps(pub Vec<(String, OpSpec)>);

impl<'de> Deserialize<'de> for OrderedOps {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = OrderedOps;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of operation names to operations")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<OrderedOps, A::Error> {
                let mut ops: Vec<(String, OpSpec)> = Vec::new();
                while let Some((name, op)) = map.next_entry::<String, OpSpec>()? {
                    if ops.iter().any(|(n, _)| *n == name) {
                        return Err(serde::de::Error::custom(format!(
                            "operation '{name}' is defined twice"
                        )));
                    }
                    ops.push((name, op));
                }
                Ok(OrderedOps(ops))
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// One operation: a statement (`cql` and `args`), or a batch of statements.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an operation: a mapping of cql, args, weight and consistency (a batch: batch, rows, per_row, statements, weight and consistency)"
)]
pub struct OpSpec {
    /// The CQL, with a `?` per bind variable (or `statements`, in a batch).
    #[serde(default)]
    pub cql: Option<String>,
    /// One generator (or a named generator's name) per bind variable, in order.
    #[serde(default)]
    pub args: Vec<String>,
    /// Sends the statements as one BATCH of this type: logged, unlogged or counter.
    #[serde(default)]
    pub batch: Option<String>,
    /// Rows per batch: a count (`5`), a range (`1..20`) or an integer generator; 1 unless
    /// given. Each row is one statement (or one of each of `statements`).
    #[serde(default)]
    pub rows: Option<RowsText>,
    /// Named generators drawn again for each row of a batch (the others once per batch).
    #[serde(default)]
    pub per_row: Vec<String>,
    /// A batch's statements, each with its `cql` and `args`, written in this order per row.
    #[serde(default)]
    pub statements: Vec<StatementSpec>,
    /// The operation's share of requests, relative to the others (default 1).
    #[serde(default = "one")]
    pub weight: f64,
    /// Its consistency level; `--consistency` when not given.
    #[serde(default)]
    pub consistency: Option<String>,
}

/// One statement of a batch.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a statement of a batch: a mapping of cql and args"
)]
pub struct StatementSpec {
    /// The CQL, with a `?` per bind variable.
    pub cql: String,
    /// One generator per bind variable, in order.
    #[serde(default)]
    pub args: Vec<String>,
}

/// `rows: 5` or `rows: 1..20` or `rows: zipfian(1..50)`.
#[derive(Debug, Clone, Deserialize)]
// For an untagged enum, `expecting` is the whole message.
#[serde(
    untagged,
    expecting = "rows takes a count such as 10, a range such as 1..20 or an integer generator"
)]
pub enum RowsText {
    /// 10
    Number(u64),
    /// "1..20"
    Text(String),
}

fn one() -> f64 {
    1.0
}

/// `populate: 100k`, or `populate: {count: 100k, operation: write}`.
#[derive(Debug, Clone, Deserialize)]
// For an untagged enum, `expecting` is the whole message (in place of serde's
// "data did not match any variant of untagged enum ...").
#[serde(
    untagged,
    expecting = "populate takes a count such as 100k, or a mapping of count and operation"
)]
pub enum Populate {
    /// A count of requests of the first operation.
    Count(CountText),
    /// A count and the operation to send.
    Full {
        /// Requests to send.
        count: CountText,
        /// The operation (default: the first).
        #[serde(default)]
        operation: Option<String>,
    },
}

/// A count written as a number or with an SI suffix (`100k`).
#[derive(Debug, Clone, Deserialize)]
// For an untagged enum, `expecting` is the whole message (in place of serde's
// "data did not match any variant of untagged enum ...").
#[serde(untagged, expecting = "populate takes a count such as 100000 or 100k")]
pub enum CountText {
    /// 100000
    Number(u64),
    /// "100k"
    Text(String),
}

impl CountText {
    fn value(&self) -> Result<u64, String> {
        match self {
            CountText::Number(n) => Ok(*n),
            CountText::Text(t) => {
                crate::units::parse_count(t).map_err(|e| format!("populate: {e}"))
            }
        }
    }
}

/// A file read and checked, before any connection: op names, generators, populate.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The file as written.
    pub spec: Spec,
    /// The operation names, in file order.
    pub op_names: Vec<String>,
    /// Each operation's statements and batch, generators read.
    pub ops: Vec<CheckedOp>,
    /// The named generators, in name order.
    pub named: Vec<(String, Generator)>,
    /// The populate count and operation index.
    pub populate: (u64, usize),
}

/// One operation, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedOp {
    /// Its statements: one, or a batch's in order.
    pub statements: Vec<CheckedStatement>,
    /// How they are batched, for a batch.
    pub batch: Option<BatchPlan>,
}

/// One statement and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedStatement {
    /// The CQL as written (`{keyspace}` not yet filled in).
    pub cql: String,
    /// One generator per bind variable.
    pub args: Vec<Generator>,
    /// Each argument as written, for messages.
    pub arg_texts: Vec<String>,
}

/// The batch of a batch operation.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchPlan {
    /// LOGGED, UNLOGGED or COUNTER.
    pub kind: BatchKind,
    /// Rows per batch (at least 1 is sent).
    pub rows: Generator,
    /// The named generators drawn afresh for each row: those of `per_row` and those derived
    /// from them.
    pub per_row: Vec<usize>,
}

/// Reads a workload file's text; errors name the file's line where serde can.
pub fn parse(text: &str, origin: &str) -> Result<Checked, WorkloadError> {
    let spec: Spec = serde_yaml_ng::from_str(text).map_err(|e| {
        WorkloadError::Invalid(format!(
            "{origin}: {}",
            crate::workload::common::yaml_error::describe(&e)
        ))
    })?;
    check(spec, origin)
}

/// Reads a workload file.
pub fn load(path: &Path) -> Result<(String, Checked), WorkloadError> {
    let text = crate::usage::read_input_file(path, "the workload file")
        .map_err(|e| WorkloadError::Invalid(e.to_string()))?;
    let checked = parse(&text, &path.display().to_string())?;
    Ok((text, checked))
}

fn check(spec: Spec, origin: &str) -> Result<Checked, WorkloadError> {
    let bad = |m: String| WorkloadError::Invalid(format!("{origin}: {m}"));
    if spec.operations.0.is_empty() {
        return Err(bad("`operations` lists no operation".into()));
    }
    let names: Vec<String> = spec.generators.keys().cloned().collect();
    let mut named = Vec::new();
    for (name, text) in &spec.generators {
        if name.is_empty()
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(bad(format!(
                "generator '{name}': a name is letters, digits and underscores, not starting with a digit"
            )));
        }
        let g = parse::parse(text, &names).map_err(|e| bad(format!("generator {name}: {e}")))?;
        named.push((name.clone(), g));
    }
    let generators: Vec<Generator> = named.iter().map(|(_, g)| g.clone()).collect();
    if let Some(cycle) = find_cycle(&generators) {
        return Err(bad(format!(
            "the named generators {} derive from one another in a circle",
            cycle
                .iter()
                .map(|k| names[*k].as_str())
                .collect::<Vec<_>>()
                .join(" → ")
        )));
    }
    for (name, g) in &named {
        validate(g, &generators).map_err(|e| bad(format!("generator {name}: {e}")))?;
    }
    let mut ops = Vec::new();
    for (op, op_spec) in &spec.operations.0 {
        let bad_op = |m: String| bad(format!("operation {op}: {m}"));
        if !(op_spec.weight.is_finite() && op_spec.weight >= 0.0) {
            return Err(bad_op("the weight must be 0 or more".into()));
        }
        if let Some(c) = &op_spec.consistency {
            parse_consistency(c).map_err(|e| bad_op(e.to_string()))?;
        }
        let written: Vec<(String, Vec<String>)> =
            match (&op_spec.cql, op_spec.statements.is_empty()) {
                (Some(_), false) => {
                    return Err(bad_op(
                        "give either `cql` (with `args`) or `statements`, not both".into(),
                    ))
                }
                (Some(cql), true) => vec![(cql.clone(), op_spec.args.clone())],
                (None, false) if !op_spec.args.is_empty() => {
                    return Err(bad_op(
                        "`args` goes with `cql`; each of `statements` has its own `args`".into(),
                    ))
                }
                (None, false) => op_spec
                    .statements
                    .iter()
                    .map(|s| (s.cql.clone(), s.args.clone()))
                    .collect(),
                (None, true) => return Err(bad_op("it has no `cql` (nor `statements`)".into())),
            };
        let mut statements = Vec::new();
        for (i, (cql, texts)) in written.iter().enumerate() {
            let which = if written.len() > 1 {
                format!("statement {}: ", i + 1)
            } else {
                String::new()
            };
            let markers = cql.matches('?').count();
            if markers != texts.len() {
                return Err(bad_op(format!(
                    "{which}the CQL has {markers} bind marker(s) (?) but `args` lists {}",
                    texts.len()
                )));
            }
            let mut args = Vec::new();
            for a in texts {
                let g = parse::parse(a, &names).map_err(|e| {
                    // A bare word may have been meant as a named generator.
                    let also = if a.contains('(') {
                        ""
                    } else {
                        " (nor is it one of the named generators)"
                    };
                    bad_op(format!("{which}{e}{also}"))
                })?;
                validate(&g, &generators)
                    .map_err(|e| bad_op(format!("{which}{}: {e}", a.trim())))?;
                args.push(g);
            }
            statements.push(CheckedStatement {
                cql: cql.clone(),
                args,
                arg_texts: texts.iter().map(|t| t.trim().to_string()).collect(),
            });
        }
        let batch = match &op_spec.batch {
            None => {
                if op_spec.rows.is_some() || !op_spec.per_row.is_empty() || statements.len() > 1 {
                    return Err(bad_op(
                        "`rows`, `per_row` and `statements` belong to a batch: add `batch: logged`, `unlogged` or `counter`"
                            .into(),
                    ));
                }
                None
            }
            Some(kind) => {
                Some(batch_plan(kind, op_spec, &statements, &names, &generators).map_err(bad_op)?)
            }
        };
        ops.push(CheckedOp { statements, batch });
    }
    if spec.operations.0.iter().all(|(_, o)| o.weight == 0.0) {
        return Err(bad("every operation has weight 0".into()));
    }
    // The mix divides each weight by their sum: an infinite sum leaves every share 0.
    let total: f64 = spec.operations.0.iter().map(|(_, o)| o.weight).sum();
    if !total.is_finite() {
        return Err(bad(
            "the operations' weights are too large to add up; weights are relative, e.g. 0.8 and 0.2"
                .into(),
        ));
    }
    let op_names: Vec<String> = spec.operations.0.iter().map(|(n, _)| n.clone()).collect();
    let populate = match &spec.populate {
        None => (0, 0),
        Some(Populate::Count(c)) => (c.value().map_err(bad)?, 0),
        Some(Populate::Full { count, operation }) => {
            let index = match operation {
                None => 0,
                Some(op) => op_names.iter().position(|n| n == op).ok_or_else(|| {
                    bad(format!(
                        "populate: no operation is named '{op}'; the operations are {}",
                        op_names.join(", ")
                    ))
                })?,
            };
            (count.value().map_err(bad)?, index)
        }
    };
    Ok(Checked {
        spec,
        op_names,
        ops,
        named,
        populate,
    })
}

/// A batch operation's type, rows and per-row generators, checked.
fn batch_plan(
    kind: &str,
    op_spec: &OpSpec,
    statements: &[CheckedStatement],
    names: &[String],
    generators: &[Generator],
) -> Result<BatchPlan, String> {
    let written = kind.trim().to_ascii_lowercase();
    let kind = BatchKind::parse(&written).ok_or_else(|| {
        format!("batch '{written}' is not a batch type: write logged, unlogged or counter")
    })?;
    if kind == BatchKind::Counter {
        if let Some(s) = statements.iter().find(|s| {
            !s.cql
                .trim_start()
                .to_ascii_uppercase()
                .starts_with("UPDATE")
        }) {
            return Err(format!(
                "a counter batch holds counter updates only (UPDATE ... SET c = c + ?), not '{}'",
                s.cql.trim()
            ));
        }
    }
    let rows = match &op_spec.rows {
        None => Generator::Const(1),
        Some(RowsText::Number(n)) => Generator::Const(i64::try_from(*n).unwrap_or(i64::MAX)),
        Some(RowsText::Text(t)) => parse::count(t, names).map_err(|e| format!("rows: {e}"))?,
    };
    validate(&rows, generators).map_err(|e| format!("rows: {e}"))?;
    if rows.kind(generators) != Some(Kind::Int) {
        return Err("rows: the count is not a number, a range or an integer generator".into());
    }
    let limit = MAX_BATCH_STATEMENTS as i64;
    let most = rows.max_int().unwrap_or(limit);
    let per_batch = most.saturating_mul(statements.len() as i64);
    if per_batch > limit {
        return Err(format!(
            "a batch can hold {per_batch} statements ({most} rows × {} statements), more than the {MAX_BATCH_STATEMENTS} Cassandra accepts: lower rows",
            statements.len()
        ));
    }
    if most < 1 {
        return Err("rows: a batch has at least one row".into());
    }
    let mut per_row = Vec::new();
    for name in &op_spec.per_row {
        let k = names.iter().position(|n| n == name.trim()).ok_or_else(|| {
            format!(
                "per_row names '{name}', which is not a named generator{}",
                if names.is_empty() {
                    String::new()
                } else {
                    format!("; they are {}", names.join(", "))
                }
            )
        })?;
        per_row.push(k);
    }
    // Those derived from a per-row generator are per-row too.
    loop {
        let before = per_row.len();
        for (k, g) in generators.iter().enumerate() {
            if !per_row.contains(&k) && per_row.iter().any(|r| refers_to(g, *r)) {
                per_row.push(k);
            }
        }
        if per_row.len() == before {
            break;
        }
    }
    per_row.sort_unstable();
    Ok(BatchPlan {
        kind,
        rows,
        per_row,
    })
}

/// Whether `g` draws from named generator `k` directly.
fn refers_to(g: &Generator, k: usize) -> bool {
    *g == Generator::Named(k) || g.children().iter().any(|c| refers_to(c, k))
}

/// A circle of named generators that derive from one another, if there is one.
fn find_cycle(named: &[Generator]) -> Option<Vec<usize>> {
    fn visit(k: usize, named: &[Generator], path: &mut Vec<usize>, done: &mut [bool]) -> bool {
        if let Some(at) = path.iter().position(|p| *p == k) {
            path.drain(..at);
            path.push(k);
            return true;
        }
        if done[k] {
            return false;
        }
        path.push(k);
        for j in 0..named.len() {
            if refers_to(&named[k], j) && visit(j, named, path, done) {
                return true;
            }
        }
        path.pop();
        done[k] = true;
        false
    }
    let mut done = vec![false; named.len()];
    for k in 0..named.len() {
        let mut path = Vec::new();
        if visit(k, named, &mut path, &mut done) {
            return Some(path);
        }
    }
    None
}

/// Checks what each derived generator and count takes: arithmetic and counts take integers,
/// `concat` and `prefix` single values.
fn validate(g: &Generator, named: &[Generator]) -> Result<(), String> {
    let int = |what: &str, c: &Generator| match c.kind(named) {
        Some(Kind::Int) => Ok(()),
        Some(k) => Err(format!("{what} takes an integer, not {}", k.name())),
        None => Err(format!("{what} takes an integer, not `default`")),
    };
    match g {
        Generator::Arith { of, .. } => int("arithmetic", of)?,
        Generator::Decimal { unscaled, .. } => int("decimal", unscaled)?,
        Generator::List { count, .. }
        | Generator::Set { count, .. }
        | Generator::Map { count, .. } => int("a count", count)?,
        Generator::Prefix { of, .. } => match of.kind(named) {
            Some(Kind::Composite) | None => {
                return Err("prefix takes a single value, not a collection or `default`".into())
            }
            _ => {}
        },
        Generator::Concat(parts)
            if parts
                .iter()
                .any(|p| matches!(p.kind(named), Some(Kind::Composite) | None)) =>
        {
            return Err("concat takes single values, not collections or `default`".into());
        }
        Generator::Hash { of, .. } if of.kind(named).is_none() => {
            return Err("hash takes a value, not `default`".into())
        }
        _ => {}
    }
    g.children()
        .into_iter()
        .try_for_each(|c| validate(c, named))?;
    bounds::check(g, named)
}

impl Checked {
    /// The table the first `CREATE TABLE` of the schema creates (what `--fresh truncate`
    /// empties), without its keyspace.
    pub fn table(&self) -> Option<String> {
        self.spec.schema.iter().find_map(|statement| {
            let words: Vec<&str> = statement.split_whitespace().collect();
            let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
            if upper.first().map(String::as_str) != Some("CREATE")
                || upper.get(1).map(String::as_str) != Some("TABLE")
            {
                return None;
            }
            let at = if upper.get(2).map(String::as_str) == Some("IF") {
                5
            } else {
                2
            };
            let name = words.get(at)?.split('(').next()?;
            Some(name.rsplit('.').next()?.to_string())
        })
    }
}

/// A workload file, prepared against a session.
pub struct Declarative {
    /// The measured requests' path.
    requests: Requests,
    operations: Operations,
    ops: Vec<PreparedOp>,
    named: Vec<Generator>,
    text: TextPool,
    seed: u64,
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
    pub async fn prepare(
        requests: Requests,
        checked: &Checked,
        config: &WorkloadConfig,
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
