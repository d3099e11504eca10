//! Context managers (`with`: natives through `Object::enter`/`exit`, instances through
//! `__enter__`/`__exit__`) and `dir()` listings.

use super::vm::Vm;
use crate::lang::datamodel::attr::builtin_methods;
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::{Args, Object};
use crate::lang::values::runtime::{BuiltinType, Instance};
use crate::lang::values::value::{Dict, Value};
use crate::lang::NativeClass;

impl Vm<'_> {
    pub fn dir_of(&mut self, v: &Value) -> Vec<String> {
        let mut names: Vec<String> = match v {
            Value::Obj(o) | Value::Native(o) => o.dir(),
            other => builtin_methods(&other.type_name())
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
        if let Some(kind) = Dict::kind_of(v) {
            names.extend(kind.dir());
        }
        // A builtin type lists the methods its instances have (`dir(str)`), and builtin
        // objects of the interpreter (sets) theirs.
        if let Some(t) = v.downcast::<BuiltinType>() {
            names.extend(builtin_methods(t.name).iter().map(|s| s.to_string()));
        } else if let Value::Obj(_) = v {
            names.extend(
                builtin_methods(&v.type_name())
                    .iter()
                    .map(|s| s.to_string()),
            );
        }
        if let Some(i) = v.downcast::<Instance>() {
            if let Some(nb) = i.class().and_then(|c| c.native_base()) {
                if let Some(n) = nb.downcast::<NativeClass>() {
                    names.extend(n.dir());
                }
            }
        }
        names.sort();
        names.dedup();
        names
    }

    pub fn ctx_enter(&mut self, m: &Value) -> PyResult<Value> {
        if let Value::Native(o) = m {
            let o = o.clone();
            return o.enter(m, self);
        }
        match self.try_attr(m, "__enter__")? {
            Some(f) => self.call_value(&f, Args::default()),
            None => Err(PyErr::type_error(format!(
                "'{}' object does not support the context manager protocol",
                m.type_name()
            ))),
        }
    }

    pub fn ctx_exit(&mut self, m: &Value, err: Option<&PyErr>) -> PyResult<bool> {
        if let Value::Native(o) = m {
            let o = o.clone();
            return o.exit(err, self);
        }
        let Some(f) = self.try_attr(m, "__exit__")? else {
            return Ok(false);
        };
        let args = match err {
            Some(e) => {
                let cls = self.err_class(e);
                let val = self.err_value(e);
                vec![cls, val, Value::None]
            }
            None => vec![Value::None, Value::None, Value::None],
        };
        let r = self.call_value(&f, Args::new(args))?;
        self.truthy(&r)
    }
}
