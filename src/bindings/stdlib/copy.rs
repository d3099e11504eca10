//! `copy`: `copy` and `deepcopy` of lists, tuples, dicts (a `Counter` or `defaultdict`
//! stays one), sets and objects that define `__copy__`/`__deepcopy__` or a `copy` method
//! (deques, arrays), with a memo so that a value shared inside the original (or the
//! original itself, in a cycle) is shared the same way inside the copy. Instances of
//! Python classes without `__copy__`/`__deepcopy__` are refused with a TypeError, as the
//! interpreter has no way to make an instance without running its `__init__`. The `memo`
//! argument is accepted for `__deepcopy__` hooks to pass on, but each call keeps its own
//! memo, so sharing between an object and what its hook copies is not kept.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::f;
use crate::bindings::common::arg;
use crate::lang::{Args, Ctx, Dict, NativeModule, PyErr, PyResult, Value};

/// The identity of a mutable value, as `id()` gives it; `None` for immutable scalars.
fn identity(v: &Value) -> Option<usize> {
    match v {
        Value::List(l) => Some(Rc::as_ptr(l) as *const u8 as usize),
        Value::Tuple(t) => Some(Rc::as_ptr(t) as *const u8 as usize),
        Value::Dict(d) => Some(Rc::as_ptr(d) as *const u8 as usize),
        Value::Obj(o) | Value::Native(o) => Some(Rc::as_ptr(o) as *const u8 as usize),
        _ => None,
    }
}

/// A new dict of the same subclass as `d` (plain for a plain dict).
fn empty_like(d: &Rc<RefCell<Dict>>) -> Rc<RefCell<Dict>> {
    super::mappings::empty_dict(d.borrow().kind.clone())
}

/// What neither function copies: the object itself, as CPython returns atoms, functions
/// and classes.
fn atomic(v: &Value) -> bool {
    match v {
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => true,
        Value::Obj(_) | Value::Native(_) => matches!(
            v.type_name().as_str(),
            "function" | "builtin_function_or_method" | "type" | "module" | "range" | "frozenset"
        ),
        _ => false,
    }
}

/// The object's own hook (`__copy__`, `__deepcopy__`), if it has one.
fn hook(v: &Value, name: &str, ctx: &mut dyn Ctx) -> Option<Value> {
    ctx.getattr(v, name).ok()
}

/// A shallow copy of an object that is not a list, tuple or dict.
fn copy_object(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if let Some(h) = hook(v, "__copy__", ctx) {
        return ctx.call(&h, Args::default());
    }
    if let Some(c) = hook(v, "copy", ctx) {
        return ctx.call(&c, Args::default());
    }
    Err(PyErr::type_error(format!(
        "cannot copy '{}' object: it defines no __copy__ or copy()",
        v.type_name()
    )))
}

fn shallow(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if atomic(v) {
        return Ok(v.clone());
    }
    Ok(match v {
        Value::List(l) => Value::list(l.borrow().clone()),
        Value::Tuple(_) => v.clone(),
        Value::Dict(d) => {
            let out = empty_like(d);
            out.borrow_mut().map = d.borrow().map.clone();
            Value::Dict(out)
        }
        _ => copy_object(v, ctx)?,
    })
}

struct Deep {
    memo: HashMap<usize, Value>,
    /// Originals kept alive while copying, so that no address in `memo` is reused.
    keep: Vec<Value>,
}

impl Deep {
    fn copy(&mut self, v: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        if atomic(v) {
            return Ok(v.clone());
        }
        let Some(id) = identity(v) else {
            return Ok(v.clone());
        };
        if let Some(done) = self.memo.get(&id) {
            return Ok(done.clone());
        }
        ctx.check_interrupt()?;
        self.keep.push(v.clone());
        let out = match v {
            Value::List(l) => {
                let out = Value::list(vec![]);
                self.memo.insert(id, out.clone());
                let items = l.borrow().clone();
                for x in &items {
                    let c = self.copy(x, ctx)?;
                    if let Value::List(o) = &out {
                        o.borrow_mut().push(c);
                    }
                }
                out
            }
            Value::Tuple(t) => {
                let items: Vec<Value> = t.to_vec();
                let mut copied = Vec::with_capacity(items.len());
                for x in &items {
                    copied.push(self.copy(x, ctx)?);
                }
                // A tuple holding only what copies to itself is returned as it is.
                if let Some(done) = self.memo.get(&id) {
                    return Ok(done.clone());
                }
                if items.iter().zip(&copied).all(|(a, b)| a.is(b)) {
                    v.clone()
                } else {
                    Value::tuple(copied)
                }
            }
            Value::Dict(d) => {
                let out = empty_like(d);
                let outv = Value::Dict(out.clone());
                self.memo.insert(id, outv.clone());
                let pairs: Vec<(Value, Value)> = d
                    .borrow()
                    .items()
                    .map(|(k, x)| (k.clone(), x.clone()))
                    .collect();
                for (k, x) in pairs {
                    let k = self.copy(&k, ctx)?;
                    let x = self.copy(&x, ctx)?;
                    out.borrow_mut().insert(k, x)?;
                }
                outv
            }
            _ if v.type_name() == "set" => {
                // A set's items are hashable and mostly atoms: copy the set, then its items.
                let c = copy_object(v, ctx)?;
                self.memo.insert(id, c.clone());
                let items = ctx.iterate(v)?;
                let clear = ctx.getattr(&c, "clear")?;
                ctx.call(&clear, Args::default())?;
                let add = ctx.getattr(&c, "add")?;
                for x in &items {
                    let x = self.copy(x, ctx)?;
                    ctx.call(&add, Args::new(vec![x]))?;
                }
                c
            }
            _ => {
                if let Some(h) = hook(v, "__deepcopy__", ctx) {
                    let memo = Value::Dict(Rc::new(RefCell::new(Dict::default())));
                    ctx.call(&h, Args::new(vec![memo]))?
                } else if matches!(v, Value::Obj(_)) && hook(v, "__dict__", ctx).is_some() {
                    return Err(PyErr::type_error(format!(
                        "cannot deepcopy '{}' object: it defines no __deepcopy__",
                        v.type_name()
                    )));
                } else {
                    copy_object(v, ctx)?
                }
            }
        };
        self.memo.insert(id, out.clone());
        Ok(out)
    }
}

/// `copy.deepcopy(v)`, for modules that copy as CPython's do (`dataclasses.asdict`).
pub(super) fn deepcopy(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let mut deep = Deep {
        memo: HashMap::new(),
        keep: vec![],
    };
    deep.copy(v, ctx)
}

pub fn module() -> Value {
    NativeModule::new("copy", "Generic (shallow and deep) copying operations.")
        .with(
            "copy",
            f(
                "copy",
                "copy(x)\nShallow copy operation on arbitrary Python objects.",
                |a, ctx| {
                    let s = a.bind("copy", &["x"], 1)?;
                    shallow(arg(&s, 0), ctx)
                },
            ),
        )
        .with(
            "deepcopy",
            f(
                "deepcopy",
                "deepcopy(x, memo=None)\nDeep copy operation on arbitrary Python objects.",
                |a, ctx| {
                    let s = a.bind("deepcopy", &["x", "memo"], 1)?;
                    deepcopy(arg(&s, 0), ctx)
                },
            ),
        )
        .into_value()
}
