//! The Python subset that Keras notebooks are written in: parsing (astral's
//! `ruff_python_parser`, converted at once into a small tree of our own), evaluation,
//! values, exceptions with IPython-style tracebacks, builtins, magics, completion and
//! inspection. The language reports output only through the session's [`Sink`]; it never
//! imports the protocol, and it reaches the `tf`/`np`/`plt` modules through the module
//! loader the session hands it.
//!
//! [`Sink`]: crate::session::Sink

pub mod exc;
pub mod native;
pub mod object;
pub mod value;

mod ast;
mod attr;
pub mod bench;
mod builtins;
mod builtins_more;
mod builtins_obj;
mod call;
mod comp;
mod compare;
mod complete;
mod convert;
mod convert_expr;
mod ctxmgr;
mod eval_expr;
mod eval_stmt;
mod exceptions;
mod fast;
mod files;
mod format;
mod help;
mod interp;
mod items;
mod magics;
mod mathmod;
mod methods;
mod methods_coll;
mod modules;
mod ops;
mod pretty;
mod repr;
mod runtime;
mod scope;
mod syntax;
mod traceback;
mod types;
mod vm;

pub use exc::{Frame, PyErr, PyResult};
pub use interp::{is_complete, Interpreter};
pub use native::{NativeClass, NativeFn, NativeModule};
pub use object::{Args, BinOp, CmpOp, Ctx, Object, State, UnaryOp};
pub use repr::float_repr;
pub use value::{Dict, HashKey, Value};

/// Finds a module the kernel provides by its dotted name (`numpy`, `tensorflow`,
/// `matplotlib.pyplot`); `None` when the kernel has no such module.
pub type ModuleLoader = fn(&str, &mut dyn Ctx) -> Option<PyResult<Value>>;
