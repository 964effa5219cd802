//! Reading and checking workload files, and the built-ins written in the format.

use std::path::Path;

use scylla::frame::response::result::NativeType;

use super::model::*;
use super::vector_file::tests::fvecs;
use super::*;
use crate::workload::builtin::{cql_of, OP_NAMES};
use crate::workload::common::statements::BatchKind;

fn err(text: &str) -> String {
    parse(text, "w.yaml").unwrap_err().to_string()
}

const MINIMAL: &str = "
operations:
  write:
    cql: INSERT INTO {keyspace}.t (k, v) VALUES (?, ?)
    args: [sequence(10), text(5)]
";

#[test]
fn a_minimal_file_has_defaults() {
    let checked = parse(MINIMAL, "w.yaml").unwrap();
    assert_eq!(checked.op_names, ["write"]);
    assert_eq!(checked.populate, (0, 0));
    assert_eq!(checked.spec.operations.0[0].1.weight, 1.0);
    assert_eq!(
        checked.ops[0].statements[0].args,
        [
            Generator::Sequence { min: 0, max: 9 },
            Generator::Text { min: 5, max: 5 }
        ]
    );
    assert_eq!(checked.ops[0].batch, None);
}

#[test]
fn mistakes_name_the_line_the_operation_or_the_generator() {
    let unknown_key = err("operations:\n  w:\n    cql: SELECT 1\n    wieght: 2\n");
    assert!(
        unknown_key.contains("unknown field `wieght`"),
        "{unknown_key}"
    );
    assert!(unknown_key.contains("line 4"), "{unknown_key}");
    assert!(err("schema: []\n").contains("no operations: a workload file names its operations"));
    let markers = err("operations:\n  w:\n    cql: SELECT * FROM t WHERE k = ?\n");
    assert!(
        markers.contains("operation w: the CQL has 1 bind marker(s) (?) but `args` lists 0"),
        "{markers}"
    );
    let generator =
        err("operations:\n  w:\n    cql: SELECT * FROM t WHERE k = ?\n    args: [key]\n");
    assert!(
        generator.contains("'key' is not a generator"),
        "{generator}"
    );
    assert!(
        generator.contains("nor is it one of the named generators"),
        "{generator}"
    );
    let populate = err(&format!(
        "{MINIMAL}populate: {{count: 5, operation: read}}\n"
    ));
    assert!(
        populate.contains("no operation is named 'read'; the operations are write"),
        "{populate}"
    );
    assert!(err("operations:\n  w:\n    cql: SELECT 1\n    weight: 0\n")
        .contains("every operation has weight 0"));
    assert!(err("operations:\n  w:\n    cql: SELECT 1\n    consistency: MOST\n").contains("MOST"));
    let twice = err("operations:\n  w:\n    cql: SELECT 1\n  w:\n    cql: SELECT 2\n");
    assert!(twice.contains("defined twice"), "{twice}");
}

#[test]
fn populate_takes_a_count_or_a_count_and_an_operation() {
    let with = |p: &str| {
        parse(&format!("{MINIMAL}  read:\n    cql: SELECT 1\n{p}"), "w")
            .unwrap()
            .populate
    };
    assert_eq!(with("populate: 100k\n"), (100_000, 0));
    assert_eq!(with("populate: 250\n"), (250, 0));
    assert_eq!(
        with("populate:\n  count: 2M\n  operation: read\n"),
        (2_000_000, 1)
    );
}

#[test]
fn named_generators_are_shared_by_reference() {
    let checked = parse(
        "generators:\n  key: uniform(1..100)\noperations:\n  w:\n    cql: UPDATE t SET v = ? WHERE k = ?\n    args: [text(3), key]\n",
        "w",
    )
    .unwrap();
    assert_eq!(checked.named[0].0, "key");
    assert_eq!(checked.ops[0].statements[0].args[1], Generator::Named(0));
}

#[test]
fn ops_weights_come_from_the_mix_by_name() {
    let names = ["insert".to_string(), "read".to_string()];
    let mix = [("read".to_string(), 9.0)];
    assert_eq!(mix_weights(&names, &mix).unwrap(), [0.0, 9.0]);
    let e = mix_weights(&names, &[("scan".to_string(), 1.0)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("its operations are insert, read"), "{e}");
}

/// The built-ins are expressible in the format: workloads/*.yaml state the same tables and
/// statements, operation by operation.
#[test]
fn the_builtins_are_written_in_the_format() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
    for name in ["keyvalue", "timeseries"] {
        let (_, checked) = load(&root.join(format!("{name}.yaml"))).unwrap();
        let (table, statements) = cql_of(name, "{keyspace}").unwrap();
        let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(checked.op_names, OP_NAMES, "{name}");
        assert_eq!(
            checked
                .spec
                .schema
                .iter()
                .map(|s| squash(s))
                .collect::<Vec<_>>(),
            [squash(&table)]
        );
        for ((op, spec), cql) in checked.spec.operations.0.iter().zip(&statements) {
            assert_eq!(
                squash(spec.cql.as_deref().unwrap()),
                squash(cql),
                "{name} {op}"
            );
        }
    }
}

#[test]
fn the_table_to_truncate_is_the_first_one_the_schema_creates() {
    let with = |schema: &str| {
        parse(&format!("schema:\n  - {schema}\n{MINIMAL}"), "w")
            .unwrap()
            .table()
    };
    assert_eq!(
        with("CREATE TABLE IF NOT EXISTS {keyspace}.kv (k text PRIMARY KEY)").as_deref(),
        Some("kv")
    );
    assert_eq!(
        with("create table ks.events(k int PRIMARY KEY)").as_deref(),
        Some("events")
    );
    assert_eq!(with("CREATE INDEX ON t (v)"), None);
}

/// A file of the wrong shape is described in the format's terms, not serde's type names
/// ("expected struct Spec", "untagged enum Populate").
#[test]
fn the_wrong_shape_is_named_in_the_formats_terms() {
    for (text, expected) in [
        (
            "r".to_string(),
            "expected a workload: a mapping of description",
        ),
        (
            "- a\n".to_string(),
            "expected a workload: a mapping of description",
        ),
        (
            "operations:\n  w: SELECT 1\n".to_string(),
            "expected an operation: a mapping of cql, args",
        ),
        (
            format!("{MINIMAL}populate: true\n"),
            "populate takes a count such as 100k, or a mapping of count and operation",
        ),
    ] {
        let e = err(&text);
        assert!(e.contains(expected), "{text:?}: {e}");
        for internal in ["untagged enum", "struct", "Spec", "Populate", "CountText"] {
            assert!(!e.contains(internal), "{text:?}: {e}");
        }
    }
}

/// Weights are finite one by one, but their sum was not checked: 1e308 twice made every
/// share 0 (and the mix refused to be built, a panic).
#[test]
fn weights_must_add_up_to_a_number() {
    let e = err(
        "operations:\n  a:\n    cql: SELECT 1\n    weight: 1e308\n  b:\n    cql: SELECT 2\n    weight: 1e308\n",
    );
    assert!(e.contains("weights are too large to add up"), "{e}");
    assert!(parse(
        "operations:\n  a:\n    cql: SELECT 1\n    weight: 1e300\n  b:\n    cql: SELECT 2\n",
        "w"
    )
    .is_ok());
}

const BATCH: &str = "
generators:
  device: uniform(1..100)
  reading: uniform(1..1M)
  label: concat('r-', reading)
operations:
  load:
    batch: unlogged
    rows: 1..20
    per_row: [reading]
    statements:
      - cql: INSERT INTO {keyspace}.r (device, reading, label) VALUES (?, ?, ?)
        args: [device, reading, label]
      - cql: INSERT INTO {keyspace}.by_label (label, device) VALUES (?, ?)
        args: [label, device]
";

#[test]
fn batches_have_a_type_rows_and_per_row_generators() {
    let checked = parse(BATCH, "w").unwrap();
    let op = &checked.ops[0];
    assert_eq!(op.statements.len(), 2);
    let batch = op.batch.as_ref().unwrap();
    assert_eq!(batch.kind, BatchKind::Unlogged);
    assert_eq!(batch.rows, Generator::Uniform { min: 1, max: 20 });
    // reading, and label derived from it; not device. Names are in name order.
    let names: Vec<&str> = batch
        .per_row
        .iter()
        .map(|k| checked.named[*k].0.as_str())
        .collect();
    assert_eq!(names, ["label", "reading"]);
    let with_cql = "operations:\n  b:\n    batch: LOGGED\n    rows: 5\n    cql: INSERT INTO t (k) VALUES (?)\n    args: [uuid]\n";
    let checked = parse(with_cql, "w").unwrap();
    assert_eq!(
        checked.ops[0].batch.as_ref().unwrap().rows,
        Generator::Const(5)
    );
}

#[test]
fn batch_mistakes_are_named() {
    let e = err(&BATCH.replace("batch: unlogged", "batch: atomic"));
    assert!(
        e.contains("operation load: batch 'atomic' is not a batch type"),
        "{e}"
    );
    let e = err(&BATCH.replace("rows: 1..20", "rows: 1..40000"));
    assert!(e.contains("a batch can hold 80000 statements"), "{e}");
    let e = err(&BATCH.replace("per_row: [reading]", "per_row: [readings]"));
    assert!(e.contains("per_row names 'readings', which is not a named generator; they are device, label, reading"), "{e}");
    let e = err(&BATCH.replace("    batch: unlogged\n", ""));
    assert!(e.contains("belong to a batch"), "{e}");
    let e = err(&BATCH.replace("batch: unlogged", "batch: counter"));
    assert!(
        e.contains("a counter batch holds counter updates only"),
        "{e}"
    );
    let e = err(&BATCH.replace("rows: 1..20", "rows: text(5)"));
    assert!(e.contains("rows: "), "{e}");
    let e = err("operations:\n  b:\n    batch: logged\n");
    assert!(e.contains("it has no `cql`"), "{e}");
    let e = err(&BATCH.replace("statements:", "cql: SELECT 1\n    statements:"));
    assert!(e.contains("either `cql`"), "{e}");
    let e = err(&BATCH.replace("statements:\n      - cql:", "statements:\n      - sql:"));
    assert!(e.contains("unknown field `sql`"), "{e}");
}

#[test]
fn derived_generators_are_checked_when_the_file_is_read() {
    let e = err(
        "generators:\n  a: concat(b)\n  b: prefix(a, 2)\noperations:\n  w:\n    cql: SELECT 1\n",
    );
    assert!(
        e.contains("derive from one another in a circle: a → b → a") || e.contains("a → b → a"),
        "{e}"
    );
    let e = err("generators:\n  a: add(text(3), 1)\noperations:\n  w:\n    cql: SELECT 1\n");
    assert!(
        e.contains("generator a: arithmetic takes an integer, not a text"),
        "{e}"
    );
    let e = err(
        "generators:\n  a: text(3)\noperations:\n  w:\n    cql: SELECT ?\n    args: [list(a)]\n",
    );
    assert!(e.contains("a count takes an integer, not a text"), "{e}");
    let e = err("generators:\n  my-key: uuid\noperations:\n  w:\n    cql: SELECT 1\n");
    assert!(e.contains("generator 'my-key': a name is letters"), "{e}");
    let e = err("operations:\n  w:\n    cql: SELECT ?\n    args: [\"concat(list(2), 'x')\"]\n");
    assert!(e.contains("concat takes single values"), "{e}");
}

/// The examples of docs/workloads.md that are whole workloads read and check.
#[test]
fn the_documented_examples_are_valid_workloads() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/workloads.md"))
            .unwrap();
    let mut checked = 0;
    for block in doc.split("```yaml\n").skip(1) {
        let block = block.split("```").next().unwrap();
        if block.contains("operations:") {
            parse(block, "docs/workloads.md").unwrap_or_else(|e| panic!("{e}\n{block}"));
            checked += 1;
        }
    }
    assert!(checked >= 3, "{checked}");
}

// Vector search: ANN query ops, vectors from a file.

fn vector_of(dimensions: u16) -> ColumnType<'static> {
    ColumnType::Vector {
        typ: Box::new(ColumnType::Native(NativeType::Float)),
        dimensions,
    }
}

/// The components `g` draws for request `seq` of a run of `seed`.
fn draw(g: &Generator, seed: u64, seq: u64) -> Vec<f64> {
    let pool = TextPool::new(seed);
    let mut ctx = Ctx::new(seq, request_rng(seed, seq), &pool, &[]);
    let Drawn::List(items) = g.draw(&mut ctx) else {
        panic!()
    };
    items
        .into_iter()
        .map(|x| match x {
            Drawn::Real(x) => x,
            other => panic!("{other:?}"),
        })
        .collect()
}

/// A file of `n` vectors of `dim` components, vector i's components all i + 1.
fn numbered(dir: &Path, name: &str, n: usize, dim: usize) -> String {
    let rows: Vec<Vec<f32>> = (0..n).map(|i| vec![i as f32 + 1.0; dim]).collect();
    fvecs(&dir.join(name), &rows);
    dir.join(name).to_str().unwrap().to_string()
}

#[test]
fn a_file_s_pick_is_a_function_of_the_seed_and_the_request() {
    let dir = tempfile::tempdir().unwrap();
    let file = numbered(dir.path(), "q.fvecs", 50, 3);
    let picked =
        grammar::parse(&format!("vector_file('{file}')"), &[])
            .unwrap();
    let firsts: Vec<f64> = (0..200).map(|seq| draw(&picked, 7, seq)[0]).collect();
    // Again, in another order: the same vectors.
    for seq in (0..200).rev() {
        assert_eq!(draw(&picked, 7, seq)[0], firsts[seq as usize]);
    }
    // Spread over the file, and another seed picks others.
    let distinct: std::collections::BTreeSet<u64> = firsts.iter().map(|x| *x as u64).collect();
    assert!(distinct.len() > 30, "{distinct:?}");
    assert!((0..200).any(|seq| draw(&picked, 8, seq)[0] != firsts[seq as usize]));
    // With an index: vector INDEX mod the file's length, whatever the seed.
    let indexed = grammar::parse(
        &format!("vector_file('{file}', sequence(1000))"),
        &[],
    )
    .unwrap();
    for seq in [0, 1, 49, 50, 777] {
        assert_eq!(draw(&indexed, 1, seq), vec![(seq % 50) as f64 + 1.0; 3]);
        assert_eq!(draw(&indexed, 2, seq), draw(&indexed, 1, seq));
    }
    // Bound to a vector of the file's dimension: floats; to another, refused.
    let bound = bind(&picked, &vector_of(3), &[]).unwrap();
    let pool = TextPool::new(1);
    let mut ctx = Ctx::new(0, request_rng(1, 0), &pool, &[]);
    let Some(CqlValue::Vector(v)) = convert(bound.draw(&mut ctx), &vector_of(3)) else {
        panic!()
    };
    assert!(matches!(v[..], [CqlValue::Float(_), _, _]));
    let e = bind(&picked, &vector_of(4), &[]).unwrap_err();
    assert!(e.contains("holds vectors of dimension 3, not 4"), "{e}");
    let e = bind(&picked, &ColumnType::Native(NativeType::Text), &[]).unwrap_err();
    assert!(e.contains("bind to a vector<float, 3>, not a text"), "{e}");
}

/// An ANN query op, its vector generated or read from a file; a file of the wrong
/// dimension refused when the workload is read, before any connection.
#[test]
fn ann_queries_parse_and_a_file_of_another_dimension_is_refused() {
    let example = include_str!("../../../workloads/vector-search.yaml");
    let checked = parse(example, "workloads/vector-search.yaml").unwrap();
    assert_eq!(checked.op_names, ["insert", "search", "search_in_category"]);
    let search = &checked.ops[1].statements[0];
    assert!(search.cql.contains("ORDER BY embedding ANN OF ? LIMIT 10"));
    let bound = bind(&search.args[0], &vector_of(64), &[]).unwrap();
    assert_eq!(draw(&bound, 1, 5).len(), 64);
    assert!(draw(&bound, 1, 5).iter().all(|x| (-1.0..=1.0).contains(x)));
    assert_eq!(checked.ops[2].statements[0].args.len(), 2);

    // The fixture that reads its vectors from a file, relative to itself.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = root.join("tests/fixtures/workloads/vector-files.yaml");
    let text = std::fs::read_to_string(&fixture).unwrap();
    let checked = parse(&text, fixture.to_str().unwrap()).unwrap();
    assert!(matches!(
        checked.ops[0].statements[0].args[1],
        Generator::VectorFile { index: Some(_), .. }
    ));

    let dir = tempfile::tempdir().unwrap();
    numbered(dir.path(), "q.fvecs", 5, 16);
    let workload = dir.path().join("w.yaml");
    let text = "schema:\n  - CREATE TABLE IF NOT EXISTS {keyspace}.t (id int PRIMARY KEY, v vector<float, 8>)\noperations:\n  search:\n    cql: SELECT id FROM {keyspace}.t ORDER BY v ANN OF ? LIMIT 10\n    args: [\"vector_file('q.fvecs')\"]\n";
    let e = parse(text, workload.to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("operation search: argument 1 (vector_file('q.fvecs')): the file holds vectors of dimension 16, but v is a vector of 8"),
        "{e}"
    );
    let e = parse(
        &text.replace("q.fvecs", "none.fvecs"),
        workload.to_str().unwrap(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("none.fvecs") && !e.contains('\n'), "{e}");
    let e = parse(
        &text.replace("'q.fvecs'", "'q.fvecs', text(3)"),
        workload.to_str().unwrap(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("vector_file's index takes an integer, not a text"),
        "{e}"
    );
    let e = parse(
        &text.replace("'q.fvecs'", "q.fvecs"),
        workload.to_str().unwrap(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("the file is quoted text"), "{e}");
}
