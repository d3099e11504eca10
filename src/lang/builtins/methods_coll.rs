//! Methods of `dict` and `set`, split from `methods.rs`.

use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;

use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::runtime::Set;
use crate::lang::values::value::{Dict, HashKey, Value};

fn arg(a: &Args, i: usize) -> Option<&Value> {
    a.pos.get(i)
}

fn need<'a>(a: &'a Args, i: usize, m: &str) -> PyResult<&'a Value> {
    a.pos
        .get(i)
        .ok_or_else(|| PyErr::type_error(format!("{m}() missing required argument")))
}

fn no_method(v: &Value, name: &str) -> PyErr {
    PyErr::attribute_error(format!(
        "'{}' object has no attribute '{name}'",
        v.type_name()
    ))
}

impl Vm<'_> {
    pub fn dict_method(&mut self, d: &Rc<RefCell<Dict>>, name: &str, a: Args) -> PyResult<Value> {
        Ok(match name {
            "keys" | "values" | "items" => {
                Value::Obj(Rc::new(crate::lang::values::runtime::DictView {
                    dict: d.clone(),
                    kind: match name {
                        "keys" => "keys",
                        "values" => "values",
                        _ => "items",
                    },
                }))
            }
            "get" => d
                .borrow()
                .get(need(&a, 0, name)?)?
                .unwrap_or_else(|| arg(&a, 1).cloned().unwrap_or(Value::None)),
            "pop" => {
                let k = need(&a, 0, name)?;
                let r = d.borrow_mut().remove(k)?;
                match (r, arg(&a, 1)) {
                    (Some(v), _) => v,
                    (None, Some(dflt)) => dflt.clone(),
                    (None, None) => return Err(self.key_error(k)),
                }
            }
            "popitem" => {
                let last = d.borrow_mut().map.pop();
                match last {
                    Some((_, (k, v))) => Value::tuple(vec![k, v]),
                    None => return Err(PyErr::key_error("'popitem(): dictionary is empty'")),
                }
            }
            "setdefault" => {
                let k = need(&a, 0, name)?.clone();
                let existing = d.borrow().get(&k)?;
                match existing {
                    Some(v) => v,
                    None => {
                        let v = arg(&a, 1).cloned().unwrap_or(Value::None);
                        d.borrow_mut().insert(k, v.clone())?;
                        v
                    }
                }
            }
            "update" => {
                if let Some(m) = arg(&a, 0) {
                    let pairs =
                        if matches!(m, Value::Dict(_)) || self.try_attr(m, "keys")?.is_some() {
                            self.mapping_items(m)?
                        } else {
                            let mut out = vec![];
                            for p in self.iter_values(m)? {
                                let kv = self.iter_values(&p)?;
                                if kv.len() != 2 {
                                    return Err(PyErr::value_error(
                                        "dictionary update sequence element has wrong length",
                                    ));
                                }
                                out.push((kv[0].clone(), kv[1].clone()));
                            }
                            out
                        };
                    for (k, v) in pairs {
                        d.borrow_mut().insert(k, v)?;
                    }
                }
                for (k, v) in a.kw {
                    d.borrow_mut().insert_str(&k, v);
                }
                Value::None
            }
            "copy" => Value::Dict(Rc::new(RefCell::new(d.borrow().clone()))),
            "clear" => {
                d.borrow_mut().map.clear();
                Value::None
            }
            "fromkeys" => {
                let mut nd = Dict::default();
                let v = arg(&a, 1).cloned().unwrap_or(Value::None);
                for k in self.iter_values(need(&a, 0, name)?)? {
                    nd.insert(k, v.clone())?;
                }
                Value::Dict(Rc::new(RefCell::new(nd)))
            }
            _ => {
                return Err(PyErr::attribute_error(format!(
                    "'dict' object has no attribute '{name}'"
                )))
            }
        })
    }

    pub fn set_method(&mut self, this: &Value, s: &Set, name: &str, a: Args) -> PyResult<Value> {
        let other = |vm: &mut Self, i: usize| -> PyResult<IndexMap<HashKey, Value>> {
            let mut m = IndexMap::new();
            if let Some(v) = a.pos.get(i) {
                for x in vm.iter_values(v)? {
                    crate::lang::values::memory::map_room_for_one(&mut m)?;
                    m.insert(HashKey::of(&x)?, x);
                    vm.check_interrupt_fast()?;
                }
            }
            Ok(m)
        };
        let mine = s.items.borrow().clone();
        let frozen = s.frozen;
        Ok(match name {
            "add" => {
                let v = need(&a, 0, name)?.clone();
                let key = HashKey::of(&v)?;
                let mut items = s.items.borrow_mut();
                crate::lang::values::memory::map_room_for_one(&mut items)?;
                items.insert(key, v);
                Value::None
            }
            "remove" | "discard" => {
                let v = need(&a, 0, name)?;
                if s.items
                    .borrow_mut()
                    .shift_remove(&HashKey::of(v)?)
                    .is_none()
                    && name == "remove"
                {
                    return Err(self.key_error(v));
                }
                Value::None
            }
            "pop" => match s.items.borrow_mut().shift_remove_index(0) {
                Some((_, v)) => v,
                None => return Err(PyErr::key_error("'pop from an empty set'")),
            },
            "clear" => {
                s.items.borrow_mut().clear();
                Value::None
            }
            "copy" => Set::value(mine, frozen),
            "update" => {
                for p in 0..a.pos.len() {
                    let o = other(self, p)?;
                    s.items.borrow_mut().extend(o);
                }
                Value::None
            }
            "union" => {
                let mut m = mine;
                m.extend(other(self, 0)?);
                Set::value(m, frozen)
            }
            "intersection" => {
                let o = other(self, 0)?;
                Set::value(
                    mine.into_iter()
                        .filter(|(k, _)| o.contains_key(k))
                        .collect(),
                    frozen,
                )
            }
            "difference" => {
                let o = other(self, 0)?;
                Set::value(
                    mine.into_iter()
                        .filter(|(k, _)| !o.contains_key(k))
                        .collect(),
                    frozen,
                )
            }
            "symmetric_difference" => {
                let o = other(self, 0)?;
                let mut m: IndexMap<HashKey, Value> = mine
                    .clone()
                    .into_iter()
                    .filter(|(k, _)| !o.contains_key(k))
                    .collect();
                m.extend(o.into_iter().filter(|(k, _)| !mine.contains_key(k)));
                Set::value(m, frozen)
            }
            "issubset" => {
                let o = other(self, 0)?;
                Value::Bool(mine.keys().all(|k| o.contains_key(k)))
            }
            "issuperset" => {
                let o = other(self, 0)?;
                Value::Bool(o.keys().all(|k| mine.contains_key(k)))
            }
            "isdisjoint" => {
                let o = other(self, 0)?;
                Value::Bool(!mine.keys().any(|k| o.contains_key(k)))
            }
            _ => return Err(no_method(this, name)),
        })
    }
}
