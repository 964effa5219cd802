//! cassandra-stress user profiles against a real local node: the fixtures in
//! tests/fixtures/profiles run unmodified, every operation answers (but for a rare server
//! timeout on a busy host), and bad profiles or mixes are refused with one line and exit
//! code 2.

use std::path::{Path, PathBuf};

use headroom::cluster::LocalCluster;
use headroom::workload::common::schema::ColumnKind;
use headroom::workload::stress::model::Profile;
use headroom::workload::stress::types::{Column, CqlType};
use headroom::workload::stress::values::Rows;
use scylla::value::CqlValue;
use serde_json::Value;

use crate::support::{self, headroom, read_json, stderr, stdout};

fn profile(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/profiles")
        .join(name)
}

/// Runs `profile` briefly with `ops` and returns its summary.json, checking that each
/// operation sent requests and none failed.
fn run_profile(profile: &Path, ops: &str, expected: &[&str], extra: &[&str], out: &Path) -> Value {
    let hosts = support::hosts();
    let mut args = vec![
        "run",
        profile.to_str().unwrap(),
        "--ops",
        ops,
        "--rate",
        "150",
        "--duration",
        "4s",
        "--populate",
        "300",
        "--drop",
        "--hosts",
        &hosts,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let run = headroom(&args);
    let text = stdout(&run);
    // Exit 4: the client could not keep its schedule on two cores shared with the node and
    // other builds; the run's requests and rows are still checked below.
    assert!(
        run.status.success() || (run.status.code() == Some(4) && text.contains("client-bound")),
        "{text}\n{}",
        stderr(&run)
    );
    assert!(text.contains("Populated 300 rows"), "{text}");
    let summary = read_json(&out.join("summary.json"));
    let config = read_json(&out.join("config.json"));
    assert_eq!(
        config["workload"]["definition"]["format"],
        "cassandra-stress"
    );
    assert!(config["workload"]["definition"]["profile"]
        .as_str()
        .unwrap()
        .contains("columnspec:"));
    let ops = summary["ops"].as_array().unwrap();
    for name in expected {
        let op = ops
            .iter()
            .find(|o| o["op"] == *name)
            .unwrap_or_else(|| panic!("no {name} in {summary}"));
        let requests = op["requests"].as_u64().unwrap();
        // 4 s at 150/s, a third each.
        assert!(
            (150..=250).contains(&requests),
            "{name}: {requests} requests"
        );
        support::assert_succeeded(op);
    }
    summary
}

/// The "done when": the blog profile (clustering, batches, a samerow and a multirow
/// query) and the many-types profile run unmodified; bad mixes and profiles are refused.
#[test]
fn profiles_run_unmodified_and_bad_ones_are_refused() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("stress-profile");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();

    run_profile(
        &profile("blogposts.yaml"),
        "insert=1,timeline=1,since=1",
        &["insert", "timeline", "since"],
        // Few partitions, so that every one is written and can be checked below.
        &["-p", "50"],
        &runs.path().join("blog"),
    );
    run_profile(
        &profile("typestest.yaml"),
        "insert=1,simple1=1,range1=1",
        &["insert", "simple1", "range1"],
        &[],
        &runs.path().join("types"),
    );

    // The rows written are the rows the model describes, which the queries bind from.
    check_blog_rows(&profile("blogposts.yaml"), 50);

    let hosts = support::hosts();
    let nowhere = runs.path().join("nowhere");
    let nowhere = nowhere.to_str().unwrap();
    let bad = |args: &[&str], expected: &str| {
        let mut argv = vec!["run"];
        argv.extend_from_slice(args);
        argv.extend_from_slice(&["--ops", "insert=1", "--hosts", &hosts, "--duration", "1s"]);
        argv.extend_from_slice(&["--out", nowhere]);
        let out = headroom(&argv);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(expected),
            "{args:?}: '{err}' should say '{expected}'"
        );
    };
    let blog = profile("blogposts.yaml");
    let blog = blog.to_str().unwrap();
    // An unknown operation in the mix names the valid ones.
    let out = headroom(&[
        "run",
        blog,
        "--ops",
        "insert=1,latest=1",
        "--hosts",
        &hosts,
        "--out",
        nowhere,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("its operations are insert, timeline, since"),
        "{}",
        stderr(&out)
    );
    // A collection larger than a cell should hold: known only once the table exists.
    let lists = runs.path().join("lists.yaml");
    std::fs::write(
        &lists,
        "keyspace: stress_lists\n\
         keyspace_definition: |\n  CREATE KEYSPACE stress_lists WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n\
         table: t\n\
         table_definition: CREATE TABLE t (k int PRIMARY KEY, tags list<text>)\n\
         columnspec:\n  - name: tags\n    size: uniform(1..100k)\n",
    )
    .unwrap();
    bad(
        &[lists.to_str().unwrap()],
        "column tags of stress_lists.t is a collection whose size uniform(1..100k) can draw more than 65535 elements",
    );
    // A query binding something other than a column.
    let limit = runs.path().join("limit.yaml");
    std::fs::write(
        &limit,
        "keyspace: stress_limit\n\
         keyspace_definition: |\n  CREATE KEYSPACE stress_limit WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n\
         table: t\n\
         table_definition: CREATE TABLE t (k int PRIMARY KEY, v text)\n\
         queries:\n  top:\n    cql: select * from t where k = ? limit ?\n",
    )
    .unwrap();
    bad(
        &[limit.to_str().unwrap()],
        "line 7: query top: the bind variable '[limit]' is not a column",
    );
    // An unknown key, with its line.
    let seeded = runs.path().join("seeded.yml");
    std::fs::write(&seeded, "keyspace: k\ntable: t\ninsert:\n  batchsize: 3\n").unwrap();
    bad(
        &[seeded.to_str().unwrap()],
        "line 4: insert: unknown field `batchsize`",
    );
}

/// Reads back partitions 0..`partitions` of the blog table: each was written (the populate's
/// 300 inserts of 1 to 3 of 50 partitions reach them all), and each stored row's url is the
/// one the model generates for its published_date.
fn check_blog_rows(profile_path: &Path, partitions: u64) {
    let text = std::fs::read_to_string(profile_path).unwrap();
    let profile = Profile::parse(&text).unwrap();
    let column = |name: &str, kind, ty| Column {
        name: name.to_string(),
        kind,
        ty,
    };
    let columns = vec![
        column("domain", ColumnKind::PartitionKey, CqlType::Text),
        column("published_date", ColumnKind::Clustering, CqlType::TimeUuid),
        column("author", ColumnKind::Regular, CqlType::Text),
        column("body", ColumnKind::Regular, CqlType::Text),
        column("title", ColumnKind::Regular, CqlType::Text),
        column("url", ColumnKind::Regular, CqlType::Text),
    ];
    // The default --seed.
    let rows = Rows::new(&profile, columns, 1);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let session = headroom::client::connect(&headroom::client::ClientConfig {
            hosts: vec![support::hosts()],
            request_timeout: std::time::Duration::from_secs(60),
            connections: 1,
            credentials: None,
            local_dc: None,
            tls: None,
        })
        .await
        .unwrap();
        let cql = "SELECT published_date, url FROM stress_blog.blogposts WHERE domain = ?";
        let mut checked = 0;
        for p in 0..partitions {
            let partition = rows.partition(p);
            let generated: Vec<Vec<CqlValue>> = (0..partition.rows)
                .map(|r| rows.row(&partition, r))
                .collect();
            let domain = generated[0][0].clone();
            let stored = session
                .query_unpaged(cql, (&domain,))
                .await
                .unwrap()
                .into_rows_result()
                .unwrap();
            let stored: Vec<(CqlValue, CqlValue)> = stored
                .rows::<(CqlValue, CqlValue)>()
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert!(!stored.is_empty(), "partition {p} ({domain:?}) has no rows");
            for (published, url) in stored {
                let row = generated
                    .iter()
                    .find(|g| g[1] == published)
                    .unwrap_or_else(|| panic!("partition {p}: {published:?} was not generated"));
                assert_eq!(row[5], url, "partition {p}");
                checked += 1;
            }
        }
        assert!(checked >= partitions as usize, "{checked} rows checked");
    });
}

fn session(runtime: &tokio::runtime::Runtime) -> std::sync::Arc<scylla::client::session::Session> {
    runtime.block_on(async {
        headroom::client::connect(&headroom::client::ClientConfig {
            hosts: vec![support::hosts()],
            request_timeout: std::time::Duration::from_secs(60),
            connections: 1,
            credentials: None,
            local_dc: None,
            tls: None,
        })
        .await
        .unwrap()
    })
}

fn rows_of(
    runtime: &tokio::runtime::Runtime,
    session: &scylla::client::session::Session,
    cql: &str,
) -> Vec<Vec<Option<CqlValue>>> {
    runtime.block_on(async {
        let result = session
            .query_unpaged(cql, &[])
            .await
            .unwrap()
            .into_rows_result()
            .unwrap();
        let width = result.column_specs().len();
        result
            .rows::<scylla::value::Row>()
            .unwrap()
            .map(|r| {
                let row = r.unwrap().columns;
                assert_eq!(row.len(), width);
                row
            })
            .collect()
    })
}

/// Composite column types, row-population and visits, and two profiles in one run, each
/// checked by reading back what was written.
#[test]
fn composite_types_visits_and_several_profiles() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("stress-composite");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let hosts = support::hosts();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let session = session(&runtime);

    // Composite types: the user type first (a profile cannot create it before its table).
    for cql in [
        "DROP KEYSPACE IF EXISTS stress_composite",
        "CREATE KEYSPACE stress_composite WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TYPE stress_composite.address (street text, zip int, tags frozen<set<text>>)",
    ] {
        runtime.block_on(session.query_unpaged(cql, &[])).unwrap();
    }
    let composite = profile("composite.yaml");
    let out = runs.path().join("composite");
    let run = headroom(&[
        "run",
        composite.to_str().unwrap(),
        "--populate",
        "60",
        "--phase",
        "load",
        "-p",
        "20",
        "--partition-generator",
        "sequence",
        "--hosts",
        &hosts,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    check_composite_rows(&runtime, &session, &composite, 20);

    // visits: fixed(3) over 12-row partitions, one partition per insert: 16 inserts write
    // partitions 0 to 4 whole and the first 4 rows of partition 5.
    let visits = profile("visits.yaml");
    let out = runs.path().join("visits");
    let run = headroom(&[
        "run",
        visits.to_str().unwrap(),
        "--populate",
        "16",
        "--phase",
        "load",
        "-p",
        "10",
        "--partition-generator",
        "sequence",
        "--drop",
        "--hosts",
        &hosts,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let stored = rows_of(
        &runtime,
        &session,
        "SELECT k, a1, a2, b1, b2 FROM stress_visits.events",
    );
    let mut per_partition: std::collections::BTreeMap<String, u64> = Default::default();
    for row in &stored {
        *per_partition.entry(format!("{:?}", row[0])).or_default() += 1;
        // row-population fixed(1)/2: the first half of the non-key columns, in name order.
        assert!(row[1].is_some() && row[2].is_some(), "{row:?}");
        assert!(row[3].is_none() && row[4].is_none(), "{row:?}");
    }
    let mut counts: Vec<u64> = per_partition.into_values().collect();
    counts.sort_unstable();
    assert_eq!(counts, [4, 12, 12, 12, 12, 12], "rows per partition");

    // Two profiles in one run: each reports its own operations, named specname.op.
    let blog = profile("blogposts.yaml");
    let both = format!("{},{}", blog.to_str().unwrap(), visits.to_str().unwrap());
    let out = runs.path().join("both");
    let run = headroom(&[
        "run",
        &both,
        "--ops",
        "stress_blog.blogposts.insert=1,stress_blog.blogposts.timeline=1,stress_visits.events.insert=1",
        "--rate",
        "150",
        "--duration",
        "3s",
        "--populate",
        "40",
        "-p",
        "50",
        "--drop",
        "--hosts",
        &hosts,
        "--out",
        out.to_str().unwrap(),
    ]);
    // The operations and rows checked are written whether or not this busy machine made the
    // run client-bound (exit 4), as in `run_profile`.
    support::assert_ran_or_client_bound(&run, &out, 0);
    let summary = read_json(&out.join("summary.json"));
    for name in [
        "stress_blog.blogposts.insert",
        "stress_blog.blogposts.timeline",
        "stress_visits.events.insert",
    ] {
        let op = support::op(&summary, name);
        let requests = op["requests"].as_u64().unwrap();
        // 3 s at 150/s, a third each.
        assert!((110..=190).contains(&requests), "{name}: {requests}");
        support::assert_succeeded(op);
    }
    let config = read_json(&out.join("config.json"));
    let definition = &config["workload"]["definition"];
    assert_eq!(definition["format"], "cassandra-stress-set");
    let members = definition["members"].as_array().unwrap();
    assert_eq!(members.len(), 2);
    assert!(members[1]["definition"]["profile"]
        .as_str()
        .unwrap()
        .contains("visits: fixed(3)"));
    // Both tables were written: the populate's 40 inserts go to each profile in turn, and
    // the measured inserts add theirs.
    for table in ["stress_blog.blogposts", "stress_visits.events"] {
        let count = rows_of(&runtime, &session, &format!("SELECT count(*) FROM {table}"));
        let Some(CqlValue::BigInt(n)) = count[0][0] else {
            panic!("{count:?}")
        };
        assert!(n >= 20, "{table}: {n} rows");
    }

    // A mix naming an operation of neither profile lists theirs.
    let bad = headroom(&[
        "run",
        &both,
        "--ops",
        "insert=1,timeline=1",
        "--hosts",
        &hosts,
        "--out",
        runs.path().join("bad").to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("'timeline' is not an operation of these profiles"),
        "{}",
        stderr(&bad)
    );
}

/// Reads back partitions 0..`partitions` of the composite table and compares each stored
/// value with the one the model generates: element counts from `size`, every field of the
/// tuple and the user type, the vector's dimension.
fn check_composite_rows(
    runtime: &tokio::runtime::Runtime,
    session: &scylla::client::session::Session,
    profile_path: &Path,
    partitions: u64,
) {
    use headroom::workload::stress::types::{parse_type, UserTypes};
    let text = std::fs::read_to_string(profile_path).unwrap();
    let profile = Profile::parse(&text).unwrap();
    let mut udts = UserTypes::new();
    udts.insert(
        "address".into(),
        (
            vec!["street".into(), "zip".into(), "tags".into()],
            vec!["text".into(), "int".into(), "frozen<set<text>>".into()],
        ),
    );
    let names = [
        ("id", "bigint"),
        ("embedding", "vector<float, 8>"),
        ("home", "frozen<address>"),
        ("ids", "set<int>"),
        ("nested", "frozen<list<frozen<set<int>>>>"),
        ("pair", "tuple<int, text>"),
        ("scores", "map<text, double>"),
        ("tags", "list<text>"),
        ("took", "duration"),
    ];
    let columns: Vec<Column> = names
        .iter()
        .map(|(name, ty)| Column {
            name: name.to_string(),
            kind: if *name == "id" {
                ColumnKind::PartitionKey
            } else {
                ColumnKind::Regular
            },
            ty: parse_type(ty, "stress_composite", &udts).unwrap(),
        })
        .collect();
    let rows = Rows::new(&profile, columns, 1);
    let select: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
    let stored = rows_of(
        runtime,
        session,
        &format!("SELECT {} FROM stress_composite.things", select.join(", ")),
    );
    assert_eq!(stored.len() as u64, partitions, "one row per partition");
    let mut tag_counts = std::collections::BTreeSet::new();
    for p in 0..partitions {
        let generated = rows.row(&rows.partition(p), 0);
        let row = stored
            .iter()
            .find(|r| r[0].as_ref() == Some(&generated[0]))
            .unwrap_or_else(|| panic!("partition {p} ({:?}) was not written", generated[0]));
        let value = |i: usize| {
            row[i]
                .clone()
                .unwrap_or_else(|| panic!("{} is null", names[i].0))
        };
        // Every value comes back as written (sets and maps in Cassandra's order).
        for i in 1..names.len() {
            assert_eq!(
                in_order(value(i)),
                in_order(generated[i].clone()),
                "partition {p}, {}",
                names[i].0
            );
        }
        // Sets and maps come back in Cassandra's order.
        let (CqlValue::Set(ids), CqlValue::Set(written)) = (value(3), &generated[3]) else {
            panic!("{:?}", value(3))
        };
        assert_eq!(ids.len(), 3, "size fixed(3)");
        assert!(written.iter().all(|e| ids.contains(e)));
        let (CqlValue::Map(scores), CqlValue::Map(written)) = (value(6), &generated[6]) else {
            panic!("{:?}", value(6))
        };
        assert!((1..=4).contains(&scores.len()) && scores.len() == written.len());
        assert!(written.iter().all(|e| scores.contains(e)));
        let CqlValue::List(tags) = value(7) else {
            panic!()
        };
        tag_counts.insert(tags.len());
        let CqlValue::Vector(embedding) = value(1) else {
            panic!()
        };
        assert_eq!(embedding.len(), 8);
        let CqlValue::UserDefinedType { fields, .. } = value(2) else {
            panic!()
        };
        assert!(fields.iter().all(|(_, v)| v.is_some()), "{fields:?}");
    }
    assert!(
        tag_counts.len() >= 3,
        "list sizes from uniform(2..5): {tag_counts:?}"
    );
}

/// A value with its sets' elements and maps' entries in one order, however they were sent.
fn in_order(value: CqlValue) -> CqlValue {
    let sorted = |mut items: Vec<CqlValue>| {
        items.sort_by_key(|v| format!("{v:?}"));
        items
    };
    match value {
        CqlValue::Set(items) => CqlValue::Set(sorted(items.into_iter().map(in_order).collect())),
        CqlValue::List(items) => CqlValue::List(items.into_iter().map(in_order).collect()),
        CqlValue::Map(entries) => {
            let mut entries: Vec<(CqlValue, CqlValue)> = entries
                .into_iter()
                .map(|(k, v)| (in_order(k), in_order(v)))
                .collect();
            entries.sort_by_key(|(k, _)| format!("{k:?}"));
            CqlValue::Map(entries)
        }
        CqlValue::Tuple(items) => {
            CqlValue::Tuple(items.into_iter().map(|v| v.map(in_order)).collect())
        }
        CqlValue::UserDefinedType {
            keyspace,
            name,
            fields,
        } => CqlValue::UserDefinedType {
            keyspace,
            name,
            fields: fields
                .into_iter()
                .map(|(f, v)| (f, v.map(in_order)))
                .collect(),
        },
        other => other,
    }
}
