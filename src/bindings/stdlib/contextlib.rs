//! `contextlib`: `suppress(*exceptions)` (swallows an error of those classes or their
//! subclasses leaving the block), `nullcontext(enter_result=None)` and
//! `contextmanager(func)` (a generator function made a context manager: the code before
//! its `yield` enters, the rest exits, an error in the block is thrown in at the `yield`),
//! with CPython's reprs, RuntimeError and TypeError texts.

use std::any::Any;

use super::f;
use crate::lang::{Args, Ctx, NativeModule, Object, PyErr, PyResult, Value};

/// `contextlib.suppress(*exceptions)`.
struct Suppress(Vec<Value>);

/// `contextlib.nullcontext(enter_result)`.
struct NullContext(Value);

/// `contextlib._GeneratorContextManager`: one call of a `@contextmanager` function, whose
/// generator runs up to its `yield` on entry and on from there at exit.
struct GeneratorContextManager {
    gen: Value,
}

/// `next(gen)`: `None` when the generator returned instead of yielding.
fn advance(gen: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
    ctx.next_item(gen)
}

/// The exception object an error carries: the raised instance, or one made from its class
/// and message (the interpreter makes those lazily).
fn error_value(err: &PyErr, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if let Some(v) = &err.0.value {
        return Ok(v.clone());
    }
    let Some(cls) = ctx.exception_class(err.type_name()) else {
        return Err(err.clone());
    };
    let args = if err.message().is_empty() {
        vec![]
    } else {
        vec![Value::str(err.message())]
    };
    ctx.call(&cls, Args::new(args))
}

impl Object for GeneratorContextManager {
    fn type_name(&self) -> String {
        "_GeneratorContextManager".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(shown("_GeneratorContextManager", self as *const _ as usize))
    }
    fn enter(&self, _this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        match advance(&self.gen, ctx)? {
            Some(v) => Ok(v),
            None => Err(PyErr::runtime_error("generator didn't yield")),
        }
    }
    fn exit(&self, error: Option<&PyErr>, ctx: &mut dyn Ctx) -> PyResult<bool> {
        let Some(err) = error else {
            return match advance(&self.gen, ctx)? {
                Some(_) => Err(PyErr::runtime_error("generator didn't stop")),
                None => Ok(false),
            };
        };
        let value = error_value(err, ctx)?;
        let throw = ctx.getattr(&self.gen, "throw")?;
        match ctx.call(&throw, Args::new(vec![value.clone()])) {
            Ok(_) => Err(PyErr::runtime_error("generator didn't stop after throw()")),
            // The generator swallowed the error and returned: the block's error is
            // suppressed (unless it was a StopIteration, which the generator let out).
            Err(e) if e.type_name() == "StopIteration" => {
                Ok(!e.0.value.as_ref().is_some_and(|v| v.is(&value)))
            }
            // The same error came back out: the with statement re-raises it as it was.
            Err(e) if e.0.value.as_ref().is_some_and(|v| v.is(&value)) => Ok(false),
            Err(e) => Err(e),
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `contextlib.contextmanager(func)`: a function that calls `func` and wraps the generator
/// it returns.
fn contextmanager(a: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let func = a.bind("contextmanager", &["func"], 1)?[0]
        .clone()
        .unwrap_or(Value::None);
    let name = match ctx.getattr(&func, "__name__") {
        Ok(Value::Str(s)) => s.to_string(),
        _ => "helper".to_string(),
    };
    Ok(crate::lang::NativeFn::value(&name, "", move |a, ctx| {
        let gen = ctx.call(&func, a.clone())?;
        Ok(Value::native(GeneratorContextManager { gen }))
    }))
}

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
        "contextmanager",
        f(
            "contextmanager",
            "contextmanager(func)\n@contextmanager decorator: a generator function that yields once becomes a context manager.",
            contextmanager,
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
