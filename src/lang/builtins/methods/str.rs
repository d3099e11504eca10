//! Methods of `str` with CPython's results and errors: searching, splitting, joining,
//! case, padding, stripping, replacing and tab expansion, every result sized through the
//! memory bound first.

use std::rc::Rc;

use super::{need, no_method};
use crate::lang::builtins::namespace::kw;
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::memory;
use crate::lang::values::object::Args;
use crate::lang::values::value::Value;

/// The `[start, end)` window, in characters, that `find`, `count`, `startswith` and their
/// kin read from their optional `start` and `end` arguments (after the first), with a
/// slice's rules: negative counts from the end, `None` is absent, `end` is clamped to the
/// length and both to 0. `start` stays past the end when given so, so the window is empty.
fn window(s: &str, a: &Args) -> PyResult<(i64, i64)> {
    let len = char_len(s);
    let bound = |i: usize| -> PyResult<Option<i64>> {
        match a.pos.get(i) {
            None | Some(Value::None) => Ok(None),
            Some(v @ (Value::Int(_) | Value::Bool(_))) => {
                let n = v.as_int()?;
                Ok(Some(if n < 0 { (n + len).max(0) } else { n }))
            }
            Some(_) => Err(PyErr::type_error(
                "slice indices must be integers or None or have an __index__ method",
            )),
        }
    };
    let start = bound(1)?.unwrap_or(0);
    let end = bound(2)?.map_or(len, |e| e.min(len));
    Ok((start, end))
}

fn char_len(s: &str) -> i64 {
    if s.is_ascii() {
        s.len() as i64
    } else {
        s.chars().count() as i64
    }
}

/// The byte offset of character `i` (at most the length) of `s`.
fn byte_at(s: &str, i: i64) -> usize {
    let i = i.max(0) as usize;
    if s.is_ascii() {
        i.min(s.len())
    } else {
        s.char_indices().nth(i).map_or(s.len(), |(b, _)| b)
    }
}

impl Vm<'_> {
    pub(super) fn str_method(&mut self, s: &Rc<str>, name: &str, a: &Args) -> PyResult<Value> {
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
                    (None, true) if max >= 0 => {
                        // From the right: the leftover run keeps its inner whitespace.
                        let mut out = vec![];
                        let mut rest = s.trim_end();
                        while !rest.is_empty() && (out.len() as i64) < max {
                            let start = rest.rfind(char::is_whitespace).map_or(0, |p| {
                                p + rest[p..].chars().next().map_or(1, char::len_utf8)
                            });
                            out.push(rest[start..].to_string());
                            rest = rest[..start].trim_end();
                        }
                        if !rest.is_empty() {
                            out.push(rest.to_string());
                        }
                        out.reverse();
                        out
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
            "join" => Value::from(self.join(s, need(a, 0, name)?)?),
            "replace" => {
                let old = sarg(0)?.unwrap_or_default();
                let new = sarg(1)?.unwrap_or_default();
                let max = match a.pos.get(2).or_else(|| kw(a, "count")) {
                    Some(n) => usize::try_from(n.as_int()?).unwrap_or(usize::MAX),
                    None => usize::MAX,
                };
                Value::from(replace(s, &old, &new, max)?)
            }
            "startswith" | "endswith" => {
                let pats: Vec<String> = match need(a, 0, name)? {
                    Value::Tuple(t) => t
                        .iter()
                        .filter_map(|x| x.as_str().ok().map(String::from))
                        .collect(),
                    v => vec![v.as_str()?.to_string()],
                };
                let (start, end) = window(s, a)?;
                Value::Bool(pats.iter().any(|p| {
                    // CPython's tailmatch: the pattern must fit inside the window.
                    let n = p.chars().count() as i64;
                    if end - n < start {
                        return false;
                    }
                    let (from, to) = if name == "startswith" {
                        (start, start + n)
                    } else {
                        (end - n, end)
                    };
                    &s[byte_at(s, from)..byte_at(s, to)] == p.as_str()
                }))
            }
            "find" | "index" | "rfind" | "rindex" => {
                let sub = sarg(0)?.unwrap_or_default();
                let (start, end) = window(s, a)?;
                // A window that ends before it starts holds nothing, not even "".
                let pos = if end < start {
                    None
                } else {
                    let from = byte_at(s, start);
                    let w = &s[from..byte_at(s, end)];
                    let at = if name.starts_with('r') {
                        w.rfind(&sub)
                    } else {
                        w.find(&sub)
                    };
                    at.map(|p| start + w[..p].chars().count() as i64)
                };
                match pos {
                    Some(p) => Value::Int(p),
                    None if name.ends_with("index") => {
                        return Err(PyErr::value_error("substring not found"))
                    }
                    None => Value::Int(-1),
                }
            }
            "count" => {
                let sub = sarg(0)?.unwrap_or_default();
                let (start, end) = window(s, a)?;
                Value::Int(if end < start {
                    0
                } else if sub.is_empty() {
                    end - start + 1
                } else {
                    s[byte_at(s, start)..byte_at(s, end)]
                        .matches(sub.as_str())
                        .count() as i64
                })
            }
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
                    let left = match name {
                        "ljust" => 0,
                        "rjust" => k,
                        // CPython's split of an odd margin.
                        _ => k / 2 + (k & w & 1),
                    };
                    Value::from(memory::pad(s, f, left, k - left)?)
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
                    let mut out = memory::pad(sign, '0', 0, w - n)?;
                    memory::reserve_str(&mut out, rest.len())?;
                    out.push_str(rest);
                    Value::from(out)
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
            "expandtabs" => {
                let tab = match a.pos.first().or_else(|| kw(a, "tabsize")) {
                    Some(v) => usize::try_from(v.as_int()?).unwrap_or(0),
                    None => 8,
                };
                Value::from(expand_tabs(s, tab)?)
            }
            _ => return Err(no_method(&Value::Str(s.clone()), name)),
        })
    }

    /// `sep.join(iterable)`: a list or tuple is read in place, its strings measured first
    /// and copied into one buffer of the exact size, with interrupt checks along the way.
    fn join(&mut self, sep: &str, iterable: &Value) -> PyResult<String> {
        match iterable {
            Value::List(l) => {
                let l = l.clone();
                let items = l.borrow();
                self.join_strs(sep, &items)
            }
            Value::Tuple(t) => self.join_strs(sep, t),
            other => {
                let items = self.iter_values(other)?;
                self.join_strs(sep, &items)
            }
        }
    }

    fn join_strs(&mut self, sep: &str, items: &[Value]) -> PyResult<String> {
        const CHECK_EVERY: usize = 1 << 16;
        let mut total = sep
            .len()
            .checked_mul(items.len().saturating_sub(1))
            .ok_or_else(memory::memory_error)?;
        for (i, x) in items.iter().enumerate() {
            match x {
                Value::Str(x) => {
                    total = total
                        .checked_add(x.len())
                        .ok_or_else(memory::memory_error)?;
                }
                o => {
                    return Err(PyErr::type_error(format!(
                        "sequence item {i}: expected str instance, {} found",
                        o.type_name()
                    )))
                }
            }
            if i % CHECK_EVERY == CHECK_EVERY - 1 {
                crate::lang::values::object::Ctx::check_interrupt(self)?;
            }
        }
        let mut out = memory::string_with_capacity(total)?;
        for (i, x) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            if let Value::Str(x) = x {
                out.push_str(x);
            }
            if i % CHECK_EVERY == CHECK_EVERY - 1 {
                crate::lang::values::object::Ctx::check_interrupt(self)?;
            }
        }
        Ok(out)
    }
}

/// `str.replace`: at most `max` occurrences of `old` (every gap between characters when
/// `old` is empty), the result sized first so that a huge one is a `MemoryError`.
fn replace(s: &str, old: &str, new: &str, max: usize) -> PyResult<String> {
    let found = if old.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(old).count()
    }
    .min(max);
    let total = (s.len() - found * old.len())
        .checked_add(
            found
                .checked_mul(new.len())
                .ok_or_else(memory::memory_error)?,
        )
        .ok_or_else(memory::memory_error)?;
    let mut out = memory::string_with_capacity(total)?;
    if old.is_empty() {
        let mut left = found;
        for c in s.chars() {
            if left > 0 {
                out.push_str(new);
                left -= 1;
            }
            out.push(c);
        }
        if left > 0 {
            out.push_str(new);
        }
    } else {
        let mut rest = s;
        for _ in 0..found {
            let Some(at) = rest.find(old) else { break };
            out.push_str(&rest[..at]);
            out.push_str(new);
            rest = &rest[at + old.len()..];
        }
        out.push_str(rest);
    }
    Ok(out)
}

/// `str.expandtabs`: each tab becomes the spaces up to the next multiple of `tab` columns;
/// a newline or carriage return starts the count again.
fn expand_tabs(s: &str, tab: usize) -> PyResult<String> {
    let mut total = 0usize;
    let mut col = 0usize;
    for c in s.chars() {
        let add = match c {
            '\t' if tab > 0 => tab - col % tab,
            '\t' => 0,
            _ => c.len_utf8(),
        };
        total = total.checked_add(add).ok_or_else(memory::memory_error)?;
        col = match c {
            '\n' | '\r' => 0,
            '\t' => col + add,
            _ => col + 1,
        };
    }
    let mut out = memory::string_with_capacity(total)?;
    let mut col = 0usize;
    for c in s.chars() {
        match c {
            '\t' => {
                let n = if tab > 0 { tab - col % tab } else { 0 };
                out.extend(std::iter::repeat_n(' ', n));
                col += n;
            }
            '\n' | '\r' => {
                out.push(c);
                col = 0;
            }
            _ => {
                out.push(c);
                col += 1;
            }
        }
    }
    Ok(out)
}
