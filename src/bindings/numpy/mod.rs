//! The `numpy` module of the kernel: `np.array` and friends, dtypes, math, reductions,
//! joining, splitting (`split`), comparisons and `np.random`, over the host arrays of
//! `crate::tensor`. This binding converts language values and holds no numerics of its
//! own; other bindings (tf) use [`to_array`] and [`array_value`] to exchange arrays with
//! it.

pub mod convert;
pub mod dtype;
pub mod files;
pub mod funcs;
pub mod layout;
pub mod ndarray;
pub mod npz;
pub mod random;
pub mod scalar;
pub mod split;
pub mod stats;
pub mod testing;

pub use convert::{array_value, as_array, to_array, wrap};
pub use ndarray::PyArray;
pub use scalar::PyScalar;

use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyErr, PyResult, Value};
use crate::tensor::ops::BinaryOp;
use crate::tensor::{build, DType, NdArray, PrintOptions, Reduction, UnaryFn};

use crate::bindings::common::arg;
use convert::{dims_arg, dtype_arg, err, float_of, int_of, shape_arg};
use dtype::PyDType;
use funcs::{binary_fn, close_fn, first_array, join_fn, reduce_fn, unary_fn};

/// The dtype a fill value implies (`np.full(3, 7)` is int64).
fn dtype_of_value(v: &Value) -> DType {
    match v {
        Value::Bool(_) => DType::Bool,
        Value::Int(_) => DType::I64,
        other => as_array(other).map_or(DType::F64, |a| a.dtype()),
    }
}

fn filled(args: &Args, ctx: &mut dyn Ctx, name: &str, fill: Option<f64>) -> PyResult<Value> {
    let names: &[&str] = if fill.is_some() {
        &["shape", "dtype", "order"]
    } else {
        &["shape", "fill_value", "dtype", "order"]
    };
    let s = args.bind(name, names, if fill.is_some() { 1 } else { 2 })?;
    let shape = dims_arg(arg(&s, 0))?;
    let (v, dt) = match fill {
        Some(f) => (f, dtype_arg(arg(&s, 1), ctx)?.unwrap_or(DType::F64)),
        None => {
            let fv = arg(&s, 1);
            let dt = dtype_arg(arg(&s, 2), ctx)?.unwrap_or_else(|| dtype_of_value(fv));
            (float_of(fv)?, dt)
        }
    };
    NdArray::full(&shape, v, dt).map(array_value).map_err(err)
}

fn filled_like(args: &Args, ctx: &mut dyn Ctx, name: &str, fill: Option<f64>) -> PyResult<Value> {
    let names: &[&str] = if fill.is_some() {
        &["a", "dtype"]
    } else {
        &["a", "fill_value", "dtype"]
    };
    let s = args.bind(name, names, if fill.is_some() { 1 } else { 2 })?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let (v, di) = match fill {
        Some(f) => (f, 1),
        None => (float_of(arg(&s, 1))?, 2),
    };
    let dt = dtype_arg(arg(&s, di), ctx)?.unwrap_or(a.dtype());
    NdArray::full(a.shape(), v, dt)
        .map(array_value)
        .map_err(err)
}

fn array_fn(args: &Args, ctx: &mut dyn Ctx, copy: bool) -> PyResult<Value> {
    let s = args.bind("array", &["object", "dtype", "copy", "ndmin"], 1)?;
    let obj = arg(&s, 0);
    let dt = dtype_arg(arg(&s, 1), ctx)?;
    if !copy
        && obj.downcast::<PyArray>().is_some()
        && dt.is_none_or(|d| Some(d) == as_array(obj).map(|a| a.dtype()))
    {
        return Ok(obj.clone());
    }
    let mut a = (*to_array(obj, dt, ctx)?).clone();
    if let Some(n) = s.get(3).cloned().flatten() {
        while a.ndim() < int_of(&n)?.max(0) as usize {
            a = a.expand_dims(0).map_err(err)?;
        }
    }
    Ok(array_value(a))
}

fn arange_fn(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("arange", &["start", "stop", "step", "dtype"], 1)?;
    let vals: Vec<Value> = s[..3]
        .iter()
        .flatten()
        .filter(|v| !v.is_none())
        .cloned()
        .collect();
    let all_int = vals
        .iter()
        .all(|v| matches!(v, Value::Int(_) | Value::Bool(_)));
    let (start, stop) = match &s[1] {
        Some(v) if !v.is_none() => (float_of(arg(&s, 0))?, float_of(v)?),
        _ => (0.0, float_of(arg(&s, 0))?),
    };
    let step = match &s[2] {
        Some(v) if !v.is_none() => float_of(v)?,
        _ => 1.0,
    };
    let dt = dtype_arg(arg(&s, 3), ctx)?.unwrap_or(if all_int { DType::I64 } else { DType::F64 });
    build::arange(start, stop, step, dt)
        .map(array_value)
        .map_err(err)
}

fn linspace_fn(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "linspace",
        &["start", "stop", "num", "endpoint", "retstep", "dtype"],
        2,
    )?;
    let num = s[2].as_ref().map(int_of).transpose()?.unwrap_or(50);
    let num = usize::try_from(num).map_err(|_| {
        PyErr::value_error(format!("Number of samples, {num}, must be non-negative."))
    })?;
    let endpoint = s[3]
        .as_ref()
        .map(|v| v.as_bool_strict())
        .transpose()?
        .unwrap_or(true);
    let a = build::linspace(float_of(arg(&s, 0))?, float_of(arg(&s, 1))?, num, endpoint)
        .map_err(err)?;
    let a = match dtype_arg(arg(&s, 5), ctx)? {
        Some(d) => a.astype(d),
        None => a,
    };
    Ok(array_value(a))
}

fn eye_fn(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("eye", &["N", "M", "k", "dtype"], 1)?;
    let n = int_of(arg(&s, 0))?.max(0) as usize;
    let m = match &s[1] {
        Some(v) if !v.is_none() => int_of(v)?.max(0) as usize,
        _ => n,
    };
    let k = s[2].as_ref().map(int_of).transpose()?.unwrap_or(0);
    let dt = dtype_arg(arg(&s, 3), ctx)?.unwrap_or(DType::F64);
    build::eye(n, m, k, dt).map(array_value).map_err(err)
}

fn shape_fn(args: &Args, ctx: &mut dyn Ctx, what: &str) -> PyResult<Value> {
    let (a, _) = first_array(args, ctx)?;
    Ok(match what {
        "shape" => Value::tuple(a.shape().iter().map(|&d| Value::Int(d as i64)).collect()),
        "ndim" => Value::Int(a.ndim() as i64),
        _ => Value::Int(a.size() as i64),
    })
}

fn method_fn(name: &'static str, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let (a, rest) = first_array(args, ctx)?;
    let this = array_value((*a).clone());
    let f = ndarray::array_attr(&this, a, name, ctx)?
        .ok_or_else(|| PyErr::attribute_error(format!("no method {name}")))?;
    ctx.call(&f, rest)
}

pub fn module(_ctx: &mut dyn Ctx) -> PyResult<Value> {
    let m = NativeModule::new("numpy", "numpy: n-dimensional arrays (the kernel's own).");
    let add = |name: &'static str, f: fn(&Args, &mut dyn Ctx) -> PyResult<Value>| {
        m.set(name, NativeFn::value(name, name, f));
    };
    add("array", |a, c| array_fn(a, c, true));
    add("asarray", |a, c| array_fn(a, c, false));
    add("zeros", |a, c| filled(a, c, "zeros", Some(0.0)));
    add("empty", |a, c| filled(a, c, "empty", Some(0.0)));
    add("ones", |a, c| filled(a, c, "ones", Some(1.0)));
    add("full", |a, c| filled(a, c, "full", None));
    add("zeros_like", |a, c| {
        filled_like(a, c, "zeros_like", Some(0.0))
    });
    add("empty_like", |a, c| {
        filled_like(a, c, "empty_like", Some(0.0))
    });
    add("ones_like", |a, c| {
        filled_like(a, c, "ones_like", Some(1.0))
    });
    add("full_like", |a, c| filled_like(a, c, "full_like", None));
    add("arange", arange_fn);
    add("linspace", linspace_fn);
    add("eye", eye_fn);
    add("identity", |a, c| {
        let s = a.bind("identity", &["n", "dtype"], 1)?;
        let n = int_of(arg(&s, 0))?.max(0) as usize;
        let dt = dtype_arg(arg(&s, 1), c)?.unwrap_or(DType::F64);
        build::eye(n, n, 0, dt).map(array_value).map_err(err)
    });
    add("reshape", |a, c| {
        let s = a.bind("reshape", &["a", "shape", "newshape"], 1)?;
        let arr = to_array(arg(&s, 0), None, c)?;
        let shape = s[1].clone().or(s[2].clone()).unwrap_or(Value::None);
        arr.reshape(&shape_arg(&shape)?)
            .map(array_value)
            .map_err(err)
    });
    add("ravel", |a, c| method_fn("ravel", a, c));
    add("transpose", |a, c| method_fn("transpose", a, c));
    add("squeeze", |a, c| method_fn("squeeze", a, c));
    add("expand_dims", |a, c| {
        let s = a.bind("expand_dims", &["a", "axis"], 2)?;
        let arr = to_array(arg(&s, 0), None, c)?;
        arr.expand_dims(int_of(arg(&s, 1))?)
            .map(array_value)
            .map_err(err)
    });
    add("shape", |a, c| shape_fn(a, c, "shape"));
    add("ndim", |a, c| shape_fn(a, c, "ndim"));
    add("size", |a, c| shape_fn(a, c, "size"));
    add("sum", |a, c| reduce_fn(Reduction::Sum, a, c));
    add("prod", |a, c| reduce_fn(Reduction::Prod, a, c));
    add("mean", |a, c| reduce_fn(Reduction::Mean, a, c));
    add("average", |a, c| reduce_fn(Reduction::Mean, a, c));
    add("std", |a, c| reduce_fn(Reduction::Std, a, c));
    add("var", |a, c| reduce_fn(Reduction::Var, a, c));
    add("max", |a, c| reduce_fn(Reduction::Max, a, c));
    add("amax", |a, c| reduce_fn(Reduction::Max, a, c));
    add("min", |a, c| reduce_fn(Reduction::Min, a, c));
    add("amin", |a, c| reduce_fn(Reduction::Min, a, c));
    add("argmax", |a, c| reduce_fn(Reduction::ArgMax, a, c));
    add("argmin", |a, c| reduce_fn(Reduction::ArgMin, a, c));
    add("any", |a, c| reduce_fn(Reduction::Any, a, c));
    add("all", |a, c| reduce_fn(Reduction::All, a, c));
    add("cumsum", |a, c| method_fn("cumsum", a, c));
    add("cumprod", |a, c| method_fn("cumprod", a, c));
    add("round", |a, c| method_fn("round", a, c));
    add("around", |a, c| method_fn("round", a, c));
    add("clip", |a, c| method_fn("clip", a, c));
    add("exp", |a, c| unary_fn(UnaryFn::Exp, a, c));
    add("log", |a, c| unary_fn(UnaryFn::Log, a, c));
    add("log10", |a, c| unary_fn(UnaryFn::Log10, a, c));
    add("log2", |a, c| unary_fn(UnaryFn::Log2, a, c));
    add("sqrt", |a, c| unary_fn(UnaryFn::Sqrt, a, c));
    add("log1p", |a, c| unary_fn(UnaryFn::Log1p, a, c));
    add("expm1", |a, c| unary_fn(UnaryFn::Expm1, a, c));
    add("sort", |a, c| sort_fn(a, c, false));
    add("argsort", |a, c| sort_fn(a, c, true));
    add("count_nonzero", |a, c| {
        let s = a.bind("count_nonzero", &["a", "axis", "keepdims"], 1)?;
        let arr = to_array(arg(&s, 0), Some(DType::Bool), c)?;
        let axes = convert::axis_arg(s[1].as_ref())?;
        let r = arr
            .reduce(Reduction::Sum, axes.as_deref(), false, 0.0)
            .map_err(err)?;
        // numpy 2 answers a numpy integer (`np.int64(2)`) for the whole array.
        Ok(match axes {
            None => convert::wrap(r),
            Some(_) => array_value(r),
        })
    });
    add("abs", |a, c| unary_fn(UnaryFn::Abs, a, c));
    add("absolute", |a, c| unary_fn(UnaryFn::Abs, a, c));
    add("sin", |a, c| unary_fn(UnaryFn::Sin, a, c));
    add("cos", |a, c| unary_fn(UnaryFn::Cos, a, c));
    add("tan", |a, c| unary_fn(UnaryFn::Tan, a, c));
    add("tanh", |a, c| unary_fn(UnaryFn::Tanh, a, c));
    add("floor", |a, c| unary_fn(UnaryFn::Floor, a, c));
    add("ceil", |a, c| unary_fn(UnaryFn::Ceil, a, c));
    add("sign", |a, c| unary_fn(UnaryFn::Sign, a, c));
    add("square", |a, c| unary_fn(UnaryFn::Square, a, c));
    add("negative", |a, c| unary_fn(UnaryFn::Neg, a, c));
    add("isnan", |a, c| unary_fn(UnaryFn::IsNan, a, c));
    add("isinf", |a, c| unary_fn(UnaryFn::IsInf, a, c));
    add("isfinite", |a, c| unary_fn(UnaryFn::IsFinite, a, c));
    add("logical_not", |a, c| unary_fn(UnaryFn::LogicalNot, a, c));
    add("add", |a, c| binary_fn(BinaryOp::Add, a, c));
    add("subtract", |a, c| binary_fn(BinaryOp::Sub, a, c));
    add("multiply", |a, c| binary_fn(BinaryOp::Mul, a, c));
    add("divide", |a, c| binary_fn(BinaryOp::Div, a, c));
    add("true_divide", |a, c| binary_fn(BinaryOp::Div, a, c));
    add("floor_divide", |a, c| binary_fn(BinaryOp::FloorDiv, a, c));
    add("mod", |a, c| binary_fn(BinaryOp::Mod, a, c));
    add("power", |a, c| binary_fn(BinaryOp::Pow, a, c));
    add("maximum", |a, c| binary_fn(BinaryOp::Maximum, a, c));
    add("minimum", |a, c| binary_fn(BinaryOp::Minimum, a, c));
    add("equal", |a, c| binary_fn(BinaryOp::Eq, a, c));
    add("not_equal", |a, c| binary_fn(BinaryOp::Ne, a, c));
    add("less", |a, c| binary_fn(BinaryOp::Lt, a, c));
    add("greater", |a, c| binary_fn(BinaryOp::Gt, a, c));
    add("logical_and", |a, c| {
        binary_fn(BinaryOp::And, &bools(a, c)?, c)
    });
    add("logical_or", |a, c| {
        binary_fn(BinaryOp::Or, &bools(a, c)?, c)
    });
    add("where", funcs::where_fn);
    add("nonzero", |a, c| {
        let (arr, _) = first_array(a, c)?;
        funcs::nonzero(&arr)
    });
    add("concatenate", |a, c| join_fn("concatenate", a, c));
    add("split", |a, c| split::split_fn("split", true, a, c));
    add("array_split", |a, c| {
        split::split_fn("array_split", false, a, c)
    });
    add("take", split::take_fn);
    add("stack", |a, c| join_fn("stack", a, c));
    add("vstack", |a, c| join_fn("vstack", a, c));
    add("hstack", |a, c| join_fn("hstack", a, c));
    add("allclose", |a, c| close_fn(true, a, c));
    add("isclose", |a, c| close_fn(false, a, c));
    add("array_equal", |a, c| {
        let s = a.bind("array_equal", &["a1", "a2", "equal_nan"], 2)?;
        let (x, y) = (
            to_array(arg(&s, 0), None, c)?,
            to_array(arg(&s, 1), None, c)?,
        );
        Ok(Value::Bool(build::array_equal(&x, &y)))
    });
    add("dot", |a, c| {
        let s = a.bind("dot", &["a", "b", "out"], 2)?;
        let (x, y) = (
            to_array(arg(&s, 0), None, c)?,
            to_array(arg(&s, 1), None, c)?,
        );
        funcs::dot(&x, &y)
    });
    add("matmul", |a, c| {
        let s = a.bind("matmul", &["x1", "x2", "out"], 2)?;
        let (x, y) = (
            to_array(arg(&s, 0), None, c)?,
            to_array(arg(&s, 1), None, c)?,
        );
        crate::tensor::linalg::matmul(&x, &y).map(wrap).map_err(err)
    });
    for dt in [
        DType::F32,
        DType::F64,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::Bool,
    ] {
        let v = Value::native(PyDType { dt, is_class: true });
        m.set(
            if dt == DType::Bool {
                "bool_"
            } else {
                dt.name()
            },
            v.clone(),
        );
        if dt == DType::Bool {
            m.set("bool", v.clone());
        }
    }
    m.set(
        "int_",
        Value::native(PyDType {
            dt: DType::I64,
            is_class: true,
        }),
    );
    m.set(
        "dtype",
        NativeFn::value("dtype", "dtype(obj)", |a, c| {
            let s = a.bind("dtype", &["dtype"], 1)?;
            let dt = dtype_arg(arg(&s, 0), c)?.unwrap_or(DType::F64);
            Ok(Value::native(PyDType {
                dt,
                is_class: false,
            }))
        }),
    );
    m.set(
        "ndarray",
        crate::lang::NativeClass::new("ndarray", "numpy", "ndarray(shape, dtype=float)")
            .constructor(|a, c| filled(a, c, "ndarray", Some(0.0)))
            .into_value(),
    );
    m.set(
        "True_",
        Value::native(PyScalar(crate::tensor::Scalar::Bool(true))),
    );
    m.set(
        "False_",
        Value::native(PyScalar(crate::tensor::Scalar::Bool(false))),
    );
    m.set("newaxis", Value::None);
    m.set("pi", Value::Float(std::f64::consts::PI));
    m.set("e", Value::Float(std::f64::consts::E));
    m.set("inf", Value::Float(f64::INFINITY));
    m.set("nan", Value::Float(f64::NAN));
    m.set("__version__", Value::str("2.4.6"));
    m.set("random", random::module());
    m.set("testing", testing::module());
    files::register(&m);
    layout::register(&m);
    stats::register(&m);
    add("set_printoptions", set_printoptions);
    add("get_printoptions", |_a, c| {
        let o = *c.state().get::<PrintOptions>();
        Ok(Value::dict_from(vec![
            ("edgeitems", Value::Int(o.edgeitems as i64)),
            ("threshold", Value::Int(o.threshold as i64)),
            ("precision", Value::Int(o.precision as i64)),
            ("linewidth", Value::Int(o.linewidth as i64)),
            ("suppress", Value::Bool(o.suppress)),
        ]))
    });
    Ok(m.into_value())
}

/// The print options arrays use in this session (`np.set_printoptions`); other bindings
/// printing arrays (tf tensors) read them here.
pub fn print_options(ctx: &mut dyn Ctx) -> PrintOptions {
    *ctx.state().get::<PrintOptions>()
}

fn set_printoptions(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let names = [
        "precision",
        "threshold",
        "edgeitems",
        "linewidth",
        "suppress",
        "nanstr",
        "infstr",
        "formatter",
        "sign",
        "floatmode",
        "legacy",
    ];
    let s = args.bind("set_printoptions", &names, 0)?;
    let count = |v: &Value| -> PyResult<usize> {
        let n = float_of(v)?;
        if n < 0.0 || n.is_nan() {
            return Err(PyErr::value_error("print options must be non-negative"));
        }
        Ok(if n.is_infinite() {
            usize::MAX
        } else {
            n as usize
        })
    };
    let mut o = *ctx.state().get::<PrintOptions>();
    let given = |i: usize| s[i].as_ref().filter(|v| !v.is_none());
    if let Some(v) = given(0) {
        o.precision = count(v)?;
    }
    if let Some(v) = given(1) {
        o.threshold = count(v)?;
    }
    if let Some(v) = given(2) {
        o.edgeitems = count(v)?;
    }
    if let Some(v) = given(3) {
        o.linewidth = count(v)?;
    }
    if let Some(v) = given(4) {
        o.suppress = v.as_bool_strict()?;
    }
    *ctx.state().get::<PrintOptions>() = o;
    Ok(Value::None)
}

fn sort_fn(args: &Args, ctx: &mut dyn Ctx, indices: bool) -> PyResult<Value> {
    let s = args.bind("sort", &["a", "axis", "kind", "order"], 1)?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let (a, axis) = match s[1].as_ref() {
        Some(Value::None) => (std::rc::Rc::new(a.ravel()), 0),
        Some(v) => (a, int_of(v)?),
        None => (a, -1),
    };
    build::sort(&a, axis, indices).map(array_value).map_err(err)
}

/// Arguments with both operands cast to bool (`logical_and`/`logical_or`).
fn bools(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Args> {
    let s = args.bind("logical", &["x1", "x2"], 2)?;
    let x = to_array(arg(&s, 0), Some(DType::Bool), ctx)?;
    let y = to_array(arg(&s, 1), Some(DType::Bool), ctx)?;
    Ok(Args::new(vec![
        array_value((*x).clone()),
        array_value((*y).clone()),
    ]))
}
