//! Axis commands shared by pyplot and `Axes`: limits (`xlim`, `set_ylim`), scales
//! (`xscale('log')`) and `axis('off')`.

use crate::lang::{Args, Ctx, PyErr, PyResult, Value};

use super::convert::{arg, vector};
use super::draw::{edit, with_axes};
use super::objects::FigHandle;

pub(super) fn limits(
    fig: &FigHandle,
    index: usize,
    args: &Args,
    ctx: &mut dyn Ctx,
    is_x: bool,
) -> PyResult<Value> {
    let (lo_names, hi_names): (&[&str], &[&str]) = if is_x {
        (&["left", "xmin"], &["right", "xmax"])
    } else {
        (&["bottom", "ymin"], &["top", "ymax"])
    };
    let pair = match (arg(args, 0, lo_names), arg(args, 1, hi_names)) {
        (Some(v @ (Value::List(_) | Value::Tuple(_))), None) => match vector(v, ctx)?.as_slice() {
            [a, b] => Some((*a, *b)),
            _ => return Err(PyErr::value_error("limits must be a pair (low, high)")),
        },
        (Some(a), Some(b)) => Some((a.as_float()?, b.as_float()?)),
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => {
            return Err(PyErr::not_implemented(
                "setting only one limit is not supported; give both",
            ))
        }
    };
    let now = with_axes(fig, index, |a| {
        let slot = if is_x { &mut a.xlim } else { &mut a.ylim };
        if pair.is_some() {
            *slot = pair;
        }
        *slot
    })?;
    Ok(match now {
        Some((a, b)) => Value::tuple(vec![Value::Float(a), Value::Float(b)]),
        None => Value::tuple(vec![Value::Float(0.0), Value::Float(1.0)]),
    })
}

pub(super) fn scale(fig: &FigHandle, index: usize, args: &Args, is_x: bool) -> PyResult<Value> {
    let log = match arg(args, 0, &["value"]) {
        Some(Value::Str(s)) if &**s == "log" => true,
        Some(Value::Str(s)) if &**s == "linear" => false,
        Some(v) => {
            return Err(PyErr::value_error(format!(
                "{v:?} is not a valid value for scale; supported values are 'linear', 'log'"
            )))
        }
        None => {
            return Err(PyErr::type_error(
                "missing 1 required positional argument: 'value'",
            ))
        }
    };
    edit(
        fig,
        index,
        |a| if is_x { a.xlog = log } else { a.ylog = log },
    )
}

pub(super) fn axis(fig: &FigHandle, index: usize, args: &Args) -> PyResult<Value> {
    match arg(args, 0, &["arg"]) {
        Some(Value::Str(s)) => {
            let hide = match &**s {
                "off" => Some(true),
                "on" => Some(false),
                _ => None,
            };
            if let Some(h) = hide {
                edit(fig, index, |a| a.hide_axis = h)?;
            }
            Ok(Value::None)
        }
        Some(Value::Bool(b)) => edit(fig, index, |a| a.hide_axis = !b),
        _ => Ok(Value::None),
    }
}
