//! The native sender: headroom's own CQL connections for the measured requests.
//!
//! The scylla driver stays in charge of everything but the measured requests: discovering
//! the cluster, schema, preparing statements, token ring. The measured requests — EXECUTEs of
//! statements the driver prepared (a prepared id is the same on every node) — go through
//! connections of this module instead, one per node, because the driver's path costs more
//! than half of a client's CPU per request: on one node at 10 000 writes/s, the driver alone,
//! recording nothing, takes 14.5–15.9 µs a request, raw protocol frames 7.2–7.4 µs
//! (docs/PERFORMANCE.md, examples/driver_floor.rs and examples/protocol_floor.rs;
//! docs/decisions/0006-a-native-sender-for-the-measured-requests.md).
//!
//! What it does: protocol v4 without compression; PasswordAuthenticator; `--connections`
//! connections per node, requests spread over them in turn; token-aware routing to the first
//! replica the driver's ring names (connections to the nodes known when the run started); the engine's own
//! timeouts (a dropped request frees its stream id when its answer comes). A broken
//! connection fails its requests as connection errors and is reopened in the background
//! (every half second at most); a statement a restarted node forgot is prepared again through
//! the driver, the requests that found it missing counting as errors. TLS with the run's
//! settings, as the driver's connections (tokio-rustls, the same rustls configuration).
//! Not supported: protocol versions other than 4, compression.

mod connection;
mod frame;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use scylla::client::session::Session;
use scylla::errors::{BadQuery, DbError, ExecutionError, RequestAttemptError};
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::writers::RowWriter;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::tls::TlsClient;
use connection::Connection;

/// Which path the measured requests take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sender {
    /// The native sender for the built-in workloads, the driver for the others; the driver
    /// also when the native sender cannot connect (said in the output).
    #[default]
    Auto,
    /// headroom's own connections (this module); an error for other workloads.
    Native,
    /// The scylla driver's `execute_unpaged`.
    Driver,
}

/// The least time between two attempts to reopen a broken connection.
const RECONNECT_EVERY: Duration = Duration::from_millis(500);

/// One of the connections to a node, reopened when it breaks.
struct Link {
    address: SocketAddr,
    current: RwLock<Arc<Connection>>,
    /// A reopening is under way.
    reconnecting: AtomicBool,
}

/// How to open connections again.
struct Opener {
    credentials: Option<(String, String)>,
    tls: Option<TlsClient>,
    connect_timeout: Duration,
}

/// `connections` connections to every node the driver knew when the run started.
pub struct NativeClient {
    session: Arc<Session>,
    /// Per node: its host id and its links.
    nodes: Vec<(Uuid, Vec<Arc<Link>>)>,
    opener: Arc<Opener>,
    /// Spreads requests over a node's links.
    next: AtomicUsize,
    /// A statement is being prepared again (a node forgot it).
    repreparing: Arc<AtomicBool>,
}

impl Opener {
    async fn open(&self, address: SocketAddr) -> Result<Arc<Connection>, String> {
        Connection::open(
            address,
            self.credentials.as_ref(),
            self.tls.as_ref(),
            self.connect_timeout,
        )
        .await
    }
}

impl NativeClient {
    /// Opens `connections` connections to every node of `session`'s cluster, over TLS when
    /// `tls` is given. Fails if a node refuses or does not answer within `connect_timeout`,
    /// naming it and why.
    pub async fn open(
        session: Arc<Session>,
        connections: usize,
        credentials: Option<(String, String)>,
        tls: Option<TlsClient>,
        connect_timeout: Duration,
    ) -> Result<NativeClient, String> {
        let cluster = session.get_cluster_state();
        let opener = Arc::new(Opener {
            credentials,
            tls,
            connect_timeout,
        });
        let mut nodes = Vec::new();
        for node in cluster.get_nodes_info() {
            let address = SocketAddr::new(node.address.ip(), node.address.port());
            let mut links = Vec::new();
            for _ in 0..connections.max(1) {
                let connection = opener.open(address).await?;
                links.push(Arc::new(Link {
                    address,
                    current: RwLock::new(connection),
                    reconnecting: AtomicBool::new(false),
                }));
            }
            nodes.push((node.host_id, links));
        }
        if nodes.is_empty() {
            return Err("the driver knows no node to connect to".into());
        }
        Ok(NativeClient {
            session,
            nodes,
            opener,
            next: AtomicUsize::new(0),
            repreparing: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The node for a request of `statement` with `values`: the first replica of its token
    /// the driver's current ring names, or the first node when there is one node, no token or
    /// no connection to a replica. (The ring is read per request: the run's keyspace may be
    /// created after the connections are opened.)
    fn route(&self, statement: &PreparedStatement, values: &impl SerializeRow) -> &[Arc<Link>] {
        if self.nodes.len() > 1 {
            if let (Ok(Some(token)), Some(ks), Some(table)) = (
                statement.calculate_token(values),
                statement.get_keyspace_name(),
                statement.get_table_name(),
            ) {
                let cluster = self.session.get_cluster_state();
                for (node, _) in cluster.get_token_endpoints(ks, table, token) {
                    if let Some((_, links)) = self.nodes.iter().find(|(id, _)| *id == node.host_id)
                    {
                        return links;
                    }
                }
            }
        }
        &self.nodes[0].1
    }

    /// Executes `statement` with `values` and waits for the answer; the statement's
    /// consistency (LOCAL_ONE if unset) and serial consistency apply.
    pub async fn execute(
        &self,
        statement: &PreparedStatement,
        values: impl SerializeRow,
    ) -> Result<(), ExecutionError> {
        let links = self.route(statement, &values);
        let link = if links.len() == 1 {
            &links[0]
        } else {
            &links[self.next.fetch_add(1, Ordering::Relaxed) % links.len()]
        };
        let connection = link
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let consistency = statement.get_consistency().unwrap_or(Consistency::LocalOne);
        let serial = statement.get_serial_consistency();
        let sent = connection.send(|out, stream| {
            let body = frame::execute_begin(out, stream, statement.get_id(), consistency, serial);
            // The values go straight into the frame: a [short] count, then each as [bytes].
            let count_at = out.len();
            out.extend_from_slice(&[0, 0]);
            let specs = statement.get_variable_col_specs();
            let context = RowSerializationContext::from_specs(specs.as_slice());
            let mut writer = RowWriter::new(out);
            values
                .serialize(&context, &mut writer)
                .map_err(|e| Box::new(ExecutionError::BadQuery(BadQuery::SerializationError(e))))?;
            let count = writer.value_count() as u16;
            out[count_at..count_at + 2].copy_from_slice(&count.to_be_bytes());
            frame::serial_consistency(out, serial);
            frame::end(out, body);
            Ok(())
        });
        let result = match sent {
            Ok(pending) => pending.await,
            Err(e) => Err(*e),
        };
        if let Err(e) = &result {
            if connection.is_broken() {
                self.reconnect(link);
            } else if is_unprepared(e) {
                self.reprepare(statement);
            }
        }
        result
    }

    /// Reopens the link's connection in the background, unless that is under way; the
    /// requests in between fail as connection errors.
    fn reconnect(&self, link: &Arc<Link>) {
        if link.reconnecting.swap(true, Ordering::AcqRel) {
            return;
        }
        let link = Arc::downgrade(link);
        let opener = self.opener.clone();
        tokio::spawn(async move {
            tokio::time::sleep(RECONNECT_EVERY).await;
            let Some(address) = link.upgrade().map(|l| l.address) else {
                return;
            };
            let opened = opener.open(address).await;
            match (link.upgrade(), opened) {
                (Some(link), Ok(connection)) => {
                    *link.current.write().unwrap_or_else(|e| e.into_inner()) = connection;
                    link.reconnecting.store(false, Ordering::Release);
                }
                (Some(link), Err(_)) => link.reconnecting.store(false, Ordering::Release),
                // The run ended meanwhile.
                (None, Ok(connection)) => connection.close(),
                (None, Err(_)) => {}
            }
        });
    }

    /// Prepares `statement` again through the driver (which prepares it on every node), once
    /// at a time: a node that restarted has forgotten it.
    fn reprepare(&self, statement: &PreparedStatement) {
        if self.repreparing.swap(true, Ordering::AcqRel) {
            return;
        }
        let session = self.session.clone();
        let text = statement.get_statement().to_string();
        let flag = self.repreparing.clone();
        tokio::spawn(async move {
            let _ = session.prepare(text).await;
            tokio::time::sleep(RECONNECT_EVERY).await;
            flag.store(false, Ordering::Release);
        });
    }
}

/// Whether the node answered that it does not know the statement's id.
fn is_unprepared(error: &ExecutionError) -> bool {
    matches!(
        error,
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(
            DbError::Unprepared { .. },
            _
        ))
    )
}

impl std::fmt::Debug for NativeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeClient")
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

impl Drop for NativeClient {
    fn drop(&mut self) {
        for link in self.nodes.iter().flat_map(|(_, links)| links) {
            link.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .close();
        }
    }
}
