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

/// `mi_option_purge_delay` in mimalloc 2's `mi_option_t` (include/mimalloc.h; the sys
/// crate names some options but not this one).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// mimalloc gives freed memory back to the system 10 ms after it falls free, by default. The
/// engine frees and reuses its request buffers on a cycle of a few milliseconds, so the same
/// pages went back and were faulted in again (and zeroed) all run long: about 200 page faults
/// a second at 10 000 requests/s, 5–8% of the client's CPU. Kept for a second, they are
/// reused instead; memory still goes back after a quiet second, so the RSS stays flat.
fn keep_freed_memory_a_second() {
    // SAFETY: called first thing in `main`, before any other thread exists (mimalloc asks
    // that options be set from one thread); any value is valid for this option.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000)
    };
}

fn main() -> ExitCode {
    keep_freed_memory_a_second();
    let cli = headroom::cli::Cli::parse();
    match headroom::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("Error: {err:#}");
            ExitCode::from(headroom::exit_code_for(&err))
        }
    }
}
