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

    #[test]
    fn the_meter_reports_every_interval_in_order_and_sees_small_hiccups() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let meter = HiccupMeter::start(Instant::now(), Duration::from_millis(50), move |i, h| {
            sink.lock().unwrap().push((i, h.len(), h.max()));
        });
        std::thread::sleep(Duration::from_millis(220));
        meter.stop();
        let seen = seen.lock().unwrap();
        let indexes: Vec<u64> = seen.iter().map(|s| s.0).collect();
        assert_eq!(
            indexes,
            (0..seen.len() as u64).collect::<Vec<_>>(),
            "consecutive intervals"
        );
        assert!(seen.len() >= 4, "{seen:?}");
        let samples: u64 = seen.iter().map(|s| s.1).sum();
        assert!(samples > 50, "about one sample per millisecond: {samples}");
    }
}
