//! Layers called on symbolic tensors (`keras.Input(...)`): the functional API. A
//! [`KerasTensor`] remembers where it came from: an `Input` (with its `InputLayer`), or one
//! call of a layer on other symbolic tensors (a [`Node`]). Following those links back from
//! a model's outputs gives the graph that `Model(inputs, outputs)` runs (`graph.rs`).

use std::any::Any;

use super::call::CallArgs;
use super::handle::{HandleKind, LayerHandle};
use super::lambda::LambdaLayer;
use super::layer::{dims_text, Dims, LayerObj};
use super::merge::merge_err;
use crate::keras::LayerKind;
use crate::lang::{Ctx, Object, PyErr, PyResult, Value};

/// One call of a layer on symbolic tensors.
pub struct Node {
    pub layer: Value,
    /// The symbolic tensors it was called on, in order.
    pub inputs: Vec<Value>,
    /// Whether they were passed as a list (merge layers) rather than one tensor.
    pub list: bool,
    /// Which of the layer's symbolic calls this is, counting from 0.
    pub index: usize,
}

/// Where a symbolic tensor came from.
pub enum Source {
    /// `keras.Input(...)`, with the `InputLayer` Keras makes for it.
    Input(Value),
    Call(Node),
}

/// The symbolic tensor `Input(...)` returns and layer calls on it produce.
pub struct KerasTensor {
    /// With the batch axis.
    pub shape: Dims,
    pub name: String,
    pub source: Source,
}

impl KerasTensor {
    /// The layers of a plain chain from an `Input` to this tensor (each called once on one
    /// tensor), first to last; `None` when the tensor comes from a graph that is not a chain.
    pub fn chain(&self) -> Option<Vec<Value>> {
        let mut layers = vec![];
        let mut at = self;
        loop {
            match &at.source {
                Source::Input(_) => break,
                Source::Call(n) => {
                    let [prev] = n.inputs.as_slice() else {
                        return None;
                    };
                    if n.list {
                        return None;
                    }
                    layers.push(n.layer.clone());
                    at = prev.downcast::<KerasTensor>()?;
                }
            }
        }
        layers.reverse();
        Some(layers)
    }

    /// The tensor's shape without the batch axis (unknown sizes as 1).
    pub fn features(&self) -> Vec<usize> {
        self.shape.iter().skip(1).map(|d| d.unwrap_or(1)).collect()
    }
}

impl Object for KerasTensor {
    fn type_name(&self) -> String {
        "KerasTensor".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<KerasTensor shape={}, dtype=float32, sparse=False, ragged=False, name={}>",
            dims_text(&self.shape),
            self.name
        ))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "shape" => Some(super::layer::dims_value(&self.shape)),
            "dtype" => Some(Value::str("float32")),
            "name" => Some(Value::str(&self.name)),
            "ndim" => Some(Value::Int(self.shape.len() as i64)),
            _ => None,
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Whether a call's inputs are symbolic.
pub fn is_symbolic(v: &Value) -> bool {
    v.downcast::<KerasTensor>().is_some()
        || v.as_seq()
            .is_some_and(|items| items.iter().any(is_symbolic))
}

/// A layer called on symbolic tensors: a new node of the graph.
pub fn call(h: &LayerHandle, call: CallArgs, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if !matches!(h.kind, HandleKind::Builtin | HandleKind::Lambda) {
        return Err(PyErr::not_implemented(
            "only built-in layers can be called on keras.Input here",
        ));
    }
    let (inputs, list) = match call.inputs.downcast::<KerasTensor>() {
        Some(_) => (vec![call.inputs.clone()], false),
        None => (call.inputs.as_seq().unwrap_or_default(), true),
    };
    let mut shapes = Vec::with_capacity(inputs.len());
    for i in &inputs {
        let t = i.downcast::<KerasTensor>().ok_or_else(|| {
            PyErr::value_error(format!(
                "All layer inputs must be symbolic tensors when one is. Received: {}",
                i.type_name()
            ))
        })?;
        shapes.push(t.shape.clone());
    }
    let layer = h.this.downcast::<LayerObj>();
    let lambda = h.this.downcast::<LambdaLayer>();
    let shape = match layer.and_then(|l| l.kind()) {
        // A Lambda's function decides how many inputs it takes; the call builds it.
        _ if lambda.is_some() => {
            let dims = match lambda {
                Some(l) => l.output_dims(&shapes, list, ctx)?,
                None => vec![],
            };
            *h.core.build_shape.borrow_mut() = shapes.first().cloned();
            h.core.built.set(true);
            dims
        }
        Some(LayerKind::Merge(op)) => {
            if !list {
                let dims: Vec<usize> = shapes[0].iter().skip(1).map(|d| d.unwrap_or(0)).collect();
                return Err(merge_err(crate::keras::merge::not_a_list(&dims)));
            }
            op.out_shape(&shapes).map_err(merge_err)?
        }
        _ => {
            let [one] = shapes.as_slice() else {
                return Err(PyErr::value_error(format!(
                    "Layer '{}' expects 1 input(s), but it received {} input tensors.",
                    h.core.name(),
                    shapes.len()
                )));
            };
            match layer {
                Some(l) => super::call::builtin_out_dims(l, one)?,
                None => one.clone(),
            }
        }
    };
    let index = h.core.symbolic_calls.get();
    h.core.symbolic_calls.set(index + 1);
    let name = super::base::unique_name(ctx, "keras_tensor");
    Ok(Value::native(KerasTensor {
        shape,
        name,
        source: Source::Call(Node {
            layer: h.this.clone(),
            inputs,
            list,
            index,
        }),
    }))
}
