//! The replica pool: one persistent worker thread per replica, living across training steps
//! and notebook cells. Each thread builds its replica's state on itself (so a state that is
//! not `Send`, such as a CUDA context, never crosses threads) and then waits for jobs.
//! [`ReplicaPool::run`] hands one closure to every replica at once and returns the results in
//! rank order. Dispatch is a mutex, two condition variables and an epoch counter, so a step
//! costs microseconds rather than a channel message per replica. A panic inside a replica is
//! caught and reported as [`DistributeError::ReplicaPanicked`]; the pool stays usable.
//!
//! This file knows nothing about models, devices or all-reduce.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::DistributeError;
use crate::device::cpu::par::cores;
use crate::device::cpu::spin::spin_until;

/// Worker threads get a roomy stack: model code may recurse through layers.
const WORKER_STACK: usize = 16 * 1024 * 1024;

/// The job every worker runs during one dispatch, with its lifetime erased.
type Job<'a, S> = dyn Fn(usize, &mut S) + Sync + 'a;

/// A pointer to the current job. It is only dereferenced between the moment `run` publishes
/// it and the moment the last worker reports back, while `run` is still blocked holding the
/// closure alive; that is what makes sending it to other threads sound.
struct JobPtr<S: 'static>(*const Job<'static, S>);

impl<S: 'static> Clone for JobPtr<S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S: 'static> Copy for JobPtr<S> {}

// SAFETY: see `JobPtr`: the pointee is `Sync` and outlives every use on the worker threads.
unsafe impl<S: 'static> Send for JobPtr<S> {}

struct Control<S: 'static> {
    /// Incremented once per dispatch; a worker runs the job when it sees a new epoch.
    epoch: u64,
    job: Option<JobPtr<S>>,
    /// Workers that have not finished the current job yet.
    pending: usize,
    shutdown: bool,
}

struct Shared<S: 'static> {
    control: Mutex<Control<S>>,
    /// Wakes workers when a job is published or the pool shuts down.
    work: Condvar,
    /// Wakes the dispatcher when the last worker finishes.
    done: Condvar,
    /// Mirrors of `epoch` (with `u64::MAX` meaning shutdown) and `pending` that threads spin
    /// on before sleeping; the mutex remains the source of truth.
    epoch_hint: AtomicU64,
    pending_hint: AtomicUsize,
}

impl<S: 'static> Shared<S> {
    fn lock(&self) -> MutexGuard<'_, Control<S>> {
        // No code panics while holding this lock, so a poisoned lock still holds valid data.
        self.control.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Persistent replica threads, each owning one `S`.
pub struct ReplicaPool<S: 'static> {
    shared: Arc<Shared<S>>,
    threads: Vec<JoinHandle<()>>,
    /// Serializes `run` calls so that two dispatches never interleave their epochs.
    dispatch: Mutex<()>,
}

impl<S: 'static> ReplicaPool<S> {
    /// Starts `n` replica threads; thread `rank` calls `init(rank)` and keeps the state. Fails
    /// (after stopping every thread) if any replica's `init` fails or panics.
    pub fn new<E, I>(n: usize, init: I) -> Result<Self, DistributeError>
    where
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
        I: Fn(usize) -> Result<S, E> + Send + Sync + 'static,
    {
        if n == 0 {
            return Err(DistributeError::NoReplicas);
        }
        let shared = Arc::new(Shared {
            control: Mutex::new(Control {
                epoch: 0,
                job: None,
                pending: 0,
                shutdown: false,
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            epoch_hint: AtomicU64::new(0),
            pending_hint: AtomicUsize::new(0),
        });
        let init = Arc::new(init);
        let (tx, rx) = mpsc::channel::<(usize, Result<(), DistributeError>)>();
        let mut threads = Vec::with_capacity(n);
        for rank in 0..n {
            let worker_shared = Arc::clone(&shared);
            let init = Arc::clone(&init);
            let tx = tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("replica-{rank}"))
                .stack_size(WORKER_STACK)
                .spawn(move || {
                    let state = match catch_unwind(AssertUnwindSafe(|| init(rank))) {
                        Ok(Ok(state)) => state,
                        Ok(Err(e)) => {
                            let source = e.into();
                            let _ =
                                tx.send((rank, Err(DistributeError::ReplicaInit { rank, source })));
                            return;
                        }
                        Err(payload) => {
                            let message = panic_message(payload.as_ref());
                            let _ = tx.send((
                                rank,
                                Err(DistributeError::ReplicaPanicked { rank, message }),
                            ));
                            return;
                        }
                    };
                    let _ = tx.send((rank, Ok(())));
                    drop(tx);
                    worker_loop(rank, &worker_shared, state);
                });
            match spawned {
                Ok(handle) => threads.push(handle),
                Err(e) => {
                    let pool = ReplicaPool {
                        shared,
                        threads,
                        dispatch: Mutex::new(()),
                    };
                    drop(pool);
                    return Err(DistributeError::Spawn(e.to_string()));
                }
            }
        }
        drop(tx);
        let pool = ReplicaPool {
            shared,
            threads,
            dispatch: Mutex::new(()),
        };
        let mut first_error: Option<(usize, DistributeError)> = None;
        for _ in 0..n {
            match rx.recv() {
                Ok((_, Ok(()))) => {}
                Ok((rank, Err(e))) => {
                    if first_error.as_ref().is_none_or(|(r, _)| rank < *r) {
                        first_error = Some((rank, e));
                    }
                }
                // Every sender is gone without reporting: a thread died before sending.
                Err(_) => {
                    first_error.get_or_insert((
                        n,
                        DistributeError::Spawn("a replica thread exited during start-up".into()),
                    ));
                    break;
                }
            }
        }
        match first_error {
            // Dropping the pool stops and joins the threads that did start.
            Some((_, e)) => Err(e),
            None => Ok(pool),
        }
    }
}

impl<S: 'static> ReplicaPool<S> {
    /// Number of replicas.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }

    /// Runs `f(rank, &mut state)` on every replica concurrently and returns the results in rank
    /// order. A replica that panics yields `Err(ReplicaPanicked)`; the others still finish.
    pub fn run<R, F>(&self, f: F) -> Vec<Result<R, DistributeError>>
    where
        R: Send,
        F: Fn(usize, &mut S) -> R + Sync,
    {
        let n = self.threads.len();
        if ON_REPLICA_THREAD.with(|f| f.get()) {
            // Waiting for every replica from one of them would wait for ever.
            return (0..n).map(|_| Err(DistributeError::Reentrant)).collect();
        }
        let _serial = self.dispatch.lock().unwrap_or_else(|e| e.into_inner());
        let slots: Vec<Mutex<Option<std::thread::Result<R>>>> =
            (0..n).map(|_| Mutex::new(None)).collect();
        let job = |rank: usize, state: &mut S| {
            let outcome = catch_unwind(AssertUnwindSafe(|| f(rank, state)));
            if let Some(slot) = slots.get(rank) {
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
            }
        };
        let short: *const Job<'_, S> = &job as &Job<'_, S>;
        // SAFETY: the pointer only extends the closure's lifetime on paper. This function does
        // not return until `pending` is zero, that is until every worker has finished calling
        // the job, and it clears the pointer before returning, so no worker can observe it
        // after `job` is dropped.
        let ptr: *const Job<'static, S> =
            unsafe { std::mem::transmute::<*const Job<'_, S>, *const Job<'static, S>>(short) };
        {
            let mut control = self.shared.lock();
            control.epoch = control.epoch.wrapping_add(1);
            control.job = Some(JobPtr(ptr));
            control.pending = n;
            self.shared.pending_hint.store(n, Ordering::Release);
            self.shared
                .epoch_hint
                .store(control.epoch, Ordering::Release);
            self.shared.work.notify_all();
        }
        // When the replicas fill every core, a dispatcher that waited actively would share a
        // core with a replica for the whole wait; it sleeps at once instead.
        if n < cores() {
            spin_until(|| self.shared.pending_hint.load(Ordering::Acquire) == 0);
        }
        {
            let mut control = self.shared.lock();
            while control.pending > 0 {
                control = self
                    .shared
                    .done
                    .wait(control)
                    .unwrap_or_else(|e| e.into_inner());
            }
            control.job = None;
        }
        slots
            .into_iter()
            .enumerate()
            .map(
                |(rank, slot)| match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
                    Some(Ok(r)) => Ok(r),
                    Some(Err(payload)) => Err(DistributeError::ReplicaPanicked {
                        rank,
                        message: panic_message(payload.as_ref()),
                    }),
                    None => Err(DistributeError::ReplicaPanicked {
                        rank,
                        message: "the replica did not report a result".into(),
                    }),
                },
            )
            .collect()
    }
}

impl<S: 'static> ReplicaPool<S> {
    /// `run` for closures that can fail: a replica's error and a replica's panic both become
    /// that replica's `Err`.
    pub fn run_fallible<T, F>(&self, f: F) -> Vec<Result<T, DistributeError>>
    where
        T: Send,
        F: Fn(usize, &mut S) -> Result<T, DistributeError> + Sync,
    {
        self.run(f)
            .into_iter()
            .map(|r| r.and_then(|inner| inner))
            .collect()
    }
}

impl<S: 'static> Drop for ReplicaPool<S> {
    fn drop(&mut self) {
        {
            let mut control = self.shared.lock();
            control.shutdown = true;
            self.shared.epoch_hint.store(u64::MAX, Ordering::Release);
            self.shared.work.notify_all();
        }
        for handle in self.threads.drain(..) {
            let _ = handle.join();
        }
    }
}

thread_local! {
    /// Set on replica threads, so a replica that asks its own pool for work gets an error.
    static ON_REPLICA_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn worker_loop<S: 'static>(rank: usize, shared: &Shared<S>, mut state: S) {
    ON_REPLICA_THREAD.with(|f| f.set(true));
    let mut seen = 0u64;
    loop {
        spin_until(|| shared.epoch_hint.load(Ordering::Acquire) != seen);
        let job = {
            let mut control = shared.lock();
            while control.epoch == seen && !control.shutdown {
                control = shared.work.wait(control).unwrap_or_else(|e| e.into_inner());
            }
            if control.shutdown {
                return;
            }
            seen = control.epoch;
            control.job
        };
        if let Some(JobPtr(ptr)) = job {
            // SAFETY: `run` keeps the job alive until this worker decrements `pending` below.
            let f = unsafe { &*ptr };
            // The job catches its own panics, so this call always returns.
            f(rank, &mut state);
        }
        let mut control = shared.lock();
        control.pending = control.pending.saturating_sub(1);
        shared
            .pending_hint
            .store(control.pending, Ordering::Release);
        if control.pending == 0 {
            shared.done.notify_all();
        }
    }
}

/// The text of a panic payload, for the error a user sees.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a replica panicked".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[test]
    fn runs_on_every_replica_in_rank_order_and_keeps_state() {
        // Rc is not Send: the state must be built and used on its own thread.
        let pool = ReplicaPool::new(3, |rank| {
            Ok::<_, DistributeError>(Rc::new(RefCell::new(rank * 10)))
        })
        .unwrap();
        for step in 1..=5 {
            let out = pool.run(|rank, s: &mut Rc<RefCell<usize>>| {
                *s.borrow_mut() += 1;
                (rank, *s.borrow())
            });
            let got: Vec<(usize, usize)> = out.into_iter().map(|r| r.unwrap()).collect();
            assert_eq!(got, vec![(0, step), (1, 10 + step), (2, 20 + step)]);
        }
    }

    #[test]
    fn replicas_run_concurrently() {
        // Every replica waits at a barrier: this only completes if all run at the same time.
        let pool = ReplicaPool::new(4, |_| Ok::<_, DistributeError>(())).unwrap();
        let barrier = std::sync::Barrier::new(4);
        let out = pool.run(|rank, _| {
            barrier.wait();
            rank
        });
        assert_eq!(
            out.into_iter().map(|r| r.unwrap()).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
    }

    #[test]
    fn a_panic_becomes_an_error_and_the_pool_lives() {
        let pool = ReplicaPool::new(2, |_| Ok::<_, DistributeError>(0u32)).unwrap();
        let out = pool.run(|rank, _| {
            if rank == 1 {
                panic!("boom on one");
            }
            rank
        });
        assert_eq!(*out[0].as_ref().unwrap(), 0);
        match &out[1] {
            Err(DistributeError::ReplicaPanicked { rank: 1, message }) => {
                assert!(message.contains("boom"))
            }
            other => panic!("unexpected {other:?}"),
        }
        let again = pool.run(|rank, s| {
            *s += 1;
            rank as u32 + *s
        });
        assert_eq!(
            again.into_iter().map(|r| r.unwrap()).collect::<Vec<_>>(),
            vec![1, 2]
        );
    }

    #[test]
    fn dispatching_from_a_replica_is_an_error_not_a_deadlock() {
        let pool =
            std::sync::Arc::new(ReplicaPool::new(2, |_| Ok::<_, DistributeError>(())).unwrap());
        let inner = pool.clone();
        let out =
            pool.run(|_, _| matches!(inner.run(|r, _| r)[0], Err(DistributeError::Reentrant)));
        assert!(out.into_iter().all(|r| r.unwrap()));
    }

    #[test]
    fn failed_init_reports_the_rank() {
        let err =
            ReplicaPool::<u8>::new(3, |rank| if rank == 2 { Err("no device") } else { Ok(1u8) })
                .err();
        match err {
            Some(DistributeError::ReplicaInit { rank: 2, source }) => {
                assert_eq!(source.to_string(), "no device")
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            ReplicaPool::<u8>::new(0, |_| Ok::<_, DistributeError>(0)),
            Err(DistributeError::NoReplicas)
        ));
    }
}
