//! Interrupting long array operations. The kernel's interrupt is a flag its session thread
//! checks; an array operation that can run for seconds (a large matrix product, an
//! element-wise operation over a billion values) checks it too, between blocks of work,
//! and stops with [`TensorError::Interrupted`] (Python's `KeyboardInterrupt`). The library
//! knows nothing of the language: whoever runs it on a thread names the flag with
//! [`watch`]; a thread that named none is never interrupted.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{TResult, TensorError};

thread_local! {
    static FLAG: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Makes `flag` the interrupt that long operations on this thread check.
pub fn watch(flag: Arc<AtomicBool>) {
    FLAG.with_borrow_mut(|f| *f = Some(flag));
}

/// `Err(Interrupted)` once the watched flag is set. The flag is cleared, as the interpreter
/// clears it when it raises `KeyboardInterrupt`, so one interrupt ends one operation.
pub fn check() -> TResult<()> {
    FLAG.with_borrow(|f| match f {
        Some(flag) if flag.load(Ordering::Relaxed) && flag.swap(false, Ordering::SeqCst) => {
            Err(TensorError::Interrupted)
        }
        _ => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_flag_interrupts_once() {
        assert!(check().is_ok());
        let flag = Arc::new(AtomicBool::new(false));
        watch(flag.clone());
        assert!(check().is_ok());
        flag.store(true, Ordering::SeqCst);
        assert_eq!(check(), Err(TensorError::Interrupted));
        assert!(check().is_ok());
    }
}
