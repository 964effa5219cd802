//! serde's YAML errors in words a user of a workload file understands: serde names the
//! Rust types it expected ("expected struct RawProfile", "data did not match any variant of
//! untagged enum Populate"), which mean nothing to someone writing YAML, and it quotes the
//! offending value whole (a 1 MB line of junk, echoed to the terminal).

/// What each of headroom's YAML types is, for a person.
const TYPES: [(&str, &str); 10] = [
    (
        "struct RawProfile",
        "a cassandra-stress profile: a mapping of keyspace, table, columnspec, insert and \
         queries",
    ),
    (
        "struct Spec",
        "a workload file: a mapping of schema, generators, operations and populate",
    ),
    (
        "struct OpSpec",
        "an operation: a mapping of cql, args and weight",
    ),
    ("struct RawColumn", "a column's settings: a mapping"),
    ("struct RawInsert", "the insert settings: a mapping"),
    ("struct RawQuery", "a query: a mapping of cql and fields"),
    (
        "untagged enum Populate",
        "a count (populate: 100k) or a count and an operation (populate: {count: 100k, \
         operation: write})",
    ),
    ("untagged enum CountText", "a count, such as 1000 or 100k"),
    ("untagged enum Scalar", "a number or a text"),
    ("enum Scalar", "a number or a text"),
];

/// The longest value quoted from the file in a message.
const QUOTED: usize = 60;
/// The longest message.
const LONGEST: usize = 400;

/// serde's message for `e`, with headroom's type names said in words and long quoted values
/// cut short.
pub fn describe(e: &serde_yaml_ng::Error) -> String {
    readable(&e.to_string())
}

/// [`describe`] on a message's text.
pub fn readable(message: &str) -> String {
    let mut text = message.to_string();
    // "data did not match any variant of untagged enum X" says nothing of what to write.
    for (name, words) in TYPES {
        let untagged = format!("data did not match any variant of {name}");
        if text.contains(&untagged) {
            text = text.replace(&untagged, &format!("expected {words}"));
        }
        text = text.replace(name, words);
    }
    if text.starts_with("missing field `operations`") {
        text = text.replacen(
            "missing field `operations`",
            "no operations: a workload file names its operations under `operations:`, each \
             with its cql (docs/workloads.md)",
            1,
        );
    }
    crate::usage::cut(&cut_quoted(&text), LONGEST)
}

/// Each double-quoted value over [`QUOTED`] characters, cut.
fn cut_quoted(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let close = rest.find('"').unwrap_or(rest.len());
        out.push_str(&crate::usage::cut(&rest[..close], QUOTED));
        rest = &rest[close..];
        if let Some(stripped) = rest.strip_prefix('"') {
            out.push('"');
            rest = stripped;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_become_words_and_long_values_are_cut() {
        assert_eq!(
            readable("line 1: invalid type: sequence, expected struct RawProfile"),
            "line 1: invalid type: sequence, expected a cassandra-stress profile: a mapping of \
             keyspace, table, columnspec, insert and queries"
        );
        let m = readable("populate: data did not match any variant of untagged enum Populate");
        assert!(
            m.starts_with("populate: expected a count (populate: 100k)"),
            "{m}"
        );
        assert!(!m.contains("enum"), "{m}");
        let junk = format!(
            "invalid type: string \"{}\", expected struct Spec",
            "x".repeat(5000)
        );
        let m = readable(&junk);
        assert!(m.len() < 300, "{}", m.len());
        assert!(m.contains("(5000 characters)\""), "{m}");
        assert!(m.ends_with("expected a workload file: a mapping of schema, generators, operations and populate"), "{m}");
        // Nothing to change: as it was.
        assert_eq!(
            readable("line 3: unknown field `x`"),
            "line 3: unknown field `x`"
        );
    }
}
