//! Keras's rectifiers with their arguments, as its TensorFlow backend composes them:
//! `keras.activations.relu(x, negative_slope, max_value, threshold)` (a leaky ReLU, a
//! ReLU6, a ReLU with a threshold or a cap, each the ops Keras picks for the arguments) and
//! `keras.activations.elu(x, alpha)` (`tf.nn.elu`, scaled where `x <= 0` unless `alpha` is
//! 1). Written once here from the activation, element-wise and comparison ops, so a
//! layer, a tape and `fit` share the values and the gradients of those ops.

use super::activation::{activate, Activation};
use super::eager::Eager;
use super::elementwise::{binary, cast, clip_by_value, mul, neg, scale, select, sub, Binary};
use super::error::OpResult;
use super::tensor::Tensor;

/// `keras.activations.relu(x, negative_slope, max_value, threshold)`.
pub fn keras_relu(
    e: &mut Eager,
    x: &Tensor,
    negative_slope: f64,
    max_value: Option<f64>,
    threshold: f64,
) -> OpResult<Tensor> {
    let dt = x.dtype();
    let negative_part = if negative_slope != 0.0 {
        if max_value.is_none() && threshold == 0.0 {
            let alpha = negative_slope as f32;
            return activate(e, Activation::LeakyRelu { alpha }, x);
        }
        let minus = neg(e, x)?;
        let shifted = if threshold != 0.0 {
            binary(e, Binary::Add, &minus, &Tensor::scalar(threshold, dt))?
        } else {
            minus
        };
        Some(activate(e, Activation::Relu, &shifted)?)
    } else {
        None
    };
    let mut clip_max = max_value.is_some();
    let mut y = if threshold != 0.0 {
        let above = binary(e, Binary::Greater, x, &Tensor::scalar(threshold, dt))?;
        let mask = cast(e, &above, dt)?;
        mul(e, x, &mask)?
    } else if max_value == Some(6.0) {
        // Keras's `relu6`: the same values as a ReLU clipped at 6.
        clip_max = false;
        let r = activate(e, Activation::Relu, x)?;
        binary(e, Binary::Minimum, &r, &Tensor::scalar(6.0, dt))?
    } else {
        activate(e, Activation::Relu, x)?
    };
    if let (true, Some(m)) = (clip_max, max_value) {
        let lo = Tensor::scalar(0.0, dt);
        let hi = Tensor::scalar(m, dt);
        y = clip_by_value(e, &y, &lo, &hi)?;
    }
    if let Some(n) = negative_part {
        let part = scale(e, &n, negative_slope)?;
        y = sub(e, &y, &part)?;
    }
    Ok(y)
}

/// `keras.activations.elu(x, alpha)`.
pub fn keras_elu(e: &mut Eager, x: &Tensor, alpha: f64) -> OpResult<Tensor> {
    let res = activate(e, Activation::Elu, x)?;
    if alpha == 1.0 {
        return Ok(res);
    }
    let dt = x.dtype();
    let positive = binary(e, Binary::Greater, x, &Tensor::scalar(0.0, dt))?;
    let scaled = scale(e, &res, alpha)?;
    select(e, &positive, &res, &scaled)
}
