//! Indexing, slicing, membership, length and iteration for every kind of value.

use crate::lang::eval::generator::Generator;
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::Args;
use crate::lang::values::runtime::*;
use crate::lang::values::value::{Dict, HashKey, Value};

fn norm_index(i: i64, len: usize, what: &str) -> PyResult<usize> {
    let j = if i < 0 { i + len as i64 } else { i };
    if j < 0 || j >= len as i64 {
        return Err(PyErr::index_error(format!("{what} index out of range")));
    }
    Ok(j as usize)
}

/// What a slice selects from a sequence of `len`, as CPython's `PySlice_AdjustIndices`
/// computes it: the first index, the bound, the step and how many indices there are.
pub fn slice_bounds(s: &Slice, len: usize) -> PyResult<(i64, i64, i64, usize)> {
    let len = len as i64;
    let step = if s.step.is_none() {
        1
    } else {
        s.step.as_int()?
    };
    if step == 0 {
        return Err(PyErr::value_error("slice step cannot be zero"));
    }
    let clamp = |v: &Value, default: i64| -> PyResult<i64> {
        if v.is_none() {
            return Ok(default);
        }
        let mut i = v.as_int()?;
        if i < 0 {
            i = i.saturating_add(len);
            if i < 0 {
                i = if step < 0 { -1 } else { 0 };
            }
        } else if i >= len {
            i = if step < 0 { len - 1 } else { len };
        }
        Ok(i)
    };
    let (lo, hi) = if step > 0 {
        (clamp(&s.lo, 0)?, clamp(&s.hi, len)?)
    } else {
        (clamp(&s.lo, len - 1)?, clamp(&s.hi, -1)?)
    };
    // In i128: a step near i64::MIN must not overflow the count.
    let (l, h, st) = (lo as i128, hi as i128, step as i128);
    let count = if st > 0 && h > l {
        (h - l - 1) / st + 1
    } else if st < 0 && l > h {
        (l - h - 1) / -st + 1
    } else {
        0
    };
    Ok((lo, hi, step, count as usize))
}

/// The indices a slice selects from a sequence of `len`, in order.
pub fn slice_indices(s: &Slice, len: usize) -> PyResult<Vec<usize>> {
    let (lo, _, step, count) = slice_bounds(s, len)?;
    let mut out = crate::lang::values::memory::vec_with_capacity(count)?;
    out.extend((0..count as i64).map(|k| (lo + k * step) as usize));
    Ok(out)
}

/// The byte offset of character `i` of `s` (its length when `i` is the character count).
fn char_offset(s: &str, i: usize) -> usize {
    if s.is_char_boundary(i) && i <= s.len() && s.as_bytes()[..i].is_ascii() {
        return i;
    }
    s.char_indices().nth(i).map_or(s.len(), |(at, _)| at)
}

impl Vm<'_> {
    pub fn get_item(&mut self, v: &Value, k: &Value) -> PyResult<Value> {
        match (v, k) {
            (Value::List(l), Value::Int(i)) => {
                let l = l.borrow();
                let j = norm_index(*i, l.len(), "list")?;
                return Ok(l[j].clone());
            }
            (Value::Tuple(t), Value::Int(i)) => {
                let j = norm_index(*i, t.len(), "tuple")?;
                return Ok(t[j].clone());
            }
            (Value::Dict(d), _) => {
                if let Some(x) = d.borrow().get(k)? {
                    return Ok(x);
                }
                if let Some(kind) = Dict::kind_of(v) {
                    if let Some(x) = kind.missing(v, k, self)? {
                        return Ok(x);
                    }
                }
                return Err(self.key_error(k));
            }
            (Value::Str(s), Value::Int(i)) => {
                // Counting every character is needed only for an index from the end.
                let c = if *i >= 0 {
                    s.chars().nth(*i as usize)
                } else {
                    let j = norm_index(*i, s.chars().count(), "string")?;
                    s.chars().nth(j)
                };
                return match c {
                    Some(c) => Ok(Value::from(c.encode_utf8(&mut [0; 4]) as &str)),
                    None => Err(PyErr::index_error("string index out of range")),
                };
            }
            (Value::Native(o), _) => {
                let o = o.clone();
                return o.getitem(k, self);
            }
            _ => {}
        }
        if let Some(s) = k.downcast::<Slice>() {
            match v {
                Value::List(l) => {
                    let l = l.borrow();
                    let idx = slice_indices(s, l.len())?;
                    return Ok(Value::list(idx.into_iter().map(|i| l[i].clone()).collect()));
                }
                Value::Tuple(t) => {
                    let idx = slice_indices(s, t.len())?;
                    return Ok(Value::tuple(
                        idx.into_iter().map(|i| t[i].clone()).collect(),
                    ));
                }
                Value::Str(st) => return Ok(Value::from(str_slice(st, s)?)),
                _ => {}
            }
            if let Some(r) = v.downcast::<Range>() {
                // A slice of a range is a range, as in Python: nothing is materialized.
                let (lo, hi, step, _) = slice_bounds(s, r.len() as usize)?;
                let at = |i: i64| {
                    i.checked_mul(r.step)
                        .and_then(|x| x.checked_add(r.start))
                        .ok_or_else(|| PyErr::new("OverflowError", "range slice out of range"))
                };
                let step = step
                    .checked_mul(r.step)
                    .ok_or_else(|| PyErr::new("OverflowError", "range slice out of range"))?;
                let (start, stop) = (at(lo)?, at(hi)?);
                return Ok(Value::Obj(std::rc::Rc::new(Range { start, stop, step })));
            }
        }
        if let Some(r) = v.downcast::<Range>() {
            if let Value::Int(i) = k {
                let j = norm_index(*i, r.len() as usize, "range object")?;
                return Ok(Value::Int(r.start + j as i64 * r.step));
            }
        }
        if let Value::Bool(b) = k {
            return self.get_item(v, &Value::Int(*b as i64));
        }
        if v.downcast::<Instance>().is_some() {
            if let Some(m) = self.try_attr(v, "__getitem__")? {
                return self.call_value(&m, Args::new(vec![k.clone()]));
            }
        }
        if v.downcast::<Class>().is_some() || v.downcast::<BuiltinType>().is_some() {
            // `list[int]` in annotations: the class itself is a fine stand-in.
            return Ok(v.clone());
        }
        match v {
            Value::List(_) | Value::Tuple(_) | Value::Str(_) => Err(PyErr::type_error(format!(
                "{} indices must be integers or slices, not {}",
                v.type_name(),
                k.type_name()
            ))),
            _ => Err(PyErr::type_error(format!(
                "'{}' object is not subscriptable",
                v.type_name()
            ))),
        }
    }

    pub fn set_item(&mut self, o: &Value, k: &Value, v: Value) -> PyResult<()> {
        match (o, k) {
            (Value::List(l), Value::Int(i)) => {
                let mut l = l.borrow_mut();
                let j = norm_index(*i, l.len(), "list assignment")?;
                l[j] = v;
                Ok(())
            }
            (Value::Dict(d), _) => d.borrow_mut().insert(k.clone(), v),
            (Value::Native(n), _) => {
                let n = n.clone();
                n.setitem(k, v, self)
            }
            (Value::List(l), _) if k.downcast::<Slice>().is_some() => {
                let s = k
                    .downcast::<Slice>()
                    .ok_or_else(|| PyErr::type_error("slice"))?;
                let items = self.iter_values(&v)?;
                let len = l.borrow().len();
                let idx = slice_indices(s, len)?;
                let step = if s.step.is_none() {
                    1
                } else {
                    s.step.as_int()?
                };
                let mut lb = l.borrow_mut();
                if step == 1 {
                    let start = idx.first().copied().unwrap_or_else(|| {
                        let lo = if s.lo.is_none() {
                            0
                        } else {
                            s.lo.as_int().unwrap_or(0)
                        };
                        let lo = if lo < 0 { (lo + len as i64).max(0) } else { lo };
                        (lo as usize).min(len)
                    });
                    let end = idx.last().map(|x| x + 1).unwrap_or(start);
                    lb.splice(start..end, items);
                    Ok(())
                } else if idx.len() == items.len() {
                    for (i, x) in idx.into_iter().zip(items) {
                        lb[i] = x;
                    }
                    Ok(())
                } else {
                    Err(PyErr::value_error(format!(
                        "attempt to assign sequence of size {} to extended slice of size {}",
                        items.len(),
                        idx.len()
                    )))
                }
            }
            _ => {
                if o.downcast::<Instance>().is_some() {
                    if let Some(m) = self.try_attr(o, "__setitem__")? {
                        self.call_value(&m, Args::new(vec![k.clone(), v]))?;
                        return Ok(());
                    }
                }
                Err(PyErr::type_error(format!(
                    "'{}' object does not support item assignment",
                    o.type_name()
                )))
            }
        }
    }

    pub fn del_item(&mut self, o: &Value, k: &Value) -> PyResult<()> {
        match (o, k) {
            (Value::List(l), Value::Int(i)) => {
                let mut l = l.borrow_mut();
                let j = norm_index(*i, l.len(), "list assignment")?;
                l.remove(j);
                Ok(())
            }
            (Value::List(l), _) if k.downcast::<Slice>().is_some() => {
                let s = k
                    .downcast::<Slice>()
                    .ok_or_else(|| PyErr::type_error("slice"))?;
                let mut idx = slice_indices(s, l.borrow().len())?;
                idx.sort_unstable();
                let mut lb = l.borrow_mut();
                for i in idx.into_iter().rev() {
                    lb.remove(i);
                }
                Ok(())
            }
            (Value::Dict(d), _) => match d.borrow_mut().remove(k)? {
                Some(_) => Ok(()),
                None => Err(self.key_error(k)),
            },
            _ => {
                if o.downcast::<Instance>().is_some() {
                    if let Some(m) = self.try_attr(o, "__delitem__")? {
                        self.call_value(&m, Args::new(vec![k.clone()]))?;
                        return Ok(());
                    }
                }
                Err(PyErr::type_error(format!(
                    "'{}' object does not support item deletion",
                    o.type_name()
                )))
            }
        }
    }

    pub fn contains(&mut self, container: &Value, item: &Value) -> PyResult<bool> {
        match container {
            Value::Str(s) => match item {
                Value::Str(x) => Ok(s.contains(&**x)),
                _ => Err(PyErr::type_error(format!(
                    "'in <string>' requires string as left operand, not {}",
                    item.type_name()
                ))),
            },
            Value::Dict(d) => Ok(d.borrow().get(item)?.is_some()),
            _ => {
                if let Some(s) = container.downcast::<Set>() {
                    return Ok(s.items.borrow().contains_key(&HashKey::of(item)?));
                }
                if let Some(r) = container.downcast::<Range>() {
                    if let Value::Int(i) = item {
                        let r = *r;
                        let inside = if r.step > 0 {
                            *i >= r.start && *i < r.stop
                        } else {
                            *i <= r.start && *i > r.stop
                        };
                        return Ok(inside && (i - r.start) % r.step == 0);
                    }
                }
                if container.downcast::<Instance>().is_some() {
                    if let Some(m) = self.try_attr(container, "__contains__")? {
                        let r = self.call_value(&m, Args::new(vec![item.clone()]))?;
                        return self.truthy(&r);
                    }
                }
                if let Value::List(_) | Value::Tuple(_) = container {
                    // Read by index: an item's `__eq__` may change the list.
                    let mut i = 0;
                    loop {
                        let x = match container {
                            Value::List(l) => l.borrow().get(i).cloned(),
                            Value::Tuple(t) => t.get(i).cloned(),
                            _ => None,
                        };
                        let Some(x) = x else { return Ok(false) };
                        if self.eq_or_same(&x, item)? {
                            return Ok(true);
                        }
                        self.check_interrupt_fast()?;
                        i += 1;
                    }
                }
                let items = self.iter_values(container).map_err(|e| {
                    if e.type_name() == "TypeError" && e.message().ends_with("is not iterable") {
                        PyErr::type_error(format!(
                            "argument of type '{}' is not iterable",
                            container.type_name()
                        ))
                    } else {
                        e
                    }
                })?;
                for x in items {
                    if self.eq_or_same(&x, item)? {
                        return Ok(true);
                    }
                    self.check_interrupt_fast()?;
                }
                Ok(false)
            }
        }
    }

    pub fn len_of(&mut self, v: &Value) -> PyResult<usize> {
        Ok(match v {
            Value::Str(s) => s.chars().count(),
            Value::List(l) => l.borrow().len(),
            Value::Tuple(t) => t.len(),
            Value::Dict(d) => d.borrow().len(),
            Value::Native(o) => {
                let o = o.clone();
                match o.len(self)? {
                    Some(n) => n,
                    None => return Err(no_len(v)),
                }
            }
            _ => {
                if let Some(s) = v.downcast::<Set>() {
                    return Ok(s.items.borrow().len());
                }
                if let Some(r) = v.downcast::<Range>() {
                    return Ok(r.len() as usize);
                }
                if let Some(dv) = v.downcast::<DictView>() {
                    return Ok(dv.dict.borrow().len());
                }
                if v.downcast::<Instance>().is_some() {
                    if let Some(m) = self.try_attr(v, "__len__")? {
                        let r = self.call_value(&m, Args::default())?;
                        return Ok(r.as_int()?.max(0) as usize);
                    }
                }
                return Err(no_len(v));
            }
        })
    }

    /// `iter(v)`: a value that `next_item` advances.
    pub fn get_iter(&mut self, v: &Value) -> PyResult<Value> {
        if let Value::Native(o) = v {
            let o = o.clone();
            return o.iter(v, self);
        }
        if v.downcast::<SeqIter>().is_some() || v.downcast::<Generator>().is_some() {
            return Ok(v.clone());
        }
        if v.downcast::<Instance>().is_some() {
            if let Some(m) = self.try_attr(v, "__iter__")? {
                return self.call_value(&m, Args::default());
            }
            if self.try_attr(v, "__getitem__")?.is_some() {
                let mut items = vec![];
                let mut i = 0;
                loop {
                    match self.get_item(v, &Value::Int(i)) {
                        Ok(x) => items.push(x),
                        Err(e)
                            if e.type_name() == "IndexError"
                                || e.type_name() == "StopIteration" =>
                        {
                            break
                        }
                        Err(e) => return Err(e),
                    }
                    i += 1;
                    self.check_interrupt_fast()?;
                }
                return Ok(SeqIter::value(items));
            }
            // Neither protocol: asking `iter_values` would come straight back here.
            return Err(PyErr::type_error(format!(
                "'{}' object is not iterable",
                v.type_name()
            )));
        }
        Ok(SeqIter::value(self.iter_values(v)?))
    }

    pub fn next_item(&mut self, it: &Value) -> PyResult<Option<Value>> {
        if let Some(s) = it.downcast::<SeqIter>() {
            let i = s.pos.get();
            s.pos.set(i + 1);
            return Ok(s.items.get(i).cloned());
        }
        if let Some(g) = it.downcast::<Generator>() {
            return self.generator_next(g);
        }
        if let Value::Native(o) = it {
            let o = o.clone();
            return o.next(self);
        }
        if it.downcast::<Instance>().is_some() {
            if let Some(m) = self.try_attr(it, "__next__")? {
                return match self.call_value(&m, Args::default()) {
                    Ok(v) => Ok(Some(v)),
                    Err(e) if e.type_name() == "StopIteration" => Ok(None),
                    Err(e) => Err(e),
                };
            }
        }
        Err(PyErr::type_error(format!(
            "'{}' object is not an iterator",
            it.type_name()
        )))
    }

    /// Every item of an iterable, collected.
    pub fn iter_values(&mut self, v: &Value) -> PyResult<Vec<Value>> {
        match v {
            Value::List(l) => return crate::lang::values::memory::copy(&l.borrow()),
            Value::Tuple(t) => return crate::lang::values::memory::copy(t),
            Value::Str(s) => {
                // Each character becomes a string of its own: its value and its allocation.
                let n = s.chars().count();
                if !crate::lang::values::memory::fits(n, std::mem::size_of::<Value>() + 32) {
                    return Err(crate::lang::values::memory::memory_error());
                }
                let mut out = crate::lang::values::memory::vec_with_capacity(n)?;
                out.extend(
                    s.chars()
                        .map(|c| Value::from(c.encode_utf8(&mut [0; 4]) as &str)),
                );
                return Ok(out);
            }
            Value::Dict(d) => {
                let d = d.borrow();
                let mut out = crate::lang::values::memory::vec_with_capacity(d.len())?;
                out.extend(d.items().map(|(k, _)| k.clone()));
                return Ok(out);
            }
            _ => {}
        }
        if let Some(s) = v.downcast::<Set>() {
            return Ok(s.ordered());
        }
        if let Some(r) = v.downcast::<Range>() {
            let n = r.len();
            let mut out = crate::lang::values::memory::vec_with_capacity(n as usize)?;
            out.extend((0..n).map(|i| Value::Int(r.start + i * r.step)));
            return Ok(out);
        }
        if let Some(dv) = v.downcast::<DictView>() {
            return Ok(dv.values());
        }
        if let Some(s) = v.downcast::<SeqIter>() {
            let i = s.pos.get();
            s.pos.set(s.items.len());
            return Ok(s.items.get(i..).map(|x| x.to_vec()).unwrap_or_default());
        }
        let is_iterable = matches!(v, Value::Native(_))
            || v.downcast::<Instance>().is_some()
            || v.downcast::<Generator>().is_some();
        if !is_iterable {
            return Err(PyErr::type_error(format!(
                "'{}' object is not iterable",
                v.type_name()
            )));
        }
        let it = self.get_iter(v)?;
        if it.downcast::<SeqIter>().is_some() && !it.is(v) {
            return self.iter_values(&it);
        }
        let mut out = vec![];
        while let Some(x) = self.next_item(&it)? {
            crate::lang::values::memory::push(&mut out, x)?;
            if out.len() & 255 == 0 {
                self.check_interrupt_fast()?;
            }
        }
        Ok(out)
    }

    /// Key/value pairs of a mapping (for `**kwargs` and `dict(m)`).
    pub fn mapping_items(&mut self, m: &Value) -> PyResult<Vec<(Value, Value)>> {
        if let Value::Dict(d) = m {
            return Ok(d
                .borrow()
                .items()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect());
        }
        let keys_fn = self.try_attr(m, "keys")?;
        match keys_fn {
            Some(kf) => {
                let keys = self.call_value(&kf, Args::default())?;
                let mut out = vec![];
                for k in self.iter_values(&keys)? {
                    let v = self.get_item(m, &k)?;
                    out.push((k, v));
                }
                Ok(out)
            }
            None => Err(PyErr::type_error(format!(
                "'{}' object is not a mapping",
                m.type_name()
            ))),
        }
    }
}

/// `s[slice]`: a forward slice of step one is cut at its two character offsets; other
/// slices pick characters by index (bytes, when the text is ASCII).
fn str_slice(st: &str, s: &Slice) -> PyResult<String> {
    let simple = s.step.is_none() || matches!(s.step, Value::Int(1));
    let nonneg = |v: &Value| v.is_none() || matches!(v, Value::Int(i) if *i >= 0);
    if simple && nonneg(&s.lo) && nonneg(&s.hi) {
        let lo = if s.lo.is_none() {
            0
        } else {
            s.lo.as_int()? as usize
        };
        let a = char_offset(st, lo);
        let b = if s.hi.is_none() {
            st.len()
        } else {
            let hi = s.hi.as_int()? as usize;
            a + char_offset(&st[a..], hi.saturating_sub(lo))
        };
        return Ok(st[a..b.max(a)].to_string());
    }
    if st.is_ascii() {
        let idx = slice_indices(s, st.len())?;
        let bytes = st.as_bytes();
        let mut out = crate::lang::values::memory::string_with_capacity(idx.len())?;
        out.extend(idx.into_iter().map(|i| bytes[i] as char));
        return Ok(out);
    }
    let chars: Vec<char> = {
        let n = st.chars().count();
        let mut v = crate::lang::values::memory::vec_with_capacity(n)?;
        v.extend(st.chars());
        v
    };
    let idx = slice_indices(s, chars.len())?;
    let mut out = crate::lang::values::memory::string_with_capacity(idx.len())?;
    out.extend(idx.into_iter().map(|i| chars[i]));
    Ok(out)
}

fn no_len(v: &Value) -> PyErr {
    PyErr::type_error(format!("object of type '{}' has no len()", v.type_name()))
}
