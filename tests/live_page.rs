//! The live page of a real run in a real browser: `headroom run --live 127.0.0.1:0` against
//! one local node, with an SLA every window fails; its page read while the run goes (over
//! plain HTTP, and with headless Chromium's DOM and screenshots), then, once the run has
//! ended, the end said and the report served while headroom lingers. What the page showed
//! is checked against the run's intervals.csv afterwards.
//!
//! The screenshots are kept in the test's directory; with `HEADROOM_DOCS_SCREENSHOTS=DIR`
//! they are also copied to DIR as live-running.png and live-ended.png (the docs' images).
//! Without Chromium the test is skipped with a message, except in CI, as the report's
//! browser test is.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use headroom::cluster::LocalCluster;
use nix::sys::signal::Signal;

use crate::support;

/// The longest Chromium may take over one page.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest the run may take to reach a point of the test: connecting, the schema and a
/// busy machine's pauses included.
const PATIENCE: Duration = Duration::from_secs(180);

/// headroom, killed by its pid if the test ends (or fails) before it has exited.
struct Headroom(Child);

impl Drop for Headroom {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// The lines of the child's standard output as they come, read on a thread of their own.
fn follow(child: &mut Child) -> Receiver<String> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            eprintln!("headroom> {line}");
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The first line of `lines` that `wanted` accepts, within `limit`.
fn wait_line(lines: &Receiver<String>, limit: Duration, wanted: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if wanted(&line) => return line,
            Ok(_) => {}
            Err(e) => panic!("the line awaited did not come within {limit:?}: {e}"),
        }
    }
}

/// The address in a `Watch it live: ... at http://ADDR/...` line.
fn address_in(line: &str) -> SocketAddr {
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    url["http://".len()..].split('/').next().unwrap().parse().unwrap()
}

/// Ends headroom's linger with SIGTERM (sent again every 10 s, in case one came before the
/// linger listened); how it exited.
fn end_linger(headroom: &mut Headroom) -> std::process::ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        headroom::cluster::process::signal(headroom.0.id(), Signal::SIGTERM).unwrap();
        let sent = Instant::now();
        while sent.elapsed() < Duration::from_secs(10) {
            if let Some(status) = headroom.0.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(Instant::now() < deadline, "headroom went on lingering after SIGTERM");
    }
}

/// `GET path` over a connection of its own: the status and the body; `None` when nothing
/// answered.
fn get(addr: SocketAddr, path: &str) -> Option<(u16, Vec<u8>)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).ok()?;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, raw[split + 4..].to_vec()))
}

/// The page as the server renders it now.
fn page(addr: SocketAddr) -> String {
    match get(addr, "/") {
        Some((200, body)) => String::from_utf8(body).unwrap(),
        other => panic!("GET / answered {:?}", other.map(|o| o.0)),
    }
}

/// Polls the page until `done` holds, within `limit`; returns that page.
fn page_when(addr: SocketAddr, limit: Duration, what: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + limit;
    loop {
        let html = page(addr);
        if done(&html) {
            return html;
        }
        assert!(
            Instant::now() < deadline,
            "the page did not show {what} within {limit:?}:\n{}",
            support::cut(&html, 3000)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The text of the element with this id, up to its first child's or its end tag.
fn text_of<'a>(html: &'a str, id: &str) -> Option<&'a str> {
    let at = html.find(&format!("id=\"{id}\""))?;
    let start = at + html[at..].find('>')? + 1;
    let end = start + html[start..].find('<')?;
    Some(&html[start..end])
}

/// The latest interval's end on a page, in seconds.
fn latest_end(html: &str) -> Option<f64> {
    text_of(html, "latest-end")?.parse().ok()
}

/// Runs headless Chromium on `url` with `args`; its standard output.
fn chromium(chromium: &Path, args: &[String], url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-proxy-server",
            "--disable-background-networking",
            "--hide-scrollbars",
            "--window-size=1280,1800",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromium");
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(stdout).read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium {args:?} failed: {status}");
            break;
        }
        if started.elapsed() > CHROMIUM_TIMEOUT {
            // Our own child, by its handle.
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} took longer than {CHROMIUM_TIMEOUT:?} on {url}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap()
}

/// The page's DOM once Chromium has loaded it.
fn dump_dom(browser: &Path, url: &str) -> String {
    let dom = chromium(browser, &["--dump-dom".to_string()], url);
    assert!(
        dom.contains("id=\"live\""),
        "not the live page:\n{}",
        support::cut(&dom, 2000)
    );
    dom
}

/// A screenshot of the page, as PNG bytes, saved to `png`.
fn screenshot(browser: &Path, url: &str, png: &Path) -> Vec<u8> {
    let _ = std::fs::remove_file(png);
    chromium(browser, &[format!("--screenshot={}", png.display())], url);
    let bytes = std::fs::read(png).expect("chromium wrote no screenshot");
    assert_eq!(&bytes[1..4], b"PNG", "{} is not a PNG", png.display());
    eprintln!("screenshot of the live page: {}", png.display());
    bytes
}

/// Each interval of intervals.csv: its end and its rate of answers (every phase and op
/// type, failed requests included, as the page counts them), from its rows.
fn interval_rates(run: &Path) -> Vec<(f64, f64)> {
    let mut by_start: Vec<(f64, f64, u64)> = Vec::new();
    for row in support::interval_rows(run) {
        if row[2] == "window" {
            continue;
        }
        let (start_s, length_s): (f64, f64) = (row[0].parse().unwrap(), row[1].parse().unwrap());
        let requests: u64 = row[4].parse().unwrap();
        match by_start.iter_mut().find(|i| (i.0 - start_s).abs() < 1e-6) {
            Some(i) => i.2 += requests,
            None => by_start.push((start_s, length_s, requests)),
        }
    }
    by_start
        .into_iter()
        .map(|(start, length, requests)| (start + length, requests as f64 / length))
        .collect()
}

/// Whether `shown`, as the page writes it, is `value` to the places it shows (with the
/// slack of intervals.csv's own rounding of the interval's length).
fn shows(shown: &str, value: f64) -> bool {
    let places = shown.split_once('.').map_or(0, |(_, f)| f.len());
    let half_unit = 0.5 / 10f64.powi(places as i32);
    let shown: f64 = shown.parse().unwrap();
    (shown - value).abs() <= half_unit + value.abs() * 1e-3
}

#[test]
fn the_live_page_follows_a_run_and_links_its_report() {
    let Some(browser) = support::chromium() else {
        return;
    };
    let _machine = support::exclusive();
    let dir = support::cluster_dir("live_page");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("run");
    // Every window fails: no answer comes within 10 µs. headroom lingers long enough for a
    // busy machine's browser; the test ends the linger with SIGTERM once it has looked.
    let hosts = support::hosts();
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "run",
            "keyvalue",
            "--rate",
            "300",
            "--duration",
            "20s",
            "--warmup",
            "2s",
        ])
        .args([
            "--sla",
            "p50<10us",
            "--window",
            "2s",
            "--live",
            "127.0.0.1:0",
        ])
        .args(["--linger", "10m", "--hosts", &hosts])
        .arg("--cluster-dir")
        .arg(&dir)
        .arg("--out")
        .arg(&out)
        .env_remove("HEADROOM_CLUSTER_DIR")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = follow(&mut child);
    let mut run = Headroom(child);

    let line = wait_line(&lines, PATIENCE, |l| l.starts_with("Watch it live:"));
    let addr = address_in(&line);
    let url = format!("http://{addr}/");
    assert!(line.ends_with(&url) && addr.ip().to_string() == "127.0.0.1", "{line}");

    // While the run goes: the page follows it, intervals and judged windows.
    let first = page_when(addr, PATIENCE, "a failing window", |html| {
        html.contains("<span class=\"w fail\"") && latest_end(html).is_some()
    });
    assert!(
        first.contains("p50&lt;10us was"),
        "the failing term and its value"
    );
    assert!(first.contains("<svg class=\"chart\""));
    let shots = work.path();
    let running = [shots.join("running-1.png"), shots.join("running-2.png")];
    let before = screenshot(&browser, &url, &running[0]);
    // The next screenshot comes a few intervals after anything the first could have shown
    // (and so shows more of the run: it is the docs' picture of a run going on).
    let seen = latest_end(&page(addr)).unwrap();
    page_when(addr, PATIENCE, "four more intervals", |html| {
        html.contains("id=\"ended\"") || latest_end(html).is_some_and(|end| end >= seen + 4.0)
    });
    let after = screenshot(&browser, &url, &running[1]);
    assert_ne!(before, after, "the page changed as intervals arrived");

    let dom = dump_dom(&browser, &url);
    let achieved = text_of(&dom, "achieved")
        .expect("the latest interval's achieved rate")
        .to_string();
    let end_s: f64 = text_of(&dom, "latest-end").unwrap().parse().unwrap();
    assert!(
        text_of(&dom, "attempted") == Some("300"),
        "{:?}",
        text_of(&dom, "attempted")
    );
    assert!(
        dom.contains("<span class=\"w fail\""),
        "a failing window in the strip"
    );
    assert!(dom.contains("p50&lt;10us was"), "its failing term");
    assert!(
        dom.matches("<svg class=\"chart\"").count() >= 5,
        "the charts"
    );

    // The end: said on the page, which links the report, while headroom lingers.
    page_when(addr, PATIENCE, "the end", |html| {
        html.contains("id=\"ended\"")
    });
    wait_line(&lines, PATIENCE, |l| {
        l.starts_with("Serving the final state")
    });
    // A busy machine (Chromium's start-ups beside the client) may make the run client-bound:
    // then it ends without a verdict (exit 4), its windows failed all the same.
    let summary = support::read_json(&out.join("summary.json"));
    assert_eq!(summary["sla"]["verdict"]["pass"], false, "{}", summary["sla"]);
    let valid = summary["validity"]["verdict"] == "valid";
    if !valid {
        assert_eq!(summary["validity"]["verdict"], "client-bound", "{}", summary["validity"]);
    }
    let dom = dump_dom(&browser, &url);
    let ended = text_of(&dom, "ended").map(str::to_string);
    let said = if valid {
        "The run has ended: FAIL"
    } else {
        "The run has ended: no verdict: the client could not keep its schedule"
    };
    assert!(dom.contains(said), "{ended:?}");
    assert!(
        dom.contains("<a href=\"/report\">"),
        "the link to the report"
    );
    assert!(!dom.contains("id=\"stage\""));
    let last = shots.join("ended.png");
    screenshot(&browser, &url, &last);
    let (status, report) = get(addr, "/report").expect("an answer at /report");
    assert_eq!(status, 200);
    assert_eq!(
        report,
        std::fs::read(out.join("report.html")).unwrap(),
        "the run's report.html"
    );

    // SIGTERM ends the linger; the run's exit code stands (3: the SLA failed; 4: no verdict,
    // client-bound).
    let status = end_linger(&mut run);
    let code = if valid { 3 } else { 4 };
    assert_eq!(status.code(), Some(code), "the run's own exit code, 3 when valid");
    assert!(
        get(addr, "/").is_none(),
        "nothing answers once headroom has exited"
    );

    // What the page showed is the run's: one of its intervals' rates and ends.
    let intervals = interval_rates(&out);
    assert!(intervals.len() >= 20, "{intervals:?}");
    assert!(
        intervals.iter().any(|(_, rate)| shows(&achieved, *rate)),
        "achieved {achieved}/s is no interval's rate: {intervals:?}"
    );
    let run_end = intervals.iter().map(|i| i.0).fold(0.0, f64::max);
    assert!(
        end_s > 0.0 && end_s <= run_end + 0.05,
        "{end_s} s after a run of {run_end} s"
    );
    assert!(
        intervals
            .iter()
            .any(|(end, _)| shows(&format!("{end_s:.1}"), *end)),
        "no interval ends at {end_s} s: {intervals:?}"
    );

    if let Some(docs) = std::env::var_os("HEADROOM_DOCS_SCREENSHOTS") {
        let docs = PathBuf::from(docs);
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::copy(&running[1], docs.join("live-running.png")).unwrap();
        std::fs::copy(&last, docs.join("live-ended.png")).unwrap();
        eprintln!("screenshots copied to {}", docs.display());
    }
}

/// A capacity search watched live: while a trial runs, its rate and repeat are on the page
/// and in the search's metrics; the ladder grows with each rate's verdict; at the end the
/// page says so, with the bracket, and links the search's report.
#[test]
fn a_search_shows_its_ladder_and_trial_as_it_goes() {
    let _machine = support::exclusive();
    let dir = support::cluster_dir("live_search");
    let _cluster =
        LocalCluster::start(&dir, support::small_cluster(1), &support::start_options()).unwrap();
    let work = tempfile::tempdir().unwrap();
    let hosts = support::hosts();
    // A trial that a client stall on this busy machine makes client-bound stops the search
    // without a verdict (exit 4) before the page can show what is awaited: then the search
    // is watched once more, in a fresh directory.
    for attempt in 1..=2 {
        let out = work.path().join(format!("search-{attempt}"));
        if watch_search(&dir, &hosts, &out, attempt == 2) {
            return;
        }
    }
    unreachable!("the last attempt passes or fails the test");
}

/// A rate of a search's ladder judged invalid (client-bound), as the live page shows it.
const INVALID_RUNG: &str = "<tr class=\"invalid\">";

/// Polls the page until `done` holds, within `limit`, as [`page_when`] does; or, as soon as
/// the page shows the search ended or a rate invalid instead (which no more waiting would
/// change), that page as `Err`.
fn search_page_when(
    addr: SocketAddr,
    limit: Duration,
    what: &str,
    done: impl Fn(&str) -> bool,
) -> Result<String, String> {
    let deadline = Instant::now() + limit;
    loop {
        let html = page(addr);
        if done(&html) {
            return Ok(html);
        }
        if html.contains("id=\"ended\"") || html.contains(INVALID_RUNG) {
            return Err(html);
        }
        assert!(
            Instant::now() < deadline,
            "the page did not show {what} within {limit:?}:\n{}",
            support::cut(&html, 3000)
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The end of a search whose page (`html`) showed it stopping early: it must be a rate
/// judged invalid, the search ending with exit 4. `false` (watch it again) unless this was
/// the `last` attempt, which fails the test.
fn stopped_client_bound(search: &mut Headroom, addr: SocketAddr, html: &str, last: bool) -> bool {
    assert!(
        html.contains(INVALID_RUNG),
        "the search ended before the page showed what was awaited:\n{}",
        support::cut(html, 3000)
    );
    // The search stops at the invalid trial; its exit code stands once the page says so.
    page_when(addr, PATIENCE, "the end", |html| html.contains("id=\"ended\""));
    let status = end_linger(search);
    assert_eq!(status.code(), Some(4), "a search stopped at a client-bound trial");
    assert!(
        !last,
        "a trial was client-bound in both attempts:\n{}",
        support::cut(html, 3000)
    );
    eprintln!("a trial was client-bound on this busy machine: the search is watched once more");
    false
}

/// One watched search of the test above, into `out`: `true` when every check passed;
/// `false` when a trial was client-bound (see [`stopped_client_bound`]).
fn watch_search(dir: &Path, hosts: &str, out: &Path, last: bool) -> bool {
    // Two rates that any machine carries within an SLA of 5 s: the ladder is two passes.
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["capacity", "keyvalue", "--rates", "200,400", "--duration", "6s", "--warmup", "1s"])
        .args(["--sla", "p99<5s", "--window", "2s", "--label", "watched search"])
        .args(["--live", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
        .args(["--linger", "10m", "--hosts", hosts])
        .arg("--cluster-dir")
        .arg(dir)
        .arg("--out")
        .arg(out)
        .env_remove("HEADROOM_CLUSTER_DIR")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = follow(&mut child);
    let mut search = Headroom(child);
    let metrics = address_in(&wait_line(&lines, PATIENCE, |l| l.starts_with("Watch it live: metrics at")));
    let addr = address_in(&wait_line(&lines, PATIENCE, |l| l.starts_with("Watch it live: live page at")));

    // The second trial running: the first rate's verdict in the ladder, the second's rate
    // as the trial now.
    let during = match search_page_when(addr, PATIENCE, "the second trial running", |html| {
        text_of(html, "trial").is_some_and(|t| t.contains("Now running"))
            && html.contains("<b>400/s</b>")
            && html.contains("<b>200/s</b>, the highest rate that passed")
    }) {
        Ok(html) => html,
        Err(html) => return stopped_client_bound(&mut search, addr, &html, last),
    };
    assert!(during.contains("id=\"ladder\""), "the ladder");
    // The search's own metrics say the same: the trial's rate and repeat, the bracket.
    let text = match get(metrics, "/metrics") {
        Some((200, body)) => String::from_utf8(body).unwrap(),
        other => panic!("GET /metrics answered {:?}", other.map(|o| o.0)),
    };
    for sample in [
        "headroom_trial_rate_requests_per_second{run=\"watched search\",workload=\"keyvalue\",worker=\"single\"} 400.0",
        "headroom_trial_repeat{run=\"watched search\",workload=\"keyvalue\",worker=\"single\"} 1.0",
        "headroom_capacity_bracket_requests_per_second{run=\"watched search\",workload=\"keyvalue\",worker=\"single\",bound=\"low\"} 200.0",
    ] {
        assert!(text.contains(sample), "{sample} is not in:\n{}", support::cut(&text, 4000));
    }
    assert!(during.contains("watched search"), "the search's name");
    let ended = page_when(addr, PATIENCE, "the end", |html| html.contains("id=\"ended\""));
    if ended.contains(INVALID_RUNG) {
        // The second trial was client-bound.
        return stopped_client_bound(&mut search, addr, &ended, last);
    }
    assert!(
        ended.contains("<b>400/s</b>, the highest rate that passed"),
        "the bracket at the end:\n{}",
        support::cut(&ended, 3000)
    );
    assert!(ended.contains("href=\"/report\""), "the report linked");
    let (status, report) = get(addr, "/report").expect("the report is served");
    assert_eq!(status, 200);
    assert_eq!(report, std::fs::read(out.join("report.html")).unwrap(), "the search's report");

    let status = end_linger(&mut search);
    assert_eq!(status.code(), Some(0), "a search that found its capacity");
    true
}
