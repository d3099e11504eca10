//! `model.save('m.keras')` and `load_model` of a subclassed model and of a Sequential
//! holding a user's layer: `config.json` holds the model's entry (the subclass's
//! `get_config()` with its `registered_name` and `build_config`, or the Sequential's
//! layers, a user's layer by its own entry), `model.weights.h5` each object's variables at
//! the path Keras's `_save_state` gives it (the walk in `saving.rs`) and the optimizer's
//! state. Loading makes the objects back through the user's classes (`custom.rs`), builds
//! them, loads each object's variables and restores the compile settings and the
//! optimizer's state. A functional model holding a user's layer is `graph.rs`'s.

use std::path::Path;

use super::super::layers::handle::{layer_weights, LayerHandle};
use super::super::layers::{kerr, Builtin, LayerObj};
use super::super::model::{ModelKind, ModelObj};
use super::super::variable::keras_variable;
use crate::bindings::tf::distribute::active_strategy;
use crate::keras::saving::hdf5::keras3::decode_optimizer;
use crate::keras::{CompileConfig, OptimizerState};
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use serde_json::json;

/// The input features of a built model described by its objects (the batch axis left
/// out): a Sequential's input shape, or the shape a subclass was built for.
fn input_features(m: &ModelObj) -> Option<Vec<usize>> {
    if let Some(s) = m.input_shape.borrow().clone() {
        return Some(s);
    }
    let dims = m.core.build_shape.borrow().clone()?;
    Some(dims.iter().skip(1).map(|d| d.unwrap_or(1)).collect())
}

/// The entry of a Sequential's layer: a built-in layer's own, or a user's layer's.
fn layer_entry(layer: &Value, ctx: &mut dyn Ctx) -> PyResult<serde_json::Value> {
    match layer.downcast::<LayerObj>().map(|l| (&l.builtin, l)) {
        Some((Builtin::Kind(kind), l)) => {
            let input: Vec<usize> = l
                .core
                .build_shape
                .borrow()
                .iter()
                .flatten()
                .skip(1)
                .map(|d| d.unwrap_or(1))
                .collect();
            Ok(crate::keras::saving::builtin_layer_json(
                &l.core.name(),
                kind,
                &input,
            ))
        }
        _ => super::custom::entry(layer, ctx),
    }
}

/// The model's entry of `config.json`, without `compile_config`.
fn model_entry(m: &ModelObj, this: &Value, ctx: &mut dyn Ctx) -> PyResult<serde_json::Value> {
    if m.kind == ModelKind::Subclassed {
        return super::custom::entry(this, ctx);
    }
    let input = m
        .input_shape
        .borrow()
        .clone()
        .ok_or_else(|| PyErr::value_error("Build the model before saving it."))?;
    let input_name = m.input_name.borrow().clone().unwrap_or_default();
    let mut layers = vec![crate::keras::saving::input_layer_json(&input_name, &input)];
    for l in m.layer_values() {
        layers.push(layer_entry(&l, ctx)?);
    }
    Ok(crate::keras::saving::sequential_json(
        &m.name(),
        &input,
        layers,
    ))
}

/// `model.save(path)` of a subclassed model or a Sequential holding a user's layer.
pub fn save(m: &ModelObj, this: &Value, path: &str, ctx: &mut dyn Ctx) -> PyResult<()> {
    crate::keras::saving::check_model_path(Path::new(path)).map_err(kerr)?;
    let mut config = model_entry(m, this, ctx)?;
    let compile = m.compiled.borrow().clone();
    let state: Option<OptimizerState> = match (&compile, input_features(m)) {
        (Some(_), Some(input)) if m.is_built() => {
            Some(super::graph::with_trainer(this, &input, ctx, |t| {
                t.optimizer_state().map_err(kerr)
            })?)
        }
        _ => None,
    };
    if let Some(o) = config.as_object_mut() {
        let cc = compile
            .as_ref()
            .map_or_else(|| json!({}), crate::keras::saving::compile_json);
        o.insert("compile_config".into(), cc);
    }
    let layers = super::tracked_layers(this, ctx)?;
    let optimizer = match (&state, &compile) {
        (Some(s), Some(c)) => Some((s, c.optimizer.learning_rate)),
        _ => None,
    };
    crate::keras::saving::save_objects(Path::new(path), &config, &m.name(), &layers, optimizer)
        .map_err(kerr)
}

/// A Sequential's entry made back: its layers (a user's by its class), in a new
/// `Sequential` built for its input.
fn sequential(
    config: &serde_json::Value,
    custom_objects: Option<&Value>,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let c = config.get("config").cloned().unwrap_or_else(|| json!({}));
    let mut layers = vec![];
    for entry in c
        .get("layers")
        .and_then(serde_json::Value::as_array)
        .cloned()
        .unwrap_or_default()
    {
        if crate::keras::saving::is_custom(&entry) {
            layers.push(super::custom::from_entry(&entry, custom_objects, ctx)?);
            continue;
        }
        if entry.get("class_name").and_then(serde_json::Value::as_str) == Some("InputLayer") {
            let ec = entry.get("config").cloned().unwrap_or_else(|| json!({}));
            let shape: Vec<Value> = ec
                .get("batch_shape")
                .and_then(serde_json::Value::as_array)
                .cloned()
                .unwrap_or_default()
                .iter()
                .skip(1)
                .map(|d| d.as_i64().map_or(Value::None, Value::Int))
                .collect();
            let mut args = Args::new(vec![]).with_kw("shape", Value::tuple(shape));
            if let Some(n) = ec.get("name").and_then(serde_json::Value::as_str) {
                args = args.with_kw("name", Value::str(n));
            }
            layers.push(super::super::layers::input(&args, ctx)?);
            continue;
        }
        let spec = crate::keras::saving::builtin_layer_from(&entry)
            .map_err(kerr)?
            .ok_or_else(|| PyErr::value_error("The saved model config is not valid: a layer."))?;
        layers.push(Value::native(LayerObj::new(
            Builtin::Kind(spec.kind),
            None,
            spec.name,
        )));
    }
    let mut args = Args::new(vec![Value::list(layers)]);
    if let Some(n) = c.get("name").and_then(serde_json::Value::as_str) {
        args = args.with_kw("name", Value::str(n));
    }
    super::super::models::sequential(&args, ctx)
}

/// `load_model` of a `.keras` archive whose model is a user's class or holds one.
pub fn load(
    path: &str,
    config: &serde_json::Value,
    weights: Vec<u8>,
    compile: bool,
    custom_objects: Option<&Value>,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let v = if crate::keras::saving::is_custom(config) {
        super::custom::from_entry(config, custom_objects, ctx)?
    } else {
        sequential(config, custom_objects, ctx).map_err(|e| {
            super::custom::not_deserialized(
                "<class 'keras.src.models.sequential.Sequential'>",
                config,
                e,
                ctx,
            )
        })?
    };
    let mv = match v.downcast::<ModelObj>() {
        Some(_) => v.clone(),
        None => super::super::subclass::model_of(&v, ctx)?.0,
    };
    let m = mv.downcast::<ModelObj>().ok_or_else(not_model)?;
    let bytes = weights.clone();
    super::load_tracked_from(m, &v, ctx, |wanted| {
        crate::keras::saving::hdf5::keras3::decode_layers(Path::new(path), bytes, wanted)
    })?;
    let cc = config
        .get("compile_config")
        .filter(|c| c.as_object().is_some_and(|o| !o.is_empty()));
    let Some(cc) = cc.filter(|_| compile) else {
        return Ok(v);
    };
    let cfg: CompileConfig = crate::keras::saving::compile_from_json(cc).map_err(kerr)?;
    let slots = cfg.optimizer.step(cfg.optimizer.learning_rate, 1).slots();
    let class = cfg.optimizer.class_name();
    *m.op_training.borrow_mut() = None;
    *m.compiled_under.borrow_mut() = active_strategy(ctx);
    *m.compiled.borrow_mut() = Some(cfg);
    let input = input_features(m).unwrap_or_default();
    // The optimizer's variables follow `trainable_variables`, in the model's order.
    let handle = LayerHandle::of(&v, ctx).ok_or_else(not_model)?;
    let shapes: Vec<Vec<usize>> = layer_weights(&handle, ctx, Some(true))?
        .iter()
        .filter_map(|w| Some(keras_variable(w)?.primary()?.shape().to_vec()))
        .collect();
    super::graph::with_trainer(&v, &input, ctx, |t| {
        let state =
            decode_optimizer(Path::new(path), weights, &shapes, slots, class).map_err(kerr)?;
        if let Some(state) = state {
            t.set_optimizer_state(&state).map_err(kerr)?;
        }
        Ok(())
    })?;
    Ok(v)
}

fn not_model() -> PyErr {
    PyErr::type_error("load_model: the archive's model is not a Keras model")
}
