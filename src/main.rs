//! The `headroom` binary: parse the command line, run it, report an error.
//!
//! Everything else lives in the library so that tests can call it in-process.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = headroom::cli::Cli::parse();
    match headroom::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("Error: {err:#}");
            ExitCode::from(headroom::exit_code_for(&err))
        }
    }
}
