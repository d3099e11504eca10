//! The builtin namespace: the `Builtin` function object, the table from each builtin's
//! name to the file that implements it (a name is listed once, beside its code), the
//! builtin types and singletons, and the argument helpers the builtins share.

use std::any::Any;
use std::collections::HashMap;
use std::rc::Rc;

use super::{introspection, io, iteration, numeric};
use crate::lang::eval::vm::{FastHash, Vm};
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::{Args, Ctx, Object};
use crate::lang::values::runtime::*;
use crate::lang::values::value::Value;

/// A builtin function: its name and the function of the file that implements it.
pub struct Builtin {
    pub name: &'static str,
    pub run: Handler,
}

/// How a builtin runs: with the running `Vm`, its own name (one handler serves a file's
/// names) and the call's arguments.
pub type Handler = fn(&mut Vm<'_>, &str, Args) -> PyResult<Value>;

impl Object for Builtin {
    fn type_name(&self) -> String {
        "builtin_function_or_method".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<built-in function {}>", self.name))
    }
    fn hash(&self) -> Option<u64> {
        Some(self as *const Builtin as usize as u64)
    }
    fn doc(&self) -> Option<String> {
        Some(crate::lang::ipython::help::builtin_doc(self.name))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Every builtin function, by the file that implements it.
const FUNCTIONS: &[(&[&str], Handler)] = &[
    (io::NAMES, |vm, name, a| vm.builtin_io(name, a)),
    (iteration::NAMES, |vm, name, a| {
        vm.builtin_iteration(name, a)
    }),
    (numeric::NAMES, |vm, name, a| vm.builtin_numeric(name, a)),
    (introspection::NAMES, |vm, name, a| {
        vm.builtin_introspection(name, a)
    }),
];

pub const TYPES: &[&str] = &[
    "int",
    "float",
    "str",
    "bool",
    "list",
    "tuple",
    "dict",
    "set",
    "frozenset",
    "type",
    "slice",
];
pub fn make_builtins(exc: &HashMap<String, Value>) -> HashMap<String, Value, FastHash> {
    let mut m = HashMap::default();
    for (names, run) in FUNCTIONS {
        for name in *names {
            m.insert(
                name.to_string(),
                Value::Obj(Rc::new(Builtin { name, run: *run })),
            );
        }
    }
    for t in TYPES {
        m.insert(t.to_string(), Value::Obj(Rc::new(BuiltinType { name: t })));
    }
    m.insert(
        "range".into(),
        Value::Obj(Rc::new(BuiltinType { name: "range" })),
    );
    m.insert(
        "object".into(),
        Value::Obj(Rc::new(BuiltinType { name: "object" })),
    );
    for (k, v) in exc {
        m.insert(k.clone(), v.clone());
    }
    m.insert(
        "NotImplemented".into(),
        Value::Obj(Rc::new(Singleton("NotImplemented"))),
    );
    m.insert(
        "Ellipsis".into(),
        Value::Obj(Rc::new(Singleton("Ellipsis"))),
    );
    m.insert("__name__".into(), Value::str("__main__"));
    m
}

/// A keyword argument by name.
pub fn kw<'a>(a: &'a Args, name: &str) -> Option<&'a Value> {
    a.kw.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// The first positional argument of a one-argument builtin `f`.
pub fn one<'a>(a: &'a Args, f: &str) -> PyResult<&'a Value> {
    a.pos
        .first()
        .ok_or_else(|| PyErr::type_error(format!("{f}() takes exactly one argument (0 given)")))
}

/// A name sent to a file that does not implement it: a bug in [`FUNCTIONS`], reported
/// as Python's error rather than a panic.
pub fn unknown(name: &str) -> PyErr {
    PyErr::not_implemented(format!("{name}() is not available"))
}
