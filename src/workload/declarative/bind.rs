//! Generators meet the CQL types of the variables they are bound to: when the statements are
//! prepared, [`bind`] checks each generator against its variable's type (as the server
//! describes it in the prepared statement's metadata, nested types and user types' fields
//! included) and replaces `default` and left-out elements by the type's default generator;
//! for each request, [`convert`] turns a drawn value into the type's value.

use std::net::{IpAddr, Ipv4Addr};

use scylla::frame::response::result::{CollectionType, ColumnType, NativeType};
use scylla::value::{
    Counter, CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue,
    CqlVarint,
};

use super::values::{Drawn, Generator, Kind};

const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// `typ` as CQL writes it: `list<frozen<tuple<int, text>>>`.
pub fn type_name(typ: &ColumnType<'_>) -> String {
    match typ {
        ColumnType::Native(n) => format!("{n:?}").to_ascii_lowercase(),
        ColumnType::Collection { frozen, typ } => {
            let inner = match typ {
                CollectionType::List(e) => format!("list<{}>", type_name(e)),
                CollectionType::Set(e) => format!("set<{}>", type_name(e)),
                CollectionType::Map(k, v) => format!("map<{}, {}>", type_name(k), type_name(v)),
                _ => "collection".to_string(),
            };
            if *frozen {
                format!("frozen<{inner}>")
            } else {
                inner
            }
        }
        ColumnType::Vector { typ, dimensions } => {
            format!("vector<{}, {dimensions}>", type_name(typ))
        }
        ColumnType::UserDefinedType { definition, .. } => definition.name.to_string(),
        ColumnType::Tuple(items) => format!(
            "tuple<{}>",
            items.iter().map(type_name).collect::<Vec<_>>().join(", ")
        ),
        _ => format!("{typ:?}"),
    }
}

/// The generator `default` stands for in a variable of type `typ`.
pub fn default_for(typ: &ColumnType<'_>) -> Result<Generator, String> {
    let uniform = |min, max| Generator::Uniform { min, max };
    Ok(match typ {
        ColumnType::Native(n) => match n {
            NativeType::TinyInt => uniform(0, i64::from(i8::MAX)),
            NativeType::SmallInt => uniform(0, i64::from(i16::MAX)),
            NativeType::Int | NativeType::BigInt | NativeType::Varint | NativeType::Counter => {
                uniform(0, 999_999)
            }
            NativeType::Float | NativeType::Double => Generator::UniformReal { min: 0.0, max: 1.0 },
            NativeType::Decimal => Generator::Decimal {
                unscaled: Box::new(uniform(0, 999_999)),
                scale: 2,
            },
            NativeType::Boolean => uniform(0, 1),
            NativeType::Text | NativeType::Ascii => Generator::Text { min: 10, max: 10 },
            NativeType::Blob => Generator::Text { min: 16, max: 16 },
            NativeType::Uuid => Generator::Uuid,
            NativeType::Timeuuid => Generator::Timeuuid,
            NativeType::Timestamp | NativeType::Date | NativeType::Time => {
                Generator::Timestamp { offset_ms: 0 }
            }
            NativeType::Inet => Generator::Inet {
                network: IpAddr::from([0, 0, 0, 0]),
                prefix: 0,
            },
            NativeType::Duration => Generator::Duration {
                min_ns: 0,
                max_ns: 3_600_000_000_000,
            },
            other => return Err(format!("headroom has no default for type {other:?}")),
        },
        ColumnType::Collection {
            typ: CollectionType::List(_),
            ..
        } => Generator::List {
            count: Box::new(uniform(1, 5)),
            element: Box::new(Generator::Default),
        },
        ColumnType::Collection {
            typ: CollectionType::Set(_),
            ..
        } => Generator::Set {
            count: Box::new(uniform(1, 5)),
            element: Box::new(Generator::Default),
        },
        ColumnType::Collection {
            typ: CollectionType::Map(..),
            ..
        } => Generator::Map {
            count: Box::new(uniform(1, 5)),
            key: Box::new(Generator::Default),
            value: Box::new(Generator::Default),
        },
        ColumnType::Vector { .. } => Generator::Vector(Box::new(Generator::Default)),
        ColumnType::Tuple(_) => Generator::Tuple(Vec::new()),
        ColumnType::UserDefinedType { .. } => Generator::Udt(Vec::new()),
        other => return Err(format!("headroom has no default for type {other:?}")),
    })
}

/// Checks `g` against a variable of type `typ` and returns it ready to draw: `default`
/// replaced by the type's generator, a user type's fields in the type's order, a vector's
/// length its dimension. `named` are the named generators, already bound.
pub fn bind(g: &Generator, typ: &ColumnType<'_>, named: &[Generator]) -> Result<Generator, String> {
    let element_of =
        |what: &str, r: Result<Generator, String>| r.map_err(|e| format!("{what}: {e}"));
    match (g, typ) {
        (Generator::Default, _) => bind(&default_for(typ)?, typ, named),
        (Generator::Named(k), _) => {
            // Drawn once per request, then converted at each use: each use's type must take
            // its value.
            bind(&named[*k], typ, named)?;
            Ok(g.clone())
        }
        (
            Generator::List { count, element } | Generator::Set { count, element },
            ColumnType::Collection {
                typ: CollectionType::List(e) | CollectionType::Set(e),
                ..
            },
        ) => {
            let element = Box::new(element_of("its elements", bind(element, e, named))?);
            let count = count.clone();
            Ok(match g {
                Generator::List { .. } => Generator::List { count, element },
                _ => Generator::Set { count, element },
            })
        }
        (
            Generator::List { count, element } | Generator::Set { count, element },
            ColumnType::Vector { typ: e, dimensions },
        ) => {
            if **count != Generator::Const(i64::from(*dimensions)) {
                return Err(format!(
                    "a vector has exactly {dimensions} elements: write vector(...) or a count of {dimensions}"
                ));
            }
            let element = Box::new(element_of("its elements", bind(element, e, named))?);
            Ok(Generator::List {
                count: count.clone(),
                element,
            })
        }
        (Generator::Vector(element), ColumnType::Vector { typ: e, dimensions }) => {
            Ok(Generator::List {
                count: Box::new(Generator::Const(i64::from(*dimensions))),
                element: Box::new(element_of("its elements", bind(element, e, named))?),
            })
        }
        (Generator::VectorFile { file, .. }, ColumnType::Vector { typ: e, dimensions }) => {
            if file.dim() != usize::from(*dimensions) {
                return Err(format!(
                    "the vector file {} holds vectors of dimension {}, not {dimensions}",
                    file.written,
                    file.dim()
                ));
            }
            if convert(Drawn::Real(0.0), e).is_none() {
                return Err(format!(
                    "its elements: a vector file's components are real numbers, which cannot be a {}",
                    type_name(e)
                ));
            }
            Ok(g.clone())
        }
        (Generator::VectorFile { file, .. }, _) => Err(format!(
            "the vectors of {} bind to a vector<float, {}>, not a {}",
            file.written,
            file.dim(),
            type_name(typ)
        )),
        (
            Generator::Map { count, key, value },
            ColumnType::Collection {
                typ: CollectionType::Map(k, v),
                ..
            },
        ) => Ok(Generator::Map {
            count: count.clone(),
            key: Box::new(element_of("its keys", bind(key, k, named))?),
            value: Box::new(element_of("its values", bind(value, v, named))?),
        }),
        (Generator::Tuple(items), ColumnType::Tuple(types)) => {
            if items.is_empty() {
                return types
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        element_of(
                            &format!("component {}", i + 1),
                            bind(&Generator::Default, t, named),
                        )
                    })
                    .collect::<Result<_, _>>()
                    .map(Generator::Tuple);
            }
            if items.len() != types.len() {
                return Err(format!(
                    "the tuple has {} components but the generator {}",
                    types.len(),
                    items.len()
                ));
            }
            items
                .iter()
                .zip(types)
                .enumerate()
                .map(|(i, (g, t))| element_of(&format!("component {}", i + 1), bind(g, t, named)))
                .collect::<Result<_, _>>()
                .map(Generator::Tuple)
        }
        (Generator::Udt(fields), ColumnType::UserDefinedType { definition, .. }) => {
            for (name, _) in fields {
                if !definition.field_types.iter().any(|(f, _)| f == name) {
                    return Err(format!(
                        "type {} has no field '{name}'; its fields are {}",
                        definition.name,
                        definition
                            .field_types
                            .iter()
                            .map(|(f, _)| f.as_ref())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            definition
                .field_types
                .iter()
                .map(|(name, t)| {
                    let given = fields.iter().find(|(f, _)| f == name).map(|(_, g)| g);
                    let bound = element_of(
                        &format!("field {name}"),
                        bind(given.unwrap_or(&Generator::Default), t, named),
                    )?;
                    Ok((name.to_string(), bound))
                })
                .collect::<Result<_, String>>()
                .map(Generator::Udt)
        }
        _ => {
            let kind = g.kind(named).unwrap_or(Kind::Composite);
            match kind.probe() {
                Some(probe) if convert(probe.clone(), typ).is_some() => Ok(g.clone()),
                _ => Err(format!("{} cannot be a {}", kind.name(), type_name(typ))),
            }
        }
    }
}

/// Converts a drawn value to a variable of CQL type `typ`; `None` when that cannot be done.
pub fn convert(drawn: Drawn<'_>, typ: &ColumnType<'_>) -> Option<CqlValue> {
    let native = match typ {
        ColumnType::Native(native) => native,
        ColumnType::Collection { typ, .. } => {
            return match (drawn, typ) {
                (Drawn::List(items), CollectionType::List(e)) => Some(CqlValue::List(
                    items
                        .into_iter()
                        .map(|i| convert(i, e))
                        .collect::<Option<_>>()?,
                )),
                (Drawn::List(items), CollectionType::Set(e)) => Some(CqlValue::Set(
                    items
                        .into_iter()
                        .map(|i| convert(i, e))
                        .collect::<Option<_>>()?,
                )),
                (Drawn::Map(entries), CollectionType::Map(k, v)) => Some(CqlValue::Map(
                    entries
                        .into_iter()
                        .map(|(a, b)| Some((convert(a, k)?, convert(b, v)?)))
                        .collect::<Option<_>>()?,
                )),
                _ => None,
            }
        }
        ColumnType::Vector { typ, dimensions } => {
            return match drawn {
                Drawn::List(items) if items.len() == usize::from(*dimensions) => {
                    Some(CqlValue::Vector(
                        items
                            .into_iter()
                            .map(|i| convert(i, typ))
                            .collect::<Option<_>>()?,
                    ))
                }
                _ => None,
            }
        }
        ColumnType::Tuple(types) => {
            return match drawn {
                Drawn::Tuple(items) if items.len() == types.len() => Some(CqlValue::Tuple(
                    items
                        .into_iter()
                        .zip(types)
                        .map(|(i, t)| convert(i, t).map(Some))
                        .collect::<Option<_>>()?,
                )),
                _ => None,
            }
        }
        ColumnType::UserDefinedType { definition, .. } => {
            return match drawn {
                Drawn::Tuple(items) if items.len() == definition.field_types.len() => {
                    Some(CqlValue::UserDefinedType {
                        keyspace: definition.keyspace.to_string(),
                        name: definition.name.to_string(),
                        fields: items
                            .into_iter()
                            .zip(&definition.field_types)
                            .map(|(i, (name, t))| Some((name.to_string(), Some(convert(i, t)?))))
                            .collect::<Option<_>>()?,
                    })
                }
                _ => None,
            }
        }
        _ => return None,
    };
    Some(match (drawn, native) {
        (Drawn::Int(v), NativeType::BigInt) => CqlValue::BigInt(v),
        (Drawn::Int(v), NativeType::Counter) => CqlValue::Counter(Counter(v)),
        (Drawn::Int(v), NativeType::Int) => CqlValue::Int(v as i32),
        (Drawn::Int(v), NativeType::SmallInt) => CqlValue::SmallInt(v as i16),
        (Drawn::Int(v), NativeType::TinyInt) => CqlValue::TinyInt(v as i8),
        (Drawn::Int(v), NativeType::Double) => CqlValue::Double(v as f64),
        (Drawn::Int(v), NativeType::Float) => CqlValue::Float(v as f32),
        (Drawn::Int(v), NativeType::Varint) => {
            CqlValue::Varint(CqlVarint::from_signed_bytes_be(v.to_be_bytes().to_vec()))
        }
        (Drawn::Int(v), NativeType::Decimal) => decimal(v, 0),
        (Drawn::Int(v), NativeType::Text) => CqlValue::Text(v.to_string()),
        (Drawn::Int(v), NativeType::Ascii) => CqlValue::Ascii(v.to_string()),
        (Drawn::Int(v), NativeType::Blob) => CqlValue::Blob(v.to_be_bytes().to_vec()),
        (Drawn::Int(v), NativeType::Timestamp) => CqlValue::Timestamp(CqlTimestamp(v)),
        (Drawn::Int(v), NativeType::Boolean) => CqlValue::Boolean(v % 2 != 0),
        // Days since 1970-01-01; CQL counts from 2^31 days before it.
        (Drawn::Int(v), NativeType::Date) => CqlValue::Date(CqlDate((v + (1 << 31)) as u32)),
        // Nanoseconds since midnight, wrapped into the day.
        (Drawn::Int(v), NativeType::Time) => CqlValue::Time(CqlTime(v.rem_euclid(NANOS_PER_DAY))),
        // An IPv4 address numbered as 32 bits: 0 is 0.0.0.0, 16777217 is 1.0.0.1.
        (Drawn::Int(v), NativeType::Inet) => CqlValue::Inet(IpAddr::V4(Ipv4Addr::from(v as u32))),
        (Drawn::Real(v), NativeType::Double) => CqlValue::Double(v),
        (Drawn::Real(v), NativeType::Float) => CqlValue::Float(v as f32),
        (Drawn::Real(v), NativeType::Text) => CqlValue::Text(v.to_string()),
        (Drawn::Text(t), NativeType::Text) => CqlValue::Text(t.into_owned()),
        (Drawn::Text(t), NativeType::Ascii) => CqlValue::Ascii(t.into_owned()),
        (Drawn::Text(t), NativeType::Blob) => CqlValue::Blob(t.as_bytes().to_vec()),
        (Drawn::Uuid(u, _), NativeType::Uuid) => CqlValue::Uuid(u),
        (Drawn::Uuid(u, true), NativeType::Timeuuid) => CqlValue::Timeuuid(CqlTimeuuid::from(u)),
        (Drawn::Uuid(u, _), NativeType::Text) => CqlValue::Text(u.to_string()),
        (Drawn::Uuid(u, _), NativeType::Blob) => CqlValue::Blob(u.as_bytes().to_vec()),
        (Drawn::Millis(ms), NativeType::Timestamp) => CqlValue::Timestamp(CqlTimestamp(ms)),
        (Drawn::Millis(ms), NativeType::BigInt) => CqlValue::BigInt(ms),
        (Drawn::Millis(ms), NativeType::Date) => {
            CqlValue::Date(CqlDate((ms.div_euclid(86_400_000) + (1 << 31)) as u32))
        }
        (Drawn::Millis(ms), NativeType::Time) => {
            CqlValue::Time(CqlTime(ms.rem_euclid(86_400_000) * 1_000_000))
        }
        (Drawn::Decimal(v, scale), NativeType::Decimal) => decimal(v, scale),
        (Drawn::Decimal(v, scale), NativeType::Double) => {
            CqlValue::Double(v as f64 / 10f64.powi(scale as i32))
        }
        (Drawn::Decimal(v, scale), NativeType::Float) => {
            CqlValue::Float((v as f64 / 10f64.powi(scale as i32)) as f32)
        }
        (Drawn::Decimal(v, scale), NativeType::Text) => {
            CqlValue::Text(super::values::decimal_text(v, scale))
        }
        (Drawn::Inet(ip), NativeType::Inet) => CqlValue::Inet(ip),
        (Drawn::Inet(ip), NativeType::Text) => CqlValue::Text(ip.to_string()),
        (Drawn::Duration(ns), NativeType::Duration) => CqlValue::Duration(CqlDuration {
            months: 0,
            days: 0,
            nanoseconds: ns,
        }),
        _ => return None,
    })
}

fn decimal(unscaled: i64, scale: u32) -> CqlValue {
    CqlValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(
        unscaled.to_be_bytes().to_vec(),
        scale as i32,
    ))
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::sync::Arc;

    use scylla::frame::response::result::UserDefinedType;

    use super::*;
    use crate::workload::common::generators::{request_rng, TextPool};
    use crate::workload::declarative::grammar::parse;
    use crate::workload::declarative::values::Ctx;

    fn native(n: NativeType) -> ColumnType<'static> {
        ColumnType::Native(n)
    }

    fn list(e: ColumnType<'static>) -> ColumnType<'static> {
        ColumnType::Collection {
            frozen: false,
            typ: CollectionType::List(Box::new(e)),
        }
    }

    fn person() -> ColumnType<'static> {
        ColumnType::UserDefinedType {
            frozen: true,
            definition: Arc::new(UserDefinedType {
                name: Cow::Borrowed("person"),
                keyspace: Cow::Borrowed("ks"),
                field_types: vec![
                    (Cow::Borrowed("name"), native(NativeType::Text)),
                    (Cow::Borrowed("tags"), list(native(NativeType::Int))),
                ],
            }),
        }
    }

    fn value(text: &str, typ: &ColumnType<'_>) -> CqlValue {
        let bound = bind(&parse(text, &[]).unwrap(), typ, &[]).unwrap();
        let pool = TextPool::new(1);
        let mut ctx = Ctx::new(3, request_rng(1, 3), &pool, &[]);
        convert(bound.draw(&mut ctx), typ).unwrap()
    }

    #[test]
    fn values_convert_to_the_variable_types_that_can_hold_them() {
        let text = native(NativeType::Text);
        let int = native(NativeType::Int);
        assert_eq!(
            convert(Drawn::Int(42), &text),
            Some(CqlValue::Text("42".into()))
        );
        assert_eq!(convert(Drawn::Int(42), &int), Some(CqlValue::Int(42)));
        assert_eq!(convert(Drawn::Text("a".into()), &int), None);
        let timeuuid = native(NativeType::Timeuuid);
        assert!(
            bind(&Generator::Uuid, &timeuuid, &[]).is_err(),
            "a random UUID is no timeuuid"
        );
        assert!(bind(&Generator::Timeuuid, &timeuuid, &[]).is_ok());
        assert_eq!(
            convert(Drawn::Int(1), &native(NativeType::Date)),
            Some(CqlValue::Date(CqlDate((1 << 31) + 1)))
        );
        assert_eq!(
            convert(Drawn::Millis(86_400_000 + 1), &native(NativeType::Time)),
            Some(CqlValue::Time(CqlTime(1_000_000)))
        );
        assert_eq!(
            convert(Drawn::Int(16_777_217), &native(NativeType::Inet)),
            Some(CqlValue::Inet(IpAddr::from([1, 0, 0, 1])))
        );
        assert_eq!(
            value("decimal(12345, 2)", &native(NativeType::Decimal)),
            decimal(12345, 2)
        );
        let CqlValue::Inet(ip) = value("inet(10.1.0.0/16)", &native(NativeType::Inet)) else {
            panic!()
        };
        assert!(ip.to_string().starts_with("10.1."), "{ip}");
    }

    #[test]
    fn collections_bind_element_by_element_and_fill_defaults() {
        let CqlValue::List(items) = value("list(4, uniform(1..9))", &list(native(NativeType::Int)))
        else {
            panic!()
        };
        assert_eq!(items.len(), 4);
        assert!(items.iter().all(|i| matches!(i, CqlValue::Int(1..=9))));
        // `default` and a left-out element take the element type's generator.
        let CqlValue::List(items) = value("list(2)", &list(native(NativeType::Uuid))) else {
            panic!()
        };
        assert!(items.iter().all(|i| matches!(i, CqlValue::Uuid(_))));
        let e = bind(
            &parse("list(2, text(3))", &[]).unwrap(),
            &list(native(NativeType::Int)),
            &[],
        )
        .unwrap_err();
        assert_eq!(e, "its elements: a text cannot be a int");
        let vector = ColumnType::Vector {
            typ: Box::new(native(NativeType::Float)),
            dimensions: 3,
        };
        let CqlValue::Vector(items) = value("vector(uniform(-1.0..1.0))", &vector) else {
            panic!()
        };
        assert_eq!(items.len(), 3);
        assert!(bind(&parse("list(1..3)", &[]).unwrap(), &vector, &[]).is_err());
    }

    #[test]
    fn user_types_take_fields_by_name_and_the_rest_by_default() {
        let CqlValue::UserDefinedType { fields, name, .. } =
            value("udt(tags = list(2, 7))", &person())
        else {
            panic!()
        };
        assert_eq!(name, "person");
        assert_eq!(fields[0].0, "name");
        assert!(matches!(&fields[0].1, Some(CqlValue::Text(t)) if t.len() == 10));
        assert_eq!(
            fields[1],
            (
                "tags".to_string(),
                Some(CqlValue::List(vec![CqlValue::Int(7), CqlValue::Int(7)]))
            )
        );
        let e = bind(&parse("udt(age = 5)", &[]).unwrap(), &person(), &[]).unwrap_err();
        assert!(
            e.contains("type person has no field 'age'; its fields are name, tags"),
            "{e}"
        );
        let pair = ColumnType::Tuple(vec![native(NativeType::Int), native(NativeType::Text)]);
        assert_eq!(
            value("tuple(5, 'x')", &pair),
            CqlValue::Tuple(vec![
                Some(CqlValue::Int(5)),
                Some(CqlValue::Text("x".into()))
            ])
        );
        assert!(bind(&parse("tuple(5)", &[]).unwrap(), &pair, &[]).is_err());
        assert!(matches!(value("tuple", &pair), CqlValue::Tuple(c) if c.len() == 2));
    }

    /// Every native type has a default that binds to it.
    #[test]
    fn every_type_has_a_default() {
        use NativeType::*;
        for n in [
            Ascii, Boolean, Blob, Counter, Date, Decimal, Double, Duration, Float, Int, BigInt,
            Text, Timestamp, Inet, SmallInt, TinyInt, Time, Timeuuid, Uuid, Varint,
        ] {
            let typ = native(n.clone());
            let _ = value("default", &typ);
            let typ = list(typ);
            assert!(matches!(value("default", &typ), CqlValue::List(_)), "{n:?}");
        }
    }
}
