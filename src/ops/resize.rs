//! Resizing an image batch `(batch, height, width, channels)` as Keras's layers do it on
//! TensorFlow: nearest-neighbour upsampling (`UpSampling2D`, each pixel repeated `rows` x
//! `cols` times, as `repeat` along each axis gives) and zero padding (`ZeroPadding2D`, as
//! TF's `Pad` gives). Both are compositions of the shape ops (a broadcast between two
//! reshapes; a concatenation with zeros), so their gradients are those ops' sums and
//! slices. Nothing here knows about layers.

use super::eager::Eager;
use super::error::{OpError, OpResult};
use super::shape::{broadcast_to, concat, reshape};
use super::tensor::Tensor;
use crate::tensor::NdArray;

/// The four sizes of an image batch, or TF's error for another rank.
fn image(op: &str, x: &Tensor) -> OpResult<[usize; 4]> {
    match x.shape() {
        [b, h, w, c] => Ok([*b, *h, *w, *c]),
        other => Err(OpError::new(
            super::error::ErrorClass::InvalidArgument,
            format!(
                "{op}: input must be 4-dimensional (batch, height, width, channels), got shape {}",
                super::error::dims(other)
            ),
        )),
    }
}

/// Each pixel of `x` repeated `rows` times down and `cols` times across.
pub fn upsample_nearest(e: &mut Eager, x: &Tensor, rows: usize, cols: usize) -> OpResult<Tensor> {
    let [b, h, w, c] = image("UpSampling2D", x)?;
    let i = |d: usize| d as i64;
    let spread = reshape(e, x, &[i(b), i(h), 1, i(w), 1, i(c)])?;
    let wide = broadcast_to(e, &spread, &[b, h, rows, w, cols, c])?;
    reshape(
        e,
        &wide,
        &[
            i(b),
            i(h.saturating_mul(rows)),
            i(w.saturating_mul(cols)),
            i(c),
        ],
    )
}

/// `x` with `before` and `after` slices of zeros along `axis`.
pub(super) fn pad_axis(
    e: &mut Eager,
    x: &Tensor,
    axis: usize,
    (before, after): (usize, usize),
) -> OpResult<Tensor> {
    if before == 0 && after == 0 {
        return Ok(x.clone());
    }
    let zeros = |n: usize| {
        let mut shape = x.shape().to_vec();
        if let Some(d) = shape.get_mut(axis) {
            *d = n;
        }
        NdArray::zeros(&shape, x.dtype())
            .map(Tensor::new)
            .map_err(|err| OpError::from_tensor("Pad", "CPU", err))
    };
    let mut parts = vec![];
    if before > 0 {
        parts.push(zeros(before)?);
    }
    parts.push(x.clone());
    if after > 0 {
        parts.push(zeros(after)?);
    }
    concat(e, &parts, axis as i64)
}

/// `x` with `top`, `bottom` rows and `left`, `right` columns of zeros around each image.
pub fn zero_pad2d(
    e: &mut Eager,
    x: &Tensor,
    rows: (usize, usize),
    cols: (usize, usize),
) -> OpResult<Tensor> {
    image("ZeroPadding2D", x)?;
    let tall = pad_axis(e, x, 1, rows)?;
    pad_axis(e, &tall, 2, cols)
}
