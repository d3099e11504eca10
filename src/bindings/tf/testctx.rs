//! A minimal [`Ctx`] for this module's unit tests: it calls natives directly, renders the
//! plain Python values the tests need, and collects output. It stands in for the
//! interpreter only inside `cargo test --lib bindings::tf`; the integration tests in
//! tests/tf_*.rs drive real cells through the session instead.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cell::{Output, StreamName};
use crate::display::{plain, MimeBundle};
use crate::lang::{float_repr, str_repr};
use crate::lang::{Args, Ctx, PyErr, PyResult, State, Value};

#[derive(Default)]
pub struct TestCtx {
    pub state: State,
    pub outputs: Vec<Output>,
}

impl TestCtx {
    /// `a.b.c` from a value by attribute walk.
    pub fn attr(&mut self, v: &Value, path: &str) -> PyResult<Value> {
        let mut cur = v.clone();
        for part in path.split('.') {
            cur = self.getattr(&cur, part)?;
        }
        Ok(cur)
    }

    /// Calls `v.path(*pos)`.
    pub fn call_attr(&mut self, v: &Value, path: &str, pos: Vec<Value>) -> PyResult<Value> {
        let f = self.attr(v, path)?;
        self.call(&f, Args::new(pos))
    }

    pub fn stream(&mut self, which: StreamName) -> String {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Stream { name, text } if *name == which => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn take_stdout(&mut self) -> String {
        let s = self.stream(StreamName::Stdout);
        self.outputs.clear();
        s
    }
}

impl Ctx for TestCtx {
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
                super::py_tuple(&parts)
            }
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
        let mut out = vec![];
        if let Value::Native(o) = &it {
            while let Some(x) = o.clone().next(self)? {
                out.push(x);
            }
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
        Err(PyErr::new("StdinNotImplementedError", "no stdin in tests"))
    }
    fn execution_count(&self) -> u64 {
        1
    }
}
