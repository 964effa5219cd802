//! The floor under any client's CPU per request on this machine: the kernel's share alone.
//! Sends the benchmark's keyvalue writes as raw CQL (native protocol v4) EXECUTE frames on one
//! connection, a burst every millisecond from a timerfd, and reads the answers — no driver,
//! no futures, no allocation per request, nothing recorded.
//!
//!     cargo run --release --example protocol_floor -- [RATE] [SECONDS] [KEYSPACE]
//!
//! Against a node on 127.0.0.1:9042 without authentication whose KEYSPACE (default
//! `bench_headroom`) has headroom's `keyvalue` table. Prints the requests sent and answered
//! and the process's CPU time per request. docs/PERFORMANCE.md sets it beside
//! `driver_floor` (the same load through the scylla driver), headroom and latte.

mod floor;

use std::time::Duration;

use headroom::engine::clock::{Clock, RealClock, Timer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const STARTUP: u8 = 0x01;
const READY: u8 = 0x02;
const PREPARE: u8 = 0x09;
const EXECUTE: u8 = 0x0A;
const RESULT: u8 = 0x08;
const LOCAL_ONE: u16 = 0x000A;

/// Appends a request frame's header (protocol v4, no flags) with a body length to be filled.
fn header(out: &mut Vec<u8>, stream: i16, opcode: u8) -> usize {
    out.extend_from_slice(&[0x04, 0]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.push(opcode);
    out.extend_from_slice(&[0; 4]);
    out.len()
}

/// Fills in the body length of the frame whose body starts at `body`.
fn close(out: &mut [u8], body: usize) {
    let length = (out.len() - body) as u32;
    out[body - 4..body].copy_from_slice(&length.to_be_bytes());
}

/// Reads one whole frame: (stream, opcode, body).
async fn frame(socket: &mut TcpStream) -> (i16, u8, Vec<u8>) {
    let mut head = [0u8; 9];
    socket.read_exact(&mut head).await.expect("read a frame");
    let length = u32::from_be_bytes(head[5..9].try_into().unwrap()) as usize;
    let mut body = vec![0; length];
    socket.read_exact(&mut body).await.expect("read a body");
    (i16::from_be_bytes([head[2], head[3]]), head[4], body)
}

fn main() {
    let (rate, seconds, keyspace) = floor::args();
    let runtime = floor::runtime();
    let (sent, answered, failed, cpu) = runtime.block_on(async move {
        tokio::spawn(async move {
            let mut socket = TcpStream::connect("127.0.0.1:9042")
                .await
                .expect("connect to 127.0.0.1:9042");
            socket.set_nodelay(true).expect("TCP_NODELAY");
            let mut out = Vec::new();
            let body = header(&mut out, 0, STARTUP);
            out.extend_from_slice(&1u16.to_be_bytes());
            for text in ["CQL_VERSION", "3.0.0"] {
                out.extend_from_slice(&(text.len() as u16).to_be_bytes());
                out.extend_from_slice(text.as_bytes());
            }
            close(&mut out, body);
            socket.write_all(&out).await.expect("STARTUP");
            let (_, opcode, _) = frame(&mut socket).await;
            assert_eq!(opcode, READY, "the node asks for authentication");
            out.clear();
            let query = format!("INSERT INTO {keyspace}.keyvalue (key, value) VALUES (?, ?)");
            let body = header(&mut out, 0, PREPARE);
            out.extend_from_slice(&(query.len() as u32).to_be_bytes());
            out.extend_from_slice(query.as_bytes());
            close(&mut out, body);
            socket.write_all(&out).await.expect("PREPARE");
            let (_, opcode, answer) = frame(&mut socket).await;
            assert_eq!(opcode, RESULT, "PREPARE failed: {answer:?}");
            // RESULT kind Prepared: [int kind][short bytes id]...
            let id_length = u16::from_be_bytes([answer[4], answer[5]]) as usize;
            let id = answer[6..6 + id_length].to_vec();

            let mut rng = floor::Rng(0x9E37_79B9_7F4A_7C15);
            let pool = rng.pool();
            let clock = RealClock::start_now();
            let mut timer = clock.timer().expect("timerfd");
            let total = rate * seconds;
            let per_ms = rate as f64 / 1000.0;
            let cpu_before = floor::cpu_seconds();
            let (mut sent, mut answered, mut failed) = (0u64, 0u64, 0u64);
            let mut tick = 1u64;
            let mut input = vec![0u8; 1 << 16];
            let (mut start, mut end) = (0usize, 0usize);
            let mut key = itoa::Buffer::new();
            while answered < total {
                let wake = tick * 1_000_000;
                tokio::select! {
                    biased;
                    read = socket.read(&mut input[end..]), if answered < sent => {
                        end += read.expect("read answers");
                        // Whole frames only; a partial one stays for the next read.
                        while end - start >= 9 {
                            let length = u32::from_be_bytes(input[start + 5..start + 9].try_into().unwrap()) as usize;
                            if end - start < 9 + length {
                                break;
                            }
                            answered += 1;
                            failed += u64::from(input[start + 4] != RESULT);
                            start += 9 + length;
                        }
                        if start == end {
                            (start, end) = (0, 0);
                        } else if end > input.len() / 2 {
                            input.copy_within(start..end, 0);
                            (start, end) = (0, end - start);
                        }
                    }
                    _ = timer.sleep_until_ns(wake), if sent < total => {
                        let due = ((tick as f64 * per_ms) as u64).min(total);
                        out.clear();
                        while sent < due {
                            let body = header(&mut out, (sent % 32_768) as i16, EXECUTE);
                            out.extend_from_slice(&(id.len() as u16).to_be_bytes());
                            out.extend_from_slice(&id);
                            out.extend_from_slice(&LOCAL_ONE.to_be_bytes());
                            out.push(0x01); // values follow
                            out.extend_from_slice(&2u16.to_be_bytes());
                            let key = key.format(rng.next() % 1_000_000);
                            out.extend_from_slice(&(key.len() as u32).to_be_bytes());
                            out.extend_from_slice(key.as_bytes());
                            let at = (rng.next() % (pool.len() as u64 - 150)) as usize;
                            out.extend_from_slice(&150u32.to_be_bytes());
                            out.extend_from_slice(&pool[at..at + 150]);
                            close(&mut out, body);
                            sent += 1;
                        }
                        socket.write_all(&out).await.expect("write requests");
                        tick += 1;
                    }
                }
            }
            (sent, answered, failed, floor::cpu_seconds() - cpu_before)
        })
        .await
        .expect("the sender")
    });
    floor::report(sent, answered, failed, cpu);
    std::thread::sleep(Duration::from_millis(1));
}
