//! Nodes lost during a run, on three real nodes at RF 3 and CL ONE: a node killed and
//! restarted by `--during` costs only the requests it held (the native sender routes around
//! it and comes back to it), and at QUORUM under `--validate` loses no acknowledged write;
//! a node frozen and continued shows as timeouts and late answers, and every scheduled
//! request is accounted for either way; `cluster start` then starts a
//! node that is down and leaves the others running.

use std::fs;
use std::path::Path;

use headroom::cluster::LocalCluster;
use headroom::maintenance::{MaintenanceFile, Operation, Status};

use crate::support;

/// Requests and errors (by class) of every operation type of a run's summary.
fn accounting(out: &Path) -> (u64, u64, serde_json::Map<String, serde_json::Value>) {
    let summary = support::read_json(&out.join("summary.json"));
    let (mut requests, mut ok) = (0, 0);
    let mut errors = serde_json::Map::new();
    for op in summary["ops"].as_array().unwrap() {
        requests += op["requests"].as_u64().unwrap();
        ok += op["ok"].as_u64().unwrap();
        for (class, count) in op["errors"].as_object().unwrap() {
            let sum = errors.get(class).and_then(|v| v.as_u64()).unwrap_or(0);
            errors.insert(class.clone(), (sum + count.as_u64().unwrap()).into());
        }
    }
    (requests, ok, errors)
}

fn maintenance(out: &Path) -> MaintenanceFile {
    serde_json::from_str(&fs::read_to_string(out.join("maintenance.json")).unwrap()).unwrap()
}

#[test]
fn a_node_lost_during_a_run_costs_only_the_requests_it_held() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("node-loss");
    let cluster =
        LocalCluster::start(&dir, support::small_cluster(3), &support::start_options()).unwrap();
    let runs = tempfile::tempdir().unwrap();

    // Killed 10 s into the measured part, started again 5 s later; the run goes on long
    // enough for the node to answer again and take its share.
    let out = runs.path().join("kill");
    let rate = 600;
    let run = support::run_against(
        &dir,
        &out,
        &[
            "keyvalue",
            "--rate",
            &rate.to_string(),
            "--warmup",
            "5s",
            "--duration",
            "75s",
            "-r",
            "0.2",
            "--replication",
            "simple:3",
            "--consistency",
            "ONE",
            "--sender",
            "native",
            "--during",
            "kill:3@15s,restart:3@20s",
        ],
    );
    let stdout = support::stdout(&run);
    // The accounting is what is checked, and it holds whether or not node 3's JVM start-up
    // made the run client-bound (exit 4) on this busy machine.
    support::assert_ran_or_client_bound(&run, &out, 0);
    assert!(
        stdout.contains("maintenance: kill (SIGKILL) on node3 started at"),
        "{stdout}"
    );
    let (requests, ok, errors) = accounting(&out);
    assert_eq!(
        requests,
        75 * rate,
        "every scheduled request is accounted for"
    );
    let failed: u64 = errors.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(ok + failed, requests);
    assert!(
        (failed as f64) < 0.01 * requests as f64,
        "{failed} of {requests} failed ({errors:?}): more than the requests node 3 held"
    );
    let file = maintenance(&out);
    let done: Vec<(Operation, Status)> = file
        .operations
        .iter()
        .map(|r| (r.operation, r.status))
        .collect();
    assert_eq!(
        done,
        [
            (Operation::Kill, Status::Ok),
            (Operation::Restart, Status::Ok)
        ],
        "{file:?}"
    );
    let back_at = file.operations[1].end_s.unwrap();
    // The run recorded the new pid in the cluster's directory.
    let now = LocalCluster::open(&dir).unwrap();
    assert!(now.pid(3).is_some(), "node 3 runs again");
    // Restarted within the run, node 3 coordinated writes again: the sender came back to it.
    if back_at < 70.0 {
        let writes = support::coordinated_writes(&cluster, 3);
        assert!(
            writes > 100,
            "node 3, up again at {back_at:.1} s, coordinated {writes} writes"
        );
    }

    // Validated at RF 3, QUORUM/QUORUM, node 3 killed and restarted: every read sees every
    // write acknowledged before it, and the final check, at ALL once node 3 is back, finds
    // every acknowledged write.
    let out = runs.path().join("validated");
    let run = support::run_against(
        &dir,
        &out,
        &[
            "keyvalue",
            "--rate",
            "300",
            "--warmup",
            "2s",
            "--duration",
            "30s",
            "--populate",
            "3000",
            "--partitions",
            "3000",
            "-r",
            "0.5",
            "--replication",
            "simple:3",
            "--consistency",
            "QUORUM",
            "--keyspace",
            "validated_loss",
            "--drop",
            "--validate",
            "--during",
            "kill:3@8s,restart:3@13s",
        ],
    );
    let stdout = support::stdout(&run);
    // A defect would end the run with its own code (5); client-bound (4) on this busy
    // machine still carries the whole validation.
    support::assert_ran_or_client_bound(&run, &out, 0);
    let v = support::read_json(&out.join("summary.json"))["validation"].clone();
    let count = |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(v["reads_must_see_writes"], true, "{v}");
    assert!(count(&v["reads"]["checked"]) > 3000, "{v}");
    assert_eq!(count(&v["reads"]["corrupt"]), 0, "{v}");
    assert_eq!(count(&v["reads"]["stale_unexpected"]), 0, "{v}");
    let check = &v["final_check"];
    assert_eq!(check["complete"], true, "{v}\n{stdout}");
    assert_eq!((count(&check["lost"]), count(&check["corrupt"])), (0, 0), "{v}");
    assert_eq!(count(&check["found"]), count(&check["keys"]), "{v}");
    let file = maintenance(&out);
    assert!(
        file.operations.iter().all(|r| r.status == Status::Ok),
        "{file:?}"
    );

    // Frozen for 10 s: its requests time out or are answered late, none is lost.
    let out = runs.path().join("stop");
    let run = support::run_against(
        &dir,
        &out,
        &[
            "keyvalue",
            "--rate",
            &rate.to_string(),
            "--warmup",
            "2s",
            "--duration",
            "25s",
            "-r",
            "0.2",
            "--replication",
            "simple:3",
            "--consistency",
            "ONE",
            "--sender",
            "native",
            "--timeout",
            "5s",
            "--during",
            "stop:2@7s,cont:2@17s",
        ],
    );
    // The accounting is what is checked, client-bound (exit 4) or not.
    support::assert_ran_or_client_bound(&run, &out, 0);
    let (requests, ok, errors) = accounting(&out);
    assert_eq!(
        requests,
        25 * rate,
        "every scheduled request is accounted for"
    );
    let failed: u64 = errors.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(ok + failed, requests);
    // Sent to the frozen node in its first 5 s: timed out (the client's --timeout).
    assert!(
        errors.get("timeout").and_then(|v| v.as_u64()).unwrap_or(0) > 0,
        "{errors:?}"
    );
    assert!(
        errors.keys().all(|class| class == "timeout"),
        "a frozen node's requests time out or come late, nothing else: {errors:?}"
    );
    let file = maintenance(&out);
    assert!(
        file.operations.iter().all(|r| r.status == Status::Ok),
        "{file:?}"
    );
    let pid = LocalCluster::open(&dir)
        .unwrap()
        .pid(2)
        .expect("node 2 runs");
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let state = stat.rsplit_once(')').unwrap().1.split_whitespace().next();
    assert_ne!(state, Some("T"), "node 2 is no longer frozen");

    // A node down outside any run: `cluster start` starts it alone.
    let now = LocalCluster::open(&dir).unwrap();
    let (first, third) = (now.pid(1).unwrap(), now.pid(3).unwrap());
    now.signal_node(2, nix::sys::signal::Signal::SIGKILL)
        .unwrap();
    assert!(
        support::wait_for(std::time::Duration::from_secs(10), || LocalCluster::open(
            &dir
        )
        .unwrap()
        .pid(2)
        .is_none()),
        "node 2 died"
    );
    let start = support::headroom(&["cluster", "start", "--dir", dir.to_str().unwrap()]);
    let said = support::stderr(&start);
    assert!(
        start.status.success(),
        "{said}\n{}",
        support::stdout(&start)
    );
    assert!(said.contains("that are down: 2"), "{said}");
    let now = LocalCluster::open(&dir).unwrap();
    assert_eq!(
        (now.pid(1), now.pid(3)),
        (Some(first), Some(third)),
        "left running"
    );
    assert!(now.pid(2).is_some(), "node 2 runs again");
    drop(cluster);
}
