//! The collective seam, on the bottom floor so that every implementation lives beside its
//! device. [`DeviceSpec`] names the logical device a replica runs on. Every replica's thread
//! calls [`AllReduce::all_reduce_sum`] with its own gradient buffer, and each call returns
//! once every buffer holds the element-wise sum over all replicas. The CPU ring
//! (`device::cpu::ring`), the NCCL communicator and the single-GPU reduce kernel
//! (`device::cuda`) implement this one trait, so the training loop never asks which it has;
//! the distribute part only chooses one. A model's gradient is a list of tensors (one per
//! variable); [`AllReduce::all_reduce_sum_many`] reduces the list as if it were one buffer
//! laid end to end, which an implementation may do without copying it into one (the CPU
//! ring does).

use super::{DResult, DTensor, Device};

/// The kind of device a replica runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Cpu,
    Gpu,
}

impl DeviceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "CPU",
            DeviceKind::Gpu => "GPU",
        }
    }
}

/// One logical device a replica runs on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeviceSpec {
    pub kind: DeviceKind,
    /// The logical index TensorFlow shows (`CPU:1`).
    pub index: usize,
    /// The physical device it is carved from (always 0 for CPUs).
    pub physical: usize,
}

impl DeviceSpec {
    pub fn cpu(index: usize) -> Self {
        DeviceSpec {
            kind: DeviceKind::Cpu,
            index,
            physical: 0,
        }
    }

    pub fn gpu(index: usize, physical: usize) -> Self {
        DeviceSpec {
            kind: DeviceKind::Gpu,
            index,
            physical,
        }
    }

    /// `CPU:0`, the short name.
    pub fn short_name(&self) -> String {
        format!("{}:{}", self.kind.as_str(), self.index)
    }

    /// `/job:localhost/replica:0/task:0/device:CPU:0`, as TensorFlow prints it.
    pub fn full_name(&self) -> String {
        format!(
            "/job:localhost/replica:0/task:0/device:{}",
            self.short_name()
        )
    }
}

pub trait AllReduce: Send + Sync {
    /// How many replicas take part; every one of them must call `all_reduce_sum` once per
    /// reduction, with buffers of equal length.
    fn replicas(&self) -> usize;

    /// Sums `buf` across replicas in place. `device` is the calling replica's device, the
    /// one that owns `buf`.
    fn all_reduce_sum(&self, rank: usize, buf: &mut DTensor, device: &dyn Device) -> DResult<()>;

    /// Sums every tensor of `bufs` across replicas in place, as one reduction: every replica
    /// passes the same number of tensors with the same lengths. The default lays them end to
    /// end in one scratch buffer on `device`, reduces it, and copies the sums back.
    fn all_reduce_sum_many(
        &self,
        rank: usize,
        bufs: &mut [DTensor],
        device: &dyn Device,
    ) -> DResult<()> {
        if let [one] = bufs {
            return self.all_reduce_sum(rank, one, device);
        }
        let total = bufs.iter().map(DTensor::len).sum::<usize>();
        let mut flat = device.zeros(&[total])?;
        let mut off = 0;
        for b in bufs.iter() {
            device.copy_range(b, 0, &mut flat, off, b.len())?;
            off += b.len();
        }
        self.all_reduce_sum(rank, &mut flat, device)?;
        let mut off = 0;
        for b in bufs.iter_mut() {
            let n = b.len();
            device.copy_range(&flat, off, b, 0, n)?;
            off += n;
        }
        Ok(())
    }

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
