//! `--metrics-listen`, `--metrics-push`, `--live` and `--linger` into
//! [`LiveSettings`]: the addresses parsed and bound here, before anything connects, so
//! that an address in use or malformed ends the command with one line and nothing written.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, ToSocketAddrs};
use std::time::Duration;

use crate::cli::LiveArgs;
use crate::live::{Labels, Listener, LiveSettings, PushTarget, Routes};
use crate::usage::UsageError;

/// How long the final state is served after the end with `--live` and no `--linger`.
pub const DEFAULT_LIVE_LINGER: Duration = Duration::from_secs(10);

/// The longest `--linger`: a day.
pub const MAX_LINGER: Duration = Duration::from_secs(24 * 3600);

/// The live settings of `args`, their sockets bound; `port_offset` moves both ports up
/// (worker K of a local fleet serves the coordinator's ports + K).
pub fn live_settings(
    args: &LiveArgs,
    labels: &Labels,
    port_offset: u16,
) -> Result<LiveSettings, UsageError> {
    // The flags first, then the addresses: nothing is bound for a command refused.
    if let Some(linger) = args.linger {
        let shown = humantime::format_duration(linger);
        if linger > MAX_LINGER {
            return Err(UsageError::new(format!(
                "--linger {shown} is longer than a day: give at most 24h (Ctrl-C ends it sooner)"
            )));
        }
    }
    let metrics = args
        .metrics_listen
        .as_deref()
        .map(|a| address("--metrics-listen", a, port_offset))
        .transpose()?;
    let page = args
        .live
        .as_deref()
        .map(|a| address("--live", a, port_offset))
        .transpose()?;
    let mut listeners = Vec::new();
    match (metrics, page) {
        (Some(m), Some(p)) if m == p && m.port() != 0 => listeners.push(bind(
            "--live",
            m,
            Routes {
                metrics: true,
                page: true,
            },
        )?),
        (m, p) => {
            if let Some(m) = m {
                listeners.push(bind(
                    "--metrics-listen",
                    m,
                    Routes {
                        metrics: true,
                        page: false,
                    },
                )?);
            }
            if let Some(p) = p {
                listeners.push(bind(
                    "--live",
                    p,
                    Routes {
                        metrics: false,
                        page: true,
                    },
                )?);
            }
        }
    }
    let push = args
        .metrics_push
        .as_deref()
        .map(|url| PushTarget::parse(url, labels))
        .transpose()?;
    let linger = args.linger.unwrap_or(if args.live.is_some() {
        DEFAULT_LIVE_LINGER
    } else {
        Duration::ZERO
    });
    Ok(LiveSettings {
        listeners,
        push,
        linger,
    })
}

/// `PORT` (127.0.0.1), `HOST:PORT` or `[V6]:PORT`; `:PORT`, which other tools take for every
/// interface, is refused rather than read one way or the other.
pub fn address(flag: &str, text: &str, port_offset: u16) -> Result<SocketAddr, UsageError> {
    let bad = |why: &str| {
        UsageError::new(format!(
            "{flag} {text}: {why}; give HOST:PORT, e.g. 127.0.0.1:9464, or a port alone for 127.0.0.1"
        ))
    };
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let trimmed = text.trim();
    if let Some(port) = trimmed
        .strip_prefix(':')
        .filter(|p| p.parse::<u16>().is_ok())
    {
        // Elsewhere `:PORT` means every interface; here a port alone means loopback.
        return Err(UsageError::new(format!(
            "{flag} {text}: no host before the port; give {port} for 127.0.0.1 alone, or \
             0.0.0.0:{port} to serve every interface"
        )));
    }
    if trimmed.parse::<IpAddr>().is_ok_and(|ip| ip.is_ipv6()) {
        return Err(bad(
            "an IPv6 address without a port (write it [ADDRESS]:PORT, e.g. [::1]:9464)",
        ));
    }
    let mut addr = if let Ok(port) = trimmed.parse::<u16>() {
        SocketAddr::new(loopback, port)
    } else if let Ok(addr) = trimmed.parse::<SocketAddr>() {
        addr
    } else {
        let Some((host, port)) = trimmed.rsplit_once(':') else {
            return Err(bad("no port"));
        };
        if port.parse::<u16>().is_err() {
            return Err(bad(&format!("{port:?} is not a port")));
        }
        if host.is_empty() || host.contains(['/', ' ']) {
            return Err(bad("not an address"));
        }
        match trimmed.to_socket_addrs() {
            Ok(mut found) => found.next().ok_or_else(|| bad("the name has no address"))?,
            Err(_) => {
                return Err(bad(&format!(
                    "{host} is not an address or a name this machine knows"
                )))
            }
        }
    };
    if addr.port() != 0 {
        let port = addr
            .port()
            .checked_add(port_offset)
            .ok_or_else(|| bad("the port is too high for every worker's"))?;
        addr.set_port(port);
    }
    Ok(addr)
}

fn bind(flag: &str, addr: SocketAddr, routes: Routes) -> Result<Listener, UsageError> {
    match TcpListener::bind(addr) {
        Ok(socket) => Ok(Listener { socket, routes }),
        Err(e) => Err(UsageError::new(match e.kind() {
            std::io::ErrorKind::AddrInUse => format!("{flag} {addr}: the address is in use (another program listens there); choose another port"),
            std::io::ErrorKind::AddrNotAvailable => format!("{flag} {addr}: no interface of this machine has that address"),
            std::io::ErrorKind::PermissionDenied => format!("{flag} {addr}: not allowed to listen there (ports below 1024 need privileges)"),
            _ => format!("{flag} {addr}: cannot listen there: {e}"),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_alone_is_loopback_and_a_worker_moves_it() {
        assert_eq!(
            address("--live", "9464", 0).unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(
            address("--live", "9464", 2).unwrap(),
            "127.0.0.1:9466".parse().unwrap()
        );
        assert_eq!(
            address("--live", "127.0.0.5:80", 0).unwrap(),
            "127.0.0.5:80".parse().unwrap()
        );
        assert_eq!(
            address("--live", "[::1]:9464", 0).unwrap(),
            "[::1]:9464".parse().unwrap()
        );
        assert_eq!(address("--live", "localhost:9464", 0).unwrap().port(), 9464);
        assert_eq!(address("--live", "127.0.0.1:0", 3).unwrap().port(), 0);
    }

    #[test]
    fn a_malformed_address_is_refused() {
        for bad in [
            "",
            "x",
            "127.0.0.1",
            "127.0.0.1:99999",
            "a b:1",
            "127.0.0.1:x",
            "65535",
            ":9464",
            "::1",
            "fe80::1",
        ] {
            let offset = if bad == "65535" { 1 } else { 0 };
            assert!(address("--live", bad, offset).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_address_in_use_is_refused_in_one_line() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let e = bind(
            "--metrics-listen",
            addr,
            Routes {
                metrics: true,
                page: false,
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("in use"), "{e}");
        assert!(!e.to_string().contains('\n'));
    }
}
