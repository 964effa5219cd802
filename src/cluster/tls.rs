//! TLS on a local cluster (`cluster start --tls`): headroom makes a CA of the cluster's own
//! and a certificate per node signed by it (the node's address as an IP name, which is what
//! the driver checks), keeps them under `<cluster dir>/tls/` (private keys readable by this
//! user only), and the nodes require TLS on their CQL port (`client_encryption_options`,
//! PEM files, Cassandra 4.1 and later). With client certificates required
//! (`--tls-client-auth`) it also makes one for headroom's clients.
//!
//! `run`, `capacity` and `sweep` against such a cluster find its CA (and client certificate)
//! through [`settings_for`], as they find its password through [`super::auth`]; the cluster's
//! own probes connect with [`probe_tls`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa, KeyPair,
};

use super::{ClusterError, LocalCluster, NodeSpec};
use crate::client::tls::{TlsClient, TlsSettings};

/// `<cluster dir>/tls`.
pub fn tls_dir(dir: &Path) -> PathBuf {
    dir.join(crate::catalogue::TLS)
}

/// The cluster's CA certificate: what clients trust (`--tls-ca`).
pub fn ca_path(dir: &Path) -> PathBuf {
    tls_dir(dir).join("ca.pem")
}

/// The CA's private key (mode 0600).
fn ca_key_path(dir: &Path) -> PathBuf {
    tls_dir(dir).join("ca-key.pem")
}

/// Node `index`'s key and certificate chain in one PEM file (mode 0600), as Cassandra's
/// `PEMBasedSslContextFactory` reads its keystore.
pub fn node_keystore_path(dir: &Path, index: u32) -> PathBuf {
    tls_dir(dir).join(format!("node{index}.pem"))
}

/// The client certificate of a cluster that requires one (`--tls-cert`).
pub fn client_cert_path(dir: &Path) -> PathBuf {
    tls_dir(dir).join("client.pem")
}

/// The client certificate's private key (mode 0600, `--tls-key`).
pub fn client_key_path(dir: &Path) -> PathBuf {
    tls_dir(dir).join("client-key.pem")
}

/// A CA: its certificate (PEM) and the issuer that signs with its key.
pub struct CertificateAuthority {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl CertificateAuthority {
    /// A new self-signed CA named `name`.
    pub fn new(name: &str) -> Result<CertificateAuthority, ClusterError> {
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(generating)?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name = named(name);
        let key = KeyPair::generate().map_err(generating)?;
        let issuer = CertifiedIssuer::self_signed(params, key).map_err(generating)?;
        Ok(CertificateAuthority { issuer })
    }

    /// The CA's certificate, PEM.
    pub fn certificate_pem(&self) -> String {
        self.issuer.pem()
    }

    /// A certificate signed by this CA for `names` (IP addresses become IP names, others
    /// DNS names): (certificate PEM, PKCS#8 private key PEM).
    pub fn sign(&self, subject: &str, names: &[String]) -> Result<(String, String), ClusterError> {
        let mut params = CertificateParams::new(names.to_vec()).map_err(generating)?;
        params.distinguished_name = named(subject);
        let key = KeyPair::generate().map_err(generating)?;
        let certificate = params.signed_by(&key, &self.issuer).map_err(generating)?;
        Ok((certificate.pem(), key.serialize_pem()))
    }

    /// Writes the CA's certificate to `certificate` and its key to `key` (mode 0600).
    pub fn write(&self, certificate: &Path, key: &Path) -> Result<(), ClusterError> {
        super::write_file(certificate, &self.certificate_pem())?;
        super::write_private_file(key, &self.issuer.key().serialize_pem())
    }
}

fn named(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name.push(DnType::OrganizationName, "headroom local cluster");
    name
}

fn generating(e: rcgen::Error) -> ClusterError {
    ClusterError::InvalidConfig(format!("generating the cluster's TLS certificates: {e}"))
}

/// Makes the CA, the nodes' certificates and (when the nodes require one) the client
/// certificate under `<dir>/tls/`, unless they are all there already (a cluster started
/// again keeps its certificates).
pub(super) fn generate(
    dir: &Path,
    nodes: &[NodeSpec],
    client_certificate: bool,
) -> Result<(), ClusterError> {
    let mut needed = vec![ca_path(dir), ca_key_path(dir)];
    needed.extend(nodes.iter().map(|n| node_keystore_path(dir, n.index)));
    if client_certificate {
        needed.extend([client_cert_path(dir), client_key_path(dir)]);
    }
    if needed.iter().all(|path| path.exists()) {
        return Ok(());
    }
    let folder = tls_dir(dir);
    std::fs::create_dir_all(&folder)
        .map_err(ClusterError::io(format!("creating {}", folder.display())))?;
    let ca = CertificateAuthority::new("headroom local cluster CA")?;
    for node in nodes {
        let (certificate, key) = ca.sign(
            &format!("headroom node {}", node.index),
            &[node.address.to_string()],
        )?;
        // The key, then the chain: the node's certificate and the CA's.
        let keystore = format!("{key}{certificate}{}", ca.certificate_pem());
        super::write_private_file(&node_keystore_path(dir, node.index), &keystore)?;
    }
    if client_certificate {
        let (certificate, key) = ca.sign("headroom client", &["headroom-client".to_string()])?;
        super::write_file(&client_cert_path(dir), &certificate)?;
        super::write_private_file(&client_key_path(dir), &key)?;
    }
    // The CA last: its presence with every other file means the set is whole.
    ca.write(&ca_path(dir), &ca_key_path(dir))
}

/// The TLS a client of the cluster in `dir` uses: its CA, and its client certificate when
/// the nodes require one; `None` when the cluster does not require TLS.
pub fn client_settings(cluster: &LocalCluster) -> Option<TlsSettings> {
    let tls = cluster.config().tls;
    if !tls.is_on() {
        return None;
    }
    let dir = cluster.dir();
    let mutual = tls.requires_client_certificate();
    Some(TlsSettings {
        ca: Some(ca_path(dir)),
        client_cert: mutual.then(|| client_cert_path(dir)),
        client_key: mutual.then(|| client_key_path(dir)),
        server_name: None,
        no_verify: false,
        from_cluster: Some(dir.to_path_buf()),
    })
}

/// The rustls configuration of the cluster's own probes (start, status, the role's set-up,
/// the peers check); `None` without TLS.
pub fn probe_tls(
    cluster: &LocalCluster,
) -> Result<Option<Arc<rustls::ClientConfig>>, ClusterError> {
    client_settings(cluster)
        .map(|settings| {
            TlsClient::new(&settings).map(|c| c.config()).map_err(|e| {
                ClusterError::InvalidConfig(format!(
                    "the TLS files of the cluster in {}: {e}",
                    cluster.dir().display()
                ))
            })
        })
        .transpose()
}

/// The TLS settings of the local cluster in `dir`, when it requires TLS and every one of
/// `hosts` (host:port) is one of its nodes: what a run against that cluster uses when no TLS
/// flag was given.
pub fn settings_for(dir: &Path, hosts: &[String]) -> Option<TlsSettings> {
    let cluster = LocalCluster::open(dir).ok()?;
    if !cluster.serves(hosts) {
        return None;
    }
    client_settings(&cluster)
}

/// cassandra.yaml's `client_encryption_options` for node `index` of the cluster in `dir`.
pub fn client_encryption_yaml(dir: &Path, index: u32, client_certificate: bool) -> String {
    let quoted = |path: PathBuf| {
        serde_json::to_string(&path.to_string_lossy()).expect("a string always serializes")
    };
    let mut yaml = format!(
        "client_encryption_options:\n  \
           enabled: true\n  \
           optional: false\n  \
           ssl_context_factory:\n    \
             class_name: org.apache.cassandra.security.PEMBasedSslContextFactory\n  \
           keystore: {}\n",
        quoted(node_keystore_path(dir, index))
    );
    if client_certificate {
        yaml.push_str(&format!(
            "  require_client_auth: true\n  truststore: {}\n",
            quoted(ca_path(dir))
        ));
    }
    yaml
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterConfig;

    #[test]
    fn certificates_are_made_once_with_private_keys_for_this_user_only() {
        let dir = tempfile::tempdir().unwrap();
        let config = ClusterConfig {
            nodes: 2,
            first_address: "127.0.0.20".parse().unwrap(),
            ..ClusterConfig::default()
        };
        let nodes = config.node_specs(dir.path());
        generate(dir.path(), &nodes, true).unwrap();
        for path in [
            ca_key_path(dir.path()),
            node_keystore_path(dir.path(), 1),
            node_keystore_path(dir.path(), 2),
            client_key_path(dir.path()),
        ] {
            let mode =
                std::os::unix::fs::PermissionsExt::mode(&path.metadata().unwrap().permissions());
            assert_eq!(mode & 0o777, 0o600, "{}", path.display());
        }
        let keystore = std::fs::read_to_string(node_keystore_path(dir.path(), 2)).unwrap();
        assert!(
            keystore.starts_with("-----BEGIN PRIVATE KEY-----"),
            "PKCS#8"
        );
        assert_eq!(keystore.matches("BEGIN CERTIFICATE").count(), 2);
        // Kept when all there.
        let ca = std::fs::read_to_string(ca_path(dir.path())).unwrap();
        generate(dir.path(), &nodes, true).unwrap();
        assert_eq!(std::fs::read_to_string(ca_path(dir.path())).unwrap(), ca);
        // Node 2's certificate names its address, and the client's files make a client.
        let settings = TlsSettings {
            ca: Some(ca_path(dir.path())),
            client_cert: Some(client_cert_path(dir.path())),
            client_key: Some(client_key_path(dir.path())),
            ..TlsSettings::default()
        };
        assert!(TlsClient::new(&settings).is_ok());
        let yaml = client_encryption_yaml(dir.path(), 2, true);
        assert!(yaml.contains("node2.pem") && yaml.contains("require_client_auth: true"));
        assert!(yaml.contains("optional: false"));
        assert!(!client_encryption_yaml(dir.path(), 1, false).contains("require_client_auth"));
    }
}
