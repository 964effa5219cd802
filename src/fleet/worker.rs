//! A worker of a fleet: which share of the schedule it sends (`--worker K/N`) and when the
//! fleet's schedule starts (`--start-at`).
//!
//! Worker K of N sends exactly the requests i ≡ K − 1 (mod N) of the schedule one process
//! would send at the same rate: every worker walks the same global sequence (for Poisson
//! arrivals, the same seeded one) and keeps its own requests, so the N workers together send
//! that schedule, request for request, and no two send the same sequence number (the keys of
//! inserts and of the populate derive from it, so they never collide). Inside a worker its
//! threads share its requests the same way.

use std::time::SystemTime;

use crate::results::config::parse_rfc3339;
#[cfg(test)]
use crate::results::config::rfc3339;

/// The most workers a fleet has.
pub const MAX_WORKERS: u32 = 1024;

/// Reads `K/N`: worker K (from 1) of N.
pub fn parse_worker(text: &str) -> Result<(u32, u32), String> {
    let (k, n) = text
        .split_once('/')
        .ok_or_else(|| format!("'{text}' is not K/N (e.g. 2/3: the second of three workers)"))?;
    let number = |s: &str, what: &str| {
        s.trim()
            .parse::<u32>()
            .map_err(|_| format!("'{text}': {what} '{s}' is not a whole number"))
    };
    let (k, n) = (number(k, "K")?, number(n, "N")?);
    if n == 0 || n > MAX_WORKERS {
        return Err(format!("'{text}': N must be from 1 to {MAX_WORKERS}"));
    }
    if k == 0 || k > n {
        return Err(format!("'{text}': K must be from 1 to N ({n})"));
    }
    Ok((k, n))
}

/// How far ahead a fleet's start may lie: its workers wait for it, so a start days away is
/// a mistyped date rather than a plan.
pub const MAX_START_AHEAD: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Reads a start time: RFC 3339 (`2026-11-26T17:00:00Z`, `...T17:00:00.250+01:00`) or
/// `+DURATION` from `now` (`+30s`, `+2m`). One more than [`MAX_START_AHEAD`] after `now` is
/// refused; one before it is refused by [`check_not_past`], where the run is known to be
/// measured (a populate's workers are launched with the moment they were planned, past by
/// the time they read it, and wait for nothing).
pub fn parse_start_at(text: &str, now: SystemTime) -> Result<SystemTime, String> {
    let at = match text.strip_prefix('+') {
        Some(after) => {
            let wait = humantime::parse_duration(after.trim())
                .map_err(|e| format!("'{text}': {e} (e.g. +30s, +2m)"))?;
            now.checked_add(wait)
                .ok_or_else(|| format!("'{text}' is too far ahead"))?
        }
        None => parse_rfc3339(text).map_err(|e| {
            format!("'{text}' is not an RFC 3339 time ({e}); e.g. 2026-11-26T17:00:00Z, or +30s")
        })?,
    };
    if at
        .duration_since(now)
        .is_ok_and(|ahead| ahead > MAX_START_AHEAD)
    {
        return Err(format!(
            "'{text}' is more than a day ahead: the workers would wait for it all that time; \
             give a time within {}",
            humantime::format_duration(MAX_START_AHEAD)
        ));
    }
    Ok(at)
}

/// Refuses a measured run's start time before `now`: every worker would start late (and,
/// told so only once it had connected and prepared, fail then).
pub fn check_not_past(at: SystemTime, now: SystemTime) -> Result<(), String> {
    match now.duration_since(at) {
        Ok(ago) if !ago.is_zero() => Err(format!(
            "--start-at {} is {} in the past: the workers would all start late; give a time \
             to come, e.g. +30s",
            crate::results::config::rfc3339(at),
            humantime::format_duration(std::time::Duration::from_secs(ago.as_secs().max(1)))
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn worker_numbers_read_k_of_n() {
        assert_eq!(parse_worker("2/3"), Ok((2, 3)));
        assert_eq!(parse_worker("1/1"), Ok((1, 1)));
        for bad in ["0/3", "4/3", "3", "a/3", "1/0", "-1/2", "1/2/3", ""] {
            assert!(parse_worker(bad).is_err(), "{bad}");
        }
        assert!(parse_worker("1/1025").unwrap_err().contains("1 to 1024"));
    }

    #[test]
    fn start_times_read_as_rfc3339_or_from_now() {
        // 2026-11-26T12:00:00Z.
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_694_400);
        assert_eq!(
            parse_start_at("+30s", now),
            Ok(now + Duration::from_secs(30))
        );
        let at = parse_start_at("2026-11-26T17:00:00.250+01:00", now).unwrap();
        assert_eq!(rfc3339(at), "2026-11-26T16:00:00.250000000Z");
        assert_eq!(parse_start_at(&rfc3339(at), now), Ok(at), "round trip");
        for bad in [
            "tomorrow",
            "+soon",
            "2026-11-26 17:00",
            "1969-12-31T23:59:59Z",
        ] {
            assert!(parse_start_at(bad, now).is_err(), "{bad}");
        }
        let past = parse_start_at("2026-11-26T11:59:00Z", now).unwrap();
        let e = check_not_past(past, now).unwrap_err();
        assert!(e.contains("is 1m in the past"), "{e}");
        assert!(check_not_past(now, now).is_ok());
        let far = parse_start_at("2099-01-01T00:00:00Z", now).unwrap_err();
        assert!(far.contains("more than a day ahead"), "{far}");
        assert!(parse_start_at("+25h", now).is_err());
        assert!(parse_start_at("+23h", now).is_ok());
        assert!(parse_start_at("+0s", now).is_ok());
    }
}
