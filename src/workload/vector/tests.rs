//! Tests of the vector workload's settings and data: flags to a definition, files read and
//! refused, the truth made or read, and the table's comment.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::data::Data;
use super::model::{Source, VectorDefinition, DEFAULT_QUERIES, DEFAULT_ROWS};
use crate::workload::common::request::VectorRequest;
use crate::fixtures::vectors_fixture;
use crate::vectors::exact::nearest;
use crate::vectors::Similarity;

fn resolve(request: VectorRequest) -> Result<VectorDefinition, String> {
    VectorDefinition::resolve(&request).map_err(|e| e.to_string())
}

/// Writes `rows` as an .fvecs file at `path`.
fn write_fvecs(path: &Path, rows: &[Vec<f32>]) {
    let mut f = std::fs::File::create(path).unwrap();
    for row in rows {
        f.write_all(&(row.len() as i32).to_le_bytes()).unwrap();
        for x in row {
            f.write_all(&x.to_le_bytes()).unwrap();
        }
    }
}

fn write_ivecs(path: &Path, rows: &[Vec<i32>]) {
    let mut f = std::fs::File::create(path).unwrap();
    for row in rows {
        f.write_all(&(row.len() as i32).to_le_bytes()).unwrap();
        for x in row {
            f.write_all(&x.to_le_bytes()).unwrap();
        }
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headroom-vector-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_defaults_are_generated_vectors_of_128_components() {
    let d = resolve(VectorRequest::default()).unwrap();
    assert_eq!(d.dimensions, 128);
    assert_eq!(d.top_k, 10);
    assert_eq!(d.rows, DEFAULT_ROWS);
    assert_eq!(d.queries, DEFAULT_QUERIES);
    assert_eq!(d.similarity, Similarity::Cosine);
    assert!(matches!(d.source, Source::Generated { .. }));
}

#[test]
fn impossible_numbers_are_refused_naming_the_flag() {
    let cases = [
        (VectorRequest { dimensions: Some(0), ..Default::default() }, "--dimensions 0"),
        (VectorRequest { dimensions: Some(9000), ..Default::default() }, "--dimensions 9000"),
        (VectorRequest { top_k: Some(0), ..Default::default() }, "--top-k 0"),
        (VectorRequest { rows: Some(0), ..Default::default() }, "--rows 0"),
        (VectorRequest { rows: Some(1_000_000_000_000), ..Default::default() }, "at most 100000000 vectors"),
        (VectorRequest { rows: Some(5), top_k: Some(10), ..Default::default() }, "--rows 5 --top-k 10"),
        (VectorRequest { queries: Some(0), ..Default::default() }, "--queries 0"),
        (
            VectorRequest { neighbours: Some("t.ivecs".into()), ..Default::default() },
            "--neighbours goes with --vectors",
        ),
    ];
    for (request, expected) in cases {
        let e = resolve(request).unwrap_err();
        assert!(e.contains(expected), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

#[test]
fn a_base_file_alone_holds_out_its_last_vectors_as_queries() {
    let dir = temp_dir("held-out");
    let rows: Vec<Vec<f32>> = (0..10).map(|i| vec![i as f32, 1.0, 0.5]).collect();
    let base = dir.join("base.fvecs");
    write_fvecs(&base, &rows);
    // Fewer rows than the default k of 10: a query asks for 3.
    let e = resolve(VectorRequest {
        vectors: Some(base.clone()),
        queries: Some(3),
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.contains("holds 7 vectors, fewer than --top-k 10"), "{e}");
    let d = resolve(VectorRequest {
        vectors: Some(base.clone()),
        queries: Some(3),
        top_k: Some(3),
        ..Default::default()
    })
    .unwrap();
    assert_eq!((d.dimensions, d.rows, d.queries), (3, 7, 3));
    let data = Data::make(&d, 1).unwrap();
    assert_eq!(data.base.len(), 7);
    assert_eq!(data.queries.get(0), &[7.0, 1.0, 0.5]);
    assert_eq!(data.queries.get(2), &[9.0, 1.0, 0.5]);
    // The truth is the exact search's over the 7 rows written.
    let expected = nearest(&data.base, &data.queries, 3, Similarity::Cosine);
    assert_eq!(data.truth(1), &expected[1][..]);
    assert_eq!(data.facts.truth, "computed");
    // --rows caps the rows; the queries are still the vectors after them.
    let d = resolve(VectorRequest {
        vectors: Some(base),
        queries: Some(3),
        rows: Some(4),
        top_k: Some(3),
        ..Default::default()
    })
    .unwrap();
    let data = Data::make(&d, 1).unwrap();
    assert_eq!((data.base.len(), data.queries.len()), (4, 3));
    assert_eq!(data.queries.get(0), &[4.0, 1.0, 0.5]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_ground_truth_file_is_taken_as_it_is_and_checked() {
    let dir = temp_dir("truth");
    let base = dir.join("base.fvecs");
    let queries = dir.join("q.fvecs");
    let truth = dir.join("gt.ivecs");
    write_fvecs(&base, &(0..5).map(|i| vec![i as f32, 1.0]).collect::<Vec<_>>());
    write_fvecs(&queries, &[vec![0.0, 1.0], vec![4.0, 1.0]]);
    // Deliberately not the exact order: a file's truth is the user's, taken as given.
    write_ivecs(&truth, &[vec![3, 2, 1], vec![0, 1, 2]]);
    let request = VectorRequest {
        vectors: Some(base.clone()),
        query_vectors: Some(queries.clone()),
        neighbours: Some(truth.clone()),
        top_k: Some(2),
        ..Default::default()
    };
    let d = resolve(request.clone()).unwrap();
    let data = Data::make(&d, 1).unwrap();
    assert_eq!(data.truth(0), &[3, 2]);
    assert_eq!(data.truth(1), &[0, 1]);
    assert_eq!(data.facts.truth, "file");
    // More neighbours asked for than the file gives.
    let e = resolve(VectorRequest { top_k: Some(4), ..request.clone() }).unwrap_err();
    assert!(e.contains("3 neighbours per query, fewer than --top-k 4"), "{e}");
    // A neighbour that is not a row.
    write_ivecs(&truth, &[vec![3, 9, 1], vec![0, 1, 2]]);
    let e = resolve(request.clone()).unwrap_err();
    assert!(e.contains("the neighbour 9 is not among the 5 base vectors"), "{e}");
    // Fewer queries' neighbours than queries.
    write_ivecs(&truth, &[vec![3, 2, 1]]);
    let e = resolve(request.clone()).unwrap_err();
    assert!(e.contains("the neighbours of 1 queries"), "{e}");
    // A truth that is not an .ivecs file.
    let e = resolve(VectorRequest { neighbours: Some(queries.clone()), ..request }).unwrap_err();
    assert!(e.contains("a ground truth is an .ivecs file"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_files_are_refused_in_one_line() {
    let dir = temp_dir("bad");
    let truncated = dir.join("truncated.fvecs");
    write_fvecs(&truncated, &[vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]]);
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 2]).unwrap();
    let empty = dir.join("empty.fvecs");
    std::fs::write(&empty, b"").unwrap();
    let text = dir.join("notes.fvecs");
    std::fs::write(&text, b"these are not vectors at all\n").unwrap();
    let unknown = dir.join("vectors.txt");
    std::fs::write(&unknown, b"1 2 3\n").unwrap();
    let cases: [(&Path, Option<usize>, &str); 5] = [
        (&truncated, None, "truncated"),
        (&empty, None, "empty"),
        (&text, None, "dimension"),
        (&unknown, None, "unknown format"),
        (&vectors_fixture("base.fvecs"), Some(8), "dimension 4, where 8 was expected"),
    ];
    for (path, dimensions, expected) in cases {
        let e = resolve(VectorRequest {
            vectors: Some(path.to_path_buf()),
            dimensions,
            queries: Some(1),
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.contains(expected), "{}: {e}", path.display());
        assert!(e.contains("--vectors"), "names the flag: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
    // Too few vectors to hold queries out.
    let e = resolve(VectorRequest {
        vectors: Some(vectors_fixture("base.fvecs")),
        queries: Some(3),
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.contains("leaving none to search"), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn generated_data_repeats_with_the_seed_and_its_truth_is_exact() {
    let d = resolve(VectorRequest {
        dimensions: Some(8),
        rows: Some(300),
        queries: Some(20),
        top_k: Some(5),
        similarity: Some(Similarity::Euclidean),
        ..Default::default()
    })
    .unwrap();
    let a = Data::make(&d, 7).unwrap();
    let b = Data::make(&d, 7).unwrap();
    let c = Data::make(&d, 8).unwrap();
    assert_eq!(a.base, b.base);
    assert_ne!(a.base, c.base);
    assert_eq!((a.base.len(), a.queries.len(), a.base.dim), (300, 20, 8));
    for q in 0..20 {
        let query = a.queries.get(q);
        let mut scored: Vec<(f32, u32)> = (0..300)
            .map(|i| (Similarity::Euclidean.score(query, a.base.get(i)), i as u32))
            .collect();
        scored.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        let expected: Vec<u32> = scored[..5].iter().map(|s| s.1).collect();
        assert_eq!(a.truth(q), &expected[..], "query {q}");
    }
}

#[test]
fn the_table_comment_names_the_vectors() {
    let d = resolve(VectorRequest::default()).unwrap();
    let comment = d.table_comment(1);
    assert!(comment.starts_with("headroom vector: generated seed=1"), "{comment}");
    assert!(comment.contains("rows=10000, dimensions=128, similarity=cosine"), "{comment}");
    assert_ne!(comment, d.table_comment(2));
    let other = resolve(VectorRequest { dimensions: Some(64), ..Default::default() }).unwrap();
    assert_ne!(comment, other.table_comment(1));
}
