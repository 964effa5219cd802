//! The local launcher: a fleet's workers as `headroom run` processes of this machine, each
//! with `--config` (the plan's settings, written once beside the workers' directories),
//! `--worker K/N` and the plan's `--start-at`.
//!
//! A watched search's workers serve and push their own metrics ([`WorkerWatching`]).
//!
//! Each worker's output goes to `worker-K.log` beside its directory. A stop (Ctrl-C) is
//! passed on as SIGINT to each worker, which then ends its run as a run ends on Ctrl-C (its
//! files complete); a worker still running when the launch is dropped is killed. A worker
//! that exits with an error, or leaves no run directory, is [`WorkerEnd::Failed`] with the
//! last lines of its output as the reason.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::launch::{Launcher, WorkerEnd, WorkerPlan};
use crate::catalogue::CONFIG_JSON;
use crate::results::config::rfc3339;
use crate::stop::StopSignal;

/// How long before the start a local worker is launched: a process starts, connects and
/// prepares its statements within about a second; the rest is margin for a loaded machine.
pub const LOCAL_LEAD: Duration = Duration::from_secs(6);

/// Workers as processes of this machine.
#[derive(Debug, Clone)]
pub struct LocalLauncher {
    /// The headroom binary the workers run.
    pub program: PathBuf,
    /// The user name for a cluster that asks; the password goes to each worker in its
    /// environment (HEADROOM_PASSWORD), never on its command line.
    pub credentials: Option<(String, String)>,
    /// How long before the start the workers are launched.
    pub lead: Duration,
    /// The coordinator's live view, passed on to each worker.
    pub watching: Option<WorkerWatching>,
}

/// What each local worker of a watched search serves and pushes: worker K serves its
/// metrics at the coordinator's port + K (a port 0 stays 0: each worker picks one), and
/// pushes to the same gateway, under the search's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerWatching {
    /// The coordinator's `--metrics-listen` address, as bound.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// `--metrics-push`'s URL.
    pub metrics_push: Option<String>,
    /// The search's name: every worker's `run` label.
    pub label: String,
}

impl LocalLauncher {
    /// Workers running this very program.
    pub fn new(credentials: Option<(String, String)>) -> anyhow::Result<LocalLauncher> {
        Ok(LocalLauncher {
            program: std::env::current_exe()?,
            credentials,
            lead: LOCAL_LEAD,
            watching: None,
        })
    }

    /// Worker `index`'s command line.
    fn command(&self, plan: &WorkerPlan, config: &Path, index: u32) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .arg("run")
            .arg("--config")
            .arg(config)
            .arg("--worker")
            .arg(format!("{index}/{}", plan.workers))
            .arg("--start-at")
            .arg(rfc3339(plan.start_at))
            .arg("--out")
            .arg(plan.worker_dir(index));
        if !plan.populate {
            command.arg("--phase").arg("run");
        }
        if let Some(watching) = &self.watching {
            command.arg("--label").arg(&watching.label);
            if let Some(mut address) = watching.metrics_listen {
                if address.port() != 0 {
                    address.set_port(address.port().saturating_add(index as u16));
                }
                command.arg("--metrics-listen").arg(address.to_string());
            }
            if let Some(url) = &watching.metrics_push {
                command.arg("--metrics-push").arg(url);
            }
        }
        if let Some((user, password)) = &self.credentials {
            command
                .arg("--username")
                .arg(user)
                .env("HEADROOM_PASSWORD", password);
        }
        command.stdin(Stdio::null()).kill_on_drop(true);
        command
    }
}

/// Where worker `index`'s output goes.
pub fn log_path(plan: &WorkerPlan, index: u32) -> PathBuf {
    plan.out.join(format!("worker-{index}.log"))
}

impl Launcher for LocalLauncher {
    fn describe(&self, workers: u32) -> String {
        format!("{workers} processes on this machine")
    }

    fn lead(&self) -> Duration {
        self.lead
    }

    fn run<'a>(
        &'a self,
        plan: &'a WorkerPlan,
        stop: &'a StopSignal,
    ) -> BoxFuture<'a, Vec<WorkerEnd>> {
        Box::pin(async move {
            let failed_all = |reason: String| WorkerEnd::all_failed(plan.workers, &reason);
            if let Err(e) = std::fs::create_dir_all(&plan.out) {
                return failed_all(format!("creating {}: {e}", plan.out.display()));
            }
            let config = plan.out.join(CONFIG_JSON);
            if let Err(e) = crate::results::write_json(&config, &plan.settings) {
                return failed_all(format!("{e:#}"));
            }
            let mut children = Vec::new();
            for index in 1..=plan.workers {
                let log = match std::fs::File::create(log_path(plan, index)) {
                    Ok(log) => log,
                    Err(e) => return failed_all(format!("creating its log: {e}")),
                };
                let mut command = self.command(plan, &config, index);
                let err = log.try_clone();
                command.stdout(log);
                if let Ok(err) = err {
                    command.stderr(err);
                }
                children.push(
                    command
                        .spawn()
                        .map_err(|e| format!("cannot start {}: {e}", self.program.display())),
                );
            }
            // Ctrl-C reaches the workers (same process group) by itself; a stop given by
            // the caller alone is passed on.
            let pids: Vec<Option<u32>> = children
                .iter()
                .map(|c| c.as_ref().ok().and_then(|c| c.id()))
                .collect();
            let waits = futures::future::join_all(children.into_iter().map(|child| async move {
                match child {
                    Ok(mut child) => child.wait().await.map_err(|e| e.to_string()),
                    Err(e) => Err(e),
                }
            }));
            tokio::pin!(waits);
            let statuses = tokio::select! {
                statuses = &mut waits => statuses,
                _ = stop.wait() => {
                    for pid in pids.iter().flatten() {
                        let _ = kill(Pid::from_raw(*pid as i32), Signal::SIGINT);
                    }
                    waits.await
                }
            };
            statuses
                .into_iter()
                .zip(1..)
                .map(|(status, index)| end_of(plan, index, status))
                .collect()
        })
    }
}

/// How worker `index` ended, from its exit status, its directory and its log.
fn end_of(
    plan: &WorkerPlan,
    index: u32,
    status: Result<std::process::ExitStatus, String>,
) -> WorkerEnd {
    let dir = plan.worker_dir(index);
    let reason = |what: String| WorkerEnd::Failed {
        index,
        reason: match last_lines(&log_path(plan, index), 3) {
            Some(tail) => format!("{what}: {tail}"),
            None => what,
        },
    };
    match status {
        Err(e) => WorkerEnd::Failed { index, reason: e },
        // 3: its SLA failed, 4: it could not keep its schedule; the merge judges again.
        Ok(status)
            if matches!(status.code(), Some(0 | 3 | 4)) && dir.join(CONFIG_JSON).exists() =>
        {
            WorkerEnd::Finished {
                index,
                dir,
                exit_code: status.code().unwrap_or(0),
            }
        }
        Ok(status) => reason(match status.code() {
            Some(code) => format!("exited with code {code}"),
            None => "was killed by a signal".to_string(),
        }),
    }
}

/// The last `n` non-empty lines of a file, joined by ` / `.
fn last_lines(path: &Path, n: usize) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return None;
    }
    let tail = &lines[lines.len().saturating_sub(n)..];
    Some(crate::usage::cut(&tail.join(" / "), 400))
}
