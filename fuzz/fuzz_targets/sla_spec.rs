//! `--sla`: `Sla::parse`, and the canonical spelling of whatever parses must read back as
//! the same SLA (it names the terms in every output and in config.json).
#![no_main]

use std::time::Duration;

use headroom::sla::Sla;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sla = match Sla::parse(text, Duration::from_secs(10)) {
        Ok(sla) => sla,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let canonical = sla.to_string();
    let again = Sla::parse(&canonical, Duration::from_secs(10)).unwrap_or_else(|e| {
        panic!("the canonical form {canonical:?} of {text:?} does not parse: {e}")
    });
    assert_eq!(
        again, sla,
        "the canonical form {canonical:?} of {text:?} reads back as another SLA"
    );
});
