//! `np.float32`, `np.int64`, ... as Python objects: classes that construct numpy scalars
//! (`np.float32(2.5)`) or arrays (`np.float32([1, 2])`), are accepted wherever a dtype is
//! (`astype(np.float32)`, `dtype=np.uint8`), and the `dtype('float32')` instances that
//! `a.dtype` returns, which compare equal to their names and classes.

use std::any::Any;

use crate::lang::{Args, CmpOp, Ctx, Object, PyErr, PyResult, Value};
use crate::tensor::{DType, NdArray};

use super::convert::{as_array, err, float_of, to_array, wrap};

/// A dtype: the scalar class (`np.float32`) or a dtype instance (`a.dtype`).
pub struct PyDType {
    pub dt: DType,
    /// True for `np.float32` itself, false for `dtype('float32')`.
    pub is_class: bool,
}

/// The numpy class name of a dtype's scalars (`bool` is `bool_`... but prints `numpy.bool`).
fn class_name(dt: DType) -> &'static str {
    dt.name()
}

impl Object for PyDType {
    fn type_name(&self) -> String {
        if self.is_class {
            "type".into()
        } else {
            format!("dtype[{}]", class_name(self.dt))
        }
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(if self.is_class {
            format!("<class 'numpy.{}'>", class_name(self.dt))
        } else {
            format!("dtype('{}')", self.dt.name())
        })
    }
    fn str(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        if self.is_class {
            self.repr(ctx)
        } else {
            Ok(self.dt.name().to_string())
        }
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "__name__" | "name" => Some(Value::str(self.dt.name())),
            "itemsize" => Some(Value::Int(self.dt.itemsize() as i64)),
            "kind" => Some(Value::str(match self.dt {
                DType::Bool => "b",
                DType::U8 => "u",
                DType::I32 | DType::I64 => "i",
                _ => "f",
            })),
            "type" => Some(Value::native(PyDType {
                dt: self.dt,
                is_class: true,
            })),
            _ => None,
        })
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        if !self.is_class {
            return Err(PyErr::type_error("'numpy.dtype' object is not callable"));
        }
        let slots = args.bind(self.dt.name(), &["value"], 0)?;
        let v = slots[0].clone().unwrap_or(Value::Int(0));
        let arr = match &v {
            Value::Str(s) => {
                let x: f64 = s.trim().parse().map_err(|_| {
                    PyErr::value_error(format!("could not convert string to float: '{s}'"))
                })?;
                NdArray::full(&[], x, self.dt).map_err(err)?
            }
            Value::Float(_) | Value::Int(_) | Value::Bool(_) => {
                let a = to_array(&v, None, ctx)?;
                if let (Value::Int(i), true) = (&v, self.dt.is_int()) {
                    if !self.dt.holds_int(*i) {
                        return Err(PyErr::new(
                            "OverflowError",
                            format!("Python integer {i} out of bounds for {}", self.dt.name()),
                        ));
                    }
                }
                let _ = float_of(&v)?;
                a.astype(self.dt)
            }
            other => match as_array(other) {
                Some(a) => a.astype(self.dt),
                None => to_array(other, Some(self.dt), ctx)?.as_ref().clone(),
            },
        };
        Ok(wrap(arr))
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if !matches!(op, CmpOp::Eq | CmpOp::Ne) {
            return Ok(None);
        }
        let same = match other {
            Value::Str(s) => DType::parse(s) == Some(self.dt),
            o => match o.downcast::<PyDType>() {
                Some(d) => {
                    d.dt == self.dt
                        && (d.is_class == self.is_class || !self.is_class || !d.is_class)
                }
                None => super::convert::dtype_arg(o, ctx).ok().flatten() == Some(self.dt),
            },
        };
        Ok(Some(Value::Bool(if op == CmpOp::Eq {
            same
        } else {
            !same
        })))
    }
    fn hash(&self) -> Option<u64> {
        Some(self.dt as u64 + 0x5eed)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
