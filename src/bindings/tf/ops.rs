//! The math functions of `tf` and `tf.math`: creation and conversion (`constant`,
//! `convert_to_tensor`, `cast`), element-wise math, arithmetic and comparisons,
//! reductions (TF keeps the input's dtype: an int32 mean stays int32), `cumsum`, `matmul`, `add_n`,
//! `clip_by_value`. Each reads its arguments, converts them by TF's rules (`convert.rs`)
//! and runs the op library through the session's execution context (`eager.rs`), where
//! gradient tapes record it. Nothing is computed here.

use super::convert::{dtype_arg, matching, tensor_of, to_array};
use super::eager::apply;
use super::tensor::true_divide;
use super::{given, named, op, TfError};
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyResult, Value};
use crate::ops::{self, Activation, ArgReduce, Binary, Op, ReduceKind, Unary};
use crate::tensor::{DType, NdArray};

type R = PyResult<Value>;

pub(crate) use crate::bindings::common::arg;

/// An optional boolean argument.
pub(crate) fn flag(s: &[Option<Value>], i: usize, default: bool) -> PyResult<bool> {
    s.get(i)
        .and_then(given)
        .map_or(Ok(default), |v| v.as_bool_strict())
}

fn constant(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("constant", &["value", "dtype", "shape", "name"], 1)?;
    let dtype = dtype_arg(s[1].as_ref(), ctx)?;
    let mut a = to_array(arg(&s, 0), dtype, false, ctx)?;
    if let Some(shape) = given(&s[2]) {
        let dims = shape_dims(shape, ctx)?;
        a = if a.size() == 1 {
            let v = a.scalar_at(0).map_or(0.0, |x| x.as_f64());
            NdArray::full(&dims, v, a.dtype()).map_err(super::convert::tensor_err)?
        } else {
            let d: Vec<i64> = dims.iter().map(|x| *x as i64).collect();
            a.reshape(&d).map_err(super::convert::tensor_err)?
        };
    }
    super::config::initialize(ctx);
    Ok(super::convert::tensor_value(a))
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
    if super::tensor::is_tensor(v) && dtype.is_none() {
        return Ok(super::eager::wrap(tensor_of(v, ctx)?));
    }
    let a = to_array(v, dtype.or(hint), dtype.is_some(), ctx)?;
    Ok(super::convert::tensor_value(a))
}

fn cast(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("cast", &["x", "dtype", "name"], 2)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let d = dtype_arg(s[1].as_ref(), ctx)?.unwrap_or(t.dtype());
    if d == t.dtype() {
        return Ok(super::eager::wrap(t));
    }
    apply(ctx, |e| ops::cast(e, &t, d))
}

/// A shape argument: a list/tuple of ints, a TensorShape, or an int tensor.
pub fn shape_dims(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<usize>> {
    if let Value::Int(n) = v {
        return usize::try_from(*n)
            .map(|n| vec![n])
            .map_err(|_| TfError::Value(format!("Dimension {n} must be >= 0")).into());
    }
    let shape = super::shape::TensorShape::from_value(&list_of_ints(v), ctx)?;
    match shape.dims {
        Some(d) if d.iter().all(|x| x.is_some()) => {
            Ok(d.into_iter().map(|x| x.unwrap_or(0)).collect())
        }
        _ => Err(TfError::Value("a fully defined shape is needed here".into()).into()),
    }
}

/// A tensor of ints as a Python list; other values unchanged.
fn list_of_ints(v: &Value) -> Value {
    if let Some(a) = super::convert::held_array(v) {
        let (_, vals) = a.to_i64_vec();
        return Value::list(vals.into_iter().map(Value::Int).collect());
    }
    v.clone()
}

/// An `axis` argument: None, an int, or a list/tuple/tensor of ints.
pub fn axes_arg(v: Option<&Value>, _ctx: &mut dyn Ctx) -> PyResult<Option<Vec<i64>>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    match list_of_ints(v) {
        Value::Int(i) => Ok(Some(vec![i])),
        other => match other.as_seq() {
            Some(items) => Ok(Some(
                items.iter().map(|x| x.as_int()).collect::<PyResult<_>>()?,
            )),
            None => Ok(Some(vec![other.as_int()?])),
        },
    }
}

fn reduction(name: &'static str, kind: ReduceKind) -> Value {
    NativeFn::value(
        name,
        "reduce(input_tensor, axis=None, keepdims=False, name=None)",
        move |args, ctx| {
            let s = args.bind(name, &["input_tensor", "axis", "keepdims", "name"], 1)?;
            let t = tensor_of(arg(&s, 0), ctx)?;
            let axes = axes_arg(s[1].as_ref(), ctx)?;
            let keep = flag(&s, 2, false)?;
            apply(ctx, |e| ops::reduce(e, &t, kind, axes, keep))
        },
    )
}

/// `tf.math.reduce_variance` (or, `std`, `reduce_std`): float inputs only, as in TF.
fn spread(name: &'static str, std: bool) -> Value {
    NativeFn::value(
        name,
        "reduce(input_tensor, axis=None, keepdims=False, name=None)",
        move |args, ctx| {
            let s = args.bind(name, &["input_tensor", "axis", "keepdims", "name"], 1)?;
            let t = tensor_of(arg(&s, 0), ctx)?;
            if !t.dtype().is_float() {
                return Err(TfError::Type(format!(
                    "Input must be either real or complex. Received integer type <dtype: '{}'>.",
                    t.dtype().name()
                ))
                .into());
            }
            let axes = axes_arg(s[1].as_ref(), ctx)?;
            let keep = flag(&s, 2, false)?;
            apply(ctx, |e| {
                if std {
                    ops::reduce_std(e, &t, axes, keep)
                } else {
                    ops::reduce_variance(e, &t, axes, keep)
                }
            })
        },
    )
}

fn arg_reduction(name: &'static str, max: bool) -> Value {
    NativeFn::value(
        name,
        "arg(input, axis=None, output_type=tf.int64, name=None)",
        move |args, ctx| {
            let s = args.bind(name, &["input", "axis", "output_type", "name"], 1)?;
            let t = tensor_of(arg(&s, 0), ctx)?;
            // TF reduces over axis 0 when no axis is given.
            let axis = axes_arg(s[1].as_ref(), ctx)?
                .and_then(|a| a.first().copied())
                .unwrap_or(0);
            let output = dtype_arg(s[2].as_ref(), ctx)?.unwrap_or(DType::I64);
            let op = Op::ArgReduce(ArgReduce { max, axis, output });
            apply(ctx, |e| e.execute1(op, std::slice::from_ref(&t)))
        },
    )
}

fn elementwise(name: &'static str, op: Unary) -> Value {
    NativeFn::value(name, "f(x, name=None)", move |args, ctx| {
        let s = args.bind(name, &["x", "name"], 1)?;
        let t = tensor_of(arg(&s, 0), ctx)?;
        apply(ctx, |e| ops::unary(e, op, &t))
    })
}

/// Element-wise activations that `tf` and `tf.math` also expose (`tf.sigmoid`, `tf.tanh`).
pub fn activation(name: &'static str, act: Activation) -> Value {
    NativeFn::value(name, "f(x, name=None)", move |args, ctx| {
        let s = args.bind(name, &["x", "name"], 1)?;
        let t = tensor_of(arg(&s, 0), ctx)?;
        apply(ctx, |e| ops::activate(e, act, &t))
    })
}

fn pairwise(name: &'static str, op: Binary) -> Value {
    NativeFn::value(name, "f(x, y, name=None)", move |args, ctx| {
        let s = args.bind(name, &["x", "y", "name"], 2)?;
        let t = matching(&[arg(&s, 0), arg(&s, 1)], ctx)?;
        apply(ctx, |e| ops::binary(e, op, &t[0], &t[1]))
    })
}

fn divide(name: &'static str) -> Value {
    NativeFn::value(name, "divide(x, y, name=None)", move |args, ctx| {
        let s = args.bind(name, &["x", "y", "name"], 2)?;
        let t = matching(&[arg(&s, 0), arg(&s, 1)], ctx)?;
        apply(ctx, |e| true_divide(e, &t[0], &t[1]))
    })
}

fn matmul(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind(
        "matmul",
        &[
            "a",
            "b",
            "transpose_a",
            "transpose_b",
            "adjoint_a",
            "adjoint_b",
            "a_is_sparse",
            "b_is_sparse",
            "output_type",
            "grad_a",
            "grad_b",
            "name",
        ],
        2,
    )?;
    let t = matching(&[arg(&s, 0), arg(&s, 1)], ctx)?;
    // The adjoint of a real matrix is its transpose.
    let ta = flag(&s, 2, false)? || flag(&s, 4, false)?;
    let tb = flag(&s, 3, false)? || flag(&s, 5, false)?;
    apply(ctx, |e| ops::matmul(e, &t[0], &t[1], ta, tb))
}

fn add_n(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("add_n", &["inputs", "name"], 1)?;
    let items = ctx.iterate(arg(&s, 0))?;
    let refs: Vec<&Value> = items.iter().collect();
    let ts = matching(&refs, ctx)?;
    apply(ctx, |e| ops::add_n(e, &ts))
}

fn clip_by_value(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind(
        "clip_by_value",
        &["t", "clip_value_min", "clip_value_max", "name"],
        3,
    )?;
    let t = matching(&[arg(&s, 0), arg(&s, 1), arg(&s, 2)], ctx)?;
    apply(ctx, |e| ops::clip_by_value(e, &t[0], &t[1], &t[2]))
}

/// The math functions, by name, for `tf` and `tf.math` to share.
fn cumsum(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("cumsum", &["x", "axis", "exclusive", "reverse", "name"], 1)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let axis = given(&s[1]).map_or(Ok(0), |v| v.as_int())?;
    let exclusive = flag(&s, 2, false)?;
    let reverse = flag(&s, 3, false)?;
    apply(ctx, |e| ops::cumsum(e, &t, axis, exclusive, reverse))
}

fn math_fns() -> Vec<(&'static str, Value)> {
    let mut v: Vec<(&'static str, Value)> = vec![
        named("reduce_sum", |n| reduction(n, ReduceKind::Sum)),
        named("reduce_mean", |n| reduction(n, ReduceKind::Mean)),
        named("reduce_max", |n| reduction(n, ReduceKind::Max)),
        named("reduce_min", |n| reduction(n, ReduceKind::Min)),
        named("reduce_prod", |n| reduction(n, ReduceKind::Prod)),
        named("reduce_any", |n| reduction(n, ReduceKind::Any)),
        named("reduce_all", |n| reduction(n, ReduceKind::All)),
        named("reduce_variance", |n| spread(n, false)),
        named("reduce_std", |n| spread(n, true)),
        named("argmax", |n| arg_reduction(n, true)),
        named("argmin", |n| arg_reduction(n, false)),
        named("divide", divide),
        named("truediv", divide),
        op("add_n(inputs, name=None)", add_n),
        op(
            "cumsum(x, axis=0, exclusive=False, reverse=False, name=None)",
            cumsum,
        ),
        named("sigmoid", |n| activation(n, Activation::Sigmoid)),
        named("tanh", |n| activation(n, Activation::Tanh)),
        named("softplus", |n| activation(n, Activation::Softplus)),
    ];
    for (n, op) in [
        ("add", Binary::Add),
        ("subtract", Binary::Sub),
        ("multiply", Binary::Mul),
        ("pow", Binary::Pow),
        ("maximum", Binary::Maximum),
        ("minimum", Binary::Minimum),
        ("floordiv", Binary::FloorDiv),
        ("floormod", Binary::FloorMod),
        ("mod", Binary::FloorMod),
        ("truncatemod", Binary::TruncateMod),
        ("squared_difference", Binary::SquaredDifference),
        ("equal", Binary::Equal),
        ("not_equal", Binary::NotEqual),
        ("less", Binary::Less),
        ("less_equal", Binary::LessEqual),
        ("greater", Binary::Greater),
        ("greater_equal", Binary::GreaterEqual),
        ("logical_and", Binary::LogicalAnd),
        ("logical_or", Binary::LogicalOr),
    ] {
        v.push((n, pairwise(n, op)));
    }
    for (n, op) in [
        ("abs", Unary::Abs),
        ("sqrt", Unary::Sqrt),
        ("rsqrt", Unary::Rsqrt),
        ("reciprocal", Unary::Reciprocal),
        ("exp", Unary::Exp),
        ("expm1", Unary::Expm1),
        ("log", Unary::Log),
        ("log1p", Unary::Log1p),
        ("square", Unary::Square),
        ("negative", Unary::Neg),
        ("sin", Unary::Sin),
        ("cos", Unary::Cos),
        ("tan", Unary::Tan),
        ("erf", Unary::Erf),
        ("floor", Unary::Floor),
        ("ceil", Unary::Ceil),
        ("sign", Unary::Sign),
        ("round", Unary::Round),
        ("is_nan", Unary::IsNan),
        ("is_inf", Unary::IsInf),
        ("is_finite", Unary::IsFinite),
        ("logical_not", Unary::LogicalNot),
    ] {
        v.push((n, elementwise(n, op)));
    }
    v
}

/// Adds the math functions to `tf`, builds `tf.math` and `tf.nn`, and adds the shape and
/// creation functions.
pub fn register(tf: &NativeModule) {
    let math = NativeModule::new("tensorflow.math", "Element-wise math and reductions.");
    for (n, f) in math_fns() {
        math.set(n, f.clone());
        tf.set(n, f);
    }
    math.set("softmax", super::nn::softmax_fn("softmax", false));
    math.set("log_softmax", super::nn::softmax_fn("log_softmax", true));
    super::select::register(tf, &math);
    tf.set("math", math.into_value());
    tf.set("nn", super::nn::module());
    super::shape_ops::register(tf);
    super::scatter::register(tf);
    for (n, f) in [
        op(
            "constant(value, dtype=None, shape=None, name='Const')",
            constant,
        ),
        op(
            "convert_to_tensor(value, dtype=None, dtype_hint=None, name=None)",
            convert_to_tensor,
        ),
        op("cast(x, dtype, name=None)", cast),
        op(
            "matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False)",
            matmul,
        ),
        op(
            "clip_by_value(t, clip_value_min, clip_value_max, name=None)",
            clip_by_value,
        ),
        op(
            "map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True, name=None, fn_output_signature=None)",
            super::map_fn::map_fn,
        ),
        op(
            "Variable(initial_value=None, trainable=None, name=None, dtype=None, shape=None)",
            super::variable::variable_ctor,
        ),
    ] {
        tf.set(n, f);
    }
}
