//! The creation, shape and selection functions of `tf`: `zeros`/`ones` (and `_like`),
//! `fill`, `range`, `linspace`, `shape`, `size`, `reshape`, `tile`, `transpose`, `expand_dims`, `squeeze`,
//! `broadcast_to`, `concat`, `stack`, `unstack`, `split`, `slice`, `strided_slice`,
//! `gather`, `one_hot`, `sort`, `argsort`, `where`, `identity`, `stop_gradient`, `is_tensor`. Constants are
//! made here (as TF makes them, outside any tape); everything computed from a tensor runs
//! the op library through the session's execution context (`eager.rs`).

use super::convert::{dtype_arg, matching, tensor_of, to_array};
use super::eager::{apply, apply_many};
use super::ops::{arg, axes_arg, shape_dims};
use super::{given, named, op, TfError};
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyResult, Value};
use crate::ops::{self, SliceItem, SplitSizes};
use crate::tensor::{DType, NdArray};

type R = PyResult<Value>;

fn filled(name: &'static str, v: f64) -> Value {
    NativeFn::value(
        name,
        "f(shape, dtype=tf.float32, name=None)",
        move |args, ctx| {
            let s = args.bind(name, &["shape", "dtype", "name"], 1)?;
            let dims = shape_dims(arg(&s, 0), ctx)?;
            let dt = dtype_arg(s[1].as_ref(), ctx)?.unwrap_or(DType::F32);
            NdArray::full(&dims, v, dt)
                .map(super::convert::tensor_value)
                .map_err(super::convert::tensor_err)
        },
    )
}

fn filled_like(name: &'static str, ones: bool) -> Value {
    NativeFn::value(name, "f(input, dtype=None, name=None)", move |args, ctx| {
        let s = args.bind(name, &["input", "dtype", "name"], 1)?;
        let t = tensor_of(arg(&s, 0), ctx)?;
        let dt = dtype_arg(s[1].as_ref(), ctx)?.unwrap_or(t.dtype());
        apply(ctx, |e| {
            let like = if ones {
                ops::ones_like(e, &t)?
            } else {
                ops::zeros_like(e, &t)?
            };
            if dt == t.dtype() {
                Ok(like)
            } else {
                ops::cast(e, &like, dt)
            }
        })
    })
}

fn fill(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("fill", &["dims", "value", "name"], 2)?;
    let dims = shape_dims(arg(&s, 0), ctx)?;
    let v = to_array(arg(&s, 1), None, false, ctx)?;
    let x = v.scalar_at(0).map_or(0.0, |x| x.as_f64());
    NdArray::full(&dims, x, v.dtype())
        .map(super::convert::tensor_value)
        .map_err(super::convert::tensor_err)
}

fn range(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("range", &["start", "limit", "delta", "dtype", "name"], 1)?;
    let (start, limit) = match given(&s[1]) {
        Some(l) => (arg(&s, 0).clone(), l.clone()),
        None => (Value::Int(0), arg(&s, 0).clone()),
    };
    let delta = given(&s[2]).cloned().unwrap_or(Value::Int(1));
    let (start, t0) = range_bound("start", &start, ctx)?;
    let (limit, t1) = range_bound("limit", &limit, ctx)?;
    let (delta, t2) = range_bound("delta", &delta, ctx)?;
    // TF infers the widest of the bounds' types along int32 < int64 < float32 < float64,
    // a Python int counting as int32 and a Python float as float32.
    let widest = [t0, t1, t2]
        .into_iter()
        .max_by_key(|d| match d {
            DType::I32 => 0,
            DType::I64 => 1,
            DType::F32 => 2,
            _ => 3,
        })
        .unwrap_or(DType::I32);
    let dt = dtype_arg(s[3].as_ref(), ctx)?.unwrap_or(widest);
    crate::tensor::build::arange(start, limit, delta, dt)
        .map(super::convert::tensor_value)
        .map_err(super::convert::tensor_err)
}

/// One bound of `tf.range`: its value and the dtype it asks for. A tensor bound must be a
/// scalar, as TF's Range kernel requires.
fn range_bound(which: &str, v: &Value, ctx: &mut dyn Ctx) -> PyResult<(f64, DType)> {
    match v {
        Value::Int(_) | Value::Bool(_) => Ok((v.as_float()?, DType::I32)),
        Value::Float(f) => Ok((*f, DType::F32)),
        _ => {
            let a = to_array(v, None, false, ctx)?;
            match (a.ndim(), a.scalar_at(0)) {
                (0, Some(x)) => Ok((x.as_f64(), a.dtype())),
                _ => Err(super::eager::op_err(crate::ops::OpError::kernel(
                    "Range",
                    "CPU:0",
                    &format!(
                        "{which} must be a scalar, not shape {}",
                        crate::ops::dims(a.shape())
                    ),
                ))),
            }
        }
    }
}

fn shape_of(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("shape", &["input", "out_type", "name"], 1)?;
    if let Some(t) = arg(&s, 0).downcast::<super::tensor::Tensor>() {
        super::function::trace::shape_read(ctx, &t.tensor);
    }
    let a = super::convert::held_array(arg(&s, 0)).map_or_else(
        || to_array(arg(&s, 0), None, false, ctx).map(std::sync::Arc::new),
        Ok,
    )?;
    let dims: Vec<i32> = a.shape().iter().map(|d| *d as i32).collect();
    let dt = dtype_arg(s[1].as_ref(), ctx)?.unwrap_or(DType::I32);
    NdArray::from_i32(&[dims.len()], dims)
        .map(|x| super::convert::tensor_value(x.astype(dt)))
        .map_err(super::convert::tensor_err)
}

fn reshape(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("reshape", &["tensor", "shape", "name"], 2)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let dims = axes_arg(s[1].as_ref(), ctx)?.unwrap_or_default();
    apply(ctx, |e| {
        e.execute1(
            ops::Op::Shape(ops::ShapeOp::Reshape { shape: dims }),
            std::slice::from_ref(&t),
        )
    })
}

fn transpose(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("transpose", &["a", "perm", "conjugate", "name"], 1)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let perm =
        axes_arg(s[1].as_ref(), ctx)?.unwrap_or_else(|| (0..t.ndim() as i64).rev().collect());
    apply(ctx, |e| ops::transpose(e, &t, &perm))
}

fn expand_dims(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("expand_dims", &["input", "axis", "name"], 2)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let axis = arg(&s, 1).as_int()?;
    apply(ctx, |e| ops::expand_dims(e, &t, axis))
}

fn squeeze(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("squeeze", &["input", "axis", "name"], 1)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let axes = axes_arg(s[1].as_ref(), ctx)?.unwrap_or_default();
    apply(ctx, |e| ops::squeeze(e, &t, &axes))
}

fn broadcast_to(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("broadcast_to", &["input", "shape", "name"], 2)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let dims = shape_dims(arg(&s, 1), ctx)?;
    apply(ctx, |e| {
        e.execute1(
            ops::Op::Shape(ops::ShapeOp::BroadcastTo { shape: dims }),
            std::slice::from_ref(&t),
        )
    })
}

/// The tensors of a list argument, converted as one op's operands.
fn tensors_of(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<ops::Tensor>> {
    let items = match v.as_seq() {
        Some(i) => i,
        None => ctx.iterate(v)?,
    };
    let refs: Vec<&Value> = items.iter().collect();
    matching(&refs, ctx)
}

fn concat(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("concat", &["values", "axis", "name"], 2)?;
    let ts = tensors_of(arg(&s, 0), ctx)?;
    let axis = arg(&s, 1).as_int()?;
    apply(ctx, |e| ops::concat(e, &ts, axis))
}

fn stack(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("stack", &["values", "axis", "name"], 1)?;
    let ts = tensors_of(arg(&s, 0), ctx)?;
    let axis = given(&s[1]).map_or(Ok(0), |v| v.as_int())?;
    apply(ctx, |e| ops::stack(e, &ts, axis))
}

fn unstack(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("unstack", &["value", "num", "axis", "name"], 1)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let axis = given(&s[2]).map_or(Ok(0), |v| v.as_int())?;
    apply_many(ctx, |e| ops::unstack(e, &t, axis))
}

fn split(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind(
        "split",
        &["value", "num_or_size_splits", "axis", "num", "name"],
        2,
    )?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let sizes = match arg(&s, 1) {
        Value::Int(n) => SplitSizes::Even(usize::try_from(*n).map_err(|_| {
            TfError::Value(format!("num_or_size_splits must be positive, got {n}"))
        })?),
        other => SplitSizes::Sizes(axes_arg(Some(other), ctx)?.unwrap_or_default()),
    };
    let axis = given(&s[2]).map_or(Ok(0), |v| v.as_int())?;
    apply_many(ctx, |e| ops::split(e, &t, axis, sizes))
}

fn slice(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("slice", &["input_", "begin", "size", "name"], 3)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let begin = axes_arg(s[1].as_ref(), ctx)?.unwrap_or_default();
    let size = axes_arg(s[2].as_ref(), ctx)?.unwrap_or_default();
    apply(ctx, |e| ops::slice(e, &t, &begin, &size))
}

fn strided_slice(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind(
        "strided_slice",
        &["input_", "begin", "end", "strides", "name"],
        3,
    )?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let begin = axes_arg(s[1].as_ref(), ctx)?.unwrap_or_default();
    let end = axes_arg(s[2].as_ref(), ctx)?.unwrap_or_default();
    let strides = axes_arg(s[3].as_ref(), ctx)?.unwrap_or_else(|| vec![1; begin.len()]);
    if begin.len() != end.len() || begin.len() != strides.len() {
        return Err(
            TfError::Value("begin, end and strides must have the same length".into()).into(),
        );
    }
    let spec: Vec<SliceItem> = (0..begin.len())
        .map(|i| SliceItem::Range(Some(begin[i]), Some(end[i]), Some(strides[i])))
        .collect();
    apply(ctx, |e| ops::strided_slice(e, &t, &spec))
}

fn gather(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind(
        "gather",
        &[
            "params",
            "indices",
            "validate_indices",
            "axis",
            "batch_dims",
            "name",
        ],
        2,
    )?;
    let params = tensor_of(arg(&s, 0), ctx)?;
    let indices = tensor_of(arg(&s, 1), ctx)?;
    let axis = given(&s[3]).map_or(Ok(0), |v| v.as_int())?;
    if given(&s[4]).is_some_and(|v| !matches!(v, Value::Int(0))) {
        return Err(TfError::NotImplemented(
            "tf.gather with batch_dims other than 0 is not supported here".into(),
        )
        .into());
    }
    apply(ctx, |e| ops::gather(e, &params, &indices, axis))
}

fn one_hot(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind(
        "one_hot",
        &[
            "indices",
            "depth",
            "on_value",
            "off_value",
            "axis",
            "dtype",
            "name",
        ],
        2,
    )?;
    let indices = tensor_of(arg(&s, 0), ctx)?;
    let depth = usize::try_from(arg(&s, 1).as_int()?).unwrap_or(0);
    let on = given(&s[2]).map_or(Ok(1.0), |v| v.as_float())?;
    let off = given(&s[3]).map_or(Ok(0.0), |v| v.as_float())?;
    let axis = given(&s[4]).map_or(Ok(-1), |v| v.as_int())?;
    let dtype = dtype_arg(s[5].as_ref(), ctx)?.unwrap_or(DType::F32);
    apply(ctx, |e| {
        ops::one_hot(e, &indices, depth, on, off, axis, dtype)
    })
}

fn where_(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("where", &["condition", "x", "y", "name"], 1)?;
    let c = tensor_of(arg(&s, 0), ctx)?;
    match (given(&s[1]), given(&s[2])) {
        (Some(x), Some(y)) => {
            let t = matching(&[x, y], ctx)?;
            apply(ctx, |e| ops::select(e, &c, &t[0], &t[1]))
        }
        (None, None) => apply(ctx, |e| {
            e.execute1(
                ops::Op::Index(ops::IndexOp::Where),
                std::slice::from_ref(&c),
            )
        }),
        _ => Err(TfError::Value("x and y must both be non-None or both be None.".into()).into()),
    }
}

fn identity(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("identity", &["input", "name"], 1)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    apply(ctx, |e| ops::identity(e, &t))
}

fn stop_gradient(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("stop_gradient", &["input", "name"], 1)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    apply(ctx, |e| ops::stop_gradient(e, &t))
}

fn size(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("size", &["input", "out_type", "name"], 1)?;
    if let Some(t) = arg(&s, 0).downcast::<super::tensor::Tensor>() {
        super::function::trace::shape_read(ctx, &t.tensor);
    }
    let a = super::convert::held_array(arg(&s, 0)).map_or_else(
        || to_array(arg(&s, 0), None, false, ctx).map(std::sync::Arc::new),
        Ok,
    )?;
    let dt = dtype_arg(s[1].as_ref(), ctx)?.unwrap_or(DType::I32);
    NdArray::full(&[], a.size() as f64, dt)
        .map(super::convert::tensor_value)
        .map_err(super::convert::tensor_err)
}

fn tile(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("tile", &["input", "multiples", "name"], 2)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let multiples = axes_arg(s[1].as_ref(), ctx)?.unwrap_or_default();
    apply(ctx, |e| ops::tile(e, &t, &multiples))
}

/// `tf.linspace`: a constant, like `range`. Integer ends give float64, as TF casts them.
fn linspace(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("linspace", &["start", "stop", "num", "name", "axis"], 3)?;
    let start = to_array(arg(&s, 0), None, false, ctx)?;
    let dt = if start.dtype().is_float() {
        start.dtype()
    } else {
        DType::F64
    };
    let stop = to_array(arg(&s, 1), Some(start.dtype()), false, ctx)?;
    let num = arg(&s, 2).as_int()?;
    let Ok(count) = usize::try_from(num) else {
        return Err(super::eager::op_err(ops::OpError::framed(
            "Range",
            "Range",
            "CPU:0",
            &format!("Requires start <= limit when delta > 0: 1/{num}"),
            Some(""),
        )));
    };
    let first = |a: &NdArray| a.scalar_at(0).map_or(0.0, |x| x.as_f64());
    crate::tensor::build::linspace(first(&start), first(&stop), count, true)
        .map(|a| super::convert::tensor_value(a.astype(dt)))
        .map_err(super::convert::tensor_err)
}

/// The order `tf.argsort` gives along `axis`: stable, ties keeping their order in both
/// directions (a descending sort is an ascending one of the negated values).
fn sort_order(
    name: &'static str,
    params: &[&str],
    args: &Args,
    ctx: &mut dyn Ctx,
) -> PyResult<(ops::Tensor, NdArray, i64)> {
    let s = args.bind(name, params, 1)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let axis = given(&s[1]).map_or(Ok(-1), |v| v.as_int())?;
    let direction = given(&s[2]).map_or(Ok("ASCENDING"), |v| v.as_str())?;
    let descending = match direction {
        "ASCENDING" => false,
        "DESCENDING" => true,
        other => {
            return Err(TfError::Value(format!(
                "Argument `direction` should be one of ASCENDING, DESCENDING. Received: \
                 direction={other}"
            ))
            .into())
        }
    };
    // The order is read from the values: a trace cannot replay it for other inputs.
    super::function::trace::value_read(ctx, &t, &format!("tf.{name}"));
    let a = t.value();
    let keys = if descending {
        let neg: Vec<f64> = a.to_f64_array().iter().map(|v| -v).collect();
        NdArray::from_f64(a.shape(), neg).map_err(super::convert::tensor_err)?
    } else {
        a.clone()
    };
    let order = crate::tensor::build::sort(&keys, axis, true)
        .map_err(super::convert::tensor_err)?
        .astype(DType::I32);
    Ok((t, order, axis))
}

fn argsort(args: &Args, ctx: &mut dyn Ctx) -> R {
    let (_, order, _) = sort_order(
        "argsort",
        &["values", "axis", "direction", "stable", "name"],
        args,
        ctx,
    )?;
    Ok(super::convert::tensor_value(order))
}

/// `tf.sort`: the values picked in argsort's order by a one-hot product summed over the
/// lane, so the tape differentiates it (each value's gradient goes back to its place).
fn sort(args: &Args, ctx: &mut dyn Ctx) -> R {
    let (t, order, axis) = sort_order("sort", &["values", "axis", "direction", "name"], args, ctx)?;
    let nd = t.ndim() as i64;
    let k = if axis < 0 { axis + nd } else { axis };
    let mut perm: Vec<i64> = (0..nd).filter(|&d| d != k).collect();
    perm.push(k);
    let mut back = vec![0i64; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        back[p as usize] = i as i64;
    }
    let n = order.shape().get(k as usize).copied().unwrap_or(0);
    let picks = order
        .transpose(Some(&perm))
        .map_err(super::convert::tensor_err)?;
    apply(ctx, |e| {
        let lanes = ops::transpose(e, &t, &perm)?;
        let rows = ops::expand_dims(e, &lanes, -2)?;
        let hot = ops::one_hot(e, &ops::Tensor::new(picks), n, 1.0, 0.0, -1, t.dtype())?;
        let picked = ops::mul(e, &hot, &rows)?;
        let sorted = ops::reduce_sum(e, &picked, Some(vec![-1]), false)?;
        ops::transpose(e, &sorted, &back)
    })
}

fn is_tensor(args: &Args, _ctx: &mut dyn Ctx) -> R {
    let s = args.bind("is_tensor", &["x"], 1)?;
    Ok(Value::Bool(super::tensor::is_tensor(arg(&s, 0))))
}

/// Adds these functions to `tf`.
pub fn register(tf: &NativeModule) {
    for (n, f) in [
        op("fill(dims, value, name=None)", fill),
        op("range(start, limit=None, delta=1, dtype=None, name='range')", range),
        op("shape(input, out_type=tf.int32, name=None)", shape_of),
        op("reshape(tensor, shape, name=None)", reshape),
        op("transpose(a, perm=None, conjugate=False, name='transpose')", transpose),
        op("expand_dims(input, axis, name=None)", expand_dims),
        op("squeeze(input, axis=None, name=None)", squeeze),
        op("broadcast_to(input, shape, name=None)", broadcast_to),
        op("concat(values, axis, name='concat')", concat),
        op("stack(values, axis=0, name='stack')", stack),
        op("unstack(value, num=None, axis=0, name='unstack')", unstack),
        op("split(value, num_or_size_splits, axis=0, num=None, name='split')", split),
        op("slice(input_, begin, size, name=None)", slice),
        op("strided_slice(input_, begin, end, strides=None, name=None)", strided_slice),
        op("gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None)", gather),
        op("one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None)", one_hot),
        op("where(condition, x=None, y=None, name=None)", where_),
        op("identity(input, name=None)", identity),
        op("stop_gradient(input, name=None)", stop_gradient),
        op("is_tensor(x)", is_tensor),
        op("sort(values, axis=-1, direction='ASCENDING', name=None)", sort),
        op("argsort(values, axis=-1, direction='ASCENDING', stable=False, name=None)", argsort),
        op("size(input, out_type=tf.int32, name=None)", size),
        op("tile(input, multiples, name=None)", tile),
        op("linspace(start, stop, num, name=None, axis=0)", linspace),
        named("zeros", |n| filled(n, 0.0)),
        named("ones", |n| filled(n, 1.0)),
        named("zeros_like", |n| filled_like(n, false)),
        named("ones_like", |n| filled_like(n, true)),
    ] {
        tf.set(n, f);
    }
}
