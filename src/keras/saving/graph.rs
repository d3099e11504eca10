//! A functional model that is not a chain (several inputs or outputs, skip connections,
//! merge layers, a layer called more than once) as Keras 3 writes it in `config.json`:
//! every layer once, in `model.layers` order, each with its `inbound_nodes` (one per call:
//! `{"args": [tensor or [tensors]], "kwargs": {}}`, a tensor being a `__keras_tensor__`
//! whose `keras_history` is `[layer, node, index]`), and the model's `input_layers` and
//! `output_layers` as such triples. This file describes the graph by layer names only; the
//! bindings make it from a model's calls and call the layers again to rebuild one. It
//! writes and reads the JSON and nothing else: no layers, no weights, no language.

use super::json::{layer_from, layer_json};
use crate::keras::config::{LayerKind, LayerSpec};
use crate::keras::error::{KResult, KerasError};
use serde_json::{json, Value};

/// A tensor of the graph: the `index`-th output of the `node`-th call of `layer`, with its
/// shape (the batch axis first, `None` where unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct TensorRef {
    pub layer: String,
    pub node: usize,
    pub index: usize,
    pub shape: Vec<Option<usize>>,
}

/// One call of a layer: the tensors it reads, and whether they were passed as a list (a
/// merge layer's) rather than one tensor.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphCall {
    pub inputs: Vec<TensorRef>,
    pub list: bool,
}

/// What a layer of the graph is.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphNode {
    /// An `InputLayer` (its shape is the layer's `batch_shape`).
    Input,
    /// One of Keras's built-in layers.
    Builtin(LayerKind),
    /// A user's layer, kept as the entry Keras writes for it (`module`, `class_name`,
    /// `config`, `registered_name`, `build_config`, and `name` and `inbound_nodes`, which
    /// writing sets again); the bindings make it and read it.
    Custom(Value),
}

/// A layer of the graph with its calls in order.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphLayer {
    pub name: String,
    pub kind: GraphNode,
    pub batch_shape: Vec<Option<usize>>,
    pub calls: Vec<GraphCall>,
}

/// A functional model's graph, by layer names.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphConfig {
    pub name: String,
    pub layers: Vec<GraphLayer>,
    /// `(layer, node, index)` of each input and each output, in the model's order.
    pub inputs: Vec<(String, usize, usize)>,
    pub outputs: Vec<(String, usize, usize)>,
}

fn dims_json(d: &[Option<usize>]) -> Value {
    Value::Array(d.iter().map(|x| json!(x)).collect())
}

fn tensor_json(t: &TensorRef) -> Value {
    json!({"class_name": "__keras_tensor__", "config": {"shape": dims_json(&t.shape),
        "dtype": "float32", "keras_history": [t.layer, t.node, t.index]}})
}

/// Keras writes one input (or output) as a bare triple and several as a list of them.
fn triples_json(t: &[(String, usize, usize)]) -> Value {
    let all: Vec<Value> = t.iter().map(|(l, n, i)| json!([l, n, i])).collect();
    match all.as_slice() {
        [one] => one.clone(),
        _ => Value::Array(all),
    }
}

impl GraphLayer {
    /// Whether the layer is an `InputLayer`.
    pub fn is_input(&self) -> bool {
        self.kind == GraphNode::Input
    }
}

impl GraphConfig {
    /// The model's entry of `config.json` (without `compile_config`).
    pub fn to_json(&self) -> Value {
        let mut layers = Vec::with_capacity(self.layers.len());
        for l in &self.layers {
            let nodes: Vec<Value> = l
                .calls
                .iter()
                .map(|c| {
                    let ts: Vec<Value> = c.inputs.iter().map(tensor_json).collect();
                    let arg = if c.list {
                        Value::Array(ts)
                    } else {
                        ts.into_iter().next().unwrap_or(Value::Null)
                    };
                    json!({"args": [arg], "kwargs": {}})
                })
                .collect();
            let mut v = match &l.kind {
                GraphNode::Custom(entry) => entry.clone(),
                GraphNode::Input => json!({"module": "keras.layers", "class_name": "InputLayer",
                    "config": {"batch_shape": dims_json(&l.batch_shape), "dtype": "float32",
                        "sparse": false, "ragged": false, "name": l.name, "optional": false},
                    "registered_name": null}),
                GraphNode::Builtin(kind) => {
                    let spec = LayerSpec {
                        name: l.name.clone(),
                        kind: kind.clone(),
                    };
                    let mut v = layer_json(&spec, &[]);
                    // The shapes of the first call's inputs, as Keras's `build_config`.
                    let shapes: Vec<Value> = l
                        .calls
                        .first()
                        .map(|c| c.inputs.iter().map(|t| dims_json(&t.shape)).collect())
                        .unwrap_or_default();
                    let list = l.calls.first().is_some_and(|c| c.list);
                    let input = if list {
                        Value::Array(shapes)
                    } else {
                        shapes.into_iter().next().unwrap_or(Value::Null)
                    };
                    if let Some(o) = v.as_object_mut() {
                        o.insert("build_config".into(), json!({ "input_shape": input }));
                    }
                    v
                }
            };
            if let Some(o) = v.as_object_mut() {
                o.insert("name".into(), json!(l.name));
                o.insert("inbound_nodes".into(), Value::Array(nodes));
            }
            layers.push(v);
        }
        json!({"module": "keras.src.models.functional", "class_name": "Functional",
            "config": {"name": self.name, "trainable": true, "layers": layers,
                "input_layers": triples_json(&self.inputs),
                "output_layers": triples_json(&self.outputs)},
            "registered_name": "Functional", "build_config": {"input_shape": null}})
    }

    /// Reads a `Functional` entry of `config.json`.
    pub fn from_json(v: &Value) -> KResult<GraphConfig> {
        let c = v.get("config").ok_or_else(|| bad("missing \"config\""))?;
        let raw = c
            .get("layers")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("\"layers\" is not a list"))?;
        let mut layers = Vec::with_capacity(raw.len());
        for l in raw {
            layers.push(graph_layer(l)?);
        }
        let g = GraphConfig {
            name: c
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("functional")
                .to_string(),
            layers,
            inputs: triples(c.get("input_layers"), "input_layers")?,
            outputs: triples(c.get("output_layers"), "output_layers")?,
        };
        g.check()?;
        Ok(g)
    }

    /// Every tensor named (a call's inputs, the model's inputs and outputs) names a layer
    /// of the graph and one of its calls (an input layer has one, call 0).
    fn check(&self) -> KResult<()> {
        let exists = |layer: &str, node: usize| {
            self.layers
                .iter()
                .find(|l| l.name == layer)
                .is_some_and(|l| node < l.calls.len().max(usize::from(l.is_input())))
        };
        let refs = self
            .layers
            .iter()
            .flat_map(|l| &l.calls)
            .flat_map(|c| &c.inputs)
            .map(|t| (t.layer.as_str(), t.node))
            .chain(self.inputs.iter().map(|(l, n, _)| (l.as_str(), *n)))
            .chain(self.outputs.iter().map(|(l, n, _)| (l.as_str(), *n)));
        for (layer, node) in refs {
            if !exists(layer, node) {
                return Err(bad(&format!("no node {node} of layer '{layer}'")));
            }
        }
        if self.inputs.is_empty() || self.outputs.is_empty() {
            return Err(bad("the model has no inputs or no outputs"));
        }
        Ok(())
    }

    /// Whether the graph is a plain chain (one input, each layer called once on the layer
    /// before it, the last one the output): such a model is read as the engine's chain.
    pub fn is_chain(&self) -> bool {
        let [first, rest @ ..] = self.layers.as_slice() else {
            return false;
        };
        if !first.is_input() || self.inputs.len() != 1 || self.outputs.len() != 1 {
            return false;
        }
        let mut prev = &first.name;
        for l in rest {
            let [call] = l.calls.as_slice() else {
                return false;
            };
            let [t] = call.inputs.as_slice() else {
                return false;
            };
            if !matches!(l.kind, GraphNode::Builtin(_))
                || call.list
                || &t.layer != prev
                || t.node != 0
            {
                return false;
            }
            prev = &l.name;
        }
        self.outputs[0].0 == *prev && self.inputs[0].0 == first.name
    }
}

fn bad(what: &str) -> KerasError {
    KerasError::Value(format!("The saved model config is not valid: {what}."))
}

fn dims_from(v: &Value) -> Option<Vec<Option<usize>>> {
    v.as_array()?
        .iter()
        .map(|d| match d {
            Value::Null => Some(None),
            d => d.as_u64().map(|x| Some(x as usize)),
        })
        .collect()
}

fn tensor_from(v: &Value) -> KResult<TensorRef> {
    let c = v.get("config").ok_or_else(|| bad("a node's tensor"))?;
    let h = c
        .get("keras_history")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("a tensor without \"keras_history\""))?;
    let (Some(layer), Some(node), Some(index)) = (
        h.first().and_then(Value::as_str),
        h.get(1).and_then(Value::as_u64),
        h.get(2).and_then(Value::as_u64),
    ) else {
        return Err(bad("a \"keras_history\" that is not [layer, node, index]"));
    };
    Ok(TensorRef {
        layer: layer.to_string(),
        node: node as usize,
        index: index as usize,
        shape: c.get("shape").and_then(dims_from).unwrap_or_default(),
    })
}

fn call_from(node: &Value) -> KResult<GraphCall> {
    // Keras 3 writes `{"args": [...], "kwargs": {}}`; a call's only argument is its input.
    let arg = node
        .get("args")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .ok_or_else(|| bad("an inbound node without \"args\""))?;
    match arg {
        Value::Array(items) => Ok(GraphCall {
            inputs: items.iter().map(tensor_from).collect::<KResult<_>>()?,
            list: true,
        }),
        one => Ok(GraphCall {
            inputs: vec![tensor_from(one)?],
            list: false,
        }),
    }
}

fn graph_layer(l: &Value) -> KResult<GraphLayer> {
    let c = l
        .get("config")
        .ok_or_else(|| bad("a layer without \"config\""))?;
    let name = l
        .get("name")
        .or_else(|| c.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| bad("a layer without a name"))?
        .to_string();
    if l.get("class_name").and_then(Value::as_str) == Some("InputLayer") {
        let shape = c
            .get("batch_shape")
            .or_else(|| c.get("batch_input_shape"))
            .and_then(dims_from)
            .ok_or_else(|| bad(&format!("input layer '{name}' has no batch_shape")))?;
        return Ok(GraphLayer {
            name,
            kind: GraphNode::Input,
            batch_shape: shape,
            calls: vec![],
        });
    }
    let kind = if super::is_custom(l) {
        // Kept whole: Keras's errors for it show the entry as the file holds it.
        GraphNode::Custom(l.clone())
    } else {
        GraphNode::Builtin(layer_from(l)?.ok_or_else(|| bad("a layer"))?.kind)
    };
    let calls = l
        .get("inbound_nodes")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(call_from).collect::<KResult<Vec<_>>>())
        .transpose()?
        .unwrap_or_default();
    Ok(GraphLayer {
        name,
        kind,
        batch_shape: vec![],
        calls,
    })
}

fn triples(v: Option<&Value>, what: &str) -> KResult<Vec<(String, usize, usize)>> {
    let one = |t: &Value| -> Option<(String, usize, usize)> {
        let a = t.as_array()?;
        Some((
            a.first()?.as_str()?.to_string(),
            a.get(1)?.as_u64()? as usize,
            a.get(2)?.as_u64()? as usize,
        ))
    };
    let v = v.ok_or_else(|| bad(&format!("missing \"{what}\"")))?;
    if let Some(t) = one(v) {
        return Ok(vec![t]);
    }
    // A dict of inputs (Keras 3 keeps their keys) is read in the order written.
    let items: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        Value::Object(o) => o.values().collect(),
        _ => vec![],
    };
    items
        .into_iter()
        .map(|t| one(t).ok_or_else(|| bad(&format!("\"{what}\""))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Activation;
    use crate::keras::config::{Act, Init, MergeOp};

    fn dense(units: usize) -> LayerKind {
        LayerKind::Dense {
            units,
            activation: Act::Elem(Activation::Linear),
            use_bias: true,
            kernel_initializer: Init::GlorotUniform,
            bias_initializer: Init::Zeros,
        }
    }

    fn t(layer: &str, node: usize, width: usize) -> TensorRef {
        TensorRef {
            layer: layer.into(),
            node,
            index: 0,
            shape: vec![None, Some(width)],
        }
    }

    fn skip() -> GraphConfig {
        let layer = |name: &str, kind, calls| GraphLayer {
            name: String::from(name),
            kind: GraphNode::Builtin(kind),
            batch_shape: vec![],
            calls,
        };
        GraphConfig {
            name: "functional".into(),
            layers: vec![
                GraphLayer {
                    name: "x".into(),
                    kind: GraphNode::Input,
                    batch_shape: vec![None, Some(3)],
                    calls: vec![],
                },
                layer(
                    "dense",
                    dense(3),
                    vec![GraphCall {
                        inputs: vec![t("x", 0, 3)],
                        list: false,
                    }],
                ),
                layer(
                    "add",
                    LayerKind::Merge(MergeOp::Add),
                    vec![GraphCall {
                        inputs: vec![t("dense", 0, 3), t("x", 0, 3)],
                        list: true,
                    }],
                ),
            ],
            inputs: vec![("x".into(), 0, 0)],
            outputs: vec![("add".into(), 0, 0)],
        }
    }

    #[test]
    fn a_skip_connection_reads_back_as_written_and_is_not_a_chain() {
        let g = skip();
        let v = g.to_json();
        assert_eq!(v["config"]["input_layers"], json!(["x", 0, 0]));
        let add = &v["config"]["layers"][2];
        assert_eq!(
            add["inbound_nodes"][0]["args"][0][1]["config"]["keras_history"],
            json!(["x", 0, 0])
        );
        assert_eq!(
            add["build_config"]["input_shape"],
            json!([[null, 3], [null, 3]])
        );
        let back = GraphConfig::from_json(&v).unwrap();
        assert_eq!(back, g);
        assert!(!back.is_chain());
    }

    #[test]
    fn a_history_naming_a_missing_layer_is_a_value_error() {
        let mut v = skip().to_json();
        v["config"]["output_layers"] = json!(["nowhere", 0, 0]);
        let e = GraphConfig::from_json(&v).unwrap_err();
        assert_eq!(e.py_exception(), "ValueError");
        assert!(
            e.to_string().contains("no node 0 of layer 'nowhere'"),
            "{e}"
        );
    }
}
