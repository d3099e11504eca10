//! Host arrays to the device and back. The float32 paths of the op families run the
//! `Device` kernels (the ones the compiled Keras models use) on uploaded copies of the
//! inputs and download the results; these helpers are the only place that happens. A
//! result in host memory is taken as it is, not copied again.

use super::error::{OpError, OpResult};
use crate::device::{Buffer, DTensor, Device};
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
pub(crate) fn download(dev: &dyn Device, t: DTensor, op: &str) -> OpResult<NdArray> {
    let shape = t.shape.clone();
    download_as(dev, t, &shape, op)
}

/// A device tensor back on the host as a float32 array of `shape` (same size).
pub(crate) fn download_as(
    dev: &dyn Device,
    t: DTensor,
    shape: &[usize],
    op: &str,
) -> OpResult<NdArray> {
    let v = into_host(dev, t)?;
    NdArray::from_f32(shape, v).map_err(|e| OpError::from_tensor(op, &dev.name(), e))
}

/// A device tensor's values on the host. A tensor in host memory (every CPU device's) is
/// already there: its buffer becomes the result, where a download would copy it.
pub(crate) fn into_host(dev: &dyn Device, t: DTensor) -> OpResult<Vec<f32>> {
    match t.buf {
        Buffer::Host(v) => Ok(v),
        _ => Ok(dev.download(&t)?),
    }
}
