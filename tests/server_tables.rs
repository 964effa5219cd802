//! Cassandra's own histograms of a run's table: a short run against a real node writes
//! server-tables.json whose write counts grew by the writes the run sent, with nodetool's
//! percentiles beside the virtual tables' figures, readings every second during the run
//! (`--server-stats-every`) whose counts follow the load, and the report shows them.

use std::fs;

use headroom::catalogue::{SERVER_SAMPLES_JSONL, SERVER_TABLES_JSON};
use headroom::cluster::LocalCluster;
use headroom::metrics::server_samples::read_samples;
use headroom::metrics::server_tables::ServerTablesFile;

use crate::support;

#[test]
fn a_run_records_the_servers_histograms_of_its_table_before_and_after() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("server-tables");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = runs.path().join("kv");
    let run = support::run_against(
        &dir,
        &out,
        &[
            "keyvalue",
            "--rate",
            "500",
            "--duration",
            "5s",
            "--warmup",
            "1s",
            "--server-stats-every",
            "1s",
        ],
    );
    let text = support::stdout(&run);
    // The server's figures and the files are written whether or not this busy machine made
    // the run client-bound (exit 4); they are what is checked.
    support::assert_ran_or_client_bound(&run, &out, 0);
    assert!(
        text.contains("Cassandra's own histograms of headroom.keyvalue (server-tables.json"),
        "{text}"
    );
    assert!(text.contains("Write Latency 99P"), "{text}");

    let file: ServerTablesFile =
        serde_json::from_str(&fs::read_to_string(out.join(SERVER_TABLES_JSON)).unwrap()).unwrap();
    assert_eq!(file.table, "keyvalue");
    assert!(file.notes.is_empty(), "{:#?}", file.notes);
    let before = &file.before.as_ref().unwrap().nodes;
    let after = &file.after.as_ref().unwrap().nodes;
    assert_eq!((before.len(), after.len()), (1, 1));
    let (before, after) = (&before[0], &after[0]);
    assert_eq!(after.node, "node1");
    assert_eq!(after.address, support::hosts());

    // The writes the run sent, warmup included (the node counts those too).
    let summary = support::read_json(&out.join("summary.json"));
    let writes = |part: &str, field: &str| -> u64 {
        summary[part]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["op"] == "write")
            .map(|o| o[field].as_u64().unwrap())
            .sum()
    };
    let answered = writes("ops", "ok") + writes("warmup", "ok");
    let sent = writes("ops", "requests") + writes("warmup", "requests");
    assert!(answered > 2000, "{answered} writes at 500/s for 6 s");
    // A replica counts each mutation it applied, a coordinator each request it answered;
    // nothing else writes this table. Requests that timed out in the client may still have
    // been applied: up to `sent`.
    for name in ["local_write_latency", "coordinator_write_latency"] {
        let grew = after.count(name).unwrap() - before.count(name).unwrap();
        assert!(
            (answered..=sent).contains(&grew),
            "{name} grew by {grew}; the run had {answered} writes answered of {sent} sent"
        );
    }

    // The virtual table gives p50, p99 and max to the nearest ms; nodetool the percentiles
    // between, in µs.
    let cql = after
        .figures
        .iter()
        .find(|f| f.source == "system_views.local_write_latency")
        .unwrap();
    assert_eq!(cql.resolution, Some(1000.0));
    assert!(cql.p50 <= cql.p99 && cql.p99 <= cql.max, "{cql:?}");
    let table = after
        .figures
        .iter()
        .find(|f| f.name == "local_write_latency" && f.source == "nodetool tablehistograms")
        .unwrap();
    let p = table.percentiles().map(Option::unwrap);
    assert!(
        p[0] > 0.0 && p.windows(2).all(|w| w[0] <= w[1]),
        "{table:?}"
    );
    // A local write takes microseconds to milliseconds, not seconds.
    assert!(p[4] < 1_000_000.0, "{table:?}");
    // Both read the same reservoir, whose largest bucket no longer moves once the run
    // ended: the same max once CQL's scale is undone.
    let (cql_max, table_max) = (cql.max.unwrap(), table.max.unwrap());
    assert!(
        (cql_max - table_max).abs() <= 1000.0,
        "CQL max {cql_max} µs, nodetool max {table_max} µs"
    );
    assert!(after
        .figures
        .iter()
        .any(|f| f.name == "proxy_write_latency" && f.p50.unwrap_or(0.0) > 0.0));

    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("Cassandra&#39;s own histograms of headroom.keyvalue")
            || html.contains("Cassandra's own histograms of headroom.keyvalue")
    );
    assert!(html.contains("system_views.local_write_latency"));
    assert!(html.contains("nodetool tablehistograms"));

    // The readings during the run: one a second from 1 s on, until the load ended; a tick
    // that falls while a slow reading still runs is skipped, not caught up.
    let mut notes = Vec::new();
    let samples = read_samples(&out, &mut notes);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(file.samples_every_s, Some(1.0));
    assert_eq!(file.samples as usize, samples.len());
    // Five ticks fall in the run; a reading that the machine slows past the next tick skips
    // it (three readings in all were seen while the host took 60% of the CPU away).
    assert!((2..=6).contains(&samples.len()), "{samples:#?}");
    let mut last_tick = 0.0;
    for (i, s) in samples.iter().enumerate() {
        let tick = s.at_s.floor();
        assert!(
            tick > last_tick && s.at_s < tick + 0.5,
            "reading {i} at {} s, the one before on the {last_tick} s tick",
            s.at_s
        );
        last_tick = tick;
        assert!(s.notes.is_empty(), "{:?}", s.notes);
    }
    let counts: Vec<u64> = samples
        .iter()
        .map(|s| s.nodes[0].count("local_write_latency").unwrap())
        .collect();
    let before_count = before.count("local_write_latency").unwrap();
    let after_count = after.count("local_write_latency").unwrap();
    assert!(
        before_count <= counts[0]
            && counts.windows(2).all(|w| w[0] < w[1])
            && *counts.last().unwrap() <= after_count,
        "{before_count} {counts:?} {after_count}"
    );
    // The node counted the load's 500 writes a second between its readings. `at_s` is when
    // a reading started, its count from when its query ran: a difference of L s between the
    // two queries' latencies moves the rate by 500 L / span. Over 3 s or more that stays
    // within the bounds for L up to 0.5 s; over 1 s (two readings on a slowed machine) 0.2 s
    // already leaves them, so shorter spans are not compared.
    let (first, last) = (&samples[0], samples.last().unwrap());
    let span = last.at_s - first.at_s;
    if span >= 3.0 {
        let rate = (counts[counts.len() - 1] - counts[0]) as f64 / span;
        assert!(
            (400.0..=600.0).contains(&rate),
            "{rate} writes/s over {span:.2} s"
        );
    } else {
        eprintln!("the readings span {span:.2} s: too short to compare their rate");
    }
    assert!(
        text.contains("own figures every 1 s during the measured part (server-samples.jsonl"),
        "{text}"
    );
    assert!(text.contains("write 99P over"), "{text}");
    assert!(out.join(SERVER_SAMPLES_JSONL).exists());
    assert!(html.contains("own latency during the run</h3>"));
}
