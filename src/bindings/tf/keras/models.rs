//! Making models: `Sequential([...])` (nested models contribute their layers), the
//! functional `Model(inputs, outputs)` (a chain, or any graph of layer calls), building at once when the input shape
//! is known, and the engine strategy a mirrored model trains on. Registered in `tf.keras`
//! and `tf.keras.models`.

use std::rc::Rc;
use std::sync::Arc;

use super::super::distribute::{active_strategy, Strategy};
use super::super::given;
use super::layers::base::unique_name;
use super::layers::graph::Graph;
use super::layers::handle::LayerHandle;
use super::layers::{KerasTensor, LayerObj, Source};
use super::model::{ModelKind, ModelObj};
use crate::cell::{Output, StreamName};
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};

/// The engine strategy behind a strategy object, made on first use: one replica thread per
/// device, each making its own `CpuDevice` or CUDA device, and the all-reduce that fits the
/// devices (CPU ring, NCCL, the one-GPU reduce kernel, or host staging, whose one-line note
/// is shown on the cell's stderr as TensorFlow shows its warnings).
pub fn strategy_core(
    s: &Strategy,
    ctx: &mut dyn Ctx,
) -> PyResult<Arc<crate::distribute::MirroredStrategy>> {
    if let Some(c) = s.core.borrow().as_ref() {
        return Ok(c.clone());
    }
    let core = s.engine_core().map_err(|e| strategy_error(e, s))?;
    if let Some(note) = core.all_reduce_note() {
        ctx.emit(Output::Stream {
            name: StreamName::Stderr,
            text: format!("{note}\n"),
        });
    }
    let core = Arc::new(core);
    *s.core.borrow_mut() = Some(core.clone());
    Ok(core)
}

/// A failure to start the replicas as a Python error: a bad device list is a `ValueError`,
/// a device that would not open (no driver, out of memory) a `RuntimeError`, both with a hint.
fn strategy_error(e: crate::distribute::DistributeError, s: &Strategy) -> PyErr {
    use crate::distribute::DistributeError as D;
    let devices = s.worker_devices().join(", ");
    match e {
        D::Cluster(text) => PyErr::runtime_error(text),
        D::InvalidInput(text) => PyErr::value_error(format!(
            "{text}\nHint: tf.config.list_logical_devices() lists the devices a strategy can use."
        )),
        other => PyErr::runtime_error(format!(
            "could not start the replicas on {devices}: {other}\nHint: \
             tf.config.list_physical_devices('GPU') lists the GPUs this kernel can open; check \
             `nvidia-smi`, or use the CPU with tf.distribute.MirroredStrategy(['/cpu:0'])."
        )),
    }
}

pub(crate) fn strip_batch(v: &Value) -> Value {
    match v.as_seq() {
        Some(items) if items.first().is_some_and(|x| x.is_none()) => {
            Value::tuple(items[1..].to_vec())
        }
        _ => v.clone(),
    }
}

/// Makes the model value and builds it at once when its input shape is known, as Keras
/// builds a model whose first layer names its input shape.
fn finish(m: ModelObj, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let shape = m.known_input_shape();
    let v = Value::native(m);
    if let (Some(shape), Some(m)) = (shape, v.downcast::<ModelObj>()) {
        m.build(&v, &shape, ctx)?;
    }
    Ok(v)
}

fn name_or(given_name: Option<&Value>, base: &str, ctx: &mut dyn Ctx) -> PyResult<String> {
    match given_name {
        Some(v) => Ok(v.as_str()?.to_string()),
        None => Ok(unique_name(ctx, base)),
    }
}

pub(crate) fn sequential(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("Sequential", &["layers", "trainable", "name"], 0)?;
    let layers = match given(&s[0]) {
        Some(v) => v
            .as_seq()
            .ok_or_else(|| PyErr::type_error("Sequential expects a list of layers"))?,
        None => vec![],
    };
    let mut shape = None;
    let mut input_name = None;
    let mut flat = vec![];
    for l in layers {
        if let Some(m) = l.downcast::<ModelObj>() {
            // A nested model contributes its layers, as a chain.
            shape = shape.or_else(|| m.known_input_shape());
            flat.extend(m.layers.borrow().iter().cloned());
            continue;
        }
        // `keras.Input(shape=...)` may open the list, as Keras 3 recommends.
        if let Some(t) = l.downcast::<KerasTensor>() {
            if let (true, Source::Input(layer)) = (flat.is_empty(), &t.source) {
                shape = Some(t.features());
                input_name = LayerHandle::of(layer, ctx).map(|h| h.core.name());
                continue;
            }
        }
        match l.downcast::<LayerObj>() {
            Some(x) if x.kind().is_none() => {
                shape = x.input_shape.clone();
                input_name = Some(x.core.name());
            }
            Some(_) => flat.push(l),
            None if LayerHandle::of(&l, ctx).is_some() => flat.push(l),
            None => return Err(PyErr::type_error(format!("Only instances of `keras.Layer` can be added to a Sequential model. Received: {} (of type {})", ctx.repr(&l)?, l.type_name()))),
        }
    }
    let name = name_or(given(&s[2]), "sequential", ctx)?;
    let scope = active_strategy(ctx);
    let m = ModelObj::new(ModelKind::Sequential, name, flat, shape, scope);
    *m.input_name.borrow_mut() = input_name;
    if let Some(t) = given(&s[1]) {
        m.core.trainable.set(t.as_bool_strict()?);
    }
    finish(m, ctx)
}

pub(crate) fn functional(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("Model", &["inputs", "outputs", "name"], 2)?;
    let none = Value::None;
    let graph = Graph::new(
        s[0].as_ref().unwrap_or(&none),
        s[1].as_ref().unwrap_or(&none),
    )?;
    let name = name_or(given(&s[2]), "functional", ctx)?;
    let first = graph
        .inputs
        .first()
        .and_then(|i| i.downcast::<KerasTensor>())
        .ok_or_else(|| PyErr::type_error("Model(inputs, outputs) expects keras.Input(...)"))?;
    let shape = first.features();
    let input_name = match &first.source {
        Source::Input(l) => LayerHandle::of(l, ctx).map(|h| h.core.name()),
        Source::Call(_) => None,
    };
    // A chain from one input to one output runs on the compiled engine, as a Sequential
    // does; any other graph runs its layer calls in order.
    let chain = match (graph.inputs.len(), graph.outputs.as_slice()) {
        (1, [out]) => out.downcast::<KerasTensor>().and_then(|t| t.chain()),
        _ => None,
    };
    let runs_graph = chain.is_none();
    let layers = chain.unwrap_or_else(|| graph.layers());
    let scope = active_strategy(ctx);
    let m = ModelObj::new(ModelKind::Functional, name, layers, Some(shape), scope);
    *m.input_name.borrow_mut() = input_name;
    *m.graph.borrow_mut() = Some(Rc::new(graph));
    m.runs_graph.set(runs_graph);
    finish(m, ctx)
}

/// Registers `Sequential`, `Model` and `models` in `tf.keras`.
pub fn register(keras: &NativeModule) {
    use crate::lang::NativeClass;
    let seq = NativeClass::new(
        "Sequential",
        "keras.src.models.sequential",
        "Sequential(layers=None, name=None)",
    )
    .base("Model")
    .constructor(sequential)
    .into_value();
    let model = super::subclass::model_class(functional);
    let models = NativeModule::new("keras.models", "Keras models.")
        .with("Sequential", seq.clone())
        .with("Model", model.clone())
        .with(
            "load_model",
            super::super::func(
                "load_model",
                "load_model(filepath, custom_objects=None, compile=True, safe_mode=True)",
                super::saving::load_model,
            ),
        );
    keras.set("Sequential", seq);
    keras.set("Model", model);
    keras.set("models", models.into_value());
}
