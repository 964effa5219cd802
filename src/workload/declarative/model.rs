//! A workload file checked, before any connection: its named generators read and checked
//! (no circle, each argument of the kind it takes, sizes within bounds), its operations'
//! statements and batches, and its populate count ([`Checked`]).

use std::path::Path;

use super::bounds;
use super::grammar;
use super::raw::{OpSpec, Populate, RowsText, Spec};
use super::values::{Generator, Kind};
use super::vector_file;
use crate::workload::common::cql_names::created_table;
use crate::workload::common::error::WorkloadError;
use crate::workload::common::statements::{parse_consistency, BatchKind, MAX_BATCH_STATEMENTS};

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
    // Files the generators name are relative to the workload file's folder.
    let base = Path::new(origin).parent();
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
        let g = grammar::parse_in(text, &names, base)
            .map_err(|e| bad(format!("generator {name}: {e}")))?;
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
    let declared = vector_file::declared_vectors(&spec.schema);
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
                let g = grammar::parse_in(a, &names, base).map_err(|e| {
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
            check_vector_files(cql, &args, &declared, &generators)
                .map_err(|e| bad_op(format!("{which}{e}")))?;
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
        Some(RowsText::Text(t)) => grammar::count(t, names).map_err(|e| format!("rows: {e}"))?,
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

/// Refuses, before connecting, a `vector_file` whose vectors are not of the dimension of the
/// column its variable is for, where the schema and the CQL show both (the prepared
/// statements' metadata checks every other case).
fn check_vector_files(
    cql: &str,
    args: &[Generator],
    declared: &[(String, usize)],
    named: &[Generator],
) -> Result<(), String> {
    let columns = vector_file::marker_columns(cql);
    for (i, g) in args.iter().enumerate() {
        let g = match g {
            Generator::Named(k) => &named[*k],
            g => g,
        };
        let Generator::VectorFile { file, .. } = g else {
            continue;
        };
        let Some(Some(column)) = columns.get(i) else {
            continue;
        };
        if let Some((_, dim)) = declared.iter().find(|(n, _)| n == column) {
            if file.dim() != *dim {
                return Err(format!(
                    "argument {} (vector_file('{}')): the file holds vectors of dimension {}, but {column} is a vector of {dim}",
                    i + 1,
                    file.written,
                    file.dim()
                ));
            }
        }
    }
    Ok(())
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
        Generator::VectorFile {
            index: Some(index), ..
        } => int("vector_file's index", index)?,
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
        self.spec
            .schema
            .iter()
            .find_map(|statement| Some(created_table(statement)?.table.to_string()))
    }
}
