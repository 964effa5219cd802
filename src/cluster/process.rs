//! Launching node JVMs and stopping them: only processes headroom recorded, by pid, after
//! checking that the pid still belongs to the node it was recorded for.

use std::ffi::OsString;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::ClusterError;
use crate::cpus::Cores;

/// Launches `java args...` in a process group of its own (so a Ctrl-C meant for headroom does
/// not reach the node) with its console output appended to `log`, bound to `cores` (any of
/// the machine's when `None`) at scheduling niceness `nice`.
pub fn launch(
    java: &Path,
    args: &[OsString],
    log: &Path,
    cores: Option<&Cores>,
    nice: i32,
) -> Result<Child, ClusterError> {
    let out = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(ClusterError::io(format!("opening {}", log.display())))?;
    let err = out
        .try_clone()
        .map_err(ClusterError::io("duplicating the log handle"))?;
    let mut command = Command::new(java);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    // On its own cores, or on any of the machine's: never on the cores a client bound this
    // process to.
    crate::cpus::spawn_on(cores, nice, || command.spawn())
        .map_err(ClusterError::io(format!("launching {}", java.display())))
}

/// Whether `pid` is a live (not zombie) process whose command line contains `marker`.
pub fn is_running(pid: u32, marker: &str) -> bool {
    let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    if !String::from_utf8_lossy(&cmdline)
        .split('\0')
        .any(|arg| arg.contains(marker))
    {
        return false;
    }
    !has_exited(pid)
}

/// Whether `pid` has finished exiting: no such process, or a zombie (exited, waiting for its
/// parent to read its status). A process that is still exiting has already lost its command
/// line but may still hold its sockets, so waiting for a stop checks this, not the marker.
pub fn has_exited(pid: u32) -> bool {
    // The state follows the parenthesised command name in /proc/PID/stat.
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    matches!(state, Some("Z") | Some("X") | None)
}

/// When process `pid` started, in clock ticks since boot (the 22nd field of
/// /proc/PID/stat); `None` when there is no such process.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the parenthesised command name, which may hold spaces: the state is
    // the third field, the start time the 22nd.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Resident memory of a process now and at its peak (VmRSS and VmHWM), in bytes.
pub fn memory(pid: u32) -> Option<(u64, u64)> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// A process to stop: its pid and the marker that proves it is still the same process.
#[derive(Debug, Clone)]
pub struct Target {
    /// The node number, for messages.
    pub node: u32,
    /// The recorded pid.
    pub pid: u32,
    /// Text on the process's command line.
    pub marker: String,
}

/// Stops every target: SIGTERM to all at once (nodes shut down in parallel), then SIGKILL to
/// any still running after `grace`. Returns once all are gone.
pub fn stop_all(targets: &[Target], grace: Duration) -> Result<(), ClusterError> {
    let live: Vec<&Target> = targets
        .iter()
        .filter(|t| is_running(t.pid, &t.marker))
        .collect();
    for t in &live {
        // A node frozen with SIGSTOP (`--during stop:N@T`) acts on SIGTERM only once it runs.
        let _ = signal(t.pid, Signal::SIGCONT);
        let _ = signal(t.pid, Signal::SIGTERM);
    }
    let all_gone = |set: &[&Target]| set.iter().all(|t| has_exited(t.pid));
    if wait_until(grace, || all_gone(&live)) {
        return Ok(());
    }
    // Only a process that still shows the node's marker gets SIGKILL; one whose command line
    // is already gone is in the middle of exiting.
    for t in live.iter().filter(|t| is_running(t.pid, &t.marker)) {
        let _ = signal(t.pid, Signal::SIGKILL);
    }
    if wait_until(Duration::from_secs(10), || all_gone(&live)) {
        return Ok(());
    }
    let stuck = live
        .iter()
        .find(|t| !has_exited(t.pid))
        .expect("one is still running");
    Err(ClusterError::StopFailed {
        node: stuck.node,
        pid: stuck.pid,
    })
}

/// Sends `sig` to `pid`.
pub fn signal(pid: u32, sig: Signal) -> nix::Result<()> {
    let pid = i32::try_from(pid).map_err(|_| nix::Error::ESRCH)?;
    kill(Pid::from_raw(pid), sig)
}

/// Polls `done` every 100 ms until it holds or `limit` has passed; says whether it held.
pub fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        sleep(Duration::from_millis(100));
    }
}

/// The last `lines` lines of a text file (reading at most its last 64 KiB), or a note that
/// it could not be read.
pub fn tail_of_file(path: &Path, lines: usize) -> String {
    let read = || -> std::io::Result<String> {
        let mut file = fs::File::open(path)?;
        let len = file.metadata()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    match read() {
        Ok(text) => {
            let all: Vec<&str> = text.lines().collect();
            let start = if lines == 0 {
                0
            } else {
                all.len().saturating_sub(lines)
            };
            all[start..].iter().map(|l| format!("  {l}\n")).collect()
        }
        Err(e) => format!("  (could not read {}: {e})\n", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_recognised_by_its_marker_and_stopped() {
        let child = Command::new("sleep").arg("123.456").spawn().unwrap();
        let pid = child.id();
        // The command line appears in /proc a moment after spawn returns.
        assert!(wait_until(Duration::from_secs(2), || is_running(
            pid, "123.456"
        )));
        assert!(
            !is_running(pid, "some-other-node"),
            "a pid that now belongs to another process is left alone"
        );
        let target = Target {
            node: 1,
            pid,
            marker: "123.456".into(),
        };
        // `sleep` is our child, so it stays a zombie until reaped; is_running treats that as gone.
        stop_all(&[target], Duration::from_secs(5)).unwrap();
        assert!(!is_running(pid, "123.456"));
        let mut child = child;
        assert!(child.wait().is_ok());
    }

    #[test]
    fn a_process_that_ignores_sigterm_gets_sigkill() {
        let mut child = Command::new("sh")
            .args([
                "-c",
                "trap '' TERM; while :; do sleep 0.1; done # ignores-term",
            ])
            .spawn()
            .unwrap();
        let target = Target {
            node: 1,
            pid: child.id(),
            marker: "ignores-term".into(),
        };
        sleep(Duration::from_millis(200));
        let started = Instant::now();
        stop_all(&[target], Duration::from_millis(500)).unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9));
    }

    #[test]
    fn memory_of_this_process_is_read_from_proc() {
        let (rss, peak) = memory(std::process::id()).unwrap();
        assert!(rss > 1 << 20 && peak >= rss, "rss {rss}, peak {peak}");
        assert_eq!(memory(u32::MAX), None);
    }

    #[test]
    fn tails_are_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        fs::write(&path, "a\nb\nc\nd\n").unwrap();
        assert_eq!(tail_of_file(&path, 2), "  c\n  d\n");
        assert_eq!(tail_of_file(&path, 0), "  a\n  b\n  c\n  d\n");
        assert!(tail_of_file(&dir.path().join("none"), 2).contains("could not read"));
    }
}
