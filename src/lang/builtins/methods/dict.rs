//! Methods of `dict`: views, `get`, `setdefault`, `pop`, `popitem`, `update`, `copy`,
//! `clear` and `fromkeys`, in insertion order as CPython keeps it.

use std::cell::RefCell;
use std::rc::Rc;

use super::{arg, need};
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::value::{Dict, Value};

impl Vm<'_> {
    pub(super) fn dict_method(
        &mut self,
        d: &Rc<RefCell<Dict>>,
        name: &str,
        a: Args,
    ) -> PyResult<Value> {
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
}
