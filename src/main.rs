//! The `headroom` binary: parse the command line, run it, report an error.
//!
//! Everything else lives in the library so that tests can call it in-process.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc rather than glibc's allocator: the driver allocates and grows buffers for every
/// request, and glibc's realloc and large-block path cost some 4% of the client's CPU per
/// request (docs/PERFORMANCE.md, "The allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
