//! The `tensorflow` module a cell imports (`import tensorflow as tf`): tensors, variables
//! and the eager ops on them, `tf.GradientTape`, dtypes, `TensorShape`, `tf.config`
//! (physical and logical devices) and `tf.distribute` (strategies, scopes, per-replica
//! values). It converts language values to engine types and back and holds no numerics of
//! its own: every tf operation runs the op library (`crate::ops`) through one path
//! (`eager.rs`), training comes from the keras and distribute parts. Session-wide state
//! (the execution context with its active tapes, random seeds, logical device layout, the
//! active strategy scope) lives in [`TfState`] inside `ctx.state()`, never in globals, so
//! `%reset` clears it.
//!
//! The parts: values (`tensor.rs`, `variable.rs`, `dtypes.rs`, `shape.rs` for TensorShape,
//! `convert.rs` for TF's conversion rules between language values and tensors); the one
//! path of eager ops (`eager.rs`) and the functions that take it (`ops.rs` for `tf` and
//! `tf.math`, `shape_ops.rs` for creation, shape and selection by position, `select.rs` for
//! selection by mask, value and coordinates, `nn.rs` for `tf.nn`,
//! `random.rs` for `tf.random`, `image.rs` for `tf.image`, `scatter.rs` for the scatters,
//! `map_fn.rs` for `tf.map_fn`);
//! `gradient_tape.rs` (`tf.GradientTape`); `function/`
//! (`tf.function` traced into graphs of the op library, `tf.TensorSpec`, `tf.print`,
//! `tf.cond`, `tf.while_loop`); `module.rs` (`tf.Module`,
//! `tf.name_scope`); devices
//! (`config.rs`); strategies (`distribute.rs` for scopes and `run`/`reduce`,
//! `strategies.rs` for the constructors, `values.rs` for PerReplica, ReduceOp and replica
//! contexts, `merge.rs` for where replicas meet (`merge_call`, `all_reduce`), `mistakes.rs` for the scope mistakes Keras names); `data/` (`tf.data`);
//! `keras/` (`tf.keras`); `train/` (`tf.train`: checkpoints); `errors.rs` (`tf.errors`).

pub mod config;
pub mod convert;
pub mod data;
pub mod distribute;
pub mod dtypes;
pub mod eager;
pub mod enums;
pub mod errors;
pub mod function;
pub mod gradient_tape;
pub mod image;
pub mod keras;
pub mod map_fn;
pub mod merge;
pub mod mistakes;
pub mod module;
pub mod nn;
pub mod ops;
pub mod random;
pub mod scatter;
pub mod select;
pub mod shape;
pub mod shape_ops;
pub mod strategies;
pub mod tensor;
pub mod train;
pub mod values;
pub mod variable;

#[cfg(test)]
mod tensor_tests;
#[cfg(test)]
mod tests;

use thiserror::Error;

use crate::cell::{Output, StreamName};
use crate::lang::{Args, Ctx, NativeFn, NativeModule, Object, PyErr, PyResult, Value};

/// The version of the TensorFlow API this module mirrors (what `tf.__version__` shows).
pub const API_VERSION: &str = "2.21.0";

/// Errors raised by the `tensorflow` binding, each mapped to the Python exception class
/// TensorFlow raises in the same situation. Messages carry TF's text and, where a student
/// needs it, a plain-words hint on its own line.
#[derive(Debug, Error)]
pub enum TfError {
    #[error("{0}")]
    Value(String),
    #[error("{0}")]
    Runtime(String),
    #[error("{0}")]
    Type(String),
    #[error("{0}")]
    Index(String),
    #[error("{0}")]
    NotImplemented(String),
    #[error("{0}")]
    Attribute(String),
}

impl From<TfError> for PyErr {
    fn from(e: TfError) -> PyErr {
        let name = match &e {
            TfError::Value(_) => "ValueError",
            TfError::Runtime(_) => "RuntimeError",
            TfError::Type(_) => "TypeError",
            TfError::Index(_) => "IndexError",
            TfError::NotImplemented(_) => "NotImplementedError",
            TfError::Attribute(_) => "AttributeError",
        };
        PyErr::new(name, e.to_string())
    }
}

/// The session-wide state of the `tensorflow` module.
#[derive(Default)]
pub struct TfState {
    pub devices: config::DeviceState,
    pub dist: distribute::DistState,
    pub keras: keras::model::KerasState,
    /// The execution context every eager op runs in, with the active gradient tapes.
    pub eager: crate::ops::Eager,
    pub random: random::RandomState,
    pub tape_warnings: gradient_tape::TapeWarnings,
    /// The `tf.function` traces in progress.
    pub tracing: function::Tracing,
}

/// The module object. Each import builds a fresh namespace; everything that must survive
/// between cells lives in [`TfState`].
pub fn module(ctx: &mut dyn Ctx) -> PyResult<Value> {
    let m = NativeModule::new(
        "tensorflow",
        "TensorFlow's API, on the mirror-kernel engine.",
    )
    .with("__version__", Value::str(API_VERSION))
    .with("config", config::module())
    .with("data", data::module())
    .with("distribute", distribute::module())
    .with("dtypes", dtypes::module())
    .with("errors", errors::errors_module(ctx))
    .with("image", image::module())
    .with("keras", keras::module())
    .with("random", random::module())
    .with(
        "version",
        NativeModule::new("tensorflow.version", "TensorFlow's version.")
            .with("VERSION", Value::str(API_VERSION))
            .into_value(),
    )
    .with("newaxis", Value::None)
    .with(
        "Tensor",
        // A class for `isinstance`: eager and symbolic tensors name it in their chain.
        crate::lang::NativeClass::new(
            "Tensor",
            "tensorflow.python.framework.tensor",
            "A `tf.Tensor` represents a multidimensional array of elements.",
        )
        .into_value(),
    )
    .with(
        "device",
        func("device", "device(device_name)", config::device),
    )
    .with(
        "get_logger",
        func("get_logger", "get_logger()", |a, ctx| {
            a.bind("get_logger", &[], 0)?;
            Ok(crate::bindings::stdlib::logging::get_logger(
                Some("tensorflow"),
                ctx,
            ))
        }),
    )
    .with("train", train::module())
    .with("TensorShape", shape::class())
    .with(
        "VariableAggregation",
        Value::native(values::AggregationEnum),
    )
    .with("Module", module::class())
    .with(
        "name_scope",
        func("name_scope", "name_scope(name)", module::name_scope),
    );
    for (name, v) in dtypes::all() {
        m.set(name, v);
    }
    for (name, v) in gradient_tape::values() {
        m.set(name, v);
    }
    for (name, v) in function::values() {
        m.set(name, v);
    }
    ops::register(&m);
    Ok(m.into_value())
}

/// A method of native type `T` bound to the value `this`, for `getattr` to hand out.
pub(crate) fn bound<T: Object>(
    this: &Value,
    name: &str,
    f: impl Fn(&T, &Value, &Args, &mut dyn Ctx) -> PyResult<Value> + 'static,
) -> Value {
    let this = this.clone();
    let owner = name.to_string();
    NativeFn::value(name, "", move |args, ctx| match this.downcast::<T>() {
        Some(obj) => f(obj, &this, args, ctx),
        None => Err(PyErr::type_error(format!(
            "descriptor '{owner}' requires a different object"
        ))),
    })
}

/// Python's repr of a tuple whose items are already rendered: `(a, b)`, `(a,)`, `()`.
pub(crate) fn py_tuple(items: &[String]) -> String {
    match items.len() {
        1 => format!("({},)", items[0]),
        _ => format!("({})", items.join(", ")),
    }
}

/// The address shown in `<... object at 0x...>` reprs: the object's own address, so two
/// objects differ and one object keeps its repr, as in CPython.
pub(crate) fn address_of<T>(obj: &T) -> String {
    format!("{:#x}", obj as *const T as usize)
}

/// Prints a line on the cell's stdout, as TensorFlow's INFO logging shows in a notebook.
pub(crate) fn print_line(ctx: &mut dyn Ctx, text: &str) {
    ctx.emit(Output::Stream {
        name: StreamName::Stdout,
        text: format!("{text}\n"),
    });
}

/// A line TensorFlow logs through its `tensorflow` logger (`INFO:tensorflow:...` on stdout
/// as in a notebook, `WARNING:tensorflow:...` and above on stderr), unless a cell silenced
/// that logger (`tf.get_logger().setLevel('ERROR')`).
pub(crate) fn tf_log(ctx: &mut dyn Ctx, level: i64, text: &str) {
    if !crate::bindings::stdlib::logging::tf_enabled(level, ctx) {
        return;
    }
    let (name, label) = match level {
        l if l >= 50 => (StreamName::Stderr, "CRITICAL"),
        l if l >= 40 => (StreamName::Stderr, "ERROR"),
        l if l >= 30 => (StreamName::Stderr, "WARNING"),
        _ => (StreamName::Stdout, "INFO"),
    };
    ctx.emit(Output::Stream {
        name,
        text: format!("{label}:tensorflow:{text}\n"),
    });
}

/// An optional argument slot that is absent or `None`.
pub(crate) fn given(slot: &Option<Value>) -> Option<&Value> {
    match slot {
        Some(Value::None) | None => None,
        Some(v) => Some(v),
    }
}

/// The body of a module-level function: a plain `fn` (closures without captures coerce).
pub(crate) type Body = fn(&Args, &mut dyn Ctx) -> PyResult<Value>;

/// A module-level function from a plain `fn` (closures without captures coerce to it).
pub(crate) fn func(name: &str, doc: &str, body: Body) -> Value {
    NativeFn::value(name, doc, body)
}

/// A registration-table entry: the function's name, taken from its signature text (what
/// comes before `(`) so that the name is said once, and the function.
pub(crate) fn op(signature: &'static str, body: Body) -> (&'static str, Value) {
    let name = signature
        .split_once('(')
        .map_or(signature, |(name, _)| name);
    (name, func(name, signature, body))
}

/// Sets every function of a registration table (signature, body) on `m`.
pub(crate) fn set_all(m: &NativeModule, table: &[(&'static str, Body)]) {
    for (signature, body) in table {
        let (name, f) = op(signature, *body);
        m.set(name, f);
    }
}

/// A registration-table entry whose maker takes the name it is registered under, so that
/// the name is said once.
pub(crate) fn named(
    name: &'static str,
    make: impl FnOnce(&'static str) -> Value,
) -> (&'static str, Value) {
    (name, make(name))
}
