//! headroom's own workload format: `declarative::parse`; a file that parses has its
//! generators drawn from and its operation mix built, as `Declarative::prepare` and a run do
//! (everything of a run that needs no connection).
#![no_main]

use std::sync::OnceLock;

use headroom::workload::declarative;
use headroom::workload::declarative::values::Ctx;
use headroom::workload::common::generators::{request_rng, TextPool};
use headroom::workload::OpMix;
use libfuzzer_sys::fuzz_target;

fn pool() -> &'static TextPool {
    static POOL: OnceLock<TextPool> = OnceLock::new();
    POOL.get_or_init(|| TextPool::new(1))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let checked = match declarative::parse(text, "fuzz.yaml") {
        Ok(checked) => checked,
        Err(e) => {
            let message = unquoted(&e.to_string());
            for internal in [
                "untagged enum",
                "struct Spec",
                "OpSpec",
                "Populate",
                "CountText",
                "OrderedOps",
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
    let _ = checked.table();
    // As `Declarative::prepare`: the weights, normalised, make the mix.
    let weights: Vec<f64> = checked
        .spec
        .operations
        .0
        .iter()
        .map(|(_, o)| o.weight)
        .collect();
    let total: f64 = weights.iter().sum();
    let normalised: Vec<f64> = weights.iter().map(|w| w / total).collect();
    let mix = OpMix::new(&normalised);
    let named: Vec<_> = checked.named.iter().map(|(_, g)| g.clone()).collect();
    for seq in [0, 1, 2, u64::MAX / 2, u64::MAX] {
        let op = mix.op_for(seq);
        let mut ctx = Ctx::new(seq, request_rng(1, seq), pool(), &named);
        let checked_op = &checked.ops[op];
        if let Some(batch) = &checked_op.batch {
            let _ = batch.rows.draw(&mut ctx);
        }
        for statement in &checked_op.statements {
            for generator in &statement.args {
                let _ = generator.draw(&mut ctx);
            }
        }
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
