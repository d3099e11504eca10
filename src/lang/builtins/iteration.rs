//! Builtins over iterables: `len`, `iter`, `next`, `enumerate`, `zip`, `map`, `filter`,
//! `sorted`, `reversed`, `any` and `all`. `zip`, `map`, `filter` and `enumerate` are lazy
//! (they take `iter()` of their arguments at the call and pull one item per step), so
//! endless sources work under them; `any` and `all` stop at their answer.

use super::namespace::{kw, one, unknown};
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::lazy::Lazy;
use crate::lang::values::object::Args;
use crate::lang::values::object::Ctx;
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
                let mut i = match (a.pos.get(1), kw(&a, "start")) {
                    (Some(v), _) | (None, Some(v)) => v.as_int()?,
                    _ => 0,
                };
                let src = self.get_iter(one(&a, name)?)?;
                Lazy::value(None, "enumerate", move |ctx| {
                    let Some(v) = ctx.next_item(&src)? else {
                        return Ok(None);
                    };
                    i += 1;
                    Ok(Some(Value::tuple(vec![Value::Int(i - 1), v])))
                })
            }
            "zip" => {
                let strict = match a.kw.as_slice() {
                    [] => false,
                    [(k, v)] if k == "strict" => self.truthy(v)?,
                    [(k, _), ..] if k != "strict" => {
                        return Err(PyErr::type_error(format!(
                            "zip() got an unexpected keyword argument '{k}'"
                        )))
                    }
                    _ => return Err(PyErr::type_error("zip() takes at most 1 keyword argument")),
                };
                let sources = self.iters_of(&a.pos)?;
                Lazy::value(None, "zip", move |ctx| zip_step(ctx, &sources, strict))
            }
            "map" => {
                if a.pos.len() < 2 {
                    return Err(PyErr::type_error("map() must have at least two arguments."));
                }
                let f = a.pos[0].clone();
                let sources = self.iters_of(&a.pos[1..])?;
                Lazy::value(None, "map", move |ctx| {
                    match zip_step(ctx, &sources, false)? {
                        Some(Value::Tuple(t)) => Ok(Some(ctx.call(&f, Args::new(t.to_vec()))?)),
                        _ => Ok(None),
                    }
                })
            }
            "filter" => {
                if a.pos.len() != 2 {
                    return Err(PyErr::type_error(format!(
                        "filter expected 2 arguments, got {}",
                        a.pos.len()
                    )));
                }
                let f = a.pos[0].clone();
                let src = self.get_iter(&a.pos[1])?;
                Lazy::value(None, "filter", move |ctx| loop {
                    let Some(x) = ctx.next_item(&src)? else {
                        return Ok(None);
                    };
                    let keep = if f.is_none() {
                        ctx.truthy(&x)?
                    } else {
                        let r = ctx.call(&f, Args::new(vec![x.clone()]))?;
                        ctx.truthy(&r)?
                    };
                    if keep {
                        return Ok(Some(x));
                    }
                })
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
                // A generator's StopIteration carries its return value.
                if let Some(g) = it.downcast::<crate::lang::eval::generator::Generator>() {
                    return match (self.generator_send(g, Value::None), a.pos.get(1)) {
                        (Err(e), Some(d)) if e.type_name() == "StopIteration" => Ok(d.clone()),
                        (r, _) => r,
                    };
                }
                match self.next_item(&it)? {
                    Some(v) => v,
                    None => match a.pos.get(1) {
                        Some(d) => d.clone(),
                        None => return Err(PyErr::new("StopIteration", "")),
                    },
                }
            }
            "any" | "all" => {
                // Pulled one at a time: the answer may come before an endless source ends.
                let src = self.get_iter(one(&a, name)?)?;
                let want = name == "any";
                while let Some(x) = self.next_item(&src)? {
                    if self.truthy(&x)? == want {
                        return Ok(Value::Bool(want));
                    }
                    self.check_interrupt_fast()?;
                }
                Value::Bool(!want)
            }
            _ => return Err(unknown(name)),
        })
    }
}

impl Vm<'_> {
    /// `iter(v)` of each value, taken at the call as CPython does (so a non-iterable fails
    /// there).
    fn iters_of(&mut self, vs: &[Value]) -> PyResult<Vec<Value>> {
        vs.iter().map(|v| self.get_iter(v)).collect()
    }
}

/// The next tuple of a `zip` over `sources`, or `None` at the shortest's end. Under
/// `strict`, sources of unequal length raise CPython's ValueError naming the first
/// argument found shorter or longer.
fn zip_step(ctx: &mut dyn Ctx, sources: &[Value], strict: bool) -> PyResult<Option<Value>> {
    if sources.is_empty() {
        return Ok(None);
    }
    let mut items = Vec::with_capacity(sources.len());
    for (i, src) in sources.iter().enumerate() {
        match ctx.next_item(src)? {
            Some(v) => items.push(v),
            None if !strict => return Ok(None),
            None if i > 0 => return Err(unequal(i, "shorter")),
            None => {
                for (j, other) in sources.iter().enumerate().skip(1) {
                    if ctx.next_item(other)?.is_some() {
                        return Err(unequal(j, "longer"));
                    }
                }
                return Ok(None);
            }
        }
    }
    Ok(Some(Value::tuple(items)))
}

/// `zip(strict=True)`'s error for the argument at index `i` against those before it.
fn unequal(i: usize, how: &str) -> PyErr {
    let before = if i == 1 {
        " 1".to_string()
    } else {
        format!("s 1-{i}")
    };
    PyErr::value_error(format!(
        "zip() argument {} is {how} than argument{before}",
        i + 1
    ))
}
