//! `str.format` and IPython's pretty printer for execute results, split from `format.rs`.

use crate::lang::datamodel::repr::REPR_CONTEXT;
use crate::lang::eval::vm::Vm;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::memory;
use crate::lang::values::object::{Args, Ctx};
use crate::lang::values::value::Value;

/// The width IPython's pretty printer fills before it breaks a container into lines.
const LINE_WIDTH: usize = 79;

/// IPython's `max_seq_length`: a container shows this many items, then `...`.
const MAX_SEQ_LENGTH: usize = 1000;

impl Vm<'_> {
    /// `str.format(*args, **kwargs)`.
    pub fn str_format(&mut self, fmt: &str, args: &Args) -> PyResult<String> {
        self.str_format_nested(fmt, args, 2)
    }

    /// A format string whose fields may nest `levels` more levels (`{:{width}}` nests
    /// one), as CPython allows two.
    fn str_format_nested(&mut self, fmt: &str, args: &Args, levels: u32) -> PyResult<String> {
        if levels == 0 {
            return Err(PyErr::value_error("Max string recursion exceeded"));
        }
        let chars: Vec<char> = fmt.chars().collect();
        let mut out = String::new();
        let mut auto = 0usize;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '{' && chars.get(i + 1) == Some(&'{') {
                out.push('{');
                i += 2;
                continue;
            }
            if c == '}' && chars.get(i + 1) == Some(&'}') {
                out.push('}');
                i += 2;
                continue;
            }
            if c != '{' {
                out.push(c);
                i += 1;
                continue;
            }
            let mut depth = 1;
            let mut j = i + 1;
            while j < chars.len() && depth > 0 {
                match chars[j] {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                j += 1;
            }
            if depth != 0 {
                return Err(PyErr::value_error(
                    "Single '{' encountered in format string",
                ));
            }
            let field: String = chars[i + 1..j - 1].iter().collect();
            i = j;
            let (head, spec) = match field.find(':') {
                Some(p) => (&field[..p], &field[p + 1..]),
                None => (field.as_str(), ""),
            };
            let (head, conv) = match head.find('!') {
                Some(p) => (&head[..p], head[p + 1..].chars().next()),
                None => (head, None),
            };
            let split = head.find(['.', '[']).unwrap_or(head.len());
            let (name, rest) = head.split_at(split);
            let mut v = if name.is_empty() {
                let v = args.pos.get(auto).cloned().ok_or_else(|| {
                    PyErr::index_error(format!(
                        "Replacement index {auto} out of range for positional args tuple"
                    ))
                })?;
                auto += 1;
                v
            } else if let Ok(n) = name.parse::<usize>() {
                args.pos.get(n).cloned().ok_or_else(|| {
                    PyErr::index_error(format!(
                        "Replacement index {n} out of range for positional args tuple"
                    ))
                })?
            } else {
                args.kw
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| PyErr::key_error(format!("'{name}'")))?
            };
            let mut r = rest;
            while !r.is_empty() {
                if let Some(x) = r.strip_prefix('.') {
                    let e = x.find(['.', '[']).unwrap_or(x.len());
                    v = self.get_attr(&v, &x[..e])?;
                    r = &x[e..];
                } else if let Some(x) = r.strip_prefix('[') {
                    let e = x.find(']').unwrap_or(x.len());
                    let k = &x[..e];
                    let key = k
                        .parse::<i64>()
                        .map(Value::Int)
                        .unwrap_or_else(|_| Value::str(k));
                    v = self.get_item(&v, &key)?;
                    r = x.get(e + 1..).unwrap_or("");
                } else {
                    break;
                }
            }
            let v = match conv {
                Some('r') => Value::from(self.repr_of(&v)?),
                Some('s') => Value::from(self.str_of(&v)?),
                Some('a') => Value::from(crate::lang::builtins::format::ascii_escape(
                    &self.repr_of(&v)?,
                )),
                Some(c) => {
                    return Err(PyErr::value_error(format!(
                        "Unknown conversion specifier {c}"
                    )))
                }
                None => v,
            };
            let spec = if spec.contains('{') {
                self.str_format_nested(spec, args, levels - 1)?
            } else {
                spec.to_string()
            };
            let piece = self.format_value(&v, &spec)?;
            memory::reserve_str(&mut out, piece.len())?;
            out.push_str(&piece);
        }
        Ok(out)
    }

    /// IPython's pretty form of an execute result.
    pub fn pretty(&mut self, v: &Value) -> PyResult<String> {
        self.pretty_types = true;
        let r = self.pretty_at(v, 0);
        self.pretty_types = false;
        r
    }

    fn pretty_at(&mut self, v: &Value, indent: usize) -> PyResult<String> {
        let len = match v {
            Value::List(l) => l.borrow().len(),
            Value::Tuple(t) if t.len() > 1 => t.len(),
            Value::Dict(d) => d.borrow().len(),
            _ => return self.repr_of(v),
        };
        // Every item takes at least one character and a separator, so a container of more
        // than a line's worth of items never fits flat: its flat repr is not built.
        if 3 * len + indent <= LINE_WIDTH {
            let flat = self.repr_of(v)?;
            if flat.chars().count() + indent <= LINE_WIDTH {
                return Ok(flat);
            }
        }
        if !self.repr_enter(v) {
            // Printed further out already: `[...]`.
            return self.repr_of(v);
        }
        let r = self.nested(REPR_CONTEXT, |vm| vm.pretty_lines(v, indent));
        self.repr_leave(v);
        r
    }

    /// A container one item per line, at most [`MAX_SEQ_LENGTH`] of them then `...`, as
    /// IPython's pretty printer breaks what does not fit.
    fn pretty_lines(&mut self, v: &Value, indent: usize) -> PyResult<String> {
        let (open, close) = match v {
            Value::List(_) => ("[", "]"),
            Value::Dict(_) => ("{", "}"),
            _ => ("(", ")"),
        };
        let sep = format!(",\n{}", " ".repeat(indent + 1));
        let mut out = String::from(open);
        let mut i = 0;
        loop {
            let (key, item) = match v {
                Value::List(l) => match l.borrow().get(i) {
                    Some(x) => (None, x.clone()),
                    None => break,
                },
                Value::Tuple(t) => match t.get(i) {
                    Some(x) => (None, x.clone()),
                    None => break,
                },
                Value::Dict(d) => match d.borrow().map.get_index(i) {
                    Some((_, (k, x))) => (Some(k.clone()), x.clone()),
                    None => break,
                },
                _ => break,
            };
            if i > 0 {
                memory::reserve_str(&mut out, sep.len())?;
                out.push_str(&sep);
            }
            if i == MAX_SEQ_LENGTH {
                out.push_str("...");
                break;
            }
            let line = match key {
                Some(k) => {
                    let ks = self.repr_of(&k)?;
                    let w = indent + 1 + ks.chars().count() + 2;
                    format!("{ks}: {}", self.pretty_at(&item, w)?)
                }
                None => self.pretty_at(&item, indent + 1)?,
            };
            memory::reserve_str(&mut out, line.len() + close.len())?;
            out.push_str(&line);
            i += 1;
            if i % 256 == 0 {
                Ctx::check_interrupt(self)?;
            }
        }
        out.push_str(close);
        Ok(out)
    }
}
