//! A small stand-in for the interpreter's `Ctx`, for driving bindings directly in tests: it
//! calls natives, iterates lists and native iterators, renders plain values, and collects
//! output. Cells run through the real interpreter in the end-to-end tests.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use mirror_kernel::cell::Output;
use mirror_kernel::display::{plain, MimeBundle};
use mirror_kernel::lang::{Args, Ctx, PyErr, PyResult, State, Value};

#[derive(Default)]
pub struct MockCtx {
    pub state: State,
    pub outputs: Vec<Output>,
}

impl MockCtx {
    /// `module.name(*pos, **kw)`.
    pub fn call_attr(
        &mut self,
        v: &Value,
        name: &str,
        pos: Vec<Value>,
        kw: Vec<(&str, Value)>,
    ) -> PyResult<Value> {
        let f = self.getattr(v, name)?;
        let mut args = Args::new(pos);
        for (k, v) in kw {
            args = args.with_kw(k, v);
        }
        self.call(&f, args)
    }
}

pub fn floats(v: &[f64]) -> Value {
    Value::list(v.iter().map(|x| Value::Float(*x)).collect())
}

impl Ctx for MockCtx {
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
            Value::Float(x) => format!("{x:?}"),
            Value::Str(s) => format!("'{s}'"),
            Value::Native(o) | Value::Obj(o) => o.clone().repr(self)?,
            other => format!("{other:?}"),
        })
    }
    fn str(&mut self, v: &Value) -> PyResult<String> {
        match v {
            Value::Str(s) => Ok(s.to_string()),
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
        let Value::Native(o) = v else {
            return Err(PyErr::type_error(format!(
                "'{}' object is not iterable",
                v.type_name()
            )));
        };
        let it = o.clone().iter(v, self)?;
        let Value::Native(it_obj) = &it else {
            return Ok(it.as_seq().unwrap_or_default());
        };
        let mut out = vec![];
        while let Some(x) = it_obj.clone().next(self)? {
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
        Err(PyErr::new("StdinNotImplementedError", "no stdin in tests"))
    }
    fn execution_count(&self) -> u64 {
        1
    }
}
