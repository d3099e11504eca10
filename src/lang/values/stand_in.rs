//! [`StandIn`]: a [`Ctx`] without an interpreter, for driving natives (the bindings'
//! modules and objects) from Rust: it calls natives, walks attributes, iterates, renders
//! plain values with the interpreter's own reprs, and collects what natives emit. The
//! crate's unit tests and the integration tests that exercise a binding directly use it;
//! everything that needs Python semantics (user classes, `__repr__` written in Python) runs
//! through a real session instead.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::exc::{PyErr, PyResult};
use super::object::{Args, Ctx, State};
use super::value::Value;
use crate::cell::{Output, StreamName};
use crate::display::{plain, MimeBundle};
use crate::lang::datamodel::repr::{float_repr, str_repr};

/// A context that stands in for the interpreter.
#[derive(Default)]
pub struct StandIn {
    pub state: State,
    /// What natives emitted (`print`, displays), in order.
    pub outputs: Vec<Output>,
}

impl StandIn {
    /// `a.b.c` from a value by attribute walk.
    pub fn attr(&mut self, v: &Value, path: &str) -> PyResult<Value> {
        let mut cur = v.clone();
        for part in path.split('.') {
            cur = self.getattr(&cur, part)?;
        }
        Ok(cur)
    }

    /// `v.path(*pos)`.
    pub fn call_attr(&mut self, v: &Value, path: &str, pos: Vec<Value>) -> PyResult<Value> {
        self.call_attr_kw(v, path, pos, vec![])
    }

    /// `v.path(*pos, **kw)`.
    pub fn call_attr_kw(
        &mut self,
        v: &Value,
        path: &str,
        pos: Vec<Value>,
        kw: Vec<(&str, Value)>,
    ) -> PyResult<Value> {
        let f = self.attr(v, path)?;
        let mut args = Args::new(pos);
        for (k, v) in kw {
            args = args.with_kw(k, v);
        }
        self.call(&f, args)
    }

    /// Everything emitted on one stream, joined.
    pub fn stream(&self, which: StreamName) -> String {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Stream { name, text } if *name == which => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The stdout emitted so far; forgets every output.
    pub fn take_stdout(&mut self) -> String {
        let s = self.stream(StreamName::Stdout);
        self.outputs.clear();
        s
    }
}

impl Ctx for StandIn {
    fn call(&mut self, f: &Value, args: Args) -> PyResult<Value> {
        match f {
            Value::Native(o) | Value::Obj(o) => o.clone().call(f, args, self),
            other => Err(PyErr::type_error(format!(
                "'{}' object is not callable",
                other.type_name()
            ))),
        }
    }
    fn getattr(&mut self, v: &Value, name: &str) -> PyResult<Value> {
        let found = match v {
            Value::Native(o) | Value::Obj(o) => o.clone().getattr(v, name, self)?,
            _ => None,
        };
        found.ok_or_else(|| {
            PyErr::attribute_error(format!(
                "'{}' object has no attribute '{name}'",
                v.type_name()
            ))
        })
    }
    fn repr(&mut self, v: &Value) -> PyResult<String> {
        Ok(match v {
            Value::None => "None".into(),
            Value::Bool(b) => if *b { "True" } else { "False" }.into(),
            Value::Int(i) => i.to_string(),
            Value::Float(x) => float_repr(*x),
            Value::Str(s) => str_repr(s),
            Value::List(l) => {
                let items = l.borrow().clone();
                let parts: Vec<String> = items
                    .iter()
                    .map(|x| self.repr(x))
                    .collect::<PyResult<_>>()?;
                format!("[{}]", parts.join(", "))
            }
            Value::Tuple(t) => {
                let parts: Vec<String> = t.iter().map(|x| self.repr(x)).collect::<PyResult<_>>()?;
                match parts.as_slice() {
                    [one] => format!("({one},)"),
                    _ => format!("({})", parts.join(", ")),
                }
            }
            // Dict keys may be any value; the tests that need a dict's text run a session.
            Value::Dict(_) => "{...}".into(),
            Value::Native(o) | Value::Obj(o) => o.clone().repr(self)?,
        })
    }
    fn str(&mut self, v: &Value) -> PyResult<String> {
        match v {
            Value::Str(s) => Ok(s.to_string()),
            Value::Native(o) | Value::Obj(o) => o.clone().str(self),
            other => self.repr(other),
        }
    }
    fn rich(&mut self, v: &Value) -> PyResult<MimeBundle> {
        if let Value::Native(o) = v {
            if let Some(b) = o.clone().rich(self)? {
                return Ok(b);
            }
        }
        Ok(plain(self.repr(v)?))
    }
    fn iterate(&mut self, v: &Value) -> PyResult<Vec<Value>> {
        if let Some(items) = v.as_seq() {
            return Ok(items);
        }
        let it = match v {
            Value::Native(o) | Value::Obj(o) => o.clone().iter(v, self)?,
            other => {
                return Err(PyErr::type_error(format!(
                    "'{}' object is not iterable",
                    other.type_name()
                )))
            }
        };
        let Value::Native(o) = &it else {
            return Ok(it.as_seq().unwrap_or_default());
        };
        let mut out = vec![];
        while let Some(x) = o.clone().next(self)? {
            out.push(x);
        }
        Ok(out)
    }
    fn emit(&mut self, out: Output) {
        self.outputs.push(out);
    }
    fn check_interrupt(&mut self) -> PyResult<()> {
        Ok(())
    }
    fn interrupt_flag(&self) -> Arc<AtomicBool> {
        Arc::new(AtomicBool::new(false))
    }
    fn state(&mut self) -> &mut State {
        &mut self.state
    }
    fn input(&mut self, _prompt: &str, _password: bool) -> PyResult<String> {
        Err(PyErr::new(
            "StdinNotImplementedError",
            "no stdin without a front end",
        ))
    }
    fn execution_count(&self) -> u64 {
        1
    }
}
