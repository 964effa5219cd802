//! `--validate` against a real node: a healthy run keeps every acknowledged write and reads
//! only values that were written; rows deleted and a value overwritten behind headroom's
//! back during the load are found, counted exactly, and end the run with exit code 5.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use headroom::cluster::LocalCluster;
use serde_json::Value;

use crate::support;

/// `headroom run ARGS` against the test's node, started and left running once its measured
/// part has begun (its intervals.csv is there: the populate is over).
fn start_measuring(cluster_dir: &Path, out: &Path, args: &[&str]) -> Child {
    let hosts = support::hosts();
    let child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .arg("run")
        .args(args)
        .args(["--hosts", &hosts, "--cluster-dir", cluster_dir.to_str().unwrap()])
        .args(["--out", out.to_str().unwrap()])
        .env_remove("HEADROOM_CLUSTER_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        support::wait_for(Duration::from_secs(120), || out
            .join("intervals.csv")
            .exists()),
        "the measured part never started"
    );
    child
}

fn validation(out: &Path) -> Value {
    support::read_json(&out.join("summary.json"))["validation"].clone()
}

fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn a_healthy_run_keeps_its_writes_and_planted_losses_are_counted_exactly() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("validate");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let node: SocketAddr = support::hosts().parse().unwrap();

    // Writes and reads of 2000 keys at RF 1, ONE/ONE: every read must see every write
    // acknowledged before it.
    let out = runs.path().join("healthy");
    let run = support::run_against(
        &dir,
        &out,
        &[
            "keyvalue",
            "--rate",
            "400",
            "--duration",
            "10s",
            "--populate",
            "2000",
            "--partitions",
            "2000",
            "--read-ratio",
            "0.5",
            "--keyspace",
            "validate_healthy",
            "--validate",
        ],
    );
    support::assert_ran_or_client_bound(&run, &out, 0);
    let v = validation(&out);
    assert_eq!(v["reads_must_see_writes"], true, "{v}");
    assert!(count(&v["reads"]["checked"]) > 1000, "{v}");
    for field in ["corrupt", "stale_unexpected", "stale_expected", "unchecked"] {
        assert_eq!(count(&v["reads"][field]), 0, "{field}: {v}");
    }
    let check = &v["final_check"];
    assert_eq!(check["complete"], true, "{v}");
    assert_eq!((count(&check["lost"]), count(&check["corrupt"])), (0, 0), "{v}");
    // Every key written is found, and the table holds exactly those keys.
    let keys = count(&check["keys"]);
    assert_eq!(count(&check["found"]), keys, "{v}");
    let rows = support::query(node, "SELECT COUNT(*) FROM validate_healthy.keyvalue");
    assert_eq!(rows[0][0].as_deref(), Some(keys.to_string().as_str()));
    // The populate's 2000 writes and the measured run's, each acknowledged or not.
    let summary = support::read_json(&out.join("summary.json"));
    let measured_writes = count(&support::op(&summary, "write")["ok"]);
    assert!(
        count(&v["writes_acknowledged"]) >= 2000 + measured_writes,
        "{v}"
    );
    let text = support::stdout(&run);
    assert!(text.contains("every acknowledged write kept"), "{text}");

    // Reads only, after a populate: once the measured part starts, 37 rows are deleted and
    // one value is overwritten with another key's, behind headroom's back.
    let out = runs.path().join("planted");
    let hosts = support::hosts();
    let child = start_measuring(&dir, &out, &[
            "keyvalue",
            "--rate",
            "300",
            "--duration",
            "12s",
            "--populate",
            "1500",
            "--partitions",
            "1500",
            "--read-ratio",
            "1",
            "--keyspace",
            "validate_planted",
            "--drop",
            "--validate",
    ]);
    let rows = support::query(node, "SELECT key, value FROM validate_planted.keyvalue LIMIT 38");
    assert_eq!(rows.len(), 38);
    let keys: Vec<&str> = rows.iter().map(|r| r[0].as_deref().unwrap()).collect();
    for key in &keys[..37] {
        support::query(
            node,
            &format!("DELETE FROM validate_planted.keyvalue WHERE key = '{key}'"),
        );
    }
    let other_keys_value = rows[0][1].as_deref().unwrap();
    support::query(
        node,
        &format!(
            "UPDATE validate_planted.keyvalue SET value = '{other_keys_value}' WHERE key = '{}'",
            keys[37]
        ),
    );
    let run = child.wait_with_output().unwrap();
    let text = support::stdout(&run);
    assert_eq!(run.status.code(), Some(5), "{text}\n{}", support::stderr(&run));
    let v = validation(&out);
    let check = &v["final_check"];
    assert_eq!(check["complete"], true, "{v}");
    assert_eq!(count(&check["lost"]), 37, "{v}");
    assert_eq!(count(&check["corrupt"]), 1, "{v}");
    assert_eq!(
        count(&check["found"]),
        count(&check["keys"]) - 38,
        "every other key is found: {v}"
    );
    // Reads of the keys after their rows went: stale where the levels forbid it.
    assert_eq!(count(&v["reads"]["stale_expected"]), 0, "{v}");
    assert!(text.contains("37 lost, 1 corrupt"), "{text}");
    assert!(text.contains("defect(s)"), "{text}");

    // timeseries: a row per write, every acknowledged one to be found. Once the measured
    // part starts, 9 rows are deleted behind headroom's back: exactly 9 writes lost.
    let out = runs.path().join("timeseries");
    let child = start_measuring(&dir, &out, &[
            "timeseries",
            "--rate",
            "300",
            "--duration",
            "12s",
            "--populate",
            "1000",
            "--partitions",
            "50",
            "--read-ratio",
            "0.5",
            "--keyspace",
            "validate_series",
            "--drop",
            "--validate",
    ]);
    // The oldest rows of a few partitions: the populate's, long acknowledged.
    let mut deleted = 0;
    for sensor in 0..3 {
        let rows = support::query(
            node,
            &format!(
                "SELECT timestamp FROM validate_series.sensor_data WHERE sensor_id = '{sensor}' \
                 ORDER BY timestamp ASC LIMIT 3"
            ),
        );
        assert_eq!(rows.len(), 3, "partition {sensor}: {rows:?}");
        for row in rows {
            let timestamp = row[0].as_deref().unwrap();
            support::query(
                node,
                &format!(
                    "DELETE FROM validate_series.sensor_data WHERE sensor_id = '{sensor}' \
                     AND timestamp = {timestamp}"
                ),
            );
            deleted += 1;
        }
    }
    let run = child.wait_with_output().unwrap();
    let text = support::stdout(&run);
    assert_eq!(run.status.code(), Some(5), "{text}\n{}", support::stderr(&run));
    let v = validation(&out);
    assert!(count(&v["reads"]["checked"]) > 1000, "{v}");
    assert_eq!(count(&v["reads"]["corrupt"]), 0, "{v}");
    let check = &v["final_check"];
    assert_eq!(check["counted"], "writes", "{v}");
    assert_eq!(check["complete"], true, "{v}");
    assert_eq!(count(&check["lost"]), deleted, "{v}");
    assert_eq!(count(&check["corrupt"]), 0, "{v}");
    assert_eq!(count(&check["keys"]), count(&v["writes_acknowledged"]), "{v}");
    assert_eq!(count(&check["found"]), count(&check["keys"]) - deleted, "{v}");
    assert!(text.contains("acknowledged write(s), a row each"), "{text}");

    // A capacity search validates each trial: capacity.json sums them.
    let out = runs.path().join("search");
    let search = support::headroom(&[
        "capacity",
        "keyvalue",
        "--hosts",
        &hosts,
        "--cluster-dir",
        dir.to_str().unwrap(),
        "--rates",
        "200,400",
        "--warmup",
        "2s",
        "--duration",
        "10s",
        "--sla",
        "p99<2s",
        "--fresh",
        "truncate",
        "--populate",
        "1000",
        "--partitions",
        "1000",
        "--read-ratio",
        "0.5",
        "--keyspace",
        "validate_search",
        "--validate",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = support::stdout(&search);
    assert!(
        matches!(search.status.code(), Some(0 | 4)),
        "{text}\n{}",
        support::stderr(&search)
    );
    let capacity = support::read_json(&out.join("capacity.json"));
    let data = &capacity["data"];
    let trials = std::fs::read_to_string(out.join("capacity.jsonl")).unwrap();
    let trials: Vec<Value> = trials
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["kind"] == "trial")
        .collect();
    assert_eq!(trials.len(), 2, "{trials:?}");
    assert_eq!(count(&data["runs_checked"]), 2, "{capacity}");
    assert_eq!((count(&data["defects"]), count(&data["lost"])), (0, 0), "{data}");
    for trial in &trials {
        assert_eq!(trial["data"]["complete"], true, "{trial}");
        let v = validation(&out.join(trial["dir"].as_str().unwrap()));
        assert!(count(&v["reads"]["checked"]) > 500, "{v}");
        assert_eq!(count(&v["final_check"]["lost"]), 0, "{v}");
    }
    assert!(
        text.contains("The data (--validate, every trial): every acknowledged write kept"),
        "{text}"
    );

    // YCSB, healthy: workload a's reads and single-field updates, all checked.
    let out = runs.path().join("ycsb-healthy");
    let run = support::run_against(
        &dir,
        &out,
        &[
            "ycsb",
            "--workload",
            "a",
            "-p",
            "recordcount=500",
            "--rate",
            "300",
            "--duration",
            "8s",
            "--keyspace",
            "validate_ycsb_a",
            "--drop",
            "--validate",
        ],
    );
    support::assert_ran_or_client_bound(&run, &out, 0);
    let v = validation(&out);
    assert!(count(&v["reads"]["checked"]) > 800, "{v}");
    for field in ["corrupt", "stale_unexpected", "stale_expected", "unchecked"] {
        assert_eq!(count(&v["reads"][field]), 0, "{field}: {v}");
    }
    let check = &v["final_check"];
    assert_eq!((count(&check["lost"]), count(&check["corrupt"])), (0, 0), "{v}");
    assert_eq!(count(&check["keys"]), 5000, "{v}");
    assert_eq!(count(&check["found"]), 5000, "{v}");
    assert!(count(&v["writes_acknowledged"]) > 500 + 800, "{v}");

    // YCSB: every field of every key is a register of its own. Reads only (workload c)
    // after the load of 1000 records; once the measured part starts, 4 rows are deleted and
    // one field overwritten with another key's value, behind headroom's back: exactly 40
    // fields lost, one corrupt.
    let out = runs.path().join("ycsb");
    let child = start_measuring(&dir, &out, &[
            "ycsb",
            "--workload",
            "c",
            "-p",
            "recordcount=1000",
            "--rate",
            "300",
            "--duration",
            "12s",
            "--keyspace",
            "validate_ycsb",
            "--drop",
            "--validate",
    ]);
    let rows = support::query(
        node,
        "SELECT y_id, field3 FROM validate_ycsb.usertable LIMIT 6",
    );
    assert_eq!(rows.len(), 6);
    for row in &rows[..4] {
        let key = row[0].as_deref().unwrap();
        support::query(
            node,
            &format!("DELETE FROM validate_ycsb.usertable WHERE y_id = '{key}'"),
        );
    }
    // Key 5's field3 takes key 4's field3: a value of another key.
    support::query(
        node,
        &format!(
            "UPDATE validate_ycsb.usertable SET field3 = '{}' WHERE y_id = '{}'",
            rows[4][1].as_deref().unwrap(),
            rows[5][0].as_deref().unwrap()
        ),
    );
    let run = child.wait_with_output().unwrap();
    let text = support::stdout(&run);
    assert_eq!(run.status.code(), Some(5), "{text}\n{}", support::stderr(&run));
    let v = validation(&out);
    let check = &v["final_check"];
    assert_eq!(check["counted"], "fields", "{v}");
    assert_eq!(check["complete"], true, "{v}");
    assert_eq!(count(&check["keys"]), 10_000, "1000 records of 10 fields: {v}");
    assert_eq!(count(&check["lost"]), 40, "{v}");
    assert_eq!(count(&check["corrupt"]), 1, "{v}");
    assert_eq!(count(&check["found"]), 10_000 - 41, "{v}");
    assert_eq!(count(&v["writes_acknowledged"]), 1000, "one write per insert: {v}");
    assert!(count(&v["reads"]["checked"]) > 2000, "{v}");
    assert_eq!(count(&v["reads"]["stale_expected"]), 0, "{v}");
}
