//! What several test modules share: running cells through a real session (`cells`), the
//! index objects for driving a binding through `lang::StandIn` (`index`), the host-only replica model of the distribution tests (`host_mlp`), the
//! Keras strategy checks run on CPU and GPU replicas (`strategy`), and the CUDA test
//! helpers (`cuda`). Not every module uses every helper, so unused ones are allowed here.
#![allow(dead_code)]

pub mod cells;
pub mod cuda;
pub mod host_mlp;
pub mod index;
pub mod strategy;

use std::sync::{Mutex, MutexGuard};

use mirror_kernel::lang::Value;

/// A Python list of floats.
pub fn floats(v: &[f64]) -> Value {
    Value::list(v.iter().map(|x| Value::Float(*x)).collect())
}

/// Serialises the tests that set process-wide environment variables (`KERAS_HOME`): every
/// module runs in one process now, so two such tests must not overlap.
pub fn env_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    // A test that panicked while holding the lock leaves nothing half-set that matters to
    // the next one (each sets the variable it needs), so a poisoned lock is still usable.
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
