//! The graph of a functional model (`Model(inputs, outputs)` on symbolic tensors that do
//! not form a plain chain): its inputs, its outputs, and the layer calls in an order where
//! every call comes after the calls whose outputs it reads. Run on data it calls each layer
//! on its inputs' values (`layer(x)`, through the op library), so a layer called twice
//! shares its weights, and under a gradient tape the gradients of a tensor read by several
//! layers are summed. It also answers what `model.layers`, `model.inputs`, `summary()`'s
//! "Connected to" and `fit`'s lists and dicts of arrays need. It owns no weights.

use super::call::call_layer;
use super::handle::LayerHandle;
use super::symbolic::{KerasTensor, Source};
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};

/// One layer call of the graph.
pub struct Step {
    pub layer: Value,
    /// The slots it reads, in order.
    pub inputs: Vec<usize>,
    /// Whether it is called on a list of tensors.
    pub list: bool,
    /// The slot it writes.
    pub output: usize,
}

/// A functional model's graph.
pub struct Graph {
    /// The model's input tensors, in the order given (they fill slots `0..inputs.len()`).
    pub inputs: Vec<Value>,
    pub outputs: Vec<Value>,
    /// The `inputs` and `outputs` arguments as given (a tensor, a list or a dict):
    /// `model.input` and `model.output`.
    pub input_struct: Value,
    pub output_struct: Value,
    /// Whether the outputs were given as one tensor rather than a list.
    pub single_output: bool,
    /// Every tensor of the graph, by slot.
    pub tensors: Vec<Value>,
    pub steps: Vec<Step>,
    /// The slot of each output.
    pub output_slots: Vec<usize>,
    /// Inputs (by slot) and steps (by index) in the order the walk from the outputs first
    /// reached them: Keras breaks ties between layers of equal depth by this order.
    order: Vec<Entry>,
}

/// Why the walk from an output stopped.
enum Walk {
    /// It reached an `Input` that is not among the model's inputs.
    Disconnected,
    Err(PyErr),
}

#[derive(Clone, Copy, PartialEq)]
enum Entry {
    Input(usize),
    Step(usize),
}

/// The symbolic tensors of a `Model` argument: one tensor, a list or tuple, or a dict
/// (its values, in order).
pub fn tensors_of(v: &Value, what: &str) -> PyResult<(Vec<Value>, bool)> {
    if v.downcast::<KerasTensor>().is_some() {
        return Ok((vec![v.clone()], true));
    }
    let items = match v {
        Value::Dict(d) => d.borrow().items().map(|(_, x)| x.clone()).collect(),
        _ => v.as_seq().ok_or_else(|| bad_arg(what, v))?,
    };
    if items.is_empty() || items.iter().any(|i| i.downcast::<KerasTensor>().is_none()) {
        return Err(bad_arg(what, v));
    }
    Ok((items, false))
}

fn bad_arg(what: &str, v: &Value) -> PyErr {
    PyErr::type_error(format!(
        "Model(inputs, outputs) expects symbolic tensors (keras.Input and layer calls on \
         them) as {what}; got {}",
        v.type_name()
    ))
}

impl Graph {
    /// The graph from `inputs` to `outputs`, or Keras's error when an output depends on a
    /// tensor that is not among the inputs.
    pub fn new(input_struct: &Value, output_struct: &Value) -> PyResult<Graph> {
        let (inputs, _) = tensors_of(input_struct, "inputs")?;
        let (outputs, single_output) = tensors_of(output_struct, "outputs")?;
        let mut g = Graph {
            tensors: inputs.clone(),
            inputs,
            outputs: outputs.clone(),
            input_struct: input_struct.clone(),
            output_struct: output_struct.clone(),
            single_output,
            steps: vec![],
            output_slots: vec![],
            order: vec![],
        };
        for (i, o) in outputs.iter().enumerate() {
            let slot = g.visit(o, 0).map_err(|e| match e {
                Walk::Disconnected => {
                    let path = if single_output {
                        String::new()
                    } else {
                        i.to_string()
                    };
                    PyErr::value_error(format!(
                        "Output with path `{path}` is not connected to `inputs`"
                    ))
                }
                Walk::Err(e) => e,
            })?;
            g.output_slots.push(slot);
        }
        Ok(g)
    }

    fn slot_of(&self, t: &Value) -> Option<usize> {
        self.tensors.iter().position(|x| x.is(t))
    }

    /// Adds the calls that make `t` (after those it reads) and returns its slot.
    fn visit(&mut self, t: &Value, depth: usize) -> Result<usize, Walk> {
        if let Some(s) = self.slot_of(t) {
            if s < self.inputs.len() && !self.order.contains(&Entry::Input(s)) {
                self.order.push(Entry::Input(s));
            }
            return Ok(s);
        }
        let kt = t
            .downcast::<KerasTensor>()
            .ok_or_else(|| PyErr::type_error("a functional graph holds symbolic tensors only"))
            .map_err(Walk::Err)?;
        // Symbolic tensors only link back to older ones, so the walk ends; the bound keeps
        // a pathological program from exhausting the stack.
        if depth > 10_000 {
            return Err(Walk::Err(PyErr::new(
                "RecursionError",
                "maximum recursion depth exceeded while building the functional graph",
            )));
        }
        let node = match &kt.source {
            Source::Call(n) => n,
            Source::Input(_) => return Err(Walk::Disconnected),
        };
        let mut ins = Vec::with_capacity(node.inputs.len());
        for i in &node.inputs {
            ins.push(self.visit(i, depth + 1)?);
        }
        self.tensors.push(t.clone());
        let output = self.tensors.len() - 1;
        self.steps.push(Step {
            layer: node.layer.clone(),
            inputs: ins,
            list: node.list,
            output,
        });
        self.order.push(Entry::Step(self.steps.len() - 1));
        Ok(output)
    }

    /// `model.layers` as Keras orders them: by depth (the longest path to an output),
    /// deepest first, ties in the order the walk from the outputs reached them; the
    /// `InputLayer` of each input among them, and a shared layer once.
    pub fn layers(&self) -> Vec<Value> {
        let layer_of = |e: Entry| -> Option<Value> {
            match e {
                Entry::Step(i) => self.steps.get(i).map(|s| s.layer.clone()),
                Entry::Input(i) => match &self.inputs.get(i)?.downcast::<KerasTensor>()?.source {
                    Source::Input(l) => Some(l.clone()),
                    Source::Call(_) => None,
                },
            }
        };
        // The entry that makes each slot.
        let mut maker: Vec<Option<Entry>> = vec![None; self.tensors.len()];
        for &e in &self.order {
            match e {
                Entry::Input(i) => maker[i] = Some(e),
                Entry::Step(i) => {
                    if let Some(s) = self.steps.get(i) {
                        maker[s.output] = Some(e);
                    }
                }
            }
        }
        // Depths from the outputs back, a shared layer's calls at its deepest, as Keras's
        // `_build_map` computes them.
        let mut depth: Vec<usize> = vec![0; self.order.len()];
        let mut layer_depth: Vec<(Value, usize)> = vec![];
        for k in (0..self.order.len()).rev() {
            let e = self.order[k];
            let Some(layer) = layer_of(e) else { continue };
            let d = match layer_depth.iter_mut().find(|(l, _)| l.is(&layer)) {
                Some((_, ld)) => {
                    *ld = (*ld).max(depth[k]);
                    *ld
                }
                None => {
                    layer_depth.push((layer, depth[k]));
                    depth[k]
                }
            };
            depth[k] = d;
            if let Entry::Step(i) = e {
                for &slot in self.steps.get(i).map_or(&[][..], |s| &s.inputs) {
                    if let Some(p) =
                        maker[slot].and_then(|m| self.order.iter().position(|x| *x == m))
                    {
                        depth[p] = depth[p].max(d + 1);
                    }
                }
            }
        }
        let mut ranked: Vec<(usize, usize, Value)> = vec![];
        for (k, &e) in self.order.iter().enumerate() {
            let Some(layer) = layer_of(e) else { continue };
            let d = layer_depth
                .iter()
                .find(|(l, _)| l.is(&layer))
                .map_or(depth[k], |(_, d)| *d);
            if !ranked.iter().any(|(_, _, l)| l.is(&layer)) {
                ranked.push((d, k, layer));
            }
        }
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked.into_iter().map(|(_, _, l)| l).collect()
    }

    /// The input tensors' names: the keys of a dict of arrays.
    pub fn input_names(&self) -> Vec<String> {
        self.inputs
            .iter()
            .filter_map(|i| i.downcast::<KerasTensor>().map(|k| k.name.clone()))
            .collect()
    }

    /// Each input's shape without the batch axis.
    pub fn input_features(&self) -> Vec<Vec<usize>> {
        self.inputs
            .iter()
            .filter_map(|i| i.downcast::<KerasTensor>().map(|k| k.features()))
            .collect()
    }

    /// The values of a call's inputs (one tensor, a list or tuple, or a dict keyed by input
    /// names), one per input.
    pub fn bind_inputs(&self, x: &Value) -> PyResult<Vec<Value>> {
        let n = self.inputs.len();
        let items = match x {
            Value::Dict(d) => {
                let mut out = Vec::with_capacity(n);
                for name in self.input_names() {
                    let v = d.borrow().get_str(&name);
                    out.push(v.ok_or_else(|| PyErr::key_error(format!("'{name}'")))?);
                }
                out
            }
            Value::List(_) | Value::Tuple(_)
                if n > 1 || x.as_seq().is_some_and(|s| s.len() == 1) =>
            {
                x.as_seq().unwrap_or_default()
            }
            _ => vec![x.clone()],
        };
        if items.len() != n {
            return Err(PyErr::value_error(format!(
                "Layer \"{}\" expects {n} input(s), but it received {} input tensors.",
                "functional",
                items.len()
            )));
        }
        Ok(items)
    }

    /// Runs the graph on data: every layer called in order, with `training`.
    pub fn run(&self, x: &Value, training: bool, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let mut vals: Vec<Option<Value>> = vec![None; self.tensors.len()];
        for (slot, v) in self.bind_inputs(x)?.into_iter().enumerate() {
            vals[slot] = Some(v);
        }
        for s in &self.steps {
            let mut ins = Vec::with_capacity(s.inputs.len());
            for &i in &s.inputs {
                ins.push(vals[i].clone().ok_or_else(|| {
                    PyErr::runtime_error("a functional graph ran a layer before its input")
                })?);
            }
            let arg = match (s.list, ins.len()) {
                (false, 1) => ins.remove(0),
                _ => Value::list(ins),
            };
            let args = Args::new(vec![arg]).with_kw("training", Value::Bool(training));
            vals[s.output] = Some(call_layer(&s.layer, args, ctx)?);
        }
        let outs: Vec<Value> = self
            .output_slots
            .iter()
            .map(|&o| vals[o].clone().unwrap_or(Value::None))
            .collect();
        Ok(match (self.single_output, outs.len()) {
            (true, 1) => outs.into_iter().next().unwrap_or(Value::None),
            _ => Value::list(outs),
        })
    }

    /// "Connected to" for `layer`'s row in `summary()`: each input of each of its calls in
    /// this graph, as `name[node][tensor]`, and `-` for an input layer.
    pub fn connected_to(&self, layer: &Value, ctx: &mut dyn Ctx) -> String {
        let mut parts = vec![];
        for s in self.steps.iter().filter(|s| s.layer.is(layer)) {
            for &i in &s.inputs {
                parts.push(self.tensor_origin(i, ctx));
            }
        }
        if parts.is_empty() {
            "-".into()
        } else {
            parts.join(", ")
        }
    }

    /// The symbolic shape `layer` gives in this graph (its last call's, or an input's).
    pub fn output_dims(&self, layer: &Value) -> Option<super::layer::Dims> {
        let slot = match self.steps.iter().rev().find(|s| s.layer.is(layer)) {
            Some(s) => s.output,
            None => self.inputs.iter().position(|i| {
                matches!(&i.downcast::<KerasTensor>().map(|k| &k.source),
                    Some(Source::Input(l)) if l.is(layer))
            })?,
        };
        Some(
            self.tensors
                .get(slot)?
                .downcast::<KerasTensor>()?
                .shape
                .clone(),
        )
    }

    /// `name[node][0]` for the tensor in `slot`.
    fn tensor_origin(&self, slot: usize, ctx: &mut dyn Ctx) -> String {
        let Some(t) = self
            .tensors
            .get(slot)
            .and_then(|t| t.downcast::<KerasTensor>())
        else {
            return "?".into();
        };
        let (layer, node) = match &t.source {
            Source::Input(l) => (l, 0),
            Source::Call(n) => (&n.layer, n.index),
        };
        let name = LayerHandle::of(layer, ctx)
            .map(|h| h.core.name())
            .unwrap_or_default();
        format!("{name}[{node}][0]")
    }
}
