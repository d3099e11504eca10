//! numpy scalars (`np.float64(1.5)`, `np.int64(3)`, `np.True_`): what reductions and
//! element access return. Their repr is numpy 2's (`np.float64(1.5)`), their str the bare
//! value; arithmetic, comparison and attributes go through the 0-d array path so the
//! promotion rules are the same as for arrays.

use std::any::Any;
use std::rc::Rc;

use crate::lang::{BinOp, CmpOp, Ctx, Object, PyResult, UnaryOp, Value};
use crate::tensor::format::{scalar_repr, scalar_str};
use crate::tensor::{NdArray, Scalar};

use super::ndarray::{array_attr, array_binop, array_compare, array_unary};

pub struct PyScalar(pub Scalar);

impl PyScalar {
    fn arr(&self) -> Rc<NdArray> {
        Rc::new(NdArray::from_scalar(self.0))
    }
}

impl Object for PyScalar {
    fn type_name(&self) -> String {
        match self.0 {
            Scalar::Bool(_) => "bool".into(),
            s => s.dtype().name().into(),
        }
    }
    fn class_chain(&self) -> Vec<String> {
        let mut v = vec![self.type_name()];
        if self.0.dtype().is_float() {
            v.push("floating".into());
            if matches!(self.0, Scalar::F64(_)) {
                v.push("float".into());
            }
        } else if self.0.dtype().is_int() {
            v.push("integer".into());
        }
        v.push("generic".into());
        v
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(scalar_repr(self.0))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(scalar_str(self.0))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        array_attr(this, self.arr(), name, ctx)
    }
    fn binop(
        &self,
        op: BinOp,
        other: &Value,
        reflected: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Option<Value>> {
        array_binop(&self.arr(), op, other, reflected, ctx)
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        array_compare(&self.arr(), op, other, ctx)
    }
    fn unary(&self, op: UnaryOp, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        array_unary(&self.arr(), op)
    }
    fn truthy(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<bool>> {
        Ok(Some(self.0.as_f64() != 0.0))
    }
    fn hash(&self) -> Option<u64> {
        // Equal numbers hash alike, as Python requires of 1 == np.int64(1) == 1.0.
        let x = self.0.as_f64();
        Some(if x.fract() == 0.0 {
            x as i64 as u64
        } else {
            x.to_bits()
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
