//! The parent watch: the kernel exits when the process that launched it dies, as
//! ipykernel's parent poller does. Jupyter names its own process in `JPY_PARENT_PID`; on
//! POSIX a child whose parent dies is handed to another process (init, or a subreaper), so
//! the kernel looks once a second at its parent's id and at whether the named process still
//! exists, and exits when either says the launcher is gone. Without the variable (a kernel
//! started by hand) nothing is watched.

use std::time::Duration;

use super::log;

/// How often the parent is looked at, as ipykernel's poller does.
const POLL: Duration = Duration::from_secs(1);

/// The variable Jupyter sets to its own process id when it launches a kernel.
pub const PARENT_VARIABLE: &str = "JPY_PARENT_PID";

/// Starts the watch when `JPY_PARENT_PID` names a parent; the process exits (status 1, as
/// ipykernel's `os._exit(1)`) once that parent is gone.
pub fn watch() {
    let Some(pid) = std::env::var(PARENT_VARIABLE)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
    else {
        return;
    };
    // PID 1 never goes away, it is only handed orphans: nothing to watch then.
    if pid <= 1 {
        return;
    }
    let started_under = parent_id();
    let spawned = std::thread::Builder::new()
        .name("mirror-parent-watch".into())
        .spawn(move || loop {
            std::thread::sleep(POLL);
            if parent_gone(pid, started_under) {
                log("the parent process has exited; shutting down");
                std::process::exit(1);
            }
        });
    if let Err(e) = spawned {
        log(format!("could not start the parent watch: {e}"));
    }
}

#[cfg(unix)]
fn parent_id() -> u32 {
    std::os::unix::process::parent_id()
}

#[cfg(not(unix))]
fn parent_id() -> u32 {
    0
}

/// Whether the launcher named `pid` is gone: this process was handed to a new parent, or
/// (where `/proc` tells) no process `pid` is left alive.
fn parent_gone(pid: u32, started_under: u32) -> bool {
    if cfg!(unix) && parent_id() != started_under {
        return true;
    }
    let proc_dir = std::path::Path::new("/proc");
    if !proc_dir.is_dir() {
        return false;
    }
    match std::fs::read_to_string(proc_dir.join(pid.to_string()).join("stat")) {
        // A process that has exited but is not yet reaped is a zombie: state `Z`.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_parent_is_not_gone_and_a_missing_one_is() {
        let me = std::process::id();
        assert!(!parent_gone(me, parent_id()));
        if std::path::Path::new("/proc").is_dir() {
            // Process ids are below 2**22 on Linux.
            assert!(parent_gone(u32::MAX - 1, parent_id()));
        }
        if cfg!(unix) {
            assert!(parent_gone(me, parent_id().wrapping_add(1)));
        }
    }
}
