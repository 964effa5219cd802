//! A fleet: several client processes (workers) sending one schedule together, and their run
//! directories merged into one.
//!
//! - [`worker`]: which share of the schedule a worker sends (`--worker K/N`) and when the
//!   fleet starts (`--start-at`);
//! - [`launch`]: how the workers of one trial are started and their directories brought back
//!   (the [`launch::Launcher`] trait; processes on this machine in [`local`]);
//! - [`kube`]: the workers as the pods of an Indexed Job, their directories brought back
//!   through the pods' logs;
//! - [`settings`]: the fleet of a capacity search, as search.json keeps it;
//! - [`merge`]: the workers' directories added interval by interval into one run directory.

pub mod kube;
pub mod launch;
pub mod local;
pub mod merge;
pub mod settings;
pub mod worker;
