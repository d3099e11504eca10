//! Keras 3's weights layout, shared by `model.weights.h5` inside `.keras` archives and by
//! `.weights.h5` files: one group per layer of the model, named by class as Keras names
//! them (`layers/dense`, `layers/dense_1`, `layers/conv2d`; a functional model lists its
//! `input_layer` first), each with `vars/0`, `vars/1`, ... in the layer's variable order
//! (kernel, bias; a batch normalization's gamma, beta, moving_mean, moving_variance); and
//! the optimizer's variables in `optimizer/vars/<i>`: the step counter (int64), the
//! learning rate, then each trainable variable's slots in turn (Adam:
//! momentum, velocity), the order of Keras's `optimizer.variables`. Keras matches a file to
//! a model by these names, so a layer renamed `dense_7` in another session still loads.

use super::{dataset, group, read_f32, read_scalar_i64};
use crate::keras::compile::CompileConfig;
use crate::keras::config::{LayerKind, ModelConfig};
use crate::keras::error::{KResult, KerasError};
use crate::keras::init::HostArray;
use crate::keras::replica::OptimizerState;
use crate::keras::saving::{optimized, read_optimizer_state};
use hdf5_pure::{AttrValue, FileBuilder, GroupBuilder};
use std::path::Path;

/// The group name of each of `config`'s layers (the input layer not included).
fn layer_keys(config: &ModelConfig) -> Vec<String> {
    let input = config.functional.then_some("InputLayer");
    let classes = input
        .into_iter()
        .chain(config.layers.iter().map(|l| l.kind.class_name()));
    let mut keys = crate::keras::saving::naming::container_names(classes);
    if config.functional {
        keys.remove(0);
    }
    keys
}

fn vars_group(b: &mut GroupBuilder, name: &str) -> GroupBuilder {
    let mut vars = b.create_group("vars");
    vars.set_attr("name", AttrValue::VarLenString(name.to_string()));
    vars
}

fn shape_u64(shape: &[usize]) -> Vec<u64> {
    shape.iter().map(|&d| d as u64).collect()
}

fn format_error(path: &Path, e: impl std::fmt::Display) -> KerasError {
    KerasError::Io {
        path: path.display().to_string(),
        detail: format!("the HDF5 file could not be written ({e})"),
    }
}

/// The weights file's bytes; `optimizer` with its learning rate when the model is compiled.
pub fn encode(
    path: &Path,
    config: &ModelConfig,
    weights: &[HostArray],
    optimizer: Option<(&OptimizerState, f32)>,
) -> KResult<Vec<u8>> {
    let plan = config.plan()?;
    if plan.vars.len() != weights.len() {
        return Err(KerasError::Value(format!(
            "The model has {} variables but {} weights were given.",
            plan.vars.len(),
            weights.len()
        )));
    }
    let mut fb = FileBuilder::new();
    let mut layers = fb.create_group("layers");
    if config.functional {
        let mut g = layers.create_group("input_layer");
        let vars = vars_group(&mut g, &config.input_name);
        g.add_group(vars.finish());
        layers.add_group(g.finish());
    }
    for (i, (spec, key)) in config.layers.iter().zip(layer_keys(config)).enumerate() {
        let mut g = layers.create_group(&key);
        // A recurrent layer's variables belong to its cell: `layers/lstm/cell/vars/0`, the
        // layer's own `vars` empty.
        let mut cell = match &spec.kind {
            LayerKind::Recurrent(r) => {
                let own = vars_group(&mut g, &spec.name);
                g.add_group(own.finish());
                Some((g.create_group("cell"), r.cell_scope()))
            }
            _ => None,
        };
        let mut vars = match &mut cell {
            Some((c, scope)) => vars_group(c, scope),
            None => vars_group(&mut g, &spec.name),
        };
        let own = plan.vars.iter().zip(weights).filter(|(v, _)| v.layer == i);
        for (k, (v, w)) in own.enumerate() {
            vars.create_dataset(&k.to_string())
                .with_f32_data(&w.data)
                .with_shape(&shape_u64(&v.shape));
        }
        match cell {
            Some((mut c, _)) => {
                c.add_group(vars.finish());
                g.add_group(c.finish());
            }
            None => g.add_group(vars.finish()),
        }
        layers.add_group(g.finish());
    }
    fb.add_group(layers.finish());
    if let Some((opt, lr)) = optimizer {
        let mut o = fb.create_group("optimizer");
        let mut vars = vars_group(&mut o, "optimizer");
        vars.create_dataset("0")
            .with_i64_data(&[opt.iterations as i64])
            .with_shape(&[]);
        vars.create_dataset("1")
            .with_f32_data(&[lr])
            .with_shape(&[]);
        let mut n = 2;
        for (v, slots) in optimized(&plan.vars).zip(&opt.slots) {
            for s in slots {
                vars.create_dataset(&n.to_string())
                    .with_f32_data(&s.data)
                    .with_shape(&shape_u64(&v.shape));
                n += 1;
            }
        }
        o.add_group(vars.finish());
        fb.add_group(o.finish());
    }
    let mut top = fb.create_group("vars");
    top.set_attr("name", AttrValue::VarLenString(config.name.clone()));
    fb.add_group(top.finish());
    fb.finish().map_err(|e| format_error(path, e))
}

/// Reads the weights (in the model's variable order) and, when `compile` is given and the
/// file holds them, the optimizer's step counter and slots.
pub fn decode(
    path: &Path,
    config: &ModelConfig,
    bytes: Vec<u8>,
    compile: Option<&CompileConfig>,
) -> KResult<(Vec<HostArray>, Option<OptimizerState>)> {
    let plan = config.plan()?;
    let file = super::open(path, bytes)?;
    let root = file.root();
    let layers = group(path, &root, "layers")?;
    let keys = layer_keys(config);
    let mut weights = Vec::with_capacity(plan.vars.len());
    let mut seen = vec![0usize; config.layers.len()];
    for v in &plan.vars {
        let key = keys.get(v.layer).map(String::as_str).unwrap_or_default();
        let k = seen.get_mut(v.layer).map_or(0, |n| {
            *n += 1;
            *n - 1
        });
        let in_cell = matches!(
            config.layers.get(v.layer).map(|l| &l.kind),
            Some(LayerKind::Recurrent(_))
        );
        let vars = group(path, &layers, key).and_then(|g| {
            if in_cell {
                group(path, &g, "cell").and_then(|c| group(path, &c, "vars"))
            } else {
                group(path, &g, "vars")
            }
        })?;
        let d = dataset(path, &vars, &k.to_string())?;
        weights.push(HostArray::new(
            v.shape.clone(),
            read_f32(path, &d, &v.path, &v.shape)?,
        ));
    }
    let optimizer = match (compile, root.group("optimizer")) {
        (Some(c), Ok(o)) => {
            let vars = group(path, &o, "vars")?;
            let n = c.optimizer.step(c.optimizer.learning_rate, 1).slots();
            let expected = 2 + n * optimized(&plan.vars).count();
            let held = vars.datasets().map(|d| d.len()).unwrap_or(0);
            if held != expected {
                return Err(KerasError::Value(format!(
                    "The optimizer in the file holds {held} variables and this model's {} needs {expected}.",
                    c.optimizer.class_name()
                )));
            }
            let iterations = read_scalar_i64(path, &dataset(path, &vars, "0")?, "iterations")?;
            let state = read_optimizer_state(&plan.vars, n, iterations, |i, v, k| {
                let at = (2 + i * n + k).to_string();
                let d = dataset(path, &vars, &at)?;
                read_f32(path, &d, &format!("optimizer/vars/{at}"), &v.shape)
            })?;
            Some(state)
        }
        _ => None,
    };
    Ok((weights, optimizer))
}

/// One layer's group in Keras 3's weights layout, for a model that has no engine
/// description (a functional graph): its key under `layers/` (Keras's container name, from
/// [`crate::keras::saving::naming::container_names`] over `model.layers`), the layer's own
/// name (the `vars` group's `name` attribute), and its variables in the layer's order.
pub struct LayerWeights {
    pub key: String,
    pub name: String,
    pub vars: Vec<HostArray>,
}

/// The bytes of a `.weights.h5` file holding `layers` of the model named `model`, without
/// an optimizer (as `save_weights` writes it).
pub fn encode_layers(path: &Path, model: &str, layers: &[LayerWeights]) -> KResult<Vec<u8>> {
    let mut fb = FileBuilder::new();
    let mut group_of_layers = fb.create_group("layers");
    for l in layers {
        let mut g = group_of_layers.create_group(&l.key);
        let mut vars = vars_group(&mut g, &l.name);
        for (k, w) in l.vars.iter().enumerate() {
            vars.create_dataset(&k.to_string())
                .with_f32_data(&w.data)
                .with_shape(&shape_u64(&w.shape));
        }
        g.add_group(vars.finish());
        group_of_layers.add_group(g.finish());
    }
    fb.add_group(group_of_layers.finish());
    let mut top = fb.create_group("vars");
    top.set_attr("name", AttrValue::VarLenString(model.to_string()));
    fb.add_group(top.finish());
    fb.finish().map_err(|e| format_error(path, e))
}

/// Reads the variables of the layers keyed `keys` (with the shapes each layer's variables
/// have in the model) from a file in Keras 3's weights layout, layer by layer.
pub fn decode_layers(
    path: &Path,
    bytes: Vec<u8>,
    keys: &[(String, Vec<Vec<usize>>)],
) -> KResult<Vec<Vec<HostArray>>> {
    let file = super::open(path, bytes)?;
    let root = file.root();
    let layers = group(path, &root, "layers")?;
    let mut out = Vec::with_capacity(keys.len());
    for (key, shapes) in keys {
        let mut vars_out = Vec::with_capacity(shapes.len());
        if !shapes.is_empty() {
            let vars = group(path, &layers, key).and_then(|g| group(path, &g, "vars"))?;
            for (k, shape) in shapes.iter().enumerate() {
                let d = dataset(path, &vars, &k.to_string())?;
                let what = format!("layers/{key}/vars/{k}");
                vars_out.push(HostArray::new(
                    shape.clone(),
                    read_f32(path, &d, &what, shape)?,
                ));
            }
        }
        out.push(vars_out);
    }
    Ok(out)
}
