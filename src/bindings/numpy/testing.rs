//! `np.testing`: `assert_allclose`, `assert_array_equal` and `assert_equal`, raising
//! `AssertionError` with numpy's message (header, mismatch count, the first mismatched
//! positions, the largest absolute and relative differences, and both operands' reprs),
//! so that a notebook's failing check reads as it does under numpy.

use crate::bindings::common::arg;
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyErr, PyResult, Value};
use crate::tensor::format::scalar_str;
use crate::tensor::{repr_with_options, str_with_options, DType, NdArray, PrintOptions};

use super::convert::{as_array, float_of, to_array};

pub fn module() -> Value {
    let m = NativeModule::new("numpy.testing", "numpy.testing: assertions on arrays.");
    m.set(
        "assert_allclose",
        NativeFn::value(
            "assert_allclose",
            "assert_allclose(actual, desired, rtol=1e-07, atol=0)",
            assert_allclose,
        ),
    );
    m.set(
        "assert_array_equal",
        NativeFn::value(
            "assert_array_equal",
            "assert_array_equal(actual, desired)",
            |a, c| {
                let s = a.bind(
                    "assert_array_equal",
                    &["actual", "desired", "err_msg", "verbose", "strict"],
                    2,
                )?;
                let err_msg = text_arg(s[2].as_ref(), c)?;
                compare_arrays(
                    arg(&s, 0),
                    arg(&s, 1),
                    None,
                    "Arrays are not equal",
                    &err_msg,
                    c,
                )
            },
        ),
    );
    m.set(
        "assert_equal",
        NativeFn::value("assert_equal", "assert_equal(actual, desired)", |a, c| {
            let s = a.bind(
                "assert_equal",
                &["actual", "desired", "err_msg", "verbose", "strict"],
                2,
            )?;
            let err_msg = text_arg(s[2].as_ref(), c)?;
            assert_equal(arg(&s, 0), arg(&s, 1), &err_msg, c)
        }),
    );
    m.into_value()
}

fn text_arg(v: Option<&Value>, ctx: &mut dyn Ctx) -> PyResult<String> {
    match v {
        Some(v) => ctx.str(v),
        None => Ok(String::new()),
    }
}

/// Python's `format(x, '.{prec}g')`.
fn general(x: f64, prec: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x == 0.0 {
            "0".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let p = prec.max(1);
    let sci = format!("{:.*e}", p - 1, x);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= p as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), exp.abs())
    } else {
        trim(&format!("{:.*}", (p as i32 - 1 - exp).max(0) as usize, x))
    }
}

/// numpy's `build_err_msg`: the header, the detail, then both operands' reprs (cut to
/// three lines).
fn build_err_msg(header: &str, err_msg: &str, reprs: [String; 2]) -> String {
    let mut msg = vec![format!("\n{header}")];
    if !err_msg.is_empty() {
        if !err_msg.contains('\n') && err_msg.len() + header.len() < 79 {
            msg[0] = format!("{} {err_msg}", msg[0]);
        } else {
            msg.push(err_msg.to_string());
        }
    }
    for (name, r) in ["ACTUAL", "DESIRED"].iter().zip(reprs) {
        let r = if r.matches('\n').count() > 3 {
            format!("{}...", r.lines().take(3).collect::<Vec<_>>().join("\n"))
        } else {
            r
        };
        msg.push(format!(" {name}: {r}"));
    }
    msg.join("\n")
}

fn assertion(m: String) -> PyErr {
    PyErr::new("AssertionError", m)
}

fn assert_allclose(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let names = [
        "actual",
        "desired",
        "rtol",
        "atol",
        "equal_nan",
        "err_msg",
        "verbose",
        "strict",
    ];
    let s = args.bind("assert_allclose", &names, 2)?;
    let rtol = s[2].as_ref().map(float_of).transpose()?.unwrap_or(1e-7);
    let atol = s[3].as_ref().map(float_of).transpose()?.unwrap_or(0.0);
    let header = format!(
        "Not equal to tolerance rtol={}, atol={}",
        general(rtol, 6),
        general(atol, 6)
    );
    let err_msg = text_arg(s[5].as_ref(), ctx)?;
    compare_arrays(
        arg(&s, 0),
        arg(&s, 1),
        Some((rtol, atol)),
        &header,
        &err_msg,
        ctx,
    )
}

fn assert_equal(
    actual: &Value,
    desired: &Value,
    err_msg: &str,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    if as_array(actual).is_some_and(|a| a.ndim() > 0)
        || as_array(desired).is_some_and(|a| a.ndim() > 0)
    {
        return compare_arrays(actual, desired, None, "Arrays are not equal", err_msg, ctx);
    }
    if let (Some(a), Some(d)) = (list_items(actual), list_items(desired)) {
        assert_equal(
            &Value::Int(a.len() as i64),
            &Value::Int(d.len() as i64),
            err_msg,
            ctx,
        )?;
        for (k, (x, y)) in a.iter().zip(&d).enumerate() {
            assert_equal(x, y, &format!("item={k}\n{err_msg}"), ctx)?;
        }
        return Ok(Value::None);
    }
    // Numbers compare by value (NaN equal to NaN, as numpy's assert_equal does); anything
    // else by its repr.
    let same = match (float_of(actual), float_of(desired)) {
        (Ok(x), Ok(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => ctx.repr(actual)? == ctx.repr(desired)?,
    };
    if same {
        return Ok(Value::None);
    }
    let reprs = [ctx.repr(actual)?, ctx.repr(desired)?];
    Err(assertion(build_err_msg(
        "Items are not equal:",
        err_msg,
        reprs,
    )))
}

fn list_items(v: &Value) -> Option<Vec<Value>> {
    match v {
        Value::List(_) | Value::Tuple(_) => v.as_seq(),
        _ => None,
    }
}

/// numpy's `assert_array_compare`: equality, or closeness with `tol` = (rtol, atol).
/// NaNs in the same places are equal.
fn compare_arrays(
    actual: &Value,
    desired: &Value,
    tol: Option<(f64, f64)>,
    header: &str,
    err_msg: &str,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let x = to_array(actual, None, ctx)?;
    let y = to_array(desired, None, ctx)?;
    let opts = PrintOptions {
        precision: 6,
        ..super::print_options(ctx)
    };
    let reprs = || {
        [
            repr_with_options(&x, "array", &opts),
            repr_with_options(&y, "array", &opts),
        ]
    };
    if x.ndim() > 0 && y.ndim() > 0 && x.shape() != y.shape() {
        let reason = format!(
            "{err_msg}\n(shapes {}, {} mismatch)",
            shape_tuple(x.shape()),
            shape_tuple(y.shape())
        );
        return Err(assertion(build_err_msg(header, &reason, reprs())));
    }
    let shape = if x.ndim() == 0 {
        y.shape().to_vec()
    } else {
        x.shape().to_vec()
    };
    let n: usize = shape.iter().product();
    let xs: Vec<f64> = x.to_f64_array().iter().copied().collect();
    let ys: Vec<f64> = y.to_f64_array().iter().copied().collect();
    let at = |v: &[f64], i: usize| {
        if v.len() == 1 {
            v[0]
        } else {
            v.get(i).copied().unwrap_or(f64::NAN)
        }
    };
    let mut bad = Vec::new();
    for i in 0..n {
        let (p, q) = (at(&xs, i), at(&ys, i));
        if p.is_nan() && q.is_nan() {
            continue;
        }
        let ok = match tol {
            None => p == q,
            Some((rtol, atol)) => p == q || (p - q).abs() <= atol + rtol * q.abs(),
        };
        if !ok {
            bad.push(i);
        }
    }
    if bad.is_empty() {
        return Ok(Value::None);
    }
    let mut remarks = vec![format!(
        "Mismatched elements: {} / {n} ({}%)",
        bad.len(),
        general(100.0 * bad.len() as f64 / n as f64, 3)
    )];
    if x.ndim() > 0 || y.ndim() > 0 {
        let element = |a: &NdArray, i: usize| {
            let k = if a.size() == 1 { 0 } else { i };
            a.scalar_at(k).map(scalar_str).unwrap_or_default()
        };
        let lines: Vec<String> = bad
            .iter()
            .take(5)
            .map(|&i| {
                format!(
                    " {}: {} (ACTUAL), {} (DESIRED)",
                    position(i, &shape),
                    element(&x, i),
                    element(&y, i)
                )
            })
            .collect();
        let title = match bad.len() {
            1 => "Mismatch at index:",
            2..=5 => "Mismatch at indices:",
            _ => "First 5 mismatches are at indices:",
        };
        remarks.push(format!("{title}\n{}", lines.join("\n")));
    }
    if x.dtype() != DType::Bool && y.dtype() != DType::Bool {
        let ints = !x.dtype().is_float() && !y.dtype().is_float();
        let abs_err = bad
            .iter()
            .map(|&i| (at(&xs, i) - at(&ys, i)).abs())
            .fold(f64::NEG_INFINITY, f64::max);
        let rel = bad
            .iter()
            .filter(|&&i| at(&ys, i) != 0.0)
            .map(|&i| (at(&xs, i) - at(&ys, i)).abs() / at(&ys, i).abs())
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
            .unwrap_or(f64::INFINITY);
        let show = |v: f64, int: bool| -> PyResult<String> {
            let a = if int {
                NdArray::from_i64(&[1], vec![v as i64])
            } else {
                NdArray::from_f64(&[1], vec![v])
            }
            .map_err(super::convert::err)?;
            let s = str_with_options(&a, &PrintOptions::default());
            Ok(s.trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .to_string())
        };
        remarks.push(format!(
            "Max absolute difference among violations: {}",
            show(abs_err, ints)?
        ));
        remarks.push(format!(
            "Max relative difference among violations: {}",
            show(rel, false)?
        ));
    }
    let detail = format!("{err_msg}\n{}", remarks.join("\n"));
    Err(assertion(build_err_msg(header, &detail, reprs())))
}

fn shape_tuple(shape: &[usize]) -> String {
    match shape {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A flat position as numpy's `argwhere` lists it (`[0, 2]`).
fn position(mut flat: usize, shape: &[usize]) -> String {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = flat % shape[d].max(1);
        flat /= shape[d].max(1);
    }
    format!(
        "[{}]",
        idx.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}
