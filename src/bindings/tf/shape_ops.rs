//! The creation and shape functions of `tf`: `zeros`/`ones` (and `_like`), `fill`, `range`,
//! `shape`, `reshape` (with TF's InvalidArgumentError text), `transpose`, `expand_dims`,
//! `squeeze`, `concat`, `stack`, `identity`, `is_tensor`. Conversion and arithmetic are
//! the tensor part's; these functions only read arguments and wrap results.

use super::convert::{dtype_arg, tensor_err, tensor_value, to_array};
use super::ops::{arg, axes_arg, matmul_arrays, shape_dims};
use super::tensor::tensor_arg;
use super::{func, given};
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyResult, Value};
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
                .map(tensor_value)
                .map_err(tensor_err)
        },
    )
}

fn filled_like(name: &'static str, v: f64) -> Value {
    NativeFn::value(name, "f(input, dtype=None, name=None)", move |args, ctx| {
        let s = args.bind(name, &["input", "dtype", "name"], 1)?;
        let a = tensor_arg(arg(&s, 0), ctx)?;
        let dt = dtype_arg(s[1].as_ref(), ctx)?.unwrap_or(a.dtype());
        NdArray::full(a.shape(), v, dt)
            .map(tensor_value)
            .map_err(tensor_err)
    })
}

fn fill(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("fill", &["dims", "value", "name"], 2)?;
    let dims = shape_dims(arg(&s, 0), ctx)?;
    let v = to_array(arg(&s, 1), None, false, ctx)?;
    let x = v.scalar_at(0).map_or(0.0, |x| x.as_f64());
    NdArray::full(&dims, x, v.dtype())
        .map(tensor_value)
        .map_err(tensor_err)
}

fn range(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("range", &["start", "limit", "delta", "dtype", "name"], 1)?;
    let (start, limit) = match given(&s[1]) {
        Some(l) => (arg(&s, 0).clone(), l.clone()),
        None => (Value::Int(0), arg(&s, 0).clone()),
    };
    let delta = given(&s[2]).cloned().unwrap_or(Value::Int(1));
    let all_int = [&start, &limit, &delta]
        .iter()
        .all(|v| matches!(v, Value::Int(_)));
    let dt =
        dtype_arg(s[3].as_ref(), ctx)?.unwrap_or(if all_int { DType::I32 } else { DType::F32 });
    crate::tensor::build::arange(start.as_float()?, limit.as_float()?, delta.as_float()?, dt)
        .map(tensor_value)
        .map_err(tensor_err)
}

fn shape_of(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("shape", &["input", "out_type", "name"], 1)?;
    let a = tensor_arg(arg(&s, 0), ctx)?;
    let dims: Vec<i32> = a.shape().iter().map(|d| *d as i32).collect();
    let dt = dtype_arg(s[1].as_ref(), ctx)?.unwrap_or(DType::I32);
    NdArray::from_i32(&[dims.len()], dims)
        .map(|x| tensor_value(x.astype(dt)))
        .map_err(tensor_err)
}

fn reshape(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("reshape", &["tensor", "shape", "name"], 2)?;
    let a = tensor_arg(arg(&s, 0), ctx)?;
    let dims = axes_arg(s[1].as_ref(), ctx)?.unwrap_or_default();
    a.reshape(&dims).map(tensor_value).map_err(|_| {
        crate::lang::PyErr::new(
            "InvalidArgumentError",
            format!(
                "{{{{function_node __wrapped__Reshape_device_/job:localhost/replica:0/task:0/device:CPU:0}}}} \
                 Input to reshape is a tensor with {} values, but the requested shape has {} [Op:Reshape]",
                a.size(),
                dims.iter().product::<i64>()
            ),
        )
    })
}

fn transpose(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("transpose", &["a", "perm", "conjugate", "name"], 1)?;
    let a = tensor_arg(arg(&s, 0), ctx)?;
    let perm = axes_arg(s[1].as_ref(), ctx)?;
    a.transpose(perm.as_deref())
        .map(tensor_value)
        .map_err(tensor_err)
}

fn expand_dims(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("expand_dims", &["input", "axis", "name"], 2)?;
    let a = tensor_arg(arg(&s, 0), ctx)?;
    a.expand_dims(arg(&s, 1).as_int()?)
        .map(tensor_value)
        .map_err(tensor_err)
}

fn squeeze(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("squeeze", &["input", "axis", "name"], 1)?;
    let a = tensor_arg(arg(&s, 0), ctx)?;
    let axis = given(&s[1]).map(|v| v.as_int()).transpose()?;
    a.squeeze(axis).map(tensor_value).map_err(tensor_err)
}

fn arrays_of(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<NdArray>> {
    let items = match v.as_seq() {
        Some(i) => i,
        None => ctx.iterate(v)?,
    };
    items
        .iter()
        .map(|x| tensor_arg(x, ctx).map(|a| (*a).clone()))
        .collect()
}

fn concat(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("concat", &["values", "axis", "name"], 2)?;
    let arrays = arrays_of(arg(&s, 0), ctx)?;
    crate::tensor::build::concatenate(&arrays, arg(&s, 1).as_int()?)
        .map(tensor_value)
        .map_err(tensor_err)
}

fn stack(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("stack", &["values", "axis", "name"], 1)?;
    let arrays = arrays_of(arg(&s, 0), ctx)?;
    let axis = given(&s[1]).map_or(Ok(0), |v| v.as_int())?;
    crate::tensor::build::stack(&arrays, axis)
        .map(tensor_value)
        .map_err(tensor_err)
}

pub(crate) fn matmul(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("matmul", &["a", "b", "transpose_a", "transpose_b"], 2)?;
    let a = tensor_arg(arg(&s, 0), ctx)?;
    let b = tensor_arg(arg(&s, 1), ctx)?;
    let ta = given(&s[2]).map_or(Ok(false), |v| v.as_bool_strict())?;
    let tb = given(&s[3]).map_or(Ok(false), |v| v.as_bool_strict())?;
    matmul_arrays(&a, &b, ta, tb)
}

fn identity(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("identity", &["input", "name"], 1)?;
    Ok(tensor_value((*tensor_arg(arg(&s, 0), ctx)?).clone()))
}

fn is_tensor(args: &Args, _ctx: &mut dyn Ctx) -> R {
    let s = args.bind("is_tensor", &["x"], 1)?;
    let v = arg(&s, 0);
    Ok(Value::Bool(
        v.downcast::<super::tensor::Tensor>().is_some()
            || v.downcast::<super::variable::Variable>().is_some(),
    ))
}

/// Adds these functions to `tf`.
pub fn register(tf: &NativeModule) {
    for (n, f) in [
        ("fill", func("fill", "fill(dims, value, name=None)", fill)),
        (
            "range",
            func(
                "range",
                "range(start, limit=None, delta=1, dtype=None, name='range')",
                range,
            ),
        ),
        (
            "shape",
            func(
                "shape",
                "shape(input, out_type=tf.int32, name=None)",
                shape_of,
            ),
        ),
        (
            "reshape",
            func("reshape", "reshape(tensor, shape, name=None)", reshape),
        ),
        (
            "transpose",
            func(
                "transpose",
                "transpose(a, perm=None, conjugate=False, name='transpose')",
                transpose,
            ),
        ),
        (
            "expand_dims",
            func(
                "expand_dims",
                "expand_dims(input, axis, name=None)",
                expand_dims,
            ),
        ),
        (
            "squeeze",
            func("squeeze", "squeeze(input, axis=None, name=None)", squeeze),
        ),
        (
            "concat",
            func("concat", "concat(values, axis, name='concat')", concat),
        ),
        (
            "stack",
            func("stack", "stack(values, axis=0, name='stack')", stack),
        ),
        (
            "identity",
            func("identity", "identity(input, name=None)", identity),
        ),
        ("is_tensor", func("is_tensor", "is_tensor(x)", is_tensor)),
        (
            "Variable",
            func(
                "Variable",
                "Variable(initial_value=None, trainable=None, name=None, dtype=None, shape=None)",
                super::variable::variable_ctor,
            ),
        ),
        ("zeros", filled("zeros", 0.0)),
        ("ones", filled("ones", 1.0)),
        ("zeros_like", filled_like("zeros_like", 0.0)),
        ("ones_like", filled_like("ones_like", 1.0)),
    ] {
        tf.set(n, f);
    }
}
