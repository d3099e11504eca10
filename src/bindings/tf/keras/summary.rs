//! `model.summary()`: the facts of Keras's table (layer names, classes, output shapes,
//! parameter counts, and the totals split into trainable and non-trainable) read from the
//! model's layers and their variables; the display part formats them as Keras does. A
//! layer that is not built shows `?` and `0 (unbuilt)`; in a subclassed model a built-in
//! layer's output shape is computed from the shape it was built for, a user's layer shows
//! `?`, as Keras shows them. A functional graph's rows show the shapes of its symbolic
//! tensors and the "Connected to" column.

use super::layers::handle::{layer_weights, HandleKind, LayerHandle};
use super::layers::layer::{dims_text, LayerObj};
use super::model::{model_layers, ModelKind, ModelObj};
use super::variable::keras_variable;
use crate::display::summary::{ParamCount, Summary, SummaryRow};
use crate::lang::{Ctx, PyErr, PyResult, Value};

fn count(vars: &[Value]) -> u64 {
    vars.iter()
        .filter_map(keras_variable)
        .map(|v| v.size() as u64)
        .sum()
}

/// One layer's row.
fn row(layer: &Value, subclassed: bool, ctx: &mut dyn Ctx) -> PyResult<SummaryRow> {
    let h = LayerHandle::of(layer, ctx)
        .ok_or_else(|| PyErr::runtime_error("a model layer has no state"))?;
    let built = super::layers::call::is_built(&h, ctx);
    let type_name = match layer.downcast::<LayerObj>() {
        Some(l) => l.class_name().to_string(),
        None => layer.type_name(),
    };
    let output = match (
        layer.downcast::<LayerObj>(),
        h.core.build_shape.borrow().clone(),
    ) {
        // Keras computes a built-in layer's output from the shape it was built for.
        (Some(l), Some(mut input)) if subclassed || l.kind().is_some() => {
            // A Sequential built by calling its layers on one example shows the batch axis
            // as Keras does: unknown.
            if let (false, Some(b)) = (subclassed, input.first_mut()) {
                *b = None;
            }
            super::layers::call::builtin_out_dims(l, &input)
                .ok()
                .map(|d| dims_text(&d))
        }
        _ if subclassed => None,
        // A Lambda in a Sequential ran on one example when the model was built; Keras
        // shows the batch axis as unknown.
        _ if matches!(h.kind, HandleKind::Lambda) => {
            h.core.output_shape.borrow().as_ref().map(|d| {
                let mut d = d.clone();
                if let Some(b) = d.first_mut() {
                    *b = None;
                }
                dims_text(&d)
            })
        }
        _ => h.core.output_shape.borrow().as_ref().map(|d| dims_text(d)),
    };
    let params = if built {
        Some(count(&layer_weights(&h, ctx, None)?))
    } else {
        None
    };
    Ok(SummaryRow {
        name: h.core.name(),
        type_name,
        output_shape: output.unwrap_or_else(|| "?".into()),
        params,
        connected_to: None,
    })
}

/// The summary of a model, built or not.
pub fn summary_of(this: &Value, m: &ModelObj, ctx: &mut dyn Ctx) -> PyResult<Summary> {
    let h =
        LayerHandle::of(this, ctx).ok_or_else(|| PyErr::runtime_error("the model has no state"))?;
    let subclassed = m.kind == ModelKind::Subclassed;
    let mut rows = vec![];
    let graph = m.running_graph();
    for l in model_layers(m, &h, ctx)? {
        let mut r = row(&l, subclassed, ctx)?;
        // A graph's layers show the shapes of their symbolic calls and what they read.
        if let Some(g) = &graph {
            if let Some(d) = g.output_dims(&l) {
                r.output_shape = dims_text(&d);
            }
            r.connected_to = Some(g.connected_to(&l, ctx));
        }
        rows.push(r);
    }
    let trainable = count(&layer_weights(&h, ctx, Some(true))?);
    let non_trainable = count(&layer_weights(&h, ctx, Some(false))?);
    Ok(Summary {
        model_name: m.name(),
        rows,
        trainable: ParamCount::f32(trainable),
        non_trainable: ParamCount::f32(non_trainable),
        optimizer: None,
    })
}
