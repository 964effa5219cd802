//! One line of a unified-logging GC log, read on its own: the decorations
//! (`[time][uptime][level][tags]`), a GC pause's message (`GC(n) Pause <name> ... <d>ms`) and
//! a safepoint's (`Safepoint "<op>", ..., Total: N ns`). See the parent module for the format.
//!
//! Apart from the pairing of pauses with safepoints because it holds no state: each function
//! reads one token or one message and is tested on single lines.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::GcPause;

/// The decorations and message of one unified-logging line.
#[derive(Debug, PartialEq)]
pub(super) struct Decorated<'a> {
    pub(super) time: Option<SystemTime>,
    pub(super) uptime: Option<Duration>,
    pub(super) tags: Option<&'a str>,
    pub(super) message: &'a str,
}

/// Splits `[time][uptime][level][tags] message`. `None` for a line that does not start with
/// a decoration (a Java 8 line, or an empty one).
pub(super) fn parse_line(line: &str) -> Option<Decorated<'_>> {
    let mut rest = line.strip_prefix('[')?;
    let mut decorated = Decorated {
        time: None,
        uptime: None,
        tags: None,
        message: "",
    };
    loop {
        let close = rest.find(']')?;
        let token = rest[..close].trim();
        rest = &rest[close + 1..];
        if token.bytes().all(|b| b.is_ascii_digit()) {
            // pid or tid.
        } else if let Some(time) = parse_time(token) {
            decorated.time = Some(time);
        } else if let Some(uptime) = parse_uptime(token) {
            decorated.uptime = Some(uptime);
        } else if !matches!(token, "trace" | "debug" | "info" | "warning" | "error") {
            // Tags are the JVM's last decoration.
            decorated.tags = Some(token);
            break;
        }
        match rest.strip_prefix('[') {
            Some(next) => rest = next,
            None => break,
        }
    }
    decorated.message = rest.strip_prefix(' ').unwrap_or(rest);
    Some(decorated)
}

/// The `time` (or `utctime`) decoration: `2026-11-22T07:03:57.631+0000`.
pub(super) fn parse_time(token: &str) -> Option<SystemTime> {
    let bytes = token.as_bytes();
    if bytes.len() < 20 || bytes[4] != b'-' || bytes[10] != b'T' {
        return None;
    }
    let parsed = chrono::DateTime::parse_from_str(token, "%Y-%m-%dT%H:%M:%S%.f%z").ok()?;
    let nanos = parsed.timestamp_nanos_opt()?;
    Some(UNIX_EPOCH + Duration::from_nanos(u64::try_from(nanos).ok()?))
}

/// The `uptime` decoration (`3.050s`) or `uptimemillis` (`3050ms`).
pub(super) fn parse_uptime(token: &str) -> Option<Duration> {
    if let Some(ms) = token.strip_suffix("ms") {
        return ms.parse::<u64>().ok().map(Duration::from_millis);
    }
    let seconds = token.strip_suffix('s')?.parse::<f64>().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// `GC(n) Pause <name> [heap transition] <duration>ms` → the pause.
pub(super) fn parse_gc_pause(message: &str) -> Option<GcPause> {
    let rest = message.strip_prefix("GC(")?;
    let close = rest.find(')')?;
    let gc_id = rest[..close].parse().ok()?;
    let rest = rest[close + 1..].strip_prefix(' ')?;
    if !rest.starts_with("Pause ") {
        return None;
    }
    let (head, last) = rest.rsplit_once(' ')?;
    let duration_ns = millis_to_ns(last.strip_suffix("ms")?)?;
    // G1, Parallel and Shenandoah's full pauses put the heap transition before the duration.
    let name = match head.rsplit_once(' ') {
        Some((name, heap)) if heap.contains("->") => name,
        _ => head,
    };
    Some(GcPause {
        gc_id,
        name: name.trim_end().to_string(),
        duration_ns,
    })
}

/// A decimal count of milliseconds (`31.938`) in nanoseconds.
fn millis_to_ns(text: &str) -> Option<u64> {
    let ms: f64 = text.parse().ok()?;
    (ms.is_finite() && ms >= 0.0).then(|| (ms * 1e6).round() as u64)
}

/// Java 17's `Safepoint "<op>", Time since last: N ns, Reaching safepoint: N ns, ...,
/// Total: N ns` → (operation, reaching, total).
pub(super) fn parse_safepoint(message: &str) -> Option<(String, Option<u64>, u64)> {
    let rest = message.strip_prefix("Safepoint \"")?;
    let close = rest.find('"')?;
    let operation = rest[..close].to_string();
    let mut reaching = None;
    let mut total = None;
    for field in rest[close + 1..].split(',') {
        let Some((key, value)) = field.split_once(':') else {
            continue;
        };
        let value = value.trim().strip_suffix("ns").map(str::trim);
        let value = value.and_then(|v| v.parse::<u64>().ok());
        match key.trim() {
            "Reaching safepoint" => reaching = value,
            "Total" => total = value,
            _ => {}
        }
    }
    Some((operation, reaching, total?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decorations_with_padded_tags() {
        let line = "[2026-11-22T07:03:57.634+0000][3.052s][info][gc,start    ] GC(0) Pause Young";
        let d = parse_line(line).unwrap();
        assert_eq!(
            d.time,
            Some(UNIX_EPOCH + Duration::from_millis(1_795_331_037_634))
        );
        assert_eq!(d.uptime, Some(Duration::from_millis(3052)));
        assert_eq!(d.tags, Some("gc,start"));
        assert_eq!(d.message, "GC(0) Pause Young");
        // Another offset is the same instant.
        assert_eq!(
            parse_time("2026-11-22T08:03:57.634+0100"),
            parse_time("2026-11-22T07:03:57.634+0000")
        );
        assert_eq!(parse_uptime("3052ms"), Some(Duration::from_millis(3052)));
        // pid and tid decorations are skipped.
        let d =
            parse_line("[2026-11-22T07:03:57.634+0000][3.052s][8140][8152][info][gc] x").unwrap();
        assert_eq!((d.tags, d.message), (Some("gc"), "x"));
        assert_eq!(parse_line("no decoration"), None);
        // Lines that look like pauses but are not.
        assert_eq!(
            parse_gc_pause("GC(0) Pause Young (Normal) (G1 Evacuation Pause)"),
            None
        );
        assert_eq!(
            parse_gc_pause("Pause Init Mark (G)                3021 us"),
            None
        );
        assert_eq!(
            parse_gc_pause("GC(0)   Evacuate Collection Set: 29.9ms"),
            None
        );
    }
}
