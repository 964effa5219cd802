//! The connection's flags into settings: the local data centre, TLS, and credentials from
//! flags, a file, the environment or the local cluster headroom started. Every error here
//! is the user's input, found before anything connects.

use crate::cli::ConnectionArgs;
use crate::client::tls::{self, TlsClient, TlsSettings};
use crate::results::config::RunSettings;
use crate::usage::UsageError;

/// `--local-dc`, checked for the characters a data centre's name can have.
pub(super) fn local_dc(connection: &ConnectionArgs) -> Result<Option<String>, UsageError> {
    let Some(dc) = &connection.local_dc else {
        return Ok(None);
    };
    let dc = dc.trim();
    if dc.is_empty()
        || dc.len() > 100
        || !dc
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(UsageError::new(format!(
            "--local-dc '{}' is not a data centre name: letters, digits, '_', '-' and '.', as in dc1",
            crate::usage::cut(dc, 60)
        )));
    }
    Ok(Some(dc.to_string()))
}

/// TLS as the flags ask for it, checked: the files are read and parsed (and recorded as
/// absolute paths), a certificate comes with its key, and `--tls-no-verify` goes with no flag
/// it would silence (said as a warning). `None` when no TLS flag is given.
pub fn tls_settings(connection: &ConnectionArgs) -> Result<Option<TlsSettings>, UsageError> {
    let c = connection;
    let any = c.tls
        || c.tls_ca.is_some()
        || c.tls_cert.is_some()
        || c.tls_key.is_some()
        || c.tls_server_name.is_some()
        || c.tls_no_verify;
    if !any {
        return Ok(None);
    }
    match (&c.tls_cert, &c.tls_key) {
        (Some(_), None) => return Err(tls::missing_pair("--tls-cert", "--tls-key")),
        (None, Some(_)) => return Err(tls::missing_pair("--tls-key", "--tls-cert")),
        _ => {}
    }
    if c.tls_no_verify {
        let silenced = [
            ("--tls-ca", c.tls_ca.is_some()),
            ("--tls-server-name", c.tls_server_name.is_some()),
        ];
        if let Some((flag, _)) = silenced.iter().find(|(_, given)| *given) {
            return Err(UsageError::new(format!(
                "--tls-no-verify checks no certificate, so {flag} would do nothing: give one \
                 or the other"
            )));
        }
    }
    let settings = TlsSettings {
        ca: c.tls_ca.clone(),
        client_cert: c.tls_cert.clone(),
        client_key: c.tls_key.clone(),
        server_name: c.tls_server_name.clone(),
        no_verify: c.tls_no_verify,
        from_cluster: None,
    };
    // Reads every file now, so that a bad one is refused before anything connects.
    TlsClient::new(&settings)?;
    if settings.no_verify {
        eprintln!(
            "Warning: --tls-no-verify: the nodes' certificates are not checked; anyone between \
             this machine and the nodes could read and change the traffic"
        );
    }
    let absolute = |path: &Option<std::path::PathBuf>| {
        path.as_ref()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
    };
    Ok(Some(TlsSettings {
        ca: absolute(&settings.ca),
        client_cert: absolute(&settings.client_cert),
        client_key: absolute(&settings.client_key),
        ..settings
    }))
}

/// Gives a run without TLS flags the TLS of the local cluster in `cluster_dir`, when that
/// cluster requires TLS and every one of the run's hosts is one of its nodes (said on the
/// terminal), as [`cluster_credentials`] does for a password.
pub fn with_cluster_tls<M>(config: &mut RunSettings<M>, cluster_dir: &std::path::Path) {
    if config.tls.is_some() {
        return;
    }
    if let Some(found) = crate::cluster::tls::settings_for(cluster_dir, &config.hosts) {
        let client = match &found.client_cert {
            Some(cert) => format!(" and its client certificate {}", cert.display()),
            None => String::new(),
        };
        println!(
            "TLS: the CA of the local cluster in {} ({}){client}, which requires TLS.",
            cluster_dir.display(),
            found.ca.as_deref().unwrap_or(cluster_dir).display()
        );
        config.tls = Some(found);
    }
}

/// User name and password: both or neither. The password comes from --password-file,
/// HEADROOM_PASSWORD or --password (with a warning: other users of the machine can read a
/// command line). Checked before anything connects or is written; the password itself is
/// never part of a message.
pub fn credentials(connection: &ConnectionArgs) -> Result<Option<(String, String)>, UsageError> {
    if let Some(user) = &connection.username {
        if user.trim().is_empty() || user.chars().any(char::is_control) {
            return Err(UsageError::new(
                "--username (or HEADROOM_USERNAME) is empty or holds control characters: give \
                 the role's name, or leave it out for a cluster without authentication",
            ));
        }
    }
    let typed = crate::cli::secret_on_command_line(std::env::args());
    let password = match (&connection.password_file, &connection.password) {
        (Some(_), Some(_)) => {
            let source = if typed {
                "--password"
            } else {
                "HEADROOM_PASSWORD"
            };
            return Err(UsageError::new(format!(
                "--password-file and {source} both give a password: keep one"
            )));
        }
        (Some(path), None) => Some(password_from_file(path)?),
        (None, Some(password)) => {
            if typed {
                eprintln!(
                    "Warning: a password given with --password can be read by other users of \
                     this machine (ps, /proc); use HEADROOM_PASSWORD or --password-file FILE"
                );
            }
            Some(password.clone())
        }
        (None, None) => None,
    };
    match (connection.username.clone(), password) {
        (Some(user), Some(password)) => Ok(Some((user, password))),
        (None, None) => Ok(None),
        (Some(user), None) => Err(UsageError::new(format!(
            "--username {} needs a password: HEADROOM_PASSWORD, --password-file FILE or \
             --password",
            crate::usage::cut(&user, 60)
        ))),
        (None, Some(_)) => Err(UsageError::new(
            "a password was given without --username (or HEADROOM_USERNAME)",
        )),
    }
}

/// The credentials a run logs in with: those given, else the role of the local cluster in
/// `cluster_dir` when that cluster requires a password and every one of `hosts` is one of
/// its nodes (said on the terminal, password aside).
pub fn run_credentials(
    connection: &ConnectionArgs,
    cluster_dir: &std::path::Path,
    hosts: &[String],
) -> Result<Option<(String, String)>, UsageError> {
    Ok(credentials(connection)?.or_else(|| cluster_credentials(cluster_dir, hosts)))
}

/// The role of the local cluster in `cluster_dir`, when it requires a password and every
/// one of `hosts` is one of its nodes; said on the terminal (password aside).
pub fn cluster_credentials(
    cluster_dir: &std::path::Path,
    hosts: &[String],
) -> Option<(String, String)> {
    crate::cluster::auth::credentials_for(cluster_dir, hosts).map(|found| {
        println!(
            "Credentials: the role {} of the local cluster in {}, which requires a password.",
            found.username,
            cluster_dir.display()
        );
        found.pair()
    })
}

/// The local cluster `headroom cluster` uses: `HEADROOM_CLUSTER_DIR`, else the default.
pub fn local_cluster_dir() -> std::path::PathBuf {
    std::env::var_os("HEADROOM_CLUSTER_DIR")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(crate::cluster::default_dir)
}

/// The first line of a password file, without its line end.
fn password_from_file(path: &std::path::Path) -> Result<String, UsageError> {
    let text = crate::usage::read_input_file(path, "--password-file")?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        return Err(UsageError::new(format!(
            "--password-file {}: its first line is empty; it should hold the password",
            path.display()
        )));
    }
    Ok(line.to_string())
}
