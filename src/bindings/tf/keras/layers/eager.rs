//! A built-in layer called on data (`layer(x)`, or a model that is not run by the compiled
//! engine): its arithmetic as ops of the op library, run through the session's execution
//! context, so a gradient tape records every step and gradients reach the layer's
//! variables. The ops are the ones Keras's TensorFlow backend runs for the layer (`MatMul`
//! or `BatchMatMulV2`, `AddV2`, the activation; `Conv2D`; `MaxPool`; `Reshape`; dropout's
//! mask from a seed), so values and gradients agree with TensorFlow's.

use super::super::super::convert::variable_in;
use super::super::super::eager::{context, run};
use super::super::super::random::seeds;
use crate::keras::bidirectional::{Bidirectional, MergeMode};
use crate::keras::norm::Norm;
use crate::keras::recurrent::Recurrent;
use crate::keras::{Act, LayerKind, Padding, Stateless};
use crate::lang::{Ctx, PyResult, Value};
use crate::ops::{self, Activation, Assign, Conv, Eager, OpResult, Pool, Tensor};
use crate::tensor::DType;

/// The padding of a window op for a Keras padding name.
fn window_padding(p: Padding) -> ops::Padding {
    match p {
        Padding::Valid => ops::Padding::Valid,
        Padding::Same => ops::Padding::Same,
    }
}

/// A two-dimensional max (`max`) or average pooling with Keras's window arguments.
fn pool2d(
    e: &mut Eager,
    x: &Tensor,
    ksize: (usize, usize),
    strides: (usize, usize),
    padding: Padding,
    max: bool,
) -> OpResult<Tensor> {
    let p = Pool {
        ksize,
        strides,
        padding: window_padding(padding),
    };
    ops::pool(e, x, p, max)
}

/// Applies an activation as Keras does after a layer's core operation.
pub fn activate(e: &mut Eager, act: Act, x: &Tensor) -> OpResult<Tensor> {
    match act {
        Act::Elem(a) => match Activation::from_device(a) {
            Some(op) => ops::activate(e, op, x),
            None => Ok(x.clone()),
        },
        Act::Softmax => ops::softmax(e, x, -1, false),
        Act::LogSoftmax => ops::softmax(e, x, -1, true),
    }
}

/// `kind` applied to `x` with the layer's `weights` (Keras variables, read as the running
/// code sees them: a replica's copy inside a replica's step). `trainable` is the layer's
/// flag: a batch normalization that does not train uses its moving statistics even in
/// training, as Keras's does. `mask` is the Keras mask `x` carries, which a recurrent
/// layer and a global average pooling read.
pub fn forward(
    kind: &LayerKind,
    weights: &[Value],
    x: &Tensor,
    mask: Option<&Tensor>,
    training: bool,
    trainable: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Tensor> {
    let vars: Vec<ops::Variable> = weights.iter().filter_map(|w| variable_in(w, ctx)).collect();
    let dropout_seeds = match kind {
        LayerKind::Dropout { rate, seed } if training && *rate > 0.0 => {
            Some(seeds(ctx, seed.map(|s| s as i64)))
        }
        _ => None,
    };
    let e = context(ctx);
    let read: Vec<Tensor> = vars.iter().map(|v| e.read(v)).collect();
    run(ctx, |e| match kind {
        LayerKind::Dense { activation, .. } => {
            let mut y = match read.first() {
                Some(k) => ops::matmul(e, x, k, false, false)?,
                None => x.clone(),
            };
            if let Some(b) = read.get(1) {
                y = ops::add(e, &y, b)?;
            }
            activate(e, *activation, &y)
        }
        LayerKind::Conv2D {
            strides,
            padding,
            activation,
            ..
        } => {
            let conv = Conv {
                strides: *strides,
                padding: window_padding(*padding),
            };
            let mut y = match read.first() {
                Some(k) => ops::conv2d(e, x, k, conv)?,
                None => x.clone(),
            };
            if let Some(b) = read.get(1) {
                y = ops::add(e, &y, b)?;
            }
            activate(e, *activation, &y)
        }
        LayerKind::Conv1D(c) => {
            let mut y = match read.first() {
                Some(k) => ops::conv1d(e, x, k, c.strides, c.padding, c.dilation_rate)?,
                None => x.clone(),
            };
            if let Some(b) = read.get(1) {
                y = ops::add(e, &y, b)?;
            }
            activate(e, c.activation, &y)
        }
        LayerKind::MaxPooling2D {
            pool_size,
            strides,
            padding,
        } => pool2d(e, x, *pool_size, *strides, *padding, true),
        LayerKind::Flatten => {
            let batch = x.shape().first().copied().unwrap_or(1) as i64;
            let shape: &[i64] = if x.ndim() <= 1 { &[-1] } else { &[batch, -1] };
            ops::reshape(e, x, shape)
        }
        LayerKind::Reshape { target_shape } => {
            let mut shape = vec![x.shape().first().copied().unwrap_or(1) as i64];
            shape.extend(target_shape.iter().copied());
            ops::reshape(e, x, &shape)
        }
        LayerKind::Dropout { rate, .. } => match &dropout_seeds {
            Some(s) => ops::dropout(e, x, f64::from(*rate), s),
            None => Ok(x.clone()),
        },
        LayerKind::Activation(a) => activate(e, *a, x),
        LayerKind::Softmax => ops::softmax(e, x, -1, false),
        // A merge reads several tensors: `merge.rs` runs it.
        LayerKind::Merge(_) => Ok(x.clone()),
        LayerKind::Norm(n) => normalize(e, n, &read, &vars, x, training && trainable),
        LayerKind::Stateless(Stateless::GlobalPool {
            max: false,
            rank: 1,
            keepdims,
        }) if mask.is_some() => match mask {
            Some(m) => ops::masked_mean_steps(e, x, m, *keepdims),
            None => Ok(x.clone()),
        },
        LayerKind::Stateless(Stateless::Masking { mask_value }) => {
            Ok(ops::masking(e, x, *mask_value)?.0)
        }
        LayerKind::Stateless(s) => stateless(e, s, x),
        LayerKind::Embedding { .. } => {
            // Keras casts any other input to int32 first, then takes the rows.
            let idx = match x.dtype() {
                DType::I32 | DType::I64 => x.clone(),
                _ => ops::cast(e, x, DType::I32)?,
            };
            match read.first() {
                Some(table) => ops::gather(e, table, &idx, 0),
                None => Ok(x.clone()),
            }
        }
        LayerKind::Recurrent(r) => {
            let (y, _) = recurrence(e, r, &read, x, &[], mask)?;
            Ok(y)
        }
        LayerKind::Bidirectional(b) => {
            let mut outs = bidirectional(e, b, &read, x, mask)?;
            Ok(outs.swap_remove(0))
        }
    })
}

/// A `Bidirectional` over `x`: the forward layer with the first half of `read`, the
/// backward one with the rest, both under `mask`; the backward sequence is flipped back
/// into time order and the two merged as `merge_mode` says (both returned for `None`).
pub fn bidirectional(
    e: &mut Eager,
    b: &Bidirectional,
    read: &[Tensor],
    x: &Tensor,
    mask: Option<&Tensor>,
) -> OpResult<Vec<Tensor>> {
    let n = (2 + usize::from(b.forward.use_bias)).min(read.len());
    let (fwd, bwd) = read.split_at(n);
    let (y, _) = recurrence(e, &b.forward, fwd, x, &[], mask)?;
    let (mut y_rev, _) = recurrence(e, &b.backward, bwd, x, &[], mask)?;
    if b.return_sequences() {
        // Keras's `ops.flip(y_rev, axis=1)`: a strided slice with step -1 on the steps.
        let spec = [
            ops::SliceItem::Range(None, None, None),
            ops::SliceItem::Range(None, None, Some(-1)),
        ];
        y_rev = ops::strided_slice(e, &y_rev, &spec)?;
    }
    Ok(match b.merge_mode {
        Some(MergeMode::Concat) => vec![ops::concat(e, &[y, y_rev], -1)?],
        Some(MergeMode::Sum) => vec![ops::add(e, &y, &y_rev)?],
        Some(MergeMode::Mul) => vec![ops::mul(e, &y, &y_rev)?],
        Some(MergeMode::Ave) => {
            let s = ops::add(e, &y, &y_rev)?;
            vec![ops::div(e, &s, &Tensor::scalar(2.0, s.dtype()))?]
        }
        None => vec![y, y_rev],
    })
}

/// A recurrent layer over `x` with its variables' values `read` (kernel, recurrent kernel,
/// bias) from the states `initial` (zeros when empty): its output and its final states.
pub fn recurrence(
    e: &mut Eager,
    r: &Recurrent,
    read: &[Tensor],
    x: &Tensor,
    initial: &[Tensor],
    mask: Option<&Tensor>,
) -> OpResult<(Tensor, Vec<Tensor>)> {
    let (Some(kernel), Some(recurrent_kernel)) = (read.first(), read.get(1)) else {
        return Err(ops::OpError::internal(
            "a recurrent layer without its kernels",
        ));
    };
    let (act, ract) = (r.activation, r.recurrent_activation);
    let activation = move |e: &mut Eager, t: &Tensor| activate(e, act, t);
    let recurrent_activation = move |e: &mut Eager, t: &Tensor| activate(e, ract, t);
    let run = ops::Recurrence {
        cell: r.cell,
        activation: &activation,
        recurrent_activation: &recurrent_activation,
        go_backwards: r.go_backwards,
        return_sequences: r.return_sequences,
        zero_output_for_mask: r.zero_output_for_mask,
    };
    let w = ops::CellWeights {
        kernel,
        recurrent_kernel,
        bias: read.get(2),
    };
    let mask = match mask {
        Some(m) if m.dtype() != DType::Bool => Some(ops::cast(e, m, DType::Bool)?),
        Some(m) => Some(m.clone()),
        None => None,
    };
    ops::recurrence(e, &run, x, &w, initial, mask.as_ref())
}

/// A recurrent layer called on `x` with `initial_state` (tensors, or none) and `mask`: the
/// output, then the final states when the layer returns them, as Keras returns them.
pub fn recurrent_call(
    r: &Recurrent,
    weights: &[Value],
    x: &Tensor,
    initial: &[Tensor],
    mask: Option<&Tensor>,
    ctx: &mut dyn Ctx,
) -> PyResult<Vec<Tensor>> {
    let vars: Vec<ops::Variable> = weights.iter().filter_map(|w| variable_in(w, ctx)).collect();
    let e = context(ctx);
    let read: Vec<Tensor> = vars.iter().map(|v| e.read(v)).collect();
    run(ctx, |e| {
        let (y, states) = recurrence(e, r, &read, x, initial, mask)?;
        let mut out = vec![y];
        if r.return_state {
            out.extend(states);
        }
        Ok(out)
    })
}

/// A `Bidirectional` called on `x` under `mask`: one output, or both for `merge_mode=None`.
pub fn bidirectional_call(
    b: &Bidirectional,
    weights: &[Value],
    x: &Tensor,
    mask: Option<&Tensor>,
    ctx: &mut dyn Ctx,
) -> PyResult<Vec<Tensor>> {
    let vars: Vec<ops::Variable> = weights.iter().filter_map(|w| variable_in(w, ctx)).collect();
    let e = context(ctx);
    let read: Vec<Tensor> = vars.iter().map(|v| e.read(v)).collect();
    run(ctx, |e| bidirectional(e, b, &read, x, mask))
}

/// A layer without variables applied to `x`, with the ops Keras's TensorFlow backend runs.
fn stateless(e: &mut Eager, s: &Stateless, x: &Tensor) -> OpResult<Tensor> {
    match s {
        Stateless::GlobalPool { max, keepdims, .. } => ops::global_pool(e, x, *max, *keepdims),
        Stateless::Pool {
            max,
            rank: 1,
            pool_size,
            strides,
            padding,
        } => ops::pool1d(e, x, pool_size.0, strides.0, window_padding(*padding), *max),
        Stateless::Pool {
            max,
            pool_size,
            strides,
            padding,
            ..
        } => pool2d(e, x, *pool_size, *strides, *padding, *max),
        Stateless::ReLU {
            max_value,
            negative_slope,
            threshold,
        } => ops::keras_relu(e, x, *negative_slope, *max_value, *threshold),
        Stateless::LeakyReLU { negative_slope } => ops::activate(
            e,
            Activation::LeakyRelu {
                alpha: *negative_slope as f32,
            },
            x,
        ),
        Stateless::ELU { alpha } => ops::keras_elu(e, x, *alpha),
        Stateless::Rescaling { scale, offset } => {
            let y = ops::scale(e, x, *scale)?;
            ops::add(e, &y, &Tensor::scalar(*offset, x.dtype()))
        }
        Stateless::RepeatVector { n } => {
            let wide = ops::expand_dims(e, x, 1)?;
            let mut shape = x.shape().to_vec();
            shape.insert(1.min(shape.len()), *n);
            ops::broadcast_to(e, &wide, &shape)
        }
        Stateless::Permute { dims } => {
            let mut perm = vec![0i64];
            perm.extend(dims.iter().map(|d| *d as i64));
            ops::transpose(e, x, &perm)
        }
        Stateless::UpSampling2D { size } => ops::upsample_nearest(e, x, size.0, size.1),
        Stateless::ZeroPadding2D { padding } => ops::zero_pad2d(e, x, padding.0, padding.1),
        Stateless::Masking { mask_value } => Ok(ops::masking(e, x, *mask_value)?.0),
    }
}

/// A normalization of `x` with its variables (`read` their values, `vars` the variables in
/// the same order). A batch normalization in training normalizes with the batch's
/// statistics and moves its moving statistics towards them (`moving * momentum + batch *
/// (1 - momentum)`, Keras's update); otherwise it uses the moving statistics.
fn normalize(
    e: &mut Eager,
    n: &Norm,
    read: &[Tensor],
    vars: &[ops::Variable],
    x: &Tensor,
    training: bool,
) -> OpResult<Tensor> {
    let nd = x.ndim();
    let axis = n.axis();
    let i = if axis < 0 { nd as i64 + axis } else { axis };
    let i = usize::try_from(i).unwrap_or(0).min(nd.saturating_sub(1));
    // Parameters of the feature axis broadcast against x: as they are on the last axis,
    // reshaped to `(1, .., C, .., 1)` on another, as Keras's backend reshapes them.
    let dims: Vec<i64> = (0..nd)
        .map(|d| if d == i { x.shape()[d] as i64 } else { 1 })
        .collect();
    let fit = |e: &mut Eager, t: &Tensor| {
        if i + 1 == nd {
            Ok(t.clone())
        } else {
            ops::reshape(e, t, &dims)
        }
    };
    let names = n.variable_names();
    let at = |name: &str| names.iter().position(|n| *n == name);
    let gamma = match at("gamma").and_then(|k| read.get(k)) {
        Some(g) => Some(fit(e, g)?),
        None => None,
    };
    let beta = match at("beta").and_then(|k| read.get(k)) {
        Some(b) => Some(fit(e, b)?),
        None => None,
    };
    match n {
        Norm::BatchNormalization {
            momentum, epsilon, ..
        } => {
            let (mm, mv) = (at("moving_mean"), at("moving_variance"));
            let (Some(mean_at), Some(var_at)) = (mm, mv) else {
                return Ok(x.clone());
            };
            let (mean, variance) = if training {
                let axes: Vec<i64> = (0..nd).filter(|d| *d != i).map(|d| d as i64).collect();
                let (mean, variance) = ops::moments(e, x, &axes, false)?;
                for (k, batch) in [(mean_at, &mean), (var_at, &variance)] {
                    let (Some(moving), Some(var)) = (read.get(k), vars.get(k)) else {
                        continue;
                    };
                    let kept = ops::scale(e, moving, *momentum)?;
                    let new = ops::scale(e, batch, 1.0 - *momentum)?;
                    let next = ops::add(e, &kept, &new)?;
                    e.assign(var, Assign::Set, &next)?;
                }
                (mean, variance)
            } else {
                match (read.get(mean_at), read.get(var_at)) {
                    (Some(m), Some(v)) => (m.clone(), v.clone()),
                    _ => return Ok(x.clone()),
                }
            };
            let (mean, variance) = (fit(e, &mean)?, fit(e, &variance)?);
            ops::batch_normalization(
                e,
                x,
                &mean,
                &variance,
                beta.as_ref(),
                gamma.as_ref(),
                *epsilon,
            )
        }
        Norm::LayerNormalization { epsilon, .. } => {
            let (mean, variance) = ops::moments(e, x, &[i as i64], true)?;
            ops::batch_normalization(
                e,
                x,
                &mean,
                &variance,
                beta.as_ref(),
                gamma.as_ref(),
                *epsilon,
            )
        }
    }
}
