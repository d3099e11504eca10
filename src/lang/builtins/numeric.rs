//! Numeric builtins with CPython's results and errors: `sum`, `min`/`max` (with `key` and
//! `default`), `abs`, `round` (half to even, through the exact decimal text for floats),
//! `divmod`, `pow` (with a modulus), `chr`, `ord`, `hex`, `bin` and `oct`.

use super::namespace::{kw, one, unknown};
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::value::Value;

/// The builtin functions this file answers for.
pub(super) const NAMES: &[&str] = &[
    "sum", "min", "max", "abs", "round", "divmod", "pow", "chr", "ord", "hex", "bin", "oct",
];

impl Vm<'_> {
    /// Calls the builtin `name` (one of [`NAMES`]).
    pub(super) fn builtin_numeric(&mut self, name: &str, a: Args) -> PyResult<Value> {
        Ok(match name {
            "sum" => {
                let items = self.iter_values(one(&a, name)?)?;
                let mut acc = a
                    .pos
                    .get(1)
                    .cloned()
                    .or_else(|| kw(&a, "start").cloned())
                    .unwrap_or(Value::Int(0));
                for x in items {
                    self.check_interrupt_fast()?;
                    acc = self.binop(crate::lang::values::object::BinOp::Add, &acc, &x)?;
                }
                acc
            }
            "min" | "max" => self.min_max(name, &a)?,
            "abs" => match one(&a, name)? {
                Value::Int(i) => Value::Int(
                    i.checked_abs()
                        .ok_or_else(|| PyErr::new("OverflowError", "int too large"))?,
                ),
                Value::Bool(b) => Value::Int(*b as i64),
                Value::Float(x) => Value::Float(x.abs()),
                v => {
                    let m = self.get_attr(v, "__abs__")?;
                    self.call_value(&m, Args::default())?
                }
            },
            "round" => self.round(&a)?,
            "divmod" => {
                let x = one(&a, name)?.clone();
                let y = a.pos.get(1).cloned().unwrap_or(Value::None);
                let q = self.binop(crate::lang::values::object::BinOp::FloorDiv, &x, &y)?;
                let r = self.binop(crate::lang::values::object::BinOp::Mod, &x, &y)?;
                Value::tuple(vec![q, r])
            }
            "pow" => {
                let x = one(&a, name)?.clone();
                let y = a.pos.get(1).cloned().unwrap_or(Value::None);
                match a.pos.get(2) {
                    Some(m) => {
                        let (mut b, mut e, m) =
                            (x.as_int()? as i128, y.as_int()?, m.as_int()? as i128);
                        if m == 0 {
                            return Err(PyErr::value_error("pow() 3rd argument cannot be 0"));
                        }
                        let mut r: i128 = 1;
                        b = b.rem_euclid(m);
                        while e > 0 {
                            if e & 1 == 1 {
                                r = r * b % m;
                            }
                            b = b * b % m;
                            e >>= 1;
                        }
                        Value::Int(r.rem_euclid(m) as i64)
                    }
                    None => self.binop(crate::lang::values::object::BinOp::Pow, &x, &y)?,
                }
            }
            "chr" => {
                let i = one(&a, name)?.as_int()?;
                Value::from(
                    char::from_u32(i as u32)
                        .ok_or_else(|| PyErr::value_error("chr() arg not in range(0x110000)"))?
                        .to_string(),
                )
            }
            "ord" => {
                let s = one(&a, name)?.as_str()?;
                let mut c = s.chars();
                match (c.next(), c.next()) {
                    (Some(ch), None) => Value::Int(ch as i64),
                    _ => {
                        return Err(PyErr::type_error(format!(
                            "ord() expected a character, but string of length {} found",
                            s.chars().count()
                        )))
                    }
                }
            }
            "hex" | "bin" | "oct" => {
                let i = one(&a, name)?.as_int()?;
                let (p, body) = match name {
                    "hex" => ("0x", format!("{:x}", i.unsigned_abs())),
                    "bin" => ("0b", format!("{:b}", i.unsigned_abs())),
                    _ => ("0o", format!("{:o}", i.unsigned_abs())),
                };
                Value::from(format!("{}{p}{body}", if i < 0 { "-" } else { "" }))
            }
            _ => return Err(unknown(name)),
        })
    }

    pub fn min_max(&mut self, name: &str, a: &Args) -> PyResult<Value> {
        let items = if a.pos.len() == 1 {
            self.iter_values(&a.pos[0])?
        } else {
            a.pos.clone()
        };
        let key = kw(a, "key").cloned().filter(|v| !v.is_none());
        if items.is_empty() {
            return match kw(a, "default") {
                Some(d) => Ok(d.clone()),
                None => Err(PyErr::value_error(format!(
                    "{name}() arg is an empty sequence"
                ))),
            };
        }
        let op = if name == "min" {
            crate::lang::values::object::CmpOp::Lt
        } else {
            crate::lang::values::object::CmpOp::Gt
        };
        let mut best = items[0].clone();
        let mut bk = match &key {
            Some(k) => self.call_value(k, Args::new(vec![best.clone()]))?,
            None => best.clone(),
        };
        for x in items.into_iter().skip(1) {
            self.check_interrupt_fast()?;
            let xk = match &key {
                Some(k) => self.call_value(k, Args::new(vec![x.clone()]))?,
                None => x.clone(),
            };
            let r = self.rich_compare(op, &xk, &bk)?;
            if self.truthy(&r)? {
                best = x;
                bk = xk;
            }
        }
        Ok(best)
    }

    pub fn round(&mut self, a: &Args) -> PyResult<Value> {
        let v = one(a, "round")?.clone();
        let nd = a
            .pos
            .get(1)
            .cloned()
            .or_else(|| kw(a, "ndigits").cloned())
            .filter(|v| !v.is_none());
        match (&v, nd) {
            (Value::Int(_) | Value::Bool(_), None) => Ok(Value::Int(v.as_int()?)),
            (Value::Int(i), Some(n)) => Ok(Value::Int(round_int(*i, n.as_int()?)?)),
            (Value::Float(x), None) => {
                if !x.is_finite() {
                    return Err(PyErr::float_to_int(*x));
                }
                let r = x.round_ties_even();
                if r.abs() >= 9.223_372_036_854_776e18 {
                    return Err(PyErr::new(
                        "OverflowError",
                        "integer result too large for this kernel's 64-bit int",
                    ));
                }
                Ok(Value::Int(r as i64))
            }
            (Value::Float(x), Some(n)) => Ok(Value::Float(round_float(*x, n.as_int()?))),
            _ => {
                let m = self.get_attr(&v, "__round__")?;
                let args = a.pos[1..].to_vec();
                self.call_value(&m, Args::new(args))
            }
        }
    }
}

/// `round(int, n)`: exact, half to even, as CPython rounds ints.
fn round_int(i: i64, n: i64) -> PyResult<i64> {
    if n >= 0 {
        return Ok(i);
    }
    // 10**39 exceeds every i64, which then rounds to 0.
    let Some(p) = u32::try_from(n.unsigned_abs())
        .ok()
        .filter(|&k| k <= 38)
        .map(|k| 10i128.pow(k))
    else {
        return Ok(0);
    };
    let x = i as i128;
    let (mut q, r) = (x / p, x % p);
    let twice = 2 * r.abs();
    if twice > p || (twice == p && q % 2 != 0) {
        q += x.signum();
    }
    i64::try_from(q * p).map_err(|_| {
        PyErr::new(
            "OverflowError",
            "integer result too large for this kernel's 64-bit int",
        )
    })
}

/// `round(float, n)`: through the exact decimal text, as CPython rounds (so `2.675` gives
/// `2.67`); beyond the digits a double has, the value itself (or a zero of its sign).
fn round_float(x: f64, n: i64) -> f64 {
    // CPython's NDIGITS_MAX and NDIGITS_MIN for doubles.
    if n > 323 || !x.is_finite() {
        return x;
    }
    if n < -308 {
        return 0.0 * x;
    }
    if n >= 0 {
        let s = format!("{:.*}", n as usize, x);
        return s.parse().unwrap_or(x);
    }
    let p = 10f64.powi((-n) as i32);
    let r = (x / p).round_ties_even() * p;
    if r.is_finite() {
        r
    } else {
        x
    }
}
