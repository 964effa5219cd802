//! TLS against real nodes: a local cluster started with TLS required (`cluster start --tls`),
//! reached through both senders with its CA given as a flag or found through its directory;
//! and every way a client can get TLS wrong refused with one line naming the cause and the
//! flag, exit code 2, nothing but error.txt written. Then mutual TLS: a cluster that also
//! requires a client certificate.

use std::path::Path;
use std::process::Output;

use headroom::cluster::{tls, ClientTls, ClusterConfig, LocalCluster};

use crate::support::{self, op, read_json, stderr, stdout};

/// A short fixed-rate keyvalue run against the test's node with `extra` flags, into `out`,
/// with `cluster_dir` as --cluster-dir.
fn run(cluster_dir: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["keyvalue", "--rate", "50", "--duration", "2s", "-r", "0.5"];
    args.extend_from_slice(extra);
    support::run_against(cluster_dir, out, &args)
}

/// The run went through and its requests succeeded. A run the shared machine held back
/// (exit code 4, client-bound: its threads were not run on time) went through too: what is
/// tested here is the connection, not the measurement.
fn assert_ran(run: &Output, out: &Path) {
    assert!(
        matches!(run.status.code(), Some(0 | 4)),
        "{}\n{}",
        stdout(run),
        stderr(run)
    );
    let summary = read_json(&out.join("summary.json"));
    support::assert_succeeded(op(&summary, "write"));
}

/// The run was refused with exit code 2, one line that says all of `says`, and wrote nothing
/// but error.txt.
fn assert_refused(run: &Output, out: &Path, says: &[&str]) {
    let err = stderr(run);
    assert_eq!(run.status.code(), Some(2), "{err}");
    let error_lines: Vec<&str> = err.lines().filter(|l| l.starts_with("Error:")).collect();
    assert_eq!(error_lines.len(), 1, "{err}");
    for text in says {
        assert!(error_lines[0].contains(text), "{text:?} not in: {err}");
    }
    if out.exists() {
        let left: Vec<_> = std::fs::read_dir(out)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["error.txt"]);
    }
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_tls_node_is_reached_through_both_senders_and_wrong_tls_is_refused_with_the_flag_to_use() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("tls");
    let config = ClusterConfig {
        tls: ClientTls::Required,
        ..support::small_cluster(1)
    };
    let cluster = LocalCluster::start(&dir, config, &support::start_options()).unwrap();
    let ca = tls::ca_path(cluster.dir());
    let keystore = tls::node_keystore_path(cluster.dir(), 1);
    let mode = std::os::unix::fs::PermissionsExt::mode(&keystore.metadata().unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "{}", keystore.display());
    let yaml = std::fs::read_to_string(cluster.node(1).unwrap().yaml_path()).unwrap();
    assert!(yaml.contains("optional: false"), "{yaml}");

    let status = support::headroom(&["cluster", "status", "--dir", text(cluster.dir())]);
    let shown = stdout(&status);
    assert!(status.status.success(), "{shown}");
    assert!(shown.contains("TLS required on CQL; CA"), "{shown}");
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("1 ") && l.contains(" up ") && l.contains(" yes ")),
        "the status probe answers over TLS: {shown}"
    );

    let runs = tempfile::tempdir().unwrap();
    // A directory of no cluster: only the flags say TLS.
    let elsewhere = tempfile::tempdir().unwrap();
    for sender in ["native", "driver"] {
        let out = runs.path().join(format!("ca-{sender}"));
        let ran = run(
            elsewhere.path(),
            &out,
            &["--sender", sender, "--tls-ca", text(&ca)],
        );
        assert_ran(&ran, &out);
        assert!(!stdout(&ran).contains("TLS: the CA of the local cluster"));
        let config = read_json(&out.join("config.json"));
        assert_eq!(config["sender"], sender);
        assert_eq!(config["tls"]["ca"], text(&ca.canonicalize().unwrap()));
        assert_eq!(config["tls"]["no_verify"], false);

        // Through the cluster's directory, no TLS flag.
        let out = runs.path().join(format!("dir-{sender}"));
        let ran = run(cluster.dir(), &out, &["--sender", sender]);
        assert_ran(&ran, &out);
        assert!(
            stdout(&ran).contains("TLS: the CA of the local cluster in"),
            "{}",
            stdout(&ran)
        );
        let config = read_json(&out.join("config.json"));
        assert_eq!(config["tls"]["ca"], text(&ca));
        assert_eq!(config["tls"]["from_cluster"], text(cluster.dir()));
    }

    // A plain client.
    let out = runs.path().join("plain");
    let ran = run(elsewhere.path(), &out, &[]);
    assert_refused(&ran, &out, &["requires TLS", "--tls-ca FILE"]);

    // Another CA: made the way the cluster makes its own, so with the same name.
    let other = tempfile::tempdir().unwrap();
    let other_ca = other.path().join("ca.pem");
    tls::CertificateAuthority::new("headroom local cluster CA")
        .unwrap()
        .write(&other_ca, &other.path().join("ca-key.pem"))
        .unwrap();
    for sender in ["native", "driver"] {
        let out = runs.path().join(format!("wrong-ca-{sender}"));
        let ran = run(
            elsewhere.path(),
            &out,
            &["--sender", sender, "--tls-ca", text(&other_ca)],
        );
        assert_refused(
            &ran,
            &out,
            &[
                "not signed by the CA in --tls-ca",
                "give the CA that signed it",
            ],
        );
    }

    // A name the certificate does not hold; then the address it holds, recorded.
    let out = runs.path().join("wrong-name");
    let ran = run(
        elsewhere.path(),
        &out,
        &["--tls-ca", text(&ca), "--tls-server-name", "wrong.example"],
    );
    let address = support::address().to_string();
    assert_refused(
        &ran,
        &out,
        &[
            "not valid for --tls-server-name wrong.example",
            &format!("it is valid for {address}"),
        ],
    );
    let out = runs.path().join("right-name");
    let ran = run(
        elsewhere.path(),
        &out,
        &["--tls-ca", text(&ca), "--tls-server-name", &address],
    );
    assert_ran(&ran, &out);
    let config = read_json(&out.join("config.json"));
    assert_eq!(config["tls"]["server_name"], address.as_str());

    // No verification: works, warns, and is recorded.
    let out = runs.path().join("no-verify");
    let ran = run(elsewhere.path(), &out, &["--tls-no-verify"]);
    assert_ran(&ran, &out);
    assert!(
        stderr(&ran).contains("Warning: --tls-no-verify: the nodes' certificates are not checked"),
        "{}",
        stderr(&ran)
    );
    let config = read_json(&out.join("config.json"));
    assert_eq!(config["tls"]["no_verify"], true);
}

#[test]
fn a_node_that_requires_a_client_certificate_takes_the_clusters_and_refuses_none() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("mutual-tls");
    let config = ClusterConfig {
        tls: ClientTls::RequiredWithClientCertificate,
        ..support::small_cluster(1)
    };
    let cluster = LocalCluster::start(&dir, config, &support::start_options()).unwrap();
    let (ca, cert, key) = (
        tls::ca_path(cluster.dir()),
        tls::client_cert_path(cluster.dir()),
        tls::client_key_path(cluster.dir()),
    );
    let mode = std::os::unix::fs::PermissionsExt::mode(&key.metadata().unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "{}", key.display());

    let runs = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    for sender in ["native", "driver"] {
        let out = runs.path().join(format!("mutual-{sender}"));
        let ran = run(
            elsewhere.path(),
            &out,
            &[
                "--sender",
                sender,
                "--tls-ca",
                text(&ca),
                "--tls-cert",
                text(&cert),
                "--tls-key",
                text(&key),
            ],
        );
        assert_ran(&ran, &out);
        let config = read_json(&out.join("config.json"));
        assert_eq!(
            config["tls"]["client_cert"],
            text(&cert.canonicalize().unwrap())
        );
        let written = std::fs::read_to_string(out.join("config.json")).unwrap();
        assert!(!written.contains("PRIVATE KEY"), "{written}");

        let out = runs.path().join(format!("without-{sender}"));
        let ran = run(
            elsewhere.path(),
            &out,
            &["--sender", sender, "--tls-ca", text(&ca)],
        );
        assert_refused(
            &ran,
            &out,
            &[
                "requires a client certificate",
                "give --tls-cert FILE and --tls-key FILE",
            ],
        );
    }
    // Through the cluster's directory: its CA and client certificate, no flag.
    let out = runs.path().join("dir");
    let ran = run(cluster.dir(), &out, &[]);
    assert_ran(&ran, &out);
    assert!(
        stdout(&ran).contains("and its client certificate"),
        "{}",
        stdout(&ran)
    );
}
