//! The tensor functions of `tf`, `tf.math` and `tf.nn`: creation (`constant`, `zeros`,
//! `fill`, `range`), conversion (`convert_to_tensor`, `cast`), shape functions (`shape`,
//! `reshape`, `transpose`, `concat`, `stack`, ...), reductions with TF's dtype rules
//! (an int32 sum stays int32), element-wise math and the activations `relu`, `sigmoid`,
//! `softmax`. Each converts its arguments, calls the tensor part, and wraps the result.

use super::convert::{dtype_arg, tensor_err, tensor_value, to_array};
use super::tensor::{kernel_dtype_name, tensor_arg};
use super::{func, given, TfError};
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyResult, Value};
use crate::tensor::dtype::WeakScalar;
use crate::tensor::math::unary;
use crate::tensor::ops::{binary, Operand};
use crate::tensor::{BinaryOp, DType, NdArray, Reduction, UnaryFn};

type R = PyResult<Value>;

fn arg(s: &[Option<Value>], i: usize) -> &Value {
    s.get(i).and_then(|v| v.as_ref()).unwrap_or(&Value::None)
}

/// `a @ b` with TF's checks: same dtype, rank at least 2, optional transposes of the last
/// two axes.
pub fn matmul_arrays(a: &NdArray, b: &NdArray, ta: bool, tb: bool) -> R {
    if a.dtype() != b.dtype() {
        return Err(crate::lang::PyErr::new(
            "InvalidArgumentError",
            format!(
                "cannot compute MatMul as input #1(zero-based) was expected to be a {} tensor but \
                 is a {} tensor [Op:MatMul] name: ",
                kernel_dtype_name(a.dtype()),
                kernel_dtype_name(b.dtype())
            ),
        ));
    }
    if a.ndim() < 2 || b.ndim() < 2 {
        let dims = |x: &NdArray| {
            format!(
                "[{}]",
                x.shape()
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        };
        return Err(crate::lang::PyErr::new(
            "InvalidArgumentError",
            format!(
                "In[0] and In[1] has different ndims: {} vs. {} [Op:MatMul] name: ",
                dims(a),
                dims(b)
            ),
        ));
    }
    let swap = |x: &NdArray, t: bool| -> PyResult<NdArray> {
        if !t {
            return Ok(x.clone());
        }
        let n = x.ndim() as i64;
        let mut axes: Vec<i64> = (0..n).collect();
        axes.swap((n - 2) as usize, (n - 1) as usize);
        x.transpose(Some(&axes)).map_err(tensor_err)
    };
    let (a, b) = (swap(a, ta)?, swap(b, tb)?);
    crate::tensor::linalg::matmul(&a, &b)
        .map(tensor_value)
        .map_err(tensor_err)
}

fn constant(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("constant", &["value", "dtype", "shape", "name"], 1)?;
    let dtype = dtype_arg(s[1].as_ref(), ctx)?;
    let mut a = to_array(arg(&s, 0), dtype, false, ctx)?;
    if let Some(shape) = given(&s[2]) {
        let dims = shape_dims(shape, ctx)?;
        a = if a.size() == 1 {
            let v = a.scalar_at(0).map_or(0.0, |x| x.as_f64());
            NdArray::full(&dims, v, a.dtype()).map_err(tensor_err)?
        } else {
            let d: Vec<i64> = dims.iter().map(|x| *x as i64).collect();
            a.reshape(&d).map_err(tensor_err)?
        };
    }
    super::config::initialize(ctx);
    Ok(tensor_value(a))
}

fn convert_to_tensor(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind(
        "convert_to_tensor",
        &["value", "dtype", "dtype_hint", "name"],
        1,
    )?;
    let dtype = dtype_arg(s[1].as_ref(), ctx)?;
    let hint = dtype_arg(s[2].as_ref(), ctx)?;
    let v = arg(&s, 0);
    if v.downcast::<super::tensor::Tensor>().is_some() && dtype.is_none() {
        return Ok(v.clone());
    }
    let a = to_array(v, dtype.or(hint), dtype.is_some(), ctx)?;
    Ok(tensor_value(a))
}

fn cast(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("cast", &["x", "dtype", "name"], 2)?;
    let a = tensor_arg(arg(&s, 0), ctx)?;
    let d = dtype_arg(s[1].as_ref(), ctx)?.unwrap_or(a.dtype());
    Ok(tensor_value(a.astype(d)))
}

/// A shape argument: a list/tuple of ints, a TensorShape, or an int tensor.
pub fn shape_dims(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<usize>> {
    if let Value::Int(n) = v {
        return usize::try_from(*n)
            .map(|n| vec![n])
            .map_err(|_| TfError::Value(format!("Dimension {n} must be >= 0")).into());
    }
    let shape = super::shape::TensorShape::from_value(&list_of_ints(v, ctx)?, ctx)?;
    match shape.dims {
        Some(d) if d.iter().all(|x| x.is_some()) => {
            Ok(d.into_iter().map(|x| x.unwrap_or(0)).collect())
        }
        _ => Err(TfError::Value("a fully defined shape is needed here".into()).into()),
    }
}

/// A tensor of ints as a Python list; other values unchanged.
fn list_of_ints(v: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    if let Some(a) = super::convert::held_array(v) {
        let (_, vals) = a.to_i64_vec();
        return Ok(Value::list(vals.into_iter().map(Value::Int).collect()));
    }
    Ok(v.clone())
}

/// An `axis` argument: None, an int, or a list/tuple/tensor of ints.
pub fn axes_arg(v: Option<&Value>, ctx: &mut dyn Ctx) -> PyResult<Option<Vec<i64>>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    match list_of_ints(v, ctx)? {
        Value::Int(i) => Ok(Some(vec![i])),
        other => match other.as_seq() {
            Some(items) => Ok(Some(
                items.iter().map(|x| x.as_int()).collect::<PyResult<_>>()?,
            )),
            None => Ok(Some(vec![other.as_int()?])),
        },
    }
}

fn reduction(name: &'static str, r: Reduction) -> Value {
    NativeFn::value(
        name,
        "reduce(input_tensor, axis=None, keepdims=False, name=None)",
        move |args, ctx| {
            let s = args.bind(name, &["input_tensor", "axis", "keepdims", "name"], 1)?;
            let a = tensor_arg(arg(&s, 0), ctx)?;
            let axes = axes_arg(s[1].as_ref(), ctx)?;
            let keep = given(&s[2]).map_or(Ok(false), |v| v.as_bool_strict())?;
            let out = a
                .reduce(r, axes.as_deref(), keep, 0.0)
                .map_err(tensor_err)?;
            // TF keeps the input's dtype (an int32 sum or mean stays int32), unlike numpy.
            let out = match r {
                Reduction::Any | Reduction::All => out,
                _ => out.astype(a.dtype()),
            };
            Ok(tensor_value(out))
        },
    )
}

fn arg_reduction(name: &'static str, r: Reduction) -> Value {
    NativeFn::value(
        name,
        "arg(input, axis=None, output_type=tf.int64, name=None)",
        move |args, ctx| {
            let s = args.bind(name, &["input", "axis", "output_type", "name"], 1)?;
            let a = tensor_arg(arg(&s, 0), ctx)?;
            // TF reduces over axis 0 when no axis is given.
            let axis = axes_arg(s[1].as_ref(), ctx)?.unwrap_or(vec![0]);
            let out = a.reduce(r, Some(&axis), false, 0.0).map_err(tensor_err)?;
            let dt = dtype_arg(s[2].as_ref(), ctx)?.unwrap_or(DType::I64);
            Ok(tensor_value(out.astype(dt)))
        },
    )
}

fn elementwise(name: &'static str, f: UnaryFn) -> Value {
    NativeFn::value(name, "f(x, name=None)", move |args, ctx| {
        let s = args.bind(name, &["x", "name"], 1)?;
        let a = tensor_arg(arg(&s, 0), ctx)?;
        let out = unary(&a, f).map_err(tensor_err)?;
        // TF keeps float32 math in float32; integer inputs to float functions are errors
        // in TF, so cast back only where the input was a float.
        Ok(tensor_value(if a.dtype().is_float() {
            out.astype(a.dtype())
        } else {
            out
        }))
    })
}

fn pairwise(name: &'static str, op: BinaryOp) -> Value {
    NativeFn::value(name, "f(x, y, name=None)", move |args, ctx| {
        let s = args.bind(name, &["x", "y", "name"], 2)?;
        let a = tensor_arg(arg(&s, 0), ctx)?;
        super::tensor::tensor_binop(&a, op, arg(&s, 1), false, ctx)?.ok_or_else(|| {
            TfError::Type(format!(
                "{name}: unsupported operand {}",
                arg(&s, 1).type_name()
            ))
            .into()
        })
    })
}

fn weak(x: f64) -> Operand<'static> {
    Operand::Weak(WeakScalar::Float(x))
}

fn relu_array(a: &NdArray) -> PyResult<NdArray> {
    let zero = if a.dtype().is_float() {
        weak(0.0)
    } else {
        Operand::Weak(WeakScalar::Int(0))
    };
    binary(Operand::Arr(a), zero, BinaryOp::Maximum).map_err(tensor_err)
}

fn sigmoid_array(a: &NdArray) -> PyResult<NdArray> {
    let neg = unary(a, UnaryFn::Neg).map_err(tensor_err)?;
    let e = unary(&neg, UnaryFn::Exp)
        .map_err(tensor_err)?
        .astype(a.dtype());
    let d = binary(Operand::Arr(&e), weak(1.0), BinaryOp::Add).map_err(tensor_err)?;
    binary(weak(1.0), Operand::Arr(&d), BinaryOp::Div).map_err(tensor_err)
}

/// Softmax along `axis` (log-softmax with `log`), shifted by the maximum for stability.
pub fn softmax_array(a: &NdArray, axis: i64, log: bool) -> PyResult<NdArray> {
    let m = a
        .reduce(Reduction::Max, Some(&[axis]), true, 0.0)
        .map_err(tensor_err)?;
    let z = binary(Operand::Arr(a), Operand::Arr(&m), BinaryOp::Sub).map_err(tensor_err)?;
    let e = unary(&z, UnaryFn::Exp)
        .map_err(tensor_err)?
        .astype(a.dtype());
    let s = e
        .reduce(Reduction::Sum, Some(&[axis]), true, 0.0)
        .map_err(tensor_err)?
        .astype(a.dtype());
    if log {
        let ls = unary(&s, UnaryFn::Log)
            .map_err(tensor_err)?
            .astype(a.dtype());
        binary(Operand::Arr(&z), Operand::Arr(&ls), BinaryOp::Sub).map_err(tensor_err)
    } else {
        binary(Operand::Arr(&e), Operand::Arr(&s), BinaryOp::Div).map_err(tensor_err)
    }
}

fn activation(name: &'static str, f: fn(&NdArray) -> PyResult<NdArray>) -> Value {
    NativeFn::value(name, "f(features, name=None)", move |args, ctx| {
        let s = args.bind(name, &["x", "name"], 1)?;
        let a = tensor_arg(arg(&s, 0), ctx)?;
        f(&a).map(tensor_value)
    })
}

fn softmax_fn(name: &'static str, log: bool) -> Value {
    NativeFn::value(
        name,
        "softmax(logits, axis=None, name=None)",
        move |args, ctx| {
            let s = args.bind(name, &["logits", "axis", "name"], 1)?;
            let a = tensor_arg(arg(&s, 0), ctx)?;
            let axis = given(&s[1]).map_or(Ok(-1), |v| v.as_int())?;
            softmax_array(&a, axis, log).map(tensor_value)
        },
    )
}

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

fn matmul(args: &Args, ctx: &mut dyn Ctx) -> R {
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

/// The shared math functions, by name, for `tf`, `tf.math` and `tf.nn` to pick from.
fn math_fns() -> Vec<(&'static str, Value)> {
    let mut v: Vec<(&'static str, Value)> = vec![
        ("reduce_sum", reduction("reduce_sum", Reduction::Sum)),
        ("reduce_mean", reduction("reduce_mean", Reduction::Mean)),
        ("reduce_max", reduction("reduce_max", Reduction::Max)),
        ("reduce_min", reduction("reduce_min", Reduction::Min)),
        ("reduce_prod", reduction("reduce_prod", Reduction::Prod)),
        ("reduce_any", reduction("reduce_any", Reduction::Any)),
        ("reduce_all", reduction("reduce_all", Reduction::All)),
        ("argmax", arg_reduction("argmax", Reduction::ArgMax)),
        ("argmin", arg_reduction("argmin", Reduction::ArgMin)),
        ("add", pairwise("add", BinaryOp::Add)),
        ("subtract", pairwise("subtract", BinaryOp::Sub)),
        ("multiply", pairwise("multiply", BinaryOp::Mul)),
        ("divide", pairwise("divide", BinaryOp::Div)),
        ("pow", pairwise("pow", BinaryOp::Pow)),
        ("maximum", pairwise("maximum", BinaryOp::Maximum)),
        ("minimum", pairwise("minimum", BinaryOp::Minimum)),
        ("equal", pairwise("equal", BinaryOp::Eq)),
        ("not_equal", pairwise("not_equal", BinaryOp::Ne)),
        ("less", pairwise("less", BinaryOp::Lt)),
        ("less_equal", pairwise("less_equal", BinaryOp::Le)),
        ("greater", pairwise("greater", BinaryOp::Gt)),
        ("greater_equal", pairwise("greater_equal", BinaryOp::Ge)),
    ];
    for (n, f) in [
        ("abs", UnaryFn::Abs),
        ("sqrt", UnaryFn::Sqrt),
        ("exp", UnaryFn::Exp),
        ("log", UnaryFn::Log),
        ("square", UnaryFn::Square),
        ("negative", UnaryFn::Neg),
        ("tanh", UnaryFn::Tanh),
        ("sin", UnaryFn::Sin),
        ("cos", UnaryFn::Cos),
        ("floor", UnaryFn::Floor),
        ("ceil", UnaryFn::Ceil),
        ("sign", UnaryFn::Sign),
        ("round", UnaryFn::Round(0)),
    ] {
        v.push((n, elementwise(n, f)));
    }
    v.push(("sigmoid", activation("sigmoid", sigmoid_array)));
    v
}

/// Adds the tensor functions to `tf` and builds `tf.math` and `tf.nn`.
pub fn register(tf: &NativeModule) {
    let math = NativeModule::new("tensorflow.math", "Element-wise math and reductions.");
    for (n, f) in math_fns() {
        math.set(n, f.clone());
        tf.set(n, f);
    }
    math.set("softmax", softmax_fn("softmax", false));
    let nn = NativeModule::new("tensorflow.nn", "Neural-network functions.")
        .with("relu", activation("relu", relu_array))
        .with("sigmoid", activation("sigmoid", sigmoid_array))
        .with("softmax", softmax_fn("softmax", false))
        .with("log_softmax", softmax_fn("log_softmax", true))
        .with("tanh", elementwise("tanh", UnaryFn::Tanh));
    tf.set("math", math.into_value());
    tf.set("nn", nn.into_value());
    for (n, f) in [
        (
            "constant",
            func(
                "constant",
                "constant(value, dtype=None, shape=None, name='Const')",
                constant,
            ),
        ),
        (
            "convert_to_tensor",
            func(
                "convert_to_tensor",
                "convert_to_tensor(value, dtype=None, dtype_hint=None, name=None)",
                convert_to_tensor,
            ),
        ),
        ("cast", func("cast", "cast(x, dtype, name=None)", cast)),
        (
            "matmul",
            func(
                "matmul",
                "matmul(a, b, transpose_a=False, transpose_b=False)",
                matmul,
            ),
        ),
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
