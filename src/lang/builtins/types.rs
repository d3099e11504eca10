//! Calling the builtin types: `int(x)`, `float(x)`, `str(x)`, `bool(x)`, `list(x)`,
//! `tuple(x)`, `dict(...)`, `set(x)`, `frozenset(x)`, `type(x)`, `range(...)`, `slice(...)`.

use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;

use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::runtime::*;
use crate::lang::values::value::{Dict, HashKey, Value};

/// Why `int(text, base)` failed.
enum IntText {
    /// Not a literal in that base: CPython's ValueError.
    Invalid,
    /// A literal too large for this kernel's 64-bit int.
    Overflow,
}

/// `int()`'s `base` (second positional or keyword), checked as CPython checks it.
fn int_base(a: &Args) -> PyResult<Option<u32>> {
    let given = a
        .pos
        .get(1)
        .or_else(|| a.kw.iter().find(|(k, _)| k == "base").map(|(_, v)| v));
    let Some(b) = given else {
        return Ok(None);
    };
    match b.as_int()? {
        b @ (0 | 2..=36) => Ok(Some(b as u32)),
        _ => Err(PyErr::value_error(
            "int() base must be >= 2 and <= 36, or 0",
        )),
    }
}

/// Parses `text` as CPython's `int(text, base)` does: surrounding whitespace, a sign, the
/// base's optional prefix (`0x`, `0o`, `0b`; with base 0 the prefix chooses the base, and
/// a decimal literal may not start with 0 unless it is all zeros) and single underscores
/// between digits (or right after a prefix). `base` is 0 or 2..=36.
fn parse_int(text: &str, base: u32) -> Result<i64, IntText> {
    let t = text.trim();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = t.get(..2).map(str::to_ascii_lowercase);
    let prefixed = match lower.as_deref() {
        Some("0x") if base == 0 || base == 16 => Some(16),
        Some("0o") if base == 0 || base == 8 => Some(8),
        Some("0b") if base == 0 || base == 2 => Some(2),
        _ => None,
    };
    let (radix, digits, after_prefix) = match prefixed {
        Some(r) => (r, &t[2..], true),
        None => (if base == 0 { 10 } else { base }, t, false),
    };
    // An underscore may follow a prefix, and otherwise only stands between two digits.
    let digits = match digits.strip_prefix('_') {
        Some(rest) if after_prefix => rest,
        _ => digits,
    };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') {
        return Err(IntText::Invalid);
    }
    if digits.contains("__") {
        return Err(IntText::Invalid);
    }
    let mut value: i64 = 0;
    let mut overflow = false;
    let mut nonzero = false;
    for c in digits.chars().filter(|&c| c != '_') {
        let d = c.to_digit(radix).ok_or(IntText::Invalid)?;
        nonzero |= d != 0;
        // Accumulate negatively so that i64::MIN parses too.
        match value
            .checked_mul(i64::from(radix))
            .and_then(|v| v.checked_sub(i64::from(d)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    if base == 0 && prefixed.is_none() && digits.starts_with('0') && nonzero {
        return Err(IntText::Invalid);
    }
    if overflow {
        return Err(IntText::Overflow);
    }
    if neg {
        Ok(value)
    } else {
        value.checked_neg().ok_or(IntText::Overflow)
    }
}

impl Vm<'_> {
    /// Sets from any iterable.
    pub fn make_set(&mut self, v: Option<&Value>, frozen: bool) -> PyResult<Value> {
        let mut m = IndexMap::new();
        if let Some(v) = v {
            for x in self.iter_values(v)? {
                crate::lang::values::memory::map_room_for_one(&mut m)?;
                m.insert(HashKey::of(&x)?, x);
                self.check_interrupt_fast()?;
            }
        }
        Ok(Set::value(m, frozen))
    }

    pub fn call_type(&mut self, name: &str, a: Args) -> PyResult<Value> {
        let x = a.pos.first().cloned();
        Ok(match name {
            "int" => match (x, int_base(&a)?) {
                (None, Some(_)) => return Err(PyErr::type_error("int() missing string argument")),
                (Some(v), Some(_)) if !matches!(v, Value::Str(_)) => {
                    return Err(PyErr::type_error("int() can't convert non-string with explicit base"))
                }
                (x, base) => match x {
                None => Value::Int(0),
                Some(Value::Int(i)) => Value::Int(i),
                Some(Value::Bool(b)) => Value::Int(b as i64),
                Some(Value::Float(f)) => {
                    if !f.is_finite() {
                        return Err(PyErr::float_to_int(f));
                    }
                    if f.abs() >= 9.2e18 {
                        return Err(PyErr::new("OverflowError", "int too large for this kernel's 64-bit int"));
                    }
                    Value::Int(f.trunc() as i64)
                }
                Some(Value::Str(s)) => {
                    let base = base.unwrap_or(10);
                    match parse_int(&s, base) {
                        Ok(i) => Value::Int(i),
                        Err(IntText::Invalid) => return Err(PyErr::value_error(format!("invalid literal for int() with base {base}: {}", crate::lang::datamodel::repr::str_repr(&s)))),
                        Err(IntText::Overflow) => return Err(PyErr::new("OverflowError", "int too large for this kernel's 64-bit int")),
                    }
                }
                Some(v) => match self.try_attr(&v, "__int__")? {
                    Some(m) => self.call_value(&m, Args::default())?,
                    None => return Err(PyErr::type_error(format!("int() argument must be a string, a bytes-like object or a real number, not '{}'", v.type_name()))),
                },
                },
            },
            "float" => match x {
                None => Value::Float(0.0),
                Some(Value::Str(s)) => {
                    let t = s.trim().to_lowercase().replace('_', "");
                    let v = match t.as_str() {
                        "inf" | "+inf" | "infinity" => Some(f64::INFINITY),
                        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
                        "nan" | "+nan" | "-nan" => Some(f64::NAN),
                        _ => t.parse::<f64>().ok(),
                    };
                    match v {
                        Some(f) => Value::Float(f),
                        None => return Err(PyErr::value_error(format!("could not convert string to float: {}", crate::lang::datamodel::repr::str_repr(&s)))),
                    }
                }
                Some(v @ (Value::Int(_) | Value::Bool(_) | Value::Float(_))) => Value::Float(v.as_float()?),
                Some(v) => match self.try_attr(&v, "__float__")? {
                    Some(m) => self.call_value(&m, Args::default())?,
                    None => return Err(PyErr::type_error(format!("float() argument must be a string or a real number, not '{}'", v.type_name()))),
                },
            },
            "str" => match x {
                None => Value::str(""),
                Some(v) => Value::from(self.str_of(&v)?),
            },
            "bool" => match x {
                None => Value::Bool(false),
                Some(v) => Value::Bool(self.truthy(&v)?),
            },
            "list" => Value::list(match x { Some(v) => self.iter_values(&v)?, None => vec![] }),
            "tuple" => Value::tuple(match x { Some(v) => self.iter_values(&v)?, None => vec![] }),
            "set" => self.make_set(x.as_ref(), false)?,
            "frozenset" => self.make_set(x.as_ref(), true)?,
            "dict" => {
                let d = Value::Dict(Rc::new(RefCell::new(Dict::default())));
                self.call_method(&d, "update", a)?;
                d
            }
            "type" => match x {
                Some(v) => self.type_of(&v),
                None => return Err(PyErr::type_error("type() takes 1 or 3 arguments")),
            },
            "range" => {
                let ints = a.pos.iter().map(|v| v.as_int()).collect::<PyResult<Vec<_>>>()?;
                let (start, stop, step) = match ints.as_slice() {
                    [s] => (0, *s, 1),
                    [a, b] => (*a, *b, 1),
                    [a, b, c] => (*a, *b, *c),
                    _ => return Err(PyErr::type_error(format!("range expected at most 3 arguments, got {}", ints.len()))),
                };
                if step == 0 {
                    return Err(PyErr::value_error("range() arg 3 must not be zero"));
                }
                Value::Obj(Rc::new(Range { start, stop, step }))
            }
            "slice" => {
                let g = |i: usize| a.pos.get(i).cloned().unwrap_or(Value::None);
                if a.pos.len() == 1 {
                    Value::Obj(Rc::new(Slice { lo: Value::None, hi: g(0), step: Value::None }))
                } else {
                    Value::Obj(Rc::new(Slice { lo: g(0), hi: g(1), step: g(2) }))
                }
            }
            "object" => Value::Obj(Rc::new(Instance { class: self.exc_class("object"), attrs: Default::default() })),
            other => return Err(PyErr::type_error(format!("cannot create '{other}' instances"))),
        })
    }

    pub fn type_of(&mut self, v: &Value) -> Value {
        if let Some(i) = v.downcast::<Instance>() {
            return i.class.clone();
        }
        let name = v.type_name();
        if let Some(t) = self.core.builtins.get(&name) {
            if t.downcast::<BuiltinType>().is_some() {
                return t.clone();
            }
        }
        let leaked: &'static str = match name.as_str() {
            "NoneType" => "NoneType",
            "function" => "function",
            "module" => "module",
            "builtin_function_or_method" => "builtin_function_or_method",
            "method" => "method",
            "range" => "range",
            _ => return Value::Obj(Rc::new(TypeName(name))),
        };
        Value::Obj(Rc::new(BuiltinType { name: leaked }))
    }
}

/// The type of a native object, shown as `<class 'Name'>`.
pub struct TypeName(pub String);

impl crate::lang::values::object::Object for TypeName {
    fn type_name(&self) -> String {
        "type".into()
    }
    fn repr(&self, _ctx: &mut dyn crate::lang::values::object::Ctx) -> PyResult<String> {
        Ok(format!("<class '{}'>", self.0))
    }
    fn getattr(
        &self,
        _this: &Value,
        name: &str,
        _ctx: &mut dyn crate::lang::values::object::Ctx,
    ) -> PyResult<Option<Value>> {
        Ok(if name == "__name__" {
            Some(Value::str(&self.0))
        } else {
            None
        })
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
