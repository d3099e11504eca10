//! Pooling as Keras's layers compute it on TensorFlow: a global pooling is a mean or a
//! maximum over every axis between the batch and the channels (`tf.reduce_mean` /
//! `tf.reduce_max`), and a one-dimensional window pooling is the two-dimensional one on
//! the input with an axis of size 1 inserted, as `tf.nn.avg_pool1d` does it. Both are
//! compositions of the reduction, shape and window ops, so their gradients are those ops'
//! vector-Jacobian products. Nothing here knows about layers.

use super::eager::Eager;
use super::error::OpResult;
use super::reduce::{reduce, ReduceKind};
use super::shape::{expand_dims, squeeze};
use super::tensor::Tensor;
use super::window::{pool, Padding, Pool};

/// The mean (or with `max` the maximum) of `x` over its axes between the first and the
/// last; `keepdims` keeps them with size 1.
pub fn global_pool(e: &mut Eager, x: &Tensor, max: bool, keepdims: bool) -> OpResult<Tensor> {
    let axes: Vec<i64> = (1..x.ndim().saturating_sub(1)).map(|a| a as i64).collect();
    let kind = if max {
        ReduceKind::Max
    } else {
        ReduceKind::Mean
    };
    reduce(e, x, kind, Some(axes), keepdims)
}

/// `tf.nn.avg_pool1d` (or with `max` `tf.nn.max_pool1d`) on `(batch, steps, channels)`:
/// windows of `size` every `stride` steps.
pub fn pool1d(
    e: &mut Eager,
    x: &Tensor,
    size: usize,
    stride: usize,
    padding: Padding,
    max: bool,
) -> OpResult<Tensor> {
    let wide = expand_dims(e, x, 1)?;
    let p = Pool {
        ksize: (1, size),
        strides: (1, stride),
        padding,
    };
    let y = pool(e, &wide, p, max)?;
    squeeze(e, &y, &[1])
}
