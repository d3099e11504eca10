//! `tf.errors`: TensorFlow's `OpError` family. The classes are the interpreter's own (made
//! by name through `lang::exception_class`), so `except tf.errors.InvalidArgumentError`
//! catches what any binding raises under that name; this file only lists and exports them.

use crate::lang::{Ctx, NativeModule, Value};

/// TensorFlow's error classes that `tf.errors` lists, below `OpError`.
const TF_ERRORS: &[&str] = &[
    "OpError",
    "InvalidArgumentError",
    "ResourceExhaustedError",
    "NotFoundError",
    "UnimplementedError",
    "FailedPreconditionError",
    "OutOfRangeError",
    "UnknownError",
    "InternalError",
    "AbortedError",
    "CancelledError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "DeadlineExceededError",
    "DataLossError",
    "UnavailableError",
    "UnauthenticatedError",
];

/// `tf.errors`: the interpreter's own classes, so `except tf.errors.InvalidArgumentError`
/// catches what the engine raises by that name.
pub fn errors_module(ctx: &mut dyn Ctx) -> Value {
    let m = NativeModule::new("tensorflow.errors", "TensorFlow's exception classes.");
    for name in TF_ERRORS {
        m.set(name, crate::lang::exception_class(ctx, name));
    }
    m.into_value()
}
