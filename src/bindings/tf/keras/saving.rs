//! `tf.keras.models.load_model` / `tf.keras.saving.load_model`: a `.keras` archive (or a
//! legacy `.h5` file) back into a model, built under the active strategy's scope and compiled with its optimizer state
//! restored. The format and its file checks live in `keras::saving`; this file only
//! converts between the archive's contents and the model binding.

use std::path::Path;

use super::layers::handle::{layer_weights, LayerHandle};
use super::layers::{kerr, Builtin, LayerObj};
use super::model::{ModelKind, ModelObj};
use super::variable::keras_variable;
use crate::bindings::tf::distribute::active_strategy;
use crate::bindings::tf::{func, given};
use crate::keras::saving::hdf5::keras3::LayerWeights;
use crate::keras::HostArray;
use crate::keras::Trainer;
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};
use crate::tensor::NdArray;

/// `load_model(filepath, custom_objects=None, compile=True, safe_mode=True)`.
pub fn load_model(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "load_model",
        &["filepath", "custom_objects", "compile", "safe_mode"],
        1,
    )?;
    let path = s[0].as_ref().unwrap_or(&Value::None).as_str()?.to_string();
    let compile = match given(&s[2]) {
        Some(v) => v.as_bool_strict()?,
        None => true,
    };
    let saved = crate::keras::load_model(Path::new(&path)).map_err(kerr)?;
    if let Some(note) = &saved.note {
        super::schedules::warn(ctx, note);
    }
    let layers: Vec<Value> = saved
        .config
        .layers
        .iter()
        .map(|spec| {
            Value::native(LayerObj::new(
                Builtin::Kind(spec.kind.clone()),
                None,
                spec.name.clone(),
            ))
        })
        .collect();
    let scope = active_strategy(ctx);
    let kind = if saved.config.functional {
        ModelKind::Functional
    } else {
        ModelKind::Sequential
    };
    let m = ModelObj::new(
        kind,
        saved.config.name.clone(),
        layers,
        Some(saved.config.input_shape.clone()),
        scope.clone(),
    );
    *m.input_name.borrow_mut() = Some(saved.config.input_name.clone());
    if compile {
        *m.compiled.borrow_mut() = saved.compile.clone();
        *m.compiled_under.borrow_mut() = scope;
    }
    let v = Value::native(m);
    let model = v
        .downcast::<ModelObj>()
        .ok_or_else(|| PyErr::runtime_error("load_model: the model was not made"))?;
    model.build(&v, &saved.config.input_shape, ctx)?;
    let restore = |t: &mut dyn Trainer| {
        t.set_weights(&saved.weights).map_err(kerr)?;
        if let (true, Some(opt)) = (compile, &saved.optimizer) {
            t.set_optimizer_state(opt).map_err(kerr)?;
        }
        Ok(())
    };
    if model.has_engine() {
        model.with_engine(|e| restore(e.trainer()))?;
        model.pull_engine()?;
    } else {
        // Normalizations and layers without variables run on the op library's trainer.
        super::fit::with_op_trainer(model, &v, &v, ctx, restore)?;
    }
    Ok(v)
}

/// `tf.keras.saving`: the functions Keras 3 keeps there.
pub fn saving_module() -> Value {
    NativeModule::new("keras.saving", "Saving and loading Keras models.")
        .with(
            "load_model",
            func(
                "load_model",
                "load_model(filepath, custom_objects=None, compile=True, safe_mode=True)",
                load_model,
            ),
        )
        .into_value()
}

/// Each layer of a functional graph with its key in Keras 3's weights layout (the snake-case
/// class name, numbered within the model, `model.layers` order, input layers included, as
/// Keras's `_save_container_state` keys them), its name and its variables.
fn graph_layers(
    g: &super::layers::graph::Graph,
    ctx: &mut dyn Ctx,
) -> PyResult<Vec<(String, String, Vec<Value>)>> {
    let layers = g.layers();
    let classes: Vec<String> = layers.iter().map(Value::type_name).collect();
    let keys = crate::keras::saving::naming::container_names(classes.iter().map(String::as_str));
    let mut out = Vec::with_capacity(layers.len());
    for (layer, key) in layers.iter().zip(keys) {
        let name = ctx.getattr(layer, "name")?;
        let name = ctx.str(&name)?;
        let vars = match LayerHandle::of(layer, ctx) {
            Some(h) => layer_weights(&h, ctx, None)?,
            None => vec![],
        };
        out.push((key, name, vars));
    }
    Ok(out)
}

/// `save_weights` of a functional graph (not a chain) in Keras 3's layout.
pub fn save_graph_weights(
    m: &ModelObj,
    g: &super::layers::graph::Graph,
    path: &str,
    ctx: &mut dyn Ctx,
) -> PyResult<()> {
    let mut layers = vec![];
    for (key, name, vars) in graph_layers(g, ctx)? {
        let mut held = Vec::with_capacity(vars.len());
        for v in &vars {
            let a = keras_variable(v)
                .and_then(|k| k.primary())
                .map(|c| c.snapshot())
                .ok_or_else(|| PyErr::runtime_error("a model variable has no value"))?;
            let (shape, data) = a.to_f32_vec();
            held.push(HostArray::new(shape, data));
        }
        layers.push(LayerWeights {
            key,
            name,
            vars: held,
        });
    }
    crate::keras::saving::save_layer_weights(Path::new(path), &m.name(), &layers).map_err(kerr)
}

/// `load_weights` of a functional graph (not a chain) from Keras 3's layout: every
/// variable of every layer, matched by the layer's key, as Keras matches them.
pub fn load_graph_weights(
    g: &super::layers::graph::Graph,
    path: &str,
    ctx: &mut dyn Ctx,
) -> PyResult<()> {
    let layers = graph_layers(g, ctx)?;
    let keys: Vec<(String, Vec<Vec<usize>>)> = layers
        .iter()
        .map(|(key, _, vars)| {
            let shapes = vars
                .iter()
                .filter_map(keras_variable)
                .filter_map(|k| k.primary().map(|c| c.shape().to_vec()))
                .collect();
            (key.clone(), shapes)
        })
        .collect();
    let read = crate::keras::saving::load_layer_weights(Path::new(path), &keys).map_err(kerr)?;
    for ((_, _, vars), values) in layers.iter().zip(read) {
        for (v, w) in vars.iter().zip(values) {
            if let Some(k) = keras_variable(v) {
                let a = NdArray::from_f32(&w.shape, w.data)
                    .map_err(super::super::convert::tensor_err)?;
                k.store(&a)?;
            }
        }
    }
    Ok(())
}
