//! `vector_file('queries.fvecs')` and `vector_file('base.fvecs', INDEX)`: vectors taken from
//! a file of the ANN benchmarks' formats (.fvecs, .bvecs, .npy; see [`crate::vectors::files`])
//! rather than generated, for a `vector<float, N>` variable: an ANN query's bound vector, or
//! an insert's.
//!
//! The file is read once, when the workload file is read (a file another generator or an
//! earlier reading of the same workload already read is shared, not read again), at most
//! [`MAX_FILE_VECTORS`] vectors of it. Without INDEX, request `seq` takes a vector drawn
//! uniformly by its own random stream; with INDEX (an integer generator: `sequence(10k)`, a
//! named key), vector INDEX mod the file's length, so a row's key and its vector can agree.
//! Either way the vector is a function of the run's seed and the request's sequence number.
//! The file's dimension is checked against the variable's when the statements are prepared.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rand::rngs::SmallRng;
use rand::Rng;

use crate::vectors::files::read_vectors;
use crate::vectors::Vectors;

/// The most vectors read from a file: the first million (SIFT1M's base set whole; 512 MB of
/// 128-dimensional vectors).
pub const MAX_FILE_VECTORS: usize = 1_000_000;

/// A file's vectors, as a generator holds them: the path as written, and the vectors shared
/// by every generator of the file.
#[derive(Debug, Clone)]
pub struct VectorFile {
    /// The path as the workload file writes it.
    pub written: String,
    /// The vectors read.
    pub vectors: Arc<Vectors>,
}

/// Two generators of the same file are the same generator: compared by path, not by the
/// (possibly millions of) components.
impl PartialEq for VectorFile {
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written && Arc::ptr_eq(&self.vectors, &other.vectors)
    }
}

impl VectorFile {
    /// Reads the file `written` names, relative to `base` (the workload file's folder) unless
    /// absolute, or takes it from the files already read. A file that cannot be read, or is
    /// no vector file, is a one-line error naming it.
    pub fn open(written: &str, base: Option<&Path>) -> Result<VectorFile, String> {
        let path = match base {
            Some(dir) if Path::new(written).is_relative() => dir.join(written),
            _ => PathBuf::from(written),
        };
        // Keyed by the file itself, whichever way it is named.
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        static READ: OnceLock<Mutex<HashMap<PathBuf, Arc<Vectors>>>> = OnceLock::new();
        let read = READ.get_or_init(Default::default);
        if let Some(vectors) = read.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(VectorFile {
                written: written.to_string(),
                vectors: vectors.clone(),
            });
        }
        let vectors = read_vectors(&path, "the vector file", None, MAX_FILE_VECTORS)
            .map_err(|e| e.to_string())?;
        if vectors.is_empty() {
            return Err(format!(
                "the vector file {} holds no vector",
                path.display()
            ));
        }
        let vectors = Arc::new(vectors);
        read.lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, vectors.clone());
        Ok(VectorFile {
            written: written.to_string(),
            vectors,
        })
    }

    /// The dimension of the file's vectors.
    pub fn dim(&self) -> usize {
        self.vectors.dim
    }

    /// A request's vector: number `index` (wrapped into the file), or one drawn from the
    /// request's random stream `rng`.
    pub fn pick(&self, index: Option<i64>, rng: &mut SmallRng) -> &[f32] {
        let len = self.vectors.len() as u64;
        let i = match index {
            Some(i) => i.rem_euclid(len as i64) as u64,
            None => rng.random_range(0..len),
        };
        self.vectors.get(i as usize)
    }
}

/// The `vector<T, N>` columns the schema's statements declare: name (lower case unless
/// quoted) and dimension. A name declared twice with different dimensions is left out.
pub fn declared_vectors(schema: &[String]) -> Vec<(String, usize)> {
    let mut found: Vec<(String, Option<usize>)> = Vec::new();
    for statement in schema {
        let lower = statement.to_ascii_lowercase();
        let mut from = 0;
        while let Some(at) = lower[from..].find("vector").map(|i| from + i) {
            from = at + "vector".len();
            let Some(rest) = lower[from..].trim_start().strip_prefix('<') else {
                continue;
            };
            let Some((_, after_type)) = rest.split_once(',') else {
                continue;
            };
            let Some(dim) = after_type
                .split_once('>')
                .and_then(|(n, _)| n.trim().parse::<usize>().ok())
            else {
                continue;
            };
            let Some(name) = last_name(&statement[..at]) else {
                continue;
            };
            match found.iter_mut().find(|(n, _)| *n == name) {
                Some((_, d)) if *d != Some(dim) => *d = None,
                Some(_) => {}
                None => found.push((name, Some(dim))),
            }
        }
    }
    found
        .into_iter()
        .filter_map(|(n, d)| Some((n, d?)))
        .collect()
}

/// The name that ends `text` (a column's, before its type or an operator): lower case
/// unless quoted.
fn last_name(text: &str) -> Option<String> {
    let text = text.trim_end();
    if let Some(quoted) = text.strip_suffix('"') {
        let start = quoted.rfind('"')?;
        return Some(quoted[start + 1..].to_string());
    }
    let start = text
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = &text[start..];
    (!name.is_empty()).then(|| name.to_ascii_lowercase())
}

/// The column of each bind marker of `cql`, where the text shows it: an INSERT's column
/// list matched with its `VALUES`, `ORDER BY c ANN OF ?`, `c = ?` (and other comparisons).
/// The server's own metadata decides when the statements are prepared; this reads only
/// what can be checked before connecting.
pub fn marker_columns(cql: &str) -> Vec<Option<String>> {
    let markers: Vec<usize> = cql.match_indices('?').map(|(i, _)| i).collect();
    let mut columns: Vec<Option<String>> = markers
        .iter()
        .map(|at| {
            let before = cql[..*at].trim_end();
            let upper = before.to_ascii_uppercase();
            if let Some(head) = upper.strip_suffix("OF") {
                let head = head.trim_end();
                let ann = head.strip_suffix("ANN")?;
                return last_name(&before[..ann.len()]);
            }
            let operator = before.trim_end_matches(['=', '<', '>', '!']);
            (operator.len() < before.len())
                .then(|| last_name(operator))
                .flatten()
        })
        .collect();
    // INSERT INTO t (a, b) VALUES (?, ?): the k-th value is the k-th column's.
    let upper = cql.to_ascii_uppercase();
    if upper.trim_start().starts_with("INSERT") {
        if let (Some(open), Some(values)) = (cql.find('('), upper.find("VALUES")) {
            let names = cql[open + 1..values].rsplit_once(')').map(|(n, _)| n);
            let list = cql[values..]
                .split_once('(')
                .map(|(_, l)| l.rsplit_once(')').map_or(l, |(l, _)| l));
            if let (Some(names), Some(list)) = (names, list) {
                let names: Vec<&str> = names.split(',').collect();
                let mut marker = 0;
                for (k, value) in list.split(',').enumerate() {
                    let count = value.matches('?').count();
                    if value.trim() == "?" && marker < columns.len() {
                        columns[marker] = names.get(k).and_then(|n| last_name(n));
                    }
                    marker += count;
                }
            }
        }
    }
    columns
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Writes `vectors` as an .fvecs file.
    pub fn fvecs(path: &Path, vectors: &[Vec<f32>]) {
        let mut bytes = Vec::new();
        for v in vectors {
            bytes.extend_from_slice(&(v.len() as i32).to_le_bytes());
            for x in v {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn a_file_is_read_once_and_relative_to_the_workload() {
        let dir = tempfile::tempdir().unwrap();
        fvecs(
            &dir.path().join("q.fvecs"),
            &[vec![1.0, 2.0], vec![3.0, 4.0]],
        );
        let a = VectorFile::open("q.fvecs", Some(dir.path())).unwrap();
        let b = VectorFile::open(dir.path().join("q.fvecs").to_str().unwrap(), None).unwrap();
        assert!(Arc::ptr_eq(&a.vectors, &b.vectors), "read once");
        assert_eq!((a.dim(), a.vectors.len()), (2, 2));
        let missing = VectorFile::open("nothing.fvecs", Some(dir.path())).unwrap_err();
        assert!(missing.contains("nothing.fvecs"), "{missing}");
        assert!(!missing.contains('\n'), "{missing}");
        let unknown = VectorFile::open("q.csv", Some(dir.path())).unwrap_err();
        assert!(unknown.contains("unknown format"), "{unknown}");
    }

    #[test]
    fn vector_columns_and_their_markers_are_read_from_the_cql() {
        let schema = [
            "CREATE TABLE IF NOT EXISTS {keyspace}.items (id bigint PRIMARY KEY, V vector<float, 8>, \"E\" VECTOR < float , 3 >)".to_string(),
            "CREATE TABLE {keyspace}.other (id int PRIMARY KEY, v vector<float, 4>, w vector<float, 2>)".to_string(),
        ];
        // v is declared with two dimensions: not known before the server says.
        assert_eq!(
            declared_vectors(&schema),
            [("E".to_string(), 3), ("w".to_string(), 2)]
        );
        let name = |s: &str| Some(s.to_string());
        assert_eq!(
            marker_columns("SELECT id FROM t WHERE k = ? ORDER BY v ANN OF ? LIMIT 10"),
            [name("k"), name("v")]
        );
        assert_eq!(
            marker_columns("INSERT INTO t (id, \"E\", ts) VALUES (?, ?, now()) USING TTL ?"),
            [name("id"), name("E"), None]
        );
        assert_eq!(marker_columns("SELECT * FROM t LIMIT ?"), [None]);
    }
}
