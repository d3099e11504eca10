//! Weights as numpy: one engine host array as the array `get_weights` returns. The
//! variables themselves are the layers' (`variable.rs`).

use crate::lang::{PyResult, Value};
use crate::tensor::NdArray;

/// One weight array as the numpy array `get_weights` returns.
pub fn host_to_numpy(h: &crate::keras::HostArray) -> PyResult<Value> {
    NdArray::from_f32(&h.shape, h.data.clone())
        .map(super::super::convert::numpy_value)
        .map_err(super::super::convert::tensor_err)
}
