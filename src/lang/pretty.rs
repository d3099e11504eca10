//! `str.format` and IPython's pretty printer for execute results, split from `format.rs`.

use super::exc::{PyErr, PyResult};
use super::object::Args;
use super::value::Value;
use super::vm::Vm;

impl Vm<'_> {
    /// `str.format(*args, **kwargs)`.
    pub fn str_format(&mut self, fmt: &str, args: &Args) -> PyResult<String> {
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
                _ => v,
            };
            let spec = if spec.contains('{') {
                self.str_format(spec, args)?
            } else {
                spec.to_string()
            };
            out.push_str(&self.format_value(&v, &spec)?);
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
        let flat = self.repr_of(v)?;
        if flat.chars().count() + indent <= 79 {
            return Ok(flat);
        }
        let (open, close, items): (&str, &str, Vec<(Option<Value>, Value)>) = match v {
            Value::List(l) => (
                "[",
                "]",
                l.borrow().iter().map(|x| (None, x.clone())).collect(),
            ),
            Value::Tuple(t) if t.len() > 1 => {
                ("(", ")", t.iter().map(|x| (None, x.clone())).collect())
            }
            Value::Dict(d) => (
                "{",
                "}",
                d.borrow()
                    .items()
                    .map(|(k, x)| (Some(k.clone()), x.clone()))
                    .collect(),
            ),
            _ => return Ok(flat),
        };
        let pad = " ".repeat(indent + 1);
        let mut lines = vec![];
        for (k, x) in items {
            let s = match k {
                Some(k) => {
                    let ks = self.repr_of(&k)?;
                    let w = indent + 1 + ks.chars().count() + 2;
                    format!("{ks}: {}", self.pretty_at(&x, w)?)
                }
                None => self.pretty_at(&x, indent + 1)?,
            };
            lines.push(s);
        }
        Ok(format!("{open}{}{close}", lines.join(&format!(",\n{pad}"))))
    }
}
