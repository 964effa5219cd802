//! The HTML report in a real browser: the report (made in-process, as `headroom report`
//! makes it) of fixture directories of real output (a 10-second run with an SLA, an
//! automatic capacity search and a concurrency sweep), opened with headless Chromium, which must log no console message; the screenshots are kept in
//! target/tmp/report-screenshots/ for a person to look at.
//!
//! The fixtures stand in for a run against Cassandra so that this test needs no cluster;
//! they are trimmed copies of what `headroom run` and `headroom capacity` wrote (see
//! tests/fixtures/report/README.md).
//!
//! Chromium comes from Debian's `chromium` package. Without it the test is skipped with a
//! message, except in CI (`CI` set), where a missing browser fails it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use headroom::report::ReportOptions;

use crate::support;

/// The longest Chromium may take to render one page.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(120);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/report")
        .join(name)
}

fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Opens `page` in headless Chromium, saves a screenshot to `png`, and returns the console
/// messages it logged.
fn open_in_chromium(chromium: &Path, page: &Path, png: &Path, height: u32) -> Vec<String> {
    let profile = tempfile::tempdir().unwrap();
    let _ = std::fs::remove_file(png);
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--enable-logging=stderr",
            "--v=0",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size=1280,{height}"))
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting chromium");
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium failed: {status}");
            break;
        }
        if started.elapsed() > CHROMIUM_TIMEOUT {
            // Our own child, by its handle.
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium took longer than {CHROMIUM_TIMEOUT:?} on {}",
                page.display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = reader.join().unwrap();
    let png_bytes = std::fs::read(png).expect("chromium wrote no screenshot");
    assert_eq!(&png_bytes[1..4], b"PNG", "{} is not a PNG", png.display());
    log.lines()
        .filter(|line| line.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

/// Writes the report of `dirs` into `out` in-process, as `headroom report DIRS -o OUT --svg
/// SVG` does.
fn write_report(dirs: &[PathBuf], out: &Path, svg: &Path) {
    let options = ReportOptions {
        svg_dir: Some(svg.to_path_buf()),
        ..ReportOptions::default()
    };
    let written = headroom::report::write_report_with(dirs, out, &options).unwrap();
    assert_eq!(written.html, out);
    assert_eq!(written.svgs.len(), written.charts);
}

#[test]
fn the_report_of_a_real_run_opens_in_chromium_without_console_errors() {
    // Chromium's start-ups would take the CPU from a load test's client beside it.
    let _machine = support::exclusive();
    let Some(chromium) = support::chromium() else {
        return;
    };
    let out = screenshot_dir();
    for (name, dirs, height, least) in [
        ("run", vec![fixture("run")], 3000, 3),
        ("capacity", vec![fixture("capacity")], 4200, 3),
        ("sweep", vec![fixture("sweep")], 2200, 2),
    ] {
        let page = out.join(format!("{name}.html"));
        let svg = out.join(format!("{name}-svg"));
        let _ = std::fs::remove_dir_all(&svg);
        write_report(&dirs, &page, &svg);
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(!html.contains("<script"));
        let charts = html.matches("<figure").count();
        assert!(charts >= least, "{name}: {charts} charts");
        if name == "sweep" {
            // The two charts of Mark Price's cassandra-stress series.
            assert!(html.contains("Throughput against concurrency: sweep"));
            assert!(html.contains("Latency against throughput: sweep"));
        }
        assert_eq!(std::fs::read_dir(&svg).unwrap().count(), charts);
        support::assert_catalogued(&svg);

        let png = out.join(format!("{name}.png"));
        let console = open_in_chromium(&chromium, &page, &png, height);
        assert!(
            console.is_empty(),
            "{name}: the browser console says:\n{}",
            console.join("\n")
        );
        eprintln!("screenshot of the {name} report: {}", png.display());
    }
}

#[test]
fn a_page_with_a_console_error_is_caught() {
    // The check above is only worth something if Chromium's console reaches us.
    // Chromium's start-up would take the CPU from a load test's client beside it.
    let _machine = support::exclusive();
    let Some(chromium) = support::chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p>broken</p>\
         <script>console.error('boom'); notDefinedAnywhere();</script></body></html>",
    )
    .unwrap();
    let console = open_in_chromium(&chromium, &page, &dir.path().join("broken.png"), 300);
    assert!(
        console.iter().any(|l| l.contains("boom")),
        "console: {console:?}"
    );
    assert!(
        console.iter().any(|l| l.contains("notDefinedAnywhere")),
        "console: {console:?}"
    );
}
