//! Layers called on symbolic tensors (`keras.Input(...)`): the functional API. A
//! [`KerasTensor`] remembers the chain of layers it went through, which
//! `Model(inputs, outputs)` turns into a model.

use std::any::Any;

use super::call::CallArgs;
use super::handle::{HandleKind, LayerHandle};
use super::layer::{dims_text, Dims};
use crate::lang::{Ctx, Object, PyErr, PyResult, Value};

/// The symbolic tensor `Input(...)` returns; calling a layer on it appends to the chain.
pub struct KerasTensor {
    /// With the batch axis.
    pub shape: Dims,
    pub name: String,
    pub layers: Vec<Value>,
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

/// A layer called on a symbolic tensor.
pub fn call(h: &LayerHandle, call: CallArgs, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some(t) = call.inputs.downcast::<KerasTensor>() else {
        return Err(PyErr::not_implemented(
            "layers called on several symbolic inputs are not supported yet",
        ));
    };
    if !matches!(h.kind, HandleKind::Builtin) {
        return Err(PyErr::not_implemented(
            "only built-in layers can be called on keras.Input here",
        ));
    }
    let mut layers = t.layers.clone();
    layers.push(h.this.clone());
    let shape = match h.this.downcast::<super::layer::LayerObj>() {
        Some(l) => super::call::builtin_out_dims(l, &t.shape)?,
        None => t.shape.clone(),
    };
    let name = super::base::unique_name(ctx, "keras_tensor");
    Ok(Value::native(KerasTensor {
        shape,
        name,
        layers,
    }))
}
