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
//! connections per node of the local data centre for each of the run's lanes (client
//! threads, [`crate::lanes`]), requests spread over them in turn. Routing
//! follows the driver's default policy: the replicas of the request's token in the local data
//! centre first, in the ring's order, then the other nodes of that data centre; a node whose
//! connection is broken is skipped, and a request that could not be written to a node goes to
//! the next one. A request written and then lost (its node died) is an error and is never sent
//! again: a failed request is data. A broken connection is reopened in the background (every
//! half second at most, while requests find it broken); a node the driver sees join or come
//! up is connected to within a second ([`WATCH_EVERY`]). A statement a restarted node forgot
//! is prepared again through the driver, the requests that found it missing counting as
//! errors. The engine keeps its own timeouts (a dropped request frees its stream id when its
//! answer comes). TLS with the run's settings, as the driver's connections (tokio-rustls, the
//! same rustls configuration). Not supported: protocol versions other than 4, compression.
//!
//! **Per thread.** A lane's connections are opened on the lane's own runtime, so their reader
//! and writer tasks run on the lane's thread, and a request sent from a lane goes only to that
//! lane's connections: framing, writing, reading the answer and waking the request happen on
//! one thread, with no lock, counter or wake-up shared with another lane (the connection's
//! lock is only ever taken by its own lane; the turn that spreads requests over connections
//! and coordinators is a counter of the thread's own). Requests sent from outside the lanes
//! (the driver's runtime) use any connection.
//!
//! **Why one file of about 700 lines.** Routing, reopening broken connections and watching
//! the ring all read and replace one node table of per-lane connections; split apart, each
//! would need the others' insides. The frames and a connection's reader and writer, which
//! need none of it, are `frame.rs` and `connection.rs`.

mod connection;
mod frame;

use std::cell::Cell;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use scylla::client::session::Session;
use scylla::cluster::Node;
use scylla::errors::{
    BadQuery, ConnectionError, ConnectionPoolError, DbError, ExecutionError, RequestAttemptError,
};
use scylla::serialize::row::{RowSerializationContext, SerializeRow};
use scylla::serialize::writers::RowWriter;
use scylla::statement::batch::BatchType;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::answer::Answer;
use super::tls::TlsClient;
use crate::lanes::{self, Lanes};
use connection::Connection;

/// Which path the measured requests take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sender {
    /// The native sender; the driver when the native sender cannot connect (said in the
    /// output).
    #[default]
    Auto,
    /// headroom's own connections (this module); an error when they cannot be opened.
    Native,
    /// The scylla driver's `execute_unpaged`.
    Driver,
}

/// The least time between two attempts to reopen a broken connection.
const RECONNECT_EVERY: Duration = Duration::from_millis(500);

/// How often the driver's view of the cluster is compared with the nodes connected to.
pub const WATCH_EVERY: Duration = Duration::from_secs(1);

/// One of the connections to a node, reopened when it breaks.
struct Link {
    address: SocketAddr,
    /// The lane whose runtime runs the connection's tasks, and whose requests it takes.
    lane: Option<usize>,
    current: RwLock<Arc<Connection>>,
    /// A reopening is under way.
    reconnecting: AtomicBool,
}

impl Link {
    fn connection(&self) -> Arc<Connection> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// How to open connections again.
struct Opener {
    credentials: Option<(String, String)>,
    /// Set when a node took a connection without asking for the credentials given.
    credentials_unused: AtomicBool,
    tls: Option<TlsClient>,
    connect_timeout: Duration,
    /// The run's lanes; None: connections on the caller's runtime.
    lanes: Option<Arc<Lanes>>,
}

impl Opener {
    /// `count` connections to `address` for each lane, lane by lane (lane K's are the K-th
    /// `count` of them).
    async fn links(&self, address: SocketAddr, count: usize) -> Result<Vec<Arc<Link>>, String> {
        let mut links = Vec::new();
        let lanes: Vec<Option<usize>> = match &self.lanes {
            Some(l) => (0..l.len()).map(Some).collect(),
            None => vec![None],
        };
        for lane in lanes {
            for _ in 0..count.max(1) {
                let connection = self.open(address, lane).await?;
                links.push(Arc::new(Link {
                    address,
                    lane,
                    current: RwLock::new(connection),
                    reconnecting: AtomicBool::new(false),
                }));
            }
        }
        Ok(links)
    }

    /// How many lanes the links of a node are divided among.
    fn lane_count(&self) -> usize {
        self.lanes.as_ref().map_or(1, |l| l.len())
    }
}

thread_local! {
    /// This thread's turn: spreads its requests over a node's links and over the
    /// coordinators that are no replica, without a counter shared between threads.
    static TURN: Cell<usize> = const { Cell::new(0) };
}

/// The next turn of this thread.
fn next_turn() -> usize {
    TURN.with(|t| {
        let turn = t.get();
        t.set(turn.wrapping_add(1));
        turn
    })
}

/// The nodes requests may go to: those of the local data centre that could be connected to.
#[derive(Default)]
struct NodeTable {
    by_id: HashMap<Uuid, Arc<[Arc<Link>]>>,
    /// The same nodes in the driver's order: the coordinators tried after the replicas.
    all: Vec<Arc<[Arc<Link>]>>,
}

impl NodeTable {
    fn with(&self, host_id: Uuid, links: Vec<Arc<Link>>) -> NodeTable {
        let mut by_id = self.by_id.clone();
        by_id.insert(host_id, links.into());
        NodeTable::from(by_id)
    }

    fn without(&self, gone: &[Uuid]) -> NodeTable {
        let mut by_id = self.by_id.clone();
        by_id.retain(|id, _| !gone.contains(id));
        NodeTable::from(by_id)
    }

    fn close(&self) {
        for link in self.all.iter().flat_map(|links| links.iter()) {
            link.connection().close();
        }
    }
}

impl From<HashMap<Uuid, Arc<[Arc<Link>]>>> for NodeTable {
    fn from(by_id: HashMap<Uuid, Arc<[Arc<Link>]>>) -> NodeTable {
        let mut ids: Vec<&Uuid> = by_id.keys().collect();
        ids.sort();
        let all = ids.iter().map(|id| by_id[*id].clone()).collect();
        NodeTable { by_id, all }
    }
}

/// `connections` connections to every node of the local data centre.
pub struct NativeClient {
    session: Arc<Session>,
    table: Arc<ArcSwap<NodeTable>>,
    opener: Arc<Opener>,
    /// A statement is being prepared again (a node forgot it).
    repreparing: Arc<AtomicBool>,
    /// Connects to nodes that join or come up, and forgets those that leave the ring.
    watcher: tokio::task::JoinHandle<()>,
}

/// Whether `node` is one requests may go to.
fn in_dc(node: &Node, local_dc: Option<&str>) -> bool {
    local_dc.is_none_or(|dc| node.datacenter.as_deref() == Some(dc))
}

fn address_of(node: &Node) -> SocketAddr {
    SocketAddr::new(node.address.ip(), node.address.port())
}

impl Opener {
    /// A connection to `address` whose tasks run on `lane` (on the caller's runtime for
    /// None).
    async fn open(
        &self,
        address: SocketAddr,
        lane: Option<usize>,
    ) -> Result<Arc<Connection>, String> {
        let connection = self.open_on_lane(address, lane).await?;
        if self.credentials.is_some() && !connection.asked_for_credentials {
            self.credentials_unused.store(true, Ordering::Relaxed);
        }
        Ok(connection)
    }

    async fn open_on_lane(
        &self,
        address: SocketAddr,
        lane: Option<usize>,
    ) -> Result<Arc<Connection>, String> {
        match (lane, &self.lanes) {
            (Some(lane), Some(lanes)) => {
                let credentials = self.credentials.clone();
                let tls = self.tls.clone();
                let timeout = self.connect_timeout;
                lanes
                    .spawn(lane, async move {
                        Connection::open(address, credentials.as_ref(), tls.as_ref(), timeout).await
                    })
                    .await
                    .map_err(|e| format!("{address}: the client's thread ended: {e}"))?
            }
            _ => {
                Connection::open(
                    address,
                    self.credentials.as_ref(),
                    self.tls.as_ref(),
                    self.connect_timeout,
                )
                .await
            }
        }
    }
}

impl NativeClient {
    /// Opens `connections` connections to every node of `session`'s cluster in `local_dc`
    /// (every node when None) for each of `lanes` (on the caller's runtime without), over
    /// TLS when `tls` is given. Fails if no node can be connected to, naming the first and
    /// why; a node that is down is connected to once the driver sees it up.
    pub async fn open(
        session: Arc<Session>,
        connections: usize,
        credentials: Option<(String, String)>,
        tls: Option<TlsClient>,
        connect_timeout: Duration,
        local_dc: Option<String>,
        lanes: Option<Arc<Lanes>>,
    ) -> Result<NativeClient, String> {
        let opener = Arc::new(Opener {
            credentials,
            credentials_unused: AtomicBool::new(false),
            tls,
            connect_timeout,
            lanes,
        });
        let cluster = session.get_cluster_state();
        let mut by_id = HashMap::new();
        let mut first_error = None;
        for node in cluster.get_nodes_info() {
            if !in_dc(node, local_dc.as_deref()) {
                continue;
            }
            match opener.links(address_of(node), connections).await {
                Ok(links) => {
                    by_id.insert(node.host_id, links.into());
                }
                // Up for the driver: something of ours (credentials, TLS) is wrong.
                Err(e) if node.is_connected() => {
                    NodeTable::from(by_id).close();
                    return Err(e);
                }
                // Down for the driver too: connected to once it comes up.
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if by_id.is_empty() {
            return Err(first_error.unwrap_or_else(|| match &local_dc {
                Some(dc) => format!("the driver knows no node in data centre {dc}"),
                None => "the driver knows no node to connect to".into(),
            }));
        }
        let table = Arc::new(ArcSwap::from_pointee(NodeTable::from(by_id)));
        let watcher = tokio::spawn(watch(
            Arc::downgrade(&session),
            Arc::downgrade(&table),
            opener.clone(),
            connections,
            local_dc,
        ));
        Ok(NativeClient {
            session,
            table,
            opener,
            repreparing: Arc::new(AtomicBool::new(false)),
            watcher,
        })
    }

    /// Whether credentials were given and a node took a connection without asking for them:
    /// the cluster does not require authentication.
    pub fn credentials_unused(&self) -> bool {
        self.opener.credentials_unused.load(Ordering::Relaxed)
    }

    /// Executes `statement` with `values` and waits for the answer; the statement's
    /// consistency (LOCAL_ONE if unset) and serial consistency apply. The request goes to
    /// the first node of the plan (see the module's doc) that takes it.
    pub async fn execute(
        &self,
        statement: &PreparedStatement,
        values: impl SerializeRow,
    ) -> Result<(), ExecutionError> {
        self.request(statement, &values, false, |out, stream| {
            write_execute(out, stream, statement, &values, None)
        })
        .await
        .map(|_| ())
    }

    /// Executes `statement` with `values` and returns the first page of its rows (none for
    /// an answer without rows).
    pub async fn fetch(
        &self,
        statement: &PreparedStatement,
        values: impl SerializeRow,
    ) -> Result<Answer, ExecutionError> {
        let page = Some(frame::Page {
            size: FETCH_PAGE,
            state: None,
        });
        let body = self
            .request(statement, &values, true, |out, stream| {
                write_execute(out, stream, statement, &values, page)
            })
            .await?;
        Ok(Answer::of_frame(body.unwrap_or_default())?.0)
    }

    /// Reads every page of `statement` with `values`, `page_size` rows a page, and returns
    /// the count of rows. Each page is a request of its own, routed as any.
    pub async fn scan(
        &self,
        statement: &PreparedStatement,
        values: impl SerializeRow,
        page_size: i32,
    ) -> Result<u64, ExecutionError> {
        let mut state: Option<Vec<u8>> = None;
        let mut count = 0u64;
        loop {
            let page = Some(frame::Page {
                size: page_size.max(1),
                state: state.as_deref(),
            });
            let body = self
                .request(statement, &values, true, |out, stream| {
                    write_execute(out, stream, statement, &values, page)
                })
                .await?;
            let (answer, next) = Answer::of_frame(body.unwrap_or_default())?;
            count += answer.rows.len() as u64;
            match next {
                Some(next) => state = Some(next),
                None => return Ok(count),
            }
        }
    }

    /// Sends one BATCH of `kind` at `consistency`: each prepared statement with its values
    /// (the first statement's serial consistency applies), routed by the first statement's
    /// token. The answer has rows for a conditional batch (its `[applied]`).
    pub async fn batch<V: SerializeRow>(
        &self,
        kind: BatchType,
        consistency: Consistency,
        items: &[(&PreparedStatement, V)],
    ) -> Result<Answer, ExecutionError> {
        let Some((first, first_values)) = items.first() else {
            return Ok(Answer::default());
        };
        let serial = first.get_serial_consistency();
        let kind = match kind {
            BatchType::Logged => 0,
            BatchType::Unlogged => 1,
            BatchType::Counter => 2,
        };
        let count = u16::try_from(items.len()).map_err(|_| {
            ExecutionError::BadQuery(BadQuery::TooManyQueriesInBatchStatement(items.len()))
        })?;
        let body = self
            .request(first, first_values, true, |out, stream| {
                let body = frame::batch_begin(out, stream, kind, count);
                for (statement, values) in items {
                    frame::batch_statement_begin(out, statement.get_id());
                    write_values(out, statement, values)?;
                }
                frame::batch_end(out, body, consistency, serial);
                Ok(())
            })
            .await?;
        Ok(Answer::of_frame(body.unwrap_or_default())?.0)
    }

    /// Sends one request built by `build` (called once per node tried) to the first node of
    /// the plan of `statement` with `values` that takes it, and waits for its answer: the
    /// RESULT's body with `wants_body`.
    async fn request(
        &self,
        statement: &PreparedStatement,
        values: &impl SerializeRow,
        wants_body: bool,
        build: impl Fn(&mut Vec<u8>, i16) -> Result<(), Box<ExecutionError>>,
    ) -> Result<Option<Vec<u8>>, ExecutionError> {
        let (link, connection, pending) = self
            .dispatch(statement, values, wants_body, &build)
            .map_err(|e| *e)?;
        let result = pending.await;
        if let Err(e) = &result {
            if connection.is_broken() {
                self.reconnect(&link);
            } else if is_unprepared(e) {
                self.reprepare(statement);
            }
        }
        result
    }

    /// Writes the request to the first node of its plan that takes it.
    fn dispatch(
        &self,
        statement: &PreparedStatement,
        values: &impl SerializeRow,
        wants_body: bool,
        build: &impl Fn(&mut Vec<u8>, i16) -> Result<(), Box<ExecutionError>>,
    ) -> Result<(Arc<Link>, Arc<Connection>, connection::Pending), Box<ExecutionError>> {
        let table = self.table.load();
        let turn = next_turn();
        // This lane's links of a node (all of them when called from outside the lanes).
        let lane_count = self.opener.lane_count();
        let lane = lanes::current().filter(|&l| l < lane_count);
        let of_lane = |links: &'_ [Arc<Link>]| -> std::ops::Range<usize> {
            let per_lane = (links.len() / lane_count).max(1);
            match lane {
                Some(l) if links.len() >= lane_count => l * per_lane..(l + 1) * per_lane,
                _ => 0..links.len(),
            }
        };
        let replicas = match (
            table.all.len() > 1,
            statement.get_keyspace_name(),
            statement.get_table_name(),
        ) {
            (true, Some(ks), Some(name)) => match statement.calculate_token(values) {
                Ok(Some(token)) => self
                    .session
                    .get_cluster_state()
                    .get_token_endpoints(ks, name, token),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let count = table.all.len();
        let plan = replicas
            .iter()
            .filter_map(|(node, _)| table.by_id.get(&node.host_id))
            .chain((0..count).map(|i| &table.all[(turn + i) % count]));
        let mut last = None;
        for links in plan {
            let range = of_lane(links);
            let link = &links[range.start + turn % range.len()];
            let connection = link.connection();
            match connection.send(wants_body, build) {
                Ok(pending) => return Ok((link.clone(), connection, pending)),
                // Not written: the next node of the plan may take it.
                Err(e) if connection.is_broken() => {
                    self.reconnect(link);
                    last = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| Box::new(no_connection())))
    }

    /// Reopens the link's connection in the background, unless that is under way or was
    /// tried less than [`RECONNECT_EVERY`] ago.
    fn reconnect(&self, link: &Arc<Link>) {
        if link.reconnecting.swap(true, Ordering::AcqRel) {
            return;
        }
        let link = Arc::downgrade(link);
        let opener = self.opener.clone();
        tokio::spawn(async move {
            tokio::time::sleep(RECONNECT_EVERY).await;
            let Some((address, lane)) = link.upgrade().map(|l| (l.address, l.lane)) else {
                return;
            };
            let opened = opener.open(address, lane).await;
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

    /// The nodes requests can go to now, by address.
    pub fn nodes(&self) -> Vec<SocketAddr> {
        let mut nodes: Vec<SocketAddr> = self
            .table
            .load()
            .all
            .iter()
            .map(|links| links[0].address)
            .collect();
        nodes.sort();
        nodes
    }
}

/// Keeps the node table in step with the driver's view: every [`WATCH_EVERY`], connects to the
/// nodes of the local data centre that the driver has connections to and the table lacks
/// (joined, or down when the run started), and drops the nodes that left the ring. Ends when
/// the client is gone.
async fn watch(
    session: Weak<Session>,
    table: Weak<ArcSwap<NodeTable>>,
    opener: Arc<Opener>,
    connections: usize,
    local_dc: Option<String>,
) {
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let (Some(session), Some(table)) = (session.upgrade(), table.upgrade()) else {
            return;
        };
        let cluster = session.get_cluster_state();
        let nodes: Vec<&Arc<Node>> = cluster
            .get_nodes_info()
            .iter()
            .filter(|n| in_dc(n, local_dc.as_deref()))
            .collect();
        let known = table.load_full();
        let gone: Vec<Uuid> = known
            .by_id
            .keys()
            .filter(|id| !nodes.iter().any(|n| n.host_id == **id))
            .copied()
            .collect();
        if !gone.is_empty() {
            let left = known.without(&gone);
            for id in &gone {
                for link in known.by_id[id].iter() {
                    link.connection().close();
                }
            }
            table.store(Arc::new(left));
        }
        for node in nodes {
            if table.load().by_id.contains_key(&node.host_id) || !node.is_connected() {
                continue;
            }
            if let Ok(links) = opener.links(address_of(node), connections).await {
                let grown = table.load().with(node.host_id, links);
                table.store(Arc::new(grown));
            }
        }
    }
}

/// Rows asked for by [`NativeClient::fetch`]: its one page holds up to this many.
const FETCH_PAGE: i32 = 5000;

/// Frames one EXECUTE of `statement` with `values` (and `page`, when its rows are read).
fn write_execute(
    out: &mut Vec<u8>,
    stream: i16,
    statement: &PreparedStatement,
    values: &impl SerializeRow,
    page: Option<frame::Page<'_>>,
) -> Result<(), Box<ExecutionError>> {
    let consistency = statement.get_consistency().unwrap_or(Consistency::LocalOne);
    let serial = statement.get_serial_consistency();
    let body = frame::execute_begin(out, stream, statement.get_id(), consistency, serial, page);
    write_values(out, statement, values)?;
    frame::after_values(out, page, serial);
    frame::end(out, body);
    Ok(())
}

/// Writes `values` of `statement` straight into the frame: a [short] count, then each as
/// [bytes].
fn write_values(
    out: &mut Vec<u8>,
    statement: &PreparedStatement,
    values: &impl SerializeRow,
) -> Result<(), Box<ExecutionError>> {
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
    Ok(())
}

/// The error of a request no node of the local data centre could take.
fn no_connection() -> ExecutionError {
    ExecutionError::ConnectionPoolError(ConnectionPoolError::Broken {
        last_connection_error: ConnectionError::IoError(Arc::new(std::io::Error::other(
            "no node of the local data centre has a working connection",
        ))),
    })
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
            .field("nodes", &self.table.load().all.len())
            .finish()
    }
}

impl Drop for NativeClient {
    fn drop(&mut self) {
        self.watcher.abort();
        self.table.load().close();
    }
}
