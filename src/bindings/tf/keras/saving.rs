//! `tf.keras.models.load_model` / `tf.keras.saving.load_model`: a `.keras` archive (or a
//! legacy `.h5` file) back into a model, built under the active strategy's scope and compiled with its optimizer state
//! restored. The format and its file checks live in `keras::saving`; this file only
//! converts between the archive's contents and the model binding.

use std::path::Path;

use super::layers::{kerr, Builtin, LayerObj};
use super::model::{ModelKind, ModelObj};
use crate::bindings::tf::distribute::active_strategy;
use crate::bindings::tf::{func, given};
use crate::keras::Trainer;
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};

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
