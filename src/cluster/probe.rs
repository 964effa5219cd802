//! Asking nodes whether they answer: a TCP connect to the CQL port while a node starts, and
//! CQL queries to each node for `cluster status` (logged in and over TLS as the cluster
//! requires).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::policies::load_balancing::{NodeIdentifier, SingleTargetLoadBalancingPolicy};
use scylla::statement::unprepared::Statement;

/// Whether something accepts TCP connections at `addr`. Cassandra opens its CQL port last,
/// after the node has joined the ring, so an open port means the node is ready.
pub fn accepts_connections(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok()
}

/// Whether `addr` can be bound now, i.e. no other process listens there.
pub fn is_free(addr: SocketAddr) -> bool {
    TcpListener::bind(addr).is_ok()
}

/// Connects a driver session to the given nodes (no schema metadata: it is not needed here),
/// logged in as `login` (user name, password) when the cluster requires a password, over
/// `tls` when it requires TLS ([`super::tls::probe_tls`]).
pub async fn connect(
    nodes: &[SocketAddr],
    timeout: Duration,
    login: Option<(&str, &str)>,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> Result<Session, String> {
    let mut builder = nodes
        .iter()
        .fold(SessionBuilder::new(), |b, addr| b.known_node_addr(*addr))
        .connection_timeout(timeout)
        .fetch_schema_metadata(false);
    if let Some((user, password)) = login {
        builder = builder.user(user, password);
    }
    if tls.is_some() {
        builder = builder.tls_context(tls);
    }
    match tokio::time::timeout(timeout, builder.build()).await {
        Ok(Ok(session)) => Ok(session),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {timeout:?}")),
    }
}

/// Runs `cql` on exactly the node at `addr` (not routed elsewhere), returning its rows as
/// text columns.
pub async fn query_node(
    session: &Session,
    addr: SocketAddr,
    cql: &str,
) -> Result<Vec<Vec<Option<String>>>, String> {
    let mut statement = Statement::new(cql);
    statement.set_load_balancing_policy(Some(SingleTargetLoadBalancingPolicy::new(
        NodeIdentifier::NodeAddress(addr),
        None,
    )));
    let result = session
        .query_unpaged(statement, &[])
        .await
        .map_err(|e| e.to_string())?;
    let rows = match result.into_rows_result() {
        Ok(rows) => rows,
        // A schema change or a write answers without rows.
        Err(scylla::response::query_result::IntoRowsResultError::ResultNotRows(_)) => {
            return Ok(Vec::new())
        }
        Err(e) => return Err(e.to_string()),
    };
    let columns = rows.column_specs().len();
    let mut out = Vec::new();
    for row in rows
        .rows::<scylla::value::Row>()
        .map_err(|e| e.to_string())?
    {
        let row = row.map_err(|e| e.to_string())?;
        let mut texts = Vec::with_capacity(columns);
        for value in row.columns {
            texts.push(value.map(|v| cql_value_text(&v)));
        }
        out.push(texts);
    }
    Ok(out)
}

fn cql_value_text(value: &scylla::value::CqlValue) -> String {
    use scylla::value::CqlValue;
    match value {
        CqlValue::Text(s) | CqlValue::Ascii(s) => s.clone(),
        CqlValue::Boolean(b) => b.to_string(),
        CqlValue::Inet(ip) => ip.to_string(),
        CqlValue::Uuid(u) => u.to_string(),
        CqlValue::Timeuuid(u) => u.to_string(),
        CqlValue::Int(i) => i.to_string(),
        CqlValue::BigInt(i) => i.to_string(),
        other => format!("{other:?}"),
    }
}

/// How many other nodes the node at `addr` knows with a CQL address (rows of
/// `system.peers_v2`): once every node counts all the others, drivers see the whole cluster.
pub async fn peers_known(
    addr: SocketAddr,
    timeout: Duration,
    login: Option<(&str, &str)>,
    tls: Option<Arc<rustls::ClientConfig>>,
) -> Result<usize, String> {
    let session = connect(&[addr], timeout, login, tls).await?;
    let rows = query_node(
        &session,
        addr,
        "SELECT peer, native_address FROM system.peers_v2",
    )
    .await?;
    Ok(rows
        .iter()
        .filter(|row| row.get(1).is_some_and(Option::is_some))
        .count())
}

/// The Cassandra release a node reports in `system.local`.
pub async fn release_version(session: &Session, addr: SocketAddr) -> Result<String, String> {
    let rows = query_node(session, addr, "SELECT release_version FROM system.local").await?;
    rows.into_iter()
        .next()
        .and_then(|row| row.into_iter().next().flatten())
        .ok_or_else(|| "system.local has no release_version".to_string())
}
