//! The `np.*` functions that rearrange arrays or combine them by index: `tile`, `repeat`,
//! `flip`, `roll`, `pad`, `diag`, `meshgrid`, `column_stack`, `outer` and `einsum`. This
//! file parses numpy's arguments; the element moves are `crate::tensor::rearrange` and
//! `crate::tensor::einsum`.

use crate::bindings::common::arg;
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyErr, PyResult, Value};
use crate::tensor::ops::{binary, Operand};
use crate::tensor::rearrange::{self, PadMode};
use crate::tensor::{einsum::einsum, BinaryOp};

use super::convert::{array_value, axis_arg, err, float_of, int_of, shape_arg, to_array};
use super::funcs::array_list;

type Native = fn(&Args, &mut dyn Ctx) -> PyResult<Value>;

pub fn register(m: &NativeModule) {
    let fns: [(&'static str, Native); 10] = [
        ("tile", tile),
        ("repeat", repeat),
        ("flip", flip),
        ("roll", roll),
        ("pad", pad),
        ("diag", diag),
        ("meshgrid", meshgrid),
        ("column_stack", column_stack),
        ("outer", outer),
        ("einsum", einsum_fn),
    ];
    for (name, f) in fns {
        m.set(name, NativeFn::value(name, name, f));
    }
}

fn tile(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("tile", &["A", "reps"], 2)?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    rearrange::tile(&a, &shape_arg(arg(&s, 1))?)
        .map(array_value)
        .map_err(err)
}

fn repeat(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("repeat", &["a", "repeats", "axis"], 2)?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let axis = axis_arg(s[2].as_ref())?.and_then(|v| v.first().copied());
    rearrange::repeat(&a, &shape_arg(arg(&s, 1))?, axis)
        .map(array_value)
        .map_err(err)
}

fn flip(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("flip", &["m", "axis"], 1)?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let axes = axis_arg(s[1].as_ref())?;
    rearrange::flip(&a, axes.as_deref())
        .map(array_value)
        .map_err(err)
}

fn roll(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("roll", &["a", "shift", "axis"], 2)?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let axis = axis_arg(s[2].as_ref())?.and_then(|v| v.first().copied());
    rearrange::roll(&a, int_of(arg(&s, 1))?, axis)
        .map(array_value)
        .map_err(err)
}

/// numpy's `pad_width`: one int, one (before, after) pair, or a pair per axis.
fn pad_widths(v: &Value, ndim: usize) -> PyResult<Vec<(usize, usize)>> {
    let neg = || PyErr::value_error("index can't contain negative values");
    let width = |x: &Value| -> PyResult<usize> { usize::try_from(int_of(x)?).map_err(|_| neg()) };
    let pair = |x: &Value| -> PyResult<(usize, usize)> {
        match x.as_seq() {
            Some(p) if p.len() == 2 => Ok((width(&p[0])?, width(&p[1])?)),
            Some(p) if p.len() == 1 => Ok((width(&p[0])?, width(&p[0])?)),
            Some(_) => Err(PyErr::value_error(format!(
                "operands could not be broadcast together with remapped shapes [original->remapped]: ({},)  and requested shape ({ndim},2)",
                x.as_seq().map_or(0, |p| p.len())
            ))),
            None => width(x).map(|w| (w, w)),
        }
    };
    match v.as_seq() {
        Some(items) if items.iter().all(|i| i.as_seq().is_some()) && !items.is_empty() => {
            let ps: Vec<(usize, usize)> = items.iter().map(pair).collect::<PyResult<_>>()?;
            Ok(if ps.len() == 1 { vec![ps[0]; ndim] } else { ps })
        }
        _ => Ok(vec![pair(v)?; ndim]),
    }
}

fn pad(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("pad", &["array", "pad_width", "mode", "constant_values"], 2)?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let widths = pad_widths(arg(&s, 1), a.ndim())?;
    let mode = match s[2]
        .as_ref()
        .and_then(|v| v.as_str().ok().map(str::to_string))
    {
        None => "constant".to_string(),
        Some(m) => m,
    };
    let mode = match mode.as_str() {
        "constant" => PadMode::Constant(match s[3].as_ref() {
            Some(v) => float_of(v)?,
            None => 0.0,
        }),
        "edge" => PadMode::Edge,
        other => {
            return Err(PyErr::value_error(format!(
                "mode '{other}' is not supported"
            )))
        }
    };
    rearrange::pad(&a, &widths, mode)
        .map(array_value)
        .map_err(err)
}

fn diag(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("diag", &["v", "k"], 1)?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let k = s[1].as_ref().map(int_of).transpose()?.unwrap_or(0);
    rearrange::diag(&a, k).map(array_value).map_err(err)
}

fn meshgrid(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let mut xy = true;
    for (k, v) in &args.kw {
        match k.as_str() {
            "indexing" => {
                xy = match v.as_str().ok() {
                    Some("xy") => true,
                    Some("ij") => false,
                    _ => {
                        return Err(PyErr::value_error(
                            "Valid values for `indexing` are 'xy' and 'ij'.",
                        ))
                    }
                }
            }
            "sparse" | "copy" => {}
            other => {
                return Err(PyErr::type_error(format!(
                    "meshgrid() got an unexpected keyword argument '{other}'"
                )))
            }
        }
    }
    let xs = args
        .pos
        .iter()
        .map(|v| to_array(v, None, ctx).map(|a| (*a).clone()))
        .collect::<PyResult<Vec<_>>>()?;
    let grids = rearrange::meshgrid(&xs, xy).map_err(err)?;
    Ok(Value::tuple(grids.into_iter().map(array_value).collect()))
}

fn column_stack(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("column_stack", &["tup"], 1)?;
    let arrays = array_list(arg(&s, 0), ctx)?;
    rearrange::column_stack(&arrays)
        .map(array_value)
        .map_err(err)
}

fn outer(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("outer", &["a", "b", "out"], 2)?;
    let a = to_array(arg(&s, 0), None, ctx)?
        .reshape(&[-1, 1])
        .map_err(err)?;
    let b = to_array(arg(&s, 1), None, ctx)?
        .reshape(&[1, -1])
        .map_err(err)?;
    binary(Operand::Arr(&a), Operand::Arr(&b), BinaryOp::Mul)
        .map(array_value)
        .map_err(err)
}

fn einsum_fn(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some((spec, rest)) = args.pos.split_first() else {
        return Err(PyErr::type_error(
            "einsum() missing 1 required positional argument: 'subscripts'",
        ));
    };
    let spec = spec.as_str()?.to_string();
    let ops = rest
        .iter()
        .map(|v| to_array(v, None, ctx).map(|a| (*a).clone()))
        .collect::<PyResult<Vec<_>>>()?;
    einsum(&spec, &ops).map(super::convert::wrap).map_err(err)
}
