//! What the load consists of: schemas, operation types and their mix, and value generators.
//!
//! A [`Workload`] turns a sequence number into one request. Everything about request `i` (its
//! operation type, partition, values) is a function of the run's seed and `i` alone, so a run
//! repeats exactly whichever worker sends which request. Every format implements the same
//! trait.
//!
//! Layers, which the layer test checks: [`common`], the core every format shares (the trait,
//! the shared settings, the command line's request); the formats above it, none importing
//! another ([`builtin`], [`declarative`], [`stress`], [`vector`], [`ycsb`]); [`definition`],
//! which names each format's definition; [`any`] on top, which picks one. This file only
//! declares them and hands on what the rest of headroom uses; nothing in the folder imports it.

pub mod any;
pub mod builtin;
pub mod common;
pub mod declarative;
pub mod definition;
pub mod stress;
pub mod vector;
pub mod ycsb;

pub use any::AnyWorkload;
pub use common::cql_options::{compaction_map, replication_map, replication_total};
pub use common::mix::OpMix;
pub use common::request::{VectorRequest, WorkloadRequest, DEFAULT_KEYSPACE};
pub use common::settings::WorkloadSettings;
pub use common::workload::{Part, Parts, Workload};
pub use definition::{Definition, WorkloadConfig};
