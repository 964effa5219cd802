//! The client's own cost: CPU time and peak resident memory of this process.

use std::time::Duration;

use nix::sys::resource::{getrusage, UsageWho};

/// User plus system CPU time this process has used so far.
pub fn cpu_time() -> Duration {
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(usage) => {
            let tv = |t: nix::sys::time::TimeVal| {
                Duration::new(t.tv_sec() as u64, t.tv_usec() as u32 * 1000)
            };
            tv(usage.user_time()) + tv(usage.system_time())
        }
        Err(_) => Duration::ZERO,
    }
}

/// This process's peak resident memory in bytes (VmHWM), 0 where unknown.
pub fn peak_rss_bytes() -> u64 {
    crate::cluster::process::memory(std::process::id()).map_or(0, |(_, peak)| peak)
}

/// This process's resident memory now in bytes (VmRSS), 0 where unknown.
pub fn rss_bytes() -> u64 {
    crate::cluster::process::memory(std::process::id()).map_or(0, |(rss, _)| rss)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let before = cpu_time();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(cpu_time() > before);
        let (rss, peak) = crate::cluster::process::memory(std::process::id()).unwrap();
        assert!(peak >= rss && rss > 0);
        assert!(peak_rss_bytes() > 0);
    }
}
