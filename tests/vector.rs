//! The vector workload against a real Cassandra 5 node: the table and its SAI index made,
//! ANN queries answered through both senders, their recall against the exact neighbours the
//! client worked out (or a ground truth file the test writes) judged in the SLA, passing and
//! failing, and a table that holds other vectors refused.

use std::io::Write;
use std::path::Path;

use headroom::cluster::LocalCluster;
use headroom::vectors::exact::nearest;
use headroom::vectors::{Similarity, Vectors};
use serde_json::Value;

use crate::support::{self, read_json, stderr, stdout};

fn write_vecs<T: Copy>(path: &Path, rows: &[Vec<T>], bytes: impl Fn(T) -> [u8; 4]) {
    let mut f = std::fs::File::create(path).unwrap();
    for row in rows {
        f.write_all(&(row.len() as i32).to_le_bytes()).unwrap();
        for x in row {
            f.write_all(&bytes(*x)).unwrap();
        }
    }
}

/// `n` vectors of `dim` components spread over a few clusters, from a small LCG: the test's
/// own data, unrelated to headroom's generator.
fn points(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as f64 / (1u64 << 31) as f64) as f32
    };
    (0..n)
        .map(|i| {
            let centre = (i % 7) as f32 * 3.0;
            (0..dim).map(|_| centre + next()).collect()
        })
        .collect()
}

fn recall(summary: &Value) -> &Value {
    support::op(summary, "ann")
        .get("recall")
        .unwrap_or_else(|| panic!("no recall: {summary}"))
}

fn run(dir: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["vector"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--warmup", "1s", "--interval", "1s"]);
    if args.contains(&"--sla") {
        all.extend_from_slice(&["--window", "2s"]);
    }
    support::run_against(dir, out, &all)
}

#[test]
fn vector_search_is_judged_on_latency_and_recall() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("vector");
    let cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let node = cluster.node(1).unwrap().native_addr();
    let work = tempfile::tempdir().unwrap();

    // Generated embeddings, cosine: the index answers, and the recall is high.
    let out = work.path().join("generated");
    let generated = [
        "--rows", "3000", "--queries", "200", "--dimensions", "32", "--rate", "60",
        "--duration", "6s", "--drop",
    ];
    let mut args = generated.to_vec();
    args.extend(["--sla", "p99<5s, recall@10>=0.9"]);
    let done = run(&dir, &out, &args);
    // The recall, the SLA's verdict and the files are written whether or not a client stall
    // made the run client-bound (exit 4).
    support::assert_ran_or_client_bound(&done, &out, 0);
    assert!(stdout(&done).contains("Vectors: 3 000 of 32 dimensions (cosine), 200 queries"), "{}", stdout(&done));
    let summary = read_json(&out.join("summary.json"));
    support::assert_succeeded(support::op(&summary, "ann"));
    support::assert_succeeded(support::op(&summary, "write"));
    let r = recall(&summary);
    assert!(r["mean"].as_f64().unwrap() >= 0.9, "{r}");
    assert_eq!(r["requests"], support::op(&summary, "ann")["requests"]);
    assert_eq!(summary["populate"]["written"], 3000);
    assert_eq!(summary["populate"]["errors"], 0);
    assert_eq!(summary["sla"]["verdict"]["pass"], true, "{}", summary["sla"]);
    let facts = read_json(&out.join("vectors.json"));
    assert_eq!(facts["truth"], "computed");
    assert_eq!(facts["rows"], 3000);
    let hlog = std::fs::read_to_string(out.join("histograms.hlog")).unwrap();
    assert!(hlog.contains("Tag=ann.recall,"), "a recall histogram per interval");
    let index = support::query(
        node,
        "SELECT options FROM system_schema.indexes WHERE keyspace_name = 'headroom' AND table_name = 'vectors'",
    );
    let options = format!("{index:?}");
    assert!(options.contains("StorageAttachedIndex") && options.contains("COSINE"), "{options}");

    // The driver's path answers the same queries as well.
    let out = work.path().join("driver");
    let mut args = generated[..generated.len() - 1].to_vec();
    args.extend(["--sender", "driver"]);
    let done = run(&dir, &out, &args);
    // The recall is measured whether or not the run was client-bound.
    support::assert_ran_or_client_bound(&done, &out, 0);
    let summary = read_json(&out.join("summary.json"));
    assert!(recall(&summary)["mean"].as_f64().unwrap() >= 0.9);

    // The same table with other vectors (another seed) is refused: its truth would be wrong.
    let mut args = generated[..generated.len() - 1].to_vec();
    args.extend(["--seed", "2"]);
    let refused = run(&dir, &work.path().join("other-seed"), &args);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("holds other vectors"), "{}", stderr(&refused));

    // The user's files, euclidean, with a ground truth the test works out itself.
    let base = points(2000, 16, 11);
    let queries = points(50, 16, 12);
    let files = work.path();
    write_vecs(&files.join("base.fvecs"), &base, f32::to_le_bytes);
    write_vecs(&files.join("query.fvecs"), &queries, f32::to_le_bytes);
    let flat = |rows: &[Vec<f32>]| Vectors::new(16, rows.concat());
    let truth = nearest(&flat(&base), &flat(&queries), 20, Similarity::Euclidean);
    let truth: Vec<Vec<i32>> = truth.iter().map(|t| t.iter().map(|&i| i as i32).collect()).collect();
    write_vecs(&files.join("truth.ivecs"), &truth, i32::to_le_bytes);
    // A ground truth that is wrong on purpose: each query's farthest rows.
    let far: Vec<Vec<i32>> = nearest(&flat(&base), &flat(&queries), 2000, Similarity::Euclidean)
        .iter()
        .map(|t| t.iter().rev().take(20).map(|&i| i as i32).collect())
        .collect();
    write_vecs(&files.join("far.ivecs"), &far, i32::to_le_bytes);
    let file_args = |truth: &str| -> Vec<String> {
        [
            "--keyspace", "vfiles", "--similarity", "euclidean", "--rate", "60", "--duration", "6s",
            "--vectors", files.join("base.fvecs").to_str().unwrap(),
            "--query-vectors", files.join("query.fvecs").to_str().unwrap(),
            "--neighbours", files.join(truth).to_str().unwrap(),
            "--sla", "p99<5s, recall@10>=0.8",
        ]
        .map(String::from)
        .to_vec()
    };
    let out = work.path().join("files");
    let args = file_args("truth.ivecs");
    let done = run(&dir, &out, &args.iter().map(String::as_str).collect::<Vec<_>>());
    // The recall is measured whether or not the run was client-bound.
    support::assert_ran_or_client_bound(&done, &out, 0);
    let summary = read_json(&out.join("summary.json"));
    assert!(recall(&summary)["mean"].as_f64().unwrap() >= 0.8, "{}", recall(&summary));
    let facts = read_json(&out.join("vectors.json"));
    assert_eq!((facts["truth"].as_str(), facts["rows"].as_u64()), (Some("file"), Some(2000)));
    support::assert_catalogued(&out);

    // Against the wrong truth the recall falls to nothing, and the recall term fails the run
    // while its latency term holds.
    let out = work.path().join("far");
    let args = file_args("far.ivecs");
    let failed = run(&dir, &out, &args.iter().map(String::as_str).collect::<Vec<_>>());
    // A client-bound run (exit 4) has no verdict to exit with, but its SLA is judged all
    // the same: failed on the recall term.
    support::assert_ran_or_client_bound(&failed, &out, 3);
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["sla"]["verdict"]["pass"], false, "{}", summary["sla"]);
    assert!(recall(&summary)["mean"].as_f64().unwrap() < 0.05, "{}", recall(&summary));
    let sla = summary["sla"].to_string();
    assert!(sla.contains("recall@10>=0.8"), "{sla}");
    assert!(stdout(&failed).contains("recall@10>=0.8"), "the failed term is named: {}", stdout(&failed));
    // Every file of a vector run is headroom's: --force may empty its directory for the next.
    support::assert_catalogued(&out);
    headroom::output_dir::claim(&out, true, headroom::output_dir::A_RUNS_LEFTOVERS).unwrap();
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        0,
        "--force emptied the vector run"
    );
    drop(cluster);
}
