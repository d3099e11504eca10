//! The host implementation of [`Device`](super::Device): f32 buffers in plain vectors,
//! matrix products on a fast GEMM crate, everything else in tight loops. One `CpuDevice`
//! serves one replica and runs on that replica's thread, so it never spawns threads itself.

/// A CPU replica's device (`CPU:0`, or a logical CPU device `CPU:1`, ...).
pub struct CpuDevice {
    pub index: usize,
}
