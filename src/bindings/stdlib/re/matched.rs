//! `re.Match`: the groups of one match, read by number or name (`group`, `groups`,
//! `groupdict`, `span`, `start`, `end`, `m[1]`, `expand`), with positions in characters as
//! CPython counts them and its repr `<re.Match object; span=(0, 3), match='abc'>`.

use std::any::Any;
use std::rc::Rc;

use super::pattern::{expand, Pattern};
use crate::bindings::stdlib::Method;
use crate::lang::{str_repr, Args, Ctx, Dict, Object, PyErr, PyResult, Value};

pub struct Match {
    pub text: Rc<str>,
    /// Byte spans of group 0 and each capturing group; `None` for a group that took no
    /// part in the match.
    pub spans: Vec<Option<(usize, usize)>>,
    /// The compiled pattern (`m.re`), which also names the groups.
    pub pattern: Value,
}

/// The character position of byte offset `at` of `s`.
pub fn char_pos(s: &str, at: usize) -> usize {
    if s.is_ascii() {
        at
    } else {
        s[..at].chars().count()
    }
}

impl Match {
    fn names(&self) -> Vec<Option<String>> {
        self.pattern
            .downcast::<Pattern>()
            .map(|p| p.names())
            .unwrap_or_default()
    }

    /// The group a `group()` argument names, or CPython's IndexError.
    fn index(&self, g: &Value) -> PyResult<usize> {
        let i = match g {
            Value::Int(_) | Value::Bool(_) => g.as_int()?,
            Value::Str(name) => match self
                .names()
                .iter()
                .position(|n| n.as_deref() == Some(&**name))
            {
                Some(i) => i as i64,
                None => -1,
            },
            _ => -1,
        };
        if i < 0 || i as usize >= self.spans.len() {
            return Err(PyErr::index_error("no such group"));
        }
        Ok(i as usize)
    }

    pub fn group(&self, i: usize, default: &Value) -> Value {
        match self.spans.get(i).copied().flatten() {
            Some((a, b)) => Value::str(&self.text[a..b]),
            None => default.clone(),
        }
    }

    /// `span(g)` in characters; `(-1, -1)` for a group that did not take part.
    fn span(&self, i: usize) -> (i64, i64) {
        match self.spans.get(i).copied().flatten() {
            Some((a, b)) => (
                char_pos(&self.text, a) as i64,
                char_pos(&self.text, b) as i64,
            ),
            None => (-1, -1),
        }
    }

    fn one_group(&self, a: &Args, name: &str) -> PyResult<usize> {
        let s = a.bind(name, &["group"], 0)?;
        match &s[0] {
            Some(g) => self.index(g),
            None => Ok(0),
        }
    }
}

const METHODS: &[Method<Match>] = &[
    ("group", |m, _, a, _| {
        if a.pos.len() <= 1 {
            let i = match a.pos.first() {
                Some(g) => m.index(g)?,
                None => 0,
            };
            return Ok(m.group(i, &Value::None));
        }
        let mut out = vec![];
        for g in &a.pos {
            out.push(m.group(m.index(g)?, &Value::None));
        }
        Ok(Value::tuple(out))
    }),
    ("groups", |m, _, a, _| {
        let s = a.bind("groups", &["default"], 0)?;
        let dflt = s[0].clone().unwrap_or(Value::None);
        Ok(Value::tuple(
            (1..m.spans.len()).map(|i| m.group(i, &dflt)).collect(),
        ))
    }),
    ("groupdict", |m, _, a, _| {
        let s = a.bind("groupdict", &["default"], 0)?;
        let dflt = s[0].clone().unwrap_or(Value::None);
        let mut d = Dict::default();
        for (i, n) in m.names().iter().enumerate() {
            if let Some(n) = n {
                d.insert_str(n, m.group(i, &dflt));
            }
        }
        Ok(Value::Dict(Rc::new(std::cell::RefCell::new(d))))
    }),
    ("span", |m, _, a, _| {
        let (s, e) = m.span(m.one_group(a, "span")?);
        Ok(Value::tuple(vec![Value::Int(s), Value::Int(e)]))
    }),
    ("start", |m, _, a, _| {
        Ok(Value::Int(m.span(m.one_group(a, "start")?).0))
    }),
    ("end", |m, _, a, _| {
        Ok(Value::Int(m.span(m.one_group(a, "end")?).1))
    }),
    ("expand", |m, _, a, _| {
        let s = a.bind("expand", &["template"], 1)?;
        let t = crate::bindings::common::arg(&s, 0).as_str()?.to_string();
        let names = m.names();
        Ok(Value::from(expand(&t, m, &names)?))
    }),
];

impl Object for Match {
    fn type_name(&self) -> String {
        "Match".into()
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["Match".into()]
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let (s, e) = self.span(0);
        let text = match self.group(0, &Value::None) {
            Value::Str(t) => str_repr(&t),
            _ => "None".into(),
        };
        Ok(format!("<re.Match object; span=({s}, {e}), match={text}>"))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match name {
            "string" => return Ok(Some(Value::Str(self.text.clone()))),
            "re" => return Ok(Some(self.pattern.clone())),
            "pos" => return Ok(Some(Value::Int(0))),
            "endpos" => return Ok(Some(Value::Int(self.text.chars().count() as i64))),
            _ => {}
        }
        Ok(crate::bindings::stdlib::bound_method(this, METHODS, name))
    }
    fn dir(&self) -> Vec<String> {
        let mut d: Vec<String> = crate::bindings::stdlib::method_names(METHODS);
        d.extend(["string", "re", "pos", "endpos"].map(String::from));
        d
    }
    fn getitem(&self, key: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(self.group(self.index(key)?, &Value::None))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
