//! What every workload format shares, beneath them all: the [`workload::Workload`] trait, the
//! settings every format takes and the command line's request, the error type, statements
//! and their consistency, the keyspace's replication and the table's compaction, the schema
//! and the reading of system_schema, the operation types and their mix, the per-request
//! draws, stable hashing, the path of measured requests, what `--validate`'s final check asks
//! of a format, and the readers of CQL maps, of the names in CQL statements and of YAML errors. Nothing here knows of any format.

pub mod checked;
pub mod cql_map;
pub mod cql_names;
pub mod cql_options;
pub mod error;
pub mod generators;
pub mod hash;
pub mod mix;
pub mod request;
pub mod schema;
pub mod send;
pub mod settings;
pub mod statements;
pub mod workload;
pub mod yaml_error;
