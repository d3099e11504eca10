//! Operators on values: arithmetic with CPython's rules (int overflow is `OverflowError`,
//! floor division and modulo follow the divisor's sign, true division gives floats),
//! comparisons (including lexicographic sequences), truthiness, and user `__dunder__`
//! methods and native `binop`s for everything else.

use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::memory;
use crate::lang::values::object::{Args, BinOp, UnaryOp};
use crate::lang::values::runtime::{Instance, Set};
use crate::lang::values::value::{Dict, Value};

/// A repetition count: negative counts repeat nothing, as in Python.
fn count(n: &Value) -> PyResult<usize> {
    Ok(usize::try_from(n.as_int()?.max(0)).unwrap_or(usize::MAX))
}

fn overflow() -> PyErr {
    PyErr::new(
        "OverflowError",
        "integer result too large for this kernel's 64-bit int",
    )
}

fn zero_div(what: &str) -> PyErr {
    PyErr::new("ZeroDivisionError", what.to_string())
}

pub fn op_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::FloorDiv => "//",
        BinOp::Mod => "%",
        BinOp::Pow => "** or pow()",
        BinOp::MatMul => "@",
        BinOp::BitAnd => "&",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::LShift => "<<",
        BinOp::RShift => ">>",
    }
}

fn dunder(op: BinOp) -> (&'static str, &'static str) {
    match op {
        BinOp::Add => ("__add__", "__radd__"),
        BinOp::Sub => ("__sub__", "__rsub__"),
        BinOp::Mul => ("__mul__", "__rmul__"),
        BinOp::Div => ("__truediv__", "__rtruediv__"),
        BinOp::FloorDiv => ("__floordiv__", "__rfloordiv__"),
        BinOp::Mod => ("__mod__", "__rmod__"),
        BinOp::Pow => ("__pow__", "__rpow__"),
        BinOp::MatMul => ("__matmul__", "__rmatmul__"),
        BinOp::BitAnd => ("__and__", "__rand__"),
        BinOp::BitOr => ("__or__", "__ror__"),
        BinOp::BitXor => ("__xor__", "__rxor__"),
        BinOp::LShift => ("__lshift__", "__rlshift__"),
        BinOp::RShift => ("__rshift__", "__rrshift__"),
    }
}

pub fn int_op(op: BinOp, a: i64, b: i64) -> PyResult<Value> {
    Ok(Value::Int(match op {
        BinOp::Add => a.checked_add(b).ok_or_else(overflow)?,
        BinOp::Sub => a.checked_sub(b).ok_or_else(overflow)?,
        BinOp::Mul => a.checked_mul(b).ok_or_else(overflow)?,
        BinOp::Div => {
            if b == 0 {
                return Err(zero_div("division by zero"));
            }
            return Ok(Value::Float(a as f64 / b as f64));
        }
        BinOp::FloorDiv => {
            if b == 0 {
                return Err(zero_div("integer division or modulo by zero"));
            }
            let q = a.checked_div(b).ok_or_else(overflow)?;
            if (a % b != 0) && ((a < 0) != (b < 0)) {
                q - 1
            } else {
                q
            }
        }
        BinOp::Mod => {
            if b == 0 {
                return Err(zero_div("integer modulo by zero"));
            }
            let r = a.checked_rem(b).unwrap_or(0);
            if r != 0 && ((r < 0) != (b < 0)) {
                r + b
            } else {
                r
            }
        }
        BinOp::Pow => {
            if b < 0 {
                return Ok(Value::Float((a as f64).powf(b as f64)));
            }
            let e = u32::try_from(b).map_err(|_| overflow())?;
            a.checked_pow(e).ok_or_else(overflow)?
        }
        BinOp::BitAnd => a & b,
        BinOp::BitOr => a | b,
        BinOp::BitXor => a ^ b,
        BinOp::LShift => {
            if b < 0 {
                return Err(PyErr::value_error("negative shift count"));
            }
            if b >= 64 || (a << b) >> b != a {
                return Err(overflow());
            }
            a << b
        }
        BinOp::RShift => {
            if b < 0 {
                return Err(PyErr::value_error("negative shift count"));
            }
            a >> b.min(63)
        }
        BinOp::MatMul => {
            return Err(PyErr::type_error(
                "unsupported operand type(s) for @: 'int' and 'int'",
            ))
        }
    }))
}

fn float_op(op: BinOp, a: f64, b: f64) -> PyResult<Option<Value>> {
    Ok(Some(Value::Float(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => {
            if b == 0.0 {
                return Err(zero_div("float division by zero"));
            }
            a / b
        }
        BinOp::FloorDiv => {
            if b == 0.0 {
                return Err(zero_div("float floor division by zero"));
            }
            (a / b).floor()
        }
        BinOp::Mod => {
            if b == 0.0 {
                return Err(zero_div("float modulo"));
            }
            let r = a % b;
            if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
                r + b
            } else {
                r
            }
        }
        BinOp::Pow => {
            if a == 0.0 && b < 0.0 {
                return Err(zero_div("0.0 cannot be raised to a negative power"));
            }
            let r = a.powf(b);
            if r.is_infinite() && a.is_finite() && b.is_finite() {
                return Err(PyErr::new(
                    "OverflowError",
                    "(34, 'Numerical result out of range')",
                ));
            }
            r
        }
        _ => return Ok(None),
    })))
}

impl Vm<'_> {
    pub fn binop(&mut self, op: BinOp, a: &Value, b: &Value) -> PyResult<Value> {
        match (a, b) {
            (Value::Int(x), Value::Int(y)) => return int_op(op, *x, *y),
            (Value::Float(x), Value::Float(y)) => {
                if let Some(v) = float_op(op, *x, *y)? {
                    return Ok(v);
                }
            }
            _ => {}
        }
        // A dict subclass's operators (`Counter + Counter`) come before dict's own `|`.
        for (this, other, reflected) in [(a, b, false), (b, a, true)] {
            if let Some(kind) = Dict::kind_of(this) {
                if let Some(v) = kind.binop(op, this, other, reflected, self)? {
                    return Ok(v);
                }
            }
        }
        if let Some(v) = self.builtin_binop(op, a, b)? {
            return Ok(v);
        }
        let (name, rname) = dunder(op);
        if let Some(v) = self.user_binop(a, name, b)? {
            return Ok(v);
        }
        if let Value::Native(o) = a {
            let o = o.clone();
            if let Some(v) = o.binop(op, b, false, self)? {
                return Ok(v);
            }
        }
        if let Some(v) = self.user_binop(b, rname, a)? {
            return Ok(v);
        }
        if let Value::Native(o) = b {
            let o = o.clone();
            if let Some(v) = o.binop(op, a, true, self)? {
                return Ok(v);
            }
        }
        if op == BinOp::Mod {
            if let Value::Str(s) = a {
                return Ok(Value::from(self.percent_format(s, b)?));
            }
        }
        if op == BinOp::Add && matches!(a, Value::Str(_) | Value::List(_) | Value::Tuple(_)) {
            return Err(PyErr::type_error(format!(
                "can only concatenate {0} (not \"{1}\") to {0}",
                a.type_name(),
                b.type_name()
            )));
        }
        Err(PyErr::type_error(format!(
            "unsupported operand type(s) for {}: '{}' and '{}'",
            op_symbol(op),
            a.type_name(),
            b.type_name()
        )))
    }

    pub fn user_binop(&mut self, a: &Value, name: &str, b: &Value) -> PyResult<Option<Value>> {
        if a.downcast::<Instance>().is_none() {
            return Ok(None);
        }
        let Some(m) = self.try_attr(a, name)? else {
            return Ok(None);
        };
        let r = self.call_value(&m, Args::new(vec![b.clone()]))?;
        if r.downcast::<crate::lang::values::runtime::Singleton>()
            .map(|s| s.0 == "NotImplemented")
            .unwrap_or(false)
        {
            return Ok(None);
        }
        Ok(Some(r))
    }

    fn builtin_binop(&mut self, op: BinOp, a: &Value, b: &Value) -> PyResult<Option<Value>> {
        use Value::{Bool, Dict, Float, Int, List, Str, Tuple};
        let num = |v: &Value| matches!(v, Int(_) | Float(_) | Bool(_));
        if num(a) && num(b) {
            // Floats are told apart first: asking a float for its int builds an error
            // message, which made every mixed int and float operation allocate.
            if !matches!(a, Float(_)) && !matches!(b, Float(_)) {
                return int_op(op, a.as_int()?, b.as_int()?).map(Some);
            }
            return float_op(op, a.as_float()?, b.as_float()?);
        }
        Ok(match (op, a, b) {
            (BinOp::Add, Str(x), Str(y)) => Some(Value::from(memory::concat(&[x, y])?)),
            (BinOp::Add, List(x), List(y)) => {
                let v = memory::joined(&x.borrow(), &y.borrow())?;
                Some(Value::list(v))
            }
            (BinOp::Add, Tuple(x), Tuple(y)) => Some(Value::tuple(memory::joined(x, y)?)),
            (BinOp::Mul, Str(s), n @ (Int(_) | Bool(_)))
            | (BinOp::Mul, n @ (Int(_) | Bool(_)), Str(s)) => {
                let n = count(n)?;
                Some(Value::from(memory::repeat_str(s, n)?))
            }
            (BinOp::Mul, List(l), n @ (Int(_) | Bool(_)))
            | (BinOp::Mul, n @ (Int(_) | Bool(_)), List(l)) => {
                let n = count(n)?;
                let v = memory::repeat(&l.borrow(), n)?;
                Some(Value::list(v))
            }
            (BinOp::Mul, Tuple(t), n @ (Int(_) | Bool(_)))
            | (BinOp::Mul, n @ (Int(_) | Bool(_)), Tuple(t)) => {
                Some(Value::tuple(memory::repeat(t, count(n)?)?))
            }
            (BinOp::BitOr, Dict(x), Dict(y)) => {
                let mut d = x.borrow().clone();
                for (k, v) in y.borrow().items() {
                    d.insert(k.clone(), v.clone())?;
                }
                Some(Value::Dict(std::rc::Rc::new(std::cell::RefCell::new(d))))
            }
            _ => {
                if let (Some(x), Some(y)) = (a.downcast::<Set>(), b.downcast::<Set>()) {
                    let name = match op {
                        BinOp::BitOr => "union",
                        BinOp::BitAnd => "intersection",
                        BinOp::Sub => "difference",
                        BinOp::BitXor => "symmetric_difference",
                        _ => return Ok(None),
                    };
                    let _ = (x, y);
                    return self
                        .call_method(a, name, Args::new(vec![b.clone()]))
                        .map(Some);
                }
                None
            }
        })
    }

    pub fn unary(&mut self, op: UnaryOp, v: &Value) -> PyResult<Value> {
        match (op, v) {
            (UnaryOp::Neg, Value::Int(i)) => i.checked_neg().map(Value::Int).ok_or_else(overflow),
            (UnaryOp::Neg, Value::Float(x)) => Ok(Value::Float(-x)),
            (UnaryOp::Neg, Value::Bool(b)) => Ok(Value::Int(-(*b as i64))),
            (UnaryOp::Pos, Value::Int(_) | Value::Float(_)) => Ok(v.clone()),
            (UnaryOp::Pos, Value::Bool(b)) => Ok(Value::Int(*b as i64)),
            (UnaryOp::Invert, Value::Int(i)) => Ok(Value::Int(!i)),
            (UnaryOp::Invert, Value::Bool(b)) => Ok(Value::Int(!(*b as i64))),
            (_, Value::Native(o)) => {
                let o = o.clone();
                o.unary(op, self)
            }
            _ => {
                let name = match op {
                    UnaryOp::Neg => "__neg__",
                    UnaryOp::Pos => "__pos__",
                    UnaryOp::Invert => "__invert__",
                };
                if v.downcast::<Instance>().is_some() {
                    if let Some(m) = self.try_attr(v, name)? {
                        return self.call_value(&m, Args::default());
                    }
                }
                let sym = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Pos => "+",
                    UnaryOp::Invert => "~",
                };
                Err(PyErr::type_error(format!(
                    "bad operand type for unary {sym}: '{}'",
                    v.type_name()
                )))
            }
        }
    }

    pub fn truthy(&mut self, v: &Value) -> PyResult<bool> {
        Ok(match v {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(x) => *x != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.borrow().is_empty(),
            Value::Tuple(t) => !t.is_empty(),
            Value::Dict(d) => !d.borrow().is_empty(),
            Value::Native(o) => {
                let o = o.clone();
                match o.truthy(self)? {
                    Some(b) => b,
                    None => o.len(self)?.map(|n| n > 0).unwrap_or(true),
                }
            }
            Value::Obj(_) => {
                if let Some(s) = v.downcast::<Set>() {
                    return Ok(!s.items.borrow().is_empty());
                }
                if let Some(r) = v.downcast::<crate::lang::values::runtime::Range>() {
                    return Ok(r.len() > 0);
                }
                if v.downcast::<Instance>().is_some() {
                    if let Some(m) = self.try_attr(v, "__bool__")? {
                        let r = self.call_value(&m, Args::default())?;
                        return self.truthy(&r);
                    }
                    if let Some(m) = self.try_attr(v, "__len__")? {
                        let r = self.call_value(&m, Args::default())?;
                        return Ok(r.as_int()? != 0);
                    }
                }
                true
            }
        })
    }
}
