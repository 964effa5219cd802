//! `--hosts`: `client::parse_hosts` on the input split at commas, as clap splits the flag.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let hosts: Vec<String> = text.split(',').map(str::to_string).collect();
    match headroom::client::parse_hosts(&hosts) {
        Ok(parsed) => {
            assert_eq!(parsed.len(), hosts.len());
            // Each is something a driver can connect to: a host and a port above 0, the
            // host an IPv6 address in brackets or a name without colons.
            for h in &parsed {
                let (host, port) = h.rsplit_once(':').expect("host:port");
                assert!(
                    port.parse::<u16>().is_ok_and(|p| p > 0),
                    "{text:?} gave {h:?}"
                );
                assert!(
                    (host.starts_with('[') && host.ends_with(']')) || !host.contains(':'),
                    "{text:?} gave {h:?}"
                );
                assert!(
                    !host.is_empty() && !host.contains(char::is_whitespace),
                    "{text:?} gave {h:?}"
                );
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
