//! What the two floor programs share: their arguments, a runtime like the engine's, a value
//! generator and the process's CPU time.

/// RATE, SECONDS and KEYSPACE from the command line (10 000/s, 30 s, `bench_headroom`).
pub fn args() -> (u64, u64, String) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rate = args.first().map_or(10_000, |a| a.parse().expect("RATE"));
    let seconds = args.get(1).map_or(30, |a| a.parse().expect("SECONDS"));
    let keyspace = args.get(2).cloned().unwrap_or("bench_headroom".into());
    (rate, seconds, keyspace)
}

/// One worker thread, as `headroom run --threads 1`.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A cheap deterministic generator (xorshift64*), for keys and value offsets.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A megabyte of letters and digits to cut values from, as headroom's text pool.
    pub fn pool(&mut self) -> Vec<u8> {
        (0..1 << 20)
            .map(|_| b"abcdefghijklmnopqrstuvwxyz0123456789"[(self.next() % 36) as usize])
            .collect()
    }
}

/// User + system CPU time of the process so far, seconds.
pub fn cpu_seconds() -> f64 {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .expect("getrusage");
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    seconds(usage.user_time()) + seconds(usage.system_time())
}

/// The line both programs end with.
pub fn report(sent: u64, answered: u64, failed: u64, cpu: f64) {
    println!(
        "sent {sent}, answered {answered}, failed {failed}; CPU {cpu:.3} s = {:.2} µs per request",
        cpu * 1e6 / answered.max(1) as f64
    );
}
