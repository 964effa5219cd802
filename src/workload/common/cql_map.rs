//! CQL map literals as `--replication` and `--compaction` take them, e.g.
//! `{'class': 'NetworkTopologyStrategy', 'dc1': 3}`: read and checked here, so that a typo is
//! one line naming the flag before anything connects, not a syntax error from the server
//! after the schema's first statement (and never a way to smuggle other CQL in).
//!
//! Hand-written: the grammar is a brace, quoted keys, values that are quoted strings, numbers
//! or booleans, commas and a brace. A CQL parser crate would bring a whole language for it.

/// A value of a map entry.
#[derive(Debug, Clone, PartialEq)]
pub enum MapValue {
    /// A quoted string, unescaped.
    Text(String),
    /// A number, as written.
    Number(String),
    /// `true` or `false`.
    Bool(bool),
}

impl MapValue {
    /// The value as text: a string's contents, a number or boolean as written.
    pub fn as_text(&self) -> String {
        match self {
            MapValue::Text(t) | MapValue::Number(t) => t.clone(),
            MapValue::Bool(b) => b.to_string(),
        }
    }

    /// The value in CQL: strings quoted (quotes doubled), numbers and booleans as they are.
    fn to_cql(&self) -> String {
        match self {
            MapValue::Text(t) => quote(t),
            MapValue::Number(n) => n.clone(),
            MapValue::Bool(b) => b.to_string(),
        }
    }
}

/// A CQL string literal.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// A CQL map literal's entries, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct CqlMap(pub Vec<(String, MapValue)>);

impl CqlMap {
    /// Reads `{'key': value, ...}`; the error says what is wrong and where (a character
    /// offset into `text`).
    pub fn parse(text: &str) -> Result<CqlMap, String> {
        let mut p = Parser {
            chars: text.char_indices().collect(),
            at: 0,
        };
        p.skip_spaces();
        p.expect('{')?;
        let mut entries: Vec<(String, MapValue)> = Vec::new();
        p.skip_spaces();
        if p.peek() == Some('}') {
            p.at += 1;
        } else {
            loop {
                p.skip_spaces();
                let key_at = p.offset();
                let key = p
                    .string()
                    .map_err(|e| format!("{e}: keys are quoted, as in 'class'"))?;
                if entries.iter().any(|(k, _)| k.eq_ignore_ascii_case(&key)) {
                    return Err(format!("the key '{key}' is given twice (at {key_at})"));
                }
                p.skip_spaces();
                p.expect(':')?;
                p.skip_spaces();
                let value = p.value()?;
                entries.push((key, value));
                p.skip_spaces();
                match p.next() {
                    Some(',') => continue,
                    Some('}') => break,
                    Some(c) => {
                        return Err(format!(
                            "expected ',' or '}}' at {}, found '{c}'",
                            p.offset() - c.len_utf8()
                        ))
                    }
                    None => return Err("the map is not closed: a '}' is missing".to_string()),
                }
            }
        }
        p.skip_spaces();
        if let Some(c) = p.peek() {
            return Err(format!(
                "'{c}' at {} after the map's closing '}}'",
                p.offset()
            ));
        }
        Ok(CqlMap(entries))
    }

    /// The value of `key` (keys compare without case, as Cassandra's options do).
    pub fn get(&self, key: &str) -> Option<&MapValue> {
        self.0
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    }

    /// The map in CQL, with every string quoted anew.
    pub fn to_cql(&self) -> String {
        let entries: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| format!("{}: {}", quote(k), v.to_cql()))
            .collect();
        format!("{{{}}}", entries.join(", "))
    }
}

struct Parser {
    chars: Vec<(usize, char)>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).map(|&(_, c)| c)
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    /// The byte offset of the next character.
    fn offset(&self) -> usize {
        self.chars.get(self.at).map_or_else(
            || self.chars.last().map_or(0, |&(i, c)| i + c.len_utf8()),
            |&(i, _)| i,
        )
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn expect(&mut self, wanted: char) -> Result<(), String> {
        let at = self.offset();
        match self.next() {
            Some(c) if c == wanted => Ok(()),
            Some(c) => Err(format!("expected '{wanted}' at {at}, found '{c}'")),
            None => Err(format!("expected '{wanted}' at {at}, found the end")),
        }
    }

    /// A single-quoted string, `''` standing for a quote.
    fn string(&mut self) -> Result<String, String> {
        let at = self.offset();
        if self.peek() != Some('\'') {
            return Err(format!("expected a quoted string at {at}"));
        }
        self.at += 1;
        let mut out = String::new();
        loop {
            match self.next() {
                Some('\'') if self.peek() == Some('\'') => {
                    self.at += 1;
                    out.push('\'');
                }
                Some('\'') => return Ok(out),
                Some(c) => out.push(c),
                None => return Err(format!("the string opened at {at} is not closed")),
            }
        }
    }

    fn value(&mut self) -> Result<MapValue, String> {
        let at = self.offset();
        match self.peek() {
            Some('\'') => self.string().map(MapValue::Text),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '.' => {
                let mut number = String::new();
                while let Some(c) = self
                    .peek()
                    .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
                {
                    number.push(c);
                    self.at += 1;
                }
                number
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .map(|_| MapValue::Number(number.clone()))
                    .ok_or_else(|| format!("'{number}' at {at} is not a number"))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let mut word = String::new();
                while let Some(c) = self
                    .peek()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    word.push(c);
                    self.at += 1;
                }
                match word.to_ascii_lowercase().as_str() {
                    "true" => Ok(MapValue::Bool(true)),
                    "false" => Ok(MapValue::Bool(false)),
                    _ => Err(format!(
                        "'{word}' at {at} is not a value: quote strings, as in '{word}'"
                    )),
                }
            }
            Some(c) => Err(format!("expected a value at {at}, found '{c}'")),
            None => Err(format!("expected a value at {at}, found the end")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_read_and_print_back() {
        let map =
            CqlMap::parse(" { 'class' : 'NetworkTopologyStrategy', 'dc1': 3,'dc2':2 } ").unwrap();
        assert_eq!(
            map.to_cql(),
            "{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2}"
        );
        assert_eq!(
            map.get("CLASS").unwrap().as_text(),
            "NetworkTopologyStrategy"
        );
        let map = CqlMap::parse("{'class': 'TimeWindow''s', 'enabled': true, 'x': 0.5}").unwrap();
        assert_eq!(
            map.get("class"),
            Some(&MapValue::Text("TimeWindow's".into()))
        );
        assert_eq!(
            map.to_cql(),
            "{'class': 'TimeWindow''s', 'enabled': true, 'x': 0.5}"
        );
        assert_eq!(CqlMap::parse("{}").unwrap().0, []);
    }

    #[test]
    fn a_malformed_map_says_what_and_where() {
        for (text, expected) in [
            ("{'class': 'Simple'", "not closed"),
            ("{'class' 'Simple'}", "expected ':' at 9"),
            ("{class: 'Simple'}", "keys are quoted"),
            ("{'class': Simple}", "'Simple' at 10 is not a value"),
            ("{'class': 'Simple}", "not closed"),
            ("{'a': 1} DROP KEYSPACE x", "after the map's closing"),
            ("{'a': 1, 'A': 2}", "given twice"),
            ("{'a': 1e999}", "is not a number"),
            ("'a': 1", "expected '{' at 0"),
            ("", "found the end"),
            ("{'a': 1; 'b': 2}", "expected ',' or '}' at 7"),
        ] {
            let e = CqlMap::parse(text).unwrap_err();
            assert!(e.contains(expected), "{text:?}: {e}");
        }
    }
}
