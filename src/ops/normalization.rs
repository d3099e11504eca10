//! Normalization as TensorFlow computes it: `tf.nn.moments` (the mean, and the mean squared
//! distance from a mean the gradient does not flow through) and `tf.nn.batch_normalization`
//! (`x * inv + (offset - mean * inv)` with `inv = rsqrt(variance + epsilon) * scale`).
//! Keras's BatchNormalization and LayerNormalization are both these two steps over
//! different axes, so both are written once here, as compositions of the element-wise and
//! reduction ops: their forward values are TensorFlow's step by step, and their gradients
//! are those ops' vector-Jacobian products. Nothing here knows about layers or variables.

use super::eager::Eager;
use super::elementwise::{add, mul, neg, square, stop_gradient, sub, unary, Unary};
use super::error::OpResult;
use super::reduce::reduce_mean;
use super::shape::reshape;
use super::tensor::Tensor;

/// `tf.nn.moments(x, axes, keepdims)`: the mean and the variance over `axes`.
pub fn moments(
    e: &mut Eager,
    x: &Tensor,
    axes: &[i64],
    keepdims: bool,
) -> OpResult<(Tensor, Tensor)> {
    let mean = reduce_mean(e, x, Some(axes.to_vec()), true)?;
    // TensorFlow's `squared_difference(x, stop_gradient(mean))`: the mean's own gradient
    // reaches x through `mean` only.
    let held = stop_gradient(e, &mean)?;
    let d = sub(e, x, &held)?;
    let d2 = square(e, &d)?;
    let var = reduce_mean(e, &d2, Some(axes.to_vec()), true)?;
    if keepdims {
        return Ok((mean, var));
    }
    let kept: Vec<i64> = mean
        .shape()
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(&(*i as i64)))
        .map(|(_, d)| *d as i64)
        .collect();
    Ok((reshape(e, &mean, &kept)?, reshape(e, &var, &kept)?))
}

/// `tf.nn.batch_normalization(x, mean, variance, offset, scale, epsilon)`: the statistics,
/// offset and scale broadcast against `x`.
pub fn batch_normalization(
    e: &mut Eager,
    x: &Tensor,
    mean: &Tensor,
    variance: &Tensor,
    offset: Option<&Tensor>,
    scale: Option<&Tensor>,
    epsilon: f64,
) -> OpResult<Tensor> {
    let eps = Tensor::scalar(epsilon, variance.dtype());
    let v = add(e, variance, &eps)?;
    let mut inv = unary(e, Unary::Rsqrt, &v)?;
    if let Some(s) = scale {
        inv = mul(e, &inv, s)?;
    }
    let m = mul(e, mean, &inv)?;
    let shift = match offset {
        Some(o) => sub(e, o, &m)?,
        None => neg(e, &m)?,
    };
    let y = mul(e, x, &inv)?;
    add(e, &y, &shift)
}
