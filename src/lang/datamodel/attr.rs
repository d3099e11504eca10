//! Attribute access (get, set, delete) across every kind of value: the methods of builtin
//! containers, interpreter objects (instances look in their own dict, then their class
//! chain, then a native base class) and natives (through their `Object` methods), and the
//! `AttributeError` texts CPython gives. Items and iteration are `items.rs`; context
//! managers are `eval/ctxmgr.rs`.

use std::rc::Rc;

use crate::lang::builtins::wrappers::{MethodRef, Super, WrapKind, Wrapper};
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::runtime::*;
use crate::lang::values::value::{Dict, Value};
use crate::lang::{NativeClass, NativeModule};

/// The methods (and number attributes) of each builtin type: the one list that `getattr`, `hasattr`, `dir()`,
/// completion and the unbound form (`str.lower`) consult, so a name is offered exactly
/// when `Vm::call_method` implements it (tests/it/lang_tables.rs walks it).
const METHODS: &[(&str, &[&str])] = &[
    (
        "str",
        &[
            "upper",
            "lower",
            "strip",
            "lstrip",
            "rstrip",
            "split",
            "rsplit",
            "join",
            "replace",
            "startswith",
            "endswith",
            "find",
            "rfind",
            "index",
            "rindex",
            "count",
            "format",
            "title",
            "capitalize",
            "isdigit",
            "isalpha",
            "isalnum",
            "isspace",
            "isupper",
            "islower",
            "center",
            "ljust",
            "rjust",
            "zfill",
            "splitlines",
            "partition",
            "casefold",
            "swapcase",
            "isidentifier",
            "isnumeric",
            "removeprefix",
            "removesuffix",
            "expandtabs",
        ],
    ),
    (
        "list",
        &[
            "append", "extend", "pop", "insert", "remove", "index", "count", "sort", "reverse",
            "copy", "clear",
        ],
    ),
    ("tuple", &["index", "count"]),
    (
        "dict",
        &[
            "keys",
            "values",
            "items",
            "get",
            "pop",
            "setdefault",
            "update",
            "copy",
            "clear",
            "popitem",
            "fromkeys",
        ],
    ),
    (
        "set",
        &[
            "add",
            "remove",
            "discard",
            "pop",
            "union",
            "intersection",
            "difference",
            "symmetric_difference",
            "issubset",
            "issuperset",
            "isdisjoint",
            "update",
            "copy",
            "clear",
        ],
    ),
    (
        "frozenset",
        &[
            "union",
            "intersection",
            "difference",
            "symmetric_difference",
            "issubset",
            "issuperset",
            "isdisjoint",
            "copy",
        ],
    ),
    (
        "int",
        &[
            "bit_length",
            "conjugate",
            "real",
            "imag",
            "numerator",
            "denominator",
        ],
    ),
    ("float", &["is_integer", "conjugate", "real", "imag"]),
];

pub fn builtin_methods(ty: &str) -> &'static [&'static str] {
    METHODS
        .iter()
        .find(|(t, _)| *t == ty)
        .map(|(_, m)| *m)
        .unwrap_or(&[])
}

/// `str.lower` and its kind: the method as a function of its receiver, so that
/// `sorted(words, key=str.lower)` and `list.append(xs, 1)` work, with CPython's errors.
fn unbound_method(ty: &'static str, name: &str) -> Value {
    let name = name.to_string();
    crate::lang::NativeFn::value(&name.clone(), "", move |a, ctx| {
        let Some((this, rest)) = a.pos.split_first() else {
            return Err(PyErr::type_error(format!(
                "unbound method {ty}.{name}() needs an argument"
            )));
        };
        if this.type_name() != ty {
            return Err(PyErr::type_error(format!(
                "descriptor '{name}' for '{ty}' objects doesn't apply to a '{}' object",
                this.type_name()
            )));
        }
        let m = Value::Obj(Rc::new(MethodRef {
            this: this.clone(),
            name: name.clone(),
        }));
        ctx.call(
            &m,
            Args {
                pos: rest.to_vec(),
                kw: a.kw.clone(),
            },
        )
    })
}

impl Vm<'_> {
    pub fn get_attr(&mut self, v: &Value, name: &str) -> PyResult<Value> {
        match self.try_attr(v, name)? {
            Some(x) => Ok(x),
            None => Err(self.attr_error(v, name)),
        }
    }

    fn attr_error(&mut self, v: &Value, name: &str) -> PyErr {
        if let Some(m) = v.downcast::<NativeModule>() {
            return PyErr::attribute_error(format!(
                "module '{}' has no attribute '{name}'",
                m.name
            ));
        }
        if let Some(c) = v.downcast::<Class>() {
            return PyErr::attribute_error(format!(
                "type object '{}' has no attribute '{name}'",
                c.name
            ));
        }
        PyErr::attribute_error(format!(
            "'{}' object has no attribute '{name}'",
            v.type_name()
        ))
    }

    pub fn try_attr(&mut self, v: &Value, name: &str) -> PyResult<Option<Value>> {
        if let Value::Obj(o) = v {
            let any = o.as_any();
            if let Some(i) = any.downcast_ref::<Instance>() {
                if name == "__class__" {
                    return Ok(Some(i.class.clone()));
                }
                if name == "__dict__" {
                    let mut d = crate::lang::values::value::Dict::default();
                    for (k, x) in i.attrs.borrow().iter() {
                        d.insert_str(k, x.clone());
                    }
                    return Ok(Some(Value::Dict(Rc::new(std::cell::RefCell::new(d)))));
                }
                if let Some(x) = i.attrs.borrow().get(name) {
                    return Ok(Some(x.clone()));
                }
                if let Some(c) = i.class() {
                    if let Some(m) = c.lookup(name) {
                        return self.bind_class_attr(m, v, &i.class).map(Some);
                    }
                    if let Some(nb) = c.native_base() {
                        if let Some(n) = nb.downcast::<NativeClass>() {
                            if let Some(m) = n.instance_attr(v, name, self)? {
                                return Ok(Some(m));
                            }
                        }
                    }
                    if name == "__name__" || name == "__doc__" {
                        return Ok(None);
                    }
                }
                if let Some(x) = exc_attr(i, name) {
                    return Ok(Some(x));
                }
                return Ok(None);
            }
            if let Some(c) = any.downcast_ref::<Class>() {
                return Ok(match name {
                    "__name__" | "__qualname__" => Some(Value::str(&c.name)),
                    "__base__" => Some(c.base.clone().unwrap_or(Value::None)),
                    "__doc__" => Some(c.lookup("__doc__").unwrap_or(Value::None)),
                    _ => match c.lookup(name) {
                        Some(m) => Some(match m.downcast::<Wrapper>() {
                            Some(w) if w.kind == WrapKind::Static => w.func.clone(),
                            Some(w) if w.kind == WrapKind::ClassMethod => {
                                Value::Obj(Rc::new(BoundMethod {
                                    func: w.func.clone(),
                                    this: v.clone(),
                                }))
                            }
                            _ => m,
                        }),
                        None => c.native_base().and_then(|nb| {
                            nb.downcast::<NativeClass>().and_then(|n| n.bound(v, name))
                        }),
                    },
                });
            }
            if let Some(f) = any.downcast_ref::<Function>() {
                return Ok(match name {
                    "__name__" => Some(Value::str(&f.def.name)),
                    "__qualname__" => Some(Value::str(&f.qualname)),
                    "__doc__" => Some(f.def.doc.clone().map(Value::from).unwrap_or(Value::None)),
                    _ => f.attrs.borrow().get(name).cloned(),
                });
            }
            if let Some(s) = any.downcast_ref::<Super>() {
                let base = s.owner.downcast::<Class>().and_then(|c| c.base.clone());
                return match base {
                    Some(b) if b.downcast::<Class>().is_some() => {
                        let Some(c) = b.downcast::<Class>() else {
                            return Ok(None);
                        };
                        match c.lookup(name) {
                            Some(m) => self.bind_class_attr(m, &s.this, &b).map(Some),
                            None => super_fallback(c.native_base(), &s.this, name, self),
                        }
                    }
                    other => super_fallback(other, &s.this, name, self),
                };
            }
            if let Some(r) = any.downcast_ref::<Range>() {
                return Ok(match name {
                    "start" => Some(Value::Int(r.start)),
                    "stop" => Some(Value::Int(r.stop)),
                    "step" => Some(Value::Int(r.step)),
                    _ => None,
                });
            }
            if let Some(s) = any.downcast_ref::<Slice>() {
                return Ok(match name {
                    "start" => Some(s.lo.clone()),
                    "stop" => Some(s.hi.clone()),
                    "step" => Some(s.step.clone()),
                    _ => None,
                });
            }
            if let Some(b) = any.downcast_ref::<BoundMethod>() {
                return Ok(match name {
                    "__self__" => Some(b.this.clone()),
                    "__func__" => Some(b.func.clone()),
                    _ => self.try_attr(&b.func.clone(), name)?,
                });
            }
            if let Some(w) = any.downcast_ref::<Wrapper>() {
                if w.kind == WrapKind::Property && name == "setter" {
                    let me = v.clone();
                    return Ok(Some(crate::lang::NativeFn::value(
                        "setter",
                        "",
                        move |a, _| {
                            if let Some(w) = me.downcast::<Wrapper>() {
                                *w.setter.borrow_mut() = a.pos.first().cloned();
                            }
                            Ok(me.clone())
                        },
                    )));
                }
                return Ok(match name {
                    "__func__" | "fget" => Some(w.func.clone()),
                    _ => None,
                });
            }
            if let Some(t) = any.downcast_ref::<BuiltinType>() {
                if name == "__name__" {
                    return Ok(Some(Value::str(t.name)));
                }
                if t.name == "dict" && name == "fromkeys" {
                    return Ok(Some(Value::Obj(Rc::new(MethodRef {
                        this: Value::Dict(Default::default()),
                        name: name.into(),
                    }))));
                }
                // Number attributes (`real`, ...) are data, not methods to call unbound.
                let data = matches!(name, "real" | "imag" | "numerator" | "denominator");
                if !data && builtin_methods(t.name).contains(&name) {
                    return Ok(Some(unbound_method(t.name, name)));
                }
                return Ok(None);
            }
            // Other interpreter objects (the type of a native, dict views, ...) answer for
            // themselves; the builtin method table below covers what they leave out.
            let o = o.clone();
            if let Some(x) = o.getattr(v, name, self)? {
                return Ok(Some(x));
            }
        }
        if let Value::Native(o) = v {
            let o = o.clone();
            if name == "__class__" {
                return Ok(Some(Value::str(&o.type_name())));
            }
            return o.getattr(v, name, self);
        }
        match (v, name) {
            (Value::Float(x), "real") => return Ok(Some(Value::Float(*x))),
            (Value::Float(_), "imag") => return Ok(Some(Value::Float(0.0))),
            (Value::Int(x), "real" | "numerator") => return Ok(Some(Value::Int(*x))),
            (Value::Int(_), "imag") => return Ok(Some(Value::Int(0))),
            (Value::Int(_), "denominator") => return Ok(Some(Value::Int(1))),
            _ => {}
        }
        if let Some(kind) = Dict::kind_of(v) {
            if let Some(x) = kind.getattr(v, name, self)? {
                return Ok(Some(x));
            }
        }
        let ty = v.type_name();
        if builtin_methods(&ty).contains(&name) {
            return Ok(Some(Value::Obj(Rc::new(MethodRef {
                this: v.clone(),
                name: name.to_string(),
            }))));
        }
        Ok(None)
    }

    /// A class attribute seen through an instance: functions bind, wrappers unwrap.
    fn bind_class_attr(&mut self, m: Value, this: &Value, cls: &Value) -> PyResult<Value> {
        if let Value::Native(o) = &m {
            if let Some(bound) = o.bind_instance(&m, this) {
                return Ok(bound);
            }
        }
        if let Some(w) = m.downcast::<Wrapper>() {
            return match w.kind {
                WrapKind::Static => Ok(w.func.clone()),
                WrapKind::ClassMethod => Ok(Value::Obj(Rc::new(BoundMethod {
                    func: w.func.clone(),
                    this: cls.clone(),
                }))),
                WrapKind::Property => {
                    let f = w.func.clone();
                    self.call_value(&f, Args::new(vec![this.clone()]))
                }
            };
        }
        if m.downcast::<Function>().is_some()
            || matches!(m, Value::Native(_))
                && m.downcast::<NativeClass>().is_none()
                && m.downcast::<NativeModule>().is_none()
                && m.downcast::<crate::lang::NativeFn>().is_none()
        {
            return Ok(Value::Obj(Rc::new(BoundMethod {
                func: m,
                this: this.clone(),
            })));
        }
        Ok(m)
    }

    pub fn set_attr(&mut self, o: &Value, name: &str, v: Value) -> PyResult<()> {
        match o {
            Value::Obj(obj) => {
                let any = obj.as_any();
                if let Some(i) = any.downcast_ref::<Instance>() {
                    if let Some(c) = i.class().filter(|c| c.any_property()) {
                        if let Some(p) = c.lookup(name) {
                            if let Some(w) = p.downcast::<Wrapper>() {
                                if w.kind == WrapKind::Property {
                                    let setter = w.setter.borrow().clone();
                                    return match setter {
                                        Some(s) => self
                                            .call_value(&s, Args::new(vec![o.clone(), v]))
                                            .map(|_| ()),
                                        None => Err(PyErr::attribute_error(format!(
                                            "property {}of '{}' object has no setter",
                                            w.name
                                                .borrow()
                                                .as_ref()
                                                .map(|n| format!("'{n}' "))
                                                .unwrap_or_default(),
                                            c.name
                                        ))),
                                    };
                                }
                            }
                        }
                    }
                    // An existing attribute is replaced in place, without a new key string.
                    let mut attrs = i.attrs.borrow_mut();
                    match attrs.get_mut(name) {
                        Some(slot) => *slot = v,
                        None => {
                            attrs.insert(name.to_string(), v);
                        }
                    }
                    return Ok(());
                }
                if let Some(c) = any.downcast_ref::<Class>() {
                    if crate::lang::builtins::wrappers::is_property(&v) {
                        c.properties.set(true);
                    }
                    c.dict.borrow_mut().insert(name.to_string(), v);
                    return Ok(());
                }
                if let Some(f) = any.downcast_ref::<Function>() {
                    f.attrs.borrow_mut().insert(name.to_string(), v);
                    return Ok(());
                }
                Err(PyErr::attribute_error(format!(
                    "'{}' object has no attribute '{name}'",
                    o.type_name()
                )))
            }
            Value::Native(n) => {
                let n = n.clone();
                n.setattr(name, v, self)
            }
            _ => Err(PyErr::attribute_error(format!(
                "'{}' object has no attribute '{name}'",
                o.type_name()
            ))),
        }
    }

    pub fn del_attr(&mut self, o: &Value, name: &str) -> PyResult<()> {
        if let Some(i) = o.downcast::<Instance>() {
            if i.attrs.borrow_mut().shift_remove(name).is_some() {
                return Ok(());
            }
        }
        Err(PyErr::attribute_error(format!(
            "'{}' object has no attribute '{name}'",
            o.type_name()
        )))
    }
}

fn super_fallback(
    base: Option<Value>,
    this: &Value,
    name: &str,
    ctx: &mut dyn crate::lang::Ctx,
) -> PyResult<Option<Value>> {
    if let Some(n) = base.as_ref().and_then(|b| b.downcast::<NativeClass>()) {
        if let Some(m) = n.instance_attr(this, name, ctx)? {
            return Ok(Some(m));
        }
    }
    Ok(object_fallback(this, name))
}

/// What `super().name` finds past every class: `BaseException.__init__` and `object`'s
/// do-nothing dunders.
fn object_fallback(this: &Value, name: &str) -> Option<Value> {
    // `BaseException.__init__` records its arguments as `args`.
    if name == "__init__" {
        if let Some(i) = this.downcast::<Instance>() {
            if i.attrs.borrow().contains_key("args") {
                let me = this.clone();
                return Some(crate::lang::NativeFn::value(name, "", move |a, _| {
                    if let Some(i) = me.downcast::<Instance>() {
                        i.attrs
                            .borrow_mut()
                            .insert("args".into(), Value::tuple(a.pos.clone()));
                    }
                    Ok(Value::None)
                }));
            }
        }
    }
    // `object.__init__` and friends: accept and do nothing.
    if name.starts_with("__") {
        return Some(crate::lang::NativeFn::value(name, "", |_, _| {
            Ok(Value::None)
        }));
    }
    None
}

fn exc_attr(i: &Instance, name: &str) -> Option<Value> {
    match name {
        "__traceback__" | "__cause__" | "__context__" => Some(Value::None),
        // `StopIteration.value`: its first argument, as its `__init__` records it.
        "value"
            if i.class().is_some_and(|c| {
                c.mro()
                    .iter()
                    .any(|k| k.builtin && k.name == "StopIteration")
            }) =>
        {
            let args = i.attrs.borrow().get("args").cloned();
            Some(
                args.and_then(|a| a.as_seq().and_then(|t| t.first().cloned()))
                    .unwrap_or(Value::None),
            )
        }
        _ => None,
    }
}

/// `v.name` when `v` is an instance of an interpreter class holding `name` itself: the
/// commonest read in methods (`self.n`), answered without the general lookup. It gives
/// what `try_attr` gives, which also looks in the instance first; names with two leading
/// underscores go the general way (`__class__` and `__dict__` are made there, not stored).
#[inline]
pub(in crate::lang) fn own_attr(v: &Value, name: &str) -> Option<Value> {
    let Value::Obj(o) = v else {
        return None;
    };
    let inst = o.as_any().downcast_ref::<Instance>()?;
    if name.starts_with("__") {
        return None;
    }
    inst.attrs.borrow().get(name).cloned()
}
