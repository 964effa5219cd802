//! Names in CQL text: the keyspace and table a `CREATE TABLE` statement creates
//! ([`created_table`]), and a name as Cassandra keeps it ([`stored_name`]: lower-cased unless
//! double-quoted), for comparing names written in different places.
//!
//! Only the head of the statement is read (`CREATE TABLE [IF NOT EXISTS] [ks.]name`); what
//! follows, the columns and options, is the server's to check.

/// The names of the table a `CREATE TABLE` statement creates, as written (quotes kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatedTable<'a> {
    /// The keyspace, when the statement qualifies the table (`CREATE TABLE ks.t`).
    pub keyspace: Option<&'a str>,
    /// The table.
    pub table: &'a str,
}

/// The table `statement` creates; None when it is not a `CREATE TABLE` (or the older
/// spelling `CREATE COLUMNFAMILY`) or names no table.
pub fn created_table(statement: &str) -> Option<CreatedTable<'_>> {
    let mut rest = keyword(statement, "CREATE")?;
    rest = keyword(rest, "TABLE").or_else(|| keyword(rest, "COLUMNFAMILY"))?;
    if let Some(after_if) = keyword(rest, "IF") {
        rest = keyword(keyword(after_if, "NOT")?, "EXISTS")?;
    }
    let (first, rest) = name(rest)?;
    match rest.trim_start().strip_prefix('.') {
        Some(after_dot) => {
            let (table, _) = name(after_dot)?;
            Some(CreatedTable {
                keyspace: Some(first),
                table,
            })
        }
        None => Some(CreatedTable {
            keyspace: None,
            table: first,
        }),
    }
}

/// A name as Cassandra keeps it: a double-quoted name without its quotes (`""` standing
/// for one), keeping its case; any other lower-cased, as CQL reads an unquoted name.
pub fn stored_name(written: &str) -> String {
    match written
        .strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
    {
        Some(inner) => inner.replace("\"\"", "\""),
        _ => written.to_lowercase(),
    }
}

/// The text after the word `word` (any case) that `text` starts with, after blanks; None
/// when it starts with another word.
fn keyword<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    let text = text.trim_start();
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    text[..end].eq_ignore_ascii_case(word).then(|| &text[end..])
}

/// The name `text` starts with, after blanks, as written, and the text after it: a
/// double-quoted name (`""` inside standing for a quote), or the characters up to a blank,
/// a dot, a parenthesis, a quote or a semicolon.
fn name(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start();
    let end = if text.starts_with('"') {
        let mut chars = text.char_indices().skip(1).peekable();
        loop {
            let (i, c) = chars.next()?;
            if c == '"' {
                if chars.peek().is_some_and(|&(_, next)| next == '"') {
                    chars.next();
                } else {
                    break i + 1;
                }
            }
        }
    } else {
        text.find(|c: char| c.is_whitespace() || matches!(c, '.' | '(' | '"' | ';'))
            .unwrap_or(text.len())
    };
    (end > 0).then(|| text.split_at(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(statement: &str) -> Option<(Option<&str>, &str)> {
        created_table(statement).map(|t| (t.keyspace, t.table))
    }

    #[test]
    fn the_table_and_its_keyspace_are_read_as_written() {
        assert_eq!(
            names("CREATE TABLE t (k int PRIMARY KEY)"),
            Some((None, "t"))
        );
        assert_eq!(
            names("  create table IF not EXISTS ks.Events(k int PRIMARY KEY)"),
            Some((Some("ks"), "Events"))
        );
        assert_eq!(
            names("CREATE TABLE {keyspace}.kv (k text PRIMARY KEY)"),
            Some((Some("{keyspace}"), "kv"))
        );
        assert_eq!(
            names("CREATE TABLE \"My.Ks\" . \"a \"\"b\"\"\" (k int PRIMARY KEY)"),
            Some((Some("\"My.Ks\""), "\"a \"\"b\"\"\""))
        );
        assert_eq!(
            names("CREATE\n  TABLE\tposts\n(k int PRIMARY KEY)"),
            Some((None, "posts"))
        );
        assert_eq!(
            names("CREATE COLUMNFAMILY t (k int PRIMARY KEY)"),
            Some((None, "t"))
        );
        assert_eq!(names("CREATE TABLE t"), Some((None, "t")));
    }

    #[test]
    fn other_statements_create_no_table() {
        for statement in [
            "CREATE INDEX ON t (v)",
            "CREATE TABLES t (k int PRIMARY KEY)",
            "CREATE TABLE IF EXISTS t (k int PRIMARY KEY)",
            "CREATE TABLE (k int PRIMARY KEY)",
            "CREATE TABLE ks. (k int PRIMARY KEY)",
            "CREATE TABLE \"unclosed (k int PRIMARY KEY)",
            "CREATE KEYSPACE ks WITH replication = {}",
            "SELECT * FROM t",
            "",
        ] {
            assert_eq!(created_table(statement), None, "{statement}");
        }
    }

    #[test]
    fn a_quoted_name_keeps_its_case_and_others_are_lower_cased() {
        assert_eq!(stored_name("Posts"), "posts");
        assert_eq!(stored_name("\"Posts\""), "Posts");
        assert_eq!(stored_name("\"a \"\"b\"\"\""), "a \"b\"");
        assert_eq!(stored_name("\""), "\"");
    }
}
