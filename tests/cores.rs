//! Nodes and the client on cores of their own, on a real node: `cluster start --cpus` binds
//! the JVM and tells it how many cores it has, a run against that cluster binds its threads
//! to the cores left over (or to `--client-cpus`, refused where a node runs), and a machine of
//! one core (`taskset -c 0` around headroom) still starts and runs, saying it could not split.
//! The node's JVM runs at the niceness `--nice` gives (10 by default), the client at its own.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use headroom::cluster::LocalCluster;
use headroom::cpus::{self, Cores};

use crate::support::{self, stderr, stdout};

/// What `read` finds of every thread of process `pid`, one entry a thread.
fn per_thread<T>(pid: u32, read: impl Fn(u32) -> Option<T>) -> Vec<T> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| t.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(read)
        .collect()
}

/// The cores every thread of process `pid` may run on, one entry a thread.
fn threads_cores(pid: u32) -> Vec<String> {
    per_thread(pid, |tid| cpus::of_process(tid).map(|c| c.to_string()))
}

/// The niceness of every thread of process `pid`, one entry a thread.
fn threads_niceness(pid: u32) -> Vec<i32> {
    per_thread(pid, cpus::niceness_of)
}

/// The cluster's node 1 pid.
fn node_pid(dir: &Path) -> u32 {
    LocalCluster::open(dir)
        .unwrap()
        .pid(1)
        .expect("node 1 runs")
}

/// The processors the JVM said it has, from its GC log's "CPUs: N total, M available".
fn jvm_processors(dir: &Path) -> String {
    let spec = &LocalCluster::open(dir).unwrap().nodes()[0];
    let log = std::fs::read_to_string(spec.gc_log_path()).unwrap_or_default();
    log.lines()
        .find_map(|l| {
            l.split_once("CPUs: ")
                .map(|(_, rest)| rest.trim().to_string())
        })
        .unwrap_or_else(|| format!("no CPUs line in {}", spec.gc_log_path().display()))
}

/// `headroom run` against the cluster in `dir` for a few seconds at a low rate, with `extra`
/// flags, started as a child: returns what its threads were bound to a moment into the
/// measured part, and its output.
fn run_watching_threads(
    dir: &Path,
    out: &Path,
    extra: &[&str],
    prefix: &[&str],
) -> (Vec<String>, std::process::Output) {
    let hosts = support::hosts();
    let mut args: Vec<&str> = vec![
        "run",
        "keyvalue",
        "--rate",
        "200",
        "--warmup",
        "1s",
        "--duration",
        "4s",
        "--hosts",
        &hosts,
        "--cluster-dir",
        dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut command = match prefix.split_first() {
        Some((program, rest)) => {
            let mut c = Command::new(program);
            c.args(rest).arg(env!("CARGO_BIN_EXE_headroom"));
            c
        }
        None => Command::new(env!("CARGO_BIN_EXE_headroom")),
    };
    let child = command
        .args(&args)
        .env_remove("HEADROOM_CLUSTER_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Into the measured part: the populate and warmup are over once intervals.csv has rows.
    let started = Instant::now();
    let mut seen = Vec::new();
    while started.elapsed() < Duration::from_secs(60) {
        if std::fs::read_to_string(out.join("intervals.csv"))
            .map(|t| t.lines().count() > 1)
            .unwrap_or(false)
        {
            seen = threads_cores(pid);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output().unwrap();
    eprintln!(
        "$ headroom {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (seen, output)
}

#[test]
fn nodes_and_the_client_run_on_cores_of_their_own() {
    let _machine = support::exclusive();
    let machine = cpus::machine().clone();
    let dir = support::cluster_dir("cores");
    let _stop = support::StopOnDrop(dir.clone());
    let runs = tempfile::tempdir().unwrap();
    let address = support::address().to_string();
    let start = |extra: &[&str], prefix: &[&str]| {
        let mut args = vec![
            "cluster",
            "start",
            "--dir",
            dir.to_str().unwrap(),
            "--heap",
            "768M",
            "--first-address",
            &address,
        ];
        args.extend_from_slice(extra);
        match prefix.split_first() {
            None => support::headroom(&args),
            Some((program, rest)) => {
                let output = Command::new(program)
                    .args(rest)
                    .arg(env!("CARGO_BIN_EXE_headroom"))
                    .args(&args)
                    .env_remove("HEADROOM_CLUSTER_DIR")
                    .output()
                    .unwrap();
                eprintln!(
                    "$ {prefix:?} headroom {}\n{}{}",
                    args.join(" "),
                    stdout(&output),
                    stderr(&output)
                );
                output
            }
        }
    };

    if machine.len() >= 2 {
        // The last core for the node, the rest for the client.
        let last = machine.iter().last().unwrap();
        let node_core = last.to_string();
        let client_cores = machine.without(&Cores::new([last]).unwrap()).unwrap();
        let started = start(&["--cpus", &node_core], &[]);
        assert!(started.status.success(), "{}", stderr(&started));
        let pid = node_pid(&dir);
        assert_eq!(
            cpus::of_process(pid).map(|c| c.to_string()),
            Some(node_core.clone())
        );
        assert!(
            threads_cores(pid).iter().all(|c| *c == node_core),
            "every JVM thread on core {node_core}: {:?}",
            threads_cores(pid)
        );
        assert!(
            jvm_processors(&dir).ends_with(", 1 available"),
            "the JVM counts one processor: {}",
            jvm_processors(&dir)
        );
        // At the default niceness, after the client (which runs at the test's own).
        let expected = headroom::cluster::DEFAULT_NODE_NICE.max(own_niceness());
        let niceness = threads_niceness(pid);
        assert!(
            !niceness.is_empty() && niceness.iter().all(|n| *n == expected),
            "every JVM thread at niceness {expected}: {niceness:?}"
        );
        let said = stdout(&started);
        assert!(
            said.contains(&format!(
                "nodes on core {node_core}; the client on {} (of {machine}); the nodes at \
                 niceness 10, after the client",
                on(&client_cores)
            )),
            "{said}"
        );
        let status = support::headroom(&["cluster", "status", "--dir", dir.to_str().unwrap()]);
        let table = stdout(&status);
        let header = table.lines().find(|l| l.starts_with("NODE")).unwrap();
        let row = table.lines().find(|l| l.starts_with("1 ")).unwrap();
        let column = header.find("CORES").unwrap();
        assert_eq!(
            row[column..].split_whitespace().next(),
            Some(node_core.as_str()),
            "{table}"
        );

        // A run against it binds every thread to the cores the node left.
        let out = runs.path().join("default");
        let (threads, run) = run_watching_threads(&dir, &out, &[], &[]);
        support::assert_ran_or_client_bound(&run, &out, 0);
        assert!(!threads.is_empty(), "the run's threads were seen");
        assert!(
            threads.iter().all(|c| *c == client_cores.to_string()),
            "every client thread on {client_cores}: {threads:?}"
        );
        let config = support::read_json(&out.join("config.json"));
        assert_eq!(config["client_cpus"], client_cores.to_string());

        // Named cores win; all binds nothing.
        let first = machine.iter().next().unwrap().to_string();
        let out = runs.path().join("named");
        let (threads, run) = run_watching_threads(&dir, &out, &["--client-cpus", &first], &[]);
        support::assert_ran_or_client_bound(&run, &out, 0);
        assert!(threads.iter().all(|c| *c == first), "{threads:?}");
        let out = runs.path().join("all");
        let (threads, run) = run_watching_threads(&dir, &out, &["--client-cpus", "all"], &[]);
        support::assert_ran_or_client_bound(&run, &out, 0);
        assert!(
            threads.iter().all(|c| *c == machine.to_string()),
            "{threads:?}"
        );
        assert!(support::read_json(&out.join("config.json"))
            .get("client_cpus")
            .is_none());

        // The node's core for the client: refused before anything is written.
        let out = runs.path().join("overlap");
        let refused = support::run_against(
            &dir,
            &out,
            &[
                "keyvalue",
                "--rate",
                "100",
                "--duration",
                "2s",
                "--client-cpus",
                &node_core,
            ],
        );
        assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
        assert!(
            stderr(&refused).contains(&format!("shares core {node_core} with the local nodes")),
            "{}",
            stderr(&refused)
        );
        assert!(!out.exists(), "nothing written");

        let destroyed = support::headroom(&["cluster", "destroy", "--dir", dir.to_str().unwrap()]);
        assert!(destroyed.status.success(), "{}", stderr(&destroyed));
    }

    // One core for all of headroom: nothing can be split, and that is said; it still runs,
    // the node at the niceness asked for.
    let only = machine.iter().next().unwrap().to_string();
    let taskset = ["taskset", "-c", only.as_str()];
    let started = start(&["--nice", "13"], &taskset);
    assert!(started.status.success(), "{}", stderr(&started));
    assert!(
        stderr(&started).contains("could not be split"),
        "{}",
        stderr(&started)
    );
    assert!(
        stdout(&started).contains("the nodes at niceness 13, after the client"),
        "{}",
        stdout(&started)
    );
    let pid = node_pid(&dir);
    assert_eq!(
        cpus::of_process(pid).map(|c| c.to_string()),
        Some(only.clone())
    );
    let niceness = threads_niceness(pid);
    assert!(
        niceness.iter().all(|n| *n == 13.max(own_niceness())),
        "{niceness:?}"
    );
    let out = runs.path().join("one-core");
    let (threads, run) = run_watching_threads(&dir, &out, &[], &taskset);
    support::assert_ran_or_client_bound(&run, &out, 0);
    assert!(threads.iter().all(|c| *c == only), "{threads:?}");
    assert!(support::read_json(&out.join("config.json"))
        .get("client_cpus")
        .is_none());
    let destroyed = support::headroom(&["cluster", "destroy", "--dir", dir.to_str().unwrap()]);
    assert!(destroyed.status.success(), "{}", stderr(&destroyed));
}

/// This test process's niceness: nodes cannot be started below it without privilege.
fn own_niceness() -> i32 {
    cpus::niceness_of(std::process::id()).unwrap()
}

/// "core 0" or "cores 0-2".
fn on(cores: &Cores) -> String {
    if cores.len() == 1 {
        format!("core {cores}")
    } else {
        format!("cores {cores}")
    }
}
