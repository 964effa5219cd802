//! Integration tests: the `headroom` binary and library against real local Cassandra nodes,
//! headroom's exports against the tools that read them, and its HTML report in a browser.
//!
//! One test binary; the tests take turns on the machine (see `support::exclusive`). Each
//! starts its nodes in its own directory and stops them even when it fails.

mod support;

mod architecture;
mod bad_input;
mod capacity;
mod cluster;
mod compare;
mod cores;
mod datacenters;
mod degraded;
mod fleet;
mod hdr_tools;
mod kubernetes;
mod live_page;
mod maintenance;
mod node_loss;
mod pauses;
mod prometheus;
mod report;
mod requests;
mod run;
mod server_tables;
mod shipped_profiles;
mod stress_profile;
mod sweep;
mod tls;
mod validate;
mod vector;
mod vector_formats;
mod verdicts;
mod workload_file;
mod ycsb;
