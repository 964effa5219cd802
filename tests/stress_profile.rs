//! cassandra-stress user profiles against a real local node: the fixtures in
//! tests/fixtures/profiles run unmodified, every operation answers (but for a rare server
//! timeout on a busy host), and bad profiles or mixes are refused with one line and exit
//! code 2.

use std::path::{Path, PathBuf};

use headroom::cluster::LocalCluster;
use headroom::workload::stress::profile::Profile;
use headroom::workload::stress::rows::{Column, CqlType, Kind, Rows};
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
    assert!(run.status.success(), "{}", stderr(&run));
    let text = stdout(&run);
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
    // A type headroom cannot generate: known only once the table exists.
    let lists = runs.path().join("lists.yaml");
    std::fs::write(
        &lists,
        "keyspace: stress_lists\n\
         keyspace_definition: |\n  CREATE KEYSPACE stress_lists WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}\n\
         table: t\n\
         table_definition: CREATE TABLE t (k int PRIMARY KEY, tags list<text>)\n",
    )
    .unwrap();
    bad(
        &[lists.to_str().unwrap()],
        "column tags of stress_lists.t has type list<text>",
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
        column("domain", Kind::PartitionKey, CqlType::Text),
        column("published_date", Kind::Clustering, CqlType::TimeUuid),
        column("author", Kind::Regular, CqlType::Text),
        column("body", Kind::Regular, CqlType::Text),
        column("title", Kind::Regular, CqlType::Text),
        column("url", Kind::Regular, CqlType::Text),
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
