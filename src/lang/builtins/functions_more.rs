//! More builtins: `min`/`max`, `round`, `isinstance`/`issubclass`, `callable`, sets
//! and `globals()`, split from `builtins.rs` to keep files short.

use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;

use super::functions::Builtin;
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::runtime::*;
use crate::lang::values::value::{Dict, HashKey, Value};

fn kw<'a>(a: &'a Args, name: &str) -> Option<&'a Value> {
    a.kw.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn one<'a>(a: &'a Args, f: &str) -> PyResult<&'a Value> {
    a.pos
        .first()
        .ok_or_else(|| PyErr::type_error(format!("{f}() takes exactly one argument (0 given)")))
}

impl Vm<'_> {
    /// The second half of the builtin functions (see `call_builtin`).
    pub fn call_builtin_more(&mut self, name: &str, a: Args) -> PyResult<Value> {
        Ok(match name {
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
            "any" | "all" => {
                let items = self.iter_values(one(&a, name)?)?;
                let want = name == "any";
                for x in items {
                    if self.truthy(&x)? == want {
                        return Ok(Value::Bool(want));
                    }
                }
                Value::Bool(!want)
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
            "input" => {
                let prompt = match a.pos.first() {
                    Some(v) => self.str_of(v)?,
                    None => String::new(),
                };
                Value::from(crate::lang::values::object::Ctx::input(
                    self, &prompt, false,
                )?)
            }
            "open" => super::files::open(self, &a)?,
            "dir" => match a.pos.first() {
                Some(v) => Value::list(
                    self.dir_of(&v.clone())
                        .into_iter()
                        .map(Value::from)
                        .collect(),
                ),
                None => {
                    let mut names: Vec<String> = self
                        .core
                        .globals
                        .borrow()
                        .keys()
                        .map(|k| k.to_string())
                        .collect();
                    names.sort();
                    Value::list(names.into_iter().map(Value::from).collect())
                }
            },
            "vars" => match a.pos.first() {
                Some(v) => self.get_attr(v, "__dict__")?,
                None => self.globals_dict(),
            },
            "globals" | "locals" => self.globals_dict(),
            "help" => {
                // As in IPython, help text goes to the front end's pager.
                if let Some(v) = a.pos.first() {
                    let text = crate::lang::ipython::help::help_text(self, v)?;
                    self.pager.push(crate::display::plain(text));
                }
                Value::None
            }
            "display" => {
                for v in &a.pos {
                    let data = self.rich_of(v)?;
                    crate::lang::values::object::Ctx::emit(
                        self,
                        crate::cell::Output::DisplayData {
                            data,
                            metadata: Default::default(),
                            display_id: None,
                        },
                    );
                }
                Value::None
            }
            _ => return Err(PyErr::not_implemented(format!("{name}() is not available"))),
        })
    }
    pub fn globals_dict(&mut self) -> Value {
        let mut d = Dict::default();
        for (k, v) in self.core.globals.borrow().iter() {
            d.insert_str(k, v.clone());
        }
        Value::Dict(Rc::new(RefCell::new(d)))
    }

    pub fn is_callable(&mut self, v: &Value) -> bool {
        match v {
            Value::Obj(o) => {
                let any = o.as_any();
                any.is::<Function>()
                    || any.is::<BoundMethod>()
                    || any.is::<Class>()
                    || any.is::<BuiltinType>()
                    || any.is::<Builtin>()
                    || any.is::<super::wrappers::MethodRef>()
                    || (any.is::<Instance>()
                        && self.try_attr(v, "__call__").ok().flatten().is_some())
            }
            Value::Native(o) => {
                let any = o.as_any();
                any.is::<crate::lang::NativeFn>()
                    || any.is::<crate::lang::NativeClass>()
                    || o.doc().is_some() && !any.is::<crate::lang::NativeModule>()
            }
            _ => false,
        }
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
                    return Err(PyErr::new(
                        if x.is_nan() {
                            "ValueError"
                        } else {
                            "OverflowError"
                        },
                        if x.is_nan() {
                            "cannot convert float NaN to integer"
                        } else {
                            "cannot convert float infinity to integer"
                        },
                    ));
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

    pub fn isinstance(&mut self, v: &Value, c: &Value) -> PyResult<bool> {
        if let Some(items) = c.as_seq() {
            for x in items {
                if self.isinstance(v, &x)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        if let Some(t) = c.downcast::<BuiltinType>() {
            let tn = v.type_name();
            return Ok(match t.name {
                "object" => true,
                "int" => matches!(v, Value::Int(_) | Value::Bool(_)),
                "type" => {
                    v.downcast::<Class>().is_some()
                        || v.downcast::<BuiltinType>().is_some()
                        || v.downcast::<crate::lang::NativeClass>().is_some()
                }
                n => tn == n,
            });
        }
        if let Some(cls) = c.downcast::<Class>() {
            if let Some(i) = v.downcast::<Instance>() {
                if let Some(ic) = i.class() {
                    return Ok(ic.is_subclass_of(cls));
                }
            }
            return Ok(false);
        }
        if let Some(nc) = c.downcast::<crate::lang::NativeClass>() {
            let chain: Vec<String> = match v {
                Value::Native(o) => o.class_chain(),
                _ => match v
                    .downcast::<Instance>()
                    .and_then(|i| i.class())
                    .and_then(|c| c.native_base())
                {
                    Some(nb) => match nb.downcast::<crate::lang::NativeClass>() {
                        Some(n) => {
                            let mut ch = vec![n.name.clone()];
                            ch.extend(n.bases.clone());
                            ch
                        }
                        None => vec![],
                    },
                    None => vec![],
                },
            };
            return Ok(chain.contains(&nc.name));
        }
        Err(PyErr::type_error(
            "isinstance() arg 2 must be a type, a tuple of types, or a union",
        ))
    }

    pub fn issubclass(&mut self, c: &Value, b: &Value) -> bool {
        if let Some(items) = b.as_seq() {
            return items.iter().any(|x| self.issubclass(c, x));
        }
        match (c.downcast::<Class>(), b.downcast::<Class>()) {
            (Some(x), Some(y)) => x.is_subclass_of(y),
            _ => {
                if let (Some(x), Some(y)) =
                    (c.downcast::<BuiltinType>(), b.downcast::<BuiltinType>())
                {
                    return x.name == y.name
                        || y.name == "object"
                        || (x.name == "bool" && y.name == "int");
                }
                b.downcast::<BuiltinType>()
                    .map(|t| t.name == "object")
                    .unwrap_or(false)
            }
        }
    }

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
