//! Resizing an image batch `(batch, height, width, channels)` as TensorFlow does it:
//! nearest-neighbour upsampling (`UpSampling2D`, each pixel repeated `rows` x `cols` times,
//! as `repeat` along each axis gives), zero padding (`ZeroPadding2D`, as TF's `Pad` gives),
//! and resampling to any size (`tf.image.resize`: TF's `ResizeBilinear` and
//! `ResizeNearestNeighbor` kernels with half-pixel centres). All are compositions of the
//! shape, index and element-wise ops (a broadcast between two reshapes; a concatenation with
//! zeros; gathers of source rows and columns blended by constant weights), so their
//! gradients are those ops' sums, slices and scatters. Nothing here knows about layers.

use super::eager::Eager;
use super::elementwise::{add, cast, mul, sub};
use super::error::{OpError, OpResult};
use super::index::gather;
use super::shape::{broadcast_to, concat, reshape};
use super::tensor::Tensor;
use crate::tensor::{DType, NdArray};

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

/// How [`resize_images`] reads the source image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    /// Each output pixel blends the four source pixels around its centre (`ResizeBilinear`);
    /// the result is float32 whatever the input's dtype, as TF's kernel gives it.
    Bilinear,
    /// Each output pixel copies the source pixel its centre falls in
    /// (`ResizeNearestNeighbor`); the dtype is kept.
    Nearest,
}

impl Interpolation {
    /// The kernel's name in TF's errors.
    fn op_name(self) -> &'static str {
        match self {
            Interpolation::Bilinear => "ResizeBilinear",
            Interpolation::Nearest => "ResizeNearestNeighbor",
        }
    }
}

/// Where output position `i` of `output` falls in an axis of `input` positions, with
/// half-pixel centres: TF computes the scale and the position in float32, and so must we
/// to pick the same source pixels.
fn source_position(i: usize, input: usize, output: usize) -> f32 {
    let scale = input as f32 / output as f32;
    (i as f32 + 0.5) * scale
}

/// Along one axis, each output position's lower and upper source index and the weight of
/// the upper one (TF's `compute_interpolation_weights`).
fn bilinear_taps(input: usize, output: usize) -> (Vec<i64>, Vec<i64>, Vec<f32>) {
    let last = input.saturating_sub(1) as i64;
    let mut lower = Vec::with_capacity(output);
    let mut upper = Vec::with_capacity(output);
    let mut weight = Vec::with_capacity(output);
    for i in 0..output {
        let at = source_position(i, input, output) - 0.5;
        let floor = at.floor();
        lower.push((floor as i64).max(0));
        upper.push((at.ceil() as i64).min(last));
        weight.push(at - floor);
    }
    (lower, upper, weight)
}

/// Along one axis, the source index each output position copies.
fn nearest_taps(input: usize, output: usize) -> Vec<i64> {
    let last = input.saturating_sub(1) as i64;
    (0..output)
        .map(|i| (source_position(i, input, output).floor() as i64).clamp(0, last))
        .collect()
}

fn index_tensor(op: &str, taps: Vec<i64>) -> OpResult<Tensor> {
    let n = taps.len();
    NdArray::from_i64(&[n], taps)
        .map(Tensor::new)
        .map_err(|err| OpError::from_tensor(op, "CPU", err))
}

/// The weights of one axis shaped to broadcast over a batch along `axis` (1 or 2).
fn weight_tensor(op: &str, weights: Vec<f32>, axis: usize) -> OpResult<Tensor> {
    let mut shape = [1usize; 4];
    shape[axis] = weights.len();
    NdArray::from_f32(&shape, weights)
        .map(Tensor::new)
        .map_err(|err| OpError::from_tensor(op, "CPU", err))
}

/// `a + (b - a) * t`, the blend TF's bilinear kernel computes, in its order.
fn lerp(e: &mut Eager, a: &Tensor, b: &Tensor, t: &Tensor) -> OpResult<Tensor> {
    let step = sub(e, b, a)?;
    let part = mul(e, &step, t)?;
    add(e, a, &part)
}

/// Every image of `x` resampled to `height` x `width` (`tf.image.resize` without
/// antialiasing). The bilinear blend runs along the width first, then the height, as TF's
/// kernel does, so the rounding is the same.
pub fn resize_images(
    e: &mut Eager,
    x: &Tensor,
    (height, width): (usize, usize),
    method: Interpolation,
) -> OpResult<Tensor> {
    let op = method.op_name();
    let [_, h, w, _] = image(op, x)?;
    if height == 0 || width == 0 {
        return Err(OpError::kernel(
            op,
            "CPU:0",
            "output dimensions must be positive",
        ));
    }
    if h == 0 || w == 0 {
        return Err(OpError::kernel(
            op,
            "CPU:0",
            "input image must be of non-zero size",
        ));
    }
    match method {
        Interpolation::Nearest => {
            let rows = index_tensor(op, nearest_taps(h, height))?;
            let cols = index_tensor(op, nearest_taps(w, width))?;
            let tall = gather(e, x, &rows, 1)?;
            gather(e, &tall, &cols, 2)
        }
        Interpolation::Bilinear => {
            let x = if x.dtype() == DType::F32 {
                x.clone()
            } else {
                cast(e, x, DType::F32)?
            };
            let (top, bottom, down) = bilinear_taps(h, height);
            let (left, right, across) = bilinear_taps(w, width);
            let left = index_tensor(op, left)?;
            let right = index_tensor(op, right)?;
            let across = weight_tensor(op, across, 2)?;
            let blend_rows = |e: &mut Eager, rows: Vec<i64>| -> OpResult<Tensor> {
                let rows = gather(e, &x, &index_tensor(op, rows)?, 1)?;
                let a = gather(e, &rows, &left, 2)?;
                let b = gather(e, &rows, &right, 2)?;
                lerp(e, &a, &b, &across)
            };
            let top = blend_rows(e, top)?;
            let bottom = blend_rows(e, bottom)?;
            lerp(e, &top, &bottom, &weight_tensor(op, down, 1)?)
        }
    }
}
