//! The rows a cassandra-stress profile describes: which partitions exist, how many rows each
//! has, and every column's value, all derived from the run's seed so that a query finds the
//! rows an insert wrote.
//!
//! The model, after cassandra-stress's:
//! - partition `p` (0..`--partitions`, drawn by `--partition-generator`) has, for each
//!   partition-key column, a value drawn from that column's `population`, seeded by `p`;
//! - a clustering column has `cluster` values under each value of the columns before it
//!   (drawn once per partition and column), so a partition has the product of those counts
//!   as rows; row `r` is numbered in clustering order, and each clustering value is drawn
//!   from the column's `population`, seeded by the partition and the row's path to it;
//! - a regular column's value is drawn from its `population`, seeded by partition and row;
//!   a static column's, by the partition;
//! - a value is a function of its column and the number drawn from the population (its
//!   identity): numbers are the identity itself, text and blobs take a length from `size`
//!   and their content from the identity. So `population: uniform(1..10)` gives a column ten
//!   distinct values, whatever its type.

use std::net::{IpAddr, Ipv4Addr};

use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};
use scylla::value::{
    Counter, CqlDate, CqlDecimal, CqlDuration, CqlTime, CqlTimestamp, CqlTimeuuid, CqlValue,
    CqlVarint,
};
use uuid::Uuid;

use super::distribution::Distribution;
use super::model::{ColumnSpec, Profile};
use super::types::{Column, CqlType};
use crate::workload::common::generators::TextPool;
use crate::workload::common::hash::{fnv1a, splitmix_finalise};
use crate::workload::common::schema::ColumnKind;

/// A column with its generation.
#[derive(Debug, Clone)]
struct Generated {
    column: Column,
    spec: ColumnSpec,
    /// Separates the columns' random streams.
    salt: u64,
}

/// The rows of the table, as the profile describes them.
#[derive(Debug, Clone)]
pub struct Rows {
    seed: u64,
    /// In insert order: partition key, clustering, static, regular.
    columns: Vec<Generated>,
    /// Indexes into `columns`.
    clustering: Vec<usize>,
    text: TextPool,
}

/// One partition: its number and the row counts of its clustering levels.
#[derive(Debug, Clone)]
pub struct Partition {
    /// The partition's number.
    pub number: u64,
    /// Values of each clustering column under one value of the columns before it.
    counts: Vec<u64>,
    /// Rows in the partition: the product of `counts`.
    pub rows: u64,
}

impl Rows {
    /// The rows of `columns` (in the table's key order) generated as `profile` says.
    pub fn new(profile: &Profile, columns: Vec<Column>, seed: u64) -> Rows {
        let mut ordered: Vec<Generated> = Vec::with_capacity(columns.len());
        for kind in [
            ColumnKind::PartitionKey,
            ColumnKind::Clustering,
            ColumnKind::Static,
            ColumnKind::Regular,
        ] {
            for column in columns.iter().filter(|c| c.kind == kind) {
                ordered.push(Generated {
                    spec: profile.column(&column.name),
                    salt: mix(fnv1a(column.name.as_bytes())),
                    column: column.clone(),
                });
            }
        }
        let clustering = ordered
            .iter()
            .enumerate()
            .filter(|(_, g)| g.column.kind == ColumnKind::Clustering)
            .map(|(i, _)| i)
            .collect();
        Rows {
            seed,
            columns: ordered,
            clustering,
            text: TextPool::new(seed),
        }
    }

    /// The columns in insert order.
    pub fn columns(&self) -> impl Iterator<Item = &Column> {
        self.columns.iter().map(|g| &g.column)
    }

    /// The index of column `name` in insert order.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|g| g.column.name == name)
    }

    /// The most rows a partition can have.
    pub fn max_rows(&self) -> u64 {
        self.clustering
            .iter()
            .map(|&i| self.columns[i].spec.cluster.max())
            .fold(1u64, u64::saturating_mul)
    }

    /// Partition `number`, with its row counts.
    pub fn partition(&self, number: u64) -> Partition {
        let counts: Vec<u64> = self
            .clustering
            .iter()
            .map(|&i| {
                let g = &self.columns[i];
                let mut rng = rng3(self.seed, g.salt ^ CLUSTER, mix(number));
                g.spec.cluster.sample(&mut rng).max(1)
            })
            .collect();
        let rows = counts.iter().copied().fold(1u64, u64::saturating_mul);
        Partition {
            number,
            counts,
            rows,
        }
    }

    /// Every column's value in row `row` of `partition`, in insert order.
    pub fn row(&self, partition: &Partition, row: u64) -> Vec<CqlValue> {
        (0..self.columns.len())
            .map(|i| self.value(i, partition, row))
            .collect()
    }

    /// The value of column `index` (insert order) in row `row` of `partition`.
    pub fn value(&self, index: usize, partition: &Partition, row: u64) -> CqlValue {
        let g = &self.columns[index];
        let p = mix(partition.number);
        let place = match g.column.kind {
            ColumnKind::PartitionKey => p,
            ColumnKind::Static => p ^ STATIC,
            ColumnKind::Clustering => {
                let level = self
                    .clustering
                    .iter()
                    .position(|&i| i == index)
                    .expect("a clustering column");
                self.path(partition, row, level)
            }
            ColumnKind::Regular => mix(p ^ mix(row ^ REGULAR)),
        };
        let identity = g
            .spec
            .population
            .sample(&mut rng3(self.seed, g.salt, place));
        self.value_of(g, identity)
    }

    /// A hash of row `row`'s clustering values down to `level`: rows sharing them share it.
    fn path(&self, partition: &Partition, row: u64, level: usize) -> u64 {
        // Row numbers are mixed-radix: the last clustering column varies fastest.
        let mut digits = vec![0u64; partition.counts.len()];
        let mut rest = row;
        for (d, &count) in digits.iter_mut().zip(&partition.counts).rev() {
            *d = rest % count;
            rest /= count;
        }
        digits[..=level]
            .iter()
            .fold(mix(partition.number), |h, &d| mix(h ^ mix(d)))
    }

    fn value_of(&self, g: &Generated, identity: u64) -> CqlValue {
        self.typed_value(&g.column.ty, &g.spec, g.salt, identity)
    }

    /// The value of type `ty` for `identity`, generated as `spec` says; `salt` separates the
    /// columns (and the parts of a composite value).
    fn typed_value(&self, ty: &CqlType, spec: &ColumnSpec, salt: u64, identity: u64) -> CqlValue {
        let h = mix(salt ^ identity);
        match ty {
            CqlType::Text | CqlType::Ascii => {
                let mut rng = SmallRng::seed_from_u64(h);
                let len = length(&spec.size, &mut rng);
                let text = self.text.text(&mut rng, len, len).to_string();
                if *ty == CqlType::Text {
                    CqlValue::Text(text)
                } else {
                    CqlValue::Ascii(text)
                }
            }
            CqlType::Blob => {
                let mut rng = SmallRng::seed_from_u64(h);
                let mut bytes = vec![0u8; length(&spec.size, &mut rng)];
                rng.fill_bytes(&mut bytes);
                CqlValue::Blob(bytes)
            }
            // Numbers are the identity itself, as in cassandra-stress: a population of
            // uniform(1..1000) gives the values 1 to 1000.
            CqlType::Int => CqlValue::Int(identity as i32),
            CqlType::BigInt => CqlValue::BigInt(identity as i64),
            // cassandra-stress generates a counter's increment as a bigint: `population:
            // fixed(1)` adds 1 each time.
            CqlType::Counter => CqlValue::Counter(Counter(identity as i64)),
            CqlType::SmallInt => CqlValue::SmallInt(identity as i16),
            CqlType::TinyInt => CqlValue::TinyInt(identity as i8),
            CqlType::Float => CqlValue::Float(identity as f32),
            CqlType::Double => CqlValue::Double(identity as f64),
            CqlType::Boolean => CqlValue::Boolean(identity % 2 == 1),
            CqlType::Decimal => CqlValue::Decimal(CqlDecimal::from_signed_be_bytes_and_exponent(
                (identity as i64).to_be_bytes().to_vec(),
                2,
            )),
            CqlType::Varint => CqlValue::Varint(CqlVarint::from_signed_bytes_be(
                (identity as i64).to_be_bytes().to_vec(),
            )),
            // Milliseconds since the epoch.
            CqlType::Timestamp => CqlValue::Timestamp(CqlTimestamp(identity as i64)),
            // Days since the epoch (CQL counts from 2^31), within about a century.
            CqlType::Date => CqlValue::Date(CqlDate((1u32 << 31) + (identity % 36_525) as u32)),
            CqlType::Time => CqlValue::Time(CqlTime((identity % 86_400_000_000_000) as i64)),
            CqlType::Inet => CqlValue::Inet(IpAddr::V4(Ipv4Addr::from(identity as u32))),
            CqlType::Uuid => {
                let mut bytes = [0u8; 16];
                bytes[..8].copy_from_slice(&h.to_be_bytes());
                bytes[8..].copy_from_slice(&mix(h).to_be_bytes());
                CqlValue::Uuid(uuid::Builder::from_random_bytes(bytes).into_uuid())
            }
            CqlType::TimeUuid => CqlValue::Timeuuid(CqlTimeuuid::from(time_uuid(identity, h))),
            // The identity as milliseconds, as timestamps are.
            CqlType::Duration => CqlValue::Duration(CqlDuration {
                months: 0,
                days: 0,
                nanoseconds: (identity as i64).saturating_mul(1_000_000),
            }),
            CqlType::List(element) => {
                let parts = self.parts(spec, salt, identity);
                CqlValue::List(
                    parts
                        .map(|e| self.typed_value(element, spec, mix(salt ^ ELEMENT), e))
                        .collect(),
                )
            }
            CqlType::Set(element) => {
                // Repeated elements are one element of a set, as in cassandra-stress.
                let mut values: Vec<CqlValue> = Vec::new();
                for e in self.parts(spec, salt, identity) {
                    let value = self.typed_value(element, spec, mix(salt ^ ELEMENT), e);
                    if !values.contains(&value) {
                        values.push(value);
                    }
                }
                CqlValue::Set(values)
            }
            CqlType::Map(key, value) => {
                let mut entries: Vec<(CqlValue, CqlValue)> = Vec::new();
                for (i, e) in self.parts(spec, salt, identity).enumerate() {
                    let k = self.typed_value(key, spec, mix(salt ^ ELEMENT), e);
                    if entries.iter().any(|(seen, _)| *seen == k) {
                        continue;
                    }
                    let v_identity = self.part(spec, salt ^ MAP_VALUE, identity, i as u64);
                    let v = self.typed_value(value, spec, mix(salt ^ MAP_VALUE), v_identity);
                    entries.push((k, v));
                }
                CqlValue::Map(entries)
            }
            CqlType::Tuple(types) => CqlValue::Tuple(
                types
                    .iter()
                    .enumerate()
                    .map(|(i, t)| Some(self.field(t, spec, salt, identity, i)))
                    .collect(),
            ),
            CqlType::Udt(udt) => CqlValue::UserDefinedType {
                keyspace: udt.keyspace.clone(),
                name: udt.name.clone(),
                fields: udt
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(i, (name, t))| {
                        (name.clone(), Some(self.field(t, spec, salt, identity, i)))
                    })
                    .collect(),
            },
            CqlType::Vector(element, dimension) => CqlValue::Vector(
                (0..*dimension as u64)
                    .map(|i| {
                        let e = self.part(spec, salt, identity, i);
                        self.typed_value(element, spec, mix(salt ^ ELEMENT), e)
                    })
                    .collect(),
            ),
        }
    }

    /// The identities of a collection's elements: as many as `size` draws (cassandra-stress
    /// takes a collection's element count from the column's size), each drawn from
    /// `population`, all a function of the collection's own identity.
    fn parts<'a>(
        &'a self,
        spec: &'a ColumnSpec,
        salt: u64,
        identity: u64,
    ) -> impl Iterator<Item = u64> + 'a {
        let mut rng = SmallRng::seed_from_u64(mix(mix(salt ^ COUNT) ^ identity));
        let count = spec.size.sample(&mut rng).min(MAX_ELEMENTS);
        (0..count).map(move |i| self.part(spec, salt, identity, i))
    }

    /// The identity of part `i` (an element, a field) of the value of `identity`.
    fn part(&self, spec: &ColumnSpec, salt: u64, identity: u64, i: u64) -> u64 {
        let mut rng = SmallRng::seed_from_u64(mix(mix(salt ^ identity) ^ mix(i ^ PART)));
        spec.population.sample(&mut rng)
    }

    /// Field `i` of a tuple or user type: of its own type, from an identity of its own.
    fn field(
        &self,
        ty: &CqlType,
        spec: &ColumnSpec,
        salt: u64,
        identity: u64,
        i: usize,
    ) -> CqlValue {
        let field_salt = mix(salt ^ FIELD ^ i as u64);
        let e = self.part(spec, field_salt, identity, 0);
        self.typed_value(ty, spec, field_salt, e)
    }
}

/// A collection's element count is capped here: a `size` meant for text lengths (say
/// uniform(1..1M)) would otherwise build collections far larger than Cassandra accepts in
/// one cell.
pub const MAX_ELEMENTS: u64 = 65_535;

/// A version-1 UUID whose time is `identity` milliseconds after the Unix epoch, with clock
/// sequence and node from `h`: timeuuids sort as their identities do.
fn time_uuid(identity: u64, h: u64) -> Uuid {
    // 100 ns intervals since 1582-10-15.
    const GREGORIAN_TO_UNIX: u64 = 0x01B2_1DD2_1381_4000;
    let t = GREGORIAN_TO_UNIX.wrapping_add(identity.wrapping_mul(10_000)) & ((1 << 60) - 1);
    let mut bytes = [0u8; 16];
    bytes[0..4].copy_from_slice(&(t as u32).to_be_bytes());
    bytes[4..6].copy_from_slice(&((t >> 32) as u16).to_be_bytes());
    bytes[6..8].copy_from_slice(&((((t >> 48) as u16) & 0x0FFF) | 0x1000).to_be_bytes());
    // The variant (10xx) in the clock sequence's top bits.
    bytes[8] = 0x80 | ((h >> 56) as u8 & 0x3F);
    bytes[9] = (h >> 48) as u8;
    bytes[10..16].copy_from_slice(&h.to_be_bytes()[2..8]);
    Uuid::from_bytes(bytes)
}

/// A text or blob length drawn from `size`, capped at the text pool's size.
fn length(size: &Distribution, rng: &mut SmallRng) -> usize {
    size.sample(rng).min(1 << 20) as usize
}

/// Tags separating the streams of one column that serve different purposes.
const CLUSTER: u64 = 0xC1A5_7E12;
const STATIC: u64 = 0x57A7_1C00;
const REGULAR: u64 = 0x0E6A_1A12;
const ELEMENT: u64 = 0xE1E4_E000;
const MAP_VALUE: u64 = 0x4A9F_A100;
const COUNT: u64 = 0xC0C0_7000;
const PART: u64 = 0x9A27_0000;
const FIELD: u64 = 0xF1E1_D000;

/// A random-number generator for one draw of one column in one place.
fn rng3(seed: u64, salt: u64, place: u64) -> SmallRng {
    SmallRng::seed_from_u64(mix(seed ^ mix(salt ^ mix(place))))
}

/// SplitMix64's step: the golden gamma added, then its finaliser. Spreads nearby inputs over
/// the whole range.
pub fn mix(z: u64) -> u64 {
    splitmix_finalise(z.wrapping_add(0x9E37_79B9_7F4A_7C15))
}

/// Draws `count` distinct row numbers below `rows`, in order.
pub fn pick_rows<R: Rng>(rng: &mut R, rows: u64, count: u64) -> Vec<u64> {
    let count = count.clamp(1, rows.max(1));
    if count >= rows {
        return (0..rows).collect();
    }
    let mut picked: Vec<u64> = if rows <= usize::MAX as u64 {
        rand::seq::index::sample(rng, rows as usize, count as usize)
            .into_iter()
            .map(|i| i as u64)
            .collect()
    } else {
        (0..count).map(|_| rng.random_range(0..rows)).collect()
    };
    picked.sort_unstable();
    picked.dedup();
    picked
}

#[cfg(test)]
mod tests {
    use super::super::types::{UserType, SUPPORTED_TYPES};
    use super::*;

    fn profile(columnspec: &str) -> Profile {
        Profile::parse(&format!("keyspace: k\ntable: t\ncolumnspec:\n{columnspec}")).unwrap()
    }

    fn column(name: &str, kind: ColumnKind, ty: CqlType) -> Column {
        Column {
            name: name.into(),
            kind,
            ty,
        }
    }

    fn blog() -> Rows {
        let p = profile(
            "  - name: domain\n    size: fixed(12)\n    population: uniform(1..1000)\n\
             \x20 - name: day\n    cluster: uniform(2..4)\n    population: uniform(1..100k)\n\
             \x20 - name: seq\n    cluster: fixed(3)\n\
             \x20 - name: body\n    size: uniform(50..60)\n",
        );
        Rows::new(
            &p,
            vec![
                column("body", ColumnKind::Regular, CqlType::Text),
                column("domain", ColumnKind::PartitionKey, CqlType::Text),
                column("day", ColumnKind::Clustering, CqlType::Date),
                column("seq", ColumnKind::Clustering, CqlType::Int),
            ],
            7,
        )
    }

    #[test]
    fn rows_come_in_key_order_with_the_product_of_cluster_counts() {
        let rows = blog();
        let names: Vec<&str> = rows.columns().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["domain", "day", "seq", "body"]);
        assert_eq!(rows.max_rows(), 12);
        for n in 0..50 {
            let p = rows.partition(n);
            assert!(
                (6..=12).contains(&p.rows) && p.rows.is_multiple_of(3),
                "{}",
                p.rows
            );
        }
    }

    #[test]
    fn values_repeat_per_place_and_follow_the_spec() {
        let rows = blog();
        let p = rows.partition(5);
        assert_eq!(rows.row(&p, 1), rows.row(&rows.partition(5), 1));
        let (a, b) = (rows.row(&p, 0), rows.row(&p, 1));
        // Same partition key; same first clustering value (rows 0..3 share day); new seq.
        assert_eq!(a[0], b[0]);
        assert_eq!(a[1], b[1]);
        assert_ne!(a[2], b[2]);
        assert_ne!(a[1], rows.row(&p, 3)[1], "row 3 has the next day");
        match (&a[0], &a[3]) {
            (CqlValue::Text(key), CqlValue::Text(body)) => {
                assert_eq!(key.len(), 12);
                assert!((50..=60).contains(&body.len()));
            }
            other => panic!("{other:?}"),
        }
        // Another partition: another key (population 1..1000 makes a clash unlikely).
        assert_ne!(rows.row(&rows.partition(6), 0)[0], a[0]);
    }

    #[test]
    fn a_small_population_bounds_the_distinct_values() {
        let p = profile("  - name: n\n    population: uniform(1..5)\n");
        let rows = Rows::new(
            &p,
            vec![column("n", ColumnKind::PartitionKey, CqlType::BigInt)],
            1,
        );
        let mut seen: Vec<i64> = (0..1000)
            .map(|i| match rows.row(&rows.partition(i), 0)[0] {
                CqlValue::BigInt(v) => v,
                ref other => panic!("{other:?}"),
            })
            .collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn every_supported_type_gets_a_value_of_its_type() {
        let types = SUPPORTED_TYPES
            .split(", ")
            .map(|t| CqlType::parse(t).unwrap());
        let columns: Vec<Column> = types
            .enumerate()
            .map(|(i, ty)| column(&format!("c{i}"), ColumnKind::Regular, ty))
            .collect();
        let rows = Rows::new(&profile("  - name: c0\n"), columns, 3);
        let row = rows.row(&rows.partition(0), 0);
        assert_eq!(row.len(), 21);
        assert!(matches!(row[19], CqlValue::Duration(_)));
        assert!(matches!(row[20], CqlValue::Counter(_)));
        assert!(matches!(row[0], CqlValue::Text(_)));
        assert!(matches!(row[2], CqlValue::Ascii(_)));
        assert!(matches!(row[14], CqlValue::Time(_)));
        match &row[11] {
            CqlValue::Timeuuid(t) => assert_eq!(Uuid::from(*t).get_version_num(), 1),
            other => panic!("{other:?}"),
        }
        match &row[10] {
            CqlValue::Uuid(u) => assert_eq!(u.get_version_num(), 4),
            other => panic!("{other:?}"),
        }
        assert_eq!(CqlType::parse("list<int>"), None);
        assert_eq!(CqlType::parse("counter"), Some(CqlType::Counter));
    }

    fn composite_rows(columnspec: &str) -> Rows {
        let p = profile(columnspec);
        let address = CqlType::Udt(Box::new(UserType {
            keyspace: "k".into(),
            name: "address".into(),
            fields: vec![
                ("street".into(), CqlType::Text),
                ("zip".into(), CqlType::Int),
            ],
        }));
        let columns = vec![
            column("id", ColumnKind::PartitionKey, CqlType::Int),
            column(
                "tags",
                ColumnKind::Regular,
                CqlType::List(Box::new(CqlType::Text)),
            ),
            column(
                "ids",
                ColumnKind::Regular,
                CqlType::Set(Box::new(CqlType::BigInt)),
            ),
            column(
                "scores",
                ColumnKind::Regular,
                CqlType::Map(Box::new(CqlType::Text), Box::new(CqlType::Double)),
            ),
            column("home", ColumnKind::Regular, address),
            column(
                "pair",
                ColumnKind::Regular,
                CqlType::Tuple(vec![CqlType::Int, CqlType::Text]),
            ),
            column(
                "embedding",
                ColumnKind::Regular,
                CqlType::Vector(Box::new(CqlType::Float), 5),
            ),
        ];
        Rows::new(&p, columns, 11)
    }

    /// As in cassandra-stress, a collection has as many elements as its size draws (a set
    /// or map fewer when elements repeat); tuples and user types have every field, vectors
    /// their dimension; all of it is a function of the row.
    #[test]
    fn composite_values_follow_size_and_their_types() {
        let rows = composite_rows(
            "  - name: tags\n    size: uniform(2..6)\n\
             \x20 - name: ids\n    size: fixed(4)\n\
             \x20 - name: scores\n    size: fixed(3)\n\
             \x20 - name: home\n    size: fixed(9)\n\
             \x20 - name: embedding\n    population: uniform(1..10)\n",
        );
        let mut lengths = std::collections::BTreeSet::new();
        for n in 0..200 {
            let p = rows.partition(n);
            let row = rows.row(&p, 0);
            assert_eq!(
                row,
                rows.row(&rows.partition(n), 0),
                "a function of the row"
            );
            let CqlValue::List(tags) = &row[1] else {
                panic!("{:?}", row[1])
            };
            assert!((2..=6).contains(&tags.len()), "{tags:?}");
            lengths.insert(tags.len());
            for tag in tags {
                // Text elements take their length from the same size, as in cassandra-stress.
                let CqlValue::Text(t) = tag else {
                    panic!("{tag:?}")
                };
                assert!((2..=6).contains(&t.len()), "{t}");
            }
            let CqlValue::Set(ids) = &row[2] else {
                panic!("{:?}", row[2])
            };
            assert_eq!(ids.len(), 4, "a population of 100B makes repeats unlikely");
            let CqlValue::Map(scores) = &row[3] else {
                panic!("{:?}", row[3])
            };
            assert_eq!(scores.len(), 3);
            let CqlValue::UserDefinedType { name, fields, .. } = &row[4] else {
                panic!("{:?}", row[4])
            };
            assert_eq!(name, "address");
            assert!(
                matches!(&fields[0], (f, Some(CqlValue::Text(t))) if f == "street" && t.len() == 9)
            );
            assert!(matches!(&fields[1], (f, Some(CqlValue::Int(_))) if f == "zip"));
            let CqlValue::Tuple(pair) = &row[5] else {
                panic!("{:?}", row[5])
            };
            assert!(matches!(
                pair[..],
                [Some(CqlValue::Int(_)), Some(CqlValue::Text(_))]
            ));
            let CqlValue::Vector(embedding) = &row[6] else {
                panic!("{:?}", row[6])
            };
            assert_eq!(embedding.len(), 5);
            for x in embedding {
                let CqlValue::Float(x) = x else {
                    panic!("{x:?}")
                };
                assert!((1.0..=10.0).contains(x), "drawn from the population: {x}");
            }
        }
        assert_eq!(
            lengths.len(),
            5,
            "every count of uniform(2..6): {lengths:?}"
        );
    }

    #[test]
    fn a_small_population_repeats_set_elements_which_collapse() {
        let rows =
            composite_rows("  - name: ids\n    size: fixed(50)\n    population: uniform(1..5)\n");
        let CqlValue::Set(ids) = &rows.row(&rows.partition(3), 0)[2] else {
            panic!()
        };
        let mut seen: Vec<i64> = ids
            .iter()
            .map(|v| match v {
                CqlValue::BigInt(i) => *i,
                other => panic!("{other:?}"),
            })
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn timeuuids_carry_their_identity_as_time() {
        let u = time_uuid(1_700_000_000_000, 42);
        let (secs, nanos) = u.get_timestamp().unwrap().to_unix();
        assert_eq!((secs, nanos), (1_700_000_000, 0));
    }

    #[test]
    fn picked_rows_are_distinct_sorted_and_at_least_one() {
        let mut rng = SmallRng::seed_from_u64(1);
        assert_eq!(pick_rows(&mut rng, 5, 9), [0, 1, 2, 3, 4]);
        assert_eq!(pick_rows(&mut rng, 1000, 0).len(), 1);
        let rows = pick_rows(&mut rng, 1000, 10);
        assert_eq!(rows.len(), 10);
        assert!(rows.windows(2).all(|w| w[0] < w[1]) && rows[9] < 1000);
    }
}
