//! Keras 3's weights layout, shared by `model.weights.h5` inside `.keras` archives and by
//! `.weights.h5` files: one group per layer of the model, named by class as Keras names
//! them (`layers/dense`, `layers/dense_1`, `layers/conv2d`; a functional model lists its
//! `input_layer` first), each with `vars/0`, `vars/1`, ... in the layer's variable order
//! (kernel, bias; a batch normalization's gamma, beta, moving_mean, moving_variance); and
//! the optimizer's variables in `optimizer/vars/<i>`: the step counter (int64), the
//! learning rate, then each trainable variable's slots in turn (Adam:
//! momentum, velocity), the order of Keras's `optimizer.variables`. Keras matches a file to
//! a model by these names, so a layer renamed `dense_7` in another session still loads.
//! A model described by its objects rather than by the engine (a subclass: `head/vars`,
//! `hidden/dense_1/vars`, its own weights in the root's `vars`) is written and read at the
//! paths the bindings give (`encode_layers`, `decode_layers`).

use super::{dataset, group, read_f32, read_scalar_i64};
use crate::keras::compile::CompileConfig;
use crate::keras::config::{LayerKind, ModelConfig};
use crate::keras::error::{KResult, KerasError};
use crate::keras::init::HostArray;
use crate::keras::replica::OptimizerState;
use crate::keras::saving::optimized;
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

/// How many of a Bidirectional's variables belong to its forward layer (kernel, recurrent
/// kernel, and a bias when it has one).
fn forward_count(b: &crate::keras::bidirectional::Bidirectional) -> usize {
    2 + usize::from(b.forward.use_bias)
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
        if let LayerKind::Bidirectional(b) = &spec.kind {
            // Each direction is a recurrent layer of its own: `layers/bidirectional/
            // forward_layer/cell/vars/0`, every `vars` above the cells empty.
            let own = vars_group(&mut g, &spec.name);
            g.add_group(own.finish());
            let mine: Vec<_> = plan
                .vars
                .iter()
                .zip(weights)
                .filter(|(v, _)| v.layer == i)
                .collect();
            let (fwd, bwd) = mine.split_at(forward_count(b).min(mine.len()));
            for (sub, r, name, part) in [
                ("forward_layer", &b.forward, &b.forward_name, fwd),
                ("backward_layer", &b.backward, &b.backward_name, bwd),
            ] {
                let mut s = g.create_group(sub);
                let v = vars_group(&mut s, name);
                s.add_group(v.finish());
                let mut cell = s.create_group("cell");
                let mut vars = vars_group(&mut cell, r.cell_scope());
                for (k, (v, w)) in part.iter().enumerate() {
                    vars.create_dataset(&k.to_string())
                        .with_f32_data(&w.data)
                        .with_shape(&shape_u64(&v.shape));
                }
                cell.add_group(vars.finish());
                s.add_group(cell.finish());
                g.add_group(s.finish());
            }
            layers.add_group(g.finish());
            continue;
        }
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
        write_optimizer(&mut fb, opt, lr);
    }
    let mut top = fb.create_group("vars");
    top.set_attr("name", AttrValue::VarLenString(config.name.clone()));
    fb.add_group(top.finish());
    fb.finish().map_err(|e| format_error(path, e))
}

/// Reads the weights (in the model's variable order) and, when `compile` is given and the
/// file holds them, the optimizer's step counter and slots (an optimizer that does not fit
/// the model is an error: an archive's compile config names the optimizer it holds).
pub fn decode(
    path: &Path,
    config: &ModelConfig,
    bytes: Vec<u8>,
    compile: Option<&CompileConfig>,
) -> KResult<(Vec<HostArray>, Option<OptimizerState>)> {
    let (weights, optimizer) = decode_weights_file(path, config, bytes, compile)?;
    Ok((weights, optimizer.map(|(_, s)| s).transpose()?))
}

/// Reads the weights as [`decode`] does, leaving an optimizer that does not fit the model
/// to the caller (`load_weights` warns and skips it, as Keras does).
pub fn decode_weights_file(
    path: &Path,
    config: &ModelConfig,
    bytes: Vec<u8>,
    compile: Option<&CompileConfig>,
) -> KResult<(Vec<HostArray>, FoundOptimizer)> {
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
        let kind = config.layers.get(v.layer).map(|l| &l.kind);
        let cell =
            |g: &hdf5_pure::Group| group(path, g, "cell").and_then(|c| group(path, &c, "vars"));
        let (vars, k) = match kind {
            Some(LayerKind::Recurrent(_)) => (group(path, &layers, key).and_then(|g| cell(&g))?, k),
            Some(LayerKind::Bidirectional(b)) => {
                let n = forward_count(b);
                let (sub, k) = if k < n {
                    ("forward_layer", k)
                } else {
                    ("backward_layer", k - n)
                };
                let g = group(path, &layers, key).and_then(|g| group(path, &g, sub))?;
                (cell(&g)?, k)
            }
            _ => (
                group(path, &layers, key).and_then(|g| group(path, &g, "vars"))?,
                k,
            ),
        };
        let d = dataset(path, &vars, &k.to_string())?;
        weights.push(HostArray::new(
            v.shape.clone(),
            read_f32(path, &d, &v.path, &v.shape)?,
        ));
    }
    let optimizer = match compile {
        Some(c) => {
            let shapes: Vec<_> = optimized(&plan.vars).map(|v| v.shape.clone()).collect();
            let slots = c.optimizer.step(c.optimizer.learning_rate, 1).slots();
            read_optimizer(path, &root, &shapes, slots, c.optimizer.class_name())?
        }
        None => None,
    };
    Ok((weights, optimizer))
}

/// One object's variables in Keras 3's weights layout, for a model that has no engine
/// description (a functional graph, a subclass, a model holding a user's layers): its path
/// from the file's root as Keras's `_save_state` makes it (`layers/dense` for a list entry,
/// `d1` for an attribute, `blocks/dense_1` for an attribute's list; empty for the model
/// itself, whose own variables sit in the root's `vars`), the object's name (the `vars`
/// group's `name` attribute), and its variables in the object's order.
pub struct LayerWeights {
    pub path: String,
    pub name: String,
    pub vars: Vec<HostArray>,
}

/// The groups of a file as a tree: each object's entry at its path, the children in the
/// order they were first named (a path's shared prefix is one group, not two).
#[derive(Default)]
struct Node<'a> {
    entry: Option<&'a LayerWeights>,
    children: Vec<(&'a str, Node<'a>)>,
}

impl<'a> Node<'a> {
    fn insert(&mut self, e: &'a LayerWeights) {
        let mut at = self;
        for part in e.path.split('/').filter(|p| !p.is_empty()) {
            let i = match at.children.iter().position(|(n, _)| *n == part) {
                Some(i) => i,
                None => {
                    at.children.push((part, Node::default()));
                    at.children.len() - 1
                }
            };
            at = &mut at.children[i].1;
        }
        at.entry = Some(e);
    }
}

fn write_vars(vars: &mut GroupBuilder, values: &[HostArray]) {
    for (k, w) in values.iter().enumerate() {
        vars.create_dataset(&k.to_string())
            .with_f32_data(&w.data)
            .with_shape(&shape_u64(&w.shape));
    }
}

fn write_node(g: &mut GroupBuilder, node: &Node) {
    if let Some(e) = node.entry {
        let mut vars = vars_group(g, &e.name);
        write_vars(&mut vars, &e.vars);
        g.add_group(vars.finish());
    }
    for (name, child) in &node.children {
        let mut sub = g.create_group(name);
        write_node(&mut sub, child);
        g.add_group(sub.finish());
    }
}

/// The bytes of a `.weights.h5` file holding `layers` of the model named `model`, without
/// an optimizer (as `save_weights` writes it).
pub fn encode_layers(path: &Path, model: &str, layers: &[LayerWeights]) -> KResult<Vec<u8>> {
    encode_objects(path, model, layers, None)
}

/// Writes the optimizer's variables as Keras lists them: the step counter, the learning
/// rate, then each trainable variable's slots in turn.
fn write_optimizer(fb: &mut FileBuilder, opt: &OptimizerState, lr: f32) {
    let mut o = fb.create_group("optimizer");
    let mut vars = vars_group(&mut o, "optimizer");
    vars.create_dataset("0")
        .with_i64_data(&[opt.iterations as i64])
        .with_shape(&[]);
    vars.create_dataset("1")
        .with_f32_data(&[lr])
        .with_shape(&[]);
    for (n, s) in (2..).zip(opt.slots.iter().flatten()) {
        vars.create_dataset(&n.to_string())
            .with_f32_data(&s.data)
            .with_shape(&shape_u64(&s.shape));
    }
    o.add_group(vars.finish());
    fb.add_group(o.finish());
}

/// An optimizer found in a weights file: the number of variables it holds, and its state
/// or why that does not fit the model's optimizer; `None` when the file holds none.
pub type FoundOptimizer = Option<(usize, KResult<OptimizerState>)>;

/// Reads the optimizer's state of a model whose trainable variables have `shapes` (in
/// Keras order), `slots` slots each; `None` when the file holds no optimizer.
pub fn decode_optimizer(
    path: &Path,
    bytes: Vec<u8>,
    shapes: &[Vec<usize>],
    slots: usize,
    optimizer: &str,
) -> KResult<Option<OptimizerState>> {
    let file = super::open(path, bytes)?;
    let found = read_optimizer(path, &file.root(), shapes, slots, optimizer)?;
    found.map(|(_, state)| state).transpose()
}

/// The optimizer's state under a file's root (`optimizer/vars`: the step count, the
/// learning rate, then each optimized variable's slots), when the file has one, with the
/// number of variables it holds: `Err` with Keras's reason when that is not the number the
/// model's `optimizer` (its class name) keeps for variables of these `shapes`, which a
/// caller treats as fatal (an archive names its optimizer) or as Keras's warning
/// (`load_weights`, which skips them).
fn read_optimizer(
    path: &Path,
    root: &hdf5_pure::Group,
    shapes: &[Vec<usize>],
    slots: usize,
    optimizer: &str,
) -> KResult<FoundOptimizer> {
    let Ok(o) = root.group("optimizer") else {
        return Ok(None);
    };
    let vars = group(path, &o, "vars")?;
    let expected = 2 + slots * shapes.len();
    let held = vars.datasets().map(|d| d.len()).unwrap_or(0);
    if held != expected {
        let why = format!(
            "Skipping variable loading for optimizer '{}', because it has {expected} variables whereas the saved optimizer has {held} variables. ",
            crate::keras::saving::naming::snake_case(optimizer)
        );
        return Ok(Some((held, Err(KerasError::Value(why)))));
    }
    let iterations = read_scalar_i64(path, &dataset(path, &vars, "0")?, "iterations")?;
    let mut all = Vec::with_capacity(shapes.len());
    for (i, shape) in shapes.iter().enumerate() {
        let mut per = Vec::with_capacity(slots);
        for k in 0..slots {
            let at = (2 + i * slots + k).to_string();
            let d = dataset(path, &vars, &at)?;
            let data = read_f32(path, &d, &format!("optimizer/vars/{at}"), shape)?;
            per.push(HostArray::new(shape.clone(), data));
        }
        all.push(per);
    }
    let state = OptimizerState {
        iterations: iterations.max(0) as u64,
        slots: all,
    };
    Ok(Some((held, Ok(state))))
}

/// The bytes of a file holding `layers` of the model named `model`, and the optimizer's
/// state with its learning rate when given (the `model.weights.h5` of a `.keras` archive).
pub fn encode_objects(
    path: &Path,
    model: &str,
    layers: &[LayerWeights],
    optimizer: Option<(&OptimizerState, f32)>,
) -> KResult<Vec<u8>> {
    let mut root = Node::default();
    for l in layers {
        root.insert(l);
    }
    let mut fb = FileBuilder::new();
    for (name, child) in &root.children {
        let mut g = fb.create_group(name);
        write_node(&mut g, child);
        fb.add_group(g.finish());
    }
    if let Some((opt, lr)) = optimizer {
        write_optimizer(&mut fb, opt, lr);
    }
    let mut top = fb.create_group("vars");
    let own = root.entry.map_or(&[][..], |e| e.vars.as_slice());
    top.set_attr("name", AttrValue::VarLenString(model.to_string()));
    write_vars(&mut top, own);
    fb.add_group(top.finish());
    fb.finish().map_err(|e| format_error(path, e))
}

/// What a file holds for one object: its variables; or, when their number is not the
/// object's, how many the file holds (Keras's "expected N variables, but received M"); or
/// why a variable of the right number does not fit (its shape). Keras collects these per
/// object rather than stopping at the first.
pub enum Loaded {
    Values(Vec<HostArray>),
    Count(usize),
    Unfit(String),
}

/// Reads the variables of the objects at `wanted` paths (with the shapes each object's
/// variables have in the model) from a file in Keras 3's weights layout. A path the file
/// lacks holds no variables, as Keras reads it.
pub fn decode_layers(
    path: &Path,
    bytes: Vec<u8>,
    wanted: &[(String, Vec<Vec<usize>>)],
) -> KResult<Vec<Loaded>> {
    let file = super::open(path, bytes)?;
    let mut out = Vec::with_capacity(wanted.len());
    for (at, shapes) in wanted {
        let mut g = Some(file.root());
        for part in at.split('/').filter(|p| !p.is_empty()) {
            g = g.and_then(|g| g.group(part).ok());
        }
        let vars = g.and_then(|g| g.group("vars").ok());
        let held = vars
            .as_ref()
            .map_or(0, |v| v.datasets().map_or(0, |d| d.len()));
        if held != shapes.len() {
            out.push(Loaded::Count(held));
            continue;
        }
        let Some(vars) = vars else {
            // Nothing held and nothing wanted (a layer without variables).
            out.push(Loaded::Values(vec![]));
            continue;
        };
        let mut values = Vec::with_capacity(shapes.len());
        for (k, shape) in shapes.iter().enumerate() {
            let d = dataset(path, &vars, &k.to_string())?;
            let what = match at.as_str() {
                "" => format!("vars/{k}"),
                _ => format!("{at}/vars/{k}"),
            };
            match read_f32(path, &d, &what, shape) {
                Ok(data) => values.push(HostArray::new(shape.clone(), data)),
                Err(e @ KerasError::Shape { .. }) => {
                    values.clear();
                    out.push(Loaded::Unfit(e.to_string()));
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        if values.len() == shapes.len() {
            out.push(Loaded::Values(values));
        }
    }
    Ok(out)
}
