//! The one path every eager `tf` operation takes. A tf function (or tensor operator)
//! converts its arguments to op-library tensors (`convert.rs`), then runs the op library's
//! builders through [`apply`] in the session's execution context (an [`Eager`] kept in
//! `ctx.state()`, never a global), where active gradient tapes record them and an attached
//! graph recorder sees them; the result is wrapped as a `tf.Tensor`. Op errors become
//! Python exceptions of TensorFlow's class with TensorFlow's text.

use super::tensor::Tensor;
use super::TfState;
use crate::lang::{Ctx, PyErr, PyResult, Value};
use crate::ops::{self, Eager, OpError, OpResult};

/// The session's execution context.
pub fn context(ctx: &mut dyn Ctx) -> &mut Eager {
    &mut ctx.state().get::<TfState>().eager
}

/// An op error as the Python exception TensorFlow raises.
pub fn op_err(e: OpError) -> PyErr {
    PyErr::new(e.class.py_name(), e.message)
}

/// A `tf.Tensor` for an op-library tensor (same identity).
pub fn wrap(t: ops::Tensor) -> Value {
    Value::native(Tensor {
        tensor: t,
        keras_mask: None,
    })
}

/// A `tf.Tensor` carrying Keras's mask (`_keras_mask`) when there is one.
pub fn wrap_masked(t: ops::Tensor, mask: Option<ops::Tensor>) -> Value {
    Value::native(Tensor {
        tensor: t,
        keras_mask: mask,
    })
}

/// The Keras mask a value carries (`_keras_mask` of a tensor), if any.
pub fn keras_mask_of(v: &Value) -> Option<ops::Tensor> {
    v.downcast::<Tensor>().and_then(|t| t.keras_mask.clone())
}

/// Runs `f` in the session's execution context and returns what it computed.
pub fn run<R>(ctx: &mut dyn Ctx, f: impl FnOnce(&mut Eager) -> OpResult<R>) -> PyResult<R> {
    f(context(ctx)).map_err(op_err)
}

/// Runs `f` in the session's execution context and wraps the tensor it returns.
pub fn apply(
    ctx: &mut dyn Ctx,
    f: impl FnOnce(&mut Eager) -> OpResult<ops::Tensor>,
) -> PyResult<Value> {
    run(ctx, f).map(wrap)
}

/// [`apply`] for ops with several outputs: a Python list of tensors.
pub fn apply_many(
    ctx: &mut dyn Ctx,
    f: impl FnOnce(&mut Eager) -> OpResult<Vec<ops::Tensor>>,
) -> PyResult<Value> {
    run(ctx, f).map(|ts| Value::list(ts.into_iter().map(wrap).collect()))
}
