//! `headroom run ycsb` against a real local node: a workload F property file, as YCSB ships
//! it, through the load and run phases, with read-modify-write reported on its own and in
//! its read and update parts.

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
