//! CQL native protocol v4 frames: the few requests the native sender writes (STARTUP,
//! AUTH_RESPONSE, EXECUTE, BATCH) and what it reads of the answers (the header, an ERROR's code
//! and message, and a RESULT's rows, decoded by the driver's own parsers).
//!
//! A frame is a 9-byte header — version, flags, stream id (i16), opcode, body length (u32),
//! all big-endian — and its body (the protocol's `native_protocol_v4.spec`, sections 2–4).

use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::statement::{Consistency, SerialConsistency};
use scylla_cql_core::frame::protocol_features::ProtocolFeatures;
use scylla_cql_core::frame::response::error::Error as ErrorBody;

/// Version byte of a request frame (v4; a response has 0x84).
const REQUEST_V4: u8 = 0x04;
/// Bytes in a frame header.
pub(crate) const HEADER: usize = 9;

/// Opcodes used here.
pub(crate) mod opcode {
    pub(crate) const ERROR: u8 = 0x00;
    pub(crate) const STARTUP: u8 = 0x01;
    pub(crate) const READY: u8 = 0x02;
    pub(crate) const AUTHENTICATE: u8 = 0x03;
    pub(crate) const EXECUTE: u8 = 0x0A;
    pub(crate) const BATCH: u8 = 0x0D;
    pub(crate) const RESULT: u8 = 0x08;
    pub(crate) const AUTH_RESPONSE: u8 = 0x0F;
    pub(crate) const AUTH_SUCCESS: u8 = 0x10;
}

/// EXECUTE flags (the query parameters' `<flags>` byte).
const VALUES: u8 = 0x01;
const SKIP_METADATA: u8 = 0x02;
const PAGE_SIZE: u8 = 0x04;
const WITH_PAGING_STATE: u8 = 0x08;
const SERIAL_CONSISTENCY: u8 = 0x10;

/// Which page of rows an EXECUTE asks for, when its rows are read: `size` rows from where
/// `state` (from the page before) left off.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Page<'a> {
    pub(crate) size: i32,
    pub(crate) state: Option<&'a [u8]>,
}

/// A frame header as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// The frame's flags (tracing, custom payload, warnings: what precedes the body proper).
    pub(crate) flags: u8,
    pub(crate) stream: i16,
    pub(crate) opcode: u8,
    pub(crate) length: usize,
}

impl Header {
    /// The header at the start of `bytes` (at least [`HEADER`] long).
    pub(crate) fn parse(bytes: &[u8]) -> Header {
        Header {
            flags: bytes[1],
            stream: i16::from_be_bytes([bytes[2], bytes[3]]),
            opcode: bytes[4],
            length: u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]) as usize,
        }
    }
}

/// Starts a request frame in `out`; returns where its body starts, for [`end`].
pub(crate) fn begin(out: &mut Vec<u8>, stream: i16, opcode: u8) -> usize {
    out.extend_from_slice(&[REQUEST_V4, 0]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.push(opcode);
    out.extend_from_slice(&[0; 4]);
    out.len()
}

/// Ends the frame whose body starts at `body`: writes the body's length into its header.
pub(crate) fn end(out: &mut [u8], body: usize) {
    let length = (out.len() - body) as u32;
    out[body - 4..body].copy_from_slice(&length.to_be_bytes());
}

fn string(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u16).to_be_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// STARTUP with CQL 3.0.0 and no compression.
pub(crate) fn startup(out: &mut Vec<u8>) {
    let body = begin(out, 0, opcode::STARTUP);
    out.extend_from_slice(&1u16.to_be_bytes());
    string(out, "CQL_VERSION");
    string(out, "3.0.0");
    end(out, body);
}

/// AUTH_RESPONSE with SASL PLAIN credentials, as PasswordAuthenticator expects.
pub(crate) fn auth_response(out: &mut Vec<u8>, user: &str, password: &str) {
    let body = begin(out, 0, opcode::AUTH_RESPONSE);
    let token_length = 2 + user.len() + password.len();
    out.extend_from_slice(&(token_length as u32).to_be_bytes());
    out.push(0);
    out.extend_from_slice(user.as_bytes());
    out.push(0);
    out.extend_from_slice(password.as_bytes());
    end(out, body);
}

/// The start of an EXECUTE body up to its values: the statement's id, its consistency and
/// flags. The caller appends the values (a `[short]` count, then each as `[bytes]`), then
/// [`after_values`], then [`end`]s the frame. Without `page` the rows are not read, so their
/// column metadata is not asked for; with it, the metadata comes with them (a page of a
/// paged query, or the one page whose values are read).
pub(crate) fn execute_begin(
    out: &mut Vec<u8>,
    stream: i16,
    id: &[u8],
    consistency: Consistency,
    serial: Option<SerialConsistency>,
    page: Option<Page<'_>>,
) -> usize {
    let body = begin(out, stream, opcode::EXECUTE);
    out.extend_from_slice(&(id.len() as u16).to_be_bytes());
    out.extend_from_slice(id);
    out.extend_from_slice(&(consistency as u16).to_be_bytes());
    let mut flags = VALUES;
    match page {
        None => flags |= SKIP_METADATA,
        Some(page) => {
            flags |= PAGE_SIZE;
            if page.state.is_some() {
                flags |= WITH_PAGING_STATE;
            }
        }
    }
    if serial.is_some() {
        flags |= SERIAL_CONSISTENCY;
    }
    out.push(flags);
    body
}

/// Appends what follows an EXECUTE's values: the page size and paging state when a page is
/// asked for, then the serial consistency when there is one.
pub(crate) fn after_values(
    out: &mut Vec<u8>,
    page: Option<Page<'_>>,
    serial: Option<SerialConsistency>,
) {
    if let Some(page) = page {
        out.extend_from_slice(&page.size.to_be_bytes());
        if let Some(state) = page.state {
            out.extend_from_slice(&(state.len() as i32).to_be_bytes());
            out.extend_from_slice(state);
        }
    }
    if let Some(serial) = serial {
        out.extend_from_slice(&(serial as i16 as u16).to_be_bytes());
    }
}

/// The start of a BATCH body: its type and the count of statements. Each statement follows
/// as [`batch_statement_begin`], its values (a `[short]` count, then each as `[bytes]`); then
/// [`batch_end`].
pub(crate) fn batch_begin(out: &mut Vec<u8>, stream: i16, kind: u8, count: u16) -> usize {
    let body = begin(out, stream, opcode::BATCH);
    out.push(kind);
    out.extend_from_slice(&count.to_be_bytes());
    body
}

/// One prepared statement of a batch, up to its values.
pub(crate) fn batch_statement_begin(out: &mut Vec<u8>, id: &[u8]) {
    out.push(1);
    out.extend_from_slice(&(id.len() as u16).to_be_bytes());
    out.extend_from_slice(id);
}

/// The end of a BATCH body: its consistency and flags (serial consistency when given).
pub(crate) fn batch_end(
    out: &mut Vec<u8>,
    body: usize,
    consistency: Consistency,
    serial: Option<SerialConsistency>,
) {
    out.extend_from_slice(&(consistency as u16).to_be_bytes());
    match serial {
        Some(serial) => {
            out.push(SERIAL_CONSISTENCY);
            out.extend_from_slice(&(serial as i16 as u16).to_be_bytes());
        }
        None => out.push(0),
    }
    end(out, body);
}

/// Response flags that put something before the body proper (v4 spec, section 2.2).
const TRACING: u8 = 0x02;
const CUSTOM_PAYLOAD: u8 = 0x04;
const WARNING: u8 = 0x08;

/// The body proper of a response with `flags`: after the tracing id, the warnings and the
/// custom payload the flags announce. A body too short for what they announce is returned
/// as it is (its parse then fails and says so).
pub(crate) fn body_proper(flags: u8, body: &[u8]) -> &[u8] {
    fn skip(flags: u8, mut rest: &[u8]) -> Option<&[u8]> {
        let short = |rest: &mut &[u8]| -> Option<usize> {
            let n = u16::from_be_bytes(rest.get(..2)?.try_into().ok()?) as usize;
            *rest = &rest[2..];
            Some(n)
        };
        let take = |rest: &mut &[u8], n: usize| -> Option<()> {
            *rest = rest.get(n..)?;
            Some(())
        };
        if flags & TRACING != 0 {
            take(&mut rest, 16)?;
        }
        if flags & WARNING != 0 {
            // [string list]: a [short] count of [string]s.
            for _ in 0..short(&mut rest)? {
                let n = short(&mut rest)?;
                take(&mut rest, n)?;
            }
        }
        if flags & CUSTOM_PAYLOAD != 0 {
            // [bytes map]: a [short] count of ([string] key, [bytes] value).
            for _ in 0..short(&mut rest)? {
                let n = short(&mut rest)?;
                take(&mut rest, n)?;
                let n = i32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
                take(&mut rest, 4)?;
                take(&mut rest, n.max(0) as usize)?;
            }
        }
        Some(rest)
    }
    skip(flags, body).unwrap_or(body)
}

/// The driver's error for an ERROR frame's body: the server's error code and message, or a
/// protocol error if the body cannot be read.
pub(crate) fn error_of(body: &[u8]) -> ExecutionError {
    let mut rest = body;
    match ErrorBody::deserialize(&ProtocolFeatures::default(), &mut rest) {
        Ok(e) => ExecutionError::LastAttemptError(RequestAttemptError::DbError(e.error, e.reason)),
        Err(e) => protocol_error(format!("an ERROR frame that cannot be read: {e}")),
    }
}

/// The driver's error for an answer that breaks the protocol.
pub(crate) fn protocol_error(message: String) -> ExecutionError {
    ExecutionError::LastAttemptError(RequestAttemptError::DbError(
        DbError::ProtocolError,
        message,
    ))
}

/// The message of an ERROR frame's body, for set-up failures.
pub(crate) fn error_message(body: &[u8]) -> String {
    match error_of(body) {
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(e, reason)) => {
            format!("{e}: {reason}")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_carries_its_stream_opcode_and_length() {
        let mut out = Vec::new();
        let body = begin(&mut out, 300, opcode::EXECUTE);
        out.extend_from_slice(b"abcde");
        end(&mut out, body);
        assert_eq!(out.len(), HEADER + 5);
        assert_eq!(out[0], 0x04, "protocol v4 request");
        let header = Header::parse(&out);
        assert_eq!(
            header,
            Header {
                flags: 0,
                stream: 300,
                opcode: opcode::EXECUTE,
                length: 5
            }
        );
    }

    #[test]
    fn startup_asks_for_cql_3() {
        let mut out = Vec::new();
        startup(&mut out);
        let header = Header::parse(&out);
        assert_eq!(header.opcode, opcode::STARTUP);
        assert_eq!(header.length, out.len() - HEADER);
        // [short 1] [string CQL_VERSION] [string 3.0.0]
        assert_eq!(&out[HEADER..HEADER + 2], &[0, 1]);
        assert_eq!(&out[HEADER + 4..HEADER + 15], b"CQL_VERSION");
        assert_eq!(&out[HEADER + 17..], b"3.0.0");
    }

    #[test]
    fn the_auth_token_is_sasl_plain() {
        let mut out = Vec::new();
        auth_response(&mut out, "alice", "secret");
        assert_eq!(&out[HEADER..HEADER + 4], &13u32.to_be_bytes());
        assert_eq!(&out[HEADER + 4..], b"\0alice\0secret");
    }

    #[test]
    fn execute_writes_id_consistency_and_flags() {
        let mut out = Vec::new();
        let body = execute_begin(
            &mut out,
            7,
            &[0xAB, 0xCD],
            Consistency::LocalOne,
            None,
            None,
        );
        out.extend_from_slice(&0u16.to_be_bytes());
        end(&mut out, body);
        assert_eq!(
            &out[HEADER..],
            &[0, 2, 0xAB, 0xCD, 0x00, 0x0A, VALUES | SKIP_METADATA, 0, 0]
        );
    }

    #[test]
    fn warnings_and_payload_before_the_body_are_skipped() {
        let mut body = Vec::new();
        body.extend_from_slice(&2u16.to_be_bytes());
        for warning in ["tombstones", "big"] {
            string(&mut body, warning);
        }
        body.extend_from_slice(&1u16.to_be_bytes());
        string(&mut body, "key");
        body.extend_from_slice(&3i32.to_be_bytes());
        body.extend_from_slice(b"abc");
        body.extend_from_slice(b"proper");
        assert_eq!(body_proper(WARNING | CUSTOM_PAYLOAD, &body), b"proper");
        assert_eq!(body_proper(0, b"proper"), b"proper");
        // Announced but missing: left as it is.
        assert_eq!(body_proper(WARNING, &[0]), &[0]);
    }

    #[test]
    fn a_server_error_becomes_the_drivers_error() {
        // Overloaded (0x1001) with a message.
        let mut body = 0x1001u32.to_be_bytes().to_vec();
        body.extend_from_slice(&4u16.to_be_bytes());
        body.extend_from_slice(b"busy");
        match error_of(&body) {
            ExecutionError::LastAttemptError(RequestAttemptError::DbError(
                DbError::Overloaded,
                reason,
            )) => assert_eq!(reason, "busy"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            error_of(&[0, 0]),
            ExecutionError::LastAttemptError(RequestAttemptError::DbError(
                DbError::ProtocolError,
                _
            ))
        ));
    }
}
