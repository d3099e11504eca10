//! Methods of `set` and `frozenset`: adding and removing (`add`, `remove`, `discard`,
//! `pop`, `clear`, `update`), `copy`, the set algebra (`union`, `intersection`,
//! `difference`, `symmetric_difference`) and the tests between sets (`issubset`,
//! `issuperset`, `isdisjoint`).

use indexmap::IndexMap;

use super::{need, no_method};
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::runtime::Set;
use crate::lang::values::value::{HashKey, Value};

impl Vm<'_> {
    pub(super) fn set_method(
        &mut self,
        this: &Value,
        s: &Set,
        name: &str,
        a: Args,
    ) -> PyResult<Value> {
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
                // Any number of others, as CPython takes them; none answers a copy.
                let mut m = mine;
                for p in 0..a.pos.len() {
                    let o = other(self, p)?;
                    m.retain(|k, _| o.contains_key(k));
                }
                Set::value(m, frozen)
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
