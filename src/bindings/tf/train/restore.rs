//! Putting checkpoint values into variables, now or later. A value goes into every copy of
//! a mirrored variable (a checkpoint holds one value per variable, so it restores under
//! any number of replicas, or none). Values whose variables do not exist yet wait in
//! [`Deferred`] (session state) until the variable is made, as TensorFlow's deferred
//! restoration does: a model's weights when the model is built, an optimizer's slots
//! when its first step makes them, before that step reads them.

use std::cell::RefCell;
use std::rc::Rc;

use crate::bindings::tf::convert::variable_of;
use crate::bindings::tf::eager::op_err;
use crate::bindings::tf::keras::state_variable::state_variable_of;
use crate::bindings::tf::keras::variable::KerasVariable;
use crate::bindings::tf::variable::{MirroredVariable, Variable};
use crate::keras::optimizer::Optimizer;
use crate::lang::{Ctx, PyResult, Value};
use crate::ops;
use crate::tensor::{shape_str, NdArray};

/// The saved values of a restore that no variable has taken yet, as (key, the saved
/// variable's name); shared by its status object and the deferred entries, which remove a
/// key when its variable takes the value.
pub type Unresolved = Rc<RefCell<Vec<(String, String)>>>;

/// Every copy of the variable `v` stands for.
fn copies(v: &Value) -> Vec<ops::Variable> {
    if let Some(k) = v.downcast::<KerasVariable>() {
        return k.copies();
    }
    if let Some(m) = v.downcast::<MirroredVariable>() {
        return m
            .parts
            .iter()
            .filter_map(|p| p.downcast::<Variable>())
            .map(|p| p.var.clone())
            .collect();
    }
    state_variable_of(v)
        .or_else(|| variable_of(v))
        .into_iter()
        .collect()
}

/// The value saved for `v`: its first replica's.
pub fn saved_value(v: &Value) -> Option<NdArray> {
    variable_of(v).map(|var| (*var.snapshot()).clone())
}

/// TensorFlow's error for a saved value of another shape.
fn shape_error(key: &str, var: &ops::Variable, a: &NdArray) -> crate::lang::PyErr {
    crate::lang::PyErr::value_error(format!(
        "Received incompatible tensor with shape {} when attempting to restore variable with shape {} and name {key}.",
        shape_str(a.shape()),
        shape_str(var.shape())
    ))
}

/// Stores `a` (cast to the variable's dtype) into every copy of `var`.
fn store_all(key: &str, vars: &[ops::Variable], a: &NdArray) -> PyResult<()> {
    for var in vars {
        if var.shape() != a.shape() {
            return Err(shape_error(key, var, a));
        }
        var.store(a.astype(var.dtype())).map_err(op_err)?;
    }
    Ok(())
}

/// Restores `a` into the variable `v` stands for.
pub fn assign(key: &str, v: &Value, a: &NdArray) -> PyResult<()> {
    store_all(key, &copies(v), a)
}

/// Values waiting for a model's weights to be made.
struct PendingModel {
    /// The model's name: its weights are made with paths below `name/`.
    name: String,
    /// The position the next weight made takes in the model's `weights`.
    next: usize,
    /// By position in `weights`: the key and the value.
    values: Vec<(usize, String, NdArray)>,
    unresolved: Unresolved,
}

/// Values waiting for an optimizer's slots.
struct PendingOptimizer {
    iterations: ops::Variable,
    /// By position in the optimizer's `variables`.
    values: Vec<(usize, String, NdArray)>,
    unresolved: Unresolved,
}

/// The deferred restorations of the session.
#[derive(Default)]
pub struct Deferred {
    models: Vec<PendingModel>,
    optimizers: Vec<PendingOptimizer>,
}

fn resolved(unresolved: &Unresolved, key: &str) {
    unresolved.borrow_mut().retain(|(k, _)| k != key);
}

/// Holds values for the weights a model makes from position `have` on.
pub fn defer_model(
    ctx: &mut dyn Ctx,
    name: String,
    have: usize,
    values: Vec<(usize, String, NdArray)>,
    unresolved: Unresolved,
) {
    let d = ctx.state().get::<Deferred>();
    d.models.retain(|m| m.name != name);
    d.models.push(PendingModel {
        name,
        next: have,
        values,
        unresolved,
    });
}

/// Holds values for the variables an optimizer makes at its first step.
pub fn defer_optimizer(
    ctx: &mut dyn Ctx,
    iterations: ops::Variable,
    values: Vec<(usize, String, NdArray)>,
    unresolved: Unresolved,
) {
    let d = ctx.state().get::<Deferred>();
    d.optimizers.retain(|o| !o.iterations.same(&iterations));
    d.optimizers.push(PendingOptimizer {
        iterations,
        values,
        unresolved,
    });
}

/// Called when a Keras layer makes a variable at `path`: a model waiting for its weights
/// whose name starts the path takes its next saved value. A value of another shape is
/// left unrestored (the status's `assert_consumed` names it); the layer is built as is.
pub fn keras_variable_made(ctx: &mut dyn Ctx, path: &str, v: &Value) {
    let d = ctx.state().get::<Deferred>();
    if d.models.is_empty() {
        return;
    }
    let Some(i) = d
        .models
        .iter()
        .position(|m| path.starts_with(&format!("{}/", m.name)))
    else {
        return;
    };
    let m = &mut d.models[i];
    let at = m.next;
    m.next += 1;
    let found = m.values.iter().position(|(p, _, _)| *p == at);
    let taken = found.map(|j| m.values.remove(j));
    let unresolved = m.unresolved.clone();
    if m.values.is_empty() {
        d.models.remove(i);
    }
    if let Some((_, key, a)) = taken {
        if assign(&key, v, &a).is_ok() {
            resolved(&unresolved, &key);
        }
    }
}

/// Called when an optimizer has made its slots, before its first step reads them.
pub fn optimizer_built(ctx: &mut dyn Ctx, opt: &Optimizer) -> PyResult<()> {
    let d = ctx.state().get::<Deferred>();
    let Some(i) = d
        .optimizers
        .iter()
        .position(|o| o.iterations.same(&opt.iterations))
    else {
        return Ok(());
    };
    let pending = d.optimizers.remove(i);
    let vars = opt.variables();
    for (at, key, a) in &pending.values {
        if let Some(var) = vars.get(*at) {
            store_all(key, std::slice::from_ref(var), a)?;
            resolved(&pending.unresolved, key);
        }
    }
    Ok(())
}
