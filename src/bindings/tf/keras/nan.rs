//! What a NaN or infinite loss does in `fit`. `tf.keras.callbacks.TerminateOnNaN` follows
//! Keras 3: after a batch whose running loss is NaN or infinite it prints
//! `Batch N: Invalid loss, terminating training` and sets `model.stop_training`, or with
//! `raise_error=True` raises Keras's RuntimeError. Without it, fit still stops at the first
//! invalid loss (Keras would train on with NaN weights) and warns on stderr with what to try.
//! The engine's epoch loop decides when to stop; this file only speaks.

use super::super::{func, given, print_line};
use super::callbacks::{set_attr, to_f64, CallbackObj, Kind};
use super::schedules::{log_value, warn, Rule};
use crate::lang::float_repr;
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};

struct TerminateOnNaN {
    raise_error: bool,
}

impl Rule for TerminateOnNaN {
    fn class_name(&self) -> &'static str {
        "TerminateOnNaN"
    }
    fn module_path(&self) -> &'static str {
        "keras.src.callbacks.terminate_on_nan"
    }
    fn hook(&self, name: &str, args: &Args, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        // The base class forwards `on_train_batch_end` to `on_batch_end`; one of the two
        // arrives, never both, since fit calls only the first.
        if !matches!(name, "on_train_batch_end" | "on_batch_end") {
            return Ok(());
        }
        let s = args.bind(name, &["batch", "logs"], 1)?;
        let batch = s[0].as_ref().map_or(Ok(0), |v| v.as_int())?;
        let Some(loss) = log_value(&given(&s[1]).cloned(), "loss")? else {
            return Ok(());
        };
        let loss = to_f64(ctx, &loss)?;
        if loss.is_finite() {
            return Ok(());
        }
        if self.raise_error {
            return Err(PyErr::new(
                "RuntimeError",
                format!(
                    "NaN or Inf loss encountered at batch {batch}. Loss value: {}. \
                     Terminating training immediately.",
                    float_repr(loss)
                ),
            ));
        }
        print_line(
            ctx,
            &format!("Batch {batch}: Invalid loss, terminating training"),
        );
        set_attr(ctx, model, "stop_training", Value::Bool(true))
    }
    fn attr(&self, name: &str) -> Option<Value> {
        (name == "raise_error").then_some(Value::Bool(self.raise_error))
    }
}

fn terminate_on_nan(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("TerminateOnNaN", &["raise_error"], 0)?;
    let raise_error = given(&s[0]).map_or(Ok(false), |v| v.as_bool_strict())?;
    Ok(CallbackObj::value(Kind::Rule(Box::new(TerminateOnNaN {
        raise_error,
    }))))
}

/// Whether the user's callbacks already watch the loss, so fit need not warn as well.
pub fn has_terminate_on_nan(callbacks: &[Value]) -> bool {
    callbacks.iter().any(|cb| {
        cb.downcast::<CallbackObj>()
            .is_some_and(|c| matches!(&c.kind, Kind::Rule(r) if r.class_name() == "TerminateOnNaN"))
    })
}

/// fit's own warning when an invalid loss stopped training and no TerminateOnNaN was given.
pub fn warn_stopped(ctx: &mut dyn Ctx, epoch: usize, epochs: usize, batch: usize) {
    warn(
        ctx,
        &format!(
            "Batch {batch} of epoch {}/{epochs}: Invalid loss (NaN or infinite), training \
             stopped; the model keeps its weights as they are now. Try a lower learning rate, \
             and check the data for NaN or infinite values.",
            epoch + 1
        ),
    );
}

/// Registers `TerminateOnNaN` in `tf.keras.callbacks`.
pub fn register(m: &NativeModule) {
    m.set(
        "TerminateOnNaN",
        func(
            "TerminateOnNaN",
            "TerminateOnNaN(raise_error=False)",
            terminate_on_nan,
        ),
    );
}
