//! `datetime.timedelta`: a duration kept as CPython keeps it (days, seconds in a day,
//! microseconds in a second, the days carrying the sign), built from any mix of weeks,
//! days, hours, minutes, seconds, milliseconds and microseconds (floats rounded half to
//! even), with its arithmetic, comparisons, `total_seconds`, repr and str.

use std::any::Any;

use crate::bindings::common::arg;
use crate::lang::{Args, BinOp, CmpOp, Ctx, Object, PyErr, PyResult, UnaryOp, Value};

pub const MICROS_PER_DAY: i128 = 86_400_000_000;
const MAX_DAYS: i128 = 999_999_999;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Delta {
    /// The whole duration in microseconds.
    pub micros: i128,
}

impl Delta {
    pub fn new(micros: i128) -> PyResult<Delta> {
        let days = micros.div_euclid(MICROS_PER_DAY);
        if days.abs() > MAX_DAYS {
            return Err(PyErr::new(
                "OverflowError",
                format!("days={days}; must have magnitude <= 999999999"),
            ));
        }
        Ok(Delta { micros })
    }

    pub fn value(micros: i128) -> PyResult<Value> {
        Ok(Value::native(Delta::new(micros)?))
    }

    pub fn days(&self) -> i64 {
        self.micros.div_euclid(MICROS_PER_DAY) as i64
    }
    pub fn seconds(&self) -> i64 {
        (self.micros.rem_euclid(MICROS_PER_DAY) / 1_000_000) as i64
    }
    pub fn microseconds(&self) -> i64 {
        self.micros.rem_euclid(1_000_000) as i64
    }

    fn total_seconds(&self) -> f64 {
        self.micros as f64 / 1e6
    }
}

/// A count of microseconds from a number of `unit`s, floats rounded half to even.
fn micros_of(v: &Value, unit: i128) -> PyResult<i128> {
    match v {
        Value::Int(_) | Value::Bool(_) => Ok(v.as_int()? as i128 * unit),
        Value::Float(x) => {
            let m = x * unit as f64;
            if !m.is_finite() {
                return Err(PyErr::value_error(format!(
                    "cannot convert float {} to integer",
                    if m.is_nan() { "NaN" } else { "infinity" }
                )));
            }
            Ok(round_half_even(m))
        }
        // The caller names the component.
        other => Err(PyErr::type_error(other.type_name())),
    }
}

pub fn round_half_even(x: f64) -> i128 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && (r as i128) % 2 != 0 {
        (r - x.signum()) as i128
    } else {
        r as i128
    }
}

pub fn timedelta(a: &Args, _: &mut dyn Ctx) -> PyResult<Value> {
    let names = [
        "days",
        "seconds",
        "microseconds",
        "milliseconds",
        "minutes",
        "hours",
        "weeks",
    ];
    let units: [i128; 7] = [
        MICROS_PER_DAY,
        1_000_000,
        1,
        1_000,
        60_000_000,
        3_600_000_000,
        7 * MICROS_PER_DAY,
    ];
    let s = a.bind("timedelta", &names, 0)?;
    let mut total = 0i128;
    for (i, unit) in units.iter().enumerate() {
        let v = arg(&s, i);
        if !matches!(v, Value::None) {
            total += micros_of(v, *unit).map_err(|e| {
                if e.type_name() == "TypeError" {
                    PyErr::type_error(format!(
                        "unsupported type for timedelta {} component: {}",
                        names[i],
                        v.type_name()
                    ))
                } else {
                    e
                }
            })?;
        }
    }
    Delta::value(total)
}

const ATTRS: &[&str] = &["days", "seconds", "microseconds", "total_seconds"];

impl Object for Delta {
    fn type_name(&self) -> String {
        "timedelta".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let mut parts = vec![];
        if self.days() != 0 {
            parts.push(format!("days={}", self.days()));
        }
        if self.seconds() != 0 {
            parts.push(format!("seconds={}", self.seconds()));
        }
        if self.microseconds() != 0 {
            parts.push(format!("microseconds={}", self.microseconds()));
        }
        if parts.is_empty() {
            parts.push("0".into());
        }
        Ok(format!("datetime.timedelta({})", parts.join(", ")))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let s = self.seconds();
        let mut out = format!("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60);
        if self.microseconds() != 0 {
            out.push_str(&format!(".{:06}", self.microseconds()));
        }
        let d = self.days();
        if d != 0 {
            let plural = if d.abs() != 1 { "s" } else { "" };
            out = format!("{d} day{plural}, {out}");
        }
        Ok(out)
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "days" => Some(Value::Int(self.days())),
            "seconds" => Some(Value::Int(self.seconds())),
            "microseconds" => Some(Value::Int(self.microseconds())),
            "total_seconds" => {
                let me = this.clone();
                Some(super::super::f("total_seconds", "", move |a, _| {
                    a.bind("total_seconds", &[], 0)?;
                    Ok(match me.downcast::<Delta>() {
                        Some(d) => Value::Float(d.total_seconds()),
                        None => Value::None,
                    })
                }))
            }
            _ => None,
        })
    }
    fn dir(&self) -> Vec<String> {
        ATTRS.iter().map(|s| s.to_string()).collect()
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        _ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        let me = self.micros;
        if let Some(o) = other.downcast::<Delta>() {
            let (a, b) = if reflected {
                (o.micros, me)
            } else {
                (me, o.micros)
            };
            return Ok(Some(match op {
                BinOp::Add => Delta::value(a + b)?,
                BinOp::Sub => Delta::value(a - b)?,
                BinOp::Div => {
                    if b == 0 {
                        return Err(PyErr::new("ZeroDivisionError", "division by zero"));
                    }
                    Value::Float(a as f64 / b as f64)
                }
                BinOp::FloorDiv => {
                    if b == 0 {
                        return Err(PyErr::new(
                            "ZeroDivisionError",
                            "integer division or modulo by zero",
                        ));
                    }
                    Value::Int(a.div_euclid(b) as i64)
                }
                BinOp::Mod => {
                    if b == 0 {
                        return Err(PyErr::new(
                            "ZeroDivisionError",
                            "integer division or modulo by zero",
                        ));
                    }
                    Delta::value(a.rem_euclid(b))?
                }
                _ => return Ok(None),
            }));
        }
        match (op, other, reflected) {
            (BinOp::Mul, Value::Int(_) | Value::Bool(_), _) => {
                Ok(Some(Delta::value(me * other.as_int()? as i128)?))
            }
            (BinOp::Mul, Value::Float(x), _) => {
                Ok(Some(Delta::value(round_half_even(me as f64 * x))?))
            }
            (BinOp::FloorDiv, Value::Int(n), false) => {
                if *n == 0 {
                    return Err(PyErr::new(
                        "ZeroDivisionError",
                        "integer division or modulo by zero",
                    ));
                }
                Ok(Some(Delta::value(me.div_euclid(*n as i128))?))
            }
            (BinOp::Div, Value::Int(_) | Value::Float(_), false) => {
                let x = other.as_float()?;
                if x == 0.0 {
                    return Err(PyErr::new("ZeroDivisionError", "division by zero"));
                }
                Ok(Some(Delta::value(round_half_even(me as f64 / x))?))
            }
            _ => Ok(None),
        }
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let Some(o) = other.downcast::<Delta>() else {
            return Ok(None);
        };
        Ok(Some(Value::Bool(super::ordered(
            op,
            self.micros.cmp(&o.micros),
        ))))
    }
    fn unary(&self, op: UnaryOp, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        match op {
            UnaryOp::Neg => Delta::value(-self.micros),
            UnaryOp::Pos => Delta::value(self.micros),
            UnaryOp::Invert => Err(PyErr::type_error(
                "bad operand type for unary ~: 'datetime.timedelta'",
            )),
        }
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        Ok(Some(self.micros != 0))
    }
    fn hash(&self) -> Option<u64> {
        Some(self.micros as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
