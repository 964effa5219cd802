//! What a fleet's pod runs: `headroom kube worker -- ARGS...`. It runs the worker's
//! `headroom run ARGS... --worker K/N --out /results/worker-K` (K from the Job's completion
//! index, N from `HEADROOM_WORKERS`), passes the run's output on to the pod's log line by
//! line as it comes (`kubectl logs -f` shows the trial as it goes), and packs the run
//! directory into the log at the end (see [`super::pack`]), so that the coordinator gets it
//! back. This is what a shell script did before: the image then needs no shell (`headroom
//! kube image` holds the binary alone).
//!
//! As a container's first process it forwards SIGTERM and SIGINT to the run, which ends
//! cleanly and keeps what it measured; that directory is packed too (exit code 130), so a
//! pod deleted mid-run, or a stopped trial, still brings its measurements back.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};

/// Where a worker's run directory is written in its pod (an emptyDir volume).
pub const RESULTS_DIR: &str = "/results";

use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::signal::unix::SignalKind;

use super::pack;

/// The run's exit codes that leave a whole run directory: done, SLA failed, no verdict,
/// stopped (what was measured until then).
const PACKED_CODES: [i32; 4] = [0, 3, 4, 130];

/// Why the worker could not do its part.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The pod's environment lacks what the Job sets.
    #[error("{0}")]
    Environment(String),
    /// Starting the run or writing its output failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// K and N from the pod's environment: `JOB_COMPLETION_INDEX` (from 0) and
/// `HEADROOM_WORKERS`.
pub fn slot_from_env(
    index: Option<String>,
    workers: Option<String>,
) -> Result<(u32, u32), WorkerError> {
    let index: u32 = index
        .as_deref()
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| {
            WorkerError::Environment(
                "JOB_COMPLETION_INDEX is not set: `kube worker` runs in a pod of an Indexed Job"
                    .into(),
            )
        })?;
    let workers: u32 = workers
        .as_deref()
        .and_then(|v| v.trim().parse().ok())
        .filter(|n| *n > index)
        .ok_or_else(|| {
            WorkerError::Environment(format!(
                "HEADROOM_WORKERS is not a number above the completion index {index}"
            ))
        })?;
    Ok((index + 1, workers))
}

/// Runs the worker: the run, its output's tail, and its packed directory on `out`; returns
/// the exit code the container ends with (0 once a whole directory is packed: the run's own
/// code travels in the packed block, and a failing container would make the Job stop the
/// other pods before they pack).
pub fn run(
    program: &Path,
    args: &[String],
    (index, workers): (u32, u32),
    max_bytes: u64,
    results: &Path,
    out: &mut dyn Write,
) -> Result<i32, WorkerError> {
    let dir = results.join(format!("worker-{index}"));
    let mut command = tokio::process::Command::new(program);
    command
        .arg("run")
        .args(args)
        .arg("--worker")
        .arg(format!("{index}/{workers}"))
        .arg("--out")
        .arg(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let io = |source| WorkerError::Io {
        what: "writing the log".into(),
        source,
    };
    let status = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| WorkerError::Io {
            what: "starting the worker's runtime".into(),
            source,
        })?
        .block_on(run_forwarding_signals(command, out))
        .map_err(|source| WorkerError::Io {
            what: format!("running {} run", program.display()),
            source,
        })?;
    // A run ended by a signal it did not handle has no code: 128 + the signal, as shells say.
    let code = status.code().unwrap_or_else(|| {
        std::os::unix::process::ExitStatusExt::signal(&status).map_or(1, |s| 128 + s)
    });
    if PACKED_CODES.contains(&code) && dir.is_dir() {
        match pack::pack(&dir, index, code, max_bytes, out) {
            // Stopped mid-run: packed, but the pod fails, so that the Job stops the others
            // at once rather than let them send a schedule that is no longer whole.
            Ok(_) if code == 130 => return Ok(130),
            Ok(_) => return Ok(0),
            Err(e) => {
                writeln!(out, "cannot pack the run directory: {e}").map_err(io)?;
                return Ok(1);
            }
        }
    }
    writeln!(out, "headroom run exited with {code}").map_err(io)?;
    out.flush().map_err(io)?;
    Ok(if code == 0 { 1 } else { code })
}

/// Runs `command` to its end, its output and errors written to `out` line by line as they
/// come, passing on the first SIGTERM or SIGINT this process gets (a container's first
/// process gets what the kubelet sends, and must hand it on).
async fn run_forwarding_signals(
    mut command: tokio::process::Command,
    out: &mut dyn Write,
) -> std::io::Result<ExitStatus> {
    let mut terminate = tokio::signal::unix::signal(SignalKind::terminate())?;
    let mut interrupt = tokio::signal::unix::signal(SignalKind::interrupt())?;
    let mut child = command.spawn()?;
    let pid = child.id().map(|id| Pid::from_raw(id as i32));
    let mut stdout = child.stdout.take().map(|s| BufReader::new(s).lines());
    let mut stderr = child.stderr.take().map(|s| BufReader::new(s).lines());
    let mut status = None;
    let mut forwarded = false;
    while status.is_none() || stdout.is_some() || stderr.is_some() {
        let received = tokio::select! {
            line = next_line(&mut stdout) => {
                match line {
                    Some(line) => writeln!(out, "{line}")?,
                    None => stdout = None,
                }
                continue;
            }
            line = next_line(&mut stderr) => {
                match line {
                    Some(line) => writeln!(out, "{line}")?,
                    None => stderr = None,
                }
                continue;
            }
            done = child.wait(), if status.is_none() => {
                status = Some(done?);
                continue;
            }
            _ = terminate.recv(), if !forwarded => Signal::SIGTERM,
            _ = interrupt.recv(), if !forwarded => Signal::SIGINT,
        };
        if let Some(pid) = pid {
            let _ = signal::kill(pid, received);
        }
        forwarded = true;
    }
    out.flush()?;
    Ok(status.expect("the loop ends with the status"))
}

/// The next line of a child's stream; `None` at its end (or when there is no stream, which
/// then never answers).
async fn next_line<R: tokio::io::AsyncBufRead + Unpin>(
    lines: &mut Option<tokio::io::Lines<R>>,
) -> Option<String> {
    match lines {
        Some(lines) => lines.next_line().await.ok().flatten(),
        None => std::future::pending().await,
    }
}

/// The directory the pod writes into.
pub fn results_dir() -> PathBuf {
    PathBuf::from(RESULTS_DIR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slot_comes_from_the_jobs_environment() {
        assert_eq!(
            slot_from_env(Some("0".into()), Some("2".into())).unwrap(),
            (1, 2)
        );
        assert_eq!(
            slot_from_env(Some("1".into()), Some("2".into())).unwrap(),
            (2, 2)
        );
        assert!(slot_from_env(None, Some("2".into())).is_err());
        assert!(slot_from_env(Some("2".into()), Some("2".into())).is_err());
        assert!(slot_from_env(Some("x".into()), Some("2".into())).is_err());
    }

    /// A stand-in for `headroom run`: a script that writes a run directory's files.
    fn fake_program(dir: &Path, body: &str) -> PathBuf {
        let path = dir.join("fake-headroom");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).unwrap();
        path
    }

    #[test]
    fn a_run_that_ends_with_a_directory_is_packed_after_its_last_lines() {
        let tmp = tempfile::tempdir().unwrap();
        // Arguments: run --config x --worker 2/3 --out DIR: DIR is the last one.
        let program = fake_program(
            tmp.path(),
            "for a; do out=$a; done; mkdir -p \"$out\"; echo '{}' > \"$out/summary.json\"; \
             i=0; while [ $i -lt 50 ]; do echo line $i; i=$((i+1)); done; exit 3",
        );
        let mut log = Vec::new();
        let code = run(
            &program,
            &["--config".into(), "x".into()],
            (2, 3),
            pack::DEFAULT_MAX_BYTES,
            tmp.path(),
            &mut log,
        )
        .unwrap();
        assert_eq!(code, 0, "a whole directory: the container succeeds");
        let text = String::from_utf8(log).unwrap();
        assert!(
            text.starts_with("line 0\nline 1\n"),
            "the run's output as it came: {text}"
        );
        assert!(text.contains("line 49\n"), "{text}");
        let blocks = pack::find_blocks(text.as_bytes()).unwrap();
        assert_eq!(blocks.len(), 1);
        assert_eq!(
            (blocks[0].header.worker, blocks[0].header.exit_code),
            (2, 3)
        );
    }

    #[test]
    fn a_stopped_run_is_packed_and_fails_the_container() {
        let tmp = tempfile::tempdir().unwrap();
        let program = fake_program(
            tmp.path(),
            "for a; do out=$a; done; mkdir -p \"$out\"; echo '{}' > \"$out/summary.json\"; \
             echo stopped; exit 130",
        );
        let mut log = Vec::new();
        let code = run(&program, &[], (1, 2), 1 << 20, tmp.path(), &mut log).unwrap();
        assert_eq!(code, 130, "the Job stops the other workers");
        let blocks = pack::find_blocks(log.as_slice()).unwrap();
        assert_eq!(
            blocks[0].header.exit_code, 130,
            "what it measured comes back"
        );
    }

    #[test]
    fn a_refused_run_fails_the_container_with_its_words() {
        let tmp = tempfile::tempdir().unwrap();
        let program = fake_program(
            tmp.path(),
            "echo 'Error: --rate 0 is not valid' >&2; exit 2",
        );
        let mut log = Vec::new();
        let code = run(&program, &[], (1, 1), 1 << 20, tmp.path(), &mut log).unwrap();
        assert_eq!(code, 2);
        let text = String::from_utf8(log).unwrap();
        assert!(text.contains("Error: --rate 0 is not valid"), "{text}");
        assert!(text.ends_with("headroom run exited with 2\n"), "{text}");
    }
}
