//! The CUDA implementation of [`Device`](super::Device) through cudarc, loaded dynamically
//! at run time so the same binary runs on machines without CUDA. The only module that knows
//! cudarc.

/// A buffer in GPU memory, owned by one device and stream.
pub struct CudaBuffer {
    _private: (),
}
