//! `tf.keras.Model` as a base class: `class M(tf.keras.Model)` with layers made in
//! `__init__` and a Python `call`. The instance holds a model state like any Keras model
//! and answers Keras's model attributes; how such a model trains (its `call` run under a
//! gradient tape on the op library) is op_trainer.rs's.

use super::layers::base::{check_kwargs, ensure_core, init_attrs, name_arg, with_layer_members};
use super::layers::handle::LayerHandle;
use super::model::{model_attr, ModelKind, ModelObj};
use crate::lang::{Args, Ctx, NativeClass, PyErr, PyResult, Value};

/// The attributes a subclass instance of `Model` inherits (besides every layer's).
const MODEL_PROPERTIES: &[&str] = &[
    "layers",
    "get_layer",
    "stop_training",
    "distribute_strategy",
    "optimizer",
    "compile",
    "output_shape",
    "predict",
    "fit",
    "evaluate",
    "train_on_batch",
    "test_on_batch",
    "predict_on_batch",
    "summary",
    "loss",
    "save",
    "save_weights",
    "load_weights",
];

/// The model state of a subclass instance.
pub fn model_of(this: &Value, ctx: &mut dyn Ctx) -> PyResult<(Value, LayerHandle)> {
    let h = ensure_core(this, ctx)?;
    match h.model_value() {
        Some(mv) => Ok((mv.clone(), h)),
        None => Err(PyErr::type_error(format!(
            "'{}' is a layer, not a model",
            this.type_name()
        ))),
    }
}

/// `Model.__init__(self, name=None, trainable=True, dtype=None)` for a subclass.
fn model_init(this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if args.kw.iter().any(|(k, _)| k == "inputs" || k == "outputs") || !args.pos.is_empty() {
        return Err(PyErr::not_implemented(
            "a subclass of Model built from inputs and outputs is not supported here; define \
             `call` instead, or use keras.Model(inputs, outputs)",
        ));
    }
    check_kwargs(&this.type_name(), &args.kw, &[])?;
    let name = name_arg(this, &args.kw, ctx)?;
    let scope = super::super::distribute::active_strategy(ctx);
    let m = ModelObj::new(ModelKind::Subclassed, name.clone(), vec![], None, scope);
    if let Some((_, v)) = args.kw.iter().find(|(k, _)| k == "trainable") {
        m.core.trainable.set(v.as_bool_strict()?);
    }
    init_attrs(this, Value::native(m), &name, ctx)?;
    ctx.setattr(this, "stop_training", Value::Bool(false))?;
    Ok(Value::None)
}

fn model_property(this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let (mv, _) = model_of(this, ctx)?;
    let Some(m) = mv.downcast::<ModelObj>() else {
        return Err(PyErr::runtime_error("the model has no state"));
    };
    match model_attr(m, &mv, this, name, ctx)? {
        Some(v) => Ok(v),
        None => Err(PyErr::attribute_error(format!(
            "'{}' object has no attribute '{name}'",
            this.type_name()
        ))),
    }
}

/// `tf.keras.Model`: `Model(inputs, outputs)` builds a functional model; a subclass gets
/// Keras's model behaviour.
pub fn model_class(functional: fn(&Args, &mut dyn Ctx) -> PyResult<Value>) -> Value {
    let mut class = with_layer_members(
        NativeClass::new(
            "Model",
            "keras.src.models.model",
            "Model(inputs, outputs, name=None)",
        )
        .base("Layer")
        .base("Operation")
        .constructor(functional),
    )
    .method("__init__", model_init)
    .method("from_config", super::saving::custom::model_from_config);
    for &p in MODEL_PROPERTIES {
        class = class.property(p, move |this, _, ctx| model_property(this, p, ctx));
    }
    class.into_value()
}
