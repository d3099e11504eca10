//! The `math` module: constants, the float functions with CPython's domain errors, the
//! conversions to int with its errors for NaN and infinities, norms (`hypot`, `dist`), the
//! exactly rounded `fsum`, and the integer functions (`comb`, `perm`, `gcd`, `lcm`, `isqrt`).

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

/// The Euclidean norm of `xs`, scaled by the largest so that squares neither overflow nor
/// underflow; an infinity wins over a NaN, as in CPython.
fn norm(xs: &[f64]) -> f64 {
    if xs.iter().any(|x| x.is_infinite()) {
        return f64::INFINITY;
    }
    if xs.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let max = xs.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return 0.0;
    }
    max * xs.iter().map(|x| (x / max) * (x / max)).sum::<f64>().sqrt()
}

/// `fsum`: Shewchuk's exact partial sums with CPython's correctly rounded final step.
fn fsum(xs: &[f64]) -> PyResult<f64> {
    if xs.iter().any(|x| !x.is_finite()) {
        let (pos, neg) = (xs.contains(&f64::INFINITY), xs.contains(&f64::NEG_INFINITY));
        if pos && neg {
            return Err(PyErr::value_error("-inf + inf in fsum"));
        }
        return Ok(xs.iter().filter(|x| !x.is_finite()).sum());
    }
    let mut partials: Vec<f64> = vec![];
    for &v in xs {
        let mut x = v;
        let mut i = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        partials.push(x);
    }
    let mut n = partials.len();
    let mut hi = 0.0;
    if n > 0 {
        n -= 1;
        hi = partials[n];
        let mut lo = 0.0;
        while n > 0 {
            let x = hi;
            n -= 1;
            let y = partials[n];
            hi = x + y;
            lo = y - (hi - x);
            if lo != 0.0 {
                break;
            }
        }
        if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
    }
    Ok(hi)
}

/// A non-negative integer argument of `comb`/`perm`/`isqrt`.
fn count_arg(v: &Value, what: &str) -> PyResult<i64> {
    let n = v.as_int()?;
    if n < 0 {
        return Err(PyErr::value_error(format!(
            "{what} must be a non-negative integer"
        )));
    }
    Ok(n)
}

/// `n! / (n-k)!`, divided by `k!` for `comb`, or the kernel's 64-bit overflow error.
fn falling(n: i64, k: i64, choose: bool) -> PyResult<Value> {
    if k > n {
        return Ok(Value::Int(0));
    }
    let k = if choose { k.min(n - k) } else { k };
    let mut r: i128 = 1;
    for i in 0..k {
        r *= (n - i) as i128;
        if choose {
            r /= (i + 1) as i128;
        }
        if r > i64::MAX as i128 {
            return Err(PyErr::new(
                "OverflowError",
                "result too large for this kernel's 64-bit int",
            ));
        }
    }
    Ok(Value::Int(r as i64))
}

/// The two integer arguments of `comb`/`perm` (`perm`'s `k` defaults to `n`).
fn n_k(a: &Args, name: &str, k_optional: bool) -> PyResult<(i64, i64)> {
    let got = a.pos.len();
    if got > 2 || got == 0 || (got == 1 && !k_optional) {
        return Err(PyErr::type_error(format!(
            "{name} expected {}2 arguments, got {got}",
            if k_optional { "at most " } else { "" }
        )));
    }
    let n = count_arg(&a.pos[0], "n")?;
    let k = match a.pos.get(1) {
        Some(Value::None) | None => n,
        Some(v) => count_arg(v, "k")?,
    };
    Ok((n, k))
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
        .with("degrees", f1("degrees", f64::to_degrees))
        .with("radians", f1("radians", f64::to_radians))
        .with(
            "atan2",
            NativeFn::value("atan2", "atan2(y, x, /)", |a, _| {
                let [y, x] = floats(a, "atan2", None)?;
                Ok(Value::Float(y.atan2(x)))
            }),
        )
        .with(
            "copysign",
            NativeFn::value("copysign", "copysign(x, y, /)", |a, _| {
                let [x, y] = floats(a, "copysign", None)?;
                Ok(Value::Float(x.copysign(y)))
            }),
        )
        .with(
            "fmod",
            NativeFn::value("fmod", "fmod(x, y, /)", |a, _| {
                let [x, y] = floats(a, "fmod", None)?;
                if y == 0.0 || x.is_infinite() {
                    return Err(PyErr::value_error("math domain error"));
                }
                Ok(Value::Float(x % y))
            }),
        )
        .with(
            "hypot",
            NativeFn::value("hypot", "hypot(*coordinates)", |a, _| {
                let xs = a
                    .pos
                    .iter()
                    .map(|v| v.as_float())
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(Value::Float(norm(&xs)))
            }),
        )
        .with(
            "dist",
            NativeFn::value("dist", "dist(p, q, /)", |a, ctx| {
                let (p, q) = match a.pos.as_slice() {
                    [p, q] => (ctx.iterate(p)?, ctx.iterate(q)?),
                    other => {
                        return Err(PyErr::type_error(format!(
                            "dist expected 2 arguments, got {}",
                            other.len()
                        )))
                    }
                };
                if p.len() != q.len() {
                    return Err(PyErr::value_error(
                        "both points must have the same number of dimensions",
                    ));
                }
                let d = p
                    .iter()
                    .zip(&q)
                    .map(|(x, y)| Ok(x.as_float()? - y.as_float()?))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(Value::Float(norm(&d)))
            }),
        )
        .with(
            "fsum",
            NativeFn::value("fsum", "fsum(seq, /)", |a, ctx| {
                let s = a.bind("fsum", &["seq"], 1)?;
                let items = ctx.iterate(s[0].as_ref().unwrap_or(&Value::None))?;
                let xs = items
                    .iter()
                    .map(|v| v.as_float())
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(Value::Float(fsum(&xs)?))
            }),
        )
        .with(
            "prod",
            NativeFn::value("prod", "prod(iterable, /, *, start=1)", |a, ctx| {
                let s = a.bind("prod", &["iterable", "start"], 1)?;
                let mut acc = s[1].clone().unwrap_or(Value::Int(1));
                for v in ctx.iterate(s[0].as_ref().unwrap_or(&Value::None))? {
                    acc = ctx.binop(crate::lang::BinOp::Mul, &acc, &v)?;
                }
                Ok(acc)
            }),
        )
        .with(
            "comb",
            NativeFn::value("comb", "comb(n, k, /)", |a, _| {
                let (n, k) = n_k(a, "comb", false)?;
                falling(n, k, true)
            }),
        )
        .with(
            "perm",
            NativeFn::value("perm", "perm(n, k=None, /)", |a, _| {
                let (n, k) = n_k(a, "perm", true)?;
                falling(n, k, false)
            }),
        )
        .with(
            "isqrt",
            NativeFn::value("isqrt", "isqrt(n, /)", |a, _| {
                let s = a.bind("isqrt", &["n"], 1)?;
                let n = s[0].as_ref().unwrap_or(&Value::None).as_int()?;
                if n < 0 {
                    return Err(PyErr::value_error("isqrt() argument must be nonnegative"));
                }
                let mut r = (n as f64).sqrt() as i64;
                while r > 0 && r.checked_mul(r).is_none_or(|sq| sq > n) {
                    r -= 1;
                }
                while (r + 1).checked_mul(r + 1).is_some_and(|sq| sq <= n) {
                    r += 1;
                }
                Ok(Value::Int(r))
            }),
        )
        .with(
            "lcm",
            NativeFn::value("lcm", "lcm(*integers)", |a, _| {
                let mut l: i64 = 1;
                for v in &a.pos {
                    let x = v.as_int()?.abs();
                    if x == 0 || l == 0 {
                        l = 0;
                        continue;
                    }
                    let (mut p, mut q) = (l, x);
                    while q != 0 {
                        (p, q) = (q, p % q);
                    }
                    l = (l / p).checked_mul(x).ok_or_else(|| {
                        PyErr::new(
                            "OverflowError",
                            "result too large for this kernel's 64-bit int",
                        )
                    })?;
                }
                Ok(Value::Int(l))
            }),
        )
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
