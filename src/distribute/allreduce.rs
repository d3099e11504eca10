//! The all-reduce seam: every replica's thread calls [`AllReduce::all_reduce_sum`] with its
//! own gradient buffer, and each call returns once every buffer holds the element-wise sum
//! over all replicas. The CPU ring, the NCCL communicator and the single-GPU reduce kernel
//! implement this one trait, so the training loop never asks which it has.

use crate::device::{DResult, DTensor, Device};

pub trait AllReduce: Send + Sync {
    /// How many replicas take part; every one of them must call `all_reduce_sum` once per
    /// reduction, with buffers of equal length.
    fn replicas(&self) -> usize;

    /// Sums `buf` across replicas in place. `device` is the calling replica's device, the
    /// one that owns `buf`.
    fn all_reduce_sum(&self, rank: usize, buf: &mut DTensor, device: &dyn Device) -> DResult<()>;

    /// A short name for reports (`ring`, `nccl`, `gpu-reduce`).
    fn name(&self) -> &'static str;

    /// Called by a replica that failed before reaching the reduction, so that the replicas
    /// already waiting in it return an error instead of waiting for ever. Only valid while
    /// the failing replica has not entered the current reduction.
    fn abort(&self) {}

    /// Makes the reduction usable again after an `abort`; called between steps, when no
    /// replica is inside it.
    fn reset(&self) {}
}
