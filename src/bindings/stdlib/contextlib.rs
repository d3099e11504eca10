//! `contextlib`: `suppress(*exceptions)` (swallows an error of those classes or their
//! subclasses leaving the block) and `nullcontext(enter_result=None)`, with CPython's
//! reprs and TypeError texts. `contextmanager` is left out: the interpreter runs a
//! generator function to its end when called, so the code after `yield` could not wait
//! for the block.

use std::any::Any;

use super::f;
use crate::lang::{Args, Ctx, NativeModule, Object, PyErr, PyResult, Value};

/// `contextlib.suppress(*exceptions)`.
struct Suppress(Vec<Value>);

/// `contextlib.nullcontext(enter_result)`.
struct NullContext(Value);

/// The class of the exception `err` carries.
fn error_class(err: &PyErr, ctx: &mut dyn Ctx) -> Option<Value> {
    match &err.0.value {
        Some(v) => ctx.getattr(v, "__class__").ok(),
        None => ctx.exception_class(err.type_name()),
    }
}

/// `issubclass(cls, target)` along the `__base__` chain, with issubclass's TypeError for
/// a target that is not a class.
fn subclass_of(cls: &Value, target: &Value, ctx: &mut dyn Ctx) -> PyResult<bool> {
    if !ctx.repr(target)?.starts_with("<class '") {
        return Err(PyErr::type_error(
            "issubclass() arg 2 must be a class, a tuple of classes, or a union",
        ));
    }
    let mut c = cls.clone();
    loop {
        if c.is(target) {
            return Ok(true);
        }
        c = match ctx.getattr(&c, "__base__") {
            Ok(Value::None) | Err(_) => return Ok(false),
            Ok(base) => base,
        };
    }
}

/// CPython's default repr of an object of contextlib's class `kind` at address `at`.
fn shown(kind: &str, at: usize) -> String {
    format!("<contextlib.{kind} object at {at:#x}>")
}

impl Object for Suppress {
    fn type_name(&self) -> String {
        "suppress".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(shown("suppress", self as *const _ as usize))
    }
    fn enter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(Value::None)
    }
    fn exit(&self, error: Option<&PyErr>, ctx: &mut dyn Ctx) -> PyResult<bool> {
        let Some(cls) = error.and_then(|e| error_class(e, ctx)) else {
            return Ok(false);
        };
        for target in &self.0 {
            if subclass_of(&cls, target, ctx)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Object for NullContext {
    fn type_name(&self) -> String {
        "nullcontext".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(shown("nullcontext", self as *const _ as usize))
    }
    fn enter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        Ok(self.0.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

pub fn module() -> Value {
    NativeModule::new(
        "contextlib",
        "Utilities for with-statement contexts.",
    )
    .with(
        "suppress",
        f(
            "suppress",
            "suppress(*exceptions)\nSuppress the given exceptions leaving the block.",
            |a: &Args, _| Ok(Value::native(Suppress(a.pos.to_vec()))),
        ),
    )
    .with(
        "nullcontext",
        f(
            "nullcontext",
            "nullcontext(enter_result=None)\nA context manager that does nothing.",
            |a: &Args, _| {
                if a.pos.len() > 1 {
                    return Err(PyErr::type_error(format!(
                        "nullcontext.__init__() takes from 1 to 2 positional arguments but {} were given",
                        a.pos.len() + 1
                    )));
                }
                let s = a.bind("nullcontext", &["enter_result"], 0)?;
                Ok(Value::native(NullContext(
                    s[0].clone().unwrap_or(Value::None),
                )))
            },
        ),
    )
    .into_value()
}
