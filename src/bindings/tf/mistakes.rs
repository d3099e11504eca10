//! The mistakes students make with strategy scopes, raised as Keras raises them: a model
//! built outside the scope and fitted inside (`ValueError`), compiled inside but built and
//! fitted outside (`RuntimeError: Need to be inside "with strategy.scope()"`), two
//! strategies mixed (`RuntimeError: Mixing different tf.distribute.Strategy objects`), and
//! the one-line warning at compile time. Each message is TF's text plus a plain-words hint.
//! The model binding calls these; they only read the session's scope stack.

use super::distribute::{active_strategy, strategy_repr};
use super::TfError;
use crate::cell::{Output, StreamName};
use crate::lang::{Ctx, PyResult, Value};

/// The strategy a model trains under, checked as Keras checks it. `created` is the
/// strategy active when the model's variables were made, `compiled` the one active at
/// `compile`; `first_variable` is the repr of one of its variables for TF's message.
/// Returns the strategy to train with, or `None` for one replica on the default device.
pub fn check_fit_scope(
    ctx: &mut dyn Ctx,
    created: Option<&Value>,
    compiled: Option<&Value>,
    first_variable: &str,
) -> PyResult<Option<Value>> {
    let active = active_strategy(ctx);
    match (created, active) {
        (Some(c), Some(a)) if !c.is(&a) => Err(TfError::Runtime(format!(
            "Mixing different tf.distribute.Strategy objects: {} is not {}\nHint: create one \
             strategy per session and build, compile and fit the model inside that strategy's \
             `with strategy.scope():`.",
            strategy_repr(&a, ctx),
            strategy_repr(c, ctx)
        ))
        .into()),
        (Some(c), _) => Ok(Some(c.clone())),
        (None, Some(a)) => Err(TfError::Value(format!(
            "Trying to create optimizer slot variable under the scope for tf.distribute.Strategy \
             ({}), which is different from the scope used for the original variable ({}). Make \
             sure the slot variables are created under the same strategy scope. This may happen \
             if you're restoring from a checkpoint outside the scope.\nHint: the model was built \
             outside the strategy; build and compile it inside `with strategy.scope():`, then fit.",
            strategy_repr(&a, ctx),
            first_variable
        ))
        .into()),
        (None, None) => match compiled {
            Some(c) => Err(TfError::Runtime(format!(
                "Need to be inside \"with strategy.scope()\" for {}\nHint: the model was compiled \
                 inside the strategy's scope but built outside it; build, compile and fit inside \
                 `with strategy.scope():`.",
                strategy_repr(c, ctx)
            ))
            .into()),
            None => Ok(None),
        },
    }
}

/// The one-line `UserWarning` Keras-style compile prints when the model's variables were
/// created outside the active strategy's scope (nothing when all is well).
pub fn warn_compile_outside_scope(ctx: &mut dyn Ctx, created: Option<&Value>) {
    let active = active_strategy(ctx);
    let misplaced = match (&active, created) {
        (Some(a), Some(c)) => !a.is(c),
        (Some(_), None) => true,
        _ => false,
    };
    if misplaced {
        ctx.emit(Output::Stream {
            name: StreamName::Stderr,
            text: "UserWarning: This model's variables were created outside the active \
                   tf.distribute strategy's scope; build the model inside \
                   `with strategy.scope():` so that it is mirrored on every replica.\n"
                .into(),
        });
    }
}
