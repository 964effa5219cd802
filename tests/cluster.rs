//! `headroom cluster` and `LocalCluster` against real Cassandra nodes, and their errors.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use headroom::cluster::config::DEFAULT_CASSANDRA_VERSION;
use headroom::cluster::{ClusterConfig, ClusterError, LocalCluster, StartOptions};

use crate::support::{self, alive, headroom, headroom_with_env, query, stderr, stdout, StopOnDrop};

/// The README's path through the binary: start one node, look at it, use it, stop it.
#[test]
fn one_node_through_the_command_line() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("cli-one-node");
    let dir_text = dir.to_str().unwrap();
    let _guard = StopOnDrop(dir.clone());

    let started = Instant::now();
    let out = headroom(&["cluster", "start", "--dir", dir_text, "--heap", "1G"]);
    assert!(out.status.success());
    eprintln!(
        "one node started in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(stdout(&out).contains("Stop them with `headroom cluster stop --dir"));

    let status = stdout(&headroom(&["cluster", "status", "--dir", dir_text]));
    let row = status
        .lines()
        .find(|l| l.starts_with("1 "))
        .expect("a row for node 1");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..2], ["1", "127.0.0.1"]);
    assert_eq!(
        &cells[3..8],
        ["up", "yes", DEFAULT_CASSANDRA_VERSION, "1G", "g1"],
        "{row}"
    );
    let pid: u32 = cells[2].parse().unwrap();
    assert!(alive(pid));

    // A real client reads the server's own version.
    let rows = query(
        SocketAddr::from(([127, 0, 0, 1], 9042)),
        "SELECT release_version FROM system.local",
    );
    assert_eq!(
        rows,
        vec![vec![Some(DEFAULT_CASSANDRA_VERSION.to_string())]]
    );

    let nodetool = headroom(&["cluster", "nodetool", "--dir", dir_text, "1", "status"]);
    assert!(nodetool.status.success());
    assert!(
        stdout(&nodetool)
            .lines()
            .any(|l| l.starts_with("UN  127.0.0.1")),
        "{}",
        stdout(&nodetool)
    );

    let logs = stdout(&headroom(&[
        "cluster", "logs", "--dir", dir_text, "1", "--lines", "0",
    ]));
    assert!(logs.contains("Startup complete"));
    let gc = stdout(&headroom(&[
        "cluster", "logs", "--dir", dir_text, "1", "--gc",
    ]));
    assert!(gc.contains("safepoint") || gc.contains("gc"), "{gc}");

    let again = headroom(&["cluster", "start", "--dir", dir_text]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("already running"),
        "{}",
        stderr(&again)
    );

    // A relative --dir names the same nodes as the absolute path they were started with.
    let stop = support::headroom_in(
        dir.parent().unwrap(),
        &[
            "cluster",
            "stop",
            "--dir",
            dir.file_name().unwrap().to_str().unwrap(),
        ],
    );
    assert!(stop.status.success());
    assert!(!alive(pid), "the node's JVM is gone after `cluster stop`");
    let status = stdout(&headroom(&["cluster", "status", "--dir", dir_text]));
    assert!(
        status
            .lines()
            .any(|l| l.starts_with("1 ") && l.contains(" down ")),
        "{status}"
    );
    assert!(dir.join("node1/data").is_dir(), "stop keeps the data");
    support::assert_catalogued(&dir);

    let destroy = headroom(&["cluster", "destroy", "--dir", dir_text]);
    assert!(destroy.status.success());
    assert!(!dir.exists());
}

/// Three nodes through the library: all up, each sees the other two, then destroyed.
#[test]
fn three_nodes_see_each_other() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("three-nodes");
    let started = Instant::now();
    let cluster =
        LocalCluster::start(&dir, support::small_cluster(3), &support::start_options()).unwrap();
    eprintln!(
        "three nodes started in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let pids = cluster.running_pids();
    assert_eq!(pids.len(), 3);

    for node in cluster.nodes() {
        let rows = query(node.native_addr(), "SELECT peer FROM system.peers_v2");
        let mut peers: Vec<String> = rows.into_iter().filter_map(|r| r[0].clone()).collect();
        peers.sort();
        let mut expected: Vec<String> = cluster
            .nodes()
            .iter()
            .filter(|n| n.index != node.index)
            .map(|n| n.address.to_string())
            .collect();
        expected.sort();
        assert_eq!(peers, expected, "node {} sees the other two", node.index);
    }

    let output = cluster.nodetool(2).unwrap().arg("status").output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let normal: Vec<&str> = text.lines().filter(|l| l.starts_with("UN ")).collect();
    assert_eq!(normal.len(), 3, "three nodes Up and Normal:\n{text}");
    assert!(text.contains("Datacenter: datacenter1"));
    // The tokens headroom gives split the ring evenly, so every node owns the same share.
    // Owns is the one column in percent; counting columns fails when a node's Load is
    // still "?" (one word, not two like "104.2 KiB") just after it started.
    let owns: Vec<&str> = normal
        .iter()
        .map(|l| l.split_whitespace().find(|w| w.ends_with('%')).unwrap())
        .collect();
    assert!(
        owns.iter().all(|o| o.ends_with('%') && *o == owns[0]),
        "equal ownership: {owns:?}"
    );

    cluster.destroy(Duration::from_secs(30)).unwrap();
    assert!(
        pids.iter().all(|&pid| !alive(pid)),
        "no JVM left after destroy"
    );
    assert!(!dir.exists());
}

/// The Drop guard stops the nodes of a test that panics.
#[test]
fn a_panicking_test_leaves_no_node_behind() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("panic");
    let seen_pid = AtomicU32::new(0);
    let outcome = std::panic::catch_unwind(|| {
        let cluster =
            LocalCluster::start(&dir, support::small_cluster(1), &support::start_options())
                .unwrap();
        seen_pid.store(cluster.running_pids()[0], Ordering::SeqCst);
        panic!("a test failing while its node runs");
    });
    assert!(outcome.is_err());
    let pid = seen_pid.load(Ordering::SeqCst);
    assert!(pid > 0, "the node had started");
    assert!(!alive(pid), "the node was stopped while the panic unwound");
}

/// A JVM that exits at once: the error shows the end of its log and the log's path.
#[test]
fn a_node_that_exits_while_starting_shows_its_log() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("exits");
    let config = ClusterConfig {
        jvm_opts: vec!["-XX:+NoSuchOptionAnywhere".into()],
        ..support::small_cluster(1)
    };
    let err = LocalCluster::start(&dir, config, &support::start_options()).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, ClusterError::NodeExited { node: 1, .. }),
        "{text}"
    );
    assert!(
        text.contains("Unrecognized VM option 'NoSuchOptionAnywhere'"),
        "{text}"
    );
    assert!(text.contains("node1/logs/system.log"), "{text}");
}

/// A node that does not answer in time is stopped, and the error says what to raise.
#[test]
fn a_start_that_times_out_stops_the_node() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("timeout");
    let options = StartOptions {
        node_timeout: Duration::from_millis(1500),
        ..support::start_options()
    };
    let err = LocalCluster::start(&dir, support::small_cluster(1), &options).unwrap_err();
    assert!(matches!(err, ClusterError::StartTimeout { .. }), "{err}");
    assert!(err.to_string().contains("--start-timeout"), "{err}");
    let cluster = LocalCluster::open(&dir).unwrap();
    assert!(
        cluster.running_pids().is_empty(),
        "the timed-out node was stopped"
    );
}

/// A port that another process holds is named, with what to do.
#[test]
fn a_port_in_use_is_named() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("port-in-use");
    let address = Ipv4Addr::new(127, 0, 0, 9);
    let _squatter = TcpListener::bind((address, 9042)).unwrap();
    let config = ClusterConfig {
        first_address: address,
        ..support::small_cluster(1)
    };
    let err = LocalCluster::start(&dir, config, &support::start_options()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("CQL port 127.0.0.9:9042 is already in use, so node 1 cannot start"),
        "{text}"
    );
    assert!(text.contains("--first-address"), "{text}");
    // Refused before anything is written: no record of a cluster that never started, which
    // would stand in the way of the next start.
    assert!(
        !dir.join("cluster.json").exists(),
        "a refused start leaves no cluster.json"
    );
}

/// The set-up errors a newcomer can meet, through the binary: each one line of advice.
#[test]
fn set_up_errors_say_what_to_do() {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let cluster = tempfile::tempdir().unwrap();
    let dir = cluster.path().join("c");
    let dir = dir.to_str().unwrap();

    let out = headroom_with_env(
        &["cluster", "start", "--dir", dir],
        &[("JAVA_HOME", "/nonexistent-jdk")],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out)
        .contains("no Java found (JAVA_HOME is /nonexistent-jdk/bin/java, but it has no bin/java"));

    let out = headroom(&[
        "cluster",
        "start",
        "--dir",
        dir,
        "--cassandra-version",
        "4.1.7",
    ]);
    assert!(
        stderr(&out).contains("Cassandra 4.1.7 runs on Java 8 or 11, but"),
        "{}",
        stderr(&out)
    );

    let out = headroom_with_env(
        &["cluster", "start", "--dir", dir],
        &[
            ("HEADROOM_CACHE_DIR", cache_dir),
            ("HEADROOM_MVN", "/nonexistent/mvn"),
        ],
    );
    assert!(
        stderr(&out).contains("Maven (mvn) was not found"),
        "{}",
        stderr(&out)
    );

    let out = headroom(&["cluster", "start", "--dir", dir, "--heap", "128M"]);
    assert_eq!(out.status.code(), Some(2), "a bad value is a usage error");
    assert!(stderr(&out).contains("--heap <SIZE>': out of range: give 512M to 1T"));

    let out = headroom(&["cluster", "status", "--dir", dir]);
    assert!(
        stderr(&out).contains("there is no cluster in"),
        "{}",
        stderr(&out)
    );

    let out = headroom(&[
        "cluster",
        "start",
        "--dir",
        dir,
        "--nodes",
        "1",
        "--first-address",
        "10.0.0.1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a loopback address"));
}

/// A release Maven Central does not have: Maven's own words, and where its log is.
#[test]
fn an_unknown_cassandra_release_reports_maven_s_failure() {
    // Maven's JVM would take the CPU from a load test's client beside it.
    let _machine = support::exclusive();
    let cache = tempfile::tempdir().unwrap();
    let cluster = tempfile::tempdir().unwrap();
    let dir = cluster.path().join("c");
    let out = headroom_with_env(
        &[
            "cluster",
            "start",
            "--dir",
            dir.to_str().unwrap(),
            "--cassandra-version",
            "5.0.999",
        ],
        &[("HEADROOM_CACHE_DIR", cache.path().to_str().unwrap())],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("Maven could not resolve org.apache.cassandra:cassandra-all:5.0.999"),
        "{err}"
    );
    assert!(err.contains("maven.log"), "{err}");
    assert!(
        !cache.path().join("cassandra/5.0.999/lib").exists(),
        "no half-filled cache"
    );
}
