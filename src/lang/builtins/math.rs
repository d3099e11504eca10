//! The `math` module: constants, the float functions with CPython's domain errors, and the
//! conversions to int with its errors for NaN and infinities.

use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::value::Value;
use crate::lang::{Args, NativeFn, NativeModule};

fn f1(name: &'static str, f: fn(f64) -> f64) -> Value {
    NativeFn::value(name, &format!("{name}(x, /)"), move |a: &Args, _| {
        let x = one_float(a, name)?;
        let r = f(x);
        if r.is_nan() && !x.is_nan() {
            return Err(PyErr::value_error("math domain error"));
        }
        Ok(Value::Float(r))
    })
}

/// `floor`/`ceil`/`trunc` of a float: an int, or CPython's error for NaN and infinities.
fn to_int(x: f64) -> PyResult<Value> {
    if !x.is_finite() {
        return Err(PyErr::float_to_int(x));
    }
    Ok(Value::Int(x as i64))
}

/// A one-argument test on a float (`isnan`, `isinf`, `isfinite`).
fn test1(name: &'static str, f: fn(f64) -> bool) -> Value {
    NativeFn::value(name, &format!("{name}(x, /)"), move |a: &Args, _| {
        Ok(Value::Bool(f(one_float(a, name)?)))
    })
}

/// The single float argument of `math.name`, with CPython's error when it is missing.
fn one_float(a: &Args, name: &str) -> PyResult<f64> {
    a.pos
        .first()
        .ok_or_else(|| {
            PyErr::type_error(format!(
                "math.{name}() takes exactly one argument (0 given)"
            ))
        })?
        .as_float()
}

/// The two float arguments of `math.name`: positional only (`pow`), or nameable
/// (`isclose`'s `a` and `b`), each with CPython's error when one is missing.
fn floats(a: &Args, name: &str, names: Option<[&str; 2]>) -> PyResult<[f64; 2]> {
    let mut out = [0.0; 2];
    for (i, slot) in out.iter_mut().enumerate() {
        let v = match names {
            None => a.pos.get(i).ok_or_else(|| {
                PyErr::type_error(format!("{name} expected 2 arguments, got {}", a.pos.len()))
            })?,
            Some(n) => a
                .pos
                .get(i)
                .or_else(|| a.kw.iter().find(|(k, _)| k == n[i]).map(|(_, v)| v))
                .ok_or_else(|| {
                    PyErr::type_error(format!(
                        "{name}() missing required argument '{}' (pos {})",
                        n[i],
                        i + 1
                    ))
                })?,
        };
        *slot = v.as_float()?;
    }
    Ok(out)
}

pub fn math_module() -> Value {
    let m = NativeModule::new("math", "Mathematical functions.")
        .with("pi", Value::Float(std::f64::consts::PI))
        .with("e", Value::Float(std::f64::consts::E))
        .with("tau", Value::Float(std::f64::consts::TAU))
        .with("inf", Value::Float(f64::INFINITY))
        .with("nan", Value::Float(f64::NAN))
        .with("sqrt", f1("sqrt", f64::sqrt))
        .with("exp", f1("exp", f64::exp))
        .with("sin", f1("sin", f64::sin))
        .with("cos", f1("cos", f64::cos))
        .with("tan", f1("tan", f64::tan))
        .with("asin", f1("asin", f64::asin))
        .with("acos", f1("acos", f64::acos))
        .with("atan", f1("atan", f64::atan))
        .with("tanh", f1("tanh", f64::tanh))
        .with("log10", f1("log10", f64::log10))
        .with("log2", f1("log2", f64::log2))
        .with("fabs", f1("fabs", f64::abs))
        .with(
            "log",
            NativeFn::value("log", "log(x[, base])", |a, _| {
                let x = a
                    .pos
                    .first()
                    .ok_or_else(|| PyErr::type_error("log expected at least 1 argument"))?
                    .as_float()?;
                if x <= 0.0 {
                    return Err(PyErr::value_error("math domain error"));
                }
                Ok(Value::Float(match a.pos.get(1) {
                    Some(b) => x.ln() / b.as_float()?.ln(),
                    None => x.ln(),
                }))
            }),
        )
        .with(
            "floor",
            NativeFn::value("floor", "floor(x, /)", |a, _| match a.pos.first() {
                Some(Value::Int(i)) => Ok(Value::Int(*i)),
                Some(v) => to_int(v.as_float()?.floor()),
                None => Err(PyErr::type_error("floor() takes exactly one argument")),
            }),
        )
        .with(
            "ceil",
            NativeFn::value("ceil", "ceil(x, /)", |a, _| match a.pos.first() {
                Some(Value::Int(i)) => Ok(Value::Int(*i)),
                Some(v) => to_int(v.as_float()?.ceil()),
                None => Err(PyErr::type_error("ceil() takes exactly one argument")),
            }),
        )
        .with(
            "trunc",
            NativeFn::value("trunc", "trunc(x, /)", |a, _| match a.pos.first() {
                Some(v) => to_int(v.as_float()?.trunc()),
                None => Err(PyErr::type_error("trunc() takes exactly one argument")),
            }),
        )
        .with(
            "pow",
            NativeFn::value("pow", "pow(x, y, /)", |a, _| {
                let [x, y] = floats(a, "pow", None)?;
                Ok(Value::Float(x.powf(y)))
            }),
        )
        .with("isnan", test1("isnan", f64::is_nan))
        .with("isinf", test1("isinf", f64::is_infinite))
        .with("isfinite", test1("isfinite", f64::is_finite))
        .with(
            "isclose",
            NativeFn::value(
                "isclose",
                "isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0)",
                |a, _| {
                    let [x, y] = floats(a, "isclose", Some(["a", "b"]))?;
                    let mut rel = 1e-9;
                    let mut abs = 0.0;
                    for (k, v) in &a.kw {
                        match k.as_str() {
                            "rel_tol" => rel = v.as_float()?,
                            "abs_tol" => abs = v.as_float()?,
                            _ => {}
                        }
                    }
                    Ok(Value::Bool(
                        x == y || (x - y).abs() <= (rel * x.abs().max(y.abs())).max(abs),
                    ))
                },
            ),
        )
        .with(
            "factorial",
            NativeFn::value("factorial", "factorial(n, /)", |a, _| {
                let n = a.pos.first().map(|v| v.as_int()).transpose()?.unwrap_or(0);
                if n < 0 {
                    return Err(PyErr::value_error(
                        "factorial() not defined for negative values",
                    ));
                }
                let mut r: i64 = 1;
                for i in 2..=n {
                    r = r.checked_mul(i).ok_or_else(|| {
                        PyErr::new(
                            "OverflowError",
                            "factorial result too large for this kernel's 64-bit int",
                        )
                    })?;
                }
                Ok(Value::Int(r))
            }),
        )
        .with(
            "gcd",
            NativeFn::value("gcd", "gcd(*integers)", |a, _| {
                let mut g: i64 = 0;
                for v in &a.pos {
                    let mut x = v.as_int()?.abs();
                    let mut y = g;
                    while y != 0 {
                        let t = x % y;
                        x = y;
                        y = t;
                    }
                    g = x;
                }
                Ok(Value::Int(g))
            }),
        );
    m.into_value()
}
