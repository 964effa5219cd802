//! TLS on the client's connections, for both senders: what the user asked for
//! ([`TlsSettings`], recorded in config.json: paths and flags, never a key), the rustls
//! configuration built from it ([`TlsClient`]), the two certificate verifiers rustls does not
//! ship (a server name other than the node's address, and no verification at all), and the
//! classification of a failed handshake into a cause the user can act on ([`explain`]).
//!
//! The driver always checks a node's certificate against the node's IP address, so a
//! `--tls-server-name` is enforced by the verifier, which ignores the name it is handed and
//! checks the one given instead; the native sender uses the same configuration.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use serde::{Deserialize, Serialize};

use crate::usage::UsageError;

/// TLS as asked for: which certificates to trust, which to present, and how to check the
/// node's. Recorded in config.json: paths and flags only, never the contents of a key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsSettings {
    /// PEM file of the CA certificates to trust (`--tls-ca`); the system's root certificates
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<PathBuf>,
    /// PEM file of the client's certificate chain (`--tls-cert`), for mutual TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<PathBuf>,
    /// PEM file of the client certificate's private key (`--tls-key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<PathBuf>,
    /// The name the nodes' certificates are checked for (`--tls-server-name`), instead of
    /// each node's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// `--tls-no-verify`: the nodes' certificates are not checked at all.
    #[serde(default)]
    pub no_verify: bool,
    /// The local cluster directory these settings were found in, when no TLS flag was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_cluster: Option<PathBuf>,
}

/// A rustls client configuration built from [`TlsSettings`], shared by every connection.
#[derive(Clone)]
pub struct TlsClient {
    config: Arc<rustls::ClientConfig>,
    /// The configuration's verifier of the nodes' certificates (the tests call it directly).
    #[cfg_attr(not(test), allow(dead_code))]
    verifier: Arc<dyn ServerCertVerifier>,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient").finish_non_exhaustive()
    }
}

impl TlsClient {
    /// Reads the files `settings` names and builds the configuration; every error names the
    /// flag and the file.
    pub fn new(settings: &TlsSettings) -> Result<TlsClient, UsageError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let server_name = settings
            .server_name
            .as_deref()
            .map(parse_server_name)
            .transpose()?;
        let verifier: Arc<dyn ServerCertVerifier> = if settings.no_verify {
            Arc::new(NoVerification {
                provider: provider.clone(),
            })
        } else {
            let roots = match &settings.ca {
                Some(path) => roots_from_file(path)?,
                None => system_roots()?,
            };
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| UsageError::new(format!("TLS: cannot check certificates: {e}")))?;
            match server_name {
                Some(name) => Arc::new(VerifyForName {
                    inner: webpki,
                    name,
                }),
                None => webpki,
            }
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| UsageError::new(format!("TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone());
        let config = match (&settings.client_cert, &settings.client_key) {
            (Some(cert), Some(key)) => {
                let chain = certificates_from_file(cert, "--tls-cert")?;
                let key_der = private_key_from_file(key)?;
                builder.with_client_auth_cert(chain, key_der).map_err(|e| {
                    UsageError::new(format!(
                        "--tls-cert {} and --tls-key {} cannot be used together: {e}",
                        cert.display(),
                        key.display()
                    ))
                })?
            }
            (None, None) => builder.with_no_client_auth(),
            (Some(_), None) => return Err(missing_pair("--tls-cert", "--tls-key")),
            (None, Some(_)) => return Err(missing_pair("--tls-key", "--tls-cert")),
        };
        Ok(TlsClient {
            config: Arc::new(config),
            verifier,
        })
    }

    /// Why a connection to `host` (host:port) over this configuration fails, as rustls or
    /// the node tells it: the handshake, then a first request (OPTIONS), which is where a
    /// node that wanted a client certificate says so under TLS 1.3. `None` when it answers.
    /// Asked after the driver failed with a reason that names no cause.
    pub async fn first_failure(&self, host: &str, timeout: Duration) -> Option<String> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let attempt = async {
            let address = tokio::net::lookup_host(host).await.ok()?.next()?;
            let socket = tokio::net::TcpStream::connect(address).await.ok()?;
            let mut stream = match self.connect(address, socket).await {
                Ok(stream) => stream,
                Err(e) => return Some(e.to_string()),
            };
            // OPTIONS, protocol v4, stream 0, no body. A node that ends the connection
            // here took the handshake but not the client (its certificate, or none).
            let options = [0x04, 0, 0, 0, 0x05, 0, 0, 0, 0];
            let mut header = [0u8; 9];
            let answered = match stream.write_all(&options).await {
                Ok(()) => stream.read_exact(&mut header).await.map(|_| ()),
                Err(e) => Err(e),
            };
            answered
                .err()
                .map(|e| format!("{CLOSED_AFTER_HANDSHAKE} ({e})"))
        };
        tokio::time::timeout(timeout, attempt).await.ok().flatten()
    }

    /// The configuration, as the driver and tokio-rustls take it.
    pub fn config(&self) -> Arc<rustls::ClientConfig> {
        self.config.clone()
    }

    /// Opens TLS over `socket` to the node at `address`. The name handed to rustls is the
    /// node's address; a `--tls-server-name` is enforced by the verifier.
    pub async fn connect(
        &self,
        address: SocketAddr,
        socket: tokio::net::TcpStream,
    ) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
        tokio_rustls::TlsConnector::from(self.config.clone())
            .connect(ServerName::IpAddress(address.ip().into()), socket)
            .await
    }
}

/// What [`TlsClient::first_failure`] says of a node that closed the connection right after
/// the handshake: what Cassandra does to a client without the certificate it requires.
const CLOSED_AFTER_HANDSHAKE: &str = "the node closed the connection after the TLS handshake";

/// `--tls-cert` without `--tls-key` or the other way round.
pub fn missing_pair(given: &str, missing: &str) -> UsageError {
    UsageError::new(format!(
        "{given} needs {missing}: a client certificate and its private key go together \
         (give --tls-cert FILE --tls-key FILE, or neither)"
    ))
}

/// A `--tls-server-name` as rustls checks it: a DNS name or an IP address.
fn parse_server_name(name: &str) -> Result<ServerName<'static>, UsageError> {
    ServerName::try_from(name.to_string()).map_err(|_| {
        UsageError::new(format!(
            "--tls-server-name '{}' is not a DNS name or an IP address",
            crate::usage::cut(name, 80)
        ))
    })
}

/// The certificates of a PEM file; an error when it holds none.
fn certificates_from_file(
    path: &Path,
    flag: &str,
) -> Result<Vec<CertificateDer<'static>>, UsageError> {
    let text = crate::usage::read_input_file(path, flag)?;
    let certificates = CertificateDer::pem_slice_iter(text.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            UsageError::new(format!(
                "{flag} {}: not a readable PEM file ({e})",
                path.display()
            ))
        })?;
    if certificates.is_empty() {
        return Err(UsageError::new(format!(
            "{flag} {} holds no certificate: give a PEM file with -----BEGIN CERTIFICATE----- blocks",
            path.display()
        )));
    }
    Ok(certificates)
}

/// The trust roots of a `--tls-ca` file.
fn roots_from_file(path: &Path) -> Result<RootCertStore, UsageError> {
    let mut roots = RootCertStore::empty();
    for certificate in certificates_from_file(path, "--tls-ca")? {
        roots.add(certificate).map_err(|e| {
            UsageError::new(format!(
                "--tls-ca {}: a certificate cannot be used as a CA ({e})",
                path.display()
            ))
        })?;
    }
    Ok(roots)
}

/// The system's root certificates, for `--tls` without `--tls-ca`.
fn system_roots() -> Result<RootCertStore, UsageError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        return Err(UsageError::new(
            "--tls: this system has no root certificates to check the nodes' against: give \
             the CA that signed them with --tls-ca FILE",
        ));
    }
    Ok(roots)
}

/// The private key of a `--tls-key` file.
fn private_key_from_file(path: &Path) -> Result<PrivateKeyDer<'static>, UsageError> {
    let text = crate::usage::read_input_file(path, "--tls-key")?;
    PrivateKeyDer::from_pem_slice(text.as_bytes()).map_err(|e| {
        let why = match e {
            rustls::pki_types::pem::Error::NoItemsFound => {
                "holds no private key: give a PEM file with a -----BEGIN PRIVATE KEY----- block"
                    .to_string()
            }
            other => format!("is not a readable PEM private key ({other})"),
        };
        UsageError::new(format!("--tls-key {} {why}", path.display()))
    })
}

/// Checks the node's certificate for a given name instead of the name the connection
/// hands over (the node's address, with the driver).
#[derive(Debug)]
struct VerifyForName {
    inner: Arc<WebPkiServerVerifier>,
    name: ServerName<'static>,
}

impl ServerCertVerifier for VerifyForName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, &self.name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// `--tls-no-verify`: any certificate chain is accepted, but the handshake's signatures are
/// still checked (the node must hold the key of the certificate it shows).
#[derive(Debug)]
struct NoVerification {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// What a failed connection's `reason` (the driver's or the native sender's text) says
/// about TLS, as one clause naming the cause and the flag to use; `None` when it is not a
/// TLS problem it recognises. `settings` is the TLS the client used.
pub fn explain(reason: &str, settings: &TlsSettings) -> Option<String> {
    let lower = reason.to_ascii_lowercase();
    let no_check = "or --tls-no-verify to skip the check";
    // A CA of the same name as the one that signed, but another key: a bad signature.
    let other_ca = [
        "unknownissuer",
        "unknown issuer",
        "certificate: badsignature",
    ];
    if other_ca.iter().any(|text| lower.contains(text)) {
        return Some(match &settings.ca {
            Some(ca) => format!(
                "TLS: the node's certificate is not signed by the CA in --tls-ca {}: give \
                 the CA that signed it with --tls-ca FILE ({no_check})",
                ca.display()
            ),
            None => format!(
                "TLS: the node's certificate is not signed by a CA among this system's root \
                 certificates: give the CA that signed it with --tls-ca FILE ({no_check})"
            ),
        });
    }
    if lower.contains("not valid for name") || lower.contains("notvalidforname") {
        let names = presented_names(reason);
        let presented = if names.is_empty() {
            String::new()
        } else {
            format!(" (it is valid for {})", names.join(", "))
        };
        return Some(match &settings.server_name {
            Some(name) => format!(
                "TLS: the node's certificate is not valid for --tls-server-name {name}{presented}: \
                 give a name the certificate holds"
            ),
            None => format!(
                "TLS: the node's certificate is not valid for the node's address{presented}: \
                 give --tls-server-name NAME with a name it holds"
            ),
        });
    }
    if lower.contains("certificate expired") || lower.contains("invalid peer certificate: expired")
    {
        return Some(format!(
            "TLS: the node's certificate has expired: the node needs a new one ({no_check})"
        ));
    }
    if lower.contains("not valid yet") || lower.contains("notvalidyet") {
        return Some(format!(
            "TLS: the node's certificate is not valid yet (is this machine's clock right?) \
             ({no_check})"
        ));
    }
    if lower.contains("invalidcontenttype") || lower.contains("corrupt message") {
        return Some(
            "TLS: the node does not speak TLS on this port: leave out the --tls flags".into(),
        );
    }
    let client_refused = lower.contains("certificaterequired")
        || lower.contains("certificate_required")
        || lower.contains("badcertificate")
        || lower.contains("unknownca")
        || lower.contains("handshakefailure")
        || lower.contains("frame header")
        || lower.contains(&CLOSED_AFTER_HANDSHAKE.to_ascii_lowercase());
    if client_refused {
        return Some(match &settings.client_cert {
            None => "TLS: the node requires a client certificate: give --tls-cert FILE and \
                     --tls-key FILE"
                .into(),
            Some(cert) => format!(
                "TLS: the node refused the client certificate in --tls-cert {}: give one \
                 signed by a CA the node trusts",
                cert.display()
            ),
        });
    }
    None
}

/// The names a certificate holds, as rustls lists them in its error ("is only valid for
/// IpAddress(127.0.0.1) or DnsName(\"db.example\")").
fn presented_names(reason: &str) -> Vec<String> {
    let Some((_, list)) = reason.split_once("is only valid for ") else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for (prefix, end) in [("IpAddress(", ")"), ("DnsName(\"", "\")")] {
        let mut rest = list;
        while let Some(at) = rest.find(prefix) {
            rest = &rest[at + prefix.len()..];
            if let Some(stop) = rest.find(end) {
                names.push(rest[..stop].to_string());
                rest = &rest[stop..];
            }
        }
    }
    names
}

/// What to say when a client without TLS could not connect and the node speaks TLS.
pub const NODE_REQUIRES_TLS: &str = "the node requires TLS: give --tls-ca FILE (the CA that \
    signed its certificate), or --tls when a CA among this system's root certificates signed it";

/// Whether the node at `host` (host:port) completes a TLS handshake within `timeout`:
/// asked after a client without TLS failed to connect, to tell why.
pub async fn speaks_tls(host: &str, timeout: Duration) -> bool {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let Ok(builder) = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
    else {
        return false;
    };
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(NoVerification { provider }))
        .with_no_client_auth();
    let attempt = async {
        let address = tokio::net::lookup_host(host).await.ok()?.next()?;
        let socket = tokio::net::TcpStream::connect(address).await.ok()?;
        let name = ServerName::IpAddress(address.ip().into());
        tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, socket)
            .await
            .ok()
    };
    matches!(tokio::time::timeout(timeout, attempt).await, Ok(Some(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A self-signed CA and a certificate it signed for `names`, as PEM:
    /// (CA certificate, leaf certificate, leaf key).
    fn ca_and_leaf(names: &[&str]) -> (String, String, String) {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = rcgen::CertifiedIssuer::self_signed(params, ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let leaf = rcgen::CertificateParams::new(names)
            .unwrap()
            .signed_by(&leaf_key, &ca)
            .unwrap();
        (ca.pem(), leaf.pem(), leaf_key.serialize_pem())
    }

    fn error(settings: &TlsSettings) -> String {
        TlsClient::new(settings).unwrap_err().to_string()
    }

    #[test]
    fn files_that_cannot_work_are_refused_naming_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let (ca, leaf, key) = ca_and_leaf(&["127.0.0.1"]);
        let ca = write(dir.path(), "ca.pem", &ca);
        let leaf = write(dir.path(), "leaf.pem", &leaf);
        let key = write(dir.path(), "key.pem", &key);
        let garbage = write(dir.path(), "garbage.pem", "not a certificate\n");
        let missing = dir.path().join("missing.pem");
        let with_ca = |ca: &Path| TlsSettings {
            ca: Some(ca.to_path_buf()),
            ..TlsSettings::default()
        };
        assert!(TlsClient::new(&with_ca(&ca)).is_ok());
        let e = error(&with_ca(&missing));
        assert!(
            e.starts_with("cannot read --tls-ca") && e.contains("missing.pem"),
            "{e}"
        );
        let e = error(&with_ca(&garbage));
        assert!(
            e.contains("--tls-ca") && e.contains("holds no certificate"),
            "{e}"
        );
        // A key where a certificate should be.
        let e = error(&with_ca(&key));
        assert!(e.contains("holds no certificate"), "{e}");

        let mutual = |cert: &Path, key: &Path| TlsSettings {
            client_cert: Some(cert.to_path_buf()),
            client_key: Some(key.to_path_buf()),
            ..with_ca(&ca)
        };
        assert!(TlsClient::new(&mutual(&leaf, &key)).is_ok());
        let e = error(&mutual(&leaf, &leaf));
        assert!(
            e.contains("--tls-key") && e.contains("holds no private key"),
            "{e}"
        );
        let e = error(&mutual(&key, &key));
        assert!(
            e.contains("--tls-cert") && e.contains("holds no certificate"),
            "{e}"
        );
        let e = error(&TlsSettings {
            client_key: None,
            ..mutual(&leaf, &key)
        });
        assert!(e.starts_with("--tls-cert needs --tls-key"), "{e}");
        let e = error(&TlsSettings {
            server_name: Some("bad name!".into()),
            ..with_ca(&ca)
        });
        assert!(e.contains("--tls-server-name 'bad name!'"), "{e}");
    }

    /// The verifiers against certificates made here: the CA, the name (or address), and
    /// expiry are all checked, and `--tls-no-verify` skips them.
    #[test]
    fn the_node_certificate_is_checked_for_the_given_name_or_not_at_all() {
        let (ca_pem, leaf_pem, _) = ca_and_leaf(&["127.0.0.9", "db.example"]);
        let dir = tempfile::tempdir().unwrap();
        let ca = write(dir.path(), "ca.pem", &ca_pem);
        let leaf = CertificateDer::from_pem_slice(leaf_pem.as_bytes()).unwrap();
        let verify = |settings: &TlsSettings, name: &str| {
            let client = TlsClient::new(settings).unwrap();
            let name = ServerName::try_from(name.to_string()).unwrap();
            client
                .verifier
                .verify_server_cert(&leaf, &[], &name, &[], UnixTime::now())
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let trusting = TlsSettings {
            ca: Some(ca.clone()),
            ..TlsSettings::default()
        };
        assert_eq!(verify(&trusting, "127.0.0.9"), Ok(()));
        let wrong_address = verify(&trusting, "127.0.0.8").unwrap_err();
        let told = explain(&wrong_address, &trusting).unwrap();
        assert!(told.contains("--tls-server-name NAME"), "{told}");
        // The name given replaces the address the connection hands over.
        let named = |name: &str| TlsSettings {
            server_name: Some(name.into()),
            ..trusting.clone()
        };
        assert_eq!(verify(&named("db.example"), "127.0.0.8"), Ok(()));
        let wrong_name = verify(&named("wrong.example"), "127.0.0.9").unwrap_err();
        let told = explain(&wrong_name, &named("wrong.example")).unwrap();
        assert!(
            told.contains("not valid for --tls-server-name wrong.example")
                && told.contains("db.example"),
            "{told}"
        );
        // Another CA.
        let (other_ca, _, _) = ca_and_leaf(&["127.0.0.9"]);
        let other = TlsSettings {
            ca: Some(write(dir.path(), "other.pem", &other_ca)),
            ..TlsSettings::default()
        };
        let unknown = verify(&other, "127.0.0.9").unwrap_err();
        let told = explain(&unknown, &other).expect(&unknown);
        assert!(told.contains("not signed by the CA in --tls-ca"), "{told}");
        // No verification: any chain, any name.
        let unchecked = TlsSettings {
            no_verify: true,
            ..TlsSettings::default()
        };
        assert_eq!(verify(&unchecked, "elsewhere.example"), Ok(()));

        // An expired certificate.
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let old_ca = rcgen::CertifiedIssuer::self_signed(params, ca_key).unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["127.0.0.9".to_string()]).unwrap();
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(2001, 1, 1);
        let expired = params
            .signed_by(&rcgen::KeyPair::generate().unwrap(), &old_ca)
            .unwrap();
        let old = TlsSettings {
            ca: Some(write(dir.path(), "old.pem", &old_ca.pem())),
            ..TlsSettings::default()
        };
        let client = TlsClient::new(&old).unwrap();
        let reason = client
            .verifier
            .verify_server_cert(
                expired.der(),
                &[],
                &ServerName::try_from("127.0.0.9").unwrap(),
                &[],
                UnixTime::now(),
            )
            .unwrap_err()
            .to_string();
        let told = explain(&reason, &old).unwrap();
        assert!(told.contains("has expired"), "{reason} -> {told}");
    }

    #[test]
    fn handshake_failures_name_the_cause_and_the_flag() {
        let plain = TlsSettings::default();
        let told = explain("Connection broken: Failed to read the frame header", &plain).unwrap();
        assert!(
            told.contains("give --tls-cert FILE and --tls-key FILE"),
            "{told}"
        );
        let mutual = TlsSettings {
            client_cert: Some("/c.pem".into()),
            client_key: Some("/k.pem".into()),
            ..plain.clone()
        };
        let told = explain(CLOSED_AFTER_HANDSHAKE, &plain).unwrap();
        assert!(told.contains("requires a client certificate"), "{told}");
        let told = explain("received fatal alert: BadCertificate", &mutual).unwrap();
        assert!(told.contains("refused the client certificate in --tls-cert /c.pem"));
        let told = explain(
            "received corrupt message of type InvalidContentType",
            &plain,
        )
        .unwrap();
        assert!(told.contains("does not speak TLS"), "{told}");
        assert_eq!(explain("Connection refused (os error 111)", &plain), None);
    }

    #[test]
    fn settings_read_back_and_hold_no_key() {
        let settings = TlsSettings {
            ca: Some("/x/ca.pem".into()),
            no_verify: false,
            ..TlsSettings::default()
        };
        let json = serde_json::to_string(&settings).unwrap();
        assert_eq!(json, r#"{"ca":"/x/ca.pem","no_verify":false}"#);
        let back: TlsSettings = serde_json::from_str(&json).unwrap();
        assert_eq!(back, settings);
        let empty: TlsSettings = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, TlsSettings::default());
    }
}
