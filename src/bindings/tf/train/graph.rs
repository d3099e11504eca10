//! The object graph a checkpoint saves: from a `tf.train.Checkpoint`, every trackable it
//! reaches and every variable they hold, each named by its path of attribute names as
//! TensorFlow names checkpoint keys (`model/_weights/0/.ATTRIBUTES/VARIABLE_VALUE`).
//!
//! What is trackable, and what it holds:
//! - a `tf.Variable` (mirrored or not), a Keras layer's variable, an optimizer's variable:
//!   a leaf, saved as the first replica's value;
//! - a nested `tf.train.Checkpoint`: its named objects (and its `save_counter` once made);
//! - a Keras model or layer: its `weights`, by position (`_weights/N`), since layer names
//!   change between sessions (`dense` becomes `dense_3`) and positions do not;
//! - a Keras optimizer: Keras 3's own names, `_iterations`, `_learning_rate` and
//!   `_variables/N` (its `variables` by position, the slots from 2 on);
//! - `tf.Module` (and subclasses): its attributes by name, lists and dicts looked into.
//!
//! A model or optimizer whose variables do not exist yet (a model not built, an optimizer
//! before its first step) is reported as [`Unbuilt`], for deferred restoration. This file
//! reads objects; it never stores a value (see `restore.rs`).

use super::checkpoint::CheckpointObj;
use crate::bindings::tf::convert::variable_of;
use crate::bindings::tf::keras::layers::handle::LayerHandle;
use crate::bindings::tf::keras::metrics::MetricObj;
use crate::bindings::tf::keras::optimizers::OptimizerObj;
use crate::bindings::tf::module::{attributes, is_module};
use crate::bindings::tf::TfError;
use crate::keras::optimizer::Rate;
use crate::lang::{Ctx, PyErr, PyResult, Value};
use crate::ops;

/// The suffix TensorFlow gives a variable's value under its object's path.
pub const VALUE_SUFFIX: &str = "/.ATTRIBUTES/VARIABLE_VALUE";

/// An object whose variables are made later.
pub enum Unbuilt {
    /// A Keras model or layer with `have` of its weights made so far; the rest are made
    /// with paths below `name/`.
    Model {
        prefix: String,
        name: String,
        have: usize,
    },
    /// An optimizer before its slots exist, known by its step counter.
    Optimizer {
        prefix: String,
        iterations: ops::Variable,
    },
}

/// What a walk found.
#[derive(Default)]
pub struct Graph {
    /// Checkpoint key and the variable saved under it, in the order found.
    pub variables: Vec<(String, Value)>,
    pub unbuilt: Vec<Unbuilt>,
}

/// Containers and objects nest only as deep as a program writes them.
const MAX_DEPTH: usize = 64;

/// The error TensorFlow raises for a value `Checkpoint` cannot track.
pub fn not_trackable(key: &str, v: &Value, ctx: &mut dyn Ctx) -> PyErr {
    let shown = ctx.str(v).unwrap_or_else(|_| v.type_name());
    TfError::Value(format!(
        "`Checkpoint` was expecting {key} to be a trackable object (an object derived from `Trackable`), got {shown}. If you believe this object should be trackable (i.e. it is part of the TensorFlow Python API and manages state), please open an issue."
    ))
    .into()
}

/// Whether `Checkpoint(name=v)` accepts `v`.
pub fn is_trackable(v: &Value, ctx: &mut dyn Ctx) -> bool {
    if v.downcast::<MetricObj>().is_some() {
        // Keras 3's metrics are not TensorFlow trackables; TF refuses them.
        return false;
    }
    v.downcast::<CheckpointObj>().is_some()
        || variable_of(v).is_some()
        || v.downcast::<OptimizerObj>().is_some()
        || matches!(v, Value::List(_) | Value::Tuple(_) | Value::Dict(_))
        || LayerHandle::of(v, ctx).is_some()
        || is_module(v, ctx)
}

/// Walks the graph below `root` (a checkpoint).
pub fn walk(root: &Value, ctx: &mut dyn Ctx) -> PyResult<Graph> {
    let mut g = Graph::default();
    let mut seen: Vec<Value> = vec![];
    visit(root, "", ctx, &mut g, &mut seen, 0)?;
    Ok(g)
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

fn visit(
    v: &Value,
    prefix: &str,
    ctx: &mut dyn Ctx,
    g: &mut Graph,
    seen: &mut Vec<Value>,
    depth: usize,
) -> PyResult<()> {
    if depth > MAX_DEPTH || seen.iter().any(|s| s.is(v)) {
        return Ok(());
    }
    if !matches!(v, Value::List(_) | Value::Tuple(_) | Value::Dict(_)) {
        seen.push(v.clone());
    }
    if let Some(c) = v.downcast::<CheckpointObj>() {
        for (name, child) in c.children() {
            visit(&child, &join(prefix, &name), ctx, g, seen, depth + 1)?;
        }
        return Ok(());
    }
    if variable_of(v).is_some() {
        g.variables
            .push((format!("{prefix}{VALUE_SUFFIX}"), v.clone()));
        return Ok(());
    }
    if let Some(o) = v.downcast::<OptimizerObj>() {
        // The attribute brings a compiled optimizer's step count up to its model's first.
        let listed = ctx.getattr(v, "variables")?;
        let variables = ctx.iterate(&listed)?;
        let opt = o.opt.borrow();
        let rate_is_variable = matches!(opt.rate, Rate::Variable(_));
        for (i, var) in variables.into_iter().enumerate() {
            let name = match i {
                0 => "_iterations".to_string(),
                1 if rate_is_variable => "_learning_rate".to_string(),
                _ => format!("_variables/{i}"),
            };
            g.variables
                .push((format!("{}{VALUE_SUFFIX}", join(prefix, &name)), var));
        }
        if !opt.built() {
            g.unbuilt.push(Unbuilt::Optimizer {
                prefix: prefix.to_string(),
                iterations: opt.iterations.clone(),
            });
        }
        return Ok(());
    }
    match v {
        Value::List(_) | Value::Tuple(_) => {
            for (i, item) in v.as_seq().unwrap_or_default().iter().enumerate() {
                visit(item, &join(prefix, &i.to_string()), ctx, g, seen, depth + 1)?;
            }
            return Ok(());
        }
        Value::Dict(d) => {
            let items: Vec<(Value, Value)> = d
                .borrow()
                .items()
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect();
            for (k, item) in items {
                let key = ctx.str(&k)?;
                visit(&item, &join(prefix, &key), ctx, g, seen, depth + 1)?;
            }
            return Ok(());
        }
        _ => {}
    }
    if let Some(h) = LayerHandle::of(v, ctx) {
        let listed = ctx.getattr(v, "weights")?;
        let weights = ctx.iterate(&listed)?;
        for (i, w) in weights.iter().enumerate() {
            let key = format!("{}{VALUE_SUFFIX}", join(prefix, &format!("_weights/{i}")));
            g.variables.push((key, w.clone()));
        }
        if !h.core().built.get() || weights.is_empty() {
            g.unbuilt.push(Unbuilt::Model {
                prefix: prefix.to_string(),
                name: {
                    let name = ctx.getattr(v, "name")?;
                    ctx.str(&name)?
                },
                have: weights.len(),
            });
        }
        return Ok(());
    }
    if is_module(v, ctx) {
        let mut attrs = attributes(v, ctx)?;
        attrs.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, child) in attrs {
            if is_trackable(&child, ctx) {
                visit(&child, &join(prefix, &name), ctx, g, seen, depth + 1)?;
            }
        }
    }
    Ok(())
}
