//! The `tf` functions that pick elements by a mask, by value or by coordinates:
//! `tf.boolean_mask` (and `t[mask]`), `tf.unique`, `tf.unique_with_counts`,
//! `tf.math.top_k` (also `tf.nn.top_k`) and `tf.gather_nd`. Results with several parts are
//! TF's named tuples (`Unique`, `UniqueWithCounts`, `TopKV2`). Everything runs the op
//! library (`Unique` and `TopKV2` ops, gathers of reshaped tensors), so tapes and traced
//! functions see it; masks and coordinates are read as values, as TF's shapes depend on
//! them. Checks that TF makes in Python raise its `ValueError`s here, with its texts.

use super::convert::{dtype_arg, tensor_of};
use super::eager::{apply, run, wrap};
use super::function::trace;
use super::ops::arg;
use super::{func, given, TfError};
use crate::bindings::stdlib::record::Record;
use crate::lang::{Args, Ctx, NativeModule, PyResult, Value};
use crate::ops::{self, Eager, OpError, OpResult};
use crate::tensor::{shape_str, DType, NdArray};

type R = PyResult<Value>;

/// The positions of a mask's true elements, flattened.
fn true_positions(mask: &NdArray) -> Vec<i64> {
    mask.to_bool_array()
        .iter()
        .enumerate()
        .filter(|(_, &b)| b)
        .map(|(i, _)| i as i64)
        .collect()
}

/// `tf.boolean_mask(t, mask, axis)`: the axes `axis..axis+k` of `t` (k the mask's rank)
/// flattened into one, and the positions where the mask is true gathered from it, so the
/// gradient reaches the selected elements. TF's `ValueError`s for a scalar mask and for
/// shapes that do not match.
pub fn boolean_mask(t: &ops::Tensor, mask: &NdArray, axis: i64, ctx: &mut dyn Ctx) -> R {
    let k = mask.ndim();
    if k == 0 {
        return Err(TfError::Value("mask cannot be scalar.".into()).into());
    }
    // TF reads the masked dimensions as the Python slice `shape[axis:axis + k]`, so a
    // negative axis whose slice ends at or past 0 finds no (or too few) dimensions.
    let nd = t.ndim() as i64;
    let clamp = |i: i64| (if i < 0 { i + nd } else { i }).clamp(0, nd) as usize;
    let (from, to) = (clamp(axis), clamp(axis + k as i64));
    let held = t.shape().get(from..to.max(from)).unwrap_or(&[]);
    if held != mask.shape() {
        return Err(TfError::Value(format!(
            "Shapes {} and {} are incompatible",
            shape_str(held),
            shape_str(mask.shape())
        ))
        .into());
    }
    let a = from;
    let mut shape: Vec<i64> = t.shape()[..a].iter().map(|&d| d as i64).collect();
    shape.push(-1);
    shape.extend(t.shape()[a + k..].iter().map(|&d| d as i64));
    let picked = true_positions(mask);
    let idx = NdArray::from_i64(&[picked.len()], picked).map_err(super::convert::tensor_err)?;
    apply(ctx, |e| {
        let flat = ops::reshape(e, t, &shape)?;
        ops::gather(e, &flat, &ops::Tensor::new(idx), a as i64)
    })
}

fn boolean_mask_fn(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("boolean_mask", &["tensor", "mask", "axis", "name"], 2)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let m = tensor_of(arg(&s, 1), ctx)?;
    trace::value_read(ctx, &m, "a boolean mask");
    let axis = given(&s[2]).map_or(Ok(0), |v| v.as_int())?;
    let mask = m.value().astype(DType::Bool);
    boolean_mask(&t, &mask, axis, ctx)
}

/// The named tuple TF returns for an op with several outputs.
fn named(type_name: &str, fields: &[&str], ts: Vec<ops::Tensor>) -> Value {
    Record::value(type_name, fields, ts.into_iter().map(wrap).collect())
}

fn unique_parts(name: &'static str, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Vec<ops::Tensor>> {
    let counts = name == "unique_with_counts";
    let s = args.bind(name, &["x", "out_idx", "name"], 1)?;
    let x = tensor_of(arg(&s, 0), ctx)?;
    let out_idx = dtype_arg(s[1].as_ref(), ctx)?.unwrap_or(DType::I32);
    run(ctx, |e| ops::unique(e, &x, out_idx, counts))
}

fn unique(args: &Args, ctx: &mut dyn Ctx) -> R {
    let mut parts = unique_parts("unique", args, ctx)?;
    parts.truncate(2);
    Ok(named("Unique", &["y", "idx"], parts))
}

fn unique_with_counts(args: &Args, ctx: &mut dyn Ctx) -> R {
    let parts = unique_parts("unique_with_counts", args, ctx)?;
    Ok(named("UniqueWithCounts", &["y", "idx", "count"], parts))
}

/// An integer given as a Python int or a scalar integer tensor.
fn int_of(v: &Value, ctx: &mut dyn Ctx) -> PyResult<i64> {
    if let Value::Int(i) = v {
        return Ok(*i);
    }
    let t = tensor_of(v, ctx)?;
    trace::value_read(ctx, &t, "k of tf.math.top_k");
    Ok(t.value().scalar_at(0).map_or(0, |s| s.as_i64()))
}

fn top_k(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("top_k", &["input", "k", "sorted", "index_type", "name"], 1)?;
    let x = tensor_of(arg(&s, 0), ctx)?;
    let k = match given(&s[1]) {
        Some(v) => int_of(v, ctx)?,
        None => 1,
    };
    let index_type = dtype_arg(s[3].as_ref(), ctx)?.unwrap_or(DType::I32);
    let parts = run(ctx, |e| {
        let mut parts = ops::top_k(e, &x, k)?;
        if index_type != DType::I32 {
            if let Some(i) = parts.get_mut(1) {
                *i = ops::cast(e, i, index_type)?;
            }
        }
        Ok(parts)
    })?;
    Ok(named("TopKV2", &["values", "indices"], parts))
}

/// TF's `GatherNd` error, framed as its eager kernel frames it.
fn gather_nd_err(dev: &str, message: &str) -> OpError {
    OpError::framed("GatherNd", "GatherNd", dev, message, None)
}

/// `tf.gather_nd(params, indices)`: each row of the last axis of `indices` names a slice
/// of `params` by its first coordinates; the rows become flat positions in `params`
/// reshaped to `[prod(leading dims), rest...]`, and one gather picks them.
fn gather_nd_op(e: &mut Eager, params: &ops::Tensor, idx: &NdArray) -> OpResult<ops::Tensor> {
    let dev = e.device().name();
    let Some((&m, lead)) = idx.shape().split_last() else {
        return Err(gather_nd_err(
            &dev,
            "indices must be at least a vector; saw: []",
        ));
    };
    let pshape = params.shape().to_vec();
    if m > pshape.len() {
        let msg = format!(
            "index innermost dimension length must be <= params rank; saw: {m} vs. {}",
            pshape.len()
        );
        return Err(gather_nd_err(&dev, &msg));
    }
    let (_, coords) = idx.to_i64_vec();
    let mut flat = Vec::with_capacity(lead.iter().product());
    for (row, c) in coords.chunks(m.max(1)).enumerate() {
        let c = if m == 0 { &[][..] } else { c };
        let mut at = 0i64;
        for (j, &v) in c.iter().enumerate() {
            if v < 0 || v >= pshape[j] as i64 {
                let shown: Vec<String> = c.iter().map(|v| v.to_string()).collect();
                let dims: Vec<String> = pshape.iter().map(|d| d.to_string()).collect();
                let msg = format!(
                    "indices[{row}] = [{}] does not index into param shape [{}], node name: \
                     GatherNd",
                    shown.join(", "),
                    dims.join(",")
                );
                return Err(gather_nd_err(&dev, &msg));
            }
            at = at * pshape[j] as i64 + v;
        }
        flat.push(at);
    }
    if m == 0 {
        flat = vec![0; lead.iter().product()];
    }
    let flat =
        NdArray::from_i64(lead, flat).map_err(|err| OpError::from_tensor("GatherNd", &dev, err))?;
    let mut shape: Vec<i64> = vec![-1];
    shape.extend(pshape[m..].iter().map(|&d| d as i64));
    let rows = ops::reshape(e, params, &shape)?;
    ops::gather(e, &rows, &ops::Tensor::new(flat), 0)
}

fn gather_nd(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("gather_nd", &["params", "indices", "batch_dims", "name"], 2)?;
    let params = tensor_of(arg(&s, 0), ctx)?;
    let indices = tensor_of(arg(&s, 1), ctx)?;
    if given(&s[2]).is_some_and(|v| !matches!(v, Value::Int(0))) {
        return Err(TfError::NotImplemented(
            "tf.gather_nd with batch_dims other than 0 is not supported here".into(),
        )
        .into());
    }
    trace::value_read(ctx, &indices, "tf.gather_nd");
    let idx = indices.value().clone();
    apply(ctx, |e| gather_nd_op(e, &params, &idx))
}

/// `tf.nn.top_k` (the same function as `tf.math.top_k`).
pub fn top_k_fn() -> Value {
    func(
        "top_k",
        "top_k(input, k=1, sorted=True, index_type=tf.int32, name=None)",
        top_k,
    )
}

/// Adds these functions to `tf` and `tf.math`.
pub fn register(tf: &NativeModule, math: &NativeModule) {
    tf.set(
        "boolean_mask",
        func(
            "boolean_mask",
            "boolean_mask(tensor, mask, axis=None, name='boolean_mask')",
            boolean_mask_fn,
        ),
    );
    tf.set(
        "unique",
        func("unique", "unique(x, out_idx=tf.int32, name=None)", unique),
    );
    tf.set(
        "unique_with_counts",
        func(
            "unique_with_counts",
            "unique_with_counts(x, out_idx=tf.int32, name=None)",
            unique_with_counts,
        ),
    );
    tf.set(
        "gather_nd",
        func(
            "gather_nd",
            "gather_nd(params, indices, batch_dims=0, name=None)",
            gather_nd,
        ),
    );
    math.set("top_k", top_k_fn());
}
