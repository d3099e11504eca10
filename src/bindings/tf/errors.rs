//! `tf.errors`: TensorFlow's `OpError` family. The classes are the interpreter's own (made
//! by name through `lang::exception_class`), so `except tf.errors.InvalidArgumentError`
//! catches what any binding raises under that name; the list of names is lang's
//! (`lang::TF_ERRORS`), and this file exports them.

use crate::lang::{Ctx, NativeModule, Value};

/// `tf.errors`: the interpreter's own classes, so `except tf.errors.InvalidArgumentError`
/// catches what the engine raises by that name.
pub fn errors_module(ctx: &mut dyn Ctx) -> Value {
    let m = NativeModule::new("tensorflow.errors", "TensorFlow's exception classes.");
    for name in std::iter::once(&"OpError").chain(crate::lang::TF_ERRORS) {
        m.set(name, crate::lang::exception_class(ctx, name));
    }
    m.into_value()
}
