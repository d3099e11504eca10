//! `ConcreteFunction`: one trace of a `tf.function`, as `get_concrete_function` returns
//! it: its signature printed as TF prints it (`Input Parameters`, `Output Type`,
//! `Captures`), `structured_outputs` (graph tensors named `Identity`, `Identity_1`, ...),
//! `structured_input_signature`, its variables, and a call that checks the arguments
//! against the trace's types before replaying it. Also the `FunctionSpec` a function
//! shows as `function_spec`.

use std::any::Any;
use std::rc::Rc;

use super::super::variable::Variable;
use super::super::{address_of, bound};
use super::args::{self, OutTree};
use super::spec::{shape_text, TensorSpec, TraceType};
use super::{Function, Traced};
use crate::lang::{Args, Ctx, Dict, Object, PyResult, Value};
use crate::ops::{Capture, StaticShape};
use crate::tensor::DType;

/// A parameter of a trace: its name, TF's kind (`POSITIONAL_OR_KEYWORD`, ...), its type.
pub type Param = (String, &'static str, TraceType);

/// The text after `ConcreteFunction ` (and each entry of
/// `pretty_printed_concrete_signatures`).
pub(crate) fn signature_text(params: &[Param], t: &Traced) -> String {
    let mut s = String::from("Input Parameters:\n");
    for (name, kind, ty) in params {
        s.push_str(&format!("  {name} ({kind}): {}\n", ty.text()));
    }
    s.push_str("Output Type:\n  ");
    s.push_str(&args::output_tree_types(&t.outputs, &t.out_specs));
    s.push_str("\nCaptures:\n");
    if t.captures.is_empty() {
        s.push_str("  None");
    } else {
        let lines: Vec<String> = t
            .captures
            .iter()
            .map(|c| match c {
                Capture::Variable(v) => format!(
                    "  {}: TensorSpec(shape=(), dtype=tf.resource, name=None)",
                    v.handle().raw() * 16 + 139_640_000_000_000
                ),
                Capture::Tensor(x) => format!(
                    "  {}: {}",
                    x.id().raw() * 16 + 139_640_000_000_000,
                    TensorSpec {
                        shape: super::spec::known(x.shape()),
                        dtype: x.dtype(),
                        name: None,
                    }
                    .text()
                ),
            })
            .collect();
        s.push_str(&lines.join("\n"));
    }
    s
}

/// A graph tensor shown outside its trace (`structured_outputs`).
pub struct GraphTensor {
    name: String,
    shape: StaticShape,
    dtype: DType,
}

impl Object for GraphTensor {
    fn type_name(&self) -> String {
        "SymbolicTensor".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tf.Tensor '{}' shape={} dtype={}>",
            self.name,
            shape_text(&self.shape),
            self.dtype.name()
        ))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(symbolic_str(&self.name, &self.shape, self.dtype))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "name" => Value::str(&self.name),
            "shape" => Value::native(super::super::shape::TensorShape {
                dims: self.shape.clone(),
            }),
            "dtype" => Value::native(super::super::convert::tf_dtype(self.dtype)),
            _ => return Ok(None),
        }))
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["SymbolicTensor".into(), "Tensor".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `Tensor("add:0", shape=(), dtype=int32)`: a graph tensor's str (an unknown rank shows
/// no shape).
pub fn symbolic_str(name: &str, shape: &StaticShape, dtype: DType) -> String {
    match shape {
        Some(_) => format!(
            "Tensor(\"{name}\", shape={}, dtype={})",
            shape_text(shape),
            dtype.name()
        ),
        None => format!("Tensor(\"{name}\", dtype={})", dtype.name()),
    }
}

/// `<tf.Tensor 'add:0' shape=() dtype=int32>`.
pub fn symbolic_repr(name: &str, shape: &StaticShape, dtype: DType) -> String {
    format!(
        "<tf.Tensor '{name}' shape={} dtype={}>",
        shape_text(shape),
        dtype.name()
    )
}

fn structured(tree: &OutTree, specs: &[TensorSpec]) -> Value {
    match tree {
        OutTree::Tensor(i) => {
            let name = if *i == 0 {
                "Identity:0".to_string()
            } else {
                format!("Identity_{i}:0")
            };
            match specs.get(*i) {
                Some(s) => Value::native(GraphTensor {
                    name,
                    shape: s.shape.clone(),
                    dtype: s.dtype,
                }),
                None => Value::None,
            }
        }
        OutTree::List(items) => Value::list(items.iter().map(|t| structured(t, specs)).collect()),
        OutTree::Tuple(items) => Value::tuple(items.iter().map(|t| structured(t, specs)).collect()),
        OutTree::PerReplica(items) => super::super::values::DistributedValues::per_replica(
            items.iter().map(|t| structured(t, specs)).collect(),
        ),
        OutTree::Dict(items) => {
            let mut d = Dict::default();
            for (k, t) in items {
                let _ = d.insert(k.clone(), structured(t, specs));
            }
            Value::Dict(Rc::new(std::cell::RefCell::new(d)))
        }
        OutTree::Value(v) => v.0.clone(),
    }
}

/// A named spec for `structured_input_signature`.
fn named(t: &TraceType, name: &str) -> Value {
    match t {
        TraceType::Tensor(s) => Value::native(TensorSpec {
            name: Some(s.name.clone().unwrap_or_else(|| name.to_string())),
            ..s.clone()
        }),
        TraceType::List(items) => Value::list(items.iter().map(|i| named(i, name)).collect()),
        TraceType::Tuple(items) => Value::tuple(items.iter().map(|i| named(i, name)).collect()),
        TraceType::Literal { text, .. } => Value::str(&text.0),
        other => Value::str(&other.text()),
    }
}

/// One trace of a function.
pub struct ConcreteFunction {
    function: Value,
    params: Vec<Param>,
    traced: Rc<Traced>,
}

impl ConcreteFunction {
    pub(crate) fn new(function: Value, params: Vec<Param>, traced: Rc<Traced>) -> ConcreteFunction {
        ConcreteFunction {
            function,
            params,
            traced,
        }
    }

    fn short(&self) -> String {
        let items: Vec<String> = self
            .params
            .iter()
            .map(|(n, _, t)| format!("{n}: {}", t.text()))
            .collect();
        format!(
            "({}) -> {}",
            items.join(", "),
            args::output_tree_types(&self.traced.outputs, &self.traced.out_specs)
        )
    }

    fn call_checked(&self, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let Some(f) = self.function.downcast::<Function>() else {
            return Ok(Value::None);
        };
        let bound = args::bind(&f.def.sig, f.is_bound_method(), &args)
            .map_err(|why| args::binding_error(&why, &args, &self.short(), ctx))?;
        let specs: Vec<TraceType> = self.params.iter().map(|(_, _, t)| t.clone()).collect();
        let tensor_params = specs.iter().all(|t| {
            matches!(
                t,
                TraceType::Tensor(_) | TraceType::List(_) | TraceType::Tuple(_)
            )
        });
        if tensor_params {
            args::flatten_with(&bound, &specs, ctx)
                .map_err(|why| args::binding_error(&why, &args, &self.short(), ctx))?;
        }
        ctx.call(&self.function, args)
    }
}

impl Object for ConcreteFunction {
    fn type_name(&self) -> String {
        "ConcreteFunction".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<ConcreteFunction {} at {}>",
            self.short(),
            address_of(self).to_uppercase().replacen("0X", "0x", 1)
        ))
    }
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "ConcreteFunction {}",
            signature_text(&self.params, &self.traced)
        ))
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        self.call_checked(args, ctx)
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "structured_outputs" => structured(&self.traced.outputs, &self.traced.out_specs),
            "structured_input_signature" => {
                let mut pos = Vec::new();
                let mut kw = Dict::default();
                for (n, kind, t) in &self.params {
                    if *kind == "KEYWORD_ONLY" {
                        kw.insert_str(n, named(t, n));
                    } else {
                        pos.push(named(t, n));
                    }
                }
                Value::tuple(vec![
                    Value::tuple(pos),
                    Value::Dict(Rc::new(std::cell::RefCell::new(kw))),
                ])
            }
            "variables" | "trainable_variables" => {
                let trainable = name == "trainable_variables";
                Value::tuple(
                    self.traced
                        .graph
                        .variables()
                        .iter()
                        .filter(|v| !trainable || v.trainable())
                        .map(|v| {
                            Value::native(Variable {
                                var: v.clone(),
                                unread: false,
                            })
                        })
                        .collect(),
                )
            }
            "outputs" => Value::list(
                (0..self.traced.out_specs.len())
                    .map(|i| structured(&OutTree::Tensor(i), &self.traced.out_specs))
                    .collect(),
            ),
            "pretty_printed_signature" => bound::<ConcreteFunction>(this, name, |c, _, _, _| {
                Ok(Value::str(&signature_text(&c.params, &c.traced)))
            }),
            "name" => Value::str(&format!(
                "__inference_{}",
                self.function
                    .downcast::<Function>()
                    .map_or("f", |f| f.name())
            )),
            _ => return Ok(None),
        }))
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["ConcreteFunction".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `Function.function_spec`.
pub struct FunctionSpec {
    pub input_signature: Option<Vec<TraceType>>,
}

impl Object for FunctionSpec {
    fn type_name(&self) -> String {
        "FunctionSpec".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<tensorflow.python.eager.polymorphic_function.function_type_utils.FunctionSpec \
             object at {}>",
            address_of(self)
        ))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "input_signature" => Some(match &self.input_signature {
                Some(s) => Value::tuple(s.iter().map(args::spec_value).collect()),
                None => Value::None,
            }),
            _ => None,
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
