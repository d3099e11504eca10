//! The CPU all-reduce: a ring over the replica threads' host gradient buffers, in shared
//! memory. The buffer is cut into N chunks. In the reduce-scatter phase, at each of N-1 steps
//! every replica adds one chunk of its left neighbour into its own copy; afterwards replica r
//! holds the complete sum of chunk r+1. In the all-gather phase, at each of N-1 steps every
//! replica copies one finished chunk from its left neighbour. Steps are separated by a
//! barrier, and the schedule guarantees that no chunk is read while it is written.
//!
//! Each chunk's sum is always accumulated in the same order, so the result is deterministic,
//! and the all-gather copies bits, so every replica ends with bit-identical values. Buffers
//! that live on a GPU are staged through the host, which keeps this correct (if slow) for
//! any device. A gradient made of several tensors is reduced in place as one buffer laid end
//! to end (the chunks cut across tensor boundaries), so no replica packs it into one buffer
//! first. This file implements the fixed [`AllReduce`] seam and knows nothing of models.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use super::spin::spin_until;
use crate::device::collective::AllReduce;
use crate::device::{Buffer, DResult, DTensor, Device, DeviceError};

/// A reusable barrier for N threads that a failing replica can abort, so that the others stop
/// waiting for it instead of hanging.
struct Gate {
    n: usize,
    state: Mutex<GateState>,
    cv: Condvar,
    /// Mirrors of `generation` and `aborted` that waiters spin on before sleeping.
    generation: AtomicU64,
    aborted: AtomicBool,
}

struct GateState {
    generation: u64,
    arrived: usize,
    aborted: bool,
}

impl Gate {
    fn new(n: usize) -> Self {
        Gate {
            n,
            state: Mutex::new(GateState {
                generation: 0,
                arrived: 0,
                aborted: false,
            }),
            cv: Condvar::new(),
            generation: AtomicU64::new(0),
            aborted: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for all N threads. With `abortable`, returns `false` if the gate was aborted.
    fn wait(&self, abortable: bool) -> bool {
        let mut s = self.lock();
        if abortable && s.aborted {
            return false;
        }
        s.arrived += 1;
        if s.arrived == self.n {
            s.arrived = 0;
            s.generation = s.generation.wrapping_add(1);
            self.generation.store(s.generation, Ordering::Release);
            self.cv.notify_all();
            return true;
        }
        let generation = s.generation;
        drop(s);
        spin_until(|| {
            self.generation.load(Ordering::Acquire) != generation
                || (abortable && self.aborted.load(Ordering::Acquire))
        });
        // The lock orders everything the other threads did before the barrier.
        let mut s = self.lock();
        while s.generation == generation && !(abortable && s.aborted) {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.generation == generation {
            // Aborted while waiting: withdraw, so the count is right after `reset`.
            s.arrived = s.arrived.saturating_sub(1);
            return false;
        }
        true
    }

    fn abort(&self) {
        self.lock().aborted = true;
        self.aborted.store(true, Ordering::Release);
        self.cv.notify_all();
    }

    fn reset(&self) {
        let mut s = self.lock();
        s.aborted = false;
        s.arrived = 0;
        self.aborted.store(false, Ordering::Release);
    }
}

/// Ring all-reduce across the threads of one replica pool.
pub struct RingAllReduce {
    n: usize,
    gate: Gate,
    /// Each rank's segment table for the reduction in progress: `(pointer, length)` of every
    /// host slice it reduces, laid end to end (published before the first barrier; the
    /// barrier's lock orders the writes before every read).
    tables: Vec<AtomicPtr<(*mut f32, usize)>>,
    counts: Vec<AtomicUsize>,
}

impl RingAllReduce {
    pub fn new(replicas: usize) -> Self {
        let n = replicas.max(1);
        RingAllReduce {
            n,
            gate: Gate::new(n),
            tables: (0..n)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            counts: (0..n).map(|_| AtomicUsize::new(0)).collect(),
        }
    }

    /// Chunk `c` of a buffer of `len` elements cut into `n` near-equal parts.
    fn chunk(len: usize, n: usize, c: usize) -> (usize, usize) {
        (c * len / n, (c + 1) * len / n)
    }

    /// The ring on a plain host vector (benchmarks and tests that hold no device tensor).
    pub fn all_reduce_host(&self, rank: usize, data: &mut [f32]) -> DResult<()> {
        self.ring_host(rank, &mut [data])
    }

    /// The segment table rank `r` published (valid between the first and last barrier).
    ///
    /// # Safety
    /// Only between the first barrier of a reduction and its last one, while rank `r` keeps
    /// its table alive inside `ring_host`.
    unsafe fn table(&self, r: usize) -> &[(*mut f32, usize)] {
        let ptr = self.tables[r].load(Ordering::Relaxed);
        let count = self.counts[r].load(Ordering::Relaxed);
        if ptr.is_null() {
            &[]
        } else {
            // SAFETY: the caller guarantees the table is alive (see above).
            unsafe { std::slice::from_raw_parts(ptr, count) }
        }
    }

    /// The ring itself on host memory. `data` is this rank's gradient, a list of slices that
    /// the ring treats as one buffer laid end to end, so nothing is copied into one first.
    fn ring_host(&self, rank: usize, data: &mut [&mut [f32]]) -> DResult<()> {
        let n = self.n;
        if n == 1 {
            return Ok(());
        }
        if rank >= n {
            return Err(DeviceError::Shape {
                op: "all_reduce_sum",
                detail: format!("rank {rank} outside a ring of {n}"),
            });
        }
        // From here until the final barrier this rank touches its slices only through these
        // pointers, and its neighbours read them through the same published table.
        let own: Vec<(*mut f32, usize)> =
            data.iter_mut().map(|s| (s.as_mut_ptr(), s.len())).collect();
        self.tables[rank].store(own.as_ptr() as *mut _, Ordering::Relaxed);
        self.counts[rank].store(own.len(), Ordering::Relaxed);
        if !self.gate.wait(true) {
            return Err(aborted());
        }
        // Every rank sees the same tables, so every rank takes the same decision here.
        // SAFETY: between the first and the last barrier every rank's table is alive.
        let layouts: Vec<Vec<usize>> = (0..n)
            .map(|r| unsafe { self.table(r) }.iter().map(|t| t.1).collect())
            .collect();
        if layouts.iter().any(|l| *l != layouts[0]) {
            self.gate.wait(false);
            return Err(DeviceError::Shape {
                op: "all_reduce_sum",
                detail: format!("replica gradients differ in their tensor lengths: {layouts:?}"),
            });
        }
        let len: usize = layouts[0].iter().sum();
        // SAFETY: as above.
        let left = unsafe { self.table((rank + n - 1) % n) };
        // SAFETY: as above.
        let right = unsafe { self.table((rank + 1) % n) };
        // Reduce-scatter: at step s, add the left neighbour's chunk (rank-1-s) into ours. The
        // left neighbour finished that chunk at step s-1 and is writing chunk (rank-2-s) now.
        // The last step finishes chunk rank+1, which this rank also writes straight into its
        // right neighbour's buffer: that is the all-gather's first step, done while the chunk
        // is still in this core's cache (with two replicas, the whole all-gather).
        for s in 0..n - 1 {
            let c = (rank + 2 * n - 1 - s) % n;
            let last = s == n - 2;
            let (lo, hi) = Self::chunk(len, n, c);
            for_pieces(&layouts[0], lo, hi, |seg, a, b| {
                // SAFETY: every table describes slices of equal lengths (checked above). In
                // this step the piece of chunk `c` in ours is written only by us and the one
                // in the left table is not written by its owner, which is busy with chunk
                // `c-1`. At the last step, chunk `c` = rank+1 of the right neighbour is
                // touched by no one else: it works on chunk rank+2, reading it from us, and
                // its own right neighbour reads chunk rank+3 (with two replicas the right and
                // left neighbour are one rank, whose chunk `c` only we touch, element by
                // element, reading before writing). The barrier orders the steps.
                unsafe {
                    let mine = std::slice::from_raw_parts_mut(own[seg].0.add(a), b - a);
                    let (src, dst) = (left[seg].0.add(a), right[seg].0.add(a));
                    if last && src == dst {
                        // Two replicas: we read the neighbour's piece and then overwrite it
                        // with the sum, element by element, through one exclusive slice.
                        let theirs = std::slice::from_raw_parts_mut(src, b - a);
                        for (m, t) in mine.iter_mut().zip(theirs.iter_mut()) {
                            *m += *t;
                            *t = *m;
                        }
                    } else if last {
                        let theirs = std::slice::from_raw_parts(src as *const f32, b - a);
                        let out = std::slice::from_raw_parts_mut(dst, b - a);
                        for ((m, t), o) in mine.iter_mut().zip(theirs).zip(out.iter_mut()) {
                            *m += *t;
                            *o = *m;
                        }
                    } else {
                        let theirs = std::slice::from_raw_parts(src as *const f32, b - a);
                        for (m, t) in mine.iter_mut().zip(theirs) {
                            *m += *t;
                        }
                    }
                }
            });
            self.gate.wait(false);
        }
        // All-gather: rank r holds the finished chunks r+1 and r (pushed by its left
        // neighbour). At step s >= 1, copy chunk (rank-s) from the left neighbour, which got
        // it at step s-1.
        for s in 1..n - 1 {
            let c = (rank + n - s) % n;
            let (lo, hi) = Self::chunk(len, n, c);
            for_pieces(&layouts[0], lo, hi, |seg, a, b| {
                // SAFETY: as above; the left neighbour writes chunk (rank-1-s) in this step.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        left[seg].0.add(a) as *const f32,
                        own[seg].0.add(a),
                        b - a,
                    );
                }
            });
            self.gate.wait(false);
        }
        Ok(())
    }
}

/// Calls `f(segment, start, end)` for each piece of the range `lo..hi` of a buffer made of
/// segments of lengths `lens` laid end to end (start and end are within the segment).
fn for_pieces(lens: &[usize], lo: usize, hi: usize, mut f: impl FnMut(usize, usize, usize)) {
    let mut base = 0;
    for (seg, &len) in lens.iter().enumerate() {
        let (a, b) = (lo.max(base), hi.min(base + len));
        if a < b {
            f(seg, a - base, b - base);
        }
        base += len;
        if base >= hi {
            break;
        }
    }
}

fn aborted() -> DeviceError {
    DeviceError::Unavailable("the all-reduce (another replica failed before reaching it)".into())
}

impl AllReduce for RingAllReduce {
    fn replicas(&self) -> usize {
        self.n
    }

    fn all_reduce_sum(&self, rank: usize, buf: &mut DTensor, device: &dyn Device) -> DResult<()> {
        self.all_reduce_sum_many(rank, std::slice::from_mut(buf), device)
    }

    fn all_reduce_sum_many(
        &self,
        rank: usize,
        bufs: &mut [DTensor],
        device: &dyn Device,
    ) -> DResult<()> {
        if bufs.iter().all(|b| matches!(b.buf, Buffer::Host(_))) {
            let mut slices: Vec<&mut [f32]> = bufs
                .iter_mut()
                .filter_map(|b| match &mut b.buf {
                    Buffer::Host(v) => Some(v.as_mut_slice()),
                    Buffer::Cuda(_) => None,
                })
                .collect();
            return self.ring_host(rank, &mut slices);
        }
        // Buffers on a GPU are staged through the host. A replica that cannot stage its
        // buffers must not leave the others waiting.
        let mut staged = Vec::with_capacity(bufs.len());
        for b in bufs.iter() {
            match device.download(b) {
                Ok(h) => staged.push(h),
                Err(e) => {
                    self.gate.abort();
                    return Err(e);
                }
            }
        }
        let mut slices: Vec<&mut [f32]> = staged.iter_mut().map(Vec::as_mut_slice).collect();
        self.ring_host(rank, &mut slices)?;
        for (h, b) in staged.iter().zip(bufs.iter_mut()) {
            device.write(h, b)?;
        }
        Ok(())
    }

    fn name(&self) -> &'static str {
        "ring"
    }

    fn abort(&self) {
        self.gate.abort();
    }

    fn reset(&self) {
        self.gate.reset();
    }
}

/// Serial reference: the sum the ring computes for chunk `c` accumulates the replicas in the
/// order (c+1, c+2, ..., c) — the ring's own order — which tests use to check bit-exactness.
#[cfg(test)]
pub(crate) fn ring_order_sum(inputs: &[Vec<f32>]) -> Vec<f32> {
    let n = inputs.len();
    let len = inputs.first().map_or(0, Vec::len);
    let mut out = vec![0.0f32; len];
    for c in 0..n {
        let (lo, hi) = RingAllReduce::chunk(len, n, c);
        for (i, o) in out.iter_mut().enumerate().take(hi).skip(lo) {
            // Rank c+1 starts chunk c from its own value and its left neighbour's; each
            // later rank adds its value to the running sum (f32 addition is commutative).
            let mut acc = inputs[c % n][i];
            for k in 1..n {
                acc += inputs[(c + k) % n][i];
            }
            *o = acc;
        }
    }
    out
}

#[cfg(test)]
#[path = "ring_tests.rs"]
mod tests;
