//! Configuration comparisons against real local nodes: `capacity --matrix` starting one
//! cluster per garbage collector, its comparison, cost and report, the logs it keeps, that it
//! leaves no node behind; then `headroom compare` on its searches, and refused input.

use std::fs;

use headroom::cluster::LocalCluster;

use crate::support::{self, headroom, read_json, stderr, stdout};

#[test]
fn a_gc_matrix_compares_its_configurations_and_removes_its_clusters() {
    let _machine = support::exclusive();
    let cluster_dir = support::cluster_dir("matrix");
    // Should the test fail half-way, the configuration's node is stopped all the same.
    let _guard = support::StopOnDrop(cluster_dir.clone());
    let runs = tempfile::tempdir().unwrap();
    let address = support::address().to_string();
    // Both searches must find a capacity: one that a client stall on this busy machine made
    // client-bound (exit 4) is run again in a fresh directory.
    let (matrix, out) = support::until_judged(3, &runs.path().join("gc"), |out| {
        headroom(&[
            "capacity",
            "keyvalue",
            "--matrix",
            "gc=g1,zgc",
            "--heap",
            "768M",
            "--first-address",
            &address,
            "--cluster-dir",
            cluster_dir.to_str().unwrap(),
            "--rates",
            "200,400",
            "--duration",
            "6s",
            "--warmup",
            "1s",
            "--window",
            "2s",
            "--sla",
            "p99<500ms",
            "--node-price",
            "0.5/h",
            "--node-price",
            "zgc=0.25/h",
            "--target-load",
            "10k",
            "--out",
            out.to_str().unwrap(),
        ])
    });
    assert!(matrix.status.success(), "{}", stderr(&matrix));
    let text = stdout(&matrix);
    for line in [
        "=== Configuration 1 of 2: g1 ===",
        "=== Configuration 2 of 2: zgc ===",
        "Worst window's p99 per attempted rate",
        "Change against g1 per attempted rate",
        "Nodes for 10 000/s",
        "Server pauses (every trial, per node)",
    ] {
        assert!(text.contains(line), "'{line}' in:\n{text}");
    }

    // matrix.json: both complete, each in its own directory.
    let file = read_json(&out.join("matrix.json"));
    let entries = file["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    for (entry, (label, collector)) in entries.iter().zip([
        ("g1", "Using G1"),
        ("zgc", "Initializing The Z Garbage Collector"),
    ]) {
        assert_eq!(entry["label"], label);
        assert_eq!(entry["status"], "complete", "{entry}");
        let dir = out.join(entry["dir"].as_str().unwrap());
        let search = read_json(&dir.join("search.json"));
        assert_eq!(search["label"], label);
        assert_eq!(search["nodes"], 1);
        assert!(
            search["cluster"].as_str().unwrap().contains(label),
            "{search}"
        );
        // The node ran with the configuration's collector: its own GC log says so.
        let gc_log = fs::read_to_string(dir.join("server/node1/gc.log")).unwrap();
        assert!(
            gc_log.contains(collector),
            "{label}: {}",
            &gc_log[..gc_log.len().min(400)]
        );
        let capacity = read_json(&dir.join("capacity.json"));
        assert_eq!(capacity["rows"].as_array().unwrap().len(), 2, "{capacity}");
    }
    // The cluster of the last configuration is gone with its processes.
    assert!(
        LocalCluster::open(&cluster_dir).is_err(),
        "the matrix left its cluster in {}",
        cluster_dir.display()
    );

    // compare.json: two configurations, both rates, changes tested, cost with assumptions.
    let compare = read_json(&out.join("compare.json"));
    assert_eq!(compare["baseline"], "g1");
    assert_eq!(compare["term"], "p99<500ms");
    let configs = compare["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 2);
    assert_eq!(configs[1]["cost"]["node_price_per_hour"], 0.25);
    assert_eq!(configs[0]["cost"]["cluster_per_hour"], 0.5);
    assert!(configs[1]["capacity_change"]["verdict"].is_string());
    let rates = compare["rates"].as_array().unwrap();
    assert_eq!(rates.len(), 2);
    for rate in rates {
        let zgc = &rate["cells"][1];
        assert_eq!(zgc["tried"], true);
        assert!(zgc["windows"].as_u64().unwrap() >= 5, "{zgc}");
        let verdict = zgc["latency"]["verdict"].as_str().unwrap();
        assert!(
            ["better", "worse", "noise"].contains(&verdict),
            "tested with 6 windows a side: {zgc}"
        );
    }
    // Each configuration's nodes' pauses, read from its own GC log during the trials.
    for config in configs {
        let pauses = &config["pauses"];
        assert!(pauses["runs"].as_u64().unwrap() >= 2, "{config}");
        assert!(pauses["node_seconds"].as_f64().unwrap() >= 10.0, "{config}");
    }
    assert!(compare["cost_assumptions"]
        .as_str()
        .unwrap()
        .contains("in proportion"));

    // One report with one line per configuration and the comparison's tables.
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Configurations compared, against g1"));
    assert!(html.contains("Trials of g1") && html.contains("Trials of zgc"));
    assert!(html.contains("Client latency and server pauses"));
    support::assert_catalogued(&out);

    // `headroom compare` on the two searches, zgc as the baseline, as JSON.
    let again = runs.path().join("again");
    let compared = headroom(&[
        "compare",
        out.join("gc-g1").to_str().unwrap(),
        out.join("gc-zgc").to_str().unwrap(),
        "--baseline",
        "zgc",
        "--json",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(compared.status.success(), "{}", stderr(&compared));
    let json: serde_json::Value = serde_json::from_str(&stdout(&compared)).unwrap();
    assert_eq!(json["baseline"], "zgc");
    assert!(again.join("report.html").exists() && again.join("compare.json").exists());
    // A matrix directory stands for its configurations. The earlier comparison in --out is
    // replaced only when asked (--force).
    let refused = headroom(&[
        "compare",
        out.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("already holds"),
        "{}",
        stderr(&refused)
    );
    let whole = headroom(&[
        "compare",
        out.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
        "--force",
    ]);
    assert!(whole.status.success(), "{}", stderr(&whole));
    assert!(stdout(&whole).contains("g1 (baseline)"));

    // Two runs side by side: one trial of each configuration at the same rate.
    let trial = |config: &str| out.join(config).join("trials/rate-400-repeat-1");
    let runs_compared = headroom(&[
        "compare",
        trial("gc-g1").to_str().unwrap(),
        trial("gc-zgc").to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
        "--force",
    ]);
    assert!(runs_compared.status.success(), "{}", stderr(&runs_compared));
    let text = stdout(&runs_compared);
    assert!(
        text.contains("Client response time per operation type"),
        "{text}"
    );
    assert!(text.contains("write p99.9"), "{text}");
    let json = read_json(&again.join("compare.json"));
    assert_eq!(json["runs"].as_array().unwrap().len(), 2);
    support::assert_catalogued(&again);
}

#[test]
fn bad_comparisons_are_refused_before_anything_starts() {
    let runs = tempfile::tempdir().unwrap();
    let (empty_a, empty_b) = (runs.path().join("a"), runs.path().join("b"));
    std::fs::create_dir_all(&empty_a).unwrap();
    std::fs::create_dir_all(&empty_b).unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["capacity", "keyvalue", "--matrix", "colour=red"],
            "unknown key 'colour'",
        ),
        (
            &["capacity", "keyvalue", "--matrix", "gc=g1,cms"],
            "not a collector",
        ),
        (
            &[
                "capacity",
                "keyvalue",
                "--matrix",
                "gc=g1",
                "--hosts",
                "127.0.0.1",
            ],
            "cannot be used with",
        ),
        (
            &[
                "capacity",
                "keyvalue",
                "--matrix",
                "gc=g1,zgc",
                "--node-price",
                "free",
            ],
            "for '--node-price <PRICE>': not a price",
        ),
        (
            &[
                "compare",
                empty_a.to_str().unwrap(),
                empty_b.to_str().unwrap(),
            ],
            "is neither a run directory",
        ),
        (
            &["compare", "/no/such/dir", "/no/such/dir"],
            "is not a directory",
        ),
    ];
    for (args, says) in cases {
        let output = headroom(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(says),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

/// `--matrix nodes=1,2`: a cluster of each size, the scaling section with the statement that
/// two sizes cannot fit the model's three parameters, that the nodes shared this machine,
/// and the capacity-against-nodes chart in the report.
#[test]
fn a_nodes_matrix_says_what_two_sizes_cannot_fit() {
    let _machine = support::exclusive();
    let cluster_dir = support::cluster_dir("matrix-nodes");
    let _guard = support::StopOnDrop(cluster_dir.clone());
    let runs = tempfile::tempdir().unwrap();
    let address = support::address().to_string();
    // Each size needs a capacity: a search that a client stall on this busy machine made
    // client-bound (exit 4) is run again in a fresh directory.
    let (matrix, out) = support::until_judged(3, &runs.path().join("nodes"), |out| {
        headroom(&[
            "capacity",
            "keyvalue",
            "--matrix",
            "nodes=1,2",
            "--heap",
            "512M",
            "--first-address",
            &address,
            "--cluster-dir",
            cluster_dir.to_str().unwrap(),
            "--rates",
            "200,400",
            "--duration",
            "4s",
            "--warmup",
            "1s",
            "--window",
            "2s",
            "--sla",
            "p99<500ms",
            "--target-load",
            "10k",
            "--node-price",
            "0.5/h",
            "--out",
            out.to_str().unwrap(),
        ])
    });
    assert!(matrix.status.success(), "{}", stderr(&matrix));
    let text = stdout(&matrix);
    for line in [
        "Capacity against nodes (",
        "2 sizes cannot fit three parameters (λ, σ, κ)",
        "Every node of these clusters ran on this one machine",
    ] {
        assert!(text.contains(line), "'{line}' in:\n{text}");
    }
    let compare = read_json(&out.join("compare.json"));
    let scaling = &compare["scaling"][0];
    assert_eq!(scaling["analysis"]["outcome"], "no_model", "{scaling}");
    assert_eq!(
        scaling["analysis"]["statements"][0]["statement"],
        "too_few_sizes"
    );
    let sizes: Vec<u64> = scaling["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["nodes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [1, 2]);
    assert_eq!(scaling["one_machine"], true);
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Capacity against nodes:"), "the chart");
    assert!(
        LocalCluster::open(&cluster_dir).is_err(),
        "the matrix left its cluster in {}",
        cluster_dir.display()
    );
}
