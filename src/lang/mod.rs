//! The Python subset that Keras notebooks are written in: parsing (astral's
//! `ruff_python_parser`, converted at once into a small tree of our own), evaluation,
//! values, exceptions with IPython-style tracebacks, builtins, magics, completion and
//! inspection. The language reports output only through the session's [`Sink`]; it never
//! imports the protocol, and it reaches the `tf`/`np`/`plt` modules through the module
//! loader the session hands it.
//!
//! Generator functions run eagerly: calling one runs its body to the end and returns an
//! iterator over what it yielded. The evaluator walks the tree on the Rust stack, so
//! suspending a body in the middle of a statement would need a second stack or a rewrite
//! of the evaluator into a state machine; running to completion keeps every finite
//! generator exact (its side effects happen at the call rather than interleaved with the
//! consumer). An endless generator stops after 2^20 values with a
//! `NotImplementedError` that says so, instead of exhausting memory.
//!
//! [`Sink`]: crate::cell::Sink

mod builtins;
mod datamodel;
mod eval;
mod ipython;
mod syntax;
mod values;

pub use builtins::files::io_err;
pub use datamodel::repr::{float_repr, str_repr};
pub use eval::interp::{is_complete, Interpreter};
pub use eval::together::{in_call, meet, run_together, Merge, Offer, Turns};
pub use ipython::help::{signature, SigParam, Signature};
pub use values::exc::{Frame, PyErr, PyResult};
pub use values::exceptions::TF_ERRORS;
pub use values::lazy::Lazy;
pub use values::native::{NativeClass, NativeFn, NativeModule};
pub use values::object::{Args, BinOp, CmpOp, Ctx, Object, State, ThreadState, UnaryOp};
pub use values::runtime::{
    class_own_attr, class_own_items, is_user_class, not_implemented, remove_class_attr,
};
pub use values::stand_in::StandIn;
pub use values::value::{Dict, DictKind, HashKey, Value};

/// The exception class a native raises by `name` (`PyErr::new(name, ..)`), as a value to
/// bind in a module: `tf.errors.OpError`, `tf.errors.InvalidArgumentError`, ... An
/// `except` clause naming it catches natives' errors of that class and its subclasses
/// (`except tf.errors.OpError` catches `InvalidArgumentError`). Unknown names become
/// subclasses of `Exception`; `None` only from a context that is not the interpreter.
pub fn exception_class(ctx: &mut dyn Ctx, name: &str) -> Value {
    ctx.exception_class(name).unwrap_or(Value::None)
}

/// Finds a module the kernel provides by its dotted name (`numpy`, `tensorflow`,
/// `matplotlib.pyplot`); `None` when the kernel has no such module.
pub type ModuleLoader = fn(&str, &mut dyn Ctx) -> Option<PyResult<Value>>;
