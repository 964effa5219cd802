//! The connections a run opens against the open files its process may hold: each client
//! thread opens `--connections` to every node, and the driver's session as many again. A
//! run that would exceed the limit fails half-way with "Too many open files"; instead the
//! soft limit is raised towards the hard one when that is enough, and the run is refused
//! up front, by name, when it is not.

use nix::sys::resource::{getrlimit, setrlimit, Resource};

/// Files a run holds besides its connections: its run directory's files, the runtime's
/// own descriptors, the terminal.
const OTHER_FILES: u64 = 64;

/// The files a run needs: `threads` × `connections` to each of `nodes`, the driver's
/// `connections` to each, and [`OTHER_FILES`].
pub fn needed(threads: usize, connections: usize, nodes: usize) -> u64 {
    let per_node = (threads as u64)
        .saturating_add(1)
        .saturating_mul(connections as u64);
    per_node
        .saturating_mul(nodes as u64)
        .saturating_add(OTHER_FILES)
}

/// Makes room for `needed` open files: nothing when the soft limit allows them, the soft
/// limit raised (at most to the hard one) when that is enough; otherwise the limits, for a
/// message: `Err((soft, hard))`.
pub fn make_room(needed: u64) -> Result<(), (u64, u64)> {
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return Ok(());
    };
    if needed <= soft {
        return Ok(());
    }
    if needed <= hard && setrlimit(Resource::RLIMIT_NOFILE, needed, hard).is_ok() {
        return Ok(());
    }
    Err((soft, hard))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_raised_when_it_can_be_and_refused_when_not() {
        assert_eq!(needed(2, 1, 3), 3 * 3 + OTHER_FILES);
        assert_eq!(needed(usize::MAX, usize::MAX, 3), u64::MAX);
        assert!(make_room(10).is_ok());
        let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
        if hard < u64::MAX {
            let (soft, reported_hard) = make_room(hard + 1).unwrap_err();
            assert_eq!(reported_hard, hard);
            assert!(soft <= hard);
        }
    }
}
