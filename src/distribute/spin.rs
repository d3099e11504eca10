//! Bounded spinning before sleeping. A training step takes about a millisecond, and waking a
//! sleeping thread costs tens of microseconds, so the pool and the ring first spin for a short
//! while on an atomic flag and only then sleep on their condition variable. The budget is
//! small, so an idle pool costs no CPU for more than a few microseconds after each job.

use std::time::{Duration, Instant};

/// How long a waiter spins before it sleeps.
const SPIN_BUDGET: Duration = Duration::from_micros(30);

/// Spins until `ready()` is true or the budget runs out; returns `ready()`'s last value.
pub(crate) fn spin_until(ready: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= SPIN_BUDGET {
            return ready();
        }
    }
}
