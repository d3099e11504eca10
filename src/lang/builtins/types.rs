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

fn parse_int(s: &str, base: u32) -> Option<i64> {
    let t = s.trim().replace('_', "");
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r.to_string()),
        None => (false, t.strip_prefix('+').unwrap_or(&t).to_string()),
    };
    let t = match base {
        16 => t
            .trim_start_matches("0x")
            .trim_start_matches("0X")
            .to_string(),
        2 => t.trim_start_matches("0b").to_string(),
        8 => t.trim_start_matches("0o").to_string(),
        _ => t,
    };
    let v = i64::from_str_radix(&t, base).ok()?;
    Some(if neg { -v } else { v })
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
            "int" => match x {
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
                    let base = a.pos.get(1).map(|b| b.as_int()).transpose()?.unwrap_or(10) as u32;
                    match parse_int(&s, base) {
                        Some(i) => Value::Int(i),
                        None => return Err(PyErr::value_error(format!("invalid literal for int() with base {base}: {}", crate::lang::datamodel::repr::str_repr(&s)))),
                    }
                }
                Some(v) => match self.try_attr(&v, "__int__")? {
                    Some(m) => self.call_value(&m, Args::default())?,
                    None => return Err(PyErr::type_error(format!("int() argument must be a string, a bytes-like object or a real number, not '{}'", v.type_name()))),
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
