//! The table's columns and their CQL types ([`Column`], [`CqlType`]), and the reading of a
//! column's type as system_schema writes it (`frozen<map<text, frozen<list<int>>>>`,
//! `tuple<int, text>`, `vector<float, 3>`, a user type's name) into a [`CqlType`].
//!
//! A user-defined type is resolved through the keyspace's rows of system_schema.types, read
//! once before the table's columns; its fields are types of the same grammar, so user types
//! nest. `frozen<...>` changes how Cassandra stores a value, not the value: it is read through.

use crate::workload::common::schema::ColumnKind;
pub use crate::workload::common::schema::UserTypes;

/// The CQL types headroom generates values for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CqlType {
    /// text, varchar
    Text,
    /// ascii
    Ascii,
    /// int
    Int,
    /// bigint
    BigInt,
    /// smallint
    SmallInt,
    /// tinyint
    TinyInt,
    /// float
    Float,
    /// double
    Double,
    /// boolean
    Boolean,
    /// uuid
    Uuid,
    /// timeuuid
    TimeUuid,
    /// timestamp
    Timestamp,
    /// date
    Date,
    /// time
    Time,
    /// blob
    Blob,
    /// inet
    Inet,
    /// decimal
    Decimal,
    /// varint
    Varint,
    /// duration
    Duration,
    /// counter: the value is an increment, drawn as a bigint's
    Counter,
    /// list<T>, frozen or not
    List(Box<CqlType>),
    /// set<T>, frozen or not
    Set(Box<CqlType>),
    /// map<K, V>, frozen or not
    Map(Box<CqlType>, Box<CqlType>),
    /// tuple<T1, T2, ...>
    Tuple(Vec<CqlType>),
    /// A user-defined type, with its fields.
    Udt(Box<UserType>),
    /// vector<T, N> (Cassandra 5.0): N values of T.
    Vector(Box<CqlType>, usize),
}

/// A user-defined type, as system_schema.types describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserType {
    /// Its keyspace.
    pub keyspace: String,
    /// Its name.
    pub name: String,
    /// Its fields in order: name and type.
    pub fields: Vec<(String, CqlType)>,
}

/// The types [`CqlType::parse`] accepts, for messages.
pub const SUPPORTED_TYPES: &str = "text, varchar, ascii, int, bigint, smallint, tinyint, float, double, boolean, uuid, timeuuid, timestamp, date, time, blob, inet, decimal, varint, duration, counter";

/// The types built of others, which `types::parse_type` reads, for messages.
pub const COMPOSITE_TYPES: &str =
    "list, set, map (frozen or not), tuple, user-defined types, vector";

impl CqlType {
    /// A type without parameters as system_schema.columns writes it; None for the others
    /// (see `types::parse_type` for collections, tuples, user types and vectors).
    pub fn parse(name: &str) -> Option<CqlType> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "text" | "varchar" => CqlType::Text,
            "ascii" => CqlType::Ascii,
            "int" => CqlType::Int,
            "bigint" => CqlType::BigInt,
            "smallint" => CqlType::SmallInt,
            "tinyint" => CqlType::TinyInt,
            "float" => CqlType::Float,
            "double" => CqlType::Double,
            "boolean" => CqlType::Boolean,
            "uuid" => CqlType::Uuid,
            "timeuuid" => CqlType::TimeUuid,
            "timestamp" => CqlType::Timestamp,
            "date" => CqlType::Date,
            "time" => CqlType::Time,
            "blob" => CqlType::Blob,
            "inet" => CqlType::Inet,
            "decimal" => CqlType::Decimal,
            "varint" => CqlType::Varint,
            "duration" => CqlType::Duration,
            "counter" => CqlType::Counter,
            _ => return None,
        })
    }
}

/// One column of the table, as read from system_schema.
#[derive(Debug, Clone)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: ColumnKind,
    /// Its type.
    pub ty: CqlType,
}

/// Deeper nesting than this is refused, so a type naming itself cannot loop.
const MAX_DEPTH: usize = 32;

/// Reads `text` (a type of keyspace `keyspace`) into a [`CqlType`]; the error says which part
/// cannot be generated (a counter inside another type, an unknown name).
pub fn parse_type(text: &str, keyspace: &str, udts: &UserTypes) -> Result<CqlType, String> {
    // A counter is a column's whole type: its value is an increment (see `rows`).
    if text.trim().eq_ignore_ascii_case("counter") {
        return Ok(CqlType::Counter);
    }
    parse_at(text, keyspace, udts, 0)
}

fn parse_at(text: &str, keyspace: &str, udts: &UserTypes, depth: usize) -> Result<CqlType, String> {
    let mut parser = Parser {
        text,
        at: 0,
        keyspace,
        udts,
    };
    let ty = parser.ty(depth)?;
    parser.skip_space();
    if parser.at != text.len() {
        return Err(format!("unexpected '{}'", &text[parser.at..]));
    }
    Ok(ty)
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
    keyspace: &'a str,
    udts: &'a UserTypes,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.text[self.at..].starts_with(char::is_whitespace) {
            self.at += 1;
        }
    }

    /// A name: letters, digits, underscores, or a double-quoted name.
    fn name(&mut self) -> Result<String, String> {
        self.skip_space();
        let rest = &self.text[self.at..];
        if let Some(quoted) = rest.strip_prefix('"') {
            // "" inside a quoted name is one quote.
            let mut name = String::new();
            let mut chars = quoted.char_indices();
            while let Some((i, c)) = chars.next() {
                if c == '"' {
                    if quoted[i + 1..].starts_with('"') {
                        name.push('"');
                        chars.next();
                        continue;
                    }
                    self.at += i + 2;
                    return Ok(name);
                }
                name.push(c);
            }
            return Err(format!("unclosed quote in '{}'", self.text));
        }
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(format!("a type name expected at '{rest}'"));
        }
        self.at += len;
        Ok(rest[..len].to_string())
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        self.skip_space();
        if self.text[self.at..].starts_with(c) {
            self.at += c.len_utf8();
            Ok(())
        } else {
            Err(format!(
                "'{c}' expected at '{}' in '{}'",
                &self.text[self.at..],
                self.text
            ))
        }
    }

    fn peek(&mut self, c: char) -> bool {
        self.skip_space();
        self.text[self.at..].starts_with(c)
    }

    /// Types between `<` and `>`, separated by commas.
    fn arguments(&mut self, depth: usize) -> Result<Vec<CqlType>, String> {
        self.expect('<')?;
        let mut types = vec![self.ty(depth + 1)?];
        while self.peek(',') {
            self.expect(',')?;
            types.push(self.ty(depth + 1)?);
        }
        self.expect('>')?;
        Ok(types)
    }

    fn ty(&mut self, depth: usize) -> Result<CqlType, String> {
        if depth > MAX_DEPTH {
            return Err(format!("'{}' nests too deep", self.text));
        }
        let name = self.name()?;
        let lower = name.to_ascii_lowercase();
        let whole = self.text;
        let one = |mut types: Vec<CqlType>, what: &str| {
            if types.len() == 1 {
                Ok(Box::new(types.remove(0)))
            } else {
                Err(format!("{what} takes one type, in '{whole}'"))
            }
        };
        match lower.as_str() {
            "frozen" => {
                let inner = self.arguments(depth)?;
                Ok(*one(inner, "frozen")?)
            }
            "list" => Ok(CqlType::List(one(self.arguments(depth)?, "list")?)),
            "set" => Ok(CqlType::Set(one(self.arguments(depth)?, "set")?)),
            "map" => {
                let mut kv = self.arguments(depth)?;
                if kv.len() != 2 {
                    return Err(format!("map takes two types, in '{}'", self.text));
                }
                let value = kv.pop().expect("two");
                let key = kv.pop().expect("two");
                Ok(CqlType::Map(Box::new(key), Box::new(value)))
            }
            "tuple" => Ok(CqlType::Tuple(self.arguments(depth)?)),
            "vector" => {
                self.expect('<')?;
                let element = self.ty(depth + 1)?;
                self.expect(',')?;
                self.skip_space();
                let rest = &self.text[self.at..];
                let len = rest
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(rest.len());
                let dimension: usize = rest[..len]
                    .parse()
                    .map_err(|_| format!("a vector's dimension expected in '{}'", self.text))?;
                self.at += len;
                self.expect('>')?;
                if dimension == 0 {
                    return Err(format!("'{}' has no dimension", self.text));
                }
                Ok(CqlType::Vector(Box::new(element), dimension))
            }
            "counter" => Err("counter".to_string()),
            _ => {
                if let Some(simple) = CqlType::parse(&lower) {
                    return Ok(simple);
                }
                // A user type: of this keyspace, or named `ks.type`.
                let (keyspace, type_name) = match name.split_once('.') {
                    Some((ks, t)) if ks == self.keyspace => (ks.to_string(), t.to_string()),
                    Some(_) => return Err(format!("{name} (a type of another keyspace)")),
                    None => (self.keyspace.to_string(), name.clone()),
                };
                let Some((field_names, field_types)) = self.udts.get(&type_name) else {
                    return Err(format!("{name} (no such type in keyspace {keyspace})"));
                };
                let mut fields = Vec::with_capacity(field_names.len());
                for (field, text) in field_names.iter().zip(field_types) {
                    let inner =
                        parse_at(text, self.keyspace, self.udts, depth + 1).map_err(|e| {
                            // The innermost field says where; the chain above it adds nothing.
                            if e.contains("(field ") {
                                e
                            } else {
                                format!("{e} (field {field} of type {type_name})")
                            }
                        })?;
                    fields.push((field.clone(), inner));
                }
                Ok(CqlType::Udt(Box::new(UserType {
                    keyspace,
                    name: type_name,
                    fields,
                })))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udts() -> UserTypes {
        let mut udts = UserTypes::new();
        udts.insert(
            "address".into(),
            (
                vec!["street".into(), "zip".into(), "tags".into()],
                vec!["text".into(), "int".into(), "frozen<set<text>>".into()],
            ),
        );
        udts.insert(
            "person".into(),
            (
                vec!["name".into(), "home".into()],
                vec!["text".into(), "frozen<address>".into()],
            ),
        );
        udts.insert(
            "looping".into(),
            (vec!["me".into()], vec!["frozen<looping>".into()]),
        );
        udts
    }

    fn parse(text: &str) -> Result<CqlType, String> {
        parse_type(text, "ks", &udts())
    }

    #[test]
    fn collections_tuples_and_vectors_read_through_frozen() {
        let int = || Box::new(CqlType::Int);
        assert_eq!(parse("list<int>"), Ok(CqlType::List(int())));
        assert_eq!(parse("frozen<set<int>>"), Ok(CqlType::Set(int())));
        assert_eq!(
            parse("map<text, frozen<list<int>>>"),
            Ok(CqlType::Map(
                Box::new(CqlType::Text),
                Box::new(CqlType::List(int()))
            ))
        );
        assert_eq!(
            parse("tuple<int, text, boolean>"),
            Ok(CqlType::Tuple(vec![
                CqlType::Int,
                CqlType::Text,
                CqlType::Boolean
            ]))
        );
        assert_eq!(
            parse("vector<float, 3>"),
            Ok(CqlType::Vector(Box::new(CqlType::Float), 3))
        );
        assert_eq!(parse("duration"), Ok(CqlType::Duration));
    }

    #[test]
    fn user_types_resolve_their_fields_and_nest() {
        let Ok(CqlType::Udt(person)) = parse("frozen<person>") else {
            panic!("{:?}", parse("frozen<person>"));
        };
        assert_eq!(
            (person.keyspace.as_str(), person.name.as_str()),
            ("ks", "person")
        );
        let CqlType::Udt(home) = &person.fields[1].1 else {
            panic!("{person:?}");
        };
        assert_eq!(
            home.fields[2],
            ("tags".to_string(), CqlType::Set(Box::new(CqlType::Text)))
        );
        assert!(parse("ks.address").is_ok());
    }

    #[test]
    fn what_cannot_be_generated_is_named() {
        assert_eq!(parse("counter"), Ok(CqlType::Counter));
        assert!(parse("list<counter>").is_err());
        assert!(parse("frozen<nosuch>")
            .unwrap_err()
            .contains("no such type in keyspace ks"));
        assert!(parse("other.address")
            .unwrap_err()
            .contains("another keyspace"));
        assert!(parse("frozen<looping>").unwrap_err().contains("too deep"));
        assert!(parse("vector<float, 0>").is_err());
        assert!(parse("map<int>").is_err());
        assert!(parse("list<int").is_err());
    }
}
