//! `headroom run ycsb` against a real local node: a workload F property file, as YCSB ships
//! it, through the load and run phases, with read-modify-write reported on its own and in
//! its read and update parts and the load's inserts measured apart; and CoreWorkload's
//! finer keys read back from the table: one key range loaded by two clients
//! (insertstart, insertcount), fieldnameprefix, histogram field lengths, and the keys the
//! sequential and exponential distributions choose.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use headroom::cluster::LocalCluster;
use serde_json::Value;

use crate::support::{self, headroom, read_json, stderr, stdout};

/// Workload F in YCSB's property format: a comment header, blank lines, key=value.
const WORKLOAD_F: &str = "\
# Workload F: read-modify-write
#   Read/read-modify-write ratio: 50/50
#   Request distribution: zipfian

recordcount=1000
operationcount=1000
workload=site.ycsb.workloads.CoreWorkload

readallfields=true

readproportion=0.5
updateproportion=0
scanproportion=0
insertproportion=0
readmodifywriteproportion=0.5

requestdistribution=zipfian
";

fn requests(summary: &Value, name: &str) -> u64 {
    support::op(summary, name)["requests"].as_u64().unwrap()
}

#[test]
fn workload_f_loads_then_runs_with_read_modify_write_in_parts() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("ycsb");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("workloadf");
    std::fs::write(&file, WORKLOAD_F).unwrap();
    let out = work.path().join("f");
    let hosts = support::hosts();

    let run = headroom(&[
        "run",
        "ycsb",
        "-P",
        file.to_str().unwrap(),
        "-p",
        "recordcount=2000",
        "-p",
        "operationcount=6000",
        "--hosts",
        &hosts,
        "--concurrency",
        "16",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let text = stdout(&run);
    assert!(text.contains("Populated 2000 rows"), "{text}");
    assert!(
        stderr(&run).contains("workload is about YCSB's own runner"),
        "the runner's key is ignored with a notice: {}",
        stderr(&run)
    );

    let summary = read_json(&out.join("summary.json"));
    // The load phase: recordcount records, none failed.
    assert_eq!(summary["populate"]["rows"], 2000, "{summary}");
    assert_eq!(summary["populate"]["written"], 2000, "{summary}");
    assert_eq!(summary["populate"]["errors"], 0, "{summary}");
    // The run phase: operationcount requests, half of them read-modify-writes, whose reads
    // and updates count under READ and UPDATE too.
    let rmw = requests(&summary, "READ-MODIFY-WRITE");
    let reads = requests(&summary, "READ");
    let updates = requests(&summary, "UPDATE");
    assert_eq!(rmw, 3000, "exactly half of operationcount");
    assert_eq!(
        reads,
        3000 + rmw,
        "the reads and the read-modify-writes' reads"
    );
    assert_eq!(updates, rmw, "the read-modify-writes' updates");
    for op in summary["ops"].as_array().unwrap() {
        support::assert_succeeded(op);
        assert!(
            op["response_time"]["p50_ms"].as_f64().unwrap() > 0.0,
            "{op}"
        );
    }
    assert!(out.join("READ-MODIFY-WRITE.hgrm").is_file());
    // The load's inserts, measured apart from the run: the run's ops have no INSERT.
    let writes = &summary["populate"]["writes"];
    assert_eq!(writes["op"], "INSERT", "{summary}");
    assert_eq!(writes["ok"], 2000, "{summary}");
    assert!(writes["service_time"]["p50_ms"].as_f64().unwrap() > 0.0);
    assert!(summary["ops"]
        .as_array()
        .unwrap()
        .iter()
        .all(|op| op["op"] != "INSERT"));
    assert!(out.join("populate.hgrm").is_file() && out.join("populate.service.hgrm").is_file());
    assert!(text.contains("INSERT while populating: p50"), "{text}");
    let config = read_json(&out.join("config.json"));
    assert_eq!(config["workload"]["keyspace"], "ycsb");
    assert_eq!(config["workload"]["definition"]["format"], "ycsb");
    assert_eq!(config["workload"]["definition"]["recordcount"], 2000);
    assert_eq!(config["ops"], 6000);

    // usertable has ten fields now: a workload with three is refused before it loads.
    let count = headroom(&[
        "run",
        "ycsb",
        "--workload",
        "f",
        "-p",
        "fieldcount=3",
        "--phase",
        "load",
        "--hosts",
        &hosts,
        "--out",
        work.path().join("other").to_str().unwrap(),
    ]);
    assert_eq!(count.status.code(), Some(2), "{}", stderr(&count));
    let error = stderr(&count);
    assert!(
        error.contains("ycsb.usertable exists with columns") && error.contains("field9 text"),
        "an existing usertable with other columns is refused: {error}"
    );
}

/// key number → (field values, write time of the first field), of every row of `table`.
fn rows(node: SocketAddr, table: &str) -> BTreeMap<u64, (Vec<String>, i64)> {
    support::query(
        node,
        &format!("SELECT y_id, col0, col1, col2, writetime(col0) FROM {table}"),
    )
    .into_iter()
    .map(|row| {
        let text = |i: usize| row[i].clone().unwrap();
        let key = text(0);
        let keynum = key.strip_prefix("user").unwrap().parse().unwrap();
        (
            keynum,
            ((1..4).map(text).collect(), text(4).parse().unwrap()),
        )
    })
    .collect()
}

/// Runs `headroom run ycsb` with `props` (each a -p) and `flags`; it must succeed.
fn ycsb(dir: &Path, name: &str, props: &[&str], flags: &[&str]) -> Value {
    let out = dir.join(name);
    let hosts = support::hosts();
    let mut args = vec![
        "run",
        "ycsb",
        "--hosts",
        &hosts,
        "--keyspace",
        "fidelity",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(flags);
    for p in props {
        args.extend_from_slice(&["-p", p]);
    }
    let run = headroom(&args);
    assert!(run.status.success(), "{name}: {}", stderr(&run));
    let file = if flags.contains(&"load") {
        "load.json"
    } else {
        "summary.json"
    };
    read_json(&out.join(file))
}

#[test]
fn insert_ranges_field_names_and_lengths_and_key_choices_read_back() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("ycsb-fidelity");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let node: SocketAddr = support::hosts().parse().unwrap();
    let work = tempfile::tempdir().unwrap();
    let histogram = work.path().join("lengths.txt");
    // Lengths 10 (bucket 0 and YCSB's extra draw: 4 of 8) and 20 (the rest).
    std::fs::write(&histogram, "BlockSize\t10\n0\t3\n1\t0\n2\t5\n").unwrap();
    let histogram_prop = format!("fieldlengthhistogram={}", histogram.display());
    let common = [
        "recordcount=1000",
        "fieldcount=3",
        "fieldnameprefix=col",
        "insertorder=ordered",
        "fieldlengthdistribution=histogram",
        histogram_prop.as_str(),
    ];
    let with = |extra: &[&'static str]| -> Vec<String> {
        common
            .iter()
            .map(|s| s.to_string())
            .chain(extra.iter().map(|s| s.to_string()))
            .collect()
    };
    let load = |name: &str, range: &[&'static str]| {
        let props = with(range);
        let props: Vec<&str> = props.iter().map(String::as_str).collect();
        ycsb(work.path(), name, &props, &["--phase", "load"])
    };

    // Two clients load 0..400 and 600..1000 of the same 1000 records.
    let first = load("load-1", &["insertstart=0", "insertcount=400"]);
    let second = load("load-2", &["insertstart=600", "insertcount=400"]);
    for (load, n) in [(&first, 400), (&second, 400)] {
        assert_eq!(load["written"], n, "{load}");
        let writes = &load["writes"];
        assert_eq!(writes["requests"], n, "{load}");
        assert!(
            writes["response_time"]["p99_ms"].as_f64().unwrap() > 0.0,
            "{load}"
        );
    }
    let hlog = std::fs::read_to_string(work.path().join("load-1/populate.hlog")).unwrap();
    assert!(hlog.contains("Tag=INSERT.rt,") && hlog.contains("Tag=INSERT.st,"));
    assert!(work.path().join("load-2/populate.service.hgrm").is_file());

    let table = "fidelity.usertable";
    let loaded = rows(node, table);
    let expected: Vec<u64> = (0..400).chain(600..1000).collect();
    assert_eq!(loaded.keys().copied().collect::<Vec<_>>(), expected);
    let columns: Vec<String> = support::query(
        node,
        "SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'fidelity' \
         AND table_name = 'usertable'",
    )
    .into_iter()
    .map(|r| r[0].clone().unwrap())
    .collect();
    let mut columns = columns;
    columns.sort();
    assert_eq!(columns, ["col0", "col1", "col2", "y_id"]);
    // Field lengths: 10 or 20, half each, as the histogram file says.
    let lengths: Vec<usize> = loaded
        .values()
        .flat_map(|(fields, _)| fields.iter().map(String::len))
        .collect();
    assert!(lengths.iter().all(|&l| l == 10 || l == 20), "{lengths:?}");
    let tens = lengths.iter().filter(|&&l| l == 10).count() as f64 / lengths.len() as f64;
    assert!((tens - 0.5).abs() < 0.05, "{tens}");
    let loaded_at = loaded.values().map(|(_, t)| *t).max().unwrap();

    // Sequential updates of the second client's range: 600, 601, ... in order, nothing else.
    let props = with(&[
        "insertstart=600",
        "insertcount=400",
        "requestdistribution=sequential",
        "readproportion=0",
        "updateproportion=1",
        "writeallfields=true",
        "operationcount=250",
    ]);
    let props: Vec<&str> = props.iter().map(String::as_str).collect();
    let summary = ycsb(
        work.path(),
        "sequential",
        &props,
        &["--phase", "run", "--concurrency", "1"],
    );
    assert_eq!(support::op(&summary, "UPDATE")["ok"], 250, "{summary}");
    let after = rows(node, table);
    let updated: Vec<(u64, i64)> = after
        .iter()
        .filter(|(_, (_, t))| *t > loaded_at)
        .map(|(k, (_, t))| (*k, *t))
        .collect();
    assert_eq!(
        updated.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        (600..850).collect::<Vec<_>>(),
        "the first 250 keys from insertstart"
    );
    assert!(
        updated.windows(2).all(|w| w[0].1 < w[1].1),
        "one at a time, in key order"
    );
    let sequential_at = updated.last().unwrap().1;

    // Exponential updates: 95% within the newest 10% of recordcount (keys 900..1000).
    let props = with(&[
        "requestdistribution=exponential",
        "exponential.percentile=95",
        "exponential.frac=0.1",
        "readproportion=0",
        "updateproportion=1",
        "writeallfields=true",
        "operationcount=400",
    ]);
    let props: Vec<&str> = props.iter().map(String::as_str).collect();
    let summary = ycsb(work.path(), "exponential", &props, &["--phase", "run"]);
    assert_eq!(support::op(&summary, "UPDATE")["ok"], 400, "{summary}");
    let after = rows(node, table);
    assert_eq!(after.len(), 800, "no update reached the keys never loaded");
    let touched: Vec<u64> = after
        .iter()
        .filter(|(_, (_, t))| *t > sequential_at)
        .map(|(k, _)| *k)
        .collect();
    let newest_tenth = touched.iter().filter(|&&k| k >= 900).count();
    // 380 of the 400 requests on 100 keys; the other 20 on keys below.
    assert!(newest_tenth >= 60, "{newest_tenth} of {touched:?}");
    assert!(touched.len() - newest_tenth <= 40, "{touched:?}");
    assert!(touched.iter().all(|&k| k >= 600), "{touched:?}");
    // The nearest keys are the most requested: the newest ten all, the 890s not all.
    assert!((990..1000).all(|k| touched.contains(&k)), "{touched:?}");
}
