//! `tf.math.reduce_variance` and `tf.math.reduce_std`, composed as TensorFlow composes
//! them (the mean kept over the reduced axes, the squared deviations from it, their mean,
//! and for the deviation its square root), so their gradients come from the ops they are
//! made of. Only float inputs; the caller raises TF's `TypeError` for integers.

use super::eager::Eager;
use super::elementwise::{square, sub, unary, Unary};
use super::error::OpResult;
use super::reduce::reduce_mean;
use super::tensor::Tensor;

/// The variance of `x` over `axes` (all axes when `None`).
pub fn reduce_variance(
    e: &mut Eager,
    x: &Tensor,
    axes: Option<Vec<i64>>,
    keepdims: bool,
) -> OpResult<Tensor> {
    let mean = reduce_mean(e, x, axes.clone(), true)?;
    let d = sub(e, x, &mean)?;
    let d2 = square(e, &d)?;
    reduce_mean(e, &d2, axes, keepdims)
}

/// The standard deviation of `x` over `axes`: the square root of the variance.
pub fn reduce_std(
    e: &mut Eager,
    x: &Tensor,
    axes: Option<Vec<i64>>,
    keepdims: bool,
) -> OpResult<Tensor> {
    let v = reduce_variance(e, x, axes, keepdims)?;
    unary(e, Unary::Sqrt, &v)
}
