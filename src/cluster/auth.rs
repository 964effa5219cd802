//! Password authentication on a local cluster (`cluster start --auth`): the nodes run
//! Cassandra's `PasswordAuthenticator`, and headroom creates a role of its own whose
//! credentials it keeps in the cluster directory, readable by this user only, so that `run`,
//! `capacity` and `sweep` against that cluster log in without flags.
//!
//! The default superuser (`cassandra`/`cassandra`) only sets the role up: Cassandra creates
//! it a moment after a fresh node answers CQL (the nodes run with
//! `-Dcassandra.superuser_setup_delay_ms=0` instead of the default 10 s), headroom logs in
//! with it once, replicates `system_auth` to every node (up to 3) so that a login survives
//! the loss of one, and creates the role `headroom` with a random password.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{probe, ClusterError, LocalCluster};

/// The role headroom creates and logs in with.
pub const ROLE: &str = "headroom";

/// Cassandra's default superuser, which exists only to create headroom's role.
const DEFAULT_SUPERUSER: (&str, &str) = ("cassandra", "cassandra");

/// A user name and its password. Its `Debug` never shows the password.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    /// The role to log in as.
    pub username: String,
    /// Its password.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

impl Credentials {
    /// User name and password, as a connection logs in with them.
    pub fn user_and_password(&self) -> (&str, &str) {
        (&self.username, &self.password)
    }

    /// As the client takes them.
    pub fn pair(&self) -> (String, String) {
        (self.username.clone(), self.password.clone())
    }
}

/// Where a cluster directory keeps its role's credentials.
pub fn credentials_path(dir: &Path) -> PathBuf {
    dir.join(crate::catalogue::CREDENTIALS_JSON)
}

/// The role's credentials kept in `dir`, if any.
pub fn read(dir: &Path) -> Result<Option<Credentials>, ClusterError> {
    let path = credentials_path(dir);
    let text = match crate::usage::read_bounded_text(&path, crate::usage::MAX_INPUT_FILE_BYTES) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ClusterError::io(format!("reading {}", path.display()))(e)),
    };
    // What kind of error only: serde's message may quote the file, password and all.
    serde_json::from_str(&text).map(Some).map_err(|e| {
        let problem = match e.classify() {
            serde_json::error::Category::Io => "an I/O error",
            serde_json::error::Category::Syntax => "not JSON",
            serde_json::error::Category::Data => "not a user name and password",
            serde_json::error::Category::Eof => "cut short",
        };
        ClusterError::InvalidConfig(format!(
            "{} cannot be read ({problem}): remove it and start the cluster again",
            path.display()
        ))
    })
}

/// Writes the credentials, readable and writable by this user only.
fn write(dir: &Path, credentials: &Credentials) -> Result<(), ClusterError> {
    let text = serde_json::to_string_pretty(credentials).expect("two strings serialize");
    super::write_private_file(&credentials_path(dir), &text)
}

/// A password of 32 letters and digits from the kernel's random source, each of the 62
/// equally likely (bytes from 248 up are drawn again).
fn new_password() -> Result<String, ClusterError> {
    use std::io::Read;
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let io = |e| ClusterError::io("reading /dev/urandom for a password")(e);
    let mut random = std::fs::File::open("/dev/urandom").map_err(&io)?;
    let mut password = String::with_capacity(32);
    let mut bytes = [0u8; 64];
    while password.len() < 32 {
        random.read_exact(&mut bytes).map_err(&io)?;
        for &b in &bytes {
            if b < 248 && password.len() < 32 {
                password.push(ALPHABET[usize::from(b) % ALPHABET.len()] as char);
            }
        }
    }
    Ok(password)
}

/// What the cluster's nodes are logged in with right now: the role's credentials once they
/// exist, Cassandra's default superuser before; `None` without authentication.
pub fn login(cluster: &LocalCluster) -> Option<Credentials> {
    if !cluster.config().auth {
        return None;
    }
    Some(
        read(cluster.dir())
            .ok()
            .flatten()
            .unwrap_or_else(|| Credentials {
                username: DEFAULT_SUPERUSER.0.to_string(),
                password: DEFAULT_SUPERUSER.1.to_string(),
            }),
    )
}

/// Creates headroom's role on a cluster whose nodes all answer, unless the directory
/// already holds its credentials (a cluster started again), and returns them.
pub(super) fn set_up(
    cluster: &LocalCluster,
    timeout: Duration,
) -> Result<Credentials, ClusterError> {
    if let Some(credentials) = read(cluster.dir())? {
        return Ok(credentials);
    }
    let nodes = cluster.contact_points();
    let tls = super::tls::probe_tls(cluster)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ClusterError::io("starting the async runtime"))?;
    let superuser = Credentials {
        username: DEFAULT_SUPERUSER.0.to_string(),
        password: DEFAULT_SUPERUSER.1.to_string(),
    };
    // The default superuser appears shortly after the node answers CQL: try until then.
    let deadline = Instant::now() + timeout;
    let session = loop {
        match runtime.block_on(probe::connect(
            &nodes,
            Duration::from_secs(5),
            Some(superuser.user_and_password()),
            tls.clone(),
        )) {
            Ok(session) => break session,
            Err(e) if Instant::now() >= deadline => {
                return Err(ClusterError::InvalidConfig(format!(
                    "the cluster in {} requires a password, but Cassandra's default superuser \
                     could not log in within {timeout:?} to create headroom's role: {e}",
                    cluster.dir().display()
                )))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(500)),
        }
    };
    let credentials = Credentials {
        username: ROLE.to_string(),
        password: new_password()?,
    };
    let first: SocketAddr = nodes[0];
    // Up to three replicas of the roles in every data centre, so that a node of any data
    // centre finds them there.
    let replication = match cluster.config().dcs {
        1 => format!(
            "'class': 'SimpleStrategy', 'replication_factor': {}",
            cluster.config().nodes.min(3)
        ),
        _ => {
            let each: Vec<String> = cluster
                .config()
                .datacenters()
                .iter()
                .map(|(dc, nodes)| format!("'{dc}': {}", nodes.min(&3)))
                .collect();
            format!("'class': 'NetworkTopologyStrategy', {}", each.join(", "))
        }
    };
    let statements = [
        format!("ALTER KEYSPACE system_auth WITH replication = {{{replication}}}"),
        format!(
            "CREATE ROLE IF NOT EXISTS {ROLE} WITH PASSWORD = '{}' AND LOGIN = true AND \
             SUPERUSER = true",
            credentials.password
        ),
    ];
    for cql in &statements {
        runtime
            .block_on(probe::query_node(&session, first, cql))
            // The statement holds the password: say which step failed, not its text.
            .map_err(|e| {
                ClusterError::InvalidConfig(format!(
                    "setting up headroom's role on the cluster in {}: {}",
                    cluster.dir().display(),
                    e.replace(&credentials.password, "<redacted>")
                ))
            })?;
    }
    write(cluster.dir(), &credentials)?;
    // The role must work before anyone relies on it.
    runtime
        .block_on(probe::connect(
            &nodes,
            Duration::from_secs(10),
            Some(credentials.user_and_password()),
            tls,
        ))
        .map_err(|e| {
            ClusterError::InvalidConfig(format!(
                "headroom's role on the cluster in {} cannot log in: {e}",
                cluster.dir().display()
            ))
        })?;
    Ok(credentials)
}

/// The role's credentials of the local cluster in `dir`, when it requires a password and
/// every one of `hosts` (host:port) is one of its nodes: what a run against that cluster
/// logs in with when no credentials were given.
pub fn credentials_for(dir: &Path, hosts: &[String]) -> Option<Credentials> {
    let cluster = LocalCluster::open(dir).ok()?;
    if !cluster.config().auth || !cluster.serves(hosts) {
        return None;
    }
    read(cluster.dir()).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_kept_for_this_user_only_and_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        let credentials = Credentials {
            username: ROLE.into(),
            password: new_password().unwrap(),
        };
        assert_eq!(credentials.password.len(), 32);
        assert!(credentials
            .password
            .chars()
            .all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(credentials.password, new_password().unwrap());
        write(dir.path(), &credentials).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(credentials.clone()));
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(credentials_path(dir.path()))
                .unwrap()
                .permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        assert!(!format!("{credentials:?}").contains(&credentials.password));
        std::fs::write(credentials_path(dir.path()), "{\"username\": 3}").unwrap();
        let err = read(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a user name and password"), "{err}");
    }
}
