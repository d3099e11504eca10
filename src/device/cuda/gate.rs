//! A reusable barrier for the replica threads of one all-reduce that a failing replica can
//! abort: threads waiting at an abortable point then return `false` instead of waiting for a
//! replica that will never arrive. `reset` re-arms it between steps.

use std::sync::{Condvar, Mutex};

pub struct Gate {
    n: usize,
    state: Mutex<State>,
    cv: Condvar,
}

struct State {
    generation: u64,
    arrived: usize,
    aborted: bool,
}

impl Gate {
    pub fn new(n: usize) -> Gate {
        Gate {
            n: n.max(1),
            state: Mutex::new(State {
                generation: 0,
                arrived: 0,
                aborted: false,
            }),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic on another replica thread must not become a second panic here.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until all `n` threads have arrived. With `abortable`, returns `false` as soon
    /// as the gate is aborted (before or while waiting).
    pub fn wait(&self, abortable: bool) -> bool {
        let mut s = self.lock();
        if abortable && s.aborted {
            return false;
        }
        s.arrived += 1;
        if s.arrived == self.n {
            s.arrived = 0;
            s.generation = s.generation.wrapping_add(1);
            self.cv.notify_all();
            return true;
        }
        let generation = s.generation;
        while s.generation == generation {
            if abortable && s.aborted {
                s.arrived = s.arrived.saturating_sub(1);
                return false;
            }
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        true
    }

    pub fn abort(&self) {
        self.lock().aborted = true;
        self.cv.notify_all();
    }

    pub fn reset(&self) {
        let mut s = self.lock();
        s.aborted = false;
        s.arrived = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Gate;

    #[test]
    fn all_pass_together_and_abort_releases_waiters() {
        let g = Gate::new(3);
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..3).map(|_| s.spawn(|| g.wait(true))).collect();
            assert!(hs.into_iter().all(|h| h.join().unwrap_or(false)));
        });
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..2).map(|_| s.spawn(|| g.wait(true))).collect();
            std::thread::sleep(std::time::Duration::from_millis(20));
            g.abort();
            assert!(hs.into_iter().all(|h| !h.join().unwrap_or(true)));
        });
        assert!(!g.wait(true), "an aborted gate refuses new arrivals");
        g.reset();
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..3).map(|_| s.spawn(|| g.wait(true))).collect();
            assert!(hs.into_iter().all(|h| h.join().unwrap_or(false)));
        });
    }
}
