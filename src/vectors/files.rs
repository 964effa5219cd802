//! Readers of the standard ANN benchmark files (those of the SIFT/GIST corpus and of
//! big-ann-benchmarks' subsets): `.fvecs` (per vector a little-endian i32 dimension, then that
//! many f32), `.ivecs` (the same with i32: the ground truth's neighbour ids), `.bvecs` (the
//! same with u8), and NumPy's `.npy` (format 1.0 or 2.0, a C-ordered 2-D array of `<f4`, or
//! of `<f8`, `|u1` or `<i4` converted to f32).
//!
//! A file is opened with [`crate::usage::open_input_file`] (a regular file only, never a
//! wait) and streamed: at most `max_vectors` vectors are read, so memory stays bounded
//! whatever the file's size. Whatever the user can mend (an empty or truncated file, a
//! dimension that changes, is 0 or absurd, a text file, a wrong dtype, a dimension other than
//! the one expected) is a [`UsageError`] naming the file and the cause in one line.

use std::io::Read;
use std::path::Path;

use super::Vectors;
use crate::usage::{open_input_file, UsageError};

/// The largest dimension taken as real: far above any embedding (Cassandra's vectors stop
/// well below), and small enough that the first four bytes of a text file are refused.
pub const MAX_DIM: usize = 1 << 16;

/// The formats, by the file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.fvecs`: f32 components.
    Fvecs,
    /// `.ivecs`: i32 components (neighbour ids).
    Ivecs,
    /// `.bvecs`: u8 components.
    Bvecs,
    /// `.npy`: a NumPy array.
    Npy,
}

impl Format {
    /// The format of a file by its extension, or a usage error naming the ones known.
    pub fn of(path: &Path, what: &str) -> Result<Format, UsageError> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("fvecs") => Ok(Format::Fvecs),
            Some("ivecs") => Ok(Format::Ivecs),
            Some("bvecs") => Ok(Format::Bvecs),
            Some("npy") => Ok(Format::Npy),
            _ => Err(UsageError::new(format!(
                "{what} {}: unknown format: give a .fvecs, .bvecs, .ivecs or .npy file",
                path.display()
            ))),
        }
    }
}

/// Reads up to `max_vectors` vectors of a file whose format its extension names. With
/// `expected_dim`, a file of another dimension is refused. `what` says what the file is,
/// e.g. "the base vectors file".
pub fn read_vectors(
    path: &Path,
    what: &str,
    expected_dim: Option<usize>,
    max_vectors: usize,
) -> Result<Vectors, UsageError> {
    let format = Format::of(path, what)?;
    let mut source = Source::open(path, what)?;
    let (dim, data) = match format {
        Format::Fvecs => read_vecs(&mut source, max_vectors, f32::from_le_bytes)?,
        Format::Ivecs => read_vecs(&mut source, max_vectors, |b| i32::from_le_bytes(b) as f32)?,
        Format::Bvecs => read_vecs(&mut source, max_vectors, |b: [u8; 1]| f32::from(b[0]))?,
        Format::Npy => read_npy(&mut source, max_vectors)?,
    };
    if let Some(expected) = expected_dim {
        if dim != expected {
            return Err(source.error(format!(
                "vectors of dimension {dim}, where {expected} was expected"
            )));
        }
    }
    Ok(Vectors::new(dim, data))
}

/// Neighbour ids, `k` per query: what an `.ivecs` ground-truth file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbours {
    /// How many ids each query has.
    pub k: usize,
    /// The ids, query after query.
    pub ids: Vec<u32>,
}

impl Neighbours {
    /// The ids of query `i`, closest first.
    pub fn of(&self, i: usize) -> &[u32] {
        &self.ids[i * self.k..(i + 1) * self.k]
    }

    /// How many queries there are.
    pub fn len(&self) -> usize {
        self.ids.len() / self.k
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// Reads the ground truth of up to `max_queries` queries from an `.ivecs` file; a negative
/// id is refused.
pub fn read_neighbours(
    path: &Path,
    what: &str,
    max_queries: usize,
) -> Result<Neighbours, UsageError> {
    let mut source = Source::open(path, what)?;
    let (k, ids) = read_vecs(&mut source, max_queries, i32::from_le_bytes)?;
    let ids = ids
        .into_iter()
        .enumerate()
        .map(|(i, id)| {
            u32::try_from(id).map_err(|_| {
                source.error(format!(
                    "vector {} holds the id {id}: ids are at least 0",
                    i / k
                ))
            })
        })
        .collect::<Result<Vec<u32>, UsageError>>()?;
    Ok(Neighbours { k, ids })
}

/// An open file read in order, with its name for messages.
struct Source {
    reader: std::io::BufReader<std::fs::File>,
    what: String,
    path: String,
    len: u64,
}

impl Source {
    fn open(path: &Path, what: &str) -> Result<Source, UsageError> {
        let (file, meta) = open_input_file(path, what)?;
        let source = Source {
            reader: std::io::BufReader::with_capacity(1 << 16, file),
            what: what.to_string(),
            path: path.display().to_string(),
            len: meta.len(),
        };
        if source.len == 0 {
            return Err(source.error("the file is empty".into()));
        }
        Ok(source)
    }

    fn error(&self, cause: String) -> UsageError {
        UsageError::new(format!("{} {}: {cause}", self.what, self.path))
    }

    /// Fills `buf` as far as the file goes; how many bytes it got.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, UsageError> {
        let mut got = 0;
        while got < buf.len() {
            match self.reader.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(format!("cannot read: {e}"))),
            }
        }
        Ok(got)
    }
}

/// A dimension read from the file checked: neither 0 nor absurd (a file of another kind).
fn check_dim(source: &Source, dim: i64, vector: usize) -> Result<usize, UsageError> {
    if dim == 0 {
        return Err(source.error(format!("vector {vector} has dimension 0")));
    }
    if dim < 0 || dim as u64 > MAX_DIM as u64 {
        return Err(source.error(format!(
            "not a vector file: vector {vector} would have dimension {dim} (at most {MAX_DIM})"
        )));
    }
    Ok(dim as usize)
}

/// The `.fvecs` family: per vector an i32 dimension, then that many components of `SIZE`
/// bytes, each converted by `convert`.
fn read_vecs<const SIZE: usize, T>(
    source: &mut Source,
    max_vectors: usize,
    convert: impl Fn([u8; SIZE]) -> T,
) -> Result<(usize, Vec<T>), UsageError> {
    let mut dim = 0;
    let mut data = Vec::new();
    let mut row = Vec::new();
    let mut vector = 0;
    while vector < max_vectors {
        let mut head = [0u8; 4];
        match source.fill(&mut head)? {
            0 => break,
            4 => {}
            got => {
                return Err(source.error(format!(
                    "truncated: vector {vector} is cut short in its dimension ({got} of 4 bytes)"
                )))
            }
        }
        let this = check_dim(source, i64::from(i32::from_le_bytes(head)), vector)?;
        if vector == 0 {
            dim = this;
            // Never more at once than the file could hold, whatever max_vectors says.
            let in_file = (source.len / (4 + (dim * SIZE) as u64)) as usize;
            data.reserve(dim * in_file.min(max_vectors));
            row = vec![0u8; dim * SIZE];
        } else if this != dim {
            return Err(source.error(format!(
                "vector {vector} has dimension {this}, where the vectors before it have {dim}"
            )));
        }
        let got = source.fill(&mut row)?;
        if got < row.len() {
            return Err(source.error(format!(
                "truncated: vector {vector} has {got} of its {} bytes",
                row.len()
            )));
        }
        data.extend(
            row.chunks_exact(SIZE)
                .map(|c| convert(c.try_into().expect("chunks of SIZE bytes"))),
        );
        vector += 1;
    }
    Ok((dim, data))
}

/// The dtypes read from `.npy` files, with their sizes.
#[derive(Debug, Clone, Copy)]
enum Dtype {
    F4,
    F8,
    U1,
    I4,
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Dtype::F4 | Dtype::I4 => 4,
            Dtype::F8 => 8,
            Dtype::U1 => 1,
        }
    }

    fn to_f32(self, b: &[u8]) -> f32 {
        match self {
            Dtype::F4 => f32::from_le_bytes(b.try_into().unwrap()),
            Dtype::F8 => f64::from_le_bytes(b.try_into().unwrap()) as f32,
            Dtype::U1 => f32::from(b[0]),
            Dtype::I4 => i32::from_le_bytes(b.try_into().unwrap()) as f32,
        }
    }
}

/// The longest `.npy` header read: NumPy pads its headers to 64 bytes; a few kB is generous.
const MAX_NPY_HEADER: usize = 1 << 16;

/// A `.npy` file: the magic string, the version, the header (a Python dict literal) and
/// the array's bytes in C order.
fn read_npy(source: &mut Source, max_vectors: usize) -> Result<(usize, Vec<f32>), UsageError> {
    let mut magic = [0u8; 8];
    let got = source.fill(&mut magic)?;
    if got < 8 || &magic[..6] != b"\x93NUMPY" {
        return Err(source.error("not a NumPy .npy file (no \\x93NUMPY at its start)".into()));
    }
    let header_len = match magic[6] {
        1 => {
            let mut b = [0u8; 2];
            (source.fill(&mut b)? == 2).then(|| usize::from(u16::from_le_bytes(b)))
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            (source.fill(&mut b)? == 4).then(|| u32::from_le_bytes(b) as usize)
        }
        v => {
            return Err(source.error(format!(
                "NumPy format version {v}.{} is not one headroom reads (1.0, 2.0 or 3.0)",
                magic[7]
            )))
        }
    };
    let header_len = header_len.ok_or_else(|| source.error("truncated in its header".into()))?;
    if header_len > MAX_NPY_HEADER {
        return Err(source.error(format!("a header of {header_len} bytes: not a NumPy file")));
    }
    let mut header = vec![0u8; header_len];
    if source.fill(&mut header)? < header_len {
        return Err(source.error("truncated in its header".into()));
    }
    let header = String::from_utf8_lossy(&header).into_owned();
    let (dtype, rows, dim) = parse_npy_header(source, &header)?;
    let dim = check_dim(source, dim as i64, 0)?;
    let take = rows.min(max_vectors);
    let mut data = Vec::with_capacity(take * dim);
    let mut row = vec![0u8; dim * dtype.size()];
    for vector in 0..take {
        let got = source.fill(&mut row)?;
        if got < row.len() {
            return Err(source.error(format!(
                "truncated: vector {vector} has {got} of its {} bytes (the header says {rows} vectors)",
                row.len()
            )));
        }
        data.extend(row.chunks_exact(dtype.size()).map(|b| dtype.to_f32(b)));
    }
    Ok((dim, data))
}

/// The dtype, rows and columns of a `.npy` header such as
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (1000, 128), }`.
fn parse_npy_header(source: &Source, header: &str) -> Result<(Dtype, usize, usize), UsageError> {
    let value = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
        Some(rest)
    };
    let descr = value("descr")
        .and_then(|r| r.strip_prefix('\''))
        .and_then(|r| r.split('\'').next())
        .ok_or_else(|| source.error("a NumPy header without its dtype ('descr')".into()))?;
    let dtype = match descr {
        "<f4" => Dtype::F4,
        "<f8" => Dtype::F8,
        "|u1" | "<u1" | ">u1" => Dtype::U1,
        "<i4" => Dtype::I4,
        other => {
            return Err(source.error(format!(
            "an array of dtype {:?}: give float32 ('<f4'), float64, uint8 or int32, little-endian",
            crate::usage::cut(other, 20)
        )))
        }
    };
    let fortran = value("fortran_order")
        .ok_or_else(|| source.error("a NumPy header without 'fortran_order'".into()))?;
    if fortran.starts_with("True") {
        return Err(source.error(
            "an array in Fortran order: save it in C order (numpy.ascontiguousarray)".into(),
        ));
    }
    let shape = value("shape")
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.split(')').next())
        .ok_or_else(|| source.error("a NumPy header without its 'shape'".into()))?;
    let sizes: Vec<&str> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let parsed: Option<Vec<usize>> = sizes.iter().map(|s| s.parse().ok()).collect();
    match parsed.as_deref() {
        Some(&[rows, dim]) => Ok((dtype, rows, dim)),
        _ => Err(source.error(format!(
            "an array of shape ({shape}): give a 2-D array, one vector per row"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::vectors_fixture;

    /// The rows make.py writes: vector i holds i*10 + j/2.
    fn rows() -> Vec<f32> {
        (0..3)
            .flat_map(|i| (0..4).map(move |j| i as f32 * 10.0 + j as f32 / 2.0))
            .collect()
    }

    fn read(name: &str) -> Result<Vectors, UsageError> {
        read_vectors(
            &vectors_fixture(name),
            "the base vectors file",
            None,
            usize::MAX,
        )
    }

    fn error_of(name: &str) -> String {
        read(name).unwrap_err().to_string()
    }

    /// The error of bytes written to a file of this name, its directory's path left out.
    fn error_of_bytes(name: &str, bytes: &[u8]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let e = read_vectors(&path, "the base vectors file", None, usize::MAX)
            .unwrap_err()
            .to_string();
        e.replace(&format!("{}/", dir.path().display()), "")
    }

    fn fvecs(rows: &[&[f32]]) -> Vec<u8> {
        let mut out = Vec::new();
        for row in rows {
            out.extend((row.len() as i32).to_le_bytes());
            for x in *row {
                out.extend(x.to_le_bytes());
            }
        }
        out
    }

    #[test]
    fn vectors_files_of_the_reference_writers_are_read() {
        for name in ["base.fvecs", "f4.npy", "f8.npy", "v2.npy"] {
            assert_eq!(read(name).unwrap(), Vectors::new(4, rows()), "{name}");
        }
        let bytes = Vectors::new(4, vec![0.0, 1.0, 2.0, 255.0, 10.0, 20.0, 30.0, 40.0]);
        assert_eq!(read("base.bvecs").unwrap(), bytes);
        assert_eq!(read("u1.npy").unwrap(), bytes);
        assert_eq!(
            read("i4.npy").unwrap(),
            Vectors::new(2, vec![1.0, -2.0, 3.0, 4.0])
        );
        let truth =
            read_neighbours(&vectors_fixture("truth.ivecs"), "the ground truth", 10).unwrap();
        assert_eq!(truth.k, 3);
        assert_eq!(truth.len(), 2);
        assert_eq!(truth.of(1), &[1, 2, 0]);
    }

    #[test]
    fn vectors_files_stop_at_the_limit_and_check_the_dimension() {
        for name in ["base.fvecs", "f4.npy"] {
            let path = vectors_fixture(name);
            let two = read_vectors(&path, "the base vectors file", Some(4), 2).unwrap();
            assert_eq!(two.data, rows()[..8]);
            let e = read_vectors(&path, "the base vectors file", Some(128), 2)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("the base vectors file ")
                    && e.ends_with(&format!(
                        "{name}: vectors of dimension 4, where 128 was expected"
                    )),
                "{e}"
            );
        }
        let truth =
            read_neighbours(&vectors_fixture("truth.ivecs"), "the ground truth", 1).unwrap();
        assert_eq!(truth.ids, vec![2, 0, 1]);
    }

    #[test]
    fn vectors_npy_files_of_other_shapes_or_dtypes_are_refused() {
        let e = error_of("one_d.npy");
        assert!(
            e.ends_with("one_d.npy: an array of shape (5,): give a 2-D array, one vector per row"),
            "{e}"
        );
        let e = error_of("fortran.npy");
        assert!(e.ends_with("fortran.npy: an array in Fortran order: save it in C order (numpy.ascontiguousarray)"), "{e}");
        let e = error_of("f2.npy");
        assert!(e.ends_with("f2.npy: an array of dtype \"<f2\": give float32 ('<f4'), float64, uint8 or int32, little-endian"), "{e}");
        let mut cut = std::fs::read(vectors_fixture("f4.npy")).unwrap();
        cut.truncate(cut.len() - 5);
        let e = error_of_bytes("cut.npy", &cut);
        assert_eq!(e, "the base vectors file cut.npy: truncated: vector 2 has 11 of its 16 bytes (the header says 3 vectors)");
        let e = error_of_bytes("text.npy", b"hello, world\n");
        assert_eq!(
            e,
            "the base vectors file text.npy: not a NumPy .npy file (no \\x93NUMPY at its start)"
        );
    }

    #[test]
    fn vectors_files_in_bad_forms_are_refused_with_the_cause() {
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("empty.fvecs", vec![], "the file is empty"),
            (
                "cut.fvecs",
                fvecs(&[&[1.0, 2.0], &[3.0, 4.0]])[..17].to_vec(),
                "truncated: vector 1 has 1 of its 8 bytes",
            ),
            (
                "head.fvecs",
                [fvecs(&[&[1.0, 2.0]]), vec![2, 0]].concat(),
                "truncated: vector 1 is cut short in its dimension (2 of 4 bytes)",
            ),
            (
                "changes.fvecs",
                fvecs(&[&[1.0, 2.0], &[3.0, 4.0], &[5.0]]),
                "vector 2 has dimension 1, where the vectors before it have 2",
            ),
            ("zero.fvecs", fvecs(&[&[]]), "vector 0 has dimension 0"),
            (
                "negative.ivecs",
                (-3i32).to_le_bytes().to_vec(),
                "not a vector file: vector 0 would have dimension -3 (at most 65536)",
            ),
            (
                "text.fvecs",
                b"id,x,y\n1,0.5,0.25\n".to_vec(),
                "not a vector file: vector 0 would have dimension 2016175209 (at most 65536)",
            ),
            (
                "vectors.csv",
                b"1,2\n".to_vec(),
                "unknown format: give a .fvecs, .bvecs, .ivecs or .npy file",
            ),
        ];
        for (name, bytes, cause) in cases {
            assert_eq!(
                error_of_bytes(name, &bytes),
                format!("the base vectors file {name}: {cause}")
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("negative_id.ivecs");
        let mut bytes = 2i32.to_le_bytes().to_vec();
        bytes.extend(4i32.to_le_bytes());
        bytes.extend((-1i32).to_le_bytes());
        std::fs::write(&path, bytes).unwrap();
        let e = read_neighbours(&path, "the ground truth", 10)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("negative_id.ivecs: vector 0 holds the id -1: ids are at least 0"),
            "{e}"
        );
        let e = read_vectors(
            Path::new("/dev/zero.fvecs"),
            "the base vectors file",
            None,
            1,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("cannot read the base vectors file /dev/zero.fvecs"),
            "{e}"
        );
    }
}
