//! `model.summary()`: the facts of the table (layer names, classes, output shapes, parameter
//! counts) read from the engine's plan; the display part formats them as Keras does.

use super::layers::{kerr, LayerObj};
use super::model::ModelObj;
use crate::display::summary::{ParamCount, Summary, SummaryRow};
use crate::lang::PyResult;

fn shape_text(dims: &[usize]) -> String {
    let mut parts = vec!["None".to_string()];
    parts.extend(dims.iter().map(|d| d.to_string()));
    if parts.len() == 1 {
        "(None,)".into()
    } else {
        format!("({})", parts.join(", "))
    }
}

/// The summary of a model, built or not (unbuilt layers show `?` and no count).
pub fn summary_of(m: &ModelObj) -> PyResult<Summary> {
    let cfg = m.config.borrow().clone();
    let Some(cfg) = cfg else {
        let rows = m
            .layers
            .borrow()
            .iter()
            .filter_map(|l| l.downcast::<LayerObj>())
            .filter(|l| l.kind.is_some())
            .map(|l| SummaryRow {
                name: l
                    .name
                    .borrow()
                    .clone()
                    .unwrap_or_else(|| l.class_name().to_lowercase()),
                type_name: l.class_name().into(),
                output_shape: "?".into(),
                params: None,
                connected_to: None,
            })
            .collect();
        return Ok(Summary {
            model_name: "sequential".into(),
            rows,
            trainable: ParamCount::default(),
            non_trainable: ParamCount::default(),
            optimizer: None,
        });
    };
    let plan = cfg.plan().map_err(kerr)?;
    let rows = cfg
        .layers
        .iter()
        .enumerate()
        .map(|(i, l)| SummaryRow {
            name: l.name.clone(),
            type_name: l.kind.class_name().into(),
            output_shape: shape_text(plan.out_shapes.get(i).map(|v| v.as_slice()).unwrap_or(&[])),
            params: Some(plan.layer_params(i) as u64),
            connected_to: None,
        })
        .collect();
    Ok(Summary {
        model_name: cfg.name.clone(),
        rows,
        trainable: ParamCount::f32(plan.param_count() as u64),
        non_trainable: ParamCount::default(),
        optimizer: None,
    })
}
