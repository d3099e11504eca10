//! The variables an optimizer or a metric keeps (`optimizer.iterations`, its
//! `learning_rate`, slots, a metric's `total` and `count`), shown as Keras 3 shows its
//! backend `Variable` (`<Variable path=adam/iteration, shape=(), dtype=int64, value=0>`).
//! Each wraps an op-library [`Variable`](crate::ops::Variable) whose name is the Keras path;
//! arithmetic reads it through the session's execution context like any `tf.Variable`
//! (`convert::variable_of` knows it), and `assign`, `assign_add`, `assign_sub` write it
//! through the context.

use std::any::Any;

use super::super::bound;
use super::super::convert::to_array;
use super::super::eager::{context, run, wrap};
use super::super::tensor::{
    array_attr, array_truthy, numpy_text, tensor_binop, tensor_compare, tensor_unary,
};
use crate::lang::float_repr;
use crate::lang::{Args, BinOp, CmpOp, Ctx, Object, PyResult, UnaryOp, Value};
use crate::ops::{self, Assign};
use crate::tensor::{shape_str, NdArray};

/// One optimizer or metric variable.
pub struct StateVariable {
    pub var: ops::Variable,
}

impl StateVariable {
    pub fn value(var: &ops::Variable) -> Value {
        Value::native(StateVariable { var: var.clone() })
    }
}

/// The value as Keras's repr prints it: a scalar as the Python number it converts to, an
/// array as numpy's str.
fn value_text(a: &NdArray) -> String {
    if a.ndim() == 0 {
        if a.dtype().is_float() {
            let (_, v) = a.to_f64_vec();
            return float_repr(v.first().copied().unwrap_or(0.0));
        }
        let (_, v) = a.to_i64_vec();
        return v.first().copied().unwrap_or(0).to_string();
    }
    numpy_text(a, false)
}

impl Object for StateVariable {
    fn type_name(&self) -> String {
        "Variable".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let a = self.var.snapshot();
        Ok(format!(
            "<Variable path={}, shape={}, dtype={}, value={}>",
            self.var.name(),
            shape_str(a.shape()),
            a.dtype().name(),
            value_text(&a)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let a = self.var.snapshot();
        if let Some(v) =
            array_attr::<StateVariable>(this, &a, name, |v| (*v.var.snapshot()).clone())
        {
            return Ok(Some(v));
        }
        let how = match name {
            "assign" => Assign::Set,
            "assign_add" => Assign::Add,
            "assign_sub" => Assign::Sub,
            "path" => return Ok(Some(Value::str(self.var.name()))),
            "name" => {
                let short = self.var.name().rsplit('/').next().unwrap_or_default();
                return Ok(Some(Value::str(short)));
            }
            "trainable" => return Ok(Some(Value::Bool(self.var.trainable()))),
            "value" => {
                return Ok(Some(bound::<StateVariable>(this, name, |v, _, _, ctx| {
                    Ok(wrap(context(ctx).read(&v.var)))
                })))
            }
            _ => return Ok(None),
        };
        let label = name.to_string();
        Ok(Some(bound::<StateVariable>(
            this,
            name,
            move |v, this, args: &Args, ctx| {
                let s = args.bind(&label, &["value"], 1)?;
                let new = to_array(
                    s[0].as_ref().unwrap_or(&Value::None),
                    Some(v.var.dtype()),
                    false,
                    ctx,
                )?;
                let t = ops::Tensor::new(new);
                run(ctx, |e| e.assign(&v.var, how, &t))?;
                Ok(this.clone())
            },
        )))
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        let t = context(ctx).read(&self.var);
        tensor_binop(t, op, other, reflected, ctx)
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let t = context(ctx).read(&self.var);
        tensor_compare(t, op, other, ctx)
    }
    fn unary(&self, op: UnaryOp, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let t = context(ctx).read(&self.var);
        tensor_unary(t, op, ctx)
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        array_truthy(&self.var.snapshot())
    }
    fn hash(&self) -> Option<u64> {
        Some(self.var.handle().raw())
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["Variable".into(), "KerasVariable".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Whether `v` is one of these variables (for `convert::variable_of`).
pub fn state_variable_of(v: &Value) -> Option<ops::Variable> {
    v.downcast::<StateVariable>().map(|s| s.var.clone())
}
