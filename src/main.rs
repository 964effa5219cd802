//! The `headroom` binary: parse the command line, run it, report an error.
//!
//! Everything else lives in the library so that tests can call it in-process.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc (its version 2) rather than glibc's allocator: the driver allocates and grows
/// buffers for every request, and glibc's allocator took 12% of the client's CPU at
/// 10 000/s. Version 3 was as fast but held two to three times the memory
/// (docs/PERFORMANCE.md, "A burst at once, and the allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match headroom::cli::Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version, on standard output.
        Err(e) if !e.use_stderr() => e.exit(),
        // clap quotes the value it refused whole: a pasted file would fill the terminal.
        Err(e) => {
            eprint!(
                "{}",
                headroom::usage::cut_lines(&e.render().to_string(), 300)
            );
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match headroom::run(cli) {
        Ok(code) => code,
        Err(err) => {
            let message = headroom::usage::cut_lines(&format!("{err:#}"), 1000);
            eprintln!("Error: {message}");
            ExitCode::from(headroom::exit_code_for(&err))
        }
    }
}
