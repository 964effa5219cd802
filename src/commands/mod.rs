//! Command glue: each subcommand turns its parsed arguments into library calls and prints
//! what a person needs to see.

pub mod capacity;
pub mod cluster;
pub mod compare;
pub mod exit;
pub mod kube;
pub mod merge;
pub mod quickstart;
pub mod report;
pub mod run;
pub mod settings;
pub mod sweep;
pub mod terminal;
