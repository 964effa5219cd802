//! Flags into settings: `headroom run`'s (`run.rs`), a capacity search's (`search.rs`), and
//! the parts `capacity`, `sweep` and the quickstart share (the connection, the client's cores,
//! the cost flags, the pods of a fleet, the live addresses, the SLA). Every error here is the
//! user's input, found before anything connects. This file only declares the parts and hands
//! on what the commands use; no part imports it.

mod connection;
mod cores;
mod cost;
mod kube;
mod live;
mod run;
mod search;
mod sla;

pub use connection::{
    cluster_credentials, credentials, local_cluster_dir, run_credentials,
    with_cluster_tls,
};
pub use cores::{bind_client, with_client_cores, with_placement_cores};
pub use cost::compare_options;
#[cfg(feature = "kubernetes")]
pub use kube::kube_options;
pub use live::live_settings;
pub use run::{
    check_in_flight, from_config_file, run_settings, settings, with_maintenance, with_worker,
};
pub use search::search_settings;
pub use sla::sla_settings;
