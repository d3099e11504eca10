//! The tensor functions of `tf`, `tf.math` and `tf.nn`: creation (`constant`, `zeros`,
//! `fill`, `range`), conversion (`convert_to_tensor`, `cast`), shape functions (`shape`,
//! `reshape`, `transpose`, `concat`, `stack`, ...), reductions with TF's dtype rules
//! (an int32 sum stays int32), element-wise math and the activations `relu`, `sigmoid`,
//! `softmax`. Each converts its arguments, calls the tensor part, and wraps the result.

use super::convert::{dtype_arg, tensor_err, tensor_value, to_array};
use super::shape_ops::matmul;
use super::tensor::{kernel_dtype_name, tensor_arg};
use super::{func, given, TfError};
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyResult, Value};
use crate::tensor::dtype::WeakScalar;
use crate::tensor::math::unary;
use crate::tensor::ops::{binary, Operand};
use crate::tensor::{BinaryOp, DType, NdArray, Reduction, UnaryFn};

type R = PyResult<Value>;

pub(crate) fn arg(s: &[Option<Value>], i: usize) -> &Value {
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
    super::shape_ops::register(tf);
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
        (
            "Variable",
            func(
                "Variable",
                "Variable(initial_value=None, trainable=None, name=None, dtype=None, shape=None)",
                super::variable::variable_ctor,
            ),
        ),
    ] {
        tf.set(n, f);
    }
}
