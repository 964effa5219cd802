//! The client hiccup meter (jHiccup's idea): a thread that asks to sleep 1 ms, over and over,
//! and records how much longer each sleep took. When the client process stalls (scheduler,
//! page faults, a starved core), this shows it: the run's latencies are then not all the
//! server's doing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::new_histogram;

/// The sleep the meter asks for.
pub const RESOLUTION: Duration = Duration::from_millis(1);

/// A running hiccup meter. It hands one histogram per interval to `sink`, in order, and the
/// last (partial) one when stopped.
pub struct HiccupMeter {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl HiccupMeter {
    /// Starts the meter. Intervals are `interval` long from `t0`; `sink(index, histogram)`
    /// receives each finished interval's hiccups in nanoseconds.
    pub fn start(
        t0: Instant,
        interval: Duration,
        mut sink: impl FnMut(u64, Histogram<u64>) + Send + 'static,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let interval_ns = interval.as_nanos().max(1) as u64;
        let thread = std::thread::Builder::new()
            .name("hiccup-meter".into())
            .spawn(move || {
                let mut current = 0u64;
                let mut histogram = new_histogram();
                while !flag.load(Ordering::Relaxed) {
                    let before = Instant::now();
                    std::thread::sleep(RESOLUTION);
                    let after = Instant::now();
                    let hiccup = after.duration_since(before).saturating_sub(RESOLUTION);
                    let index = after.duration_since(t0).as_nanos() as u64 / interval_ns;
                    while index > current {
                        sink(current, std::mem::replace(&mut histogram, new_histogram()));
                        current += 1;
                    }
                    let _ = histogram.record((hiccup.as_nanos() as u64).max(1));
                }
                sink(current, histogram);
            })
            .expect("the hiccup meter thread starts");
        HiccupMeter {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the meter after it has handed over its last interval.
    pub fn stop(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for HiccupMeter {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Timing-free where it can be: on a shared host the meter's thread may be held up for
    /// tens of milliseconds, so the test does not count samples per millisecond. It checks
    /// what holds however the thread is scheduled: each sample stands for one sleep (the
    /// resolution plus its hiccup), and together they cover the meter's running time, less
    /// only the moments between sleeps, and never more.
    #[test]
    fn the_meter_reports_every_interval_in_order_and_accounts_for_its_time() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let started = Instant::now();
        let meter = HiccupMeter::start(started, Duration::from_millis(100), move |i, h| {
            let hiccups_ns = h.mean() * h.len() as f64;
            sink.lock().unwrap().push((i, h.len(), hiccups_ns, h.max()));
        });
        std::thread::sleep(Duration::from_millis(520));
        meter.stop();
        let elapsed_ns = started.elapsed().as_nanos() as f64;
        let seen = seen.lock().unwrap();
        let indexes: Vec<u64> = seen.iter().map(|s| s.0).collect();
        assert_eq!(
            indexes,
            (0..seen.len() as u64).collect::<Vec<_>>(),
            "consecutive intervals"
        );
        // Stopped after 520 ms: intervals 0 to 5 at least, the last one partial.
        assert!(seen.len() >= 6, "{seen:?}");
        let covered_ns: f64 = seen
            .iter()
            .map(|s| s.1 as f64 * RESOLUTION.as_nanos() as f64 + s.2)
            .sum();
        // The histogram keeps three significant digits: 0.1% either way.
        assert!(
            covered_ns <= elapsed_ns * 1.001,
            "sleeps of {covered_ns} ns in {elapsed_ns} ns"
        );
        assert!(
            covered_ns >= elapsed_ns * 0.5,
            "sleeps of {covered_ns} ns in {elapsed_ns} ns"
        );
        // A sleep always overshoots a little (the kernel's timer slack is 50 µs), and the
        // meter sees it.
        let max_ns = seen.iter().map(|s| s.3).max().unwrap();
        assert!(max_ns >= 1_000, "largest hiccup {max_ns} ns");
    }
}
