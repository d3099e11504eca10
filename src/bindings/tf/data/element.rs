//! One `tf.data` element as a nest of arrays (an array, a tuple or a dict, as TF's nested
//! structures), converted from and to the values a cell sees, and its `TensorSpec` text.
//! Holds no pipeline logic; `dataset.rs` and `iter.rs` build and run datasets of these.

use std::rc::Rc;

use crate::bindings::tf::convert::{numpy_value, tensor_value, to_array};
use crate::bindings::tf::{py_tuple, TfError};
use crate::lang::str_repr;
use crate::lang::{Ctx, PyResult, Value};
use crate::tensor::array::NdArray;

/// One dataset element: an array, or a tuple or dict of elements (TF's nested structure).
#[derive(Clone)]
pub enum Elem {
    Leaf(Rc<NdArray>),
    Tuple(Vec<Elem>),
    Dict(Vec<(String, Elem)>),
}

impl Elem {
    /// The element a language value stands for: tuples and dicts nest, anything else
    /// (lists included, as in TF) converts to one array.
    pub fn from_value(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Elem> {
        match v {
            Value::Tuple(t) => Ok(Elem::Tuple(
                t.iter()
                    .map(|x| Elem::from_value(x, ctx))
                    .collect::<PyResult<_>>()?,
            )),
            Value::Dict(d) => {
                let pairs: Vec<(Value, Value)> = d
                    .borrow()
                    .items()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let mut out = Vec::with_capacity(pairs.len());
                for (k, v) in pairs {
                    out.push((k.as_str()?.to_string(), Elem::from_value(&v, ctx)?));
                }
                Ok(Elem::Dict(out))
            }
            other => Ok(Elem::Leaf(Rc::new(to_array(other, None, false, ctx)?))),
        }
    }

    /// The value a cell sees: tensors (`as_tensors`) or numpy arrays, in the same nesting.
    pub fn to_value(&self, as_tensors: bool) -> Value {
        match self {
            Elem::Leaf(a) if as_tensors => tensor_value((**a).clone()),
            Elem::Leaf(a) => numpy_value((**a).clone()),
            Elem::Tuple(items) => {
                Value::tuple(items.iter().map(|e| e.to_value(as_tensors)).collect())
            }
            Elem::Dict(pairs) => Value::dict_from(
                pairs
                    .iter()
                    .map(|(k, e)| (k.as_str(), e.to_value(as_tensors)))
                    .collect(),
            ),
        }
    }

    /// Applies `f` to every array, keeping the nesting.
    pub fn map_leaves(&self, f: &mut dyn FnMut(&NdArray) -> PyResult<NdArray>) -> PyResult<Elem> {
        Ok(match self {
            Elem::Leaf(a) => Elem::Leaf(Rc::new(f(a)?)),
            Elem::Tuple(items) => Elem::Tuple(
                items
                    .iter()
                    .map(|e| e.map_leaves(f))
                    .collect::<PyResult<_>>()?,
            ),
            Elem::Dict(pairs) => Elem::Dict(
                pairs
                    .iter()
                    .map(|(k, e)| Ok((k.clone(), e.map_leaves(f)?)))
                    .collect::<PyResult<_>>()?,
            ),
        })
    }

    /// The arrays in order (depth first).
    pub fn leaves(&self) -> Vec<Rc<NdArray>> {
        match self {
            Elem::Leaf(a) => vec![a.clone()],
            Elem::Tuple(items) => items.iter().flat_map(|e| e.leaves()).collect(),
            Elem::Dict(pairs) => pairs.iter().flat_map(|(_, e)| e.leaves()).collect(),
        }
    }

    /// Rebuilds this element's nesting around new arrays given in `leaves()` order.
    pub fn with_leaves(&self, next: &mut dyn Iterator<Item = NdArray>) -> PyResult<Elem> {
        self.map_leaves(&mut |_| {
            next.next()
                .ok_or_else(|| TfError::Value("element structure mismatch".into()).into())
        })
    }

    /// TF's element spec of this element, with the leading axis unknown when `batched`.
    pub fn spec(&self, unknown_leading: bool) -> String {
        match self {
            Elem::Leaf(a) => {
                let dims: Vec<String> = a
                    .shape()
                    .iter()
                    .enumerate()
                    .map(|(i, d)| {
                        if i == 0 && unknown_leading {
                            "None".to_string()
                        } else {
                            d.to_string()
                        }
                    })
                    .collect();
                format!(
                    "TensorSpec(shape={}, dtype=tf.{}, name=None)",
                    py_tuple(&dims),
                    a.dtype().name()
                )
            }
            Elem::Tuple(items) => {
                let parts: Vec<String> = items.iter().map(|e| e.spec(unknown_leading)).collect();
                py_tuple(&parts)
            }
            Elem::Dict(pairs) => {
                let parts: Vec<String> = pairs
                    .iter()
                    .map(|(k, e)| format!("{}: {}", str_repr(k), e.spec(unknown_leading)))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
        }
    }

    /// `ds.element_spec` as a value: one `TensorSpec` per array, in this element's nesting.
    pub fn spec_value(&self, unknown_leading: bool) -> Value {
        match self {
            Elem::Leaf(_) => super::iter::SpecText::value(self.spec(unknown_leading)),
            Elem::Tuple(items) => Value::tuple(
                items
                    .iter()
                    .map(|e| e.spec_value(unknown_leading))
                    .collect(),
            ),
            Elem::Dict(pairs) => Value::dict_from(
                pairs
                    .iter()
                    .map(|(k, e)| (k.as_str(), e.spec_value(unknown_leading)))
                    .collect(),
            ),
        }
    }
}
