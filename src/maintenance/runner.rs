//! Runs a maintenance plan beside the load and records it.
//!
//! One task works through the plan in order: it waits until an operation is due (counted
//! from the run's start, the zero of histograms.hlog and intervals.csv), then runs it on
//! every node, one after another. An operation never overlaps another: one due while the one
//! before still runs starts when that ends. Once the load has ended nothing new starts; the
//! operation then running is awaited up to the plan's timeout, then its nodetool is killed.
//! Ctrl-C (the run's stop signal) kills the running nodetool at once. Killing nodetool does
//! not stop the server's side: a compaction or repair it began goes on in the node.
//!
//! An operation that names a node (`kill:3@20s`, `compact:2@5m`) runs on that node alone. A
//! node the plan froze (`stop`) and did not continue is continued (SIGCONT) when the plan
//! ends, whatever ended it, and that is recorded too: a run never leaves a node frozen.
//!
//! How an operation is carried out is an [`Executor`]: [`OnNodes`] for real nodes (nodetool,
//! signals, a node's start); the tests drive the schedule with one that only sleeps, on
//! tokio's paused clock.

use std::fs;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::time::Instant;

use super::{MaintenanceConfig, Operation, Plan, Target};
use crate::catalogue::MAINTENANCE_JSON;
use crate::cluster::LocalCluster;
use crate::stop::StopSignal;

/// How long a restarted node may take to answer CQL.
const RESTART_TIMEOUT: Duration = Duration::from_secs(180);

/// Lines of an operation's output kept in its record.
const TAIL_LINES: usize = 20;
/// Characters of an operation's output kept in its record, at most.
const TAIL_CHARS: usize = 2000;

/// How an operation on one node ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// nodetool exited with status 0.
    Ok,
    /// nodetool exited with another status, or could not be launched.
    Failed,
    /// Still running when the timeout after the end of the load was over; nodetool was
    /// killed.
    TimedOut,
    /// The run was stopped (Ctrl-C) while it ran; nodetool was killed.
    Interrupted,
    /// The load ended, or the run was stopped, before it was started.
    NotStarted,
}

impl Status {
    /// How tables show it.
    pub fn describe(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::TimedOut => "timed out",
            Status::Interrupted => "interrupted",
            Status::NotStarted => "not started",
        }
    }
}

/// One operation on one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperationRecord {
    /// What ran.
    pub operation: Operation,
    /// On which node: `node1`, ... for a local cluster, `host:port` through JMX.
    pub node: String,
    /// When it was due, seconds since the start of the run.
    pub planned_s: f64,
    /// When it started, seconds since the start of the run (the time base of
    /// histograms.hlog and intervals.csv).
    pub start_s: Option<f64>,
    /// When it ended, on the same time base.
    pub end_s: Option<f64>,
    /// Its wall time, seconds.
    pub wall_s: Option<f64>,
    /// How it ended.
    pub status: Status,
    /// nodetool's exit status, when it exited by itself.
    pub exit_code: Option<i32>,
    /// The end of what nodetool printed (standard output, then standard error), or why it
    /// could not be launched.
    pub output_tail: String,
}

/// maintenance.json: the plan of a run and what became of each operation on each node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaintenanceFile {
    /// The StartTime of histograms.hlog, RFC 3339: every offset counts from here.
    pub run_start: String,
    /// The keyspace the operations worked on.
    pub keyspace: String,
    /// When the load ended, seconds since the start of the run; absent while it goes on.
    pub load_end_s: Option<f64>,
    /// One record per operation and node, in the order they ran.
    pub operations: Vec<OperationRecord>,
}

/// What a finished nodetool left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    /// Its exit status; None when a signal ended it.
    pub exit_code: Option<i32>,
    /// Its standard output then standard error.
    pub output: String,
}

/// Carries out one operation on one node and waits for its end. Dropping the future must
/// stop it (the real one kills nodetool; a node's start, once begun, goes on).
pub trait Executor: Send + Sync + 'static {
    /// Runs `operation` on `target`, for `keyspace`. Err: it could not be launched, and why.
    fn execute(
        &self,
        operation: Operation,
        target: &Target,
        keyspace: &str,
    ) -> impl Future<Output = Result<Execution, String>> + Send;
}

/// The real executor: `nodetool OPERATION [KEYSPACE]` through the node's JMX, and the
/// faults on a local cluster's node processes.
#[derive(Debug, Clone, Copy, Default)]
pub struct OnNodes;

impl Executor for OnNodes {
    async fn execute(
        &self,
        operation: Operation,
        target: &Target,
        keyspace: &str,
    ) -> Result<Execution, String> {
        if operation.is_fault() {
            let Target::Local { dir, index } = target.clone() else {
                return Err(format!("{operation} acts only on a local cluster's nodes"));
            };
            // Signals are immediate; a start takes seconds of blocking waits.
            return tokio::task::spawn_blocking(move || fault(operation, &dir, index))
                .await
                .map_err(|e| e.to_string())?;
        }
        let target = target.clone();
        // Finding Java runs `java -version`: off the runtime's workers.
        let (command, cores, nice) = tokio::task::spawn_blocking(move || match &target {
            Target::Local { dir, index } => {
                let cluster = LocalCluster::open(dir)?;
                let placement = &cluster.config().placement;
                Ok((
                    cluster.nodetool(*index)?,
                    placement.nodes_cores(),
                    placement.node_nice,
                ))
            }
            Target::Jmx { host, port } => Ok((
                LocalCluster::remote_nodetool(host, *port)?,
                None,
                crate::cluster::DEFAULT_NODE_NICE,
            )),
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e: crate::cluster::ClusterError| e.to_string())?;
        let mut command = tokio::process::Command::from(command);
        command.arg(operation.name());
        if operation.takes_keyspace() {
            command.arg(keyspace);
        }
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Ctrl-C or the timeout drop this future: nodetool is killed by its pid.
            .kill_on_drop(true);
        // nodetool's JVM starts on the nodes' cores (any core for a remote node) and at their
        // niceness, never on the cores the client is bound to: the load goes on while it
        // runs.
        let runtime = tokio::runtime::Handle::current();
        let child = crate::cpus::spawn_on(cores.as_ref(), nice, || {
            let _entered = runtime.enter();
            command.spawn()
        })
        .map_err(|e| format!("launching nodetool: {e}"))?;
        let output = child
            .wait_with_output()
            .await
            .map_err(|e| format!("launching nodetool: {e}"))?;
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        Ok(Execution {
            exit_code: output.status.code(),
            output: text,
        })
    }
}

/// Carries out a fault on node `index` of the local cluster in `dir`.
fn fault(operation: Operation, dir: &Path, index: u32) -> Result<Execution, String> {
    use nix::sys::signal::Signal;
    let mut cluster = LocalCluster::open(dir).map_err(|e| e.to_string())?;
    let signal = match operation {
        Operation::Kill => Signal::SIGKILL,
        Operation::Stop => Signal::SIGSTOP,
        Operation::Cont => Signal::SIGCONT,
        Operation::Restart => {
            let started = std::time::Instant::now();
            let pid = cluster
                .restart_node(index, RESTART_TIMEOUT)
                .map_err(|e| e.to_string())?;
            return Ok(Execution {
                exit_code: Some(0),
                output: format!(
                    "node {index} answers CQL after {:.1} s (pid {pid})",
                    started.elapsed().as_secs_f64()
                ),
            });
        }
        other => return Err(format!("{other} is no fault")),
    };
    let pid = cluster
        .signal_node(index, signal)
        .map_err(|e| e.to_string())?;
    if signal == Signal::SIGKILL {
        // Gone before the record says so: its sockets are closed once it has exited.
        crate::cluster::process::wait_until(Duration::from_secs(10), || {
            crate::cluster::process::has_exited(pid)
        });
    }
    Ok(Execution {
        exit_code: Some(0),
        output: format!("{signal} sent to node {index} (pid {pid})"),
    })
}

/// The end of `output`: its last lines, at most [`TAIL_CHARS`] characters.
pub fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.trim_end().lines().collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    let text = lines[start..].join("\n");
    let chars = text.chars().count();
    if chars > TAIL_CHARS {
        text.chars().skip(chars - TAIL_CHARS).collect()
    } else {
        text
    }
}

/// The maintenance of a run, under way beside the load.
pub struct Maintenance {
    task: tokio::task::JoinHandle<Vec<OperationRecord>>,
    load_ended: watch::Sender<Option<Instant>>,
    t0: Instant,
    timeout: Duration,
    file: MaintenanceFile,
    path: Option<PathBuf>,
}

impl Maintenance {
    /// Starts the plan of `config` on `targets`, on the time base that begins at `t0` (the
    /// run's start, `run_start` on the wall clock), writing `out`/maintenance.json as each
    /// operation ends when `out` is given.
    pub fn start<E: Executor>(
        config: &MaintenanceConfig,
        targets: Vec<Target>,
        executor: E,
        t0: Instant,
        run_start: SystemTime,
        out: Option<&Path>,
        stop: Arc<StopSignal>,
    ) -> Maintenance {
        let (load_ended, ended_rx) = watch::channel(None);
        let file = MaintenanceFile {
            run_start: humantime::format_rfc3339_nanos(run_start).to_string(),
            keyspace: config.keyspace.clone(),
            load_end_s: None,
            operations: Vec::new(),
        };
        let path = out.map(|o| o.join(MAINTENANCE_JSON));
        let plan = config.plan.clone();
        let keyspace = config.keyspace.clone();
        let timeout = Duration::from_secs_f64(config.timeout_s);
        let mut progress = file.clone();
        let progress_path = path.clone();
        let task = tokio::spawn(async move {
            run_plan(
                &plan,
                &targets,
                &keyspace,
                &executor,
                t0,
                timeout,
                ended_rx,
                &stop,
                &mut |record| {
                    progress.operations.push(record.clone());
                    if let Some(path) = &progress_path {
                        // Written as each ends: an operation is on disk even if the run dies.
                        if let Err(e) = write_file(path, &progress) {
                            eprintln!("Warning: {e}");
                        }
                    }
                },
            )
            .await
        });
        Maintenance {
            task,
            load_ended,
            t0,
            timeout,
            file,
            path,
        }
    }

    /// Says that the load has ended, awaits the operation still running (up to the
    /// timeout), and returns the complete record, written to maintenance.json.
    pub async fn finish(self) -> MaintenanceFile {
        let Maintenance {
            mut task,
            load_ended,
            t0,
            timeout,
            mut file,
            path,
        } = self;
        let now = Instant::now();
        let _ = load_ended.send(Some(now));
        file.load_end_s = Some(seconds(t0, now));
        // A task between operations ends at once; one that does not is running one.
        let done = tokio::select! {
            biased;
            done = &mut task => done,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {
                println!(
                    "  maintenance: the load has ended; waiting for the running operation (at most {})",
                    humantime::format_duration(timeout)
                );
                task.await
            }
        };
        match done {
            Ok(records) => file.operations = records,
            Err(e) => eprintln!("Warning: the maintenance task failed: {e}"),
        }
        if let Some(path) = &path {
            if let Err(e) = write_file(path, &file) {
                eprintln!("Warning: {e}");
            }
        }
        file
    }
}

fn write_file(path: &Path, file: &MaintenanceFile) -> Result<(), String> {
    let text = serde_json::to_string_pretty(file).expect("serializable") + "\n";
    // Whole or not at all: written beside, then renamed over.
    let partial = path.with_extension("json.partial");
    fs::write(&partial, text)
        .and_then(|()| fs::rename(&partial, path))
        .map_err(|e| format!("writing {}: {e}", path.display()))
}

fn seconds(t0: Instant, at: Instant) -> f64 {
    at.saturating_duration_since(t0).as_secs_f64()
}

/// When the load ended; pending until it has.
async fn load_end(mut ended: watch::Receiver<Option<Instant>>) -> Instant {
    loop {
        if let Some(at) = *ended.borrow_and_update() {
            return at;
        }
        if ended.changed().await.is_err() {
            // The run is gone without saying: only the stop signal ends the wait now.
            std::future::pending::<()>().await;
        }
    }
}

/// Works through `plan` on `targets` (see the module's doc); hands every record to
/// `on_record` as it ends and returns them all, one per operation and node.
#[allow(clippy::too_many_arguments)]
pub async fn run_plan<E: Executor>(
    plan: &Plan,
    targets: &[Target],
    keyspace: &str,
    executor: &E,
    t0: Instant,
    timeout: Duration,
    ended: watch::Receiver<Option<Instant>>,
    stop: &StopSignal,
    on_record: &mut (dyn FnMut(&OperationRecord) + Send),
) -> Vec<OperationRecord> {
    let mut records = Vec::new();
    // Nodes frozen by the plan and not continued yet.
    let mut frozen: Vec<Target> = Vec::new();
    for planned in &plan.0 {
        tokio::select! {
            _ = tokio::time::sleep_until(t0 + planned.at()) => {}
            _ = load_end(ended.clone()) => {}
            _ = stop.wait() => {}
        }
        let on = match planned.node {
            Some(node) => targets.get(node as usize - 1..node as usize).unwrap_or(&[]),
            None => targets,
        };
        for target in on {
            let mut record = OperationRecord {
                operation: planned.operation,
                node: target.name(),
                planned_s: planned.at_s,
                start_s: None,
                end_s: None,
                wall_s: None,
                status: Status::NotStarted,
                exit_code: None,
                output_tail: String::new(),
            };
            if stop.is_set() || ended.borrow().is_some() {
                on_record(&record);
                records.push(record);
                continue;
            }
            let start = Instant::now();
            println!(
                "  maintenance: {} on {} started at {:.1} s (due at {:.1} s)",
                planned.operation.describe(),
                record.node,
                seconds(t0, start),
                planned.at_s
            );
            let deadline = async {
                let end = load_end(ended.clone()).await;
                tokio::time::sleep_until(end + timeout).await;
            };
            let result = tokio::select! {
                r = executor.execute(planned.operation, target, keyspace) => Some(r),
                _ = stop.wait() => {
                    record.status = Status::Interrupted;
                    None
                }
                _ = deadline => {
                    record.status = Status::TimedOut;
                    None
                }
            };
            let end = Instant::now();
            match result {
                Some(Ok(execution)) => {
                    record.exit_code = execution.exit_code;
                    record.status = if execution.exit_code == Some(0) {
                        Status::Ok
                    } else {
                        Status::Failed
                    };
                    record.output_tail = tail(&execution.output);
                }
                Some(Err(why)) => {
                    record.status = Status::Failed;
                    record.output_tail = why;
                }
                None => {}
            }
            record.start_s = Some(seconds(t0, start));
            record.end_s = Some(seconds(t0, end));
            record.wall_s = Some((end - start).as_secs_f64());
            let exit = record
                .exit_code
                .map_or(String::new(), |c| format!(", exit {c}"));
            println!(
                "  maintenance: {} on {} ended at {:.1} s after {:.1} s: {}{exit}",
                planned.operation.describe(),
                record.node,
                seconds(t0, end),
                (end - start).as_secs_f64(),
                record.status.describe()
            );
            if record.status == Status::Failed {
                let lines: Vec<&str> = record.output_tail.lines().collect();
                for line in &lines[lines.len().saturating_sub(3)..] {
                    println!("    {line}");
                }
            }
            match planned.operation {
                Operation::Stop if record.status == Status::Ok => frozen.push(target.clone()),
                Operation::Cont | Operation::Restart => frozen.retain(|t| t != target),
                _ => {}
            }
            on_record(&record);
            records.push(record);
        }
    }
    if !frozen.is_empty() {
        // A node the plan froze stays frozen until the load ends (or the run is stopped):
        // continuing it as soon as the plan has nothing more to do would undo the freeze.
        tokio::select! {
            _ = load_end(ended.clone()) => {}
            _ = stop.wait() => {}
        }
    }
    for target in frozen {
        let start = Instant::now();
        let result = executor.execute(Operation::Cont, &target, keyspace).await;
        let end = Instant::now();
        let (status, output) = match result {
            Ok(execution) if execution.exit_code == Some(0) => (Status::Ok, execution.output),
            Ok(execution) => (Status::Failed, execution.output),
            Err(why) => (Status::Failed, why),
        };
        let record = OperationRecord {
            operation: Operation::Cont,
            node: target.name(),
            planned_s: seconds(t0, start),
            start_s: Some(seconds(t0, start)),
            end_s: Some(seconds(t0, end)),
            wall_s: Some((end - start).as_secs_f64()),
            status,
            exit_code: (status == Status::Ok).then_some(0),
            output_tail: tail(&format!(
                "{output}\ncontinued when the plan ended: a run never leaves a node frozen"
            )),
        };
        println!(
            "  maintenance: {} left frozen by the plan: continued at {:.1} s: {}",
            record.node,
            seconds(t0, start),
            status.describe()
        );
        on_record(&record);
        records.push(record);
    }
    records
}

/// The summary's table: one line per operation and node with its wall time.
pub fn describe(file: &MaintenanceFile) -> Vec<String> {
    let mut lines = vec![format!(
        "{:<23} {:<21} {:>8} {:>8} {:>10}  {}",
        "operation", "node", "due s", "start s", "wall s", "status"
    )];
    let s = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    for r in &file.operations {
        lines.push(format!(
            "{:<23} {:<21} {:>8.1} {:>8} {:>10}  {}",
            r.operation.describe(),
            r.node,
            r.planned_s,
            s(r.start_s),
            s(r.wall_s),
            r.status.describe()
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maintenance::parse_during;
    use std::collections::HashMap;

    /// Operations that take a fixed time per kind (on the paused clock) and exit with a
    /// fixed status.
    struct Sleeper {
        takes: HashMap<Operation, (Duration, i32)>,
    }

    impl Executor for Sleeper {
        async fn execute(
            &self,
            operation: Operation,
            _target: &Target,
            _keyspace: &str,
        ) -> Result<Execution, String> {
            let (takes, code) = self.takes[&operation];
            tokio::time::sleep(takes).await;
            Ok(Execution {
                exit_code: Some(code),
                output: format!("line 1\n{operation} done\n"),
            })
        }
    }

    fn nodes(n: u32) -> Vec<Target> {
        (1..=n)
            .map(|index| Target::Local {
                dir: PathBuf::from("/nowhere"),
                index,
            })
            .collect()
    }

    fn config(during: &str, timeout_s: f64) -> MaintenanceConfig {
        MaintenanceConfig {
            plan: parse_during(during).unwrap(),
            jmx: Vec::new(),
            timeout_s,
            keyspace: "headroom".into(),
        }
    }

    /// Runs `during` with `executor` on `n` nodes, the load ending at `load_s`.
    async fn run(
        during: &str,
        executor: Sleeper,
        n: u32,
        load_s: u64,
        timeout_s: f64,
        stop_at_s: Option<u64>,
        out: Option<&Path>,
    ) -> MaintenanceFile {
        let t0 = Instant::now();
        let stop = StopSignal::new();
        let m = Maintenance::start(
            &config(during, timeout_s),
            nodes(n),
            executor,
            t0,
            SystemTime::UNIX_EPOCH,
            out,
            stop.clone(),
        );
        match stop_at_s {
            Some(s) if s < load_s => {
                tokio::time::sleep_until(t0 + Duration::from_secs(s)).await;
                stop.trigger();
            }
            _ => {}
        }
        tokio::time::sleep_until(t0 + Duration::from_secs(load_s)).await;
        m.finish().await
    }

    /// Operation, node, start and end (rounded to the second), status.
    type Span = (String, String, Option<f64>, Option<f64>, Status);

    fn spans(file: &MaintenanceFile) -> Vec<Span> {
        file.operations
            .iter()
            .map(|r| {
                (
                    r.operation.to_string(),
                    r.node.clone(),
                    r.start_s.map(f64::round),
                    r.end_s.map(f64::round),
                    r.status,
                )
            })
            .collect()
    }

    fn sleeper(takes: &[(Operation, u64, i32)]) -> Sleeper {
        Sleeper {
            takes: takes
                .iter()
                .map(|&(op, s, code)| (op, (Duration::from_secs(s), code)))
                .collect(),
        }
    }

    /// A fault names its node and runs there alone; a node the plan froze and never
    /// continued is continued when the plan ends (here: the load ended first).
    #[tokio::test(start_paused = true)]
    async fn faults_act_on_their_node_and_no_node_is_left_frozen() {
        let executor = sleeper(&[
            (Operation::Kill, 0, 0),
            (Operation::Restart, 20, 0),
            (Operation::Stop, 0, 0),
            (Operation::Cont, 0, 0),
            (Operation::Flush, 1, 0),
        ]);
        let file = run(
            "kill:3@5s,restart:3@10s,flush:2@40s,stop:1@45s,cont:1@70s",
            executor,
            3,
            60,
            600.0,
            None,
            None,
        )
        .await;
        let ok = Status::Ok;
        let s = |a: f64| Some(a);
        assert_eq!(
            spans(&file),
            vec![
                ("kill".into(), "node3".into(), s(5.0), s(5.0), ok),
                ("restart".into(), "node3".into(), s(10.0), s(30.0), ok),
                ("flush".into(), "node2".into(), s(40.0), s(41.0), ok),
                ("stop".into(), "node1".into(), s(45.0), s(45.0), ok),
                // Due after the load ended: not started...
                (
                    "cont".into(),
                    "node1".into(),
                    None,
                    None,
                    Status::NotStarted
                ),
                // ...so the node is continued all the same.
                ("cont".into(), "node1".into(), s(60.0), s(60.0), ok),
            ]
        );
        assert!(file.operations[5]
            .output_tail
            .contains("never leaves a node frozen"));
    }

    /// `stop` without a `cont`: the node stays frozen until the load ends, then is continued
    /// (and, stopped early, when the run is stopped).
    #[tokio::test(start_paused = true)]
    async fn a_node_frozen_without_cont_stays_frozen_until_the_load_ends() {
        let executor = sleeper(&[(Operation::Stop, 0, 0), (Operation::Cont, 0, 0)]);
        let file = run("stop:1@3s", executor, 1, 20, 600.0, None, None).await;
        let ok = Status::Ok;
        assert_eq!(
            spans(&file),
            vec![
                ("stop".into(), "node1".into(), Some(3.0), Some(3.0), ok),
                ("cont".into(), "node1".into(), Some(20.0), Some(20.0), ok),
            ]
        );
        let executor = sleeper(&[(Operation::Stop, 0, 0), (Operation::Cont, 0, 0)]);
        let file = run("stop:1@3s", executor, 1, 20, 600.0, Some(8), None).await;
        assert_eq!(
            spans(&file)[1].2,
            Some(8.0),
            "continued when the run stopped"
        );
    }

    /// A node continued by the plan itself is not continued again.
    #[tokio::test(start_paused = true)]
    async fn a_node_continued_by_the_plan_is_left_alone_at_its_end() {
        let executor = sleeper(&[(Operation::Stop, 0, 0), (Operation::Cont, 0, 0)]);
        let file = run("stop:2@5s,cont:2@15s", executor, 3, 30, 600.0, None, None).await;
        let names: Vec<(String, String)> = spans(&file)
            .into_iter()
            .map(|(op, node, ..)| (op, node))
            .collect();
        assert_eq!(
            names,
            vec![
                ("stop".into(), "node2".into()),
                ("cont".into(), "node2".into())
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn operations_run_node_after_node_and_a_late_one_waits() {
        let executor = sleeper(&[
            (Operation::Flush, 2, 0),
            (Operation::Compact, 5, 0),
            (Operation::GarbageCollect, 1, 0),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let file = run(
            "flush@3s,compact@8s,garbagecollect@14s",
            executor,
            2,
            25,
            600.0,
            None,
            Some(dir.path()),
        )
        .await;
        let ok = Status::Ok;
        let s = |a: f64| Some(a);
        assert_eq!(
            spans(&file),
            vec![
                ("flush".into(), "node1".into(), s(3.0), s(5.0), ok),
                ("flush".into(), "node2".into(), s(5.0), s(7.0), ok),
                ("compact".into(), "node1".into(), s(8.0), s(13.0), ok),
                ("compact".into(), "node2".into(), s(13.0), s(18.0), ok),
                // Due at 14 s, while compact still ran on node2: it waits.
                (
                    "garbagecollect".into(),
                    "node1".into(),
                    s(18.0),
                    s(19.0),
                    ok
                ),
                (
                    "garbagecollect".into(),
                    "node2".into(),
                    s(19.0),
                    s(20.0),
                    ok
                ),
            ]
        );
        assert_eq!(file.operations[4].planned_s, 14.0);
        assert_eq!(file.operations[4].wall_s.map(f64::round), Some(1.0));
        assert_eq!(file.operations[0].exit_code, Some(0));
        assert_eq!(file.operations[0].output_tail, "line 1\nflush done");
        assert_eq!(file.load_end_s.map(f64::round), Some(25.0));
        let written: MaintenanceFile =
            serde_json::from_str(&fs::read_to_string(dir.path().join(MAINTENANCE_JSON)).unwrap())
                .unwrap();
        assert_eq!(spans(&written), spans(&file));
        assert_eq!(written.load_end_s.map(f64::round), Some(25.0));
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_is_recorded_and_the_plan_goes_on() {
        let executor = sleeper(&[(Operation::Repair, 1, 2), (Operation::Flush, 1, 0)]);
        let file = run("repair@1s,flush@2s", executor, 1, 10, 600.0, None, None).await;
        let statuses: Vec<(Status, Option<i32>)> = file
            .operations
            .iter()
            .map(|r| (r.status, r.exit_code))
            .collect();
        assert_eq!(
            statuses,
            vec![(Status::Failed, Some(2)), (Status::Ok, Some(0))]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn one_running_at_the_end_is_awaited_up_to_the_timeout() {
        // Ends 5 s after the load: awaited. The next is due after the end: not started.
        let executor = sleeper(&[(Operation::Compact, 10, 0), (Operation::Flush, 1, 0)]);
        let file = run("compact@5s,flush@12s", executor, 1, 10, 60.0, None, None).await;
        assert_eq!(
            spans(&file),
            vec![
                (
                    "compact".into(),
                    "node1".into(),
                    Some(5.0),
                    Some(15.0),
                    Status::Ok
                ),
                (
                    "flush".into(),
                    "node1".into(),
                    None,
                    None,
                    Status::NotStarted
                ),
            ]
        );
        // Longer than the timeout after the end: killed at the timeout, the second node's
        // never starts.
        let executor = sleeper(&[(Operation::Compact, 100, 0)]);
        let file = run("compact@5s", executor, 2, 10, 20.0, None, None).await;
        assert_eq!(
            spans(&file),
            vec![
                (
                    "compact".into(),
                    "node1".into(),
                    Some(5.0),
                    Some(30.0),
                    Status::TimedOut
                ),
                (
                    "compact".into(),
                    "node2".into(),
                    None,
                    None,
                    Status::NotStarted
                ),
            ]
        );
        assert_eq!(file.operations[0].exit_code, None);
    }

    #[tokio::test(start_paused = true)]
    async fn the_stop_signal_interrupts_the_running_operation() {
        let executor = sleeper(&[(Operation::Repair, 100, 0), (Operation::Flush, 1, 0)]);
        let file = run("repair@2s,flush@50s", executor, 1, 30, 600.0, Some(7), None).await;
        assert_eq!(
            spans(&file),
            vec![
                (
                    "repair".into(),
                    "node1".into(),
                    Some(2.0),
                    Some(7.0),
                    Status::Interrupted
                ),
                (
                    "flush".into(),
                    "node1".into(),
                    None,
                    None,
                    Status::NotStarted
                ),
            ]
        );
    }

    #[test]
    fn the_tail_keeps_the_last_lines() {
        let output: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        let t = tail(&output);
        assert!(t.starts_with("line 31\n") && t.ends_with("line 50"), "{t}");
        assert_eq!(tail(&"x".repeat(5000)).len(), TAIL_CHARS);
    }
}
