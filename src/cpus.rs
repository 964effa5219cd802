//! Cores: the lists people give (`0`, `1-3`, `0,2-3`, `all`), the cores this process may
//! use, the default split of a machine between its local nodes and the client, and binding
//! threads and new processes to a set of cores and a scheduling priority.
//!
//! Binding uses the kernel's affinity mask (`sched_setaffinity`), which a thread inherits
//! from the thread that creates it and a process from the thread that forks it; a niceness
//! is inherited the same way. So [`bind_process`] binds every thread the process has (and
//! so every thread it starts later), and [`spawn_on`] starts a child (a node's JVM,
//! nodetool) from a short-lived thread bound to the child's cores and at its niceness,
//! whatever the calling thread's are. Why binding, why priority, and why this split:
//! docs/decisions/0018-nodes-and-client-on-cores-apart.md.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The highest core number a list may name (the kernel's affinity mask holds 1 024).
pub const MAX_CORE: usize = 1023;

/// A non-empty set of cores, by the kernel's numbers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cores(BTreeSet<usize>);

/// What a `--cpus` or `--client-cpus` flag asks for: these cores, or no binding at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreChoice {
    /// `all`: not bound; the process may run on any core, as the kernel schedules it.
    All,
    /// Bound to these cores.
    Only(Cores),
}

impl Cores {
    /// The cores of `numbers`; `None` when there are none.
    pub fn new(numbers: impl IntoIterator<Item = usize>) -> Option<Cores> {
        let set: BTreeSet<usize> = numbers.into_iter().collect();
        (!set.is_empty()).then_some(Cores(set))
    }

    /// How many cores.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Never true: a set of cores has at least one. (For the lint that pairs it with `len`.)
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The core numbers, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().copied()
    }

    /// Whether `core` is one of these.
    pub fn contains(&self, core: usize) -> bool {
        self.0.contains(&core)
    }

    /// The cores of `self` that are not in `other`; `None` when none are left.
    pub fn without(&self, other: &Cores) -> Option<Cores> {
        Cores::new(self.0.difference(&other.0).copied())
    }

    /// The cores both sets have; `None` when they have none in common.
    pub fn shared_with(&self, other: &Cores) -> Option<Cores> {
        Cores::new(self.0.intersection(&other.0).copied())
    }

    /// Both sets together.
    pub fn union(&self, other: &Cores) -> Cores {
        Cores(self.0.union(&other.0).copied().collect())
    }

    /// Whether every one of these cores is in `other`.
    pub fn is_within(&self, other: &Cores) -> bool {
        self.0.is_subset(&other.0)
    }

    /// The kernel's mask of these cores.
    fn mask(&self) -> nix::Result<CpuSet> {
        let mut mask = CpuSet::new();
        for core in self.iter() {
            mask.set(core)?;
        }
        Ok(mask)
    }

    /// The cores set in a kernel mask.
    fn of_mask(mask: &CpuSet) -> Option<Cores> {
        Cores::new((0..CpuSet::count()).filter(|&c| mask.is_set(c).unwrap_or(false)))
    }
}

/// Written as the kernel's lists are (`0`, `1-3`, `0,2-3`): what [`Cores::from_str`] reads
/// and `/proc/PID/status` shows as Cpus_allowed_list.
impl fmt::Display for Cores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut iter = self.iter().peekable();
        while let Some(first) = iter.next() {
            let mut last = first;
            while iter.peek() == Some(&(last + 1)) {
                last = iter.next().unwrap_or(last);
            }
            parts.push(if first == last {
                first.to_string()
            } else {
                format!("{first}-{last}")
            });
        }
        f.write_str(&parts.join(","))
    }
}

impl FromStr for Cores {
    type Err = String;

    /// A list of cores: numbers and ranges `A-B` (A ≤ B), comma-separated, e.g. `0,2-3`.
    fn from_str(text: &str) -> Result<Cores, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("an empty list of cores: give cores such as 1, 1-3 or 0,2-3".into());
        }
        let mut set = BTreeSet::new();
        for part in text.split(',') {
            let part = part.trim();
            let (from, to) = match part.split_once('-') {
                Some((a, b)) => (core_number(a, text)?, core_number(b, text)?),
                None => {
                    let n = core_number(part, text)?;
                    (n, n)
                }
            };
            if from > to {
                return Err(format!(
                    "'{part}' in '{text}' runs backwards: write the lower core first, e.g. \
                     {to}-{from}"
                ));
            }
            set.extend(from..=to);
        }
        Ok(Cores(set))
    }
}

/// One core number of `list`.
fn core_number(text: &str, list: &str) -> Result<usize, String> {
    let text = text.trim();
    let number: usize = text.parse().map_err(|_| {
        format!(
            "'{}' is not a list of cores: give core numbers and ranges, comma-separated, \
             e.g. 1, 1-3 or 0,2-3 (or all)",
            crate::usage::cut(list, 60)
        )
    })?;
    if number > MAX_CORE {
        return Err(format!(
            "core {number} in '{}' is beyond the highest core a machine can have here \
             ({MAX_CORE})",
            crate::usage::cut(list, 60)
        ));
    }
    Ok(number)
}

impl FromStr for CoreChoice {
    type Err = String;

    /// `all`, or a list of cores as [`Cores::from_str`] reads it.
    fn from_str(text: &str) -> Result<CoreChoice, String> {
        if text.trim().eq_ignore_ascii_case("all") {
            return Ok(CoreChoice::All);
        }
        text.parse().map(CoreChoice::Only)
    }
}

impl fmt::Display for CoreChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreChoice::All => f.write_str("all"),
            CoreChoice::Only(cores) => cores.fmt(f),
        }
    }
}

impl Serialize for Cores {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Cores {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Cores, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The cores this process was allowed when it first asked: those the machine (and any
/// `taskset` or cgroup around headroom) gives it, before headroom bound anything.
pub fn machine() -> &'static Cores {
    static MACHINE: OnceLock<Cores> = OnceLock::new();
    MACHINE.get_or_init(|| {
        sched_getaffinity(Pid::from_raw(0))
            .ok()
            .and_then(|mask| Cores::of_mask(&mask))
            .or_else(|| {
                let n = std::thread::available_parallelism().map_or(1, |n| n.get());
                Cores::new(0..n)
            })
            .unwrap_or_else(|| Cores(BTreeSet::from([0])))
    })
}

/// Refuses cores the machine does not give this process, naming the flag.
pub fn check_on_machine(cores: &Cores, flag: &str) -> Result<(), String> {
    check_within(cores, machine(), flag)
}

/// Refuses cores of `cores` that `machine` lacks, naming the flag.
pub fn check_within(cores: &Cores, machine: &Cores, flag: &str) -> Result<(), String> {
    match cores.without(machine) {
        None => Ok(()),
        Some(missing) => Err(format!(
            "{flag} {cores} names core{} {missing} that this process may not use: it has \
             {machine}",
            if missing.len() == 1 { "" } else { "s" }
        )),
    }
}

/// A machine's cores split between its local nodes and the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// The client's cores: the lowest one on up to 8 cores, the lowest two above.
    pub client: Cores,
    /// Every other core, shared by the nodes.
    pub nodes: Cores,
}

/// The cores the client keeps on a machine of `cores` cores: one up to 8, two above.
pub fn client_share(cores: usize) -> usize {
    if cores <= 8 {
        1
    } else {
        2
    }
}

/// The fewest cores the default splits: below, the nodes and the client share the cores.
/// On 2 cores a split leaves a node one core, and measured a node of a quarter of the
/// capacity (docs/decisions/0018-nodes-and-client-on-cores-apart.md); on 3 it takes a third
/// of the nodes' cores; from 4, a quarter or less.
pub const SPLIT_FROM: usize = 4;

/// The default split of `machine`: the lowest [`client_share`] cores for the client, the
/// rest for the nodes; `None` below [`SPLIT_FROM`] cores.
pub fn default_split(machine: &Cores) -> Option<Split> {
    if machine.len() < SPLIT_FROM {
        return None;
    }
    split(machine)
}

/// `machine` split as [`default_split`] does, from 2 cores up; `None` on one.
pub fn split(machine: &Cores) -> Option<Split> {
    let share = client_share(machine.len());
    let client = Cores::new(machine.iter().take(share))?;
    let nodes = machine.without(&client)?;
    Some(Split { client, nodes })
}

/// Binds every thread of this process to `cores`, and so every thread it starts from now on.
/// The machine's cores are read first ([`machine`]), so that nodes started later can be
/// given cores the client does not have.
pub fn bind_process(cores: &Cores) -> std::io::Result<()> {
    machine();
    let mask = cores.mask().map_err(std::io::Error::from)?;
    // Twice: a thread started while the first pass ran is bound by the second (it inherits
    // the mask of its creator, which the first pass may have reached only after the start).
    for _ in 0..2 {
        for tid in own_threads()? {
            match sched_setaffinity(Pid::from_raw(tid as i32), &mask) {
                // A thread that ended since the listing.
                Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

/// The ids of this process's threads, as `/proc/self/task` lists them now.
fn own_threads() -> std::io::Result<Vec<u32>> {
    Ok(std::fs::read_dir("/proc/self/task")?
        .flatten()
        .filter_map(|task| task.file_name().to_str()?.parse().ok())
        .collect())
}

/// Runs `start` (which starts a process) on a new thread bound to `cores` (the machine's
/// cores when `None`) and at scheduling `niceness`, so that the process it starts inherits
/// that binding and that priority rather than the caller's; returns what `start` returned.
pub fn spawn_on<T: Send>(
    cores: Option<&Cores>,
    niceness: i32,
    start: impl FnOnce() -> T + Send,
) -> T {
    let cores = cores.unwrap_or_else(|| machine()).clone();
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                // Binding can fail only for cores the kernel refuses (taken away since the
                // check); the process then starts with the caller's cores, as without it.
                if let Ok(mask) = cores.mask() {
                    let _ = sched_setaffinity(Pid::from_raw(0), &mask);
                }
                // A niceness below the caller's needs privilege: without it the process
                // starts at the caller's, as without it.
                let _ = set_thread_niceness(niceness);
                start()
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Sets the calling thread's niceness (−20 to 19; higher runs after lower when both wait
/// for a core). Threads and processes it starts afterwards inherit it.
#[allow(unsafe_code)]
fn set_thread_niceness(niceness: i32) -> std::io::Result<()> {
    // SAFETY: setpriority takes integers and touches no memory of this process. On Linux a
    // niceness belongs to a thread, and PRIO_PROCESS with `who` 0 sets the calling one's.
    let done = unsafe { nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, niceness) };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The niceness of process (or thread) `pid`, as `/proc/PID/stat` gives it.
pub fn niceness_of(pid: u32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the parenthesised command name: the niceness is the 19th field of
    // the line, the 17th after the name.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(16)?
        .parse()
        .ok()
}

/// The cores process (or thread) `pid` may run on, as `/proc/PID/status` gives them.
pub fn of_process(pid: u32) -> Option<Cores> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let list = status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))?;
    list.trim().parse().ok()
}

/// The cores every thread of this process may run on (their union).
pub fn of_this_process() -> Option<Cores> {
    let mut all: Option<Cores> = None;
    for tid in own_threads().ok()? {
        if let Some(cores) = of_process(tid) {
            all = Some(match all {
                Some(a) => a.union(&cores),
                None => cores,
            });
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cores(text: &str) -> Cores {
        text.parse().unwrap()
    }

    #[test]
    fn lists_read_numbers_ranges_and_commas() {
        assert_eq!(cores("3").iter().collect::<Vec<_>>(), [3]);
        assert_eq!(cores("1-3").iter().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(cores("0,2-3").iter().collect::<Vec<_>>(), [0, 2, 3]);
        assert_eq!(cores(" 5, 0 ,1 ").iter().collect::<Vec<_>>(), [0, 1, 5]);
        // Repeats and overlapping ranges are one set.
        assert_eq!(cores("1-3,2,3-4").iter().collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!(cores("7-7").iter().collect::<Vec<_>>(), [7]);
        assert_eq!(cores("1023").len(), 1);
    }

    #[test]
    fn lists_are_written_as_the_kernel_writes_them() {
        for (given, written) in [
            ("0", "0"),
            ("0-1", "0-1"),
            ("0,1,2,5,7,8", "0-2,5,7-8"),
            ("3,1,2", "1-3"),
            ("4-6,0", "0,4-6"),
        ] {
            assert_eq!(cores(given).to_string(), written);
            assert_eq!(cores(written).to_string(), written, "{written} reads back");
        }
    }

    #[test]
    fn all_means_unbound_in_any_case() {
        assert_eq!("all".parse::<CoreChoice>().unwrap(), CoreChoice::All);
        assert_eq!(" ALL ".parse::<CoreChoice>().unwrap(), CoreChoice::All);
        assert_eq!(
            "0-1".parse::<CoreChoice>().unwrap(),
            CoreChoice::Only(cores("0-1"))
        );
        assert_eq!(CoreChoice::All.to_string(), "all");
    }

    #[test]
    fn malformed_lists_are_refused_with_what_was_wrong() {
        for (given, says) in [
            ("", "empty list"),
            ("  ", "empty list"),
            (",", "not a list of cores"),
            ("1,", "not a list of cores"),
            ("a", "not a list of cores"),
            ("-1", "not a list of cores"),
            ("1-", "not a list of cores"),
            ("1..3", "not a list of cores"),
            ("1-2-3", "not a list of cores"),
            ("0x1", "not a list of cores"),
            ("3-1", "runs backwards"),
            ("1024", "beyond the highest core"),
            ("0-99999999999999999999", "not a list of cores"),
            ("alll", "not a list of cores"),
        ] {
            let err = given.parse::<CoreChoice>().unwrap_err();
            assert!(err.contains(says), "{given:?}: {err}");
        }
    }

    #[test]
    fn cores_the_machine_lacks_are_named() {
        let machine = cores("0-1");
        assert!(check_within(&cores("1"), &machine, "--cpus").is_ok());
        assert!(check_within(&cores("0-1"), &machine, "--cpus").is_ok());
        let err = check_within(&cores("1-3"), &machine, "--cpus").unwrap_err();
        assert!(err.contains("--cpus 1-3 names cores 2-3"), "{err}");
        assert!(err.contains("it has 0-1"), "{err}");
        let err = check_within(&cores("4"), &machine, "--client-cpus").unwrap_err();
        assert!(err.contains("--client-cpus 4 names core 4 "), "{err}");
    }

    #[test]
    fn the_default_split_keeps_one_core_for_the_client_up_to_eight_and_two_above() {
        assert_eq!(split(&cores("0")), None, "one core cannot be split");
        assert_eq!(split(&cores("5")), None);
        for few in ["0-1", "0-2", "3,7"] {
            assert_eq!(default_split(&cores(few)), None, "{few}: too few to split");
            assert!(split(&cores(few)).is_some(), "{few}");
        }
        let split = |m: &str| {
            let s = default_split(&cores(m)).unwrap();
            (s.client.to_string(), s.nodes.to_string())
        };
        assert_eq!(split("0-3"), ("0".into(), "1-3".into()));
        assert_eq!(split("0-7"), ("0".into(), "1-7".into()));
        assert_eq!(split("0-8"), ("0-1".into(), "2-8".into()));
        assert_eq!(split("0-63"), ("0-1".into(), "2-63".into()));
        // A process already held to some cores splits those.
        assert_eq!(split("2,5,9,11"), ("2".into(), "5,9,11".into()));
        for n in 2..=64 {
            let machine = Cores::new(0..n).unwrap();
            assert_eq!(
                default_split(&machine).is_some(),
                n >= SPLIT_FROM,
                "{n} cores"
            );
            let s = super::split(&machine).unwrap();
            assert_eq!(s.client.len() + s.nodes.len(), n);
            assert!(s.client.shared_with(&s.nodes).is_none());
            assert_eq!(s.client.len(), client_share(n));
        }
    }

    #[test]
    fn sets_combine() {
        let (a, b) = (cores("0-3"), cores("2-5"));
        assert_eq!(a.without(&b), Some(cores("0-1")));
        assert_eq!(a.without(&a), None);
        assert_eq!(a.shared_with(&b), Some(cores("2-3")));
        assert_eq!(a.shared_with(&cores("7")), None);
        assert_eq!(a.union(&b), cores("0-5"));
        assert!(cores("1-2").is_within(&a));
        assert!(!b.is_within(&a));
        assert_eq!(Cores::new(Vec::new()), None);
    }

    #[test]
    fn cores_are_stored_as_their_list() {
        let json = serde_json::to_string(&cores("0,2-3")).unwrap();
        assert_eq!(json, "\"0,2-3\"");
        assert_eq!(
            serde_json::from_str::<Cores>(&json).unwrap(),
            cores("0,2-3")
        );
        assert!(serde_json::from_str::<Cores>("\"3-1\"").is_err());
    }

    #[test]
    fn a_child_started_on_cores_runs_there_whatever_its_caller_is_bound_to() {
        // On a machine of one core there is nothing to tell apart.
        let machine = machine().clone();
        let Some(split) = split(&machine) else {
            return;
        };
        let sleep = || {
            std::process::Command::new("sleep")
                .arg("5")
                .spawn()
                .unwrap()
        };
        // A niceness above the caller's: raising it needs no privilege.
        let caller = niceness_of(std::process::id()).unwrap();
        let nicer = (caller + 3).min(19);
        let child = spawn_on(Some(&split.nodes), nicer, sleep);
        let mut child = scopeguard(child);
        assert_eq!(of_process(child.0.id()), Some(split.nodes.clone()));
        assert_eq!(niceness_of(child.0.id()), Some(nicer));
        // The caller keeps its own.
        assert_eq!(niceness_of(std::process::id()), Some(caller));
        // Unbound (None): the machine's cores, not the calling thread's.
        let spawned_here = std::thread::spawn(move || {
            sched_setaffinity(Pid::from_raw(0), &split.client.mask().unwrap()).unwrap();
            spawn_on(None, caller, sleep)
        })
        .join()
        .unwrap();
        let mut other = scopeguard(spawned_here);
        assert_eq!(of_process(other.0.id()), Some(machine));
        assert_eq!(niceness_of(other.0.id()), Some(caller));
        child.stop();
        other.stop();
    }

    /// A child stopped when the test ends, also when it fails.
    struct Guard(std::process::Child);
    fn scopeguard(child: std::process::Child) -> Guard {
        Guard(child)
    }
    impl Guard {
        fn stop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    impl Drop for Guard {
        fn drop(&mut self) {
            self.stop();
        }
    }
}
