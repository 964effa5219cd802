//! Vector search in headroom's own YAML and in a cassandra-stress profile against a real
//! node: a table with a `vector<float, N>` column under an SAI vector index, inserts of
//! vectors (generated, or read from an .fvecs file), and `ORDER BY v ANN OF ? LIMIT k` queries
//! whose vector is bound by type from the prepared statement. Every ANN query must answer
//! without an error, and the populate (two writes in flight, for Cassandra 5.0.9's vector
//! index) must write every row. Recall is not measured by these formats.

use std::path::Path;

use headroom::cluster::LocalCluster;
use serde_json::Value;

use crate::support::{self, headroom, op, read_json, stderr, stdout};

/// Runs `workload` for 3 s at 60 requests/s after `populate` rows and returns its summary,
/// checking that every populate row was written and that each of `ops` answered, without
/// an error.
fn run(workload: &Path, extra: &[&str], populate: u64, ops: &[&str], out: &Path) -> Value {
    let hosts = support::hosts();
    let populate_text = populate.to_string();
    let mut args = vec![
        "run",
        workload.to_str().unwrap(),
        "--rate",
        "60",
        "--duration",
        "3s",
        "--populate",
        &populate_text,
        "--drop",
        "--hosts",
        &hosts,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let done = headroom(&args);
    let text = stdout(&done);
    // Exit 4: the client could not keep its schedule on two cores shared with the node and
    // other builds; the requests are still checked below.
    assert!(
        done.status.success() || (done.status.code() == Some(4) && text.contains("client-bound")),
        "{text}\n{}",
        stderr(&done)
    );
    assert!(text.contains("(2 in flight)"), "{text}");
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["populate"]["written"], populate, "{summary}");
    assert_eq!(summary["populate"]["errors"], 0, "{summary}");
    for name in ops {
        let o = op(&summary, name);
        assert!(o["requests"].as_u64().unwrap() >= 10, "{o}");
        support::assert_succeeded(o);
        assert!(o.get("recall").is_none_or(Value::is_null), "no recall: {o}");
    }
    summary
}

#[test]
fn ann_queries_of_a_workload_file_and_a_profile_answer() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("vector-formats");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));

    // headroom's YAML: generated vectors, an ANN query and a filtered one.
    run(
        &root.join("workloads/vector-search.yaml"),
        &["--keyspace", "headroom_vectors"],
        300,
        &["insert", "search", "search_in_category"],
        &runs.path().join("yaml"),
    );

    // Vectors read from an .fvecs file: the populate writes the file's three rows, the
    // queries search with its vectors.
    run(
        &root.join("tests/fixtures/workloads/vector-files.yaml"),
        &[],
        3,
        &["insert", "search"],
        &runs.path().join("files"),
    );
    let rows = support::query(
        format!("{}:9042", support::address()).parse().unwrap(),
        "SELECT id, v FROM headroom_vector_files.items WHERE id = 1",
    );
    let vector = rows[0][1].clone().unwrap_or_default();
    assert!(
        vector.contains("10.5") && vector.contains("11.5") && !vector.contains("20.5"),
        "row 1 holds the file's vector 1: {rows:?}"
    );

    // A cassandra-stress profile: its ANN query's vector bound by its column's name.
    run(
        &root.join("workloads/vector-search-profile.yaml"),
        &["--ops", "insert=1,search=4"],
        300,
        &["insert", "search"],
        &runs.path().join("profile"),
    );
}
