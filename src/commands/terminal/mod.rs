//! What every command that runs load shares on the terminal: the watcher that prints a run
//! as it goes and its summary ([`watch::Terminal`]), a capacity search as it goes
//! ([`search()`]), Ctrl-C and SIGTERM turned into a stop,
//! and the report written at the end. `run`, `capacity`, `sweep`, `merge` and the quickstart
//! use it; no command reaches into another for these. This file only declares the parts and
//! hands on what the commands use.

mod ending;
mod live;
mod recall;
mod search;
mod validation;
pub mod watch;

pub use ending::{stop_on_ctrl_c_or_term, write_report};
pub use live::{ended_in_words, live_labels, start_live};
pub use search::search;
pub use watch::Terminal;
