//! The `np.*` functions that count and summarise: `unique` (with its index, inverse and
//! count arrays), `bincount`, `histogram`, `percentile`, `quantile`, `median`,
//! `digitize`, `interp`, `diff` and the NaN-ignoring reductions. This file parses numpy's
//! arguments and shapes the answers; the computing is `crate::tensor::stats`.

use crate::bindings::common::arg;
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyErr, PyResult, Value};
use crate::tensor::stats::{self, Bins};
use crate::tensor::{NdArray, Reduction};

use super::convert::{array_value, as_array, axis_arg, err, float_of, int_of, to_array, wrap};

type Native = fn(&Args, &mut dyn Ctx) -> PyResult<Value>;

pub fn register(m: &NativeModule) {
    let fns: [(&'static str, Native); 13] = [
        ("unique", unique),
        ("bincount", bincount),
        ("histogram", histogram),
        ("percentile", |a, c| quantile(a, c, true)),
        ("quantile", |a, c| quantile(a, c, false)),
        ("median", median),
        ("digitize", digitize),
        ("interp", interp),
        ("diff", diff),
        ("nansum", |a, c| nan_reduce("nansum", Reduction::Sum, a, c)),
        ("nanmean", |a, c| {
            nan_reduce("nanmean", Reduction::Mean, a, c)
        }),
        ("nanmax", |a, c| nan_reduce("nanmax", Reduction::Max, a, c)),
        ("nanmin", |a, c| nan_reduce("nanmin", Reduction::Min, a, c)),
    ];
    for (name, f) in fns {
        m.set(name, NativeFn::value(name, name, f));
    }
}

fn flag(v: Option<&Value>) -> PyResult<bool> {
    v.map(|v| v.as_bool_strict())
        .transpose()
        .map(|b| b.unwrap_or(false))
}

fn unique(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let names = [
        "ar",
        "return_index",
        "return_inverse",
        "return_counts",
        "axis",
        "equal_nan",
        "sorted",
    ];
    let s = args.bind("unique", &names, 1)?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let u = stats::unique_all(&a).map_err(err)?;
    let wanted = [
        (flag(s[1].as_ref())?, u.index),
        (flag(s[2].as_ref())?, u.inverse),
        (flag(s[3].as_ref())?, u.counts),
    ];
    if wanted.iter().all(|(w, _)| !w) {
        return Ok(array_value(u.values));
    }
    let mut out = vec![array_value(u.values)];
    out.extend(
        wanted
            .into_iter()
            .filter(|(w, _)| *w)
            .map(|(_, a)| array_value(a)),
    );
    Ok(Value::tuple(out))
}

fn bincount(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("bincount", &["x", "weights", "minlength"], 1)?;
    let x = to_array(arg(&s, 0), None, ctx)?;
    let w = match s[1].as_ref().filter(|v| !v.is_none()) {
        Some(v) => Some(to_array(v, None, ctx)?),
        None => None,
    };
    let minlength = match s[2].as_ref() {
        Some(v) => usize::try_from(int_of(v)?)
            .map_err(|_| PyErr::value_error("'minlength' must not be negative"))?,
        None => 0,
    };
    stats::bincount(&x, w.as_deref(), minlength)
        .map(array_value)
        .map_err(err)
}

fn histogram(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "histogram",
        &["a", "bins", "range", "density", "weights"],
        1,
    )?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let range = match s[2].as_ref().filter(|v| !v.is_none()) {
        Some(v) => match v.as_seq().as_deref() {
            Some([lo, hi]) => Some((float_of(lo)?, float_of(hi)?)),
            _ => return Err(PyErr::value_error("too many values to unpack (expected 2)")),
        },
        None => None,
    };
    let bins = match s[1].as_ref() {
        None => Bins::Count(10, range),
        Some(v @ (Value::List(_) | Value::Tuple(_))) => {
            Bins::Edges((*to_array(v, None, ctx)?).clone())
        }
        Some(v) if as_array(v).is_some_and(|a| a.ndim() == 1) => {
            Bins::Edges((*to_array(v, None, ctx)?).clone())
        }
        Some(v) => {
            let n = int_of(v)?;
            Bins::Count(
                usize::try_from(n)
                    .map_err(|_| PyErr::value_error("`bins` must be positive, when an integer"))?,
                range,
            )
        }
    };
    let (counts, edges) = stats::histogram(&a, bins).map_err(err)?;
    Ok(Value::tuple(vec![array_value(counts), array_value(edges)]))
}

fn quantile(args: &Args, ctx: &mut dyn Ctx, percent: bool) -> PyResult<Value> {
    let name = if percent { "percentile" } else { "quantile" };
    let s = args.bind(
        name,
        &[
            "a",
            "q",
            "axis",
            "out",
            "overwrite_input",
            "method",
            "keepdims",
        ],
        2,
    )?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let q = to_array(arg(&s, 1), None, ctx)?;
    let scale = if percent { 100.0 } else { 1.0 };
    let qs: Vec<f64> = q.to_f64_array().iter().map(|x| x / scale).collect();
    if qs.iter().any(|x| !(0.0..=1.0).contains(x)) {
        return Err(PyErr::value_error(if percent {
            "Percentiles must be in the range [0, 100]"
        } else {
            "Quantiles must be in the range [0, 1]"
        }));
    }
    let axis = axis_arg(s[2].as_ref())?.and_then(|v| v.first().copied());
    let r = stats::quantile(&a, &qs, axis).map_err(err)?;
    // The answer has the shape of `q` followed by what the reduction leaves of `a`.
    let mut dims: Vec<i64> = q.shape().iter().map(|&d| d as i64).collect();
    dims.extend(r.shape().iter().skip(1).map(|&d| d as i64));
    r.reshape(&dims).map(wrap).map_err(err)
}

fn median(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "median",
        &["a", "axis", "out", "overwrite_input", "keepdims"],
        1,
    )?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let axis = axis_arg(s[1].as_ref())?.and_then(|v| v.first().copied());
    stats::median(&a, axis).map(wrap).map_err(err)
}

fn digitize(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("digitize", &["x", "bins", "right"], 2)?;
    let x = to_array(arg(&s, 0), None, ctx)?;
    let bins = to_array(arg(&s, 1), None, ctx)?;
    stats::digitize(&x, &bins, flag(s[2].as_ref())?)
        .map(wrap)
        .map_err(err)
}

fn interp(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("interp", &["x", "xp", "fp", "left", "right", "period"], 3)?;
    let x = to_array(arg(&s, 0), None, ctx)?;
    let xp = to_array(arg(&s, 1), None, ctx)?;
    let fp = to_array(arg(&s, 2), None, ctx)?;
    let opt = |i: usize| -> PyResult<Option<f64>> {
        s[i].as_ref()
            .filter(|v| !v.is_none())
            .map(float_of)
            .transpose()
    };
    stats::interp(&x, &xp, &fp, opt(3)?, opt(4)?)
        .map(wrap)
        .map_err(err)
}

fn diff(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("diff", &["a", "n", "axis"], 1)?;
    let a = to_array(arg(&s, 0), None, ctx)?;
    let n = match s[1].as_ref() {
        Some(v) => usize::try_from(int_of(v)?).map_err(|_| {
            PyErr::value_error(format!(
                "order must be non-negative but got {}",
                int_of(v).unwrap_or(0)
            ))
        })?,
        None => 1,
    };
    let axis = s[2].as_ref().map(int_of).transpose()?.unwrap_or(-1);
    stats::diff(&a, n, axis).map(array_value).map_err(err)
}

fn nan_reduce(name: &str, r: Reduction, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(name, &["a", "axis", "dtype", "out", "keepdims"], 1)?;
    let a: std::rc::Rc<NdArray> = to_array(arg(&s, 0), None, ctx)?;
    let axes = axis_arg(s[1].as_ref())?;
    let keepdims = flag(s[4].as_ref())?;
    stats::nan_reduce(&a, r, axes.as_deref(), keepdims)
        .map(wrap)
        .map_err(err)
}
