//! The bodies of numpy's functions that take arrays: reductions, cumulative sums,
//! rounding, clipping, products, element-wise math, joining and comparing. Shared by the
//! `np.*` functions and the matching `ndarray` methods, so both accept the same
//! arguments and raise the same errors.

use std::rc::Rc;

use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use crate::tensor::linalg::matmul;
use crate::tensor::math::unary;
use crate::tensor::ops::{binary, clip, where_, BinaryOp, Operand};
use crate::tensor::{build, shape_str, NdArray, Reduction, TensorError, UnaryFn};

use super::convert::{
    array_value, axis_arg, dtype_arg, err, float_of, int_of, to_array, wrap, Opnd,
};

fn keyword_names(r: Reduction) -> &'static [&'static str] {
    match r {
        Reduction::Std | Reduction::Var => &["axis", "dtype", "out", "ddof", "keepdims"],
        Reduction::Max | Reduction::Min | Reduction::ArgMax | Reduction::ArgMin => {
            &["axis", "out", "keepdims"]
        }
        Reduction::Any | Reduction::All => &["axis", "out", "keepdims"],
        _ => &["axis", "dtype", "out", "keepdims"],
    }
}

fn slot<'a>(names: &[&str], slots: &'a [Option<Value>], name: &str) -> Option<&'a Value> {
    names
        .iter()
        .position(|n| *n == name)
        .and_then(|i| slots[i].as_ref())
}

/// `a.sum(axis=None, dtype=None, out=None, keepdims=False)` and its siblings.
pub fn reduce_call(r: Reduction, a: &NdArray, args: &Args) -> PyResult<Value> {
    let names = keyword_names(r);
    let slots = args.bind(&format!("{r:?}").to_lowercase(), names, 0)?;
    let axes = axis_arg(slot(names, &slots, "axis"))?;
    let keepdims = match slot(names, &slots, "keepdims") {
        Some(v) => v.as_bool_strict()?,
        None => false,
    };
    let ddof = match slot(names, &slots, "ddof") {
        Some(v) => float_of(v)?,
        None => 0.0,
    };
    let src;
    let a = match slot(names, &slots, "dtype").and_then(|v| match v {
        Value::Str(s) => crate::tensor::DType::parse(s),
        other => other.downcast::<super::dtype::PyDType>().map(|d| d.dt),
    }) {
        Some(dt) => {
            src = a.astype(dt);
            &src
        }
        None => a,
    };
    a.reduce(r, axes.as_deref(), keepdims, ddof)
        .map(wrap)
        .map_err(err)
}

/// `np.sum(a, ...)`: the array first, then the method's arguments.
pub fn reduce_fn(r: Reduction, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let (a, rest) = first_array(args, ctx)?;
    reduce_call(r, &a, &rest)
}

/// Splits off the first argument (positional or `a=`/`x=`) as an array.
pub fn first_array(args: &Args, ctx: &mut dyn Ctx) -> PyResult<(Rc<NdArray>, Args)> {
    let mut rest = args.clone();
    let v = if !rest.pos.is_empty() {
        rest.pos.remove(0)
    } else if let Some(i) = rest.kw.iter().position(|(k, _)| k == "a" || k == "x") {
        rest.kw.remove(i).1
    } else {
        return Err(PyErr::type_error("missing required argument 'a' (pos 1)"));
    };
    Ok((to_array(&v, None, ctx)?, rest))
}

pub fn cumulative_call(prod: bool, a: &NdArray, args: &Args) -> PyResult<Value> {
    let s = args.bind("cumsum", &["axis", "dtype", "out"], 0)?;
    let axis = axis_arg(s[0].as_ref())?.and_then(|v| v.first().copied());
    a.cumulative(prod, axis).map(array_value).map_err(err)
}

pub fn round_call(a: &NdArray, args: &Args) -> PyResult<Value> {
    let s = args.bind("round", &["decimals", "out"], 0)?;
    let d = s[0].as_ref().map(int_of).transpose()?.unwrap_or(0);
    unary(a, UnaryFn::Round(d as i32)).map(wrap).map_err(err)
}

pub fn clip_call(a: &NdArray, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("clip", &["min", "max", "out"], 0)?;
    let lo = opnd(s[0].as_ref(), ctx)?;
    let hi = opnd(s[1].as_ref(), ctx)?;
    if lo.is_none() && hi.is_none() {
        // numpy 2.1 and later answer a copy when neither bound is given.
        return Ok(array_value(a.clone()));
    }
    clip(
        a,
        lo.as_ref().map(Opnd::operand),
        hi.as_ref().map(Opnd::operand),
    )
    .map(wrap)
    .map_err(err)
}

fn opnd(v: Option<&Value>, ctx: &mut dyn Ctx) -> PyResult<Option<Opnd>> {
    match v {
        None | Some(Value::None) => Ok(None),
        Some(v) => Opnd::of(v, ctx)?
            .map(Some)
            .ok_or_else(|| PyErr::type_error(format!("unsupported operand '{}'", v.type_name()))),
    }
}

/// An operand that must be array-like (function arguments).
pub fn need_opnd(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Opnd> {
    opnd(Some(v), ctx)?.ok_or_else(|| PyErr::type_error("expected an array-like argument"))
}

/// `np.dot(a, b)`.
pub fn dot(a: &NdArray, b: &NdArray) -> PyResult<Value> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return binary(Operand::Arr(a), Operand::Arr(b), BinaryOp::Mul)
            .map(wrap)
            .map_err(err);
    }
    let k1 = a.shape()[a.ndim() - 1];
    let (k2, kd) = if b.ndim() == 1 {
        (b.shape()[0], 0)
    } else {
        (b.shape()[b.ndim() - 2], b.ndim() - 2)
    };
    if k1 != k2 {
        return Err(PyErr::value_error(format!(
            "shapes {} and {} not aligned: {k1} (dim {}) != {k2} (dim {kd})",
            shape_str(a.shape()).replace(' ', ""),
            shape_str(b.shape()).replace(' ', ""),
            a.ndim() - 1
        )));
    }
    matmul(a, b).map(wrap).map_err(err)
}

/// `np.<f>(x)` for an element-wise math function.
pub fn unary_fn(f: UnaryFn, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let (a, _) = first_array(args, ctx)?;
    unary(&a, f).map(wrap).map_err(err)
}

/// `np.<f>(x1, x2)` for an element-wise binary function.
pub fn binary_fn(op: BinaryOp, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("ufunc", &["x1", "x2", "out"], 2)?;
    let (x, y) = (
        s[0].clone().unwrap_or(Value::None),
        s[1].clone().unwrap_or(Value::None),
    );
    let (p, q) = (need_opnd(&x, ctx)?, need_opnd(&y, ctx)?);
    binary(p.operand(), q.operand(), op).map(wrap).map_err(err)
}

/// `np.where(cond, x, y)`; with only `cond`, the indices where it holds.
pub fn where_fn(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("where", &["condition", "x", "y"], 1)?;
    let c = to_array(s[0].as_ref().unwrap_or(&Value::None), None, ctx)?;
    match (&s[1], &s[2]) {
        (Some(x), Some(y)) => {
            let (p, q) = (need_opnd(x, ctx)?, need_opnd(y, ctx)?);
            where_(&c, p.operand(), q.operand()).map(wrap).map_err(err)
        }
        (None, None) => nonzero(&c),
        _ => Err(PyErr::value_error(
            "either both or neither of x and y should be given",
        )),
    }
}

/// `np.nonzero(a)`: a tuple of index arrays, one per axis.
pub fn nonzero(a: &NdArray) -> PyResult<Value> {
    let m = a.to_bool_array();
    let mut cols: Vec<Vec<i64>> = vec![vec![]; m.ndim().max(1)];
    for (ix, &v) in m.indexed_iter() {
        if v {
            for (d, c) in cols.iter_mut().enumerate().take(m.ndim()) {
                c.push(ix[d] as i64);
            }
        }
    }
    let arrays = cols
        .into_iter()
        .map(|c| {
            let n = c.len();
            NdArray::from_i64(&[n], c).map(array_value).map_err(err)
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Value::tuple(arrays))
}

/// A sequence of array-likes (`np.concatenate([a, b])`).
pub fn array_list(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<NdArray>> {
    let items = match v.as_seq() {
        Some(items) => items,
        None => ctx.iterate(v)?,
    };
    items
        .iter()
        .map(|i| to_array(i, None, ctx).map(|a| (*a).clone()))
        .collect()
}

pub fn join_fn(kind: &str, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(kind, &["arrays", "axis", "out", "dtype"], 1)?;
    let arrays = array_list(s[0].as_ref().unwrap_or(&Value::None), ctx)?;
    let axis = match s[1].as_ref() {
        Some(Value::None) => None,
        Some(v) => Some(int_of(v)?),
        None => Some(0),
    };
    let r = match kind {
        "concatenate" => match axis {
            Some(ax) => build::concatenate(&arrays, ax),
            None => build::concatenate(&arrays.iter().map(|a| a.ravel()).collect::<Vec<_>>(), 0),
        },
        "stack" => build::stack(&arrays, axis.unwrap_or(0)),
        "vstack" => build::vstack(&arrays),
        _ => build::hstack(&arrays),
    };
    let r = match (r, s[3].as_ref()) {
        (Ok(a), Some(d)) => match dtype_arg(d, ctx)? {
            Some(dt) => Ok(a.astype(dt)),
            None => Ok(a),
        },
        (r, _) => r,
    };
    r.map(array_value).map_err(err)
}

pub fn close_fn(all: bool, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        if all { "allclose" } else { "isclose" },
        &["a", "b", "rtol", "atol", "equal_nan"],
        2,
    )?;
    let a = to_array(s[0].as_ref().unwrap_or(&Value::None), None, ctx)?;
    let b = to_array(s[1].as_ref().unwrap_or(&Value::None), None, ctx)?;
    let rtol = s[2].as_ref().map(float_of).transpose()?.unwrap_or(1e-5);
    let atol = s[3].as_ref().map(float_of).transpose()?.unwrap_or(1e-8);
    if all {
        build::allclose(&a, &b, rtol, atol)
            .map(Value::Bool)
            .map_err(err)
    } else {
        build::isclose(&a, &b, rtol, atol).map(wrap).map_err(err)
    }
}

/// Errors for misuse that numpy reports before touching data.
pub fn value_err(m: &str) -> PyErr {
    err(TensorError::Value(m.to_string()))
}
