//! Tests of [`super`]: a full profile and the defaults read, the insert and query sections'
//! keys, and each error with its key and line.

use super::super::raw::is_stress_profile;
use super::*;
use crate::workload::common::statements::BatchKind;

const FULL: &str = "\
specname: blog
keyspace: ks
keyspace_definition: |
  CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
table: posts
table_definition: |
  CREATE TABLE posts (domain text, published timeuuid, body text, PRIMARY KEY (domain, published))
extra_definitions:
  - CREATE INDEX IF NOT EXISTS ON posts (body);
columnspec:
  - name: domain
    size: gaussian(5..100)
    population: uniform(1..10M)
  - name: published
    cluster: fixed(1000)
  - name: body
    size: fixed(100)
insert:
  partitions: uniform(1..5)
  select: fixed(1)/1000
  batchtype: unlogged
queries:
  Latest:
    cql: select * from posts where domain = ? LIMIT 1;
    fields: SAMEROW
  range:
    cql: select * from posts where domain = ? and published >= ?
";

/// The vector search example: a vector column, its SAI index and an ANN query read as
/// any other profile's.
#[test]
fn the_vector_search_example_reads() {
    let text = include_str!("../../../workloads/vector-search-profile.yaml");
    let p = Profile::parse(text).unwrap();
    assert_eq!(p.queries.len(), 1);
    assert_eq!(p.queries[0].name, "search");
    assert!(p.queries[0].cql.contains("ORDER BY embedding ANN OF ?"));
    assert!(p.extra_definitions[0].contains("StorageAttachedIndex"));
    assert!(p
        .table_definition
        .as_deref()
        .unwrap()
        .contains("vector<float, 64>"));
}

#[test]
fn a_full_profile_reads_with_each_key() {
    let p = Profile::parse(FULL).unwrap();
    assert_eq!(p.keyspace, "ks");
    assert!(p
        .keyspace_definition
        .as_deref()
        .unwrap()
        .ends_with("'replication_factor': 1}"));
    assert_eq!(p.table, "posts");
    assert_eq!(
        p.extra_definitions,
        ["CREATE INDEX IF NOT EXISTS ON posts (body)"]
    );
    assert_eq!(p.columns.len(), 3);
    assert_eq!(p.columns[0].population.max(), 10_000_000);
    assert_eq!(p.columns[0].line, 11);
    assert_eq!(p.column("published").cluster.min(), 1000);
    assert_eq!(p.column("body").size.max(), 100);
    // Unnamed columns take cassandra-stress's defaults.
    let other = p.column("other");
    assert_eq!((other.size.min(), other.size.max()), (4, 8));
    assert_eq!(other.population.max(), 100_000_000_000);
    assert_eq!(other.cluster.max(), 1);
    assert_eq!(p.insert.partitions.max(), 5);
    assert_eq!(p.insert.select.max(), 0.001);
    assert_eq!(p.insert.batch, BatchKind::Unlogged);
    assert_eq!(p.op_names(), ["insert", "latest", "range"]);
    assert_eq!(p.queries[0].fields, Fields::SameRow);
    assert_eq!(
        p.queries[0].cql,
        "select * from posts where domain = ? LIMIT 1"
    );
    assert_eq!(p.queries[0].line, 23);
    assert_eq!(
        p.queries[1].fields,
        Fields::MultiRow,
        "multirow is the default"
    );
}

/// The keys of cassandra-stress's shipped profiles beyond the basic ones: token range
/// queries, COUNTER batches, an insert's condition, conditional updates binding values.
#[test]
fn token_ranges_counters_and_conditions_read() {
    let text = replaced("  batchtype: unlogged\n", "  batchtype: Counter\n  condition: IF body = NULL;\n")
        .replace(
            "  range:\n    cql: select * from posts where domain = ? and published >= ?\n",
            "  lwt:\n    cql: update posts set body = ? where domain = ? and published = ? IF body = ? AND domain != 'if ?'\n    fields: samerow\n",
        )
        + "token_range_queries:\n  all_columns:\n    columns: '*'\n    page_size: 100\n  Body_TR:\n    columns: body\n";
    let p = Profile::parse(&text).unwrap();
    assert_eq!(p.insert.batch, BatchKind::Counter);
    assert_eq!(p.insert.condition.as_deref(), Some("IF body = NULL"));
    assert_eq!(
        p.queries[1].condition_variables, 1,
        "the quoted ? is no variable"
    );
    assert_eq!(p.queries[0].condition_variables, 0);
    assert_eq!(
        p.op_names(),
        ["insert", "latest", "lwt", "all_columns", "body_tr"]
    );
    assert_eq!(p.step_names(), ["lwt-read"]);
    let tr = &p.token_range_queries;
    assert_eq!((tr[0].columns.as_str(), tr[0].page_size), ("*", 100));
    assert_eq!((tr[1].columns.as_str(), tr[1].page_size), ("body", 5000));
    assert_eq!(tr[1].line, 34);
}

#[test]
fn a_dynamic_condition_is_an_updates_if_with_a_bind_marker() {
    let cases = [
        (
            "update t set a = ? where k = ? IF b = ? AND c = ?",
            Some("IF b = ? AND c = ?"),
        ),
        (
            "UPDATE t SET a = ? WHERE k = ?\n  if b = ?",
            Some("if b = ?"),
        ),
        ("update t set a = ? where k = ? IF b = null", None),
        ("update t set a = ? where k = ? IF EXISTS", None),
        ("update t set a = 'x IF y' where k = ?", None),
        ("select * from t where k = ? IF b = ?", None),
        ("insert into t (k) values (?) IF NOT EXISTS", None),
    ];
    for (cql, expected) in cases {
        assert_eq!(dynamic_condition(cql), expected, "{cql}");
    }
}

#[test]
fn insert_defaults_are_cassandra_stress_ones() {
    let p = Profile::parse("keyspace: k\ntable: t\n").unwrap();
    assert_eq!(p.insert.partitions.max(), 1);
    assert_eq!(p.insert.select.max(), 1.0);
    assert_eq!(p.insert.batch, BatchKind::Logged);
    assert_eq!(p.insert.row_population.max(), 1.0);
    assert_eq!(p.insert.visits.max(), 1);
    assert_eq!(p.op_names(), ["insert"]);
    assert!(p.keyspace_definition.is_none() && p.table_definition.is_none());
}

#[test]
fn row_population_and_visits_are_read() {
    let p = Profile::parse(&replaced(
        "  batchtype: unlogged\n",
        "  batchtype: unlogged\n  row-population: fixed(1)/2\n  visits: uniform(2..4)\n",
    ))
    .unwrap();
    assert_eq!(p.insert.row_population.max(), 0.5);
    assert_eq!((p.insert.visits.min(), p.insert.visits.max()), (2, 4));
}

fn error(text: &str) -> ProfileError {
    Profile::parse(text).unwrap_err()
}

fn replaced(from: &str, to: &str) -> String {
    assert!(FULL.contains(from), "{from}");
    FULL.replacen(from, to, 1)
}

#[test]
fn each_error_names_its_key_and_line() {
    let cases: &[(String, usize, &str)] = &[
        (
            replaced("  - name: body\n", "  - name: body\n    sise: 1\n"),
            17,
            "unknown field `sise`",
        ),
        (
            replaced("specname: blog\n", "specname: blog\nseeds: 4\n"),
            2,
            "unknown field `seeds`",
        ),
        (
            replaced(
                "specname: blog\n",
                "token_range_queries:\n  range:\n    columns: '*'\n",
            ),
            2,
            "token_range_queries: the name 'range' is taken",
        ),
        (
            replaced(
                "specname: blog\n",
                "token_range_queries:\n  all:\n    columns: '*'\n    page_size: 0\n",
            ),
            4,
            "page_size: '0' is not a whole number of rows above 0",
        ),
        (
            replaced(
                "specname: blog\n",
                "token_range_queries:\n  all:\n    column: '*'\n",
            ),
            2,
            "token_range_queries, all: unknown field `column`",
        ),
        (
            replaced("specname: blog\n", "seed: x\n"),
            1,
            "seed: the first cassandra-stress releases (2.1) read this key and ignored it, and 4.0 refuses it as unknown",
        ),
        (
            replaced(
                "  batchtype: unlogged\n",
                "  batchtype: unlogged\n  condition: body = NULL\n",
            ),
            22,
            "insert, condition: 'body = NULL' is not an IF clause",
        ),
        (
            replaced(
                "    cql: select * from posts where domain = ? and published >= ?\n",
                "    cql: update posts set body = ? where domain = ? and published = ? if body = ?\n",
            ),
            26,
            "only with fields: samerow",
        ),
        (
            replaced(
                "  batchtype: unlogged\n",
                "  batchtype: unlogged\n  row-population: fixed(1)\n",
            ),
            22,
            "insert, row-population: 'fixed(1)' is not a ratio",
        ),
        (
            replaced(
                "  batchtype: unlogged\n",
                "  batchtype: unlogged\n  visits: uniform(0..3)\n",
            ),
            22,
            "insert, visits: uniform(0..3) can draw 0",
        ),
        (
            replaced(
                "  batchtype: unlogged\n",
                "  batchtype: unlogged\n  visits: often\n",
            ),
            22,
            "insert, visits: 'often'",
        ),
        (
            replaced("  batchtype: unlogged\n", "  batchtype: counted\n"),
            21,
            "'counted' is not LOGGED, UNLOGGED or COUNTER",
        ),
        (
            replaced(
                "  batchtype: unlogged\n",
                "  batchtype: unlogged\n  partition: fixed(1)\n",
            ),
            22,
            "unknown field `partition`",
        ),
        (
            replaced("size: gaussian(5..100)", "size: gaussian(5..)"),
            12,
            "columnspec 'domain', size: 'gaussian(5..)'",
        ),
        (
            replaced("population: uniform(1..10M)", "population: zipf(1..10M)"),
            13,
            "unknown distribution 'zipf'",
        ),
        (
            replaced("size: fixed(100)", "size: 100"),
            17,
            "columnspec 'body', size: '100' is not a distribution",
        ),
        (
            replaced("cluster: fixed(1000)", "cluster: uniform(0..10)"),
            15,
            "cluster: uniform(0..10) can draw 0",
        ),
        (
            replaced("partitions: uniform(1..5)", "partitions: uniform(1..five)"),
            19,
            "insert, partitions: 'uniform(1..five)'",
        ),
        (
            replaced("partitions: uniform(1..5)", "partitions: fixed(0)"),
            19,
            "can draw 0",
        ),
        (
            replaced("select: fixed(1)/1000", "select: fixed(1)"),
            20,
            "insert, select: 'fixed(1)' is not a ratio",
        ),
        (
            replaced("fields: SAMEROW", "fields: somerow"),
            25,
            "fields: 'somerow' is not samerow or multirow",
        ),
        (
            replaced("    fields: SAMEROW\n", "    field: samerow\n"),
            23,
            "queries, latest: unknown field `field`",
        ),
        (
            replaced("  range:\n", "  LATEST:\n"),
            26,
            "the name 'latest' is taken",
        ),
        (
            replaced("  range:\n", "  insert:\n"),
            26,
            "the name 'insert' is taken",
        ),
        (
            replaced("  - name: body\n", "  - name: domain\n"),
            16,
            "names column 'domain' twice",
        ),
        (
            replaced("table: posts\n", "table: my-posts\n"),
            5,
            "table 'my-posts' is not a plain CQL name",
        ),
        (replaced("table: posts\n", ""), 1, "missing field `table`"),
    ];
    for (text, line, message) in cases {
        let e = error(text);
        assert!(e.message.contains(message), "expected '{message}' in: {e}");
        assert_eq!(e.line, Some(*line), "line of '{message}': {e}");
        assert!(e.to_string().starts_with(&format!("line {line}: ")), "{e}");
    }
}

#[test]
fn headroom_format_is_told_apart_by_its_operations_key() {
    assert!(is_stress_profile(FULL));
    assert!(!is_stress_profile("name: x\noperations:\n  - read\n"));
    // headroom's keys without its operations: headroom's, whose reader says what is
    // missing.
    assert!(!is_stress_profile(
        "schema: []\ngenerators:\n  k: uniform(9)\n"
    ));
    assert!(is_stress_profile("table: t\nschema: x\n"));
    assert!(is_stress_profile("- a list\n"));
}

/// A profile of the wrong shape is described in cassandra-stress's terms, not by serde's
/// names for the types that read it ("expected struct RawProfile", "untagged enum").
#[test]
fn the_wrong_shape_is_named_in_the_profiles_terms() {
    for (text, expected) in [
        (
            "r".to_string(),
            "expected a cassandra-stress profile: a mapping of keyspace",
        ),
        ("- a\n".to_string(), "expected a cassandra-stress profile"),
        (
            replaced("  - name: body\n    size: fixed(100)\n", "  - body\n"),
            "expected a columnspec entry: a mapping of name",
        ),
        (
            replaced("  partitions: uniform(1..5)\n", "  partitions: [1, 5]\n"),
            "line 19: insert.partitions: invalid type: sequence, expected a value such as uniform(1..10) or 10",
        ),
        (
            replaced("  batchtype: unlogged\n", "  batchtype: -1\n"),
            "line 21: insert.batchtype: invalid value: integer `-1`, expected a value such as uniform(1..10) or 10",
        ),
    ] {
        let e = error(&text).to_string();
        assert!(e.contains(expected), "{text:?}: {e}");
        for internal in ["untagged", "struct", "Raw", "Scalar"] {
            assert!(!e.contains(internal), "{text:?}: {e}");
        }
    }
    let insert = error("keyspace: ks\ntable: t\ninsert: 1\n").to_string();
    assert!(insert.contains("expected the insert section"), "{insert}");
    let query = error("keyspace: ks\ntable: t\nqueries:\n  q: 1\n").to_string();
    assert!(
        query.contains("expected a query: a mapping of cql"),
        "{query}"
    );
}

/// A profile with `table:` and `table_definition:` (and `keyspace:`) as given.
fn with_definition(keyspace: &str, table: &str, definition: &str) -> Result<Profile, ProfileError> {
    Profile::parse(&format!(
        "keyspace: {keyspace}\ntable: {table}\ntable_definition: |\n  {definition}\n"
    ))
}

/// The table `table:` names is the one `table_definition` creates, in the keyspace
/// `keyspace:` names, compared as CQL reads names: unquoted ones lower-cased, double-quoted
/// ones as written.
#[test]
fn the_definition_creates_the_table_the_profile_names() {
    for (keyspace, table, definition) in [
        ("ks", "posts", "CREATE TABLE posts (k int PRIMARY KEY)"),
        (
            "ks",
            "posts",
            "create table if not exists posts(k int PRIMARY KEY)",
        ),
        ("ks", "Posts", "CREATE TABLE POSTS (k int PRIMARY KEY)"),
        ("ks", "posts", "CREATE TABLE \"posts\" (k int PRIMARY KEY)"),
        ("ks", "posts", "CREATE TABLE ks.posts (k int PRIMARY KEY)"),
        ("KS", "posts", "CREATE TABLE Ks.Posts (k int PRIMARY KEY)"),
        (
            "ks",
            "posts",
            "CREATE TABLE \"ks\".\"posts\" (k int PRIMARY KEY)",
        ),
        // Not a CREATE TABLE: the server judges it.
        ("ks", "posts", "CREATE INDEX ON other (v)"),
    ] {
        let p = with_definition(keyspace, table, definition)
            .unwrap_or_else(|e| panic!("{table} / {definition}: {e}"));
        // Kept as Cassandra keeps them, so that system_schema is read with the same names.
        assert_eq!(p.table, table.to_lowercase());
        assert_eq!(p.keyspace, keyspace.to_lowercase());
    }
}

#[test]
fn a_definition_of_another_table_or_keyspace_is_refused_with_both_names() {
    for (keyspace, table, definition, line, expected) in [
        (
            "ks",
            "other",
            "CREATE TABLE t (k int PRIMARY KEY)",
            2,
            "table: says 'other' but table_definition creates 't'; make them the same",
        ),
        (
            "ks",
            "t",
            "CREATE TABLE IF NOT EXISTS ks.other (k int PRIMARY KEY)",
            2,
            "table: says 't' but table_definition creates 'other'",
        ),
        (
            "ks",
            "posts",
            "CREATE TABLE \"Posts\" (k int PRIMARY KEY)",
            2,
            "table: says 'posts' but table_definition creates '\"Posts\"' (a double-quoted name keeps its case; CQL lower-cases any other); make them the same",
        ),
        (
            "ks",
            "Posts",
            "CREATE TABLE \"Posts\" (k int PRIMARY KEY)",
            2,
            "table: says 'Posts' but table_definition creates '\"Posts\"' (a double-quoted name keeps its case",
        ),
        (
            "ks",
            "t",
            "CREATE TABLE other_ks.t (k int PRIMARY KEY)",
            1,
            "keyspace: says 'ks' but table_definition creates its table in 'other_ks'; make them the same",
        ),
        (
            "ks",
            "t",
            "CREATE TABLE \"KS\".t (k int PRIMARY KEY)",
            1,
            "keyspace: says 'ks' but table_definition creates its table in '\"KS\"' (a double-quoted name keeps its case",
        ),
    ] {
        let e = with_definition(keyspace, table, definition).unwrap_err();
        assert!(e.message.contains(expected), "expected '{expected}' in: {e}");
        assert_eq!(e.line, Some(line), "{e}");
    }
}
