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
//!   [`AllReduce`](crate::distribute::allreduce::AllReduce) (NCCL across GPUs, an own kernel
//!   for several replicas on one GPU, a host-staged fallback).
//! - `bench.rs`: the GPU part of `mirror-kernel bench`.
//!
//! Every replica owns one [`CudaDevice`]: its own context handle and stream, so buffers stay
//! on the GPU across steps and only batches go in and losses come out.

mod allreduce;
pub mod bench;
mod blas;
mod detect;
mod device;
mod kernels;
mod load;
mod nccl;
mod ops;

pub use allreduce::{
    gpu_all_reduce, nccl_unique_id, nccl_version, HostStagedReduce, LocalGpuReduce, NcclAllReduce,
};
pub use detect::{gpu_count, gpu_names, gpus, libraries_present, physical_device_name, GpuInfo};
pub use device::CudaDevice;
pub use load::{kernels_cubin, kernels_ptx};

use cudarc::driver::CudaSlice;

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

/// Whether NCCL can be loaded (searched once; see `nccl.rs` for where it looks), and from
/// which path. `None` when it cannot be found.
pub fn nccl_library() -> Option<String> {
    nccl::api().map(|a| a.path.display().to_string())
}
