//! Host arrays to the device and back. The float32 paths of the op families run the
//! `Device` kernels (the ones the compiled Keras models use) on uploaded copies of the
//! inputs and download the results; these helpers are the only place that happens.

use super::error::{OpError, OpResult};
use crate::device::{DTensor, Device};
use crate::tensor::NdArray;

/// `x` as float32 on the device, viewed with `shape` (same number of elements).
pub(crate) fn upload(dev: &dyn Device, x: &NdArray, shape: &[usize]) -> OpResult<DTensor> {
    // A float32 array is uploaded from its own buffer: one copy, not two.
    match x.as_f32_slice() {
        Some(v) => Ok(dev.upload(v, shape)?),
        None => Ok(dev.upload(&x.to_f32_vec().1, shape)?),
    }
}

/// A device tensor back on the host as a float32 array of its own shape.
pub(crate) fn download(dev: &dyn Device, t: &DTensor, op: &str) -> OpResult<NdArray> {
    download_as(dev, t, &t.shape, op)
}

/// A device tensor back on the host as a float32 array of `shape` (same size).
pub(crate) fn download_as(
    dev: &dyn Device,
    t: &DTensor,
    shape: &[usize],
    op: &str,
) -> OpResult<NdArray> {
    let v = dev.download(t)?;
    NdArray::from_f32(shape, v).map_err(|e| OpError::from_tensor(op, &dev.name(), e))
}
