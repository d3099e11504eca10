//! Bounded spinning before sleeping. A training step takes about a millisecond, and waking a
//! sleeping thread costs tens of microseconds, so the pool and the ring first wait actively
//! for a short while on an atomic flag and only then sleep on their condition variable.
//!
//! The active wait spins only briefly and then yields its core at every check: when every
//! core holds a replica, a waiter that kept spinning would take a core from the very thread
//! it waits for (the dispatcher preparing the next batch, or a slower replica), while a
//! yielding waiter hands the core over and still notices the flag within microseconds. The
//! budget is small, so an idle pool costs no CPU shortly after each job.

use std::time::{Duration, Instant};

/// How long a waiter keeps checking before it sleeps.
const WAIT_BUDGET: Duration = Duration::from_micros(150);

/// Pure spins (a few hundred nanoseconds) before the waiter starts yielding its core.
const PURE_SPINS: usize = 256;

/// Waits until `ready()` is true or the budget runs out; returns `ready()`'s last value.
pub(crate) fn spin_until(ready: impl Fn() -> bool) -> bool {
    for _ in 0..PURE_SPINS {
        if ready() {
            return true;
        }
        std::hint::spin_loop();
    }
    let start = Instant::now();
    loop {
        if ready() {
            return true;
        }
        if start.elapsed() >= WAIT_BUDGET {
            return ready();
        }
        std::thread::yield_now();
    }
}
