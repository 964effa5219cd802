//! A stand-in CQL node that answers writes at once, so that a client's own cost can be
//! measured without the server being the limit.
//!
//!     cargo run --release --example stand_in_node -- LISTEN UPSTREAM [THREADS]
//!     e.g.  stand_in_node 127.0.0.31:9042 127.0.0.30:9042
//!
//! It listens on LISTEN and forwards every frame of every connection to a real node at
//! UPSTREAM, with one exception: an EXECUTE of a statement that was prepared (through it) from
//! a plain `INSERT`, `UPDATE` or `DELETE` (no `IF`) is answered at once with RESULT Void and
//! never reaches the real node. So a driver's session sees a whole, real node (system tables,
//! schema, prepared statements, schema agreement), and `headroom run keyvalue` runs end to end
//! against LISTEN, while its measured writes cost the server nothing. Answering the driver's
//! metadata queries without a real node would mean faking system.local, system.peers and every
//! system_schema table in the shapes the driver parses: more code than the measurement needs.
//!
//! The driver learns a node's address from system.local (`rpc_address`), not from the
//! contact point, so in every RESULT the node sends, an `inet` cell holding UPSTREAM's IPv4
//! address (the bytes `00 00 00 04` and the four of the address) is rewritten to LISTEN's:
//! the driver, and so headroom's own connections, then connect to the stand-in. Both must be
//! IPv4 addresses on port 9042 (the driver keeps the port it was given).
//!
//! Protocol v4, no compression (what headroom's sender and the scylla driver speak here).
//! Each accepted connection gets its own upstream connection, opened at once. It runs on one
//! thread, or on THREADS (a multi-thread runtime: connections spread over them) for a client
//! with many threads and connections; it prints the writes it answered every 10 s.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

const HEADER: usize = 9;
const RESULT: u8 = 0x08;
const PREPARE: u8 = 0x09;
const EXECUTE: u8 = 0x0A;
/// RESULT kind of an answer to PREPARE.
const PREPARED: i32 = 4;

/// Prepared ids of the writes answered here, shared by every connection.
type Writes = Arc<RwLock<HashSet<Vec<u8>>>>;

fn main() -> std::io::Result<()> {
    let threads: usize = std::env::args()
        .nth(3)
        .map_or(1, |t| t.parse().expect("THREADS is a number"));
    let runtime = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()?
    };
    runtime.block_on(serve_all())
}

async fn serve_all() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(listen), Some(upstream)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: stand_in_node LISTEN UPSTREAM (e.g. 127.0.0.31:9042 127.0.0.30:9042)");
        std::process::exit(2);
    };
    let upstream: SocketAddr = upstream.parse().expect("UPSTREAM is an address:port");
    let listen_at: SocketAddr = listen.parse().expect("LISTEN is an address:port");
    let (SocketAddr::V4(from), SocketAddr::V4(to)) = (upstream, listen_at) else {
        eprintln!("LISTEN and UPSTREAM must be IPv4 addresses");
        std::process::exit(2);
    };
    let rewrite = Rewrite {
        from: inet_cell(from.ip().octets()),
        to: inet_cell(to.ip().octets()),
    };
    let listener = TcpListener::bind(listen).await?;
    eprintln!("stand-in node on {listen}, set-up forwarded to {upstream}");
    let writes: Writes = Arc::default();
    let answered = Arc::new(AtomicU64::new(0));
    {
        let answered = answered.clone();
        tokio::spawn(async move {
            let mut last = 0;
            loop {
                tokio::time::sleep(Duration::from_secs(10)).await;
                let now = answered.load(Ordering::Relaxed);
                if now != last {
                    eprintln!("{now} writes answered ({}/s)", (now - last) / 10);
                    last = now;
                }
            }
        });
    }
    loop {
        let (client, _) = listener.accept().await?;
        let writes = writes.clone();
        let answered = answered.clone();
        tokio::spawn(async move {
            if let Err(e) = serve(client, upstream, rewrite, writes, answered).await {
                eprintln!("connection ended: {e}");
            }
        });
    }
}

/// An IPv4 address as an `inet` cell: its length, then its bytes.
fn inet_cell(ip: [u8; 4]) -> [u8; 8] {
    let mut cell = [0, 0, 0, 4, 0, 0, 0, 0];
    cell[4..].copy_from_slice(&ip);
    cell
}

/// The node's address in its answers, and the stand-in's in its place.
#[derive(Clone, Copy)]
struct Rewrite {
    from: [u8; 8],
    to: [u8; 8],
}

impl Rewrite {
    fn apply(&self, frame: &mut [u8]) {
        let mut i = HEADER;
        while i + 8 <= frame.len() {
            if frame[i..i + 8] == self.from {
                frame[i..i + 8].copy_from_slice(&self.to);
                i += 8;
            } else {
                i += 1;
            }
        }
    }
}

/// Reads whole frames from `socket` into `buffer`; None at the end of the stream.
async fn next_frame(
    socket: &mut (impl AsyncRead + Unpin),
    buffer: &mut Vec<u8>,
    start: &mut usize,
) -> std::io::Result<Option<(usize, usize)>> {
    loop {
        let have = buffer.len() - *start;
        if have >= HEADER {
            let length = i32::from_be_bytes(buffer[*start + 5..*start + 9].try_into().unwrap());
            let total = HEADER + length.max(0) as usize;
            if have >= total {
                let frame = (*start, *start + total);
                *start += total;
                return Ok(Some(frame));
            }
        }
        if *start > 0 && *start == buffer.len() {
            buffer.clear();
            *start = 0;
        } else if *start > (1 << 16) {
            buffer.drain(..*start);
            *start = 0;
        }
        let len = buffer.len();
        buffer.resize(len + (1 << 16), 0);
        let n = socket.read(&mut buffer[len..]).await?;
        buffer.truncate(len + n);
        if n == 0 {
            return Ok(None);
        }
    }
}

/// One client connection: frames to answer here go straight back, the rest to the node.
async fn serve(
    client: TcpStream,
    upstream: SocketAddr,
    rewrite: Rewrite,
    writes: Writes,
    answered: Arc<AtomicU64>,
) -> std::io::Result<()> {
    client.set_nodelay(true)?;
    let node = TcpStream::connect(upstream).await?;
    node.set_nodelay(true)?;
    let (mut client_in, mut client_out) = client.into_split();
    let (mut node_in, mut node_out) = node.into_split();
    // PREPAREs of writes in flight on this connection, by stream id.
    let preparing: Arc<RwLock<HashSet<i16>>> = Arc::default();
    // Everything the client is to receive, whole frames, in order of readiness.
    let (to_client, mut outbox) = mpsc::unbounded_channel::<Vec<u8>>();

    let from_node = {
        let to_client = to_client.clone();
        let preparing = preparing.clone();
        let writes = writes.clone();
        async move {
            let (mut buffer, mut start) = (Vec::new(), 0);
            while let Some((from, to)) = next_frame(&mut node_in, &mut buffer, &mut start).await? {
                let frame = &buffer[from..to];
                let stream = i16::from_be_bytes([frame[2], frame[3]]);
                let flags = frame[1];
                if frame[4] == RESULT && flags == 0 && preparing.write().unwrap().remove(&stream) {
                    let body = &frame[HEADER..];
                    if body.len() >= 6
                        && i32::from_be_bytes(body[..4].try_into().unwrap()) == PREPARED
                    {
                        let n = u16::from_be_bytes([body[4], body[5]]) as usize;
                        if body.len() >= 6 + n {
                            writes.write().unwrap().insert(body[6..6 + n].to_vec());
                        }
                    }
                }
                let mut frame = frame.to_vec();
                if frame[4] == RESULT {
                    rewrite.apply(&mut frame);
                }
                if to_client.send(frame).is_err() {
                    break;
                }
            }
            Ok::<_, std::io::Error>(())
        }
    };

    let from_client = async move {
        let (mut buffer, mut start) = (Vec::new(), 0);
        let mut forward = Vec::new();
        let mut local = Vec::new();
        loop {
            let Some((from, to)) = next_frame(&mut client_in, &mut buffer, &mut start).await?
            else {
                break;
            };
            // Take every whole frame already read, then send both batches at once.
            let mut frame = Some((from, to));
            while let Some((from, to)) = frame {
                let bytes = &buffer[from..to];
                let (flags, opcode) = (bytes[1], bytes[4]);
                let stream = i16::from_be_bytes([bytes[2], bytes[3]]);
                let body = &bytes[HEADER..];
                if opcode == EXECUTE && flags == 0 && is_write(body, &writes) {
                    local.extend_from_slice(&[0x84, 0]);
                    local.extend_from_slice(&stream.to_be_bytes());
                    local.push(RESULT);
                    local.extend_from_slice(&4u32.to_be_bytes());
                    local.extend_from_slice(&1i32.to_be_bytes());
                    answered.fetch_add(1, Ordering::Relaxed);
                } else {
                    if opcode == PREPARE && flags == 0 && prepares_write(body) {
                        preparing.write().unwrap().insert(stream);
                    }
                    forward.extend_from_slice(bytes);
                }
                frame = whole_frame(&buffer, &mut start);
            }
            if !local.is_empty() && to_client.send(std::mem::take(&mut local)).is_err() {
                break;
            }
            if !forward.is_empty() {
                node_out.write_all(&forward).await?;
                forward.clear();
            }
        }
        Ok::<_, std::io::Error>(())
    };

    let to_client_task = async move {
        let mut batch = Vec::new();
        while let Some(first) = outbox.recv().await {
            batch.extend_from_slice(&first);
            while let Ok(more) = outbox.try_recv() {
                batch.extend_from_slice(&more);
            }
            client_out.write_all(&batch).await?;
            batch.clear();
        }
        Ok::<_, std::io::Error>(())
    };

    tokio::select! {
        r = from_node => r,
        r = from_client => r,
        r = to_client_task => r,
    }
}

/// The next whole frame already in `buffer` after `start`, without reading.
fn whole_frame(buffer: &[u8], start: &mut usize) -> Option<(usize, usize)> {
    let have = buffer.len() - *start;
    if have < HEADER {
        return None;
    }
    let length = i32::from_be_bytes(buffer[*start + 5..*start + 9].try_into().unwrap());
    let total = HEADER + length.max(0) as usize;
    if have < total {
        return None;
    }
    let frame = (*start, *start + total);
    *start += total;
    Some(frame)
}

/// Whether an EXECUTE body names a statement prepared as a plain write.
fn is_write(body: &[u8], writes: &Writes) -> bool {
    if body.len() < 2 {
        return false;
    }
    let n = u16::from_be_bytes([body[0], body[1]]) as usize;
    body.len() >= 2 + n && writes.read().unwrap().contains(&body[2..2 + n])
}

/// Whether a PREPARE body (a long string) is a write without a condition.
fn prepares_write(body: &[u8]) -> bool {
    if body.len() < 4 {
        return false;
    }
    let n = i32::from_be_bytes(body[..4].try_into().unwrap()).max(0) as usize;
    let Some(text) = body.get(4..4 + n) else {
        return false;
    };
    let text = String::from_utf8_lossy(text).to_ascii_uppercase();
    let text = text.trim_start();
    (text.starts_with("INSERT") || text.starts_with("UPDATE") || text.starts_with("DELETE"))
        && !text.split_whitespace().any(|word| word == "IF")
}
