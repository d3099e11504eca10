//! `json`: `dumps`/`dump` and `loads`/`load` with CPython's output byte for byte (indent,
//! separators, sort_keys, ensure_ascii, allow_nan, default) and its errors: the
//! `TypeError` for an object it cannot serialize, and `JSONDecodeError` (a `ValueError`)
//! with the message, line, column and character offset CPython's C scanner reports.
//! Files are reached through their `write`/`read` methods, so any file object works.

use std::rc::Rc;

use crate::lang::{float_repr, Args, Ctx, Dict, NativeFn, NativeModule, PyErr, PyResult, Value};

/// How `dumps` writes, from its keyword arguments.
struct Encoder {
    ensure_ascii: bool,
    allow_nan: bool,
    check_circular: bool,
    skipkeys: bool,
    sort_keys: bool,
    indent: Option<String>,
    item_sep: String,
    key_sep: String,
    default: Option<Value>,
    /// Containers being written, by address, to refuse a value that contains itself.
    open: Vec<usize>,
}

const DUMPS_PARAMS: &[&str] = &[
    "obj",
    "skipkeys",
    "ensure_ascii",
    "check_circular",
    "allow_nan",
    "cls",
    "indent",
    "separators",
    "default",
    "sort_keys",
];

impl Encoder {
    /// Reads the keyword arguments of `dumps`/`dump` (`s[0]` is the object).
    fn from_slots(s: &[Option<Value>], ctx: &mut dyn Ctx) -> PyResult<Encoder> {
        let flag = |v: &Option<Value>, default: bool| match v {
            Some(Value::Bool(b)) => *b,
            Some(Value::None) => false,
            Some(Value::Int(i)) => *i != 0,
            Some(_) => true,
            None => default,
        };
        let indent = match &s[6] {
            None | Some(Value::None) => None,
            Some(Value::Int(n)) => Some(" ".repeat((*n).max(0) as usize)),
            Some(Value::Bool(b)) => Some(" ".repeat(*b as usize)),
            Some(Value::Str(t)) => Some(t.to_string()),
            Some(v) => {
                return Err(PyErr::type_error(format!(
                    "can't multiply sequence by non-int of type '{}'",
                    v.type_name()
                )))
            }
        };
        let (item_sep, key_sep) = match &s[7] {
            None | Some(Value::None) => (
                if indent.is_some() { "," } else { ", " }.to_string(),
                ": ".to_string(),
            ),
            Some(v) => {
                let parts = ctx.iterate(v)?;
                match parts.as_slice() {
                    [a, b] => (a.as_str()?.to_string(), b.as_str()?.to_string()),
                    _ => {
                        return Err(PyErr::value_error(format!(
                            "too many values to unpack (expected 2, got {})",
                            parts.len()
                        )))
                    }
                }
            }
        };
        Ok(Encoder {
            skipkeys: flag(&s[1], false),
            ensure_ascii: flag(&s[2], true),
            check_circular: flag(&s[3], true),
            allow_nan: flag(&s[4], true),
            indent,
            item_sep,
            key_sep,
            default: s[8].clone().filter(|v| !v.is_none()),
            sort_keys: flag(&s[9], false),
            open: vec![],
        })
    }

    fn float(&self, x: f64) -> PyResult<String> {
        if x.is_finite() {
            return Ok(float_repr(x));
        }
        if !self.allow_nan {
            return Err(PyErr::value_error(
                "Out of range float values are not JSON compliant",
            ));
        }
        Ok(if x.is_nan() {
            "NaN"
        } else if x > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        }
        .into())
    }

    fn string(&self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c if self.ensure_ascii && !(' '..='~').contains(&c) => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{u:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }

    /// Enters a container: refuses one already being written.
    fn enter(&mut self, addr: usize) -> PyResult<()> {
        if self.check_circular {
            if self.open.contains(&addr) {
                return Err(PyErr::value_error("Circular reference detected"));
            }
            self.open.push(addr);
        }
        Ok(())
    }

    fn leave(&mut self) {
        if self.check_circular {
            self.open.pop();
        }
    }

    /// Writes the opening bracket's line break and returns the separator between items.
    fn open_block(&self, out: &mut String, level: usize) -> String {
        match &self.indent {
            Some(ind) => {
                let nl = format!("\n{}", ind.repeat(level));
                out.push_str(&nl);
                format!("{}{nl}", self.item_sep)
            }
            None => self.item_sep.clone(),
        }
    }

    fn close_block(&self, out: &mut String, level: usize) {
        if let Some(ind) = &self.indent {
            out.push('\n');
            out.push_str(&ind.repeat(level));
        }
    }

    fn encode(
        &mut self,
        v: &Value,
        level: usize,
        out: &mut String,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        ctx.check_interrupt()?;
        match v {
            Value::None => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => out.push_str(&i.to_string()),
            Value::Float(x) => out.push_str(&self.float(*x)?),
            Value::Str(s) => self.string(s, out),
            Value::List(_) | Value::Tuple(_) => {
                let items = v.as_seq().unwrap_or_default();
                if items.is_empty() {
                    out.push_str("[]");
                    return Ok(());
                }
                self.enter(addr_of(v))?;
                out.push('[');
                let sep = self.open_block(out, level + 1);
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&sep);
                    }
                    self.encode(item, level + 1, out, ctx)?;
                }
                self.close_block(out, level);
                out.push(']');
                self.leave();
            }
            Value::Dict(d) => {
                let mut items: Vec<(Value, Value)> = d
                    .borrow()
                    .items()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if items.is_empty() {
                    out.push_str("{}");
                    return Ok(());
                }
                self.enter(addr_of(v))?;
                if self.sort_keys {
                    sort_by_key(&mut items)?;
                }
                out.push('{');
                let sep = self.open_block(out, level + 1);
                let mut first = true;
                for (k, item) in &items {
                    let key = match k {
                        Value::Str(s) => s.to_string(),
                        Value::Float(x) => self.float(*x)?,
                        Value::Bool(b) => if *b { "true" } else { "false" }.into(),
                        Value::Int(i) => i.to_string(),
                        Value::None => "null".into(),
                        _ if self.skipkeys => continue,
                        other => {
                            return Err(PyErr::type_error(format!(
                                "keys must be str, int, float, bool or None, not {}",
                                other.type_name()
                            )))
                        }
                    };
                    if !first {
                        out.push_str(&sep);
                    }
                    first = false;
                    self.string(&key, out);
                    out.push_str(&self.key_sep);
                    self.encode(item, level + 1, out, ctx)?;
                }
                self.close_block(out, level);
                out.push('}');
                self.leave();
            }
            other => {
                let Some(default) = self.default.clone() else {
                    return Err(PyErr::type_error(format!(
                        "Object of type {} is not JSON serializable",
                        other.type_name()
                    )));
                };
                self.enter(addr_of(other))?;
                let replaced = ctx.call(&default, Args::new(vec![other.clone()]))?;
                self.encode(&replaced, level, out, ctx)?;
                self.leave();
            }
        }
        Ok(())
    }
}

/// A container's address, to recognise it when it is met again inside itself.
fn addr_of(v: &Value) -> usize {
    match v {
        Value::List(l) => Rc::as_ptr(l) as *const u8 as usize,
        Value::Tuple(t) => Rc::as_ptr(t) as *const u8 as usize,
        Value::Dict(d) => Rc::as_ptr(d) as *const u8 as usize,
        Value::Obj(o) | Value::Native(o) => Rc::as_ptr(o) as *const u8 as usize,
        _ => 0,
    }
}

/// `sorted(d.items())` on the keys: numbers among numbers, strings among strings, and
/// CPython's `TypeError` for a mixture (or for keys that do not order at all).
fn sort_by_key(items: &mut [(Value, Value)]) -> PyResult<()> {
    let kind = |v: &Value| match v {
        Value::Str(_) => Some("str"),
        Value::Int(_) | Value::Bool(_) | Value::Float(_) => Some("number"),
        _ => None,
    };
    // Timsort compares each key with the one before it, later first.
    for w in 0..items.len() {
        let (later, earlier) = (&items[w].0, &items[if w == 0 { 0 } else { w - 1 }].0);
        let (a, b) = (kind(later), kind(earlier));
        if a.is_none() || b.is_none() || a != b {
            if w == 0 && a.is_some() {
                continue;
            }
            return Err(PyErr::type_error(format!(
                "'<' not supported between instances of '{}' and '{}'",
                later.type_name(),
                earlier.type_name()
            )));
        }
    }
    items.sort_by(|(a, _), (b, _)| match (a, b) {
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        _ => {
            let (x, y) = (a.as_float().unwrap_or(0.0), b.as_float().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
        }
    });
    Ok(())
}

fn dumps_with(s: &[Option<Value>], ctx: &mut dyn Ctx) -> PyResult<String> {
    let mut enc = Encoder::from_slots(s, ctx)?;
    let mut out = String::new();
    let obj = s[0].clone().unwrap_or(Value::None);
    enc.encode(&obj, 0, &mut out, ctx)?;
    Ok(out)
}

/// Nesting deeper than this is CPython's `RecursionError` (its recursion limit), rather
/// than a Rust stack overflow.
const MAX_DEPTH: usize = 1000;

/// The JSON text parser: CPython's grammar (with `NaN`, `Infinity`, `-Infinity`) and its
/// error messages, positions counted in characters as Python strings index them.
struct Parser {
    text: Vec<char>,
    pos: usize,
}

impl Parser {
    fn error(&self, msg: &str, pos: usize) -> PyErr {
        let before = &self.text[..pos.min(self.text.len())];
        let line = before.iter().filter(|c| **c == '\n').count() + 1;
        let col = match before.iter().rposition(|c| *c == '\n') {
            Some(nl) => pos - nl,
            None => pos + 1,
        };
        PyErr::new(
            "JSONDecodeError",
            format!("{msg}: line {line} column {col} (char {pos})"),
        )
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        self.text.get(self.pos).copied()
    }

    fn starts_with(&self, word: &str) -> bool {
        word.chars()
            .enumerate()
            .all(|(i, c)| self.text.get(self.pos + i) == Some(&c))
    }

    fn value(&mut self, depth: usize) -> PyResult<Value> {
        if depth > MAX_DEPTH {
            return Err(PyErr::new(
                "RecursionError",
                "maximum recursion depth exceeded while decoding a JSON document",
            ));
        }
        let start = self.pos;
        let words: [(&str, Value); 6] = [
            ("null", Value::None),
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
            ("NaN", Value::Float(f64::NAN)),
            ("Infinity", Value::Float(f64::INFINITY)),
            ("-Infinity", Value::Float(f64::NEG_INFINITY)),
        ];
        match self.peek() {
            Some('"') => {
                self.pos += 1;
                return self.string(start).map(Value::from);
            }
            Some('[') => {
                self.pos += 1;
                return self.array(depth);
            }
            Some('{') => {
                self.pos += 1;
                return self.object(depth);
            }
            _ => {}
        }
        for (w, v) in words {
            if self.starts_with(w) {
                self.pos += w.chars().count();
                return Ok(v);
            }
        }
        self.number()
            .ok_or_else(|| self.error("Expecting value", start))
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, as CPython's scanner matches it.
    fn number(&mut self) -> Option<Value> {
        let start = self.pos;
        let digits = |p: &Parser, mut i: usize| {
            while p.text.get(i).is_some_and(|c| c.is_ascii_digit()) {
                i += 1;
            }
            i
        };
        let mut i = start;
        if self.text.get(i) == Some(&'-') {
            i += 1;
        }
        match self.text.get(i) {
            Some('0') => i += 1,
            Some(c) if c.is_ascii_digit() => i = digits(self, i),
            _ => return None,
        }
        let mut is_float = false;
        if self.text.get(i) == Some(&'.')
            && self.text.get(i + 1).is_some_and(|c| c.is_ascii_digit())
        {
            i = digits(self, i + 1);
            is_float = true;
        }
        if matches!(self.text.get(i), Some('e' | 'E')) {
            let mut j = i + 1;
            if matches!(self.text.get(j), Some('+' | '-')) {
                j += 1;
            }
            if self.text.get(j).is_some_and(|c| c.is_ascii_digit()) {
                i = digits(self, j);
                is_float = true;
            }
        }
        let s: String = self.text[start..i].iter().collect();
        self.pos = i;
        if !is_float {
            if let Ok(n) = s.parse::<i64>() {
                return Some(Value::Int(n));
            }
        }
        s.parse::<f64>().ok().map(Value::Float)
    }

    /// A string whose opening quote is at `quote`; `self.pos` is just after it.
    fn string(&mut self, quote: usize) -> PyResult<String> {
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("Unterminated string starting at", quote));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                '\\' => {
                    let at = self.pos;
                    let Some(e) = self.text.get(at + 1).copied() else {
                        return Err(self.error("Unterminated string starting at", quote));
                    };
                    self.pos += 2;
                    match e {
                        '"' => out.push('"'),
                        '\\' => out.push('\\'),
                        '/' => out.push('/'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'u' => {
                            let unit = self.hex4(at)?;
                            let c = if (0xd800..0xdc00).contains(&unit) && self.starts_with("\\u") {
                                let low = self.hex4(self.pos)?;
                                if (0xdc00..0xe000).contains(&low) {
                                    char::from_u32(
                                        0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00),
                                    )
                                } else {
                                    out.push(char::REPLACEMENT_CHARACTER);
                                    char::from_u32(low)
                                }
                            } else {
                                char::from_u32(unit)
                            };
                            out.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
                        }
                        _ => return Err(self.error("Invalid \\escape", at)),
                    }
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.error("Invalid control character at", self.pos))
                }
                c => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// The four hex digits after `\u` at `at`; leaves `pos` after them. CPython reports a
    /// bad one at the `u`.
    fn hex4(&mut self, at: usize) -> PyResult<u32> {
        let digits: String = self.text.iter().skip(at + 2).take(4).collect();
        let unit = (digits.chars().count() == 4)
            .then(|| u32::from_str_radix(&digits, 16).ok())
            .flatten()
            .filter(|_| digits.chars().all(|c| c.is_ascii_hexdigit()));
        let Some(unit) = unit else {
            return Err(self.error("Invalid \\uXXXX escape", at + 1));
        };
        self.pos = at + 6;
        Ok(unit)
    }

    fn array(&mut self, depth: usize) -> PyResult<Value> {
        let mut items = vec![];
        self.skip_ws();
        if self.peek() == Some(']') {
            self.pos += 1;
            return Ok(Value::list(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(']') => {
                    self.pos += 1;
                    return Ok(Value::list(items));
                }
                Some(',') => self.pos += 1,
                _ => return Err(self.error("Expecting ',' delimiter", self.pos)),
            }
        }
    }

    fn object(&mut self, depth: usize) -> PyResult<Value> {
        let mut d = Dict::default();
        self.skip_ws();
        if self.peek() == Some('}') {
            self.pos += 1;
            return Ok(Value::Dict(Rc::new(std::cell::RefCell::new(d))));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some('"') {
                return Err(self.error(
                    "Expecting property name enclosed in double quotes",
                    self.pos,
                ));
            }
            let quote = self.pos;
            self.pos += 1;
            let key = self.string(quote)?;
            self.skip_ws();
            if self.peek() != Some(':') {
                return Err(self.error("Expecting ':' delimiter", self.pos));
            }
            self.pos += 1;
            self.skip_ws();
            let v = self.value(depth + 1)?;
            d.insert(Value::from(key), v)?;
            self.skip_ws();
            match self.peek() {
                Some('}') => {
                    self.pos += 1;
                    return Ok(Value::Dict(Rc::new(std::cell::RefCell::new(d))));
                }
                Some(',') => self.pos += 1,
                _ => return Err(self.error("Expecting ',' delimiter", self.pos)),
            }
        }
    }
}

pub fn loads_text(v: &Value) -> PyResult<Value> {
    let text = match v {
        Value::Str(s) => s.to_string(),
        other => {
            return Err(PyErr::type_error(format!(
                "the JSON object must be str, bytes or bytearray, not {}",
                other.type_name()
            )))
        }
    };
    let mut p = Parser {
        text: text.chars().collect(),
        pos: 0,
    };
    p.skip_ws();
    let v = p.value(0)?;
    p.skip_ws();
    if p.pos < p.text.len() {
        return Err(p.error("Extra data", p.pos));
    }
    Ok(v)
}

pub fn module(ctx: &mut dyn Ctx) -> Value {
    let decode_error = crate::lang::exception_class(ctx, "JSONDecodeError");
    NativeModule::new(
        "json",
        "JSON (JavaScript Object Notation) encoder and decoder.",
    )
    .with(
        "dumps",
        NativeFn::value(
            "dumps",
            "dumps(obj, *, skipkeys=False, ensure_ascii=True, check_circular=True, allow_nan=True, cls=None, indent=None, separators=None, default=None, sort_keys=False)\nSerialize ``obj`` to a JSON formatted ``str``.",
            |a, ctx| {
                let s = a.bind("dumps", DUMPS_PARAMS, 1)?;
                Ok(Value::from(dumps_with(&s, ctx)?))
            },
        ),
    )
    .with(
        "dump",
        NativeFn::value(
            "dump",
            "dump(obj, fp, *, skipkeys=False, ensure_ascii=True, check_circular=True, allow_nan=True, cls=None, indent=None, separators=None, default=None, sort_keys=False)\nSerialize ``obj`` as a JSON formatted stream to ``fp`` (a ``.write()``-supporting file-like object).",
            |a, ctx| {
                let mut names = vec!["obj", "fp"];
                names.extend_from_slice(&DUMPS_PARAMS[1..]);
                let mut s = a.bind("dump", &names, 2)?;
                let fp = s.remove(1).unwrap_or(Value::None);
                let text = dumps_with(&s, ctx)?;
                let write = ctx.getattr(&fp, "write")?;
                ctx.call(&write, Args::new(vec![Value::from(text)]))?;
                Ok(Value::None)
            },
        ),
    )
    .with(
        "loads",
        NativeFn::value(
            "loads",
            "loads(s)\nDeserialize ``s`` (a ``str`` instance containing a JSON document) to a Python object.",
            |a, _| {
                let s = a.bind("loads", &["s"], 1)?;
                loads_text(s[0].as_ref().unwrap_or(&Value::None))
            },
        ),
    )
    .with(
        "load",
        NativeFn::value(
            "load",
            "load(fp)\nDeserialize ``fp`` (a ``.read()``-supporting file-like object containing a JSON document) to a Python object.",
            |a, ctx| {
                let s = a.bind("load", &["fp"], 1)?;
                let read = ctx.getattr(s[0].as_ref().unwrap_or(&Value::None), "read")?;
                let text = ctx.call(&read, Args::default())?;
                loads_text(&text)
            },
        ),
    )
    .with("JSONDecodeError", decode_error)
    .into_value()
}
