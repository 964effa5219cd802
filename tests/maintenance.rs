//! Maintenance during a run against a real node: `--during` runs nodetool flush, compact and
//! garbagecollect while the documents workload inserts, records them in maintenance.json on
//! the run's time base, and the report shades them on the timeline and lists them; the same
//! through `--jmx` for a cluster headroom did not start; and the refusal without either.
//! A node frozen for 0.4 s judged by an SLA over two horizons: it fails a 10 s p99 and not a
//! minute's p99.9 of 2 s, and the minute's p99.9 of 100 ms of the writes but not their 10 s
//! p99 of 1 s.

use std::fs;

use headroom::cluster::LocalCluster;
use headroom::maintenance::{MaintenanceFile, Operation, Status};

use crate::support;

#[test]
fn nodetool_operations_run_during_the_load_and_are_recorded() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("maintenance");
    let cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = runs.path().join("documents");
    let run = support::run_against(
        &dir,
        &out,
        &[
            "documents",
            "--rate",
            "300",
            "--duration",
            "25s",
            "--during",
            "flush@3s,compact@8s,garbagecollect@14s",
            "--rows-per-partition",
            "200",
            "--drop",
        ],
    );
    let stdout = support::stdout(&run);
    // maintenance.json and the report are written whether or not the nodetool JVMs' start-ups
    // made the run client-bound (exit 4) on this busy machine.
    support::assert_ran_or_client_bound(&run, &out, 0);
    assert!(
        stdout.contains("maintenance: nodetool compact on node1 started at"),
        "{stdout}"
    );
    assert!(
        stdout.contains("maintenance during the run (maintenance.json)"),
        "{stdout}"
    );

    let file: MaintenanceFile =
        serde_json::from_str(&fs::read_to_string(out.join("maintenance.json")).unwrap()).unwrap();
    let ops: Vec<Operation> = file.operations.iter().map(|r| r.operation).collect();
    assert_eq!(
        ops,
        [
            Operation::Flush,
            Operation::Compact,
            Operation::GarbageCollect
        ]
    );
    // The load ends when the answer to its last request arrives: that request is due 1/300 s
    // before the 25 s end, so a quick answer ends the load just short of 25 s.
    let load_end = file.load_end_s.unwrap();
    assert!((25.0 - 1.0 / 300.0..32.0).contains(&load_end), "{load_end}");
    let mut previous_end = 0.0;
    for r in &file.operations {
        assert_eq!((r.status, r.exit_code), (Status::Ok, Some(0)), "{r:?}");
        assert_eq!(r.node, "node1");
        let (start, end, wall) = (r.start_s.unwrap(), r.end_s.unwrap(), r.wall_s.unwrap());
        // Started when due (or when the one before ended), never before, within the run.
        assert!(start >= r.planned_s && start >= previous_end, "{r:?}");
        assert!(start < r.planned_s.max(previous_end) + 2.0, "{r:?}");
        assert!(wall > 0.0 && (end - start - wall).abs() < 1e-3, "{r:?}");
        assert!(end <= load_end + 600.0 && start < load_end, "{r:?}");
        previous_end = end;
    }
    // The rows are the documents workload's: JSON in wide partitions, TTL'd.
    let rows = support::query(
        cluster.node(1).unwrap().native_addr(),
        "SELECT doc FROM headroom.documents WHERE source = 0 AND bucket = 0 LIMIT 1",
    );
    let doc: serde_json::Value = serde_json::from_str(rows[0][0].as_deref().unwrap()).unwrap();
    assert_eq!(doc["source"], 0);
    let ttl = support::query(
        cluster.node(1).unwrap().native_addr(),
        "SELECT default_time_to_live, compaction FROM system_schema.tables \
         WHERE keyspace_name = 'headroom' AND table_name = 'documents'",
    );
    assert_eq!(ttl[0][0].as_deref(), Some("8640"));
    assert!(ttl[0][1]
        .as_deref()
        .unwrap()
        .contains("TimeWindowCompactionStrategy"));

    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Maintenance during the run"));
    for name in [
        "nodetool flush",
        "nodetool compact",
        "nodetool garbagecollect",
    ] {
        // A legend entry on the timeline and a row in the table.
        assert!(
            html.matches(name).count() >= 2,
            "{name} missing from the report"
        );
    }
    assert!(html.contains("Coloured spans mark the 3 nodetool operations"));

    // The same node through its JMX port, as for a cluster headroom did not start.
    let jmx = format!("127.0.0.1:{}", cluster.node(1).unwrap().jmx_port);
    let elsewhere = tempfile::tempdir().unwrap();
    let out = runs.path().join("jmx");
    let flush_soon = [
        "documents",
        "--rate",
        "200",
        "--duration",
        "6s",
        "--during",
        "flush@2s",
    ];
    let run = support::run_against(
        elsewhere.path(),
        &out,
        &[&flush_soon[..], &["--jmx", &jmx]].concat(),
    );
    // maintenance.json is written whether or not the run was client-bound (exit 4).
    support::assert_ran_or_client_bound(&run, &out, 0);
    let file: MaintenanceFile =
        serde_json::from_str(&fs::read_to_string(out.join("maintenance.json")).unwrap()).unwrap();
    assert_eq!(file.operations.len(), 1);
    assert_eq!(file.operations[0].node, jmx);
    assert_eq!(
        file.operations[0].status,
        Status::Ok,
        "{:?}",
        file.operations
    );

    // A stall judged over two horizons: node 1 frozen 0.4 s, 35 s into the measured minute.
    let out = runs.path().join("stall");
    let run = support::run_against(
        &dir,
        &out,
        &[
            "keyvalue",
            "--rate",
            "500",
            "--warmup",
            "5s",
            "--duration",
            "60s",
            "--during",
            "stop:1@40s,cont:1@40400ms",
            "--sla",
            "p99<50ms, p99.9<2s@1m, write:p99<1s, write:p99.9<100ms@1m",
        ],
    );
    let stdout = support::stdout(&run);
    // 3: the SLA failed; 4: a busy machine made the client late (no verdict), the windows
    // judged all the same.
    assert!(
        matches!(run.status.code(), Some(3 | 4)),
        "{stdout}\n{}",
        support::stderr(&run)
    );
    assert!(stdout.contains("1 of 1 windows of 1m"), "{stdout}");
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let verdict = &summary["sla"]["verdict"];
    let worst = |term: &str| {
        verdict["worst"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["term"] == term)
            .unwrap_or_else(|| panic!("{term} in {verdict}"))
            .clone()
    };
    // The stall's 10 s window fails p99<50ms (another may, on a busy machine: not asserted).
    let failing = verdict["failing"].as_array().unwrap();
    assert!(
        failing.iter().any(|w| w["index"] == 3
            && w.get("window_ms").is_none()
            && w["outcomes"][0]["term"] == "p99<50ms"
            && w["outcomes"][0]["pass"] == false),
        "the window of 30-40 s: {verdict}"
    );
    assert_eq!(verdict["windows"], 6);
    let minute = worst("p99.9<2s@1m");
    assert_eq!(
        (&minute["windows"], &minute["failing_windows"]),
        (&1.into(), &0.into())
    );
    assert_eq!(minute["window_ms"], 60_000);
    assert_eq!(worst("write:p99<1s")["failing_windows"], 0, "{verdict}");
    let writes = worst("write:p99.9<100ms@1m");
    assert_eq!(
        (&writes["windows"], &writes["failing_windows"]),
        (&1.into(), &1.into())
    );
    assert!(
        stdout.contains("write:p99.9<100ms@1m"),
        "the verdict names each term with its window: {stdout}"
    );
    assert_eq!(
        failing.iter().filter(|w| w["window_ms"] == 60_000).count(),
        1,
        "{verdict}"
    );

    // Neither a local cluster nor --jmx: refused before any load, exit 2.
    let run = support::run_against(elsewhere.path(), &runs.path().join("refused"), &flush_soon);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        support::stderr(&run).contains("--jmx HOST:PORT"),
        "{}",
        support::stderr(&run)
    );
    drop(cluster);
}
