//! Builtins that look at objects and the namespace: `isinstance`/`issubclass` (builtin types,
//! classes, native classes, tuples of them), `hasattr`/`getattr`/`setattr`/`delattr`,
//! `callable`, `repr`, `format`, `id`, `hash`, `dir`, `vars`, `globals`/`locals`, and the
//! descriptors `property`, `staticmethod` and `classmethod`.

use std::cell::RefCell;
use std::rc::Rc;

use super::namespace::{kw, one, unknown, Builtin};
use super::wrappers::{WrapKind, Wrapper};
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::runtime::*;
use crate::lang::values::value::{Dict, HashKey, Value};

/// The builtin functions this file answers for.
pub(super) const NAMES: &[&str] = &[
    "isinstance",
    "issubclass",
    "hasattr",
    "getattr",
    "setattr",
    "delattr",
    "callable",
    "repr",
    "format",
    "id",
    "hash",
    "dir",
    "vars",
    "globals",
    "locals",
    "property",
    "staticmethod",
    "classmethod",
    "super",
];

impl Vm<'_> {
    /// Calls the builtin `name` (one of [`NAMES`]).
    pub(super) fn builtin_introspection(&mut self, name: &str, a: Args) -> PyResult<Value> {
        Ok(match name {
            "isinstance" => {
                let v = one(&a, name)?.clone();
                let c =
                    a.pos.get(1).cloned().ok_or_else(|| {
                        PyErr::type_error("isinstance expected 2 arguments, got 1")
                    })?;
                Value::Bool(self.isinstance(&v, &c)?)
            }
            "issubclass" => {
                let c = one(&a, name)?.clone();
                let b = a.pos.get(1).cloned().unwrap_or(Value::None);
                Value::Bool(self.issubclass(&c, &b))
            }
            "hasattr" => {
                let n = attr_name(&a)?;
                match self.try_attr(one(&a, name)?, &n) {
                    Ok(v) => Value::Bool(v.is_some()),
                    Err(e) if e.type_name() == "AttributeError" => Value::Bool(false),
                    Err(e) => return Err(e),
                }
            }
            "getattr" => {
                let n = attr_name(&a)?;
                match (self.get_attr(one(&a, name)?, &n), a.pos.get(2)) {
                    (Ok(v), _) => v,
                    (Err(e), Some(d)) if e.type_name() == "AttributeError" => d.clone(),
                    (Err(e), _) => return Err(e),
                }
            }
            "setattr" => {
                let n = attr_name(&a)?;
                self.set_attr(
                    one(&a, name)?,
                    &n,
                    a.pos.get(2).cloned().unwrap_or(Value::None),
                )?;
                Value::None
            }
            "delattr" => {
                let n = attr_name(&a)?;
                self.del_attr(one(&a, name)?, &n)?;
                Value::None
            }
            "callable" => Value::Bool(self.is_callable(one(&a, name)?)),
            "repr" => Value::from(self.repr_of(one(&a, name)?)?),
            "format" => {
                let spec = a
                    .pos
                    .get(1)
                    .map(|v| v.as_str().map(String::from))
                    .transpose()?
                    .unwrap_or_default();
                Value::from(self.format_value(one(&a, name)?, &spec)?)
            }
            "id" => Value::Int(match one(&a, name)? {
                Value::Obj(o) | Value::Native(o) => Rc::as_ptr(o) as *const u8 as usize as i64,
                Value::List(l) => Rc::as_ptr(l) as usize as i64,
                Value::Dict(d) => Rc::as_ptr(d) as usize as i64,
                Value::Str(s) => s.as_ptr() as usize as i64,
                Value::Tuple(t) => t.as_ptr() as usize as i64,
                Value::Int(i) => *i,
                other => other.type_name().len() as i64,
            }),
            "hash" => {
                use std::hash::{Hash, Hasher};
                let k = HashKey::of(one(&a, name)?)?;
                match k {
                    HashKey::Int(i) => Value::Int(if i == -1 { -2 } else { i }),
                    other => {
                        let mut h = std::collections::hash_map::DefaultHasher::new();
                        other.hash(&mut h);
                        Value::Int(h.finish() as i64 >> 1)
                    }
                }
            }
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
            "property" => {
                // property(fget=None, fset=None, fdel=None, doc=None)
                let arg = |i: usize, k: &str| a.pos.get(i).cloned().or_else(|| kw(&a, k).cloned());
                let none = |v: Option<Value>| v.filter(|v| !matches!(v, Value::None));
                Value::Obj(Rc::new(Wrapper {
                    kind: WrapKind::Property,
                    func: arg(0, "fget").unwrap_or(Value::None),
                    setter: RefCell::new(none(arg(1, "fset"))),
                    name: RefCell::new(None),
                }))
            }
            "staticmethod" | "classmethod" => {
                let kind = match name {
                    "staticmethod" => WrapKind::Static,
                    _ => WrapKind::ClassMethod,
                };
                Value::Obj(Rc::new(Wrapper {
                    kind,
                    func: one(&a, name)?.clone(),
                    setter: RefCell::new(None),
                    name: RefCell::new(None),
                }))
            }
            "super" => return Err(PyErr::runtime_error("super(): __class__ cell not found")),
            _ => return Err(unknown(name)),
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
                Value::Dict(d) => d
                    .borrow()
                    .kind
                    .iter()
                    .map(|k| k.type_name().into())
                    .collect(),
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
}

/// The attribute name `hasattr`/`getattr`/`setattr`/`delattr` take second (a `str`).
fn attr_name(a: &Args) -> PyResult<String> {
    Ok(a.pos
        .get(1)
        .map(|v| v.as_str().map(String::from))
        .transpose()?
        .unwrap_or_default())
}
