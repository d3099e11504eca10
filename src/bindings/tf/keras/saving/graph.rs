//! `model.save('m.keras')` / `model.save('m.h5')` and `load_model` of a functional model
//! that is not a chain (several inputs or outputs, merge layers, skip connections, a shared layer). Saving
//! describes the model's graph by layer names (`keras::saving::graph`), its objects'
//! variables at the paths Keras's `_save_state` gives them (the walk in `saving.rs`) and
//! the optimizer's state; loading makes the layers from their configs, calls them again on
//! new `keras.Input`s in the order the file's nodes allow (as Keras's `functional_from_config`
//! does), makes the `Model`, loads each object's variables and restores the compile
//! settings and the optimizer's state. The file format itself lives in `keras::saving`.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use super::super::layers::call::call_layer;
use super::super::layers::graph::Graph;
use super::super::layers::handle::{layer_weights, LayerHandle};
use super::super::layers::symbolic::{KerasTensor, Source};
use super::super::layers::{kerr, Builtin, LayerObj};
use super::super::model::ModelObj;
use super::super::op_trainer::{OpModel, OpTrainer, SharedCtx};
use super::super::variable::keras_variable;
use crate::bindings::tf::distribute::active_strategy;
use crate::keras::saving::graph::{GraphCall, GraphConfig, GraphLayer, GraphNode, TensorRef};
use crate::keras::saving::hdf5::keras3::decode_optimizer;
use crate::keras::saving::hdf5::legacy::NamedWeights;
use crate::keras::saving::SavedGraph;
use crate::keras::{CompileConfig, HostArray, OptimizerState, Trainer};
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use crate::tensor::NdArray;

/// The name of a layer value.
fn name_of(layer: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
    LayerHandle::of(layer, ctx)
        .map(|h| h.core.name())
        .ok_or_else(|| PyErr::type_error("a functional model holds a value that is not a layer"))
}

/// Where each slot of the graph comes from, as `(layer, node)` in the file: an input's
/// layer (node 0), or the call that makes it, its node numbered among the layer's calls in
/// this model (Keras renumbers a shared layer's nodes the same way).
fn origins(g: &Graph, ctx: &mut dyn Ctx) -> PyResult<Vec<(String, usize)>> {
    let mut out = vec![(String::new(), 0); g.tensors.len()];
    for (slot, t) in g.inputs.iter().enumerate() {
        if let Some(Source::Input(l)) = t.downcast::<KerasTensor>().map(|k| &k.source) {
            out[slot] = (name_of(l, ctx)?, 0);
        }
    }
    for s in &g.steps {
        let index = |slot: usize| match g.tensors[slot].downcast::<KerasTensor>() {
            Some(KerasTensor {
                source: Source::Call(n),
                ..
            }) => n.index,
            _ => 0,
        };
        let mine = index(s.output);
        let node = g
            .steps
            .iter()
            .filter(|o| o.layer.is(&s.layer) && index(o.output) < mine)
            .count();
        out[s.output] = (name_of(&s.layer, ctx)?, node);
    }
    Ok(out)
}

/// The graph of model `m` by layer names, for `config.json`; a layer that is not one of
/// Keras's built-in layers cannot be described yet and is refused by name.
pub fn describe(m: &ModelObj, g: &Graph, ctx: &mut dyn Ctx) -> PyResult<GraphConfig> {
    let origin = origins(g, ctx)?;
    let tref = |slot: usize| -> TensorRef {
        let (layer, node) = origin[slot].clone();
        let shape = g.tensors[slot]
            .downcast::<KerasTensor>()
            .map(|k| k.shape.clone())
            .unwrap_or_default();
        TensorRef {
            layer,
            node,
            index: 0,
            shape,
        }
    };
    let mut layers = vec![];
    for l in g.layers() {
        let name = name_of(&l, ctx)?;
        let obj = l.downcast::<LayerObj>();
        let kind = match obj.map(|o| &o.builtin) {
            Some(Builtin::Kind(k)) => GraphNode::Builtin(k.clone()),
            Some(Builtin::Input) => GraphNode::Input,
            None => GraphNode::Custom(super::custom::entry(&l, ctx)?),
        };
        let batch_shape = match kind {
            GraphNode::Input => g.output_dims(&l).unwrap_or_default(),
            _ => vec![],
        };
        let mut calls: Vec<(usize, GraphCall)> = g
            .steps
            .iter()
            .filter(|s| s.layer.is(&l))
            .map(|s| {
                let call = GraphCall {
                    inputs: s.inputs.iter().map(|&i| tref(i)).collect(),
                    list: s.list,
                };
                (origin[s.output].1, call)
            })
            .collect();
        calls.sort_by_key(|(node, _)| *node);
        layers.push(GraphLayer {
            name,
            kind,
            batch_shape,
            calls: calls.into_iter().map(|(_, c)| c).collect(),
        });
    }
    let triple = |slot: usize| {
        let (l, n) = origin[slot].clone();
        (l, n, 0)
    };
    Ok(GraphConfig {
        name: m.name(),
        layers,
        inputs: (0..g.inputs.len()).map(triple).collect(),
        outputs: g.output_slots.iter().map(|&s| triple(s)).collect(),
    })
}

/// Runs `f` with the op library's trainer of a graph model (its optimizer's state lives
/// with the model between `fit` calls).
pub(super) fn with_trainer<R>(
    this: &Value,
    input: &[usize],
    ctx: &mut dyn Ctx,
    f: impl FnOnce(&mut dyn Trainer) -> PyResult<R>,
) -> PyResult<R> {
    let model = OpModel::new(this, this, ctx)?;
    let shared: SharedCtx<'_> = Rc::new(RefCell::new(&mut *ctx));
    let mut t = OpTrainer::new(shared, model, input)?;
    let r = f(&mut t);
    match t.err.take() {
        Some(e) => Err(e),
        None => r,
    }
}

/// `model.save(path)` of a graph model.
pub fn save(m: &ModelObj, this: &Value, path: &str, ctx: &mut dyn Ctx) -> PyResult<()> {
    let g = m
        .graph
        .borrow()
        .clone()
        .ok_or_else(|| PyErr::runtime_error("the model has no graph"))?;
    crate::keras::saving::check_model_path(Path::new(path)).map_err(kerr)?;
    let config = describe(m, &g, ctx)?;
    let compile = m.compiled.borrow().clone();
    let input = g.input_features().into_iter().next().unwrap_or_default();
    let state: Option<OptimizerState> = match &compile {
        Some(_) if m.is_built() => Some(with_trainer(this, &input, ctx, |t| {
            t.optimizer_state().map_err(kerr)
        })?),
        _ => None,
    };
    if !path.ends_with(".keras") {
        let layers = named_weights(&g, ctx)?;
        return crate::keras::saving::save_graph_legacy(
            Path::new(path),
            &config,
            compile.as_ref(),
            &layers,
            state.as_ref(),
        )
        .map_err(kerr);
    }
    let layers = super::tracked_layers(this, ctx)?;
    let optimizer = match (&state, &compile) {
        (Some(s), Some(c)) => Some((s, c.optimizer.learning_rate)),
        _ => None,
    };
    crate::keras::saving::save_graph_model(
        Path::new(path),
        &config,
        compile.as_ref(),
        &layers,
        optimizer,
    )
    .map_err(kerr)
}

/// A layer's own variables, trainable ones first (as Keras lists a layer's weights).
fn own_vars(layer: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<Value>> {
    let Some(h) = LayerHandle::of(layer, ctx) else {
        return Ok(vec![]);
    };
    let (trainable, frozen): (Vec<Value>, Vec<Value>) = h
        .own_weights(ctx)?
        .into_iter()
        .partition(|w| keras_variable(w).is_some_and(|k| k.trainable()));
    Ok(trainable.into_iter().chain(frozen).collect())
}

/// Each layer of the graph (in `model.layers` order) with its variables by name, for the
/// legacy format.
fn named_weights(g: &Graph, ctx: &mut dyn Ctx) -> PyResult<Vec<NamedWeights>> {
    let mut out = vec![];
    for l in g.layers() {
        let mut vars = vec![];
        for v in own_vars(&l, ctx)? {
            let k = keras_variable(&v)
                .ok_or_else(|| PyErr::runtime_error("a layer weight is not a variable"))?;
            let a = k
                .primary()
                .map(|c| c.snapshot())
                .ok_or_else(|| PyErr::runtime_error("a model variable has no value"))?;
            let (shape, data) = a.to_f32_vec();
            let name = ctx.getattr(&v, "name")?;
            vars.push((ctx.str(&name)?, HostArray::new(shape, data), k.trainable()));
        }
        out.push(NamedWeights {
            layer: name_of(&l, ctx)?,
            vars,
        });
    }
    Ok(out)
}

/// Loads a legacy file's variables into the graph's layers, matched by position among the
/// layers that have variables, as Keras matches them.
fn load_legacy_weights(path: &str, bytes: Vec<u8>, g: &Graph, ctx: &mut dyn Ctx) -> PyResult<()> {
    let mut layers = vec![];
    for l in g.layers() {
        let vars = own_vars(&l, ctx)?;
        let shapes: Vec<Vec<usize>> = vars
            .iter()
            .filter_map(|v| Some(keras_variable(v)?.primary()?.shape().to_vec()))
            .collect();
        layers.push((name_of(&l, ctx)?, vars, shapes));
    }
    let wanted: Vec<(String, Vec<Vec<usize>>)> = layers
        .iter()
        .map(|(n, _, s)| (n.clone(), s.clone()))
        .collect();
    let read =
        crate::keras::saving::hdf5::legacy::decode_graph_weights(Path::new(path), bytes, &wanted)
            .map_err(kerr)?;
    for ((_, vars, _), values) in layers.iter().zip(read) {
        for (v, w) in vars.iter().zip(values) {
            if let Some(k) = keras_variable(v) {
                let a = NdArray::from_f32(&w.shape, w.data)
                    .map_err(crate::bindings::tf::convert::tensor_err)?;
                k.store(&a)?;
            }
        }
    }
    Ok(())
}

/// Calls the file's layers on new inputs, each call once all the tensors it reads exist,
/// and returns the model's input and output tensors.
fn rebuild(
    g: &GraphConfig,
    custom_objects: Option<&Value>,
    ctx: &mut dyn Ctx,
) -> PyResult<(Vec<Value>, Vec<Value>)> {
    let mut made: Vec<((String, usize), Value)> = vec![];
    let mut layers: Vec<(&GraphLayer, Value)> = vec![];
    for l in &g.layers {
        match &l.kind {
            GraphNode::Input => {
                let shape: Vec<Value> = l
                    .batch_shape
                    .iter()
                    .skip(1)
                    .map(|d| d.map_or(Value::None, |d| Value::Int(d as i64)))
                    .collect();
                let args = Args::new(vec![])
                    .with_kw("shape", Value::tuple(shape))
                    .with_kw("name", Value::str(&l.name));
                made.push((
                    (l.name.clone(), 0),
                    super::super::layers::input(&args, ctx)?,
                ));
            }
            GraphNode::Builtin(kind) => {
                let obj = LayerObj::new(Builtin::Kind(kind.clone()), None, l.name.clone());
                layers.push((l, Value::native(obj)));
            }
            GraphNode::Custom(entry) => {
                layers.push((l, super::custom::from_entry(entry, custom_objects, ctx)?));
            }
        }
    }
    let find = |made: &[((String, usize), Value)], t: &TensorRef| {
        made.iter()
            .find(|((n, k), _)| *n == t.layer && *k == t.node)
            .map(|(_, v)| v.clone())
    };
    let mut next = vec![0usize; layers.len()];
    loop {
        let mut progress = false;
        for (i, (l, value)) in layers.iter().enumerate() {
            while let Some(call) = l.calls.get(next[i]) {
                let ins: Option<Vec<Value>> = call.inputs.iter().map(|t| find(&made, t)).collect();
                let Some(mut ins) = ins else { break };
                let arg = match (call.list, ins.len()) {
                    (false, 1) => ins.remove(0),
                    _ => Value::list(ins),
                };
                let out = call_layer(value, Args::new(vec![arg]), ctx)?;
                made.push(((l.name.clone(), next[i]), out));
                next[i] += 1;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    if let Some((l, _)) = layers
        .iter()
        .zip(&next)
        .find(|((l, _), n)| **n < l.calls.len())
        .map(|(l, _)| l)
    {
        return Err(PyErr::value_error(format!(
            "The saved model config is not valid: the inputs of layer '{}' are never made.",
            l.name
        )));
    }
    let pick = |t: &(String, usize, usize)| {
        made.iter()
            .find(|((n, k), _)| *n == t.0 && *k == t.1)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| {
                PyErr::value_error(format!(
                    "The saved model config is not valid: no tensor {}[{}].",
                    t.0, t.1
                ))
            })
    };
    let inputs = g.inputs.iter().map(pick).collect::<PyResult<Vec<_>>>()?;
    let outputs = g.outputs.iter().map(pick).collect::<PyResult<Vec<_>>>()?;
    Ok((inputs, outputs))
}

/// One tensor, or a list of several, as Keras's `functional_from_config` passes them.
fn one_or_list(mut v: Vec<Value>) -> Value {
    match v.len() {
        1 => v.remove(0),
        _ => Value::list(v),
    }
}

/// `compile_config` read back as Keras's `compile_from_config` reads it: the optimizer and
/// its settings, and the loss, loss weights and metrics per output of a model of several.
fn compile_of(m: &ModelObj, cc: &serde_json::Value, ctx: &mut dyn Ctx) -> PyResult<CompileConfig> {
    let Some(g) = m.running_graph().filter(|g| g.outputs.len() > 1) else {
        return crate::keras::saving::compile_from_json(cc).map_err(kerr);
    };
    let optimizer = cc
        .get("optimizer")
        .map(crate::keras::saving::optimizer_from_json)
        .transpose()
        .map_err(kerr)?
        .ok_or_else(|| PyErr::value_error("The saved model config has no optimizer."))?;
    let arg = |key: &str| -> PyResult<Option<Value>> {
        match cc.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) if has_object(v) => Err(PyErr::not_implemented(format!(
                "loading a `{key}` given as a Keras object for a model of several outputs is not supported here"
            ))),
            Some(v) => Ok(Some(super::super::layers::layer::json_value(v))),
        }
    };
    let (loss, weights, metrics) = (arg("loss")?, arg("loss_weights")?, arg("metrics")?);
    let names = super::super::heads::output_names(&g, ctx)?;
    let heads = super::super::heads::compile_heads(
        &names,
        &super::super::heads::output_shapes(&g),
        loss.as_ref(),
        weights.as_ref(),
        metrics.as_ref(),
        ctx,
    )?;
    CompileConfig::with_heads(optimizer, heads).map_err(kerr)
}

/// Whether a JSON value holds a serialized Keras object (`class_name`).
fn has_object(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(o) => o.contains_key("class_name") || o.values().any(has_object),
        serde_json::Value::Array(a) => a.iter().any(has_object),
        _ => false,
    }
}

/// `load_model` of a `.keras` archive (or a legacy `.h5` file) holding a graph.
pub fn load(
    path: &str,
    saved: &SavedGraph,
    compile: bool,
    custom_objects: Option<&Value>,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    let (inputs, outputs) = rebuild(&saved.graph, custom_objects, ctx)?;
    let args = Args::new(vec![one_or_list(inputs), one_or_list(outputs)])
        .with_kw("name", Value::str(&saved.graph.name));
    let v = super::super::models::functional(&args, ctx)?;
    let m = v
        .downcast::<ModelObj>()
        .ok_or_else(|| PyErr::runtime_error("load_model: the model was not made"))?;
    let bytes = saved.weights.clone();
    if saved.legacy {
        let g = m
            .graph
            .borrow()
            .clone()
            .ok_or_else(|| PyErr::runtime_error("the model has no graph"))?;
        load_legacy_weights(path, bytes, &g, ctx)?;
    } else {
        super::load_tracked_from(m, &v, ctx, |wanted| {
            crate::keras::saving::hdf5::keras3::decode_layers(Path::new(path), bytes, wanted)
        })?;
    }
    let Some(cc) = saved.compile.as_ref().filter(|_| compile) else {
        return Ok(v);
    };
    let cfg = compile_of(m, cc, ctx)?;
    let slots = cfg.optimizer.step(cfg.optimizer.learning_rate, 1).slots();
    let class = cfg.optimizer.class_name();
    *m.op_training.borrow_mut() = None;
    *m.compiled_under.borrow_mut() = active_strategy(ctx);
    *m.compiled.borrow_mut() = Some(cfg);
    let g = m
        .graph
        .borrow()
        .clone()
        .ok_or_else(|| PyErr::runtime_error("the model has no graph"))?;
    let input = g.input_features().into_iter().next().unwrap_or_default();
    // The optimizer's variables follow `trainable_variables`, in the model's order.
    let handle = LayerHandle::of(&v, ctx)
        .ok_or_else(|| PyErr::runtime_error("load_model: the model has no layer state"))?;
    let shapes: Vec<Vec<usize>> = layer_weights(&handle, ctx, Some(true))?
        .iter()
        .filter_map(|w| Some(keras_variable(w)?.primary()?.shape().to_vec()))
        .collect();
    with_trainer(&v, &input, ctx, |t| {
        let bytes = saved.weights.clone();
        let state = if saved.legacy {
            crate::keras::saving::hdf5::legacy::decode_graph_optimizer(
                Path::new(path),
                bytes,
                &shapes,
                slots,
                class,
            )
        } else {
            decode_optimizer(Path::new(path), bytes, &shapes, slots, class)
        }
        .map_err(kerr)?;
        if let Some(state) = state {
            t.set_optimizer_state(&state).map_err(kerr)?;
        }
        Ok(())
    })?;
    Ok(v)
}
