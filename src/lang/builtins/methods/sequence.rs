//! Methods of `list` and `tuple`: `index` and `count` for both, and the mutating methods
//! of `list` (`append`, `extend`, `insert`, `pop`, `remove`, `sort`, ...).

use std::rc::Rc;

use super::{arg, need};
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::memory;
use crate::lang::values::object::Args;
use crate::lang::values::value::Value;

impl Vm<'_> {
    pub(super) fn seq_common(
        &mut self,
        items: &[Value],
        name: &str,
        a: &Args,
        ty: &str,
    ) -> PyResult<Value> {
        match name {
            "index" => {
                let x = need(a, 0, name)?.clone();
                for (i, y) in items.iter().enumerate() {
                    if self.eq_or_same(y, &x)? {
                        return Ok(Value::Int(i as i64));
                    }
                    self.check_interrupt_fast()?;
                }
                let r = self.repr_of(&x)?;
                Err(PyErr::value_error(if ty == "list" {
                    format!("{r} is not in list")
                } else {
                    "tuple.index(x): x not in tuple".into()
                }))
            }
            "count" => {
                let x = need(a, 0, name)?.clone();
                let mut n = 0;
                for y in items {
                    if self.eq_or_same(y, &x)? {
                        n += 1;
                    }
                    self.check_interrupt_fast()?;
                }
                Ok(Value::Int(n))
            }
            _ => Err(PyErr::attribute_error(format!(
                "'{ty}' object has no attribute '{name}'"
            ))),
        }
    }

    pub(super) fn list_method(
        &mut self,
        this: &Value,
        l: &Rc<crate::lang::values::value::ListItems>,
        name: &str,
        a: Args,
    ) -> PyResult<Value> {
        match name {
            "append" => {
                let v = need(&a, 0, name)?.clone();
                let mut lb = l.borrow_mut();
                crate::lang::values::memory::room_for_one(&mut lb)?;
                lb.push(v);
            }
            "extend" => {
                let items = self.iter_values(need(&a, 0, name)?)?;
                let mut lb = l.borrow_mut();
                memory::reserve(&mut lb, items.len())?;
                lb.extend(items);
            }
            "insert" => {
                let i = need(&a, 0, name)?.as_int()?;
                let v = need(&a, 1, name)?.clone();
                let mut lb = l.borrow_mut();
                let n = lb.len() as i64;
                let j = if i < 0 {
                    i.saturating_add(n).max(0)
                } else {
                    i.min(n)
                };
                memory::room_for_one(&mut lb)?;
                lb.insert(j as usize, v);
            }
            "pop" => {
                let mut lb = l.borrow_mut();
                if lb.is_empty() {
                    return Err(PyErr::index_error("pop from empty list"));
                }
                let n = lb.len() as i64;
                let i = match arg(&a, 0) {
                    Some(v) => v.as_int()?,
                    None => n - 1,
                };
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return Err(PyErr::index_error("pop index out of range"));
                }
                return Ok(lb.remove(j as usize));
            }
            "remove" => {
                let x = need(&a, 0, name)?.clone();
                let items = l.borrow().clone();
                for (i, y) in items.iter().enumerate() {
                    if self.eq_or_same(y, &x)? {
                        l.borrow_mut().remove(i);
                        return Ok(Value::None);
                    }
                }
                return Err(PyErr::value_error("list.remove(x): x not in list"));
            }
            "sort" => {
                let items = l.borrow().clone();
                let key =
                    a.kw.iter()
                        .find(|(k, _)| k == "key")
                        .map(|(_, v)| v.clone())
                        .filter(|v| !v.is_none());
                let rev = match a.kw.iter().find(|(k, _)| k == "reverse") {
                    Some((_, v)) => self.truthy(&v.clone())?,
                    None => false,
                };
                let sorted = self.sort_values(items, key, rev)?;
                *l.borrow_mut() = sorted;
            }
            "reverse" => l.borrow_mut().reverse(),
            "copy" => return Ok(Value::list(l.borrow().clone())),
            "clear" => l.borrow_mut().clear(),
            _ => {
                let items = l.borrow().clone();
                let _ = this;
                return self.seq_common(&items, name, &a, "list");
            }
        }
        Ok(Value::None)
    }
}
