//! A worker's run directory carried through its pod's log: `headroom kube pack` writes the
//! directory as a gzipped tar, base64, between two marker lines on stdout; the coordinator
//! (or `headroom kube unpack` on a log fetched with kubectl) finds the block and unpacks it.
//! Decision 0010 says why the log and not a shared volume.
//!
//! The begin line carries the worker's number, its run's exit code and the packed size, so a
//! log cut short (rotated away, or truncated) is told apart from a complete block; gzip's own
//! checksum catches the rest. A log read with a prefix per line (`kubectl logs --prefix`,
//! `--timestamps`, or several pods interleaved) is read too: the text before the begin marker
//! is that block's prefix, and only lines with the same prefix belong to it.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Component, Path, PathBuf};

use base64::Engine;

/// The start of the line before a packed directory.
const BEGIN: &str = "=== headroom run directory begin";
/// The start of the line after it.
const END: &str = "=== headroom run directory end";
/// Characters of base64 per line: short lines survive every log pipeline.
const LINE_CHARS: usize = 76;

/// The largest block a worker writes by default: the coordinator follows each pod's log as
/// it is written, so the kubelet's rotation (`containerLogMaxSize`, 10 MiB by default) does
/// not bound it (decision 0014); well below [`MAX_BLOCK_BYTES`], which a reader accepts.
pub const DEFAULT_MAX_BYTES: u64 = 192 << 20;

/// What a begin line says about its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackHeader {
    /// The worker, K (1-based).
    pub worker: u32,
    /// The exit code of the worker's run (0, 3 or 4: those leave a whole directory).
    pub exit_code: i32,
    /// The length of the base64 text between the markers.
    pub encoded_bytes: u64,
}

/// Why a directory could not be packed or a block unpacked.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// Reading the directory or writing the archive failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, with the path.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The packed directory would not fit in the log.
    #[error(
        "the run directory {dir} packs to {bytes} bytes of log, over the {max} allowed (the \
         kubelet keeps 10 MiB of a container's log by default): shorten the run, lengthen \
         --interval, or raise the limit where the cluster's containerLogMaxSize allows it"
    )]
    TooBig {
        /// The directory.
        dir: String,
        /// Its packed size, base64 text.
        bytes: u64,
        /// The limit.
        max: u64,
    },
    /// A block in the log is not whole.
    #[error("worker {worker}'s packed run directory is damaged: {why}")]
    Damaged {
        /// The worker.
        worker: u32,
        /// What is wrong.
        why: String,
    },
    /// The directory a block would unpack into holds files already.
    #[error(transparent)]
    Occupied(crate::usage::UsageError),
}

impl crate::usage::Blame for PackError {
    /// A damaged log, a directory too big to pack or one already written are the user's to
    /// mend (another log, a shorter run, another --out); reading or writing files is not.
    fn is_usage_error(&self) -> bool {
        !matches!(self, PackError::Io { .. })
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> PackError {
    let what = what.into();
    move |source| PackError::Io { what, source }
}

/// The directory `dir` as a gzipped tar, its files at the archive's top.
pub fn archive(dir: &Path) -> Result<Vec<u8>, PackError> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.follow_symlinks(false);
    tar.append_dir_all(".", dir)
        .map_err(io(format!("cannot pack {}", dir.display())))?;
    let gz = tar
        .into_inner()
        .map_err(io(format!("cannot pack {}", dir.display())))?;
    gz.finish()
        .map_err(io(format!("cannot pack {}", dir.display())))
}

/// Writes `dir` packed, between its marker lines, to `out`; refuses a block over
/// `max_bytes` of base64 before writing anything. Returns the block's header.
pub fn pack(
    dir: &Path,
    worker: u32,
    exit_code: i32,
    max_bytes: u64,
    out: &mut dyn Write,
) -> Result<PackHeader, PackError> {
    let bytes = archive(dir)?;
    let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let header = PackHeader {
        worker,
        exit_code,
        encoded_bytes: text.len() as u64,
    };
    if header.encoded_bytes > max_bytes {
        return Err(PackError::TooBig {
            dir: dir.display().to_string(),
            bytes: header.encoded_bytes,
            max: max_bytes,
        });
    }
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        writeln!(
            out,
            "{BEGIN} worker={worker} exit={exit_code} bytes={} ===",
            header.encoded_bytes
        )?;
        for line in text.as_bytes().chunks(LINE_CHARS) {
            out.write_all(line)?;
            out.write_all(b"\n")?;
        }
        writeln!(out, "{END} worker={worker} ===")?;
        out.flush()
    };
    write(out).map_err(io("cannot write the packed run directory"))?;
    Ok(header)
}

/// One packed block found in a log: its header and its archive (gzipped tar).
#[derive(Debug, Clone, PartialEq)]
pub struct Packed {
    /// What the begin line said.
    pub header: PackHeader,
    /// The archive, decoded.
    pub archive: Vec<u8>,
}

/// A block being read: the prefix of its lines, its header, its text so far.
struct Open {
    header: PackHeader,
    text: String,
}

/// The longest block a log may announce: far above what a kubelet keeps of a container's
/// log (10 MiB by default), far below what would exhaust memory.
pub const MAX_BLOCK_BYTES: u64 = 256 << 20;

/// The most a block may unpack to: a run directory is a few megabytes; an archive that
/// would fill the disk is not one.
pub const MAX_UNPACKED_BYTES: u64 = 2 << 30;

/// The longest log line kept whole; the rest of a longer one is skipped. A block's lines
/// are [`LINE_CHARS`] long behind a prefix of a few dozen characters.
const MAX_LINE_BYTES: usize = 64 << 10;

/// Every whole block in a log, in the order they end; blocks cut short are errors, and a
/// log with none gives an empty list. Memory stays bounded whatever the log holds: lines
/// are read up to [`MAX_LINE_BYTES`], and a block may not announce more than
/// [`MAX_BLOCK_BYTES`] nor hold more than it announced.
pub fn find_blocks(mut log: impl BufRead) -> Result<Vec<Packed>, PackError> {
    let mut collector = Collector::default();
    let mut bytes = Vec::new();
    while read_line_capped(&mut log, &mut bytes, MAX_LINE_BYTES)
        .map_err(io("cannot read the log"))?
    {
        collector.line(&bytes)?;
    }
    collector.finish()
}

/// How many lines outside any block a [`Collector`] keeps, for a message.
const TAIL_KEPT: usize = 16;

/// Reads a log line by line, as it comes (from a file, or followed while a pod writes it),
/// and keeps its whole blocks and the last lines outside them.
#[derive(Default)]
pub struct Collector {
    /// Blocks begun and not yet ended, by the prefix of their lines.
    open: BTreeMap<String, Open>,
    /// Whole blocks, in the order they ended.
    found: Vec<Packed>,
    /// The last lines that belong to no block.
    tail: std::collections::VecDeque<String>,
}

impl Collector {
    /// Takes one line (with or without its newline; at most [`MAX_LINE_BYTES`] of it are
    /// looked at). A block that goes wrong (an unreadable begin line, more than announced,
    /// a second begin before its end) is an error at once.
    pub fn line(&mut self, bytes: &[u8]) -> Result<(), PackError> {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_LINE_BYTES)]);
        let line = text.trim_end_matches(['\n', '\r']);
        if let Some(at) = line.find(BEGIN) {
            let prefix = line[..at].to_string();
            let header =
                parse_begin(&line[at + BEGIN.len()..]).ok_or_else(|| PackError::Damaged {
                    worker: 0,
                    why: format!("unreadable begin line: {}", crate::usage::cut(line, 200)),
                })?;
            if header.encoded_bytes > MAX_BLOCK_BYTES {
                return Err(PackError::Damaged {
                    worker: header.worker,
                    why: format!(
                        "its begin line announces {} bytes, more than the {} MiB a block may hold",
                        header.encoded_bytes,
                        MAX_BLOCK_BYTES >> 20
                    ),
                });
            }
            if let Some(cut) = self.open.insert(
                prefix,
                Open {
                    header,
                    text: String::new(),
                },
            ) {
                return Err(cut_short(&cut));
            }
            return Ok(());
        }
        if let Some(at) = line.find(END) {
            let prefix = &line[..at];
            if let Some(block) = self.open.remove(prefix) {
                self.found.push(decode(block)?);
            }
            return Ok(());
        }
        // A line belongs to the block whose prefix it starts with; the longest prefix
        // wins, so "" (a log without prefixes) takes only what no other block claims.
        let owner = self
            .open
            .iter_mut()
            .filter(|(prefix, _)| line.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len());
        match owner {
            Some((prefix, block)) => {
                let body = &line[prefix.len()..];
                if !body.is_empty()
                    && body
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
                {
                    if (block.text.len() + body.len()) as u64 > block.header.encoded_bytes {
                        return Err(PackError::Damaged {
                            worker: block.header.worker,
                            why: format!(
                                "more than the {} bytes announced between the markers",
                                block.header.encoded_bytes
                            ),
                        });
                    }
                    block.text.push_str(body);
                }
            }
            None => {
                self.tail.push_back(crate::usage::cut(line, 500));
                if self.tail.len() > TAIL_KEPT {
                    self.tail.pop_front();
                }
            }
        }
        Ok(())
    }

    /// The last lines seen outside any block, joined by newlines.
    pub fn tail(&self, lines: usize) -> String {
        let skip = self.tail.len().saturating_sub(lines);
        self.tail
            .iter()
            .skip(skip)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The whole blocks; a block begun and never ended is an error (the log was cut).
    pub fn finish(mut self) -> Result<Vec<Packed>, PackError> {
        if let Some(block) = std::mem::take(&mut self.open).into_values().next() {
            return Err(cut_short(&block));
        }
        Ok(self.found)
    }
}

/// Reads one line (with its newline) into `line`, keeping at most `max` bytes of it and
/// skipping the rest; `false` at the end of the input.
fn read_line_capped(
    log: &mut impl BufRead,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<bool> {
    line.clear();
    let mut any = false;
    loop {
        let available = match log.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(any);
        }
        any = true;
        let (taken, ends) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = max.saturating_sub(line.len());
        line.extend_from_slice(&available[..taken.min(room)]);
        log.consume(taken);
        if ends {
            return Ok(true);
        }
    }
}

fn cut_short(block: &Open) -> PackError {
    PackError::Damaged {
        worker: block.header.worker,
        why: format!(
            "the log ends {} of {} bytes into it (was the log rotated or cut?)",
            block.text.len(),
            block.header.encoded_bytes
        ),
    }
}

/// `worker=2 exit=0 bytes=1234 ===` into a header.
fn parse_begin(rest: &str) -> Option<PackHeader> {
    let mut worker = None;
    let mut exit_code = None;
    let mut bytes = None;
    for word in rest.split_whitespace() {
        match word.split_once('=') {
            Some(("worker", v)) => worker = v.parse().ok(),
            Some(("exit", v)) => exit_code = v.parse().ok(),
            Some(("bytes", v)) => bytes = v.parse().ok(),
            _ => {}
        }
    }
    Some(PackHeader {
        worker: worker?,
        exit_code: exit_code?,
        encoded_bytes: bytes?,
    })
}

fn decode(block: Open) -> Result<Packed, PackError> {
    let worker = block.header.worker;
    if block.text.len() as u64 != block.header.encoded_bytes {
        return Err(PackError::Damaged {
            worker,
            why: format!(
                "{} bytes between the markers, {} announced",
                block.text.len(),
                block.header.encoded_bytes
            ),
        });
    }
    let archive = base64::engine::general_purpose::STANDARD
        .decode(block.text.as_bytes())
        .map_err(|e| PackError::Damaged {
            worker,
            why: format!("not base64: {e}"),
        })?;
    Ok(Packed {
        header: block.header,
        archive,
    })
}

/// Unpacks an archive into `dir` (created; it must not hold files yet). Entries that would
/// land outside `dir` (absolute paths, `..`) or are not plain files or directories are
/// refused: a log is not trusted input.
pub fn unpack(packed: &Packed, dir: &Path) -> Result<(), PackError> {
    let worker = packed.header.worker;
    let damaged = |why: String| PackError::Damaged { worker, why };
    crate::output_dir::claim_new(dir).map_err(PackError::Occupied)?;
    std::fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
    let gz = flate2::read::GzDecoder::new(packed.archive.as_slice());
    let mut tar = tar::Archive::new(gz);
    let entries = tar
        .entries()
        .map_err(|e| damaged(format!("not a tar.gz: {e}")))?;
    let mut unpacked = 0u64;
    for entry in entries {
        let mut entry = entry.map_err(|e| damaged(format!("not a tar.gz: {e}")))?;
        let path: PathBuf = entry
            .path()
            .map_err(|e| damaged(format!("an unreadable name: {e}")))?
            .into_owned();
        if path
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(damaged(format!("{} would land outside", path.display())));
        }
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind.is_dir()) {
            return Err(damaged(format!("{} is not a plain file", path.display())));
        }
        // Checked before the entry is read: a small archive can announce, and inflate to,
        // more than any disk holds.
        unpacked = unpacked.saturating_add(entry.header().size().unwrap_or(u64::MAX));
        if unpacked > MAX_UNPACKED_BYTES {
            return Err(damaged(format!(
                "it unpacks to more than {} GiB, which no run directory holds",
                MAX_UNPACKED_BYTES >> 30
            )));
        }
        entry
            .unpack_in(dir)
            .map_err(|e| damaged(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// Where worker `worker`'s block unpacks under `out`: `out/worker-K`.
pub fn worker_dir(out: &Path, worker: u32) -> PathBuf {
    out.join(format!("worker-{worker}"))
}

/// Unpacks every block into `out/worker-K`; returns the headers, in worker order.
pub fn unpack_all(mut blocks: Vec<Packed>, out: &Path) -> Result<Vec<PackHeader>, PackError> {
    blocks.sort_by_key(|b| b.header.worker);
    for block in &blocks {
        unpack(block, &worker_dir(out, block.header.worker))?;
    }
    Ok(blocks.into_iter().map(|b| b.header).collect())
}

/// Unpacks every block of `log` into `out/worker-K`; returns the headers, in worker order.
pub fn unpack_log(log: impl BufRead, out: &Path) -> Result<Vec<PackHeader>, PackError> {
    unpack_all(find_blocks(log)?, out)
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn run_dir(root: &Path, name: &str) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), "{\"rate\": 4000}\n").unwrap();
        std::fs::write(dir.join("histograms.hlog"), "x".repeat(10_000)).unwrap();
        std::fs::write(dir.join("read.hgrm"), format!("{name}\n")).unwrap();
        dir
    }

    fn packed_text(dir: &Path, worker: u32, exit_code: i32) -> String {
        let mut out = Vec::new();
        pack(dir, worker, exit_code, DEFAULT_MAX_BYTES, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_directory_comes_back_whole_from_a_log_with_other_lines_around_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = run_dir(tmp.path(), "w");
        let log = format!(
            "run: 4000/s, p99 3 ms\nSLA failed\n{}bye\n",
            packed_text(&dir, 2, 3)
        );
        let out = tmp.path().join("back");
        let headers = unpack_log(Cursor::new(log), &out).unwrap();
        assert_eq!(headers.len(), 1);
        assert_eq!((headers[0].worker, headers[0].exit_code), (2, 3));
        for file in ["config.json", "histograms.hlog", "read.hgrm"] {
            assert_eq!(
                std::fs::read(out.join("worker-2").join(file)).unwrap(),
                std::fs::read(dir.join(file)).unwrap(),
                "{file}"
            );
        }
    }

    #[test]
    fn interleaved_prefixed_logs_of_two_pods_unpack_each_to_its_worker() {
        let tmp = tempfile::tempdir().unwrap();
        let one = run_dir(tmp.path(), "one");
        let two = run_dir(tmp.path(), "two");
        let a: Vec<String> = packed_text(&one, 1, 0)
            .lines()
            .map(|l| format!("[pod/j-0-abc/worker] {l}"))
            .collect();
        let b: Vec<String> = packed_text(&two, 2, 0)
            .lines()
            .map(|l| format!("[pod/j-1-def/worker] {l}"))
            .collect();
        let mut log = String::new();
        for i in 0..a.len().max(b.len()) {
            for side in [&a, &b] {
                if let Some(line) = side.get(i) {
                    log.push_str(line);
                    log.push('\n');
                }
            }
        }
        let out = tmp.path().join("back");
        let headers = unpack_log(Cursor::new(log), &out).unwrap();
        assert_eq!(headers.iter().map(|h| h.worker).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(
            std::fs::read_to_string(out.join("worker-1/read.hgrm")).unwrap(),
            "one\n"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("worker-2/read.hgrm")).unwrap(),
            "two\n"
        );
    }

    #[test]
    fn a_block_cut_short_is_an_error_and_a_log_without_one_is_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = run_dir(tmp.path(), "w");
        let text = packed_text(&dir, 1, 0);
        let cut: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
        let err = find_blocks(Cursor::new(cut)).unwrap_err().to_string();
        assert!(err.contains("worker 1") && err.contains("rotated"), "{err}");

        let missing_line: String = text
            .lines()
            .enumerate()
            .filter(|(i, _)| *i != 2)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        let err = find_blocks(Cursor::new(missing_line))
            .unwrap_err()
            .to_string();
        assert!(err.contains("announced"), "{err}");

        assert!(find_blocks(Cursor::new("Error: no route to host\n"))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_log_that_never_ends_a_line_or_a_block_keeps_memory_bounded() {
        // /dev/zero given as the log: one endless line, read a piece at a time; here a
        // hundred megabytes of it, of which a line keeps at most MAX_LINE_BYTES.
        let zeros = std::io::Read::take(std::io::repeat(0), 100 << 20);
        let mut reader = std::io::BufReader::new(zeros);
        let mut line = Vec::new();
        assert!(read_line_capped(&mut reader, &mut line, MAX_LINE_BYTES).unwrap());
        assert_eq!(line.len(), MAX_LINE_BYTES);
        assert!(!read_line_capped(&mut reader, &mut line, MAX_LINE_BYTES).unwrap());
        assert!(find_blocks(std::io::BufReader::new(std::io::Read::take(
            std::io::repeat(b'A'),
            10 << 20
        )))
        .unwrap()
        .is_empty());

        // A begin line announcing more than a block may hold.
        let huge = format!(
            "{BEGIN} worker=1 exit=0 bytes={} ===\n",
            MAX_BLOCK_BYTES + 1
        );
        let err = find_blocks(Cursor::new(huge)).unwrap_err().to_string();
        assert!(err.contains("more than the 256 MiB"), "{err}");
        // A block holding more than it announced, before its end marker.
        let over = format!("{BEGIN} worker=1 exit=0 bytes=4 ===\nAAAA\nAAAA\n");
        let err = find_blocks(Cursor::new(over)).unwrap_err().to_string();
        assert!(err.contains("more than the 4 bytes announced"), "{err}");
        // Lines that are not UTF-8 are read, not an error.
        assert!(find_blocks(Cursor::new(b"\xff\xfe\n".to_vec()))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn an_archive_that_unpacks_to_more_than_a_run_directory_is_refused() {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_path("histograms.hlog").unwrap();
        header.set_size(MAX_UNPACKED_BYTES + 1);
        header.set_mode(0o644);
        header.set_cksum();
        // The header alone: its size is what the check reads, before any content.
        builder.append(&header, std::io::empty()).ok();
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        let packed = Packed {
            header: PackHeader {
                worker: 1,
                exit_code: 0,
                encoded_bytes: 0,
            },
            archive: gz.finish().unwrap(),
        };
        let tmp = tempfile::tempdir().unwrap();
        let err = unpack(&packed, &tmp.path().join("w"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unpacks to more than 2 GiB"), "{err}");
    }

    #[test]
    fn a_worker_is_never_unpacked_over_one_already_there() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = run_dir(tmp.path(), "w");
        let log = packed_text(&dir, 1, 0);
        let out = tmp.path().join("back");
        unpack_log(Cursor::new(log.clone()), &out).unwrap();
        let err = unpack_log(Cursor::new(log), &out).unwrap_err();
        assert!(crate::usage::Blame::is_usage_error(&err), "{err}");
        assert!(err.to_string().contains("holds files already"), "{err}");
    }

    #[test]
    fn a_directory_over_the_limit_is_refused_before_anything_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = run_dir(tmp.path(), "w");
        let mut out = Vec::new();
        let err = pack(&dir, 1, 0, 100, &mut out).unwrap_err();
        assert!(matches!(err, PackError::TooBig { max: 100, .. }), "{err}");
        assert!(out.is_empty());
    }

    #[test]
    fn an_archive_reaching_outside_its_directory_is_refused() {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        let data = b"owned";
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        // `append_data` refuses `..`; write the name into the header directly.
        let name = b"../escape.txt";
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_cksum();
        builder.append(&header, &data[..]).unwrap();
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        let packed = Packed {
            header: PackHeader {
                worker: 1,
                exit_code: 0,
                encoded_bytes: 0,
            },
            archive: gz.finish().unwrap(),
        };
        let tmp = tempfile::tempdir().unwrap();
        let err = unpack(&packed, &tmp.path().join("w"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("outside"), "{err}");
        assert!(!tmp.path().join("escape.txt").exists());
    }
}
