//! The seam between the strategy and the CUDA backend: the device of one GPU replica (made
//! on that replica's own thread by the strategy's factory) and the all-reduce for a list of
//! GPU replicas, chosen from how the replicas sit on the physical GPUs. The strategy hands
//! over TensorFlow-style [`DeviceSpec`]s and gets back trait objects, so `distribute` never
//! names a cudarc type. Nothing here touches cudarc before checking that a GPU exists, so on
//! a machine without CUDA every function returns an error and never panics or prints.

use std::sync::Arc;

use super::allreduce::{check_rank, LocalGpuReduce, NcclAllReduce};
use super::detect::{gpu_count, physical_device_name};
use super::device::CudaDevice;
use super::hostreduce::HostStagedReduce;
use super::load::MAX_LOCAL_REPLICAS;
use crate::device::collective::AllReduce;
use crate::device::collective::{DeviceKind, DeviceSpec};
use crate::device::{DResult, DTensor, Device, DeviceError};

/// The all-reduce chosen for a list of GPU replicas, with a one-line note for the user when
/// it is a slower fallback (NCCL missing, replicas spread unevenly over the GPUs).
pub struct GpuReduceChoice {
    pub reducer: Arc<dyn AllReduce>,
    pub note: Option<String>,
}

/// Checks that `spec` names a GPU this process can open, without touching cudarc when there
/// is none.
fn check_gpu(spec: &DeviceSpec) -> DResult<()> {
    if spec.kind != DeviceKind::Gpu {
        return Err(DeviceError::Unavailable(format!(
            "{} as a GPU replica (it is a CPU device)",
            spec.short_name()
        )));
    }
    let count = gpu_count();
    if spec.physical >= count {
        return Err(DeviceError::Unavailable(format!(
            "{} for {} (this machine has {count} CUDA GPU{})",
            physical_device_name(spec.physical),
            spec.short_name(),
            if count == 1 { "" } else { "s" }
        )));
    }
    Ok(())
}

/// The device of one GPU replica: logical GPU `spec.index` on physical GPU `spec.physical`,
/// with its own stream and cuBLAS handle. Called on the replica's own thread, which then
/// owns the device for the strategy's lifetime.
pub fn replica_device(spec: &DeviceSpec) -> DResult<Box<dyn Device>> {
    check_gpu(spec)?;
    Ok(Box::new(CudaDevice::logical(spec.physical, spec.index)?))
}

/// The all-reduce of a single replica: there is nothing to sum with, so the gradient stays
/// as it is (and no GPU work is queued).
struct OneReplica;

impl AllReduce for OneReplica {
    fn replicas(&self) -> usize {
        1
    }

    fn all_reduce_sum(&self, rank: usize, _buf: &mut DTensor, _device: &dyn Device) -> DResult<()> {
        check_rank(rank, 1)
    }

    fn name(&self) -> &'static str {
        "none"
    }
}

/// Picks the all-reduce for GPU replicas in rank order:
/// - one replica: nothing to reduce;
/// - several logical GPUs on one physical GPU: the own reduce kernel (NCCL refuses two
///   ranks on one device);
/// - one replica on each of several GPUs: NCCL, whose communicators are made here for all
///   ranks at once (`ncclCommInitAll`) and then used by each replica thread under its own
///   lock, which is why the binding's handle is `Send`;
/// - NCCL missing, or GPUs shared unevenly: staging through host memory, with a note.
pub fn gpu_all_reduce_for(specs: &[DeviceSpec]) -> DResult<GpuReduceChoice> {
    if specs.is_empty() {
        return Err(DeviceError::Unavailable(
            "an all-reduce over zero GPUs".into(),
        ));
    }
    for spec in specs {
        check_gpu(spec)?;
    }
    let n = specs.len();
    let choice =
        |reducer: Arc<dyn AllReduce>, note: Option<String>| Ok(GpuReduceChoice { reducer, note });
    if n == 1 {
        return choice(Arc::new(OneReplica), None);
    }
    let ordinals: Vec<usize> = specs.iter().map(|s| s.physical).collect();
    let mut distinct = ordinals.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() == 1 {
        if n <= MAX_LOCAL_REPLICAS {
            // The reduce kernel needs the GPU's loaded kernels; a short-lived device on this
            // thread provides them (the compiled code is cached per process).
            let probe = CudaDevice::new(ordinals[0])?;
            return choice(Arc::new(LocalGpuReduce::new(&probe, n)?), None);
        }
        return choice(
            Arc::new(HostStagedReduce::new(n)),
            Some(format!(
                "note: {n} logical GPUs on one GPU exceed the reduce kernel's {MAX_LOCAL_REPLICAS}; \
                 gradients are summed through host memory (slower)"
            )),
        );
    }
    if distinct.len() == n {
        return match NcclAllReduce::new(&ordinals) {
            Ok(r) => choice(Arc::new(r), None),
            Err(e) => choice(
                Arc::new(HostStagedReduce::new(n)),
                Some(format!(
                    "note: {e}; gradients are summed through host memory instead (slower)"
                )),
            ),
        };
    }
    choice(
        Arc::new(HostStagedReduce::new(n)),
        Some(format!(
            "note: the replicas share the GPUs unevenly (physical GPUs {ordinals:?}); gradients \
             are summed through host memory (slower). Split every GPU into the same number of \
             logical GPUs, or use one replica per GPU, for the GPU all-reduce."
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_specs_are_refused_cleanly_without_a_gpu() {
        if gpu_count() > 0 {
            return;
        }
        let err = replica_device(&DeviceSpec::gpu(0, 0))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("/physical_device:GPU:0") && err.contains("0 CUDA GPUs"),
            "{err}"
        );
        let err = gpu_all_reduce_for(&[DeviceSpec::gpu(0, 0), DeviceSpec::gpu(1, 0)])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("0 CUDA GPUs"), "{err}");
    }

    #[test]
    fn cpu_specs_are_not_gpu_replicas() {
        let err = replica_device(&DeviceSpec::cpu(0))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("CPU:0 as a GPU replica"), "{err}");
    }
}
