//! `tf.TensorShape`: a tensor's shape as TensorFlow shows it (`TensorShape([5, 10])` as
//! repr, `(5, 10)` as str), indexable, iterable, comparable with tuples and lists, with
//! `as_list`, `rank` and `num_elements`. Unknown dimensions are `None`; an unknown rank is
//! a shape with no dimension list at all.

use std::any::Any;

use super::{bound, py_tuple, TfError};
use crate::bindings::common::ItemIter;
use crate::lang::{Args, CmpOp, Ctx, NativeClass, Object, PyErr, PyResult, Value};

/// A shape; `dims == None` is the unknown rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorShape {
    pub dims: Option<Vec<Option<usize>>>,
}

impl TensorShape {
    pub fn known(dims: &[usize]) -> TensorShape {
        TensorShape {
            dims: Some(dims.iter().map(|d| Some(*d)).collect()),
        }
    }

    pub fn value(dims: &[usize]) -> Value {
        Value::native(TensorShape::known(dims))
    }

    /// A shape from a Python value: `None`, a `TensorShape`, or a sequence of ints/`None`.
    pub fn from_value(v: &Value, ctx: &mut dyn Ctx) -> PyResult<TensorShape> {
        if v.is_none() {
            return Ok(TensorShape { dims: None });
        }
        if let Some(s) = v.downcast::<TensorShape>() {
            return Ok(s.clone());
        }
        if let Value::Int(n) = v {
            return Ok(TensorShape {
                dims: Some(vec![Some(dim(*n)?)]),
            });
        }
        let items = match v.as_seq() {
            Some(items) => items,
            None => ctx.iterate(v)?,
        };
        let mut dims = Vec::with_capacity(items.len());
        for item in items {
            dims.push(match item {
                Value::None => None,
                other => Some(dim(other.as_int()?)?),
            });
        }
        Ok(TensorShape { dims: Some(dims) })
    }

    fn dim_text(d: &Option<usize>) -> String {
        match d {
            Some(n) => n.to_string(),
            None => "None".into(),
        }
    }

    fn dims_or_err(&self, what: &str) -> PyResult<&Vec<Option<usize>>> {
        self.dims.as_ref().ok_or_else(|| {
            TfError::Value(format!("{what} is not defined on an unknown TensorShape.")).into()
        })
    }

    fn as_list(&self) -> PyResult<Value> {
        let dims = self.dims_or_err("as_list()")?;
        Ok(Value::list(dims.iter().map(dim_value).collect()))
    }
}

fn dim(n: i64) -> PyResult<usize> {
    usize::try_from(n).map_err(|_| {
        TfError::Value(format!(
            "Dimension {n} must be >= 0 (a shape lists sizes, or None for unknown)"
        ))
        .into()
    })
}

fn dim_value(d: &Option<usize>) -> Value {
    match d {
        Some(n) => Value::Int(*n as i64),
        None => Value::None,
    }
}

impl Object for TensorShape {
    fn type_name(&self) -> String {
        "TensorShape".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(match &self.dims {
            None => "TensorShape(None)".into(),
            Some(d) => format!(
                "TensorShape([{}])",
                d.iter().map(Self::dim_text).collect::<Vec<_>>().join(", ")
            ),
        })
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(match &self.dims {
            None => "<unknown>".into(),
            Some(d) => py_tuple(&d.iter().map(Self::dim_text).collect::<Vec<_>>()),
        })
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "rank" | "ndims" => match &self.dims {
                Some(d) => Value::Int(d.len() as i64),
                None => Value::None,
            },
            "dims" => match &self.dims {
                Some(d) => Value::list(d.iter().map(dim_value).collect()),
                None => Value::None,
            },
            "as_list" => bound::<TensorShape>(this, "as_list", |s, _, _, _| s.as_list()),
            "num_elements" => bound::<TensorShape>(this, "num_elements", |s, _, _, _| {
                Ok(match &s.dims {
                    Some(d) if d.iter().all(|x| x.is_some()) => {
                        Value::Int(d.iter().map(|x| x.unwrap_or(0) as i64).product())
                    }
                    _ => Value::None,
                })
            }),
            "is_fully_defined" => bound::<TensorShape>(this, "is_fully_defined", |s, _, _, _| {
                Ok(Value::Bool(
                    matches!(&s.dims, Some(d) if d.iter().all(|x| x.is_some())),
                ))
            }),
            _ => return Ok(None),
        }))
    }
    fn len(&self, _ctx: &mut dyn Ctx) -> PyResult<Option<usize>> {
        match &self.dims {
            Some(d) => Ok(Some(d.len())),
            None => Err(TfError::Value(
                "Cannot take the length of shape with unknown rank.".into(),
            )
            .into()),
        }
    }
    fn getitem(&self, key: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let dims = self.dims_or_err("Indexing")?;
        let i = key.as_int()?;
        let n = dims.len() as i64;
        let idx = if i < 0 { i + n } else { i };
        if idx < 0 || idx >= n {
            return Err(PyErr::index_error("list index out of range"));
        }
        Ok(dim_value(&dims[idx as usize]))
    }
    fn iter(&self, _this: &Value, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let dims = self.dims_or_err("Iteration")?;
        Ok(ItemIter::list(dims.iter().map(dim_value).collect()))
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if !matches!(op, CmpOp::Eq | CmpOp::Ne) {
            return Ok(None);
        }
        let comparable = other.downcast::<TensorShape>().is_some()
            || matches!(other, Value::List(_) | Value::Tuple(_) | Value::None);
        if !comparable {
            return Ok(None);
        }
        let same = match TensorShape::from_value(other, ctx) {
            Ok(o) => o == *self,
            Err(_) => false,
        };
        Ok(Some(Value::Bool(if op == CmpOp::Eq {
            same
        } else {
            !same
        })))
    }
    fn dir(&self) -> Vec<String> {
        [
            "as_list",
            "rank",
            "ndims",
            "dims",
            "num_elements",
            "is_fully_defined",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["TensorShape".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `tf.TensorShape(dims)`.
pub fn class() -> Value {
    NativeClass::new(
        "TensorShape",
        "tensorflow.python.framework.tensor_shape",
        "TensorShape(dims)\n\nThe shape of a tensor: a list of sizes, None where unknown.",
    )
    .constructor(|args: &Args, ctx| {
        let slots = args.bind("TensorShape", &["dims"], 1)?;
        let v = slots[0].clone().unwrap_or(Value::None);
        Ok(Value::native(TensorShape::from_value(&v, ctx)?))
    })
    .into_value()
}
