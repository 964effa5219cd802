//! Workloads in headroom's own format (docs/workloads.md) against a real node: the built-ins
//! written in the format, every generator bound to its CQL type, every CQL type, batches and
//! derived values read back, and mistakes refused.

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
    // The counts checked are written whether or not a client stall made the run client-bound.
    support::assert_ran_or_client_bound(&done, &out, 0);
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
    // The counts checked are written whether or not a client stall made the run client-bound.
    support::assert_ran_or_client_bound(&done, &out, 0);
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

    types_and_batches(runs.path());
}

/// Every CQL type, batches and derived values, read back: element counts, fields, values
/// equal to what they derive from, rows per batch, and a batch counted as one request.
fn types_and_batches(runs: &Path) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/workloads/types-and-batches.yaml");
    let file = file.to_str().unwrap();
    let out = runs.join("all-types");
    let loaded = run(&[
        file,
        "--drop",
        "--phase",
        "load",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(loaded.status.success(), "{}", stderr(&loaded));
    let node = format!("{}:9042", support::address()).parse().unwrap();
    let rows = support::query(node, "SELECT JSON * FROM headroom_types.everything");
    assert_eq!(rows.len(), 200);
    let mut slots = [0; 10];
    for row in rows {
        let json: serde_json::Value = serde_json::from_str(row[0].as_deref().unwrap()).unwrap();
        let id = json["id"].as_i64().unwrap();
        let list = |key: &str| {
            json[key]
                .as_array()
                .unwrap_or_else(|| panic!("{key}: {json}"))
        };
        let names = list("names");
        assert_eq!(names.len(), 3, "{json}");
        assert!(
            names.iter().all(|n| n.as_str().unwrap().len() == 4),
            "{json}"
        );
        let scores = list("scores");
        assert!((2..=4).contains(&scores.len()), "{json}");
        assert!(scores
            .iter()
            .all(|s| (1..=1000).contains(&s.as_i64().unwrap())));
        assert_eq!(json["attrs"].as_object().unwrap().len(), 2, "{json}");
        let nested = list("nested");
        assert_eq!(nested.len(), 2, "{json}");
        assert!(nested
            .iter()
            .all(|m| (1..=3).contains(&m.as_object().unwrap().len())));
        let home = &json["home"];
        assert_eq!(home["street"].as_str().unwrap().len(), 8, "{json}");
        assert!(
            (1..=99).contains(&home["number"].as_i64().unwrap()),
            "{json}"
        );
        // A field left out takes its type's default: a set of 1 to 5 texts of 10.
        let tags = home["tags"].as_array().unwrap();
        assert!((1..=5).contains(&tags.len()), "{json}");
        assert!(
            tags.iter().all(|t| t.as_str().unwrap().len() == 10),
            "{json}"
        );
        let pair = list("pair");
        assert_eq!(pair[0].as_i64(), Some(id + 1000), "{json}");
        assert_eq!(pair[1], "x");
        assert_eq!(pair[2].as_str().unwrap().len(), 36, "{json}");
        assert_eq!(json["big"].as_i64(), Some(id * 1_000_000_000_000), "{json}");
        let price = json["price"].as_f64().unwrap();
        assert_eq!((price * 100.0).round() as i64, id, "{json}");
        if id == 31 {
            assert_eq!(json["day"], "1970-02-01", "{json}");
            assert_eq!(json["at"], "00:00:31.000000000", "{json}");
        }
        assert!(json["ip"].as_str().unwrap().starts_with("10."), "{json}");
        assert!(json["took"].is_string(), "{json}");
        let embedding = list("embedding");
        assert_eq!(embedding.len(), 3, "{json}");
        assert!(embedding
            .iter()
            .all(|v| (-1.0..=1.0).contains(&v.as_f64().unwrap())));
        // Derived values: equal to, formatted from, cut from and hashed from `id`.
        assert_eq!(json["copy"].as_i64(), Some(id));
        assert_eq!(json["label"], format!("dev-{id}"));
        assert_eq!(json["short"], format!("{id}abcdef")[..4]);
        let slot = json["slot"].as_i64().unwrap();
        slots[slot as usize] += 1;
        let seen = 1_735_689_600 + id - 1;
        assert_eq!(
            json["seen"],
            format!(
                "2025-01-01 00:{:02}:{:02}.000Z",
                (seen / 60) % 60,
                seen % 60
            ),
            "{json}"
        );
    }
    // The hash spreads 200 ids over ten slots.
    assert!(slots.iter().all(|n| (5..=40).contains(n)), "{slots:?}");

    // The batches, each one request: rows 1..8 of a device's partition in `readings` and
    // the same rows in `by_label`; counter batches of three increments.
    let out = runs.join("batches");
    let done = run(&[
        file,
        "--phase",
        "run",
        "--ops",
        "load=1,count=1",
        // Batches through headroom's own connections (the types above went by the driver).
        "--sender",
        "native",
        "--rate",
        "200",
        "--duration",
        "2s",
        "--out",
        out.to_str().unwrap(),
    ]);
    // The counts checked are written whether or not a client stall made the run client-bound.
    support::assert_ran_or_client_bound(&done, &out, 0);
    let summary = read_json(&out.join("summary.json"));
    let (load, count) = (op(&summary, "load"), op(&summary, "count"));
    support::assert_succeeded(load);
    support::assert_succeeded(count);
    let batches = load["requests"].as_u64().unwrap();
    let counter_batches = count["requests"].as_u64().unwrap();
    assert!((150..=250).contains(&batches), "{load}");
    let readings = support::query(
        node,
        "SELECT device, n, reading, label FROM headroom_types.readings",
    );
    let mut per_device: std::collections::BTreeMap<String, Vec<i64>> = Default::default();
    for r in &readings {
        let reading = r[2].as_deref().unwrap();
        assert_eq!(
            r[3].as_deref(),
            Some(format!("r-{reading}").as_str()),
            "{r:?}"
        );
        per_device
            .entry(r[0].clone().unwrap())
            .or_default()
            .push(r[1].as_deref().unwrap().parse().unwrap());
    }
    assert_eq!(per_device.len() as u64, batches, "one partition per batch");
    for (device, mut ns) in per_device {
        ns.sort_unstable();
        assert!((1..=8).contains(&ns.len()), "{device}: {ns:?}");
        assert_eq!(ns, (0..ns.len() as i64).collect::<Vec<_>>(), "{device}");
    }
    let mean_rows = readings.len() as f64 / batches as f64;
    assert!((3.5..=5.5).contains(&mean_rows), "{mean_rows}");
    // Every row's second statement: the same label, device and reading (per row, not per batch).
    let by_label = support::query(
        node,
        "SELECT label, device, reading FROM headroom_types.by_label",
    );
    assert_eq!(by_label.len(), readings.len());
    let written: std::collections::BTreeSet<(String, String, String)> = readings
        .iter()
        .map(|r| {
            (
                r[3].clone().unwrap(),
                r[0].clone().unwrap(),
                r[2].clone().unwrap(),
            )
        })
        .collect();
    for r in &by_label {
        let key = (
            r[0].clone().unwrap(),
            r[1].clone().unwrap(),
            r[2].clone().unwrap(),
        );
        assert!(written.contains(&key), "{r:?}");
    }
    let hits = support::query(node, "SELECT hits FROM headroom_types.hits");
    let total: u64 = hits
        .iter()
        .map(|r| {
            r[0].as_deref()
                .unwrap()
                .trim_start_matches("Counter(")
                .trim_end_matches(')')
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(
        total,
        3 * counter_batches,
        "three increments per counter batch"
    );

    // A user type's field that does not exist, before any load.
    let bad = runs.join("bad-udt.yaml");
    std::fs::write(
        &bad,
        std::fs::read_to_string(file)
            .unwrap()
            .replace("number = uniform", "numbr = uniform"),
    )
    .unwrap();
    let refused = run(&[bad.to_str().unwrap(), "--phase", "load"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("argument 6 (udt(street = text(8), numbr = uniform(1..99))): cannot bind to home of type address: type address has no field 'numbr'; its fields are street, number, tags"),
        "{}",
        stderr(&refused)
    );
}
