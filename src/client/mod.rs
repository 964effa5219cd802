//! The CQL session a run sends its load through: prepared statements, token-aware routing,
//! a client-side request timeout, and no retries (a retried request hides latency; a failed
//! request is data). The load's own statements ([`for_the_engine`]) leave the timeout to the
//! engine, which keeps one timer for all its requests instead of one per request.

pub mod answer;
pub mod native;
pub mod open_files;
pub mod probe;
pub mod tls;

use std::net::{Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::client::PoolSize;
use scylla::policies::load_balancing::DefaultPolicy;
use scylla::policies::retry::FallthroughRetryPolicy;
use scylla::statement::prepared::PreparedStatement;

/// How long connecting may take before the contact points count as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why no session could be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// A contact point that is not host:port.
    #[error("--hosts '{host}' is not a host or host:port{hint}")]
    BadHost {
        /// The entry as given (cut short when long).
        host: String,
        /// What is wrong with it, from ": " on.
        hint: String,
    },
    /// No contact point answered.
    #[error("cannot connect to {hosts}: {reason}. Is Cassandra running there? (`headroom cluster start` starts a local node)")]
    Unreachable {
        /// The contact points.
        hosts: String,
        /// The driver's reason.
        reason: String,
    },
    /// A contact point answered, but not as a CQL server.
    #[error("cannot connect to {hosts}: {reason}")]
    NotCql {
        /// The contact points.
        hosts: String,
        /// What answered, and what to give instead.
        reason: String,
    },
    /// `--local-dc` names no data centre of the cluster.
    #[error("--local-dc {given}: the cluster has no such data centre; its data centres: {known}")]
    UnknownDatacenter {
        /// The name given.
        given: String,
        /// The cluster's data centres, comma-separated.
        known: String,
    },
    /// The cluster has several data centres and the contact points are in none the driver
    /// knows.
    #[error("{hosts}: the cluster has data centres {known} and none of the contact points is a node of them; give --local-dc NAME")]
    AmbiguousDatacenter {
        /// The contact points.
        hosts: String,
        /// The cluster's data centres, comma-separated.
        known: String,
    },
    /// The cluster requires a user name and password.
    #[error("{hosts} requires authentication: {reason}. Give --username (or HEADROOM_USERNAME) and the password: HEADROOM_PASSWORD, --password-file FILE or --password")]
    Authentication {
        /// The contact points.
        hosts: String,
        /// The server's message.
        reason: String,
    },
    /// TLS could not be set up: the node's certificate, the client's, or TLS on one side
    /// only.
    #[error("cannot connect to {hosts}: {cause}")]
    Tls {
        /// The contact points.
        hosts: String,
        /// The cause and the flag to use (see [`tls::explain`]).
        cause: String,
    },
}

/// Contact points as given: `host` (port 9042) or `host:port`; an IPv6 address in
/// brackets, `[::1]` or `[::1]:9042`, with its interface when link-local (`[fe80::1%eth0]`).
pub fn parse_hosts(hosts: &[String]) -> Result<Vec<String>, ConnectError> {
    hosts.iter().map(|h| parse_host(h.trim())).collect()
}

/// One contact point, with the default port added when it has none.
fn parse_host(h: &str) -> Result<String, ConnectError> {
    let bad = |hint: &str| ConnectError::BadHost {
        host: crate::usage::cut(h, 80),
        hint: hint.to_string(),
    };
    // Digits only (`u16::from_str` takes a leading `+`); 0 is no port a node listens on.
    let port_ok =
        |p: &str| p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|p| p > 0);
    if h.is_empty() {
        return Err(bad(": an entry is empty (two commas, or one at an end)"));
    }
    if let Some(rest) = h.strip_prefix('[') {
        let (address, after) = rest
            .split_once(']')
            .ok_or_else(|| bad(": the ']' after the IPv6 address is missing"))?;
        // A link-local address may name its interface: `[fe80::1%2]`, `[fe80::1%eth0]`.
        let (ip, scope) = match address.split_once('%') {
            Some((ip, scope)) => (ip, Some(scope)),
            None => (address, None),
        };
        if ip.parse::<Ipv6Addr>().is_err() {
            return Err(bad(": the address in brackets is not an IPv6 address"));
        }
        let scope_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
        if !scope.is_none_or(|s| !s.is_empty() && s.chars().all(scope_char)) {
            return Err(bad(": the interface after '%' is not a name or number"));
        }
        return match after {
            "" => Ok(format!("[{address}]:9042")),
            _ => match after.strip_prefix(':') {
                Some(port) if port_ok(port) => Ok(h.to_string()),
                _ => Err(bad(
                    ": the port after ']:' must be a number from 1 to 65535",
                )),
            },
        };
    }
    if h.parse::<Ipv6Addr>().is_ok() {
        return Err(bad(&format!(
            ": an IPv6 address goes in brackets, as in [{h}] or [{h}]:9042"
        )));
    }
    let (host, port) = match h.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (h, None),
    };
    let name_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !name_ok {
        return Err(bad(
            ": a host is a name or an address (letters, digits, '.', '-')",
        ));
    }
    match port {
        None => Ok(format!("{h}:9042")),
        Some(p) if port_ok(p) => Ok(h.to_string()),
        Some(_) => Err(bad(": the port must be a number from 1 to 65535")),
    }
}

/// Settings of the session.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Contact points, host:port.
    pub hosts: Vec<String>,
    /// Client-side timeout of one request.
    pub request_timeout: Duration,
    /// Connections per node.
    pub connections: usize,
    /// User name and password.
    pub credentials: Option<(String, String)>,
    /// The data centre requests go to (`--local-dc`); the contact points' when None.
    pub local_dc: Option<String>,
    /// TLS, when the nodes are reached over it.
    pub tls: Option<tls::TlsSettings>,
}

/// Readies a workload's statement for the engine: no retries (a retried request hides
/// latency; a failed one is data), and no driver timeout, since the engine times each
/// request out itself (`EngineConfig::request_timeout`). Statements sent any other way keep
/// the session's timeout.
pub fn for_the_engine(session: &Session, statement: &mut PreparedStatement) {
    statement.set_is_idempotent(false);
    let untimed = session
        .get_default_execution_profile_handle()
        .pointee_to_builder()
        .request_timeout(None)
        .build()
        .into_handle();
    statement.set_execution_profile_handle(Some(untimed));
}

/// The names of the cluster's data centres, sorted.
pub fn datacenters(session: &Session) -> Vec<String> {
    let mut known: Vec<String> = session
        .get_cluster_state()
        .get_nodes_info()
        .iter()
        .filter_map(|n| n.datacenter.clone())
        .collect();
    known.sort_unstable();
    known.dedup();
    known
}

/// The data centre requests go to: `config.local_dc` when it is one of the cluster's, else the
/// data centre of the first contact point that is a node of the cluster (the only one when
/// the cluster has one). None when the nodes tell no data centre.
pub fn local_datacenter(
    session: &Session,
    config: &ClientConfig,
) -> Result<Option<String>, ConnectError> {
    let cluster = session.get_cluster_state();
    let nodes = cluster.get_nodes_info();
    let known = datacenters(session);
    if let Some(given) = &config.local_dc {
        if known.contains(given) {
            return Ok(Some(given.clone()));
        }
        return Err(ConnectError::UnknownDatacenter {
            given: given.clone(),
            known: known.join(", "),
        });
    }
    if known.len() <= 1 {
        return Ok(known.first().cloned());
    }
    let contact_points: Vec<SocketAddr> = config
        .hosts
        .iter()
        .filter_map(|h| h.to_socket_addrs().ok())
        .flatten()
        .collect();
    for point in &contact_points {
        let node = nodes
            .iter()
            .find(|n| n.address.ip() == point.ip() && n.address.port() == point.port());
        if let Some(dc) = node.and_then(|n| n.datacenter.clone()) {
            return Ok(Some(dc));
        }
    }
    Err(ConnectError::AmbiguousDatacenter {
        hosts: config.hosts.join(", "),
        known: known.join(", "),
    })
}

/// Opens a session whose requests go only to the nodes of the local data centre
/// ([`local_datacenter`]); fails within [`CONNECT_TIMEOUT`] when no contact point answers.
pub async fn connect(config: &ClientConfig) -> Result<Arc<Session>, ConnectError> {
    let profile = ExecutionProfile::builder()
        .request_timeout(Some(config.request_timeout))
        .retry_policy(Arc::new(FallthroughRetryPolicy))
        .build();
    let mut builder = SessionBuilder::new()
        .known_nodes(&config.hosts)
        .connection_timeout(CONNECT_TIMEOUT)
        .default_execution_profile_handle(profile.into_handle())
        // The engine hands a burst's requests to the driver in one go, so the connection's
        // writer finds them all queued; the driver's coalescing would only add a yield (and
        // its delay) before every write.
        .write_coalescing(false)
        .pool_size(PoolSize::PerHost(
            config.connections.max(1).try_into().expect("at least one"),
        ));
    if let Some((user, password)) = &config.credentials {
        builder = builder.user(user, password);
    }
    let hosts = config.hosts.join(", ");
    if let Some(settings) = &config.tls {
        let client = tls::TlsClient::new(settings).map_err(|e| ConnectError::Tls {
            hosts: hosts.clone(),
            cause: e.to_string(),
        })?;
        builder = builder.tls_context(Some(client.config()));
    }
    let session =
        match tokio::time::timeout(CONNECT_TIMEOUT + Duration::from_secs(1), builder.build()).await
        {
            Ok(Ok(session)) => session,
            Ok(Err(e)) => return Err(classify(format!("{e}"), config).await),
            Err(_) => {
                return Err(match first_not_cql(config).await {
                    Some(reason) => ConnectError::NotCql { hosts, reason },
                    None => ConnectError::Unreachable {
                        hosts,
                        reason: format!("no answer within {CONNECT_TIMEOUT:?}"),
                    },
                });
            }
        };
    if let Some(dc) = local_datacenter(&session, config)? {
        let mut handle = session.get_default_execution_profile_handle().clone();
        let local = handle
            .pointee_to_builder()
            .load_balancing_policy(
                DefaultPolicy::builder()
                    .prefer_datacenter(dc)
                    .permit_dc_failover(false)
                    .build(),
            )
            .build();
        handle.map_to_another_profile(local);
    }
    Ok(Arc::new(session))
}

/// Why connecting failed, from the driver's `reason`: credentials, TLS (a certificate, or TLS
/// on one side only), or else an unreachable node.
async fn classify(reason: String, config: &ClientConfig) -> ConnectError {
    let hosts = config.hosts.join(", ");
    let lower = reason.to_ascii_lowercase();
    if lower.contains("authenticat") || lower.contains("credentials") {
        return ConnectError::Authentication { hosts, reason };
    }
    if let Some(settings) = &config.tls {
        if let Some(cause) = tls::explain(&reason, settings) {
            return ConnectError::Tls { hosts, cause };
        }
        // The driver's reason may name no cause ("connection broken"): ask the first node.
        if let (Ok(client), Some(host)) = (tls::TlsClient::new(settings), config.hosts.first()) {
            if let Some(cause) = client
                .first_failure(host, Duration::from_secs(2))
                .await
                .and_then(|failure| tls::explain(&failure, settings))
            {
                return ConnectError::Tls { hosts, cause };
            }
        }
    }
    if config.tls.is_none() && !lower.contains("refused") {
        for host in &config.hosts {
            if tls::speaks_tls(host, Duration::from_secs(2)).await {
                return ConnectError::Tls {
                    hosts,
                    cause: tls::NODE_REQUIRES_TLS.to_string(),
                };
            }
        }
    }
    match first_not_cql(config).await {
        Some(reason) => ConnectError::NotCql { hosts, reason },
        None => ConnectError::Unreachable { hosts, reason },
    }
}

/// The first contact point that answers in another protocol than CQL, said why.
async fn first_not_cql(config: &ClientConfig) -> Option<String> {
    if config.tls.is_some() {
        return None;
    }
    for host in &config.hosts {
        if let Some(why) = probe::not_cql(host, Duration::from_secs(2)).await {
            return Some(why);
        }
    }
    None
}

impl crate::usage::Blame for ConnectError {
    fn is_usage_error(&self) -> bool {
        // An unreachable contact point or missing credentials: the command line is wrong.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_get_the_default_port() {
        let hosts = parse_hosts(&[
            "127.0.0.1".into(),
            "127.0.0.2:19042".into(),
            "db.example".into(),
        ])
        .unwrap();
        assert_eq!(
            hosts,
            ["127.0.0.1:9042", "127.0.0.2:19042", "db.example:9042"]
        );
        assert!(parse_hosts(&["127.0.0.1:port".into()]).is_err());
        assert!(parse_hosts(&["".into()]).is_err());
    }

    #[test]
    fn ipv6_goes_in_brackets_and_bad_entries_say_why() {
        let hosts = parse_hosts(&["[::1]".into(), "[::1]:19042".into()]).unwrap();
        assert_eq!(hosts, ["[::1]:9042", "[::1]:19042"]);
        for (entry, expected) in [
            (
                "::1",
                "an IPv6 address goes in brackets, as in [::1] or [::1]:9042",
            ),
            ("fe80::1", "as in [fe80::1]"),
            ("[::1", "']' after the IPv6 address is missing"),
            ("[nope]", "not an IPv6 address"),
            ("[::1]:0", "from 1 to 65535"),
            ("h:70000", "from 1 to 65535"),
            ("a b", "a name or an address"),
            ("h;drop", "a name or an address"),
            (":9042", "a name or an address"),
        ] {
            let e = parse_hosts(&[entry.into()]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--hosts '{entry}'")), "{e}");
            assert!(e.contains(expected), "{entry}: {e}");
        }
        let long = "x".repeat(300);
        assert!(
            parse_hosts(&[format!("{long}:port")])
                .unwrap_err()
                .to_string()
                .len()
                < 300
        );
    }

    #[test]
    fn ipv6_addresses_go_in_brackets() {
        let hosts = parse_hosts(&[
            "[::1]".into(),
            " [fe80::1]:19042 ".into(),
            "[fe80::1%2]".into(),
            "[fe80::1%eth0]:9042".into(),
        ])
        .unwrap();
        assert_eq!(
            hosts,
            [
                "[::1]:9042",
                "[fe80::1]:19042",
                "[fe80::1%2]:9042",
                "[fe80::1%eth0]:9042"
            ]
        );
        assert!(parse_hosts(&["::1".into()]).is_err());
    }

    /// Contact points that no driver can connect to were accepted: an unclosed bracket, text
    /// after the bracket, several colons, port 0, spaces or slashes in the name.
    #[test]
    fn hosts_that_cannot_work_are_refused() {
        for host in [
            "[::1",
            "[::1]x",
            "[::1]:",
            "[not-an-address]",
            "1:2:3:4:5:6:7:8",
            "a:b:9042",
            "host:0",
            "host:",
            ":9042",
            "host:65536",
            "db host",
            "db\thost",
            "db/1",
            "host:+9042",
            // Found by fuzzing: the interface after % was not checked.
            "[::%\n]",
            "[fe80::1%]",
        ] {
            let e = parse_hosts(&[host.into()]).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("--hosts '{host}' is not a host or host:port: ")),
                "{e}"
            );
        }
    }
}
