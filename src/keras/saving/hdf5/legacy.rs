//! Keras's legacy full-model HDF5 format (`model.save('m.h5')`), which Keras 3 still reads
//! and writes: root attributes `model_config` (the model's JSON), `training_config` (loss,
//! metrics and `optimizer_config`), `keras_version` and `backend`; `model_weights` with a
//! `layer_names` attribute and one group per layer whose `weight_names` attribute lists its
//! datasets by path (`sequential/dense/kernel`); and `optimizer_weights`, whose
//! `weight_names` lists the optimizer's variables in order (`adam/iteration`,
//! `adam/learning_rate`, then each variable's slots). Keras matches layers and optimizer
//! variables by position, and so does this file. A functional graph that is not a chain
//! keeps its graph in `model_config` as `config.json` would, and its layers' variables
//! under their names (`encode_graph`, `graph_of`, `decode_graph_weights`).

use super::{dataset, group, read_f32, read_scalar_i64};
use crate::keras::compile::{CompileConfig, OptKind};
use crate::keras::error::{KResult, KerasError};
use crate::keras::init::HostArray;
use crate::keras::saving::json::{
    compile_from_json, loss_json, model_from_json, model_json, optimizer_json,
};
use crate::keras::saving::{optimized, read_optimizer_state, SavedModel, KERAS_VERSION};
use hdf5_pure::{AttrValue, FileBuilder, Group, GroupBuilder};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;

fn text(v: &AttrValue) -> Option<String> {
    match v {
        AttrValue::String(s)
        | AttrValue::AsciiString(s)
        | AttrValue::VarLenString(s)
        | AttrValue::VarLenAsciiString(s) => Some(s.clone()),
        AttrValue::StringSized { value, .. } | AttrValue::AsciiStringSized { value, .. } => {
            Some(value.clone())
        }
        _ => None,
    }
}

/// A list-of-names attribute; Keras writes an empty list as an empty float array.
fn names(v: &AttrValue) -> Option<Vec<String>> {
    match v {
        AttrValue::StringArray(a)
        | AttrValue::AsciiStringArray(a)
        | AttrValue::VarLenStringArray(a)
        | AttrValue::VarLenAsciiStringArray(a)
        | AttrValue::VarLenAsciiCharArray(a) => Some(a.clone()),
        AttrValue::StringArraySized { values, .. }
        | AttrValue::AsciiStringArraySized { values, .. } => Some(values.clone()),
        AttrValue::F64Array(a) if a.is_empty() => Some(vec![]),
        other => text(other).map(|s| vec![s]),
    }
}

fn attrs(path: &Path, g: &Group, what: &str) -> KResult<HashMap<String, AttrValue>> {
    g.attrs().map_err(|e| KerasError::Corrupt {
        path: path.display().to_string(),
        detail: format!("the attributes of '{what}' are unreadable ({e})"),
    })
}

/// The JSON text a file keeps in its root attribute `key` (`model_config`,
/// `training_config`), parsed; `None` when the file has no such attribute.
fn json_attr(path: &Path, top: &HashMap<String, AttrValue>, key: &str) -> KResult<Option<Value>> {
    match top.get(key).and_then(text) {
        None => Ok(None),
        Some(s) => serde_json::from_str(&s)
            .map(Some)
            .map_err(|e| KerasError::Corrupt {
                path: path.display().to_string(),
                detail: format!("{key}: {e}"),
            }),
    }
}

fn names_attr(path: &Path, g: &Group, what: &str, key: &str) -> KResult<Vec<String>> {
    attrs(path, g, what)?
        .get(key)
        .and_then(names)
        .ok_or_else(|| KerasError::Corrupt {
            path: path.display().to_string(),
            detail: format!("'{what}' has no {key} attribute"),
        })
}

/// The optimizer's variable names after `iteration` and `learning_rate`.
fn slot_names(c: &CompileConfig, var_path: &str, n: usize) -> Vec<String> {
    let base = var_path.replace('/', "_");
    (0..n)
        .map(|i| match (&c.optimizer.kind, i) {
            (OptKind::Adam { .. } | OptKind::AdamW { .. }, 0) => format!("{base}_momentum"),
            (OptKind::Adam { .. } | OptKind::AdamW { .. }, 1) => format!("{base}_velocity"),
            (OptKind::Sgd { .. }, 0) => format!("{base}_momentum"),
            _ => format!("{base}_slot{i}"),
        })
        .collect()
}

/// One weight to write: its path below the layer's group (`sequential/dense/kernel`).
struct Entry<'a> {
    parts: Vec<&'a str>,
    data: &'a [f32],
    shape: Vec<u64>,
}

/// Writes `entries` below `g`, one group per shared path component (the kernel and bias of
/// a layer share `sequential/dense`, which must be one group, not two of the same name).
fn write_tree(g: &mut GroupBuilder, entries: &[Entry], depth: usize) {
    let mut heads: Vec<&str> = vec![];
    for e in entries {
        match e.parts.get(depth..) {
            Some([leaf]) => {
                g.create_dataset(leaf)
                    .with_f32_data(e.data)
                    .with_shape(&e.shape);
            }
            Some([head, _, ..]) if !heads.contains(head) => heads.push(head),
            _ => {}
        }
    }
    for head in heads {
        let below: Vec<Entry> = entries
            .iter()
            .filter(|e| e.parts.len() > depth + 1 && e.parts.get(depth) == Some(&head))
            .map(|e| Entry {
                parts: e.parts.clone(),
                data: e.data,
                shape: e.shape.clone(),
            })
            .collect();
        let mut sub = g.create_group(head);
        write_tree(&mut sub, &below, depth + 1);
        g.add_group(sub.finish());
    }
}

fn string_list(v: Vec<String>) -> AttrValue {
    if v.is_empty() {
        AttrValue::F64Array(vec![])
    } else {
        AttrValue::StringArray(v)
    }
}

/// One layer's group of `model_weights`: the layer's name and its variables, each by its
/// path (`dense/kernel`), which `weight_names` lists and which places its dataset below the
/// group.
struct LayerGroup<'a> {
    name: &'a str,
    vars: Vec<(String, &'a HostArray)>,
}

/// `model_weights` as Keras writes it for chains and graphs alike: `layer_names`, a group
/// per layer with its `weight_names` and datasets, and an empty `top_level_model_weights`.
fn write_model_weights(fb: &mut FileBuilder, layers: &[LayerGroup]) {
    let mut weights = fb.create_group("model_weights");
    weights.set_attr("backend", AttrValue::VarLenString("tensorflow".into()));
    weights.set_attr(
        "keras_version",
        AttrValue::VarLenString(KERAS_VERSION.into()),
    );
    let layer_names: Vec<String> = layers.iter().map(|l| l.name.to_string()).collect();
    weights.set_attr("layer_names", string_list(layer_names));
    for l in layers {
        let mut g = weights.create_group(l.name);
        let names: Vec<String> = l.vars.iter().map(|(p, _)| p.clone()).collect();
        g.set_attr("weight_names", string_list(names));
        let entries: Vec<Entry> = l
            .vars
            .iter()
            .map(|(p, w)| Entry {
                parts: p.split('/').collect(),
                data: &w.data,
                shape: w.shape.iter().map(|&d| d as u64).collect(),
            })
            .collect();
        write_tree(&mut g, &entries, 0);
        weights.add_group(g.finish());
    }
    let mut top = weights.create_group("top_level_model_weights");
    top.set_attr("weight_names", string_list(vec![]));
    weights.add_group(top.finish());
    fb.add_group(weights.finish());
}

/// `optimizer_weights`: the step, the learning rate and each trained variable's slots (in
/// `vars` order, named by the variable's path), listed in `weight_names` as Keras 3 lists
/// them in a legacy file.
fn write_optimizer_weights(
    fb: &mut FileBuilder,
    c: &CompileConfig,
    opt: &crate::keras::replica::OptimizerState,
    vars: &[String],
) {
    let prefix = c.optimizer.class_name().to_lowercase();
    let mut og = fb.create_group("optimizer_weights");
    let mut inner = og.create_group(&prefix);
    let mut order = vec![
        format!("{prefix}/iteration"),
        format!("{prefix}/learning_rate"),
    ];
    inner
        .create_dataset("iteration")
        .with_i64_data(&[opt.iterations as i64])
        .with_shape(&[]);
    inner
        .create_dataset("learning_rate")
        .with_f32_data(&[c.optimizer.learning_rate])
        .with_shape(&[]);
    for (var, slots) in vars.iter().zip(&opt.slots) {
        for (name, s) in slot_names(c, var, slots.len()).into_iter().zip(slots) {
            inner
                .create_dataset(&name)
                .with_f32_data(&s.data)
                .with_shape(&s.shape.iter().map(|&d| d as u64).collect::<Vec<_>>());
            order.push(format!("{prefix}/{name}"));
        }
    }
    og.set_attr("weight_names", string_list(order));
    og.add_group(inner.finish());
    fb.add_group(og.finish());
}

/// The bytes of `model.save('m.h5')`.
pub fn encode(path: &Path, m: &SavedModel) -> KResult<Vec<u8>> {
    let plan = m.config.plan()?;
    let io = |e: &dyn std::fmt::Display| KerasError::Io {
        path: path.display().to_string(),
        detail: format!("the HDF5 file could not be written ({e})"),
    };
    let mut fb = FileBuilder::new();
    fb.set_attr("backend", AttrValue::VarLenString("tensorflow".into()));
    fb.set_attr(
        "keras_version",
        AttrValue::VarLenString(KERAS_VERSION.into()),
    );
    let config = model_json(&m.config, None)?;
    fb.set_attr("model_config", AttrValue::VarLenString(config.to_string()));
    let groups: Vec<LayerGroup> = m
        .config
        .layers
        .iter()
        .enumerate()
        .map(|(i, spec)| LayerGroup {
            name: &spec.name,
            vars: plan
                .vars
                .iter()
                .zip(&m.weights)
                .filter(|(v, _)| v.layer == i)
                .map(|(v, w)| (v.path.clone(), w))
                .collect(),
        })
        .collect();
    write_model_weights(&mut fb, &groups);
    if let (Some(c), Some(opt)) = (&m.compile, &m.optimizer) {
        let training = json!({"loss": loss_json(&c.loss),
            "metrics": c.metrics.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
            "loss_weights": null, "weighted_metrics": null, "run_eagerly": false,
            "steps_per_execution": 1, "jit_compile": false,
            "optimizer_config": optimizer_json(&c.optimizer)});
        fb.set_attr(
            "training_config",
            AttrValue::VarLenString(training.to_string()),
        );
        let vars: Vec<String> = optimized(&plan.vars).map(|v| v.path.clone()).collect();
        write_optimizer_weights(&mut fb, c, opt, &vars);
    }
    fb.finish().map_err(|e| io(&e))
}

/// `load_model('m.h5')`: the model, its compile settings and optimizer state when saved.
pub fn decode(path: &Path, bytes: Vec<u8>) -> KResult<SavedModel> {
    let file = super::open(path, bytes)?;
    let root = file.root();
    let top = attrs(path, &root, "/")?;
    let json_attr = |key: &str| json_attr(path, &top, key);
    // Keras's words for an HDF5 file that holds no model (a weights-only file, say).
    let config = json_attr("model_config")?.ok_or_else(|| {
        KerasError::Value(format!(
            "No model config found in the file at {}.",
            path.display()
        ))
    })?;
    let (config, _) = model_from_json(&config)?;
    let compile = match json_attr("training_config")? {
        Some(t) => {
            let cc = json!({"optimizer": t.get("optimizer_config").cloned().unwrap_or(Value::Null),
                "loss": t.get("loss").cloned().unwrap_or(Value::Null),
                "metrics": t.get("metrics").cloned().unwrap_or(Value::Null)});
            Some(compile_from_json(&cc)?)
        }
        None => None,
    };
    let plan = config.plan()?;
    let mw = group(path, &root, "model_weights")?;
    let mut saved: Vec<Vec<String>> = vec![];
    let mut saved_groups: Vec<Group> = vec![];
    for name in names_attr(path, &mw, "model_weights", "layer_names")? {
        let g = group(path, &mw, &name)?;
        let w = names_attr(path, &g, &name, "weight_names")?;
        if !w.is_empty() {
            saved.push(w);
            saved_groups.push(g);
        }
    }
    let with_vars: Vec<usize> = (0..config.layers.len())
        .filter(|&i| plan.vars.iter().any(|v| v.layer == i))
        .collect();
    if with_vars.len() != saved.len() {
        return Err(KerasError::Value(format!(
            "Layer count mismatch when loading weights from file. Model expected {} layers, found {} saved layers.",
            with_vars.len(),
            saved.len()
        )));
    }
    let mut weights = Vec::with_capacity(plan.vars.len());
    for ((layer, names), g) in with_vars.iter().zip(&saved).zip(&saved_groups) {
        let own: Vec<_> = plan.vars.iter().filter(|v| v.layer == *layer).collect();
        if own.len() != names.len() {
            return Err(KerasError::Value(format!(
                "Weight count mismatch for layer #{layer} (named {}). Layer expects {} weights, but the saved weights have {} elements.",
                config.layers.get(*layer).map_or("", |l| l.name.as_str()),
                own.len(),
                names.len()
            )));
        }
        for (v, n) in own.iter().zip(names) {
            let d = dataset(path, g, n)?;
            weights.push(HostArray::new(
                v.shape.clone(),
                read_f32(path, &d, n, &v.shape)?,
            ));
        }
    }
    let optimizer = match (&compile, root.group("optimizer_weights")) {
        (Some(c), Ok(og)) => {
            let order = names_attr(path, &og, "optimizer_weights", "weight_names")?;
            let n = c.optimizer.step(c.optimizer.learning_rate, 1).slots();
            let expected = 2 + n * optimized(&plan.vars).count();
            if order.len() != expected {
                return Err(KerasError::Value(format!(
                    "The optimizer in the file holds {} variables and this model's {} needs {expected}.",
                    order.len(),
                    c.optimizer.class_name()
                )));
            }
            let first = order.first().map(String::as_str).unwrap_or_default();
            let iterations = read_scalar_i64(path, &dataset(path, &og, first)?, first)?;
            let state = read_optimizer_state(&plan.vars, n, iterations, |i, v, k| {
                let name = order
                    .get(2 + i * n + k)
                    .map(String::as_str)
                    .unwrap_or_default();
                read_f32(path, &dataset(path, &og, name)?, name, &v.shape)
            })?;
            Some(state)
        }
        _ => None,
    };
    Ok(SavedModel {
        config,
        compile,
        weights,
        optimizer,
        note: None,
    })
}

/// One layer of a functional graph in the legacy file: its name and its variables (their
/// own names, `kernel`), trainable ones first, with whether each trains.
pub struct NamedWeights {
    pub layer: String,
    pub vars: Vec<(String, HostArray, bool)>,
}

/// `training_config` as Keras's legacy format writes it: `compile_config` with the
/// optimizer under `optimizer_config`.
fn training_json(c: &CompileConfig) -> Value {
    let mut t = crate::keras::saving::json::compile_json(c);
    if let Some(o) = t.as_object_mut() {
        if let Some(opt) = o.remove("optimizer") {
            o.insert("optimizer_config".into(), opt);
        }
    }
    t
}

/// The bytes of `model.save('m.h5')` for a functional graph that is not a chain:
/// `model_config` holds the graph as `config.json` would, `model_weights` a group per layer
/// (`layer_names` in `model.layers` order, input and merge layers included, each layer's
/// datasets at `name/name/kernel` and listed as `name/kernel`), and `optimizer_weights` the
/// step, the learning rate and each trainable variable's slots in that order.
pub fn encode_graph(
    path: &Path,
    graph: &crate::keras::saving::graph::GraphConfig,
    compile: Option<&CompileConfig>,
    layers: &[NamedWeights],
    optimizer: Option<&crate::keras::replica::OptimizerState>,
) -> KResult<Vec<u8>> {
    let io = |e: &dyn std::fmt::Display| KerasError::Io {
        path: path.display().to_string(),
        detail: format!("the HDF5 file could not be written ({e})"),
    };
    let mut fb = FileBuilder::new();
    fb.set_attr("backend", AttrValue::VarLenString("tensorflow".into()));
    fb.set_attr(
        "keras_version",
        AttrValue::VarLenString(KERAS_VERSION.into()),
    );
    fb.set_attr(
        "model_config",
        AttrValue::VarLenString(graph.to_json().to_string()),
    );
    let groups: Vec<LayerGroup> = layers
        .iter()
        .map(|l| LayerGroup {
            name: &l.layer,
            vars: l
                .vars
                .iter()
                .map(|(n, w, _)| (format!("{}/{n}", l.layer), w))
                .collect(),
        })
        .collect();
    write_model_weights(&mut fb, &groups);
    if let Some(c) = compile {
        fb.set_attr(
            "training_config",
            AttrValue::VarLenString(training_json(c).to_string()),
        );
    }
    if let (Some(c), Some(opt)) = (compile, optimizer) {
        let vars: Vec<String> = layers
            .iter()
            .flat_map(|l| {
                l.vars
                    .iter()
                    .filter(|(_, _, t)| *t)
                    .map(move |(n, _, _)| format!("{}/{n}", l.layer))
            })
            .collect();
        write_optimizer_weights(&mut fb, c, opt, &vars);
    }
    fb.finish().map_err(|e| io(&e))
}

/// The graph of a legacy file whose `model_config` is a functional graph that is not a
/// chain, with its `training_config` as `compile_config` (the optimizer under
/// `optimizer`); `None` for any other file.
pub fn graph_of(
    path: &Path,
    bytes: &[u8],
) -> KResult<Option<(crate::keras::saving::graph::GraphConfig, Option<Value>)>> {
    let file = super::open(path, bytes.to_vec())?;
    let top = attrs(path, &file.root(), "/")?;
    let json_attr = |key: &str| json_attr(path, &top, key);
    let Some(config) = json_attr("model_config")? else {
        return Ok(None);
    };
    if config.get("class_name").and_then(Value::as_str) != Some("Functional") {
        return Ok(None);
    }
    let g = crate::keras::saving::graph::GraphConfig::from_json(&config)?;
    if g.is_chain() {
        return Ok(None);
    }
    let compile = json_attr("training_config")?.map(|mut t| {
        if let Some(o) = t.as_object_mut() {
            if let Some(opt) = o.remove("optimizer_config") {
                o.insert("optimizer".into(), opt);
            }
        }
        t
    });
    Ok(Some((g, compile)))
}

/// The variables of a graph's layers from a legacy file, matched as Keras's
/// `load_weights_from_hdf5_group` matches them: the layers that have variables, in order,
/// against the file's layers that have any, with Keras's errors when the counts differ.
/// `wanted` lists each layer's name and its variables' shapes.
pub fn decode_graph_weights(
    path: &Path,
    bytes: Vec<u8>,
    wanted: &[(String, Vec<Vec<usize>>)],
) -> KResult<Vec<Vec<HostArray>>> {
    let file = super::open(path, bytes)?;
    let mw = group(path, &file.root(), "model_weights")?;
    let mut saved: Vec<(Vec<String>, Group)> = vec![];
    for name in names_attr(path, &mw, "model_weights", "layer_names")? {
        let g = group(path, &mw, &name)?;
        let w = names_attr(path, &g, &name, "weight_names")?;
        if !w.is_empty() {
            saved.push((w, g));
        }
    }
    let with_vars: Vec<&(String, Vec<Vec<usize>>)> =
        wanted.iter().filter(|(_, s)| !s.is_empty()).collect();
    if with_vars.len() != saved.len() {
        return Err(KerasError::Value(format!(
            "Layer count mismatch when loading weights from file. Model expected {} layers, found {} saved layers.",
            with_vars.len(),
            saved.len()
        )));
    }
    let mut out = vec![vec![]; wanted.len()];
    let slots = wanted
        .iter()
        .enumerate()
        .filter(|(_, (_, s))| !s.is_empty())
        .map(|(i, _)| i);
    for (k, (i, (names, g))) in slots.zip(&saved).enumerate() {
        let (layer, shapes) = &wanted[i];
        if shapes.len() != names.len() {
            return Err(KerasError::Value(format!(
                "Weight count mismatch for layer #{k} (named {layer}). Layer expects {} weights, but the saved weights have {} elements.",
                shapes.len(),
                names.len()
            )));
        }
        for (shape, n) in shapes.iter().zip(names) {
            let d = dataset(path, g, n)?;
            out[i].push(HostArray::new(shape.clone(), read_f32(path, &d, n, shape)?));
        }
    }
    Ok(out)
}

/// The optimizer's state of a graph from a legacy file, for trainable variables of
/// `shapes` with `slots` slots each; `None` when the file holds none.
pub fn decode_graph_optimizer(
    path: &Path,
    bytes: Vec<u8>,
    shapes: &[Vec<usize>],
    slots: usize,
    optimizer: &str,
) -> KResult<Option<crate::keras::replica::OptimizerState>> {
    let file = super::open(path, bytes)?;
    let Ok(og) = file.root().group("optimizer_weights") else {
        return Ok(None);
    };
    let order = names_attr(path, &og, "optimizer_weights", "weight_names")?;
    let expected = 2 + slots * shapes.len();
    if order.len() != expected {
        return Err(KerasError::Value(format!(
            "The optimizer in the file holds {} variables and this model's {optimizer} needs {expected}.",
            order.len()
        )));
    }
    let first = order.first().map(String::as_str).unwrap_or_default();
    let iterations = read_scalar_i64(path, &dataset(path, &og, first)?, first)?;
    let mut all = Vec::with_capacity(shapes.len());
    for (i, shape) in shapes.iter().enumerate() {
        let mut per = Vec::with_capacity(slots);
        for k in 0..slots {
            let name = order
                .get(2 + i * slots + k)
                .map(String::as_str)
                .unwrap_or_default();
            let data = read_f32(path, &dataset(path, &og, name)?, name, shape)?;
            per.push(HostArray::new(shape.clone(), data));
        }
        all.push(per);
    }
    Ok(Some(crate::keras::replica::OptimizerState {
        iterations: iterations.max(0) as u64,
        slots: all,
    }))
}
