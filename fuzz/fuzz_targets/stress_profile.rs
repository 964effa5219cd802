//! cassandra-stress user profiles: `is_stress_profile` and `Profile::parse`; a profile that
//! parses has its distributions drawn from, as a run would.
#![no_main]

use headroom::workload::stress::model::Profile;
use headroom::workload::stress::raw::is_stress_profile;
use libfuzzer_sys::fuzz_target;
use rand::rngs::SmallRng;
use rand::SeedableRng;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = is_stress_profile(text);
    let profile = match Profile::parse(text) {
        Ok(profile) => profile,
        Err(e) => {
            let message = unquoted(&e.to_string());
            for internal in [
                "untagged enum",
                "RawProfile",
                "RawColumn",
                "RawInsert",
                "RawQuery",
                "Scalar",
            ] {
                assert!(
                    // (unless the input spells them out itself, e.g. as an operation's name)
                    !message.contains(internal) || internal.split(' ').any(|w| text.contains(w)),
                    "serde's internals in the message for {text:?}: {message}"
                );
            }
            return;
        }
    };
    let _ = profile.op_names();
    let mut rng = SmallRng::seed_from_u64(7);
    for column in &profile.columns {
        for d in [&column.size, &column.population, &column.cluster] {
            for _ in 0..4 {
                let _ = d.sample(&mut rng);
                let _ = d.sample_f64(&mut rng);
            }
        }
    }
    for _ in 0..4 {
        let _ = profile.insert.partitions.sample(&mut rng);
        let _ = profile.insert.select.sample(&mut rng);
    }
});

/// The message without the parts it quotes from the input (`"..."`, `` `...` ``): the
/// wording around them is the parser's own.
fn unquoted(message: &str) -> String {
    let mut out = String::new();
    let mut quote = None;
    let mut escaped = false;
    for c in message.chars() {
        match quote {
            None if c == '"' || c == '`' => quote = Some(c),
            None => out.push(c),
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
        }
    }
    out
}
