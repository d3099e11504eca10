//! `re.Pattern`: a compiled pattern and what it does to a string (`match`, `search`,
//! `fullmatch`, `findall`, `finditer`, `sub`, `subn`, `split`), stepping over matches as
//! CPython 3.7+ does (an empty match may follow a non-empty one, never another empty one
//! at the same place), and the replacement templates of `sub` (`\1`, `\g<name>`).

use std::any::Any;
use std::rc::Rc;

use regex::{Regex, RegexBuilder};

use super::matched::Match;
use super::syntax::{self, error_at, DOTALL, IGNORECASE, MULTILINE, UNICODE, VERBOSE};
use crate::bindings::common::{arg, ItemIter};
use crate::bindings::stdlib::Method;
use crate::lang::{str_repr, Args, Ctx, Dict, Object, PyErr, PyResult, Value};

pub struct Pattern {
    /// The pattern as the user wrote it (`p.pattern`).
    pub source: String,
    pub flags: i64,
    regex: Regex,
    /// The same pattern anchored at the start, and at both ends, for `match`/`fullmatch`.
    at_start: Regex,
    whole: Regex,
}

/// Spans of group 0 and each group of one match, in bytes.
type Spans = Vec<Option<(usize, usize)>>;

fn build(src: &str, flags: i64) -> PyResult<Regex> {
    RegexBuilder::new(src)
        .case_insensitive(flags & IGNORECASE != 0)
        .multi_line(flags & MULTILINE != 0)
        .dot_matches_new_line(flags & DOTALL != 0)
        .build()
        .map_err(|e| PyErr::new("error", e.to_string()))
}

impl Pattern {
    pub fn compile(source: &str, flags: i64) -> PyResult<Pattern> {
        let t = syntax::translate(source, flags)?;
        Ok(Pattern {
            source: source.to_string(),
            flags: t.flags | UNICODE,
            regex: build(&t.source, t.flags)?,
            at_start: build(&format!(r"\A(?:{})", t.source), t.flags)?,
            whole: build(&format!(r"\A(?:{})\z", t.source), t.flags)?,
        })
    }

    /// The name of each group (group 0 and unnamed groups have none).
    pub fn names(&self) -> Vec<Option<String>> {
        self.regex
            .capture_names()
            .map(|n| n.map(str::to_string))
            .collect()
    }

    fn groups(&self) -> usize {
        self.regex.captures_len() - 1
    }

    fn spans_of(re: &Regex, text: &str, at: usize) -> Option<Spans> {
        let c = re.captures_at(text, at)?;
        Some(
            (0..c.len())
                .map(|i| c.get(i).map(|m| (m.start(), m.end())))
                .collect(),
        )
    }

    /// Up to `limit` matches (0: all), left to right.
    fn all(&self, text: &str, limit: usize) -> Vec<Spans> {
        let mut out = vec![];
        let mut at = 0;
        let mut after_empty = false;
        while at <= text.len() && (limit == 0 || out.len() < limit) {
            let Some(mut spans) = Self::spans_of(&self.regex, text, at) else {
                break;
            };
            let (mut s, mut e) = spans[0].unwrap_or((at, at));
            if after_empty && s == at && e == at {
                // No second empty match at the same place: look one character on.
                let Some(ch) = text[at..].chars().next() else {
                    break;
                };
                match Self::spans_of(&self.regex, text, at + ch.len_utf8()) {
                    Some(next) => spans = next,
                    None => break,
                }
                (s, e) = spans[0].unwrap_or((at, at));
            }
            after_empty = s == e;
            at = e;
            out.push(spans);
        }
        out
    }

    fn matched(&self, this: &Value, text: &Rc<str>, spans: Spans) -> Value {
        Value::native(Match {
            text: text.clone(),
            spans,
            pattern: this.clone(),
        })
    }

    fn one(&self, this: &Value, re: &Regex, text: &Rc<str>) -> Value {
        match Self::spans_of(re, text, 0) {
            Some(spans) => self.matched(this, text, spans),
            None => Value::None,
        }
    }

    /// `sub`/`subn`: the new string and the number of replacements.
    pub fn substitute(
        &self,
        this: &Value,
        repl: &Value,
        text: &Rc<str>,
        count: usize,
        ctx: &mut dyn Ctx,
    ) -> PyResult<(String, usize)> {
        let names = self.names();
        let template = match repl {
            Value::Str(t) => Some(parse_template(t, &names)?),
            _ => None,
        };
        let found = self.all(text, count);
        let n = found.len();
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for spans in found {
            let (s, e) = spans[0].unwrap_or((last, last));
            out.push_str(&text[last..s]);
            match &template {
                Some(pieces) => out.push_str(&render(pieces, text, &spans)),
                None => {
                    let m = self.matched(this, text, spans);
                    match ctx.call(repl, Args::new(vec![m]))? {
                        Value::Str(r) => out.push_str(&r),
                        other => {
                            return Err(PyErr::type_error(format!(
                                "expected str instance, {} found",
                                other.type_name()
                            )))
                        }
                    }
                }
            }
            last = e;
        }
        out.push_str(&text[last..]);
        Ok((out, n))
    }

    pub fn split(&self, text: &str, maxsplit: usize) -> Vec<Value> {
        let mut out = vec![];
        let mut last = 0;
        for spans in self.all(text, maxsplit) {
            let (s, e) = spans[0].unwrap_or((last, last));
            out.push(Value::str(&text[last..s]));
            for g in &spans[1..] {
                out.push(match g {
                    Some((a, b)) => Value::str(&text[*a..*b]),
                    None => Value::None,
                });
            }
            last = e;
        }
        out.push(Value::str(&text[last..]));
        out
    }

    pub fn findall(&self, text: &str) -> Vec<Value> {
        let groups = self.groups();
        let piece = |g: &Option<(usize, usize)>| match g {
            Some((a, b)) => Value::str(&text[*a..*b]),
            None => Value::str(""),
        };
        self.all(text, 0)
            .iter()
            .map(|spans| match groups {
                0 => piece(&spans[0]),
                1 => piece(&spans[1]),
                _ => Value::tuple(spans[1..].iter().map(piece).collect()),
            })
            .collect()
    }

    fn repr(&self) -> String {
        let names = [
            (IGNORECASE, "re.IGNORECASE"),
            (MULTILINE, "re.MULTILINE"),
            (DOTALL, "re.DOTALL"),
            (VERBOSE, "re.VERBOSE"),
        ];
        let shown: Vec<&str> = names
            .iter()
            .filter(|(bit, _)| self.flags & bit != 0)
            .map(|(_, n)| *n)
            .collect();
        if shown.is_empty() {
            format!("re.compile({})", str_repr(&self.source))
        } else {
            format!(
                "re.compile({}, {})",
                str_repr(&self.source),
                shown.join("|")
            )
        }
    }
}

/// A `str` argument to match against, with CPython's TypeError for anything else.
pub fn text_arg(v: &Value) -> PyResult<Rc<str>> {
    match v {
        Value::Str(s) => Ok(s.clone()),
        other => Err(PyErr::type_error(format!(
            "expected string or bytes-like object, got '{}'",
            other.type_name()
        ))),
    }
}

/// A `count`/`maxsplit` argument: 0 (all) when absent, negative ones do nothing.
fn limit_arg(v: &Value) -> PyResult<Option<usize>> {
    Ok(match v {
        Value::None => Some(0),
        v => match v.as_int()? {
            n if n < 0 => None,
            n => Some(n as usize),
        },
    })
}

pub const METHODS: &[Method<Pattern>] = &[
    ("match", |p, me, a, _| {
        let s = a.bind("match", &["string"], 1)?;
        Ok(p.one(me, &p.at_start, &text_arg(arg(&s, 0))?))
    }),
    ("search", |p, me, a, _| {
        let s = a.bind("search", &["string"], 1)?;
        Ok(p.one(me, &p.regex, &text_arg(arg(&s, 0))?))
    }),
    ("fullmatch", |p, me, a, _| {
        let s = a.bind("fullmatch", &["string"], 1)?;
        Ok(p.one(me, &p.whole, &text_arg(arg(&s, 0))?))
    }),
    ("findall", |p, _, a, _| {
        let s = a.bind("findall", &["string"], 1)?;
        Ok(Value::list(p.findall(&text_arg(arg(&s, 0))?)))
    }),
    ("finditer", |p, me, a, _| {
        let s = a.bind("finditer", &["string"], 1)?;
        let text = text_arg(arg(&s, 0))?;
        let found: Vec<Value> = p
            .all(&text, 0)
            .into_iter()
            .map(|spans| p.matched(me, &text, spans))
            .collect();
        Ok(ItemIter::value("callable_iterator", found))
    }),
    ("sub", |p, me, a, ctx| {
        let s = a.bind("sub", &["repl", "string", "count"], 2)?;
        let text = text_arg(arg(&s, 1))?;
        let Some(count) = limit_arg(arg(&s, 2))? else {
            return Ok(Value::Str(text));
        };
        Ok(Value::from(
            p.substitute(me, arg(&s, 0), &text, count, ctx)?.0,
        ))
    }),
    ("subn", |p, me, a, ctx| {
        let s = a.bind("subn", &["repl", "string", "count"], 2)?;
        let text = text_arg(arg(&s, 1))?;
        let Some(count) = limit_arg(arg(&s, 2))? else {
            return Ok(Value::tuple(vec![Value::Str(text), Value::Int(0)]));
        };
        let (out, n) = p.substitute(me, arg(&s, 0), &text, count, ctx)?;
        Ok(Value::tuple(vec![Value::from(out), Value::Int(n as i64)]))
    }),
    ("split", |p, _, a, _| {
        let s = a.bind("split", &["string", "maxsplit"], 1)?;
        let text = text_arg(arg(&s, 0))?;
        match limit_arg(arg(&s, 1))? {
            Some(n) => Ok(Value::list(p.split(&text, n))),
            None => Ok(Value::list(vec![Value::Str(text)])),
        }
    }),
];

impl Object for Pattern {
    fn type_name(&self) -> String {
        "Pattern".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(self.repr())
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match name {
            "pattern" => return Ok(Some(Value::str(&self.source))),
            "flags" => return Ok(Some(Value::Int(self.flags))),
            "groups" => return Ok(Some(Value::Int(self.groups() as i64))),
            "groupindex" => {
                let mut d = Dict::default();
                for (i, n) in self.names().iter().enumerate() {
                    if let Some(n) = n {
                        d.insert_str(n, Value::Int(i as i64));
                    }
                }
                return Ok(Some(Value::Dict(Rc::new(std::cell::RefCell::new(d)))));
            }
            _ => {}
        }
        Ok(crate::bindings::stdlib::bound_method(this, METHODS, name))
    }
    fn dir(&self) -> Vec<String> {
        let mut d: Vec<String> = crate::bindings::stdlib::method_names(METHODS);
        d.extend(["pattern", "flags", "groups", "groupindex"].map(String::from));
        d
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const Pattern as usize as u64)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A piece of a `sub` template: text, or the text of a group.
pub enum Piece {
    Text(String),
    Group(usize),
}

/// Reads a replacement template as CPython does: `\1`..`\99` and `\g<n>`/`\g<name>` name
/// groups, `\n` and the other letter escapes are characters, other escapes stay as written.
pub fn parse_template(t: &str, names: &[Option<String>]) -> PyResult<Vec<Piece>> {
    let c: Vec<char> = t.chars().collect();
    let groups = names.len() - 1;
    let mut out = vec![];
    let mut text = String::new();
    let mut i = 0;
    let group = |out: &mut Vec<Piece>, text: &mut String, g: usize| {
        if !text.is_empty() {
            out.push(Piece::Text(std::mem::take(text)));
        }
        out.push(Piece::Group(g));
    };
    while i < c.len() {
        if c[i] != '\\' {
            text.push(c[i]);
            i += 1;
            continue;
        }
        let Some(&e) = c.get(i + 1) else {
            return Err(PyErr::new("error", "bad escape (end of pattern)"));
        };
        match e {
            '1'..='9' => {
                let mut j = i + 1;
                let mut n = 0usize;
                while j < c.len() && j < i + 3 && c[j].is_ascii_digit() {
                    n = n * 10 + c[j].to_digit(10).unwrap_or(0) as usize;
                    j += 1;
                }
                if n > groups {
                    return Err(error_at(&format!("invalid group reference {n}"), i + 1));
                }
                group(&mut out, &mut text, n);
                i = j;
            }
            'g' => {
                if c.get(i + 2) != Some(&'<') {
                    return Err(error_at("missing <", i + 2));
                }
                let Some(close) = c[i + 3..].iter().position(|&x| x == '>') else {
                    return Err(error_at("missing >, unterminated name", i + 3));
                };
                let name: String = c[i + 3..i + 3 + close].iter().collect();
                let g = match name.parse::<usize>() {
                    Ok(n) if n <= groups => n,
                    Ok(n) => return Err(error_at(&format!("invalid group reference {n}"), i + 3)),
                    Err(_) => match names.iter().position(|x| x.as_deref() == Some(&*name)) {
                        Some(g) => g,
                        None if name.is_empty() => {
                            return Err(error_at("missing group name", i + 3))
                        }
                        None => {
                            return Err(PyErr::index_error(format!("unknown group name '{name}'")))
                        }
                    },
                };
                group(&mut out, &mut text, g);
                i += 4 + close;
            }
            'n' | 't' | 'r' | 'f' | 'v' | 'a' | 'b' | '\\' | '0' => {
                text.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'f' => '\x0c',
                    'v' => '\x0b',
                    'a' => '\x07',
                    'b' => '\x08',
                    '0' => '\0',
                    _ => '\\',
                });
                i += 2;
            }
            e if e.is_ascii_alphabetic() => {
                return Err(error_at(&format!("bad escape \\{e}"), i));
            }
            e => {
                text.push('\\');
                text.push(e);
                i += 2;
            }
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

/// A parsed template filled from one match; groups that took no part give "".
pub fn render(pieces: &[Piece], text: &str, spans: &Spans) -> String {
    let mut out = String::new();
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Group(g) => {
                if let Some(Some((a, b))) = spans.get(*g) {
                    out.push_str(&text[*a..*b]);
                }
            }
        }
    }
    out
}

/// `m.expand(template)`.
pub fn expand(t: &str, m: &Match, names: &[Option<String>]) -> PyResult<String> {
    Ok(render(&parse_template(t, names)?, &m.text, &m.spans))
}
