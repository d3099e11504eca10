//! What a subclass of `Layer` or `Model` tracks, as Keras's attribute tracking does: every
//! attribute assigned on the instance (private ones too), in assignment order, with lists,
//! tuples and dicts looked into, yields the layers (`self.dense = Dense(4)`,
//! `self.blocks = [Block(), Block()]`) and the Keras variables (`self.w =
//! self.add_weight(...)`) the instance holds. Nothing is registered at assignment time: the
//! instance's attributes are read when a list is asked for, so reassigning or deleting an
//! attribute changes what is tracked, as it does in Keras.

use super::layers::handle::{LayerHandle, CORE_ATTR};
use super::variable::keras_variable;
use crate::lang::{Ctx, PyResult, Value};

/// The layers and variables an instance holds in its attributes, each once.
#[derive(Default)]
pub struct Tracked {
    pub layers: Vec<Value>,
    pub variables: Vec<Value>,
}

/// Containers nest only as deep as a program writes them; deeper (or cyclic) structures
/// stop here.
const MAX_DEPTH: usize = 32;

/// The attributes of an instance, in assignment order.
pub fn attributes(this: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<(String, Value)>> {
    let dict = ctx.getattr(this, "__dict__")?;
    let Value::Dict(d) = dict else {
        return Ok(vec![]);
    };
    let items = d
        .borrow()
        .items()
        .filter_map(|(k, v)| match k {
            Value::Str(s) => Some((s.to_string(), v.clone())),
            _ => None,
        })
        .collect();
    Ok(items)
}

/// Whether a value is a native layer or model (no Python runs to tell).
pub fn is_layer_like(v: &Value) -> bool {
    v.downcast::<super::layers::LayerObj>().is_some()
        || v.downcast::<super::layers::lambda::LambdaLayer>().is_some()
        || v.downcast::<super::model::ModelObj>().is_some()
}

/// What `this` tracks.
pub fn tracked(this: &Value, ctx: &mut dyn Ctx) -> PyResult<Tracked> {
    let mut out = Tracked::default();
    for (name, v) in attributes(this, ctx)? {
        if name == CORE_ATTR {
            continue;
        }
        visit(&v, ctx, &mut out, 0);
    }
    Ok(out)
}

fn visit(v: &Value, ctx: &mut dyn Ctx, out: &mut Tracked, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    if keras_variable(v).is_some() {
        if !out.variables.iter().any(|x| x.is(v)) {
            out.variables.push(v.clone());
        }
        return;
    }
    match v {
        Value::List(_) | Value::Tuple(_) => {
            for item in v.as_seq().unwrap_or_default() {
                visit(&item, ctx, out, depth + 1);
            }
        }
        Value::Dict(d) => {
            let values: Vec<Value> = d.borrow().items().map(|(_, x)| x.clone()).collect();
            for item in values {
                visit(&item, ctx, out, depth + 1);
            }
        }
        Value::Native(_) | Value::Obj(_)
            if LayerHandle::of(v, ctx).is_some() && !out.layers.iter().any(|x| x.is(v)) =>
        {
            out.layers.push(v.clone());
        }
        _ => {}
    }
}
