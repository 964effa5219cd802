//! Workloads in headroom's own format (docs/workloads.md) against a real node: the built-ins
//! written in the format, every generator bound to its CQL type, and mistakes refused.

use std::path::Path;

use headroom::cluster::LocalCluster;

use crate::support::{self, headroom, op, read_json, stderr, stdout};

/// Every generator, bound to the column types that hold it.
const TYPES: &str = r#"
description: every generator against its column type
keyspace: headroom_file
schema:
  - >-
    CREATE TABLE IF NOT EXISTS {keyspace}.events (device bigint, at timeuuid, seen timestamp,
    id uuid, bucket int, note text, PRIMARY KEY (device, at))
generators:
  device: zipfian(1..1000)
operations:
  insert:
    cql: INSERT INTO {keyspace}.events (device, at, seen, id, bucket, note) VALUES (?, ?, ?, ?, ?, ?)
    args: [device, timeuuid, timestamp, uuid, normal(0..99), text(10..20)]
    weight: 3
  recent:
    cql: SELECT * FROM {keyspace}.events WHERE device = ? AND at > maxTimeuuid(?) LIMIT 10
    args: [device, timestamp(-10s)]
    consistency: ONE
  by_sequence:
    cql: SELECT * FROM {keyspace}.events WHERE device = ? LIMIT 1
    args: [sequence(1..1000)]
populate:
  count: 300
  operation: insert
"#;

fn run(args: &[&str]) -> std::process::Output {
    let hosts = support::hosts();
    let mut all = vec!["run", "--hosts", hosts.as_str()];
    all.extend_from_slice(args);
    headroom(&all)
}

#[test]
fn workload_files_run_against_a_node() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("workload-file");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));

    // The built-in keyvalue, as a file; --ops re-weights its operations by name.
    let kv = root.join("workloads/keyvalue.yaml");
    let out = runs.path().join("kv");
    let done = run(&[
        kv.to_str().unwrap(),
        "--rate",
        "300",
        "--duration",
        "3s",
        "--populate",
        "500",
        "--ops",
        "write=1,read=1,delete=1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(done.status.success(), "{}", stderr(&done));
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["populate"]["written"], 500, "{summary}");
    for name in ["write", "read", "delete"] {
        let o = op(&summary, name);
        assert!(o["requests"].as_u64().unwrap() > 200, "{o}");
        support::assert_succeeded(o);
    }
    let config = read_json(&out.join("config.json"));
    assert_eq!(config["workload"]["definition"]["format"], "declarative");
    assert!(config["workload"]["definition"]["text"]
        .as_str()
        .unwrap()
        .contains("uniform(1M)"));

    // Every generator and type; the file's own populate; --phase load stops after it.
    let file = runs.path().join("types.yaml");
    std::fs::write(&file, TYPES).unwrap();
    let out = runs.path().join("types-load");
    let loaded = run(&[
        file.to_str().unwrap(),
        "--phase",
        "load",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(loaded.status.success(), "{}", stderr(&loaded));
    assert!(
        stdout(&loaded).contains("Populated 300 rows"),
        "{}",
        stdout(&loaded)
    );
    assert!(
        !out.join("summary.json").exists(),
        "no measured run with --phase load"
    );
    let rows = support::query(
        format!("{}:9042", support::address()).parse().unwrap(),
        "SELECT count(*) FROM headroom_file.events",
    );
    assert_eq!(rows[0][0].as_deref(), Some("300"));

    let out = runs.path().join("types");
    let done = run(&[
        file.to_str().unwrap(),
        "--phase",
        "run",
        "--rate",
        "250",
        "--duration",
        "3s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(done.status.success(), "{}", stderr(&done));
    let summary = read_json(&out.join("summary.json"));
    assert!(
        summary["populate"].is_null(),
        "--phase run skips the populate"
    );
    let insert = op(&summary, "insert");
    let recent = op(&summary, "recent");
    support::assert_succeeded(insert);
    support::assert_succeeded(recent);
    // Weights 3:1:1 of 750 requests.
    assert!(
        (440..=460).contains(&insert["requests"].as_u64().unwrap()),
        "{insert}"
    );

    // A generator that cannot bind to its column, before any load.
    let bad = runs.path().join("bad.yaml");
    std::fs::write(
        &bad,
        TYPES.replace("[device, timeuuid,", "[text(5), timeuuid,"),
    )
    .unwrap();
    let refused = run(&[
        bad.to_str().unwrap(),
        "--duration",
        "2s",
        "--out",
        runs.path().join("bad").to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("operation insert, argument 1 (text(5)): cannot bind to device"),
        "{}",
        stderr(&refused)
    );
}
