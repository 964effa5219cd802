//! The `headroom` binary: everything lives in the library ([`headroom::main`]) so that tests
//! can call it in-process; this file only chooses the allocator.

use std::process::ExitCode;

/// mimalloc (its version 2) rather than glibc's allocator: the driver allocates and grows
/// buffers for every request, and glibc's allocator took 12% of the client's CPU at
/// 10 000/s. Version 3 was as fast but held two to three times the memory
/// (docs/PERFORMANCE.md, "A burst at once, and the allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    headroom::main()
}
