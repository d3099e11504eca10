//! Methods of the builtin types: `str`, `list`, `tuple`, `dict`, `set`, `int`, `float`.
//! Reached through `MethodRef` values that `getattr` hands out.

use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;

use super::exc::{PyErr, PyResult};
use super::object::Args;
use super::runtime::Set;
use super::value::{Dict, HashKey, Value};
use super::vm::Vm;

fn arg(a: &Args, i: usize) -> Option<&Value> {
    a.pos.get(i)
}

fn need<'a>(a: &'a Args, i: usize, m: &str) -> PyResult<&'a Value> {
    a.pos
        .get(i)
        .ok_or_else(|| PyErr::type_error(format!("{m}() missing required argument")))
}

impl Vm<'_> {
    pub fn call_method(&mut self, this: &Value, name: &str, a: Args) -> PyResult<Value> {
        match this {
            Value::Str(s) => self.str_method(s, name, &a),
            Value::List(l) => self.list_method(this, l, name, a),
            Value::Tuple(t) => {
                let items = t.to_vec();
                self.seq_common(&items, name, &a, "tuple")
            }
            Value::Dict(d) => self.dict_method(d, name, a),
            Value::Int(i) => match name {
                "bit_length" => Ok(Value::Int(64 - i.unsigned_abs().leading_zeros() as i64)),
                "conjugate" => Ok(this.clone()),
                _ => Err(no_method(this, name)),
            },
            Value::Float(x) => match name {
                "is_integer" => Ok(Value::Bool(x.fract() == 0.0)),
                "conjugate" => Ok(this.clone()),
                _ => Err(no_method(this, name)),
            },
            _ => {
                if let Some(s) = this.downcast::<Set>() {
                    return self.set_method(this, s, name, a);
                }
                let m = self.get_attr(this, name)?;
                self.call_value(&m, a)
            }
        }
    }

    fn str_method(&mut self, s: &Rc<str>, name: &str, a: &Args) -> PyResult<Value> {
        let sarg = |i: usize| -> PyResult<Option<String>> {
            match a.pos.get(i) {
                None | Some(Value::None) => Ok(None),
                Some(Value::Str(x)) => Ok(Some(x.to_string())),
                Some(o) => Err(PyErr::type_error(format!(
                    "must be str or None, not {}",
                    o.type_name()
                ))),
            }
        };
        let width =
            |i: usize| -> PyResult<usize> { Ok(need(a, i, name)?.as_int()?.max(0) as usize) };
        let fillc = |i: usize| -> PyResult<char> {
            Ok(match a.pos.get(i) {
                Some(Value::Str(f)) => f.chars().next().unwrap_or(' '),
                _ => ' ',
            })
        };
        let list = |v: Vec<String>| Value::list(v.into_iter().map(Value::from).collect());
        Ok(match name {
            "upper" => Value::from(s.to_uppercase()),
            "lower" | "casefold" => Value::from(s.to_lowercase()),
            "swapcase" => Value::from(
                s.chars()
                    .map(|c| {
                        if c.is_uppercase() {
                            c.to_lowercase().collect::<String>()
                        } else {
                            c.to_uppercase().collect()
                        }
                    })
                    .collect::<String>(),
            ),
            "strip" => Value::from(match sarg(0)? {
                Some(c) => s.trim_matches(|x| c.contains(x)).to_string(),
                None => s.trim().to_string(),
            }),
            "lstrip" => Value::from(match sarg(0)? {
                Some(c) => s.trim_start_matches(|x| c.contains(x)).to_string(),
                None => s.trim_start().to_string(),
            }),
            "rstrip" => Value::from(match sarg(0)? {
                Some(c) => s.trim_end_matches(|x| c.contains(x)).to_string(),
                None => s.trim_end().to_string(),
            }),
            "split" | "rsplit" => {
                let sep = match a.kw.iter().find(|(k, _)| k == "sep") {
                    Some((_, Value::Str(x))) => Some(x.to_string()),
                    _ => sarg(0)?,
                };
                let max = match a.kw.iter().find(|(k, _)| k == "maxsplit") {
                    Some((_, v)) => v.as_int()?,
                    None => a.pos.get(1).map(|v| v.as_int()).transpose()?.unwrap_or(-1),
                };
                let parts: Vec<String> = match (sep, name == "rsplit") {
                    (Some(sep), _) if sep.is_empty() => {
                        return Err(PyErr::value_error("empty separator"))
                    }
                    (Some(sep), false) => {
                        if max < 0 {
                            s.split(sep.as_str()).map(String::from).collect()
                        } else {
                            s.splitn(max as usize + 1, sep.as_str())
                                .map(String::from)
                                .collect()
                        }
                    }
                    (Some(sep), true) => {
                        let mut v: Vec<String> = if max < 0 {
                            s.rsplit(sep.as_str()).map(String::from).collect()
                        } else {
                            s.rsplitn(max as usize + 1, sep.as_str())
                                .map(String::from)
                                .collect()
                        };
                        v.reverse();
                        v
                    }
                    (None, _) => {
                        if max < 0 {
                            s.split_whitespace().map(String::from).collect()
                        } else {
                            let mut out = vec![];
                            let mut rest = s.trim_start();
                            while !rest.is_empty() && (out.len() as i64) < max {
                                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                                out.push(rest[..end].to_string());
                                rest = rest[end..].trim_start();
                            }
                            if !rest.is_empty() {
                                out.push(rest.to_string());
                            }
                            out
                        }
                    }
                };
                list(parts)
            }
            "splitlines" => list(s.lines().map(String::from).collect()),
            "join" => {
                let items = self.iter_values(need(a, 0, name)?)?;
                let mut parts = Vec::with_capacity(items.len());
                for (i, x) in items.iter().enumerate() {
                    match x {
                        Value::Str(x) => parts.push(x.to_string()),
                        o => {
                            return Err(PyErr::type_error(format!(
                                "sequence item {i}: expected str instance, {} found",
                                o.type_name()
                            )))
                        }
                    }
                }
                Value::from(parts.join(s))
            }
            "replace" => {
                let old = sarg(0)?.unwrap_or_default();
                let new = sarg(1)?.unwrap_or_default();
                match a.pos.get(2) {
                    Some(n) => Value::from(s.replacen(&old, &new, n.as_int()?.max(0) as usize)),
                    None => Value::from(s.replace(&old, &new)),
                }
            }
            "startswith" | "endswith" => {
                let pats: Vec<String> = match need(a, 0, name)? {
                    Value::Tuple(t) => t
                        .iter()
                        .filter_map(|x| x.as_str().ok().map(String::from))
                        .collect(),
                    v => vec![v.as_str()?.to_string()],
                };
                Value::Bool(pats.iter().any(|p| {
                    if name == "startswith" {
                        s.starts_with(p.as_str())
                    } else {
                        s.ends_with(p.as_str())
                    }
                }))
            }
            "find" | "index" | "rfind" => {
                let sub = sarg(0)?.unwrap_or_default();
                let pos = if name == "rfind" {
                    s.rfind(&sub)
                } else {
                    s.find(&sub)
                };
                match pos {
                    Some(p) => Value::Int(s[..p].chars().count() as i64),
                    None if name == "index" => {
                        return Err(PyErr::value_error("substring not found"))
                    }
                    None => Value::Int(-1),
                }
            }
            "count" => Value::Int(s.matches(sarg(0)?.unwrap_or_default().as_str()).count() as i64),
            "format" => Value::from(self.str_format(s, a)?),
            "title" => {
                let mut out = String::new();
                let mut prev = false;
                for c in s.chars() {
                    if c.is_alphabetic() {
                        if prev {
                            out.extend(c.to_lowercase())
                        } else {
                            out.extend(c.to_uppercase())
                        }
                        prev = true;
                    } else {
                        out.push(c);
                        prev = false;
                    }
                }
                Value::from(out)
            }
            "capitalize" => {
                let mut c = s.chars();
                Value::from(match c.next() {
                    Some(f) => f
                        .to_uppercase()
                        .chain(c.flat_map(|x| x.to_lowercase()))
                        .collect(),
                    None => String::new(),
                })
            }
            "isdigit" | "isnumeric" => {
                Value::Bool(!s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
            }
            "isalpha" => Value::Bool(!s.is_empty() && s.chars().all(char::is_alphabetic)),
            "isalnum" => Value::Bool(!s.is_empty() && s.chars().all(char::is_alphanumeric)),
            "isspace" => Value::Bool(!s.is_empty() && s.chars().all(char::is_whitespace)),
            "isupper" => {
                Value::Bool(s.chars().any(char::is_uppercase) && !s.chars().any(char::is_lowercase))
            }
            "islower" => {
                Value::Bool(s.chars().any(char::is_lowercase) && !s.chars().any(char::is_uppercase))
            }
            "isidentifier" => Value::Bool(
                !s.is_empty()
                    && !s.starts_with(|c: char| c.is_ascii_digit())
                    && s.chars().all(|c| c.is_alphanumeric() || c == '_'),
            ),
            "center" | "ljust" | "rjust" => {
                let w = width(0)?;
                let f = fillc(1)?;
                let n = s.chars().count();
                if n >= w {
                    Value::Str(s.clone())
                } else {
                    let k = w - n;
                    let fs = |k: usize| f.to_string().repeat(k);
                    Value::from(match name {
                        "ljust" => format!("{s}{}", fs(k)),
                        "rjust" => format!("{}{s}", fs(k)),
                        _ => {
                            let left = k / 2 + (k & w & 1);
                            format!("{}{s}{}", fs(left), fs(k - left))
                        }
                    })
                }
            }
            "zfill" => {
                let w = width(0)?;
                let n = s.chars().count();
                if n >= w {
                    Value::Str(s.clone())
                } else {
                    let (sign, rest) = if s.starts_with(['-', '+']) {
                        s.split_at(1)
                    } else {
                        ("", &s[..])
                    };
                    Value::from(format!("{sign}{}{rest}", "0".repeat(w - n)))
                }
            }
            "partition" => {
                let sep = sarg(0)?.unwrap_or_default();
                match s.find(&sep) {
                    Some(p) => Value::tuple(vec![
                        Value::str(&s[..p]),
                        Value::str(&sep),
                        Value::str(&s[p + sep.len()..]),
                    ]),
                    None => {
                        Value::tuple(vec![Value::Str(s.clone()), Value::str(""), Value::str("")])
                    }
                }
            }
            "removeprefix" => {
                let p = sarg(0)?.unwrap_or_default();
                Value::str(s.strip_prefix(p.as_str()).unwrap_or(s))
            }
            "removesuffix" => {
                let p = sarg(0)?.unwrap_or_default();
                Value::str(s.strip_suffix(p.as_str()).unwrap_or(s))
            }
            "expandtabs" => Value::from(s.replace('\t', "        ")),
            "encode" => Value::Str(s.clone()),
            _ => return Err(no_method(&Value::Str(s.clone()), name)),
        })
    }

    fn seq_common(&mut self, items: &[Value], name: &str, a: &Args, ty: &str) -> PyResult<Value> {
        match name {
            "index" => {
                let x = need(a, 0, name)?.clone();
                for (i, y) in items.iter().enumerate() {
                    if self.eq(y, &x)? {
                        return Ok(Value::Int(i as i64));
                    }
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
                    if self.eq(y, &x)? {
                        n += 1;
                    }
                }
                Ok(Value::Int(n))
            }
            _ => Err(PyErr::attribute_error(format!(
                "'{ty}' object has no attribute '{name}'"
            ))),
        }
    }

    fn list_method(
        &mut self,
        this: &Value,
        l: &Rc<RefCell<Vec<Value>>>,
        name: &str,
        a: Args,
    ) -> PyResult<Value> {
        match name {
            "append" => {
                let v = need(&a, 0, name)?.clone();
                let mut lb = l.borrow_mut();
                if lb.len() as i64 >= super::ops::MAX_ITEMS {
                    return Err(PyErr::memory_error(""));
                }
                lb.push(v);
            }
            "extend" => {
                let items = self.iter_values(need(&a, 0, name)?)?;
                l.borrow_mut().extend(items);
            }
            "insert" => {
                let i = need(&a, 0, name)?.as_int()?;
                let v = need(&a, 1, name)?.clone();
                let mut lb = l.borrow_mut();
                let n = lb.len() as i64;
                let j = if i < 0 { (i + n).max(0) } else { i.min(n) };
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
                    if self.eq(y, &x)? {
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

    /// A stable sort with an optional key function, as `sorted` and `list.sort` do.
    pub fn sort_values(
        &mut self,
        items: Vec<Value>,
        key: Option<Value>,
        reverse: bool,
    ) -> PyResult<Vec<Value>> {
        let keys = match &key {
            Some(k) => items
                .iter()
                .map(|x| self.call_value(k, Args::new(vec![x.clone()])))
                .collect::<PyResult<Vec<_>>>()?,
            None => items.clone(),
        };
        let mut idx: Vec<usize> = (0..items.len()).collect();
        let mut err = None;
        // Merge sort by hand would be long; a comparison that records its first error works.
        idx.sort_by(|&i, &j| {
            if err.is_some() {
                return std::cmp::Ordering::Equal;
            }
            let (a, b) = if reverse {
                (&keys[j], &keys[i])
            } else {
                (&keys[i], &keys[j])
            };
            match self
                .rich_compare(super::object::CmpOp::Lt, a, b)
                .and_then(|v| self.truthy(&v))
            {
                Ok(true) => std::cmp::Ordering::Less,
                Ok(false) => match self
                    .rich_compare(super::object::CmpOp::Lt, b, a)
                    .and_then(|v| self.truthy(&v))
                {
                    Ok(true) => std::cmp::Ordering::Greater,
                    Ok(false) => std::cmp::Ordering::Equal,
                    Err(e) => {
                        err = Some(e);
                        std::cmp::Ordering::Equal
                    }
                },
                Err(e) => {
                    err = Some(e);
                    std::cmp::Ordering::Equal
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        Ok(idx.into_iter().map(|i| items[i].clone()).collect())
    }

    fn dict_method(&mut self, d: &Rc<RefCell<Dict>>, name: &str, a: Args) -> PyResult<Value> {
        Ok(match name {
            "keys" => Value::list(d.borrow().items().map(|(k, _)| k.clone()).collect()),
            "values" => Value::list(d.borrow().items().map(|(_, v)| v.clone()).collect()),
            "items" => Value::list(
                d.borrow()
                    .items()
                    .map(|(k, v)| Value::tuple(vec![k.clone(), v.clone()]))
                    .collect(),
            ),
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
                    (None, None) => return Err(PyErr::key_error(self.repr_of(k)?)),
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

    fn set_method(&mut self, this: &Value, s: &Set, name: &str, a: Args) -> PyResult<Value> {
        let other = |vm: &mut Self, i: usize| -> PyResult<IndexMap<HashKey, Value>> {
            let mut m = IndexMap::new();
            if let Some(v) = a.pos.get(i) {
                for x in vm.iter_values(v)? {
                    m.insert(HashKey::of(&x)?, x);
                }
            }
            Ok(m)
        };
        let mine = s.items.borrow().clone();
        let frozen = s.frozen;
        Ok(match name {
            "add" => {
                let v = need(&a, 0, name)?.clone();
                s.items.borrow_mut().insert(HashKey::of(&v)?, v);
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
                    return Err(PyErr::key_error(self.repr_of(v)?));
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

fn no_method(v: &Value, name: &str) -> PyErr {
    PyErr::attribute_error(format!(
        "'{}' object has no attribute '{name}'",
        v.type_name()
    ))
}
