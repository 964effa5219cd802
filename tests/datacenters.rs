//! Two data centres of one node each (2 × 1 keeps the suite short; 2 × 2 routes the same
//! way): `--local-dc` sends nothing to the other data centre's coordinators on either
//! sender, as the nodes' own counters show; without it the contact point's data centre is the
//! local one; an unknown name is refused with the names the cluster has.

use headroom::cluster::{ClusterConfig, LocalCluster};

use crate::support;

#[test]
fn the_local_data_centre_alone_coordinates_the_requests() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("datacenters");
    let config = ClusterConfig {
        dcs: 2,
        ..support::small_cluster(2)
    };
    let cluster = LocalCluster::start(&dir, config, &support::start_options()).unwrap();
    let dcs: Vec<String> = support::query(
        cluster.node(2).unwrap().native_addr(),
        "SELECT data_center FROM system.local",
    )
    .into_iter()
    .filter_map(|r| r[0].clone())
    .collect();
    assert_eq!(dcs, ["dc2"]);
    let runs = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let out = runs.path().join(name);
        let mut args = vec![
            "keyvalue",
            "--rate",
            "200",
            "--warmup",
            "1s",
            "--duration",
            "4s",
            "-r",
            "0.2",
            "--replication",
            "nts:dc1=1,dc2=1",
        ];
        args.extend_from_slice(extra);
        // The contact point is node 1, in dc1.
        support::run_against(&dir, &out, &args)
    };
    for sender in ["native", "driver"] {
        let output = run(
            sender,
            &[
                "--local-dc",
                "dc2",
                "--consistency",
                "LOCAL_ONE",
                "--sender",
                sender,
            ],
        );
        // Routing is what is checked, and it holds whether or not a client stall on this
        // busy machine made the run client-bound (exit 4).
        support::assert_ran_or_client_bound(&output, &runs.path().join(sender), 0);
        assert!(
            support::stdout(&output).contains(
                "Data centre: dc2 (--local-dc) of dc1, dc2; the requests go to its nodes only."
            ),
            "{}",
            support::stdout(&output)
        );
        assert_eq!(
            support::coordinated_writes(&cluster, 1),
            0,
            "dc1's node coordinated writes of a run whose local data centre is dc2 ({sender})"
        );
    }
    let in_dc2 = support::coordinated_writes(&cluster, 2);
    assert!(in_dc2 > 1000, "dc2 coordinated {in_dc2} writes");

    // No --local-dc: the contact point's data centre, dc1.
    let output = run("default", &["--consistency", "LOCAL_ONE"]);
    // Routing is what is checked, client-bound (exit 4) or not.
    support::assert_ran_or_client_bound(&output, &runs.path().join("default"), 0);
    assert!(
        support::stdout(&output).contains("Data centre: dc1 (the contact points'"),
        "{}",
        support::stdout(&output)
    );
    assert!(support::coordinated_writes(&cluster, 1) > 500);
    assert_eq!(
        support::coordinated_writes(&cluster, 2),
        in_dc2,
        "dc2 took none"
    );

    let output = run("unknown", &["--local-dc", "dc3"]);
    assert_eq!(output.status.code(), Some(2));
    let err = support::stderr(&output);
    assert!(
        err.contains(
            "--local-dc dc3: the cluster has no such data centre; its data centres: dc1, dc2"
        ),
        "{err}"
    );
    drop(cluster);
}
