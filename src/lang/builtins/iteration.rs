//! Builtins over iterables: `len`, `iter`, `next`, `enumerate`, `zip`, `map`, `filter`,
//! `sorted`, `reversed`, `any` and `all`. The lazy ones (`zip`, `map`, ...) materialise their
//! input at the call and hand out an iterator, as generator functions do here.

use super::namespace::{kw, one, unknown};
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::runtime::*;
use crate::lang::values::value::Value;

/// The builtin functions this file answers for.
pub(super) const NAMES: &[&str] = &[
    "len",
    "enumerate",
    "zip",
    "map",
    "filter",
    "sorted",
    "reversed",
    "iter",
    "next",
    "any",
    "all",
];

impl Vm<'_> {
    /// Calls the builtin `name` (one of [`NAMES`]).
    pub(super) fn builtin_iteration(&mut self, name: &str, a: Args) -> PyResult<Value> {
        Ok(match name {
            "len" => {
                if a.pos.len() + a.kw.len() != 1 {
                    return Err(PyErr::type_error(format!(
                        "len() takes exactly one argument ({} given)",
                        a.pos.len() + a.kw.len()
                    )));
                }
                Value::Int(self.len_of(one(&a, name)?)? as i64)
            }
            "enumerate" => {
                let start = match (a.pos.get(1), kw(&a, "start")) {
                    (Some(v), _) | (None, Some(v)) => v.as_int()?,
                    _ => 0,
                };
                let items = self.iter_values(one(&a, name)?)?;
                SeqIter::value(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| Value::tuple(vec![Value::Int(i as i64 + start), v]))
                        .collect(),
                )
            }
            "zip" => {
                let lists = a
                    .pos
                    .iter()
                    .map(|v| self.iter_values(v))
                    .collect::<PyResult<Vec<_>>>()?;
                let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
                SeqIter::value(
                    (0..n)
                        .map(|i| Value::tuple(lists.iter().map(|l| l[i].clone()).collect()))
                        .collect(),
                )
            }
            "map" => {
                let f = one(&a, name)?.clone();
                let lists = a.pos[1..]
                    .iter()
                    .map(|v| self.iter_values(v))
                    .collect::<PyResult<Vec<_>>>()?;
                let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    out.push(
                        self.call_value(
                            &f,
                            Args::new(lists.iter().map(|l| l[i].clone()).collect()),
                        )?,
                    );
                }
                SeqIter::value(out)
            }
            "filter" => {
                let f = one(&a, name)?.clone();
                let items = self.iter_values(
                    a.pos
                        .get(1)
                        .ok_or_else(|| PyErr::type_error("filter expected 2 arguments, got 1"))?,
                )?;
                let mut out = vec![];
                for x in items {
                    let keep = if f.is_none() {
                        x.clone()
                    } else {
                        self.call_value(&f, Args::new(vec![x.clone()]))?
                    };
                    if self.truthy(&keep)? {
                        out.push(x);
                    }
                }
                SeqIter::value(out)
            }
            "sorted" => {
                let items = self.iter_values(one(&a, name)?)?;
                let key = kw(&a, "key").cloned().filter(|v| !v.is_none());
                let rev = match kw(&a, "reverse") {
                    Some(v) => self.truthy(&v.clone())?,
                    None => false,
                };
                Value::list(self.sort_values(items, key, rev)?)
            }
            "reversed" => {
                let mut items = self.iter_values(one(&a, name)?)?;
                items.reverse();
                SeqIter::value(items)
            }
            "iter" => self.get_iter(one(&a, name)?)?,
            "next" => {
                let it = one(&a, name)?.clone();
                match self.next_item(&it)? {
                    Some(v) => v,
                    None => match a.pos.get(1) {
                        Some(d) => d.clone(),
                        None => return Err(PyErr::new("StopIteration", "")),
                    },
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
            _ => return Err(unknown(name)),
        })
    }
}
