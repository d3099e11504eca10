//! Keras's masks as arithmetic: the mask an `Embedding(mask_zero=True)` makes (its nonzero
//! indices), what `Masking` computes (a step is kept when any feature differs from the
//! mask value; a masked step becomes zeros), and the average over the kept steps that
//! `GlobalAveragePooling1D` takes when a mask reaches it. Each is a composition of the
//! comparison, reduction, select and arithmetic ops that Keras's TensorFlow backend runs,
//! so gradients are those ops'. Which layer makes, passes or drops a mask is the caller's
//! concern; nothing here knows about layers.

use super::eager::Eager;
use super::elementwise::{binary, cast, div, select, zeros_like, Binary};
use super::error::OpResult;
use super::reduce::{reduce, reduce_sum, ReduceKind};
use super::shape::expand_dims;
use super::tensor::Tensor;

/// `indices != 0`: the steps an `Embedding(mask_zero=True)` keeps.
pub fn nonzero_mask(e: &mut Eager, indices: &Tensor) -> OpResult<Tensor> {
    let zero = Tensor::scalar(0.0, indices.dtype());
    binary(e, Binary::NotEqual, indices, &zero)
}

/// `Masking(mask_value)` on `x (batch, steps, ..., features)`: the output (masked steps
/// set to zeros) and the mask `(batch, steps, ...)`, as Keras computes them.
pub fn masking(e: &mut Eager, x: &Tensor, mask_value: f64) -> OpResult<(Tensor, Tensor)> {
    let value = Tensor::scalar(mask_value, x.dtype());
    let differs = binary(e, Binary::NotEqual, x, &value)?;
    let keep = reduce(e, &differs, ReduceKind::Any, Some(vec![-1]), true)?;
    let zeros = zeros_like(e, x)?;
    let y = select(e, &keep, x, &zeros)?;
    let mask = reduce(e, &differs, ReduceKind::Any, Some(vec![-1]), false)?;
    Ok((y, mask))
}

/// The mean over the steps (axis 1) of `x (batch, steps, features)` that `mask (batch,
/// steps)` keeps: masked steps are zeroed and the sum divided by the count of kept steps.
pub fn masked_mean_steps(
    e: &mut Eager,
    x: &Tensor,
    mask: &Tensor,
    keepdims: bool,
) -> OpResult<Tensor> {
    let m = expand_dims(e, mask, 2)?;
    let m = match m.dtype() {
        crate::tensor::DType::Bool => m,
        _ => cast(e, &m, crate::tensor::DType::Bool)?,
    };
    let zeros = zeros_like(e, x)?;
    let kept = select(e, &m, x, &zeros)?;
    let weights = cast(e, &m, x.dtype())?;
    let total = reduce_sum(e, &kept, Some(vec![1]), keepdims)?;
    let count = reduce_sum(e, &weights, Some(vec![1]), keepdims)?;
    div(e, &total, &count)
}
