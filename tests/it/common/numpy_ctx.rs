//! A stand-in for the interpreter, enough to drive native objects from Rust tests: calls,
//! attribute lookup, repr/str, iteration, session state; plus the slice and ellipsis
//! objects the interpreter passes as index keys.

use std::any::Any;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use mirror_kernel::cell::Output;
use mirror_kernel::display::MimeBundle;
use mirror_kernel::lang::{Args, Ctx, Object, PyErr, PyResult, State, Value};

/// A minimal interpreter stand-in: calls, attributes, repr and iteration of natives.
#[derive(Default)]
pub struct MockCtx {
    state: State,
}

impl Ctx for MockCtx {
    fn call(&mut self, f: &Value, args: Args) -> PyResult<Value> {
        match f {
            Value::Native(o) | Value::Obj(o) => o.call(f, args, self),
            other => Err(PyErr::type_error(format!(
                "'{}' is not callable",
                other.type_name()
            ))),
        }
    }
    fn getattr(&mut self, v: &Value, name: &str) -> PyResult<Value> {
        match v {
            Value::Native(o) | Value::Obj(o) => o
                .getattr(v, name, self)?
                .ok_or_else(|| PyErr::attribute_error(name.to_string())),
            _ => Err(PyErr::attribute_error(name.to_string())),
        }
    }
    fn repr(&mut self, v: &Value) -> PyResult<String> {
        Ok(match v {
            Value::Native(o) | Value::Obj(o) => o.repr(self)?,
            Value::Float(x) => format!("{x:?}"),
            other => format!("{other:?}"),
        })
    }
    fn str(&mut self, v: &Value) -> PyResult<String> {
        match v {
            Value::Native(o) | Value::Obj(o) => o.str(self),
            other => self.repr(other),
        }
    }
    fn rich(&mut self, _v: &Value) -> PyResult<MimeBundle> {
        Ok(MimeBundle::new())
    }
    fn iterate(&mut self, v: &Value) -> PyResult<Vec<Value>> {
        if let Some(items) = v.as_seq() {
            return Ok(items);
        }
        let Value::Native(o) = v else {
            return Err(PyErr::type_error("not iterable"));
        };
        let it = o.iter(v, self)?;
        let Value::Native(i) = &it else {
            return Err(PyErr::type_error("bad iterator"));
        };
        let mut out = vec![];
        while let Some(x) = i.next(self)? {
            out.push(x);
        }
        Ok(out)
    }
    fn emit(&mut self, _out: Output) {}
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
        Err(PyErr::runtime_error("no input"))
    }
    fn execution_count(&self) -> u64 {
        1
    }
}

/// `start:stop:step`, as the interpreter's slice objects answer attribute lookups.
pub struct Slice(pub Option<i64>, pub Option<i64>, pub Option<i64>);
impl Object for Slice {
    fn type_name(&self) -> String {
        "slice".into()
    }
    fn getattr(&self, _t: &Value, name: &str, _c: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let v = match name {
            "start" => self.0,
            "stop" => self.1,
            _ => self.2,
        };
        Ok(Some(v.map_or(Value::None, Value::Int)))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
pub struct Ellipsis;
impl Object for Ellipsis {
    fn type_name(&self) -> String {
        "ellipsis".into()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
