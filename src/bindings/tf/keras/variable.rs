//! A Keras layer's variable (`layer.kernel`, `model.weights[i]`): Keras 3's `Variable`,
//! printed `<Variable path=dense/kernel, shape=(4, 3), dtype=float32, value=[...]>`, whose
//! `.value` is the `tf.Variable` holding the numbers, or the `MirroredVariable` (one copy per
//! replica) when the layer was built under a strategy's scope. The layer makes it once,
//! when it is built, and hands out the same object from then on, so `model.weights[0] is
//! layer.kernel` and a layer shared by two models shares its variables. Reads go through
//! the session's execution context (a tape watches them), as reads of a `tf.Variable` do.

use std::any::Any;

use super::super::convert::{to_array, variable_in, variable_of};
use super::super::distribute::active_strategy;
use super::super::tensor::{
    array_truthy, tensor_binop, tensor_compare, tensor_getitem, tensor_iter, tensor_unary,
};
use super::super::variable::{make_variable, MirroredVariable, Variable};
use crate::lang::{BinOp, CmpOp, Ctx, Object, PyResult, UnaryOp, Value};
use crate::ops;
use crate::tensor::{shape_str, str_array, NdArray};

/// One variable of a Keras layer.
pub struct KerasVariable {
    /// `sequential/dense/kernel`: the layer's path when it was built, then the name.
    pub path: String,
    /// `kernel`.
    pub name: String,
    /// The `tf.Variable`, or the `MirroredVariable` of a strategy.
    pub value: Value,
}

impl KerasVariable {
    /// A new variable holding `a`, mirrored over the replicas of the strategy whose scope
    /// is active.
    /// A checkpoint restored before the variable existed gives it its saved value here.
    pub fn make(ctx: &mut dyn Ctx, path: &str, name: &str, a: NdArray, trainable: bool) -> Value {
        let value = make_variable(ctx, a, path, trainable);
        super::super::train::keras_variable_made(ctx, path, &value);
        Value::native(KerasVariable {
            path: path.to_string(),
            name: name.to_string(),
            value,
        })
    }

    /// Every copy: one per replica of a mirrored variable, else the one.
    pub fn copies(&self) -> Vec<ops::Variable> {
        match self.value.downcast::<MirroredVariable>() {
            Some(m) => m
                .parts
                .iter()
                .filter_map(|p| p.downcast::<Variable>())
                .map(|v| v.var.clone())
                .collect(),
            None => variable_of(&self.value).into_iter().collect(),
        }
    }

    /// The first copy (the only one outside a strategy).
    pub fn primary(&self) -> Option<ops::Variable> {
        variable_of(&self.value)
    }

    pub fn trainable(&self) -> bool {
        self.primary().is_some_and(|v| v.trainable())
    }

    pub fn shape(&self) -> Vec<usize> {
        self.primary()
            .map(|v| v.shape().to_vec())
            .unwrap_or_default()
    }

    /// The number of values it holds.
    pub fn size(&self) -> usize {
        self.shape().iter().product()
    }

    /// Whether it was made under a strategy's scope (it has one copy per replica).
    pub fn is_mirrored(&self) -> bool {
        self.value.downcast::<MirroredVariable>().is_some()
    }

    fn read(&self, ctx: &mut dyn Ctx) -> Option<ops::Tensor> {
        let var = variable_in(&self.value, ctx)?;
        Some(super::super::eager::context(ctx).read(&var))
    }

    /// Stores `a` (cast to the variable's dtype) into every copy, outside any tape: what
    /// `set_weights` and the engine's write-back do.
    pub fn store(&self, a: &NdArray) -> PyResult<()> {
        for v in self.copies() {
            v.store(a.astype(v.dtype()))
                .map_err(super::super::eager::op_err)?;
        }
        Ok(())
    }
}

/// The variable a value stands for, when it is one of a Keras layer's.
pub fn keras_variable(v: &Value) -> Option<&KerasVariable> {
    v.downcast::<KerasVariable>()
}

/// Whether the active scope would mirror a new variable.
pub fn mirrors(ctx: &mut dyn Ctx) -> bool {
    active_strategy(ctx).is_some()
}

impl Object for KerasVariable {
    fn type_name(&self) -> String {
        "Variable".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let (shape, dtype, value) = match self.primary() {
            Some(v) => {
                let a = v.snapshot();
                (shape_str(a.shape()), a.dtype().name(), str_array(&a))
            }
            None => ("()".into(), "float32", String::new()),
        };
        Ok(format!(
            "<Variable path={}, shape={shape}, dtype={dtype}, value={value}>",
            self.path
        ))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match name {
            "value" => Ok(Some(self.value.clone())),
            "path" => Ok(Some(Value::str(&self.path))),
            "name" => Ok(Some(Value::str(&self.name))),
            "trainable" => Ok(Some(Value::Bool(self.trainable()))),
            // Keras's variables name their dtype as a string.
            "dtype" => Ok(Some(Value::str(
                self.primary().map_or("float32", |v| v.dtype().name()),
            ))),
            "assign" | "assign_add" | "assign_sub" => {
                // Keras returns the variable itself after an assignment.
                let inner = ctx.getattr(&self.value, name)?;
                let me = this.clone();
                Ok(Some(crate::lang::NativeFn::value(name, "", move |a, c| {
                    c.call(&inner, a.clone())?;
                    Ok(me.clone())
                })))
            }
            _ => match &self.value {
                Value::Native(o) => o.clone().getattr(&self.value, name, ctx),
                _ => Ok(None),
            },
        }
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        match self.read(ctx) {
            Some(t) => tensor_binop(t, op, other, reflected, ctx),
            None => Ok(None),
        }
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match self.read(ctx) {
            Some(t) => tensor_compare(t, op, other, ctx),
            None => Ok(None),
        }
    }
    fn unary(&self, op: UnaryOp, ctx: &mut dyn Ctx) -> PyResult<Value> {
        match self.read(ctx) {
            Some(t) => tensor_unary(t, op, ctx),
            None => Ok(Value::None),
        }
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        match self.primary() {
            Some(v) => array_truthy(&v.snapshot()),
            None => Ok(None),
        }
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        Ok(self.shape().first().copied())
    }
    fn getitem(&self, key: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        match self.read(ctx) {
            Some(t) => tensor_getitem(t, key, ctx),
            None => Ok(Value::None),
        }
    }
    fn iter(&self, _this: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
        match self.read(ctx) {
            Some(t) => tensor_iter(t, ctx),
            None => Ok(Value::list(vec![])),
        }
    }
    fn hash(&self) -> Option<u64> {
        self.primary().map(|v| v.handle().raw())
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["Variable".into(), "KerasVariable".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A weight array from Python (`set_weights`), as float32.
pub fn weight_array(v: &Value, ctx: &mut dyn Ctx) -> PyResult<NdArray> {
    to_array(v, Some(crate::tensor::DType::F32), false, ctx)
}
