//! The CUDA implementation of [`Device`](super::Device) through cudarc, loaded dynamically
//! at run time so the same binary runs on machines without CUDA. The only module that knows
//! cudarc (and NCCL). It must not know about layers, models or the language.
//!
//! # Layout
//! - `detect.rs`: finding GPUs without panics or output ([`gpu_count`], [`gpu_names`],
//!   [`gpus`], TensorFlow's physical device names).
//! - `kernels.rs`: the CUDA C source of every kernel; `load.rs` compiles it with NVRTC once
//!   per process and loads it into each context.
//! - `device.rs`: [`CudaDevice`], memory and the element-wise/row-wise operations;
//!   `ops.rs`: losses, dropout, windows (im2col, pooling) and optimizer updates;
//!   `blas.rs`: GEMM through cuBLAS.
//! - `nccl.rs`: NCCL loaded by full path; `allreduce.rs`: the GPU implementations of
//!   [`AllReduce`](crate::device::collective::AllReduce) (NCCL across GPUs, an own kernel
//!   for several replicas on one GPU, a host-staged fallback).
//! - `replicas.rs`: the seam the strategy calls: [`replica_device`] (a GPU replica's device,
//!   made on its own thread) and [`gpu_all_reduce_for`] (the all-reduce for a list of GPU
//!   replicas, by how they sit on the physical GPUs).
//! - `bench.rs`: the GPU part of `mirror-kernel bench`.
//!
//! Every replica owns one [`CudaDevice`]: its own context handle and stream, so buffers stay
//! on the GPU across steps and only batches go in and losses come out.

mod allreduce;
pub mod bench;
mod blas;
mod detect;
mod device;
mod gate;
mod hostreduce;
mod kernels;
mod libsearch;
mod load;
mod nccl;
mod ops;
mod replicas;

pub use allreduce::{gpu_all_reduce, nccl_unique_id, nccl_version, LocalGpuReduce, NcclAllReduce};
pub use detect::{gpu_count, gpu_names, gpus, libraries_present, physical_device_name, GpuInfo};
pub use device::CudaDevice;
pub use hostreduce::HostStagedReduce;
pub use load::{kernels_cubin, kernels_ptx};
pub use replicas::{gpu_all_reduce_for, replica_device, GpuReduceChoice};

use cudarc::driver::{result, CudaContext, CudaSlice};

/// A buffer in GPU memory, owned by one [`CudaDevice`] (its stream). `len` is the tensor's
/// element count; the allocation holds at least one element so that empty tensors still
/// have a valid address.
pub struct CudaBuffer {
    pub(crate) slice: CudaSlice<f32>,
    pub(crate) len: usize,
}

impl CudaBuffer {
    /// Elements in the tensor.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The CUDA ordinal of the GPU holding the buffer.
    pub fn ordinal(&self) -> usize {
        self.slice.ordinal()
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        // cudarc frees the memory (stream-ordered) without making its context current, and a
        // tensor is often dropped on a thread that never touched the GPU; so make it current.
        make_current(self.slice.context());
    }
}

/// Makes `ctx` the calling thread's current context without consuming errors cudarc has
/// recorded on it (its own `bind_to_thread` would return and clear them). Used in drops,
/// where nothing can be reported anyway.
pub(crate) fn make_current(ctx: &CudaContext) {
    let want = ctx.cu_ctx();
    if result::ctx::get_current().ok().flatten() != Some(want) {
        // SAFETY: `want` is the live context `ctx` holds a reference on.
        let _ = unsafe { result::ctx::set_current(want) };
    }
}

/// Whether NCCL can be loaded (searched once; see `nccl.rs` for where it looks), and from
/// which path. `None` when it cannot be found.
pub fn nccl_library() -> Option<String> {
    nccl::api().map(|a| a.path.display().to_string())
}
