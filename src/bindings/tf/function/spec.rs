//! `tf.TensorSpec` and the trace types a `tf.function` keys its traces by, as TF 2.21
//! has them: a tensor argument by its dtype and shape (`TensorSpec(shape=(2,),
//! dtype=tf.int32, name=None)`), a Python value by value (`Literal[2]`, where `2 == 2.0`
//! is one key), lists, tuples and dicts by structure (`List[...]`, `Tuple[...]`,
//! `Dict[['a', ...]]`, dict keys in sorted order as TF's `nest` takes them), a variable
//! by its dtype and shape, any other object by identity. Relaxed types (unknown
//! dimensions or rank, from an `input_signature` or `reduce_retracing`) accept every
//! concrete type they cover.

use std::any::Any;

use super::super::bound;
use super::super::convert::{dtype_arg, engine_dtype, held_array, tf_dtype, variable_of};
use super::super::dtypes::DType as TfDType;
use super::super::shape::TensorShape;
use super::super::tensor::Tensor;
use crate::lang::str_repr;
use crate::lang::{Args, CmpOp, Ctx, HashKey, NativeClass, Object, PyResult, Value};
use crate::ops::StaticShape;
use crate::tensor::DType;

/// `tf.TensorSpec(shape, dtype=tf.float32, name=None)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorSpec {
    pub shape: StaticShape,
    pub dtype: DType,
    pub name: Option<String>,
}

/// A shape as TF prints it in a spec: `(None, 3)`, `()`, `<unknown>`.
pub fn shape_text(shape: &StaticShape) -> String {
    match shape {
        None => "<unknown>".into(),
        Some(d) => {
            let items: Vec<String> = d
                .iter()
                .map(|x| x.map_or("None".to_string(), |n| n.to_string()))
                .collect();
            super::super::py_tuple(&items)
        }
    }
}

/// Whether two static shapes can describe the same tensor.
fn shapes_compatible(a: &StaticShape, b: &StaticShape) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| p.is_none() || q.is_none() || p == q)
        }
        _ => true,
    }
}

/// The most specific shape covering both (TF's relaxation under `reduce_retracing`).
fn shape_join(a: &StaticShape, b: &StaticShape) -> StaticShape {
    match (a, b) {
        (Some(x), Some(y)) if x.len() == y.len() => Some(
            x.iter()
                .zip(y)
                .map(|(p, q)| if p == q { *p } else { None })
                .collect(),
        ),
        _ => None,
    }
}

pub fn known(shape: &[usize]) -> StaticShape {
    Some(shape.iter().map(|d| Some(*d)).collect())
}

impl TensorSpec {
    pub fn text(&self) -> String {
        format!(
            "TensorSpec(shape={}, dtype=tf.{}, name={})",
            shape_text(&self.shape),
            self.dtype.name(),
            self.name.as_deref().map_or("None".to_string(), str_repr)
        )
    }

    /// The spec of a value that has one: a spec, a tensor, a variable or a numpy array.
    fn of_value(v: &Value) -> Option<TensorSpec> {
        if let Some(s) = v.downcast::<TensorSpec>() {
            return Some(s.clone());
        }
        if let Some(t) = v.downcast::<Tensor>() {
            return Some(TensorSpec {
                shape: known(t.tensor.shape()),
                dtype: t.tensor.dtype(),
                name: None,
            });
        }
        if let Some(var) = variable_of(v) {
            return Some(TensorSpec {
                shape: known(var.shape()),
                dtype: var.dtype(),
                name: None,
            });
        }
        held_array(v).map(|a| TensorSpec {
            shape: known(a.shape()),
            dtype: a.dtype(),
            name: None,
        })
    }

    pub fn is_compatible_with(&self, other: &TensorSpec) -> bool {
        self.dtype == other.dtype && shapes_compatible(&self.shape, &other.shape)
    }
}

impl Object for TensorSpec {
    fn type_name(&self) -> String {
        "TensorSpec".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(self.text())
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "shape" => Value::native(TensorShape {
                dims: self.shape.clone(),
            }),
            "dtype" => Value::native(tf_dtype(self.dtype)),
            "name" => self.name.as_deref().map_or(Value::None, Value::str),
            "is_compatible_with" => {
                bound::<TensorSpec>(this, "is_compatible_with", |s, _, args, _| {
                    let a = args.bind("is_compatible_with", &["spec_or_value"], 1)?;
                    let other = a[0].as_ref().and_then(TensorSpec::of_value);
                    Ok(Value::Bool(other.is_some_and(|o| s.is_compatible_with(&o))))
                })
            }
            _ => return Ok(None),
        }))
    }
    fn compare(&self, op: CmpOp, other: &Value, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let same = other.downcast::<TensorSpec>().is_some_and(|o| o == self);
        Ok(match op {
            CmpOp::Eq => Some(Value::Bool(same)),
            CmpOp::Ne => Some(Value::Bool(!same)),
            _ => None,
        })
    }
    fn hash(&self) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        Hash::hash(self, &mut h);
        Some(h.finish())
    }
    fn dir(&self) -> Vec<String> {
        ["shape", "dtype", "name", "is_compatible_with"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["TensorSpec".into(), "TypeSpec".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The `tf.TensorSpec` class.
pub fn class() -> Value {
    NativeClass::new(
        "TensorSpec",
        "tensorflow.python.framework.tensor",
        "TensorSpec(shape, dtype=tf.float32, name=None)\n\nDescribes the type of a \
         tf.Tensor: its shape (None for unknown dimensions) and dtype.",
    )
    .constructor(|args: &Args, ctx| {
        let s = args.bind("TensorSpec", &["shape", "dtype", "name"], 1)?;
        let shape = TensorShape::from_value(s[0].as_ref().unwrap_or(&Value::None), ctx)?.dims;
        let dtype = match s[1].as_ref().filter(|v| !v.is_none()) {
            Some(d) => dtype_arg(Some(d), ctx)?.unwrap_or(DType::F32),
            None => engine_dtype(&TfDType { name: "float32" })?,
        };
        let name = match s[2].as_ref() {
            Some(Value::Str(n)) => Some(n.to_string()),
            _ => None,
        };
        Ok(Value::native(TensorSpec { shape, dtype, name }))
    })
    .into_value()
}

/// Text that rides along a key without taking part in its equality or hash.
#[derive(Debug, Clone)]
pub struct Shown(pub String);

impl PartialEq for Shown {
    fn eq(&self, _other: &Shown) -> bool {
        true
    }
}

impl Eq for Shown {}

impl std::hash::Hash for Shown {
    fn hash<H: std::hash::Hasher>(&self, _state: &mut H) {}
}

/// The type of one argument for the trace cache.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TraceType {
    Tensor(TensorSpec),
    Variable {
        dtype: DType,
        shape: Vec<usize>,
    },
    /// A Python value, equal when Python's `==` and `hash` agree (`2 == 2.0`); the text
    /// is the first value's, as TF shows it.
    Literal {
        key: HashKey,
        text: Shown,
    },
    List(Vec<TraceType>),
    Tuple(Vec<TraceType>),
    /// Entries in sorted key order.
    Dict(Vec<(HashKey, String, TraceType)>),
    /// A `PerReplica` value (what iterating a distributed dataset gives): its parts, one
    /// per replica, so a step called with each batch replays one trace.
    PerReplica(Vec<TraceType>),
    /// Any other object, by identity.
    Object {
        id: u64,
        text: String,
    },
}

impl TraceType {
    /// TF's text for the type (what a concrete function's signature lists).
    pub fn text(&self) -> String {
        let join = |items: &[TraceType]| {
            items
                .iter()
                .map(TraceType::text)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            TraceType::Tensor(s) => s.text(),
            TraceType::Variable { dtype, shape } => format!(
                "TensorSpec(shape={}, dtype=tf.resource, name=None) of tf.{}",
                shape_text(&known(shape)),
                dtype.name()
            ),
            TraceType::Literal { text, .. } => format!("Literal[{}]", text.0),
            TraceType::List(items) => format!("List[{}]", join(items)),
            TraceType::Tuple(items) => format!("Tuple[{}]", join(items)),
            TraceType::PerReplica(items) => format!("PerReplicaSpec({})", join(items)),
            TraceType::Dict(items) => format!(
                "Dict[{}]",
                items
                    .iter()
                    .map(|(_, k, t)| format!("[{k}, {}]", t.text()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            TraceType::Object { text, .. } => text.clone(),
        }
    }

    /// Whether this (possibly relaxed) type covers the concrete type `c`.
    pub fn covers(&self, c: &TraceType) -> bool {
        match (self, c) {
            (TraceType::Tensor(a), TraceType::Tensor(b)) => {
                a.dtype == b.dtype
                    && match (&a.shape, &b.shape) {
                        (None, _) => true,
                        (Some(_), None) => false,
                        (Some(x), Some(y)) => {
                            x.len() == y.len()
                                && x.iter().zip(y).all(|(p, q)| p.is_none() || p == q)
                        }
                    }
            }
            (TraceType::List(a), TraceType::List(b))
            | (TraceType::Tuple(a), TraceType::Tuple(b))
            | (TraceType::PerReplica(a), TraceType::PerReplica(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.covers(y))
            }
            (TraceType::Dict(a), TraceType::Dict(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((ka, _, x), (kb, _, y))| ka == kb && x.covers(y))
            }
            (a, b) => a == b,
        }
    }

    /// The most specific type covering both, when they differ only in tensor shapes.
    pub fn join(&self, other: &TraceType) -> Option<TraceType> {
        Some(match (self, other) {
            (TraceType::Tensor(a), TraceType::Tensor(b)) if a.dtype == b.dtype => {
                TraceType::Tensor(TensorSpec {
                    shape: shape_join(&a.shape, &b.shape),
                    dtype: a.dtype,
                    name: a.name.clone(),
                })
            }
            (TraceType::List(a), TraceType::List(b)) if a.len() == b.len() => TraceType::List(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| x.join(y))
                    .collect::<Option<_>>()?,
            ),
            (TraceType::Tuple(a), TraceType::Tuple(b)) if a.len() == b.len() => TraceType::Tuple(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| x.join(y))
                    .collect::<Option<_>>()?,
            ),
            (TraceType::PerReplica(a), TraceType::PerReplica(b)) if a.len() == b.len() => {
                TraceType::PerReplica(
                    a.iter()
                        .zip(b)
                        .map(|(x, y)| x.join(y))
                        .collect::<Option<_>>()?,
                )
            }
            (TraceType::Dict(a), TraceType::Dict(b)) if a.len() == b.len() => TraceType::Dict(
                a.iter()
                    .zip(b)
                    .map(|((ka, t, x), (kb, _, y))| {
                        (ka == kb).then_some(())?;
                        Some((ka.clone(), t.clone(), x.join(y)?))
                    })
                    .collect::<Option<_>>()?,
            ),
            (a, b) if a == b => a.clone(),
            _ => return None,
        })
    }

    /// Whether any tensor in the type has an unknown rank.
    pub fn unknown_rank(&self) -> bool {
        match self {
            TraceType::Tensor(s) => s.shape.is_none(),
            TraceType::List(a) | TraceType::Tuple(a) | TraceType::PerReplica(a) => {
                a.iter().any(TraceType::unknown_rank)
            }
            TraceType::Dict(a) => a.iter().any(|(_, _, t)| t.unknown_rank()),
            _ => false,
        }
    }

    /// Whether any tensor in the type has an unknown dimension or rank.
    pub fn relaxed(&self) -> bool {
        match self {
            TraceType::Tensor(s) => match &s.shape {
                None => true,
                Some(d) => d.iter().any(Option::is_none),
            },
            TraceType::List(a) | TraceType::Tuple(a) | TraceType::PerReplica(a) => {
                a.iter().any(TraceType::relaxed)
            }
            TraceType::Dict(a) => a.iter().any(|(_, _, t)| t.relaxed()),
            _ => false,
        }
    }
}
