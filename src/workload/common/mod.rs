//! What every workload format shares, beneath them all: the error type, statements and
//! their consistency, the schema and the reading of system_schema, the operation types and
//! their mix, the per-request draws, stable hashing, the path of measured requests, and the
//! readers of CQL maps, of the names in CQL statements and of YAML errors. Nothing here knows
//! of any format.

pub mod cql_map;
pub mod cql_names;
pub mod error;
pub mod generators;
pub mod hash;
pub mod mix;
pub mod schema;
pub mod send;
pub mod statements;
pub mod yaml_error;
