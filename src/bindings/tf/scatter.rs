//! `tf.scatter_nd`, `tf.tensor_scatter_nd_add` and `tf.tensor_scatter_nd_update`: each
//! row of the last axis of `indices` names a slice of the output by its first
//! coordinates, and the matching slice of `updates` is summed (or, for `update`, written)
//! there. The rows become flat positions in the output reshaped to `[rows, rest...]`, and
//! the op library's scatter-add (the gather's gradient op, whose own gradient is the
//! gather) writes them, so tapes see every scatter and its gradient is a gather. Shape and
//! index checks give TensorFlow's texts, framed as its eager kernels frame them.

use super::convert::{tensor_as, tensor_of};
use super::eager::apply;
use super::function::trace;
use super::ops::{arg, shape_dims};
use super::{set_all, Body, TfError};
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};
use crate::ops::{self, Eager, IndexOp, Op, OpError, OpResult, Tensor};
use crate::tensor::NdArray;

/// TF's `[d0,d1]` form of a shape in kernel messages.
fn dims(shape: &[usize]) -> String {
    let d: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", d.join(","))
}

/// The flat row (in `shape[..m]`, row-major) each index row names, after TF's checks of
/// the three shapes (`ValidateUpdateShape`, or for a `tensor` scatter its own outer and
/// inner checks) and of every index.
fn positions(
    op: &str,
    tensor: bool,
    dev: &str,
    idx: &NdArray,
    updates: &[usize],
    shape: &[usize],
) -> OpResult<Vec<i64>> {
    let fail = |m: String| OpError::framed(op, op, dev, &m, None);
    let ishape = idx.shape();
    let (slice_dim, batch_dim) = match ishape.split_last() {
        Some((&m, lead)) if ishape.len() > 1 => (m, lead.len()),
        _ => (1, 1),
    };
    let prefix = || {
        fail(format!(
            "Dimensions [0,{batch_dim}) of indices[shape={}] must match dimensions [0,{batch_dim}) of updates[shape={}]",
            dims(ishape),
            dims(updates)
        ))
    };
    let suffix = || {
        fail(format!(
            "Dimensions [{slice_dim},{}) of input[shape={}] must match dimensions [{batch_dim},{}) of updates[shape={}]",
            shape.len(),
            dims(shape),
            updates.len(),
            dims(updates)
        ))
    };
    if tensor {
        // TensorScatter* check the outer (batch) and inner (slice) dimensions apart.
        let outer = updates.get(..batch_dim) == ishape.get(..batch_dim);
        if !outer {
            return Err(fail(format!(
                "Outer dimensions of indices and update must match. Indices shape: {}, updates shape:{}",
                dims(ishape),
                dims(updates)
            )));
        }
        if shape.get(slice_dim..) != updates.get(batch_dim..) {
            return Err(fail(format!(
                "Inner dimensions of output shape must match inner dimensions of updates shape. Output: {} updates: {}",
                dims(shape),
                dims(updates)
            )));
        }
    }
    if updates.len() < batch_dim {
        return Err(prefix());
    }
    if shape.len() < slice_dim + (updates.len() - batch_dim)
        || updates.len() != batch_dim + shape.len() - slice_dim
    {
        return Err(suffix());
    }
    if (0..batch_dim).any(|d| updates.get(d) != ishape.get(d)) {
        return Err(prefix());
    }
    if (0..updates.len() - batch_dim).any(|d| updates[d + batch_dim] != shape[d + slice_dim]) {
        return Err(suffix());
    }
    let (_, coords) = idx.to_i64_vec();
    let mut flat = Vec::with_capacity(coords.len() / slice_dim.max(1));
    for (row, c) in coords.chunks(slice_dim.max(1)).enumerate() {
        let mut at = 0i64;
        for (j, &v) in c.iter().enumerate() {
            if v < 0 || v >= shape[j] as i64 {
                let shown: Vec<String> = c.iter().map(|v| v.to_string()).collect();
                return Err(fail(format!(
                    "indices[{row}] = [{}] does not index into shape {}",
                    shown.join(", "),
                    dims(shape)
                )));
            }
            at = at * shape[j] as i64 + v;
        }
        flat.push(at);
    }
    Ok(flat)
}

/// `updates` summed into zeros of `shape` at `rows` (flat rows of `shape[..m]`).
fn scatter_rows(
    e: &mut Eager,
    updates: &Tensor,
    rows: Vec<i64>,
    shape: &[usize],
    m: usize,
) -> OpResult<Tensor> {
    let dev = e.device().name();
    let n = rows.len();
    let ids = NdArray::from_i64(&[n], rows)
        .map_err(|err| OpError::from_tensor("ScatterNd", &dev, err))?;
    let mut flat_shape = vec![shape[..m].iter().product::<usize>()];
    flat_shape.extend_from_slice(&shape[m..]);
    let mut upd_shape = vec![n as i64];
    upd_shape.extend(shape[m..].iter().map(|&d| d as i64));
    let upd = ops::reshape(e, updates, &upd_shape)?;
    let summed = e.execute1(
        Op::Index(IndexOp::GatherGrad {
            axis: 0,
            shape: flat_shape,
        }),
        &[upd, Tensor::new(ids)],
    )?;
    let out: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    ops::reshape(e, &summed, &out)
}

/// The index width `m` (the last axis of `indices`, or 1 for a vector of indices).
fn width(idx: &NdArray) -> usize {
    match idx.shape() {
        [_, .., m] => *m,
        _ => 1,
    }
}

fn scatter_nd(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("scatter_nd", &["indices", "updates", "shape", "name"], 3)?;
    let indices = tensor_of(arg(&s, 0), ctx)?;
    let updates = tensor_of(arg(&s, 1), ctx)?;
    let shape = shape_dims(arg(&s, 2), ctx)?;
    trace::value_read(ctx, &indices, "tf.scatter_nd");
    let idx = indices.value().clone();
    apply(ctx, |e| {
        let dev = e.device().name();
        let rows = positions("ScatterNd", false, &dev, &idx, updates.shape(), &shape)?;
        scatter_rows(e, &updates, rows, &shape, width(&idx))
    })
}

/// `tf.tensor_scatter_nd_add` (`write` false) and `tf.tensor_scatter_nd_update`: an
/// update writes each position once, the last row naming it winning (TF's CPU kernel),
/// and keeps `tensor` elsewhere through a constant mask, so `tensor`'s gradient is zero
/// where it was overwritten.
fn tensor_scatter(
    func: &str,
    op_name: &str,
    write: bool,
    args: &Args,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let s = args.bind(func, &["tensor", "indices", "updates", "name"], 3)?;
    let indices = tensor_of(arg(&s, 1), ctx)?;
    let tensor = tensor_of(arg(&s, 0), ctx)?;
    let updates = tensor_as(arg(&s, 2), tensor.dtype(), ctx)?;
    if updates.dtype() != tensor.dtype() {
        // A Python value converts to the tensor's dtype or fails as `convert_to_tensor`
        // does; a tensor of another dtype reaches the kernel, which refuses it.
        let given = arg(&s, 2);
        return Err(match given.downcast::<super::tensor::Tensor>() {
            None => TfError::Type(format!(
                "Cannot convert {} to EagerTensor of dtype {}",
                ctx.repr(given)?,
                tensor.dtype().name()
            ))
            .into(),
            Some(_) => PyErr::new(
                "InvalidArgumentError",
                format!(
                    "cannot compute {op_name} as input #2(zero-based) was expected to be a {} tensor but is a {} tensor [Op:{op_name}]",
                    tensor.dtype().name(),
                    updates.dtype().name()
                ),
            ),
        });
    }
    trace::value_read(ctx, &indices, &format!("tf.{func}"));
    let idx = indices.value().clone();
    let op_name = op_name.to_string();
    apply(ctx, |e| {
        let dev = e.device().name();
        let shape = tensor.shape().to_vec();
        let rows = positions(&op_name, true, &dev, &idx, updates.shape(), &shape)?;
        let m = width(&idx);
        if !write {
            let scattered = scatter_rows(e, &updates, rows, &shape, m)?;
            return ops::add(e, &tensor, &scattered);
        }
        // The last row naming each position is the one written.
        let n = rows.len();
        let kept: Vec<i64> = (0..n)
            .filter(|&i| !rows[i + 1..].contains(&rows[i]))
            .map(|i| i as i64)
            .collect();
        let kept_rows: Vec<i64> = kept.iter().map(|&i| rows[i as usize]).collect();
        let mut upd_shape = vec![n as i64];
        upd_shape.extend(shape[m..].iter().map(|&d| d as i64));
        let upd = ops::reshape(e, &updates, &upd_shape)?;
        let pick = NdArray::from_i64(&[kept.len()], kept)
            .map_err(|err| OpError::from_tensor(&op_name, &dev, err))?;
        let upd = ops::gather(e, &upd, &Tensor::new(pick), 0)?;
        let written = scatter_rows(e, &upd, kept_rows.clone(), &shape, m)?;
        let inner: usize = shape[m..].iter().product();
        let mut keep = vec![1.0; shape.iter().product()];
        for r in kept_rows {
            let at = r as usize * inner;
            keep[at..at + inner].iter_mut().for_each(|k| *k = 0.0);
        }
        let keep = NdArray::from_f64(&shape, keep)
            .map_err(|err| OpError::from_tensor(&op_name, &dev, err))?
            .astype(tensor.dtype());
        let kept_tensor = ops::mul(e, &tensor, &Tensor::new(keep))?;
        ops::add(e, &kept_tensor, &written)
    })
}

/// The scatter functions of `tf`: signature (whose text before `(` is the name), body.
const FUNCTIONS: &[(&str, Body)] = &[
    ("scatter_nd(indices, updates, shape, name=None)", scatter_nd),
    (
        "tensor_scatter_nd_add(tensor, indices, updates, name=None)",
        |a, ctx| tensor_scatter("tensor_scatter_nd_add", "TensorScatterAdd", false, a, ctx),
    ),
    (
        "tensor_scatter_nd_update(tensor, indices, updates, name=None)",
        |a, ctx| {
            tensor_scatter(
                "tensor_scatter_nd_update",
                "TensorScatterUpdate",
                true,
                a,
                ctx,
            )
        },
    ),
];

/// Adds the scatter functions to `tf`.
pub fn register(tf: &NativeModule) {
    set_all(tf, FUNCTIONS);
}
