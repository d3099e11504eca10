//! A `tf.function` call's arguments: bound to the Python function's parameters as
//! Python binds them (with TF's error text when they do not fit), flattened into the
//! tensors and variables a graph takes and the trace type that keys it (dict entries in
//! sorted key order, as TF's `nest` flattens them), rebuilt with placeholders for a
//! trace; and a traced function's result, flattened into the graph's output tensors and a
//! tree that rebuilds the Python structure from a replay's outputs.

use std::rc::Rc;

use super::super::convert::{numpy_array, tensor_value, to_array, variable_of};
use super::super::eager::{context, wrap};
use super::super::tensor::Tensor;
use super::super::values::DistributedValues;
use super::super::TfError;
use super::spec::{known, TensorSpec, TraceType};
use crate::lang::float_repr;
use crate::lang::str_repr;
use crate::lang::{Args, Ctx, Dict, HashKey, PyErr, PyResult, Signature, Value};
use crate::ops::{self, Recorder};
use crate::tensor::NdArray;

/// How a bound value reached its parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Positional,
    VarArgs,
    KwOnly,
    KwArgs,
}

/// A call bound to the parameters, in parameter order.
pub struct Bound {
    pub items: Vec<(String, Value, Kind)>,
}

impl Bound {
    /// The call again, as arguments for the Python function.
    pub fn to_args(&self) -> Args {
        let values: Vec<Value> = self.items.iter().map(|(_, v, _)| v.clone()).collect();
        self.with_values(&values)
    }

    fn with_values(&self, values: &[Value]) -> Args {
        let mut a = Args::default();
        for ((name, _, kind), v) in self.items.iter().zip(values) {
            match kind {
                Kind::Positional => a.pos.push(v.clone()),
                Kind::VarArgs => a.pos.extend(v.as_seq().unwrap_or_default()),
                Kind::KwOnly => a.kw.push((name.clone(), v.clone())),
                Kind::KwArgs => {
                    if let Value::Dict(d) = v {
                        for (k, x) in d.borrow().items() {
                            if let Value::Str(k) = k {
                                a.kw.push((k.to_string(), x.clone()));
                            }
                        }
                    }
                }
            }
        }
        a
    }
}

/// Binds a call as Python would; the error is TF's reason text.
pub fn bind(sig: &Signature, skip_self: bool, args: &Args) -> Result<Bound, String> {
    let params: Vec<&crate::lang::SigParam> =
        sig.params.iter().skip(usize::from(skip_self)).collect();
    let mut slots: Vec<Option<Value>> = vec![None; params.len()];
    let npos = params.iter().filter(|p| !p.kw_only).count();
    let mut extra = Vec::new();
    for (i, v) in args.pos.iter().enumerate() {
        if i < npos {
            slots[i] = Some(v.clone());
        } else if sig.vararg.is_some() {
            extra.push(v.clone());
        } else {
            return Err("too many positional arguments".into());
        }
    }
    let mut kwargs = Dict::default();
    // As `inspect.Signature.bind`: a missing argument is named before an unexpected
    // keyword.
    let mut unexpected = None;
    for (k, v) in &args.kw {
        match params.iter().position(|p| p.name == *k) {
            Some(i) if slots[i].is_some() => {
                return Err(format!("multiple values for argument '{k}'"))
            }
            Some(i) => slots[i] = Some(v.clone()),
            None if sig.kwarg.is_some() => kwargs.insert_str(k, v.clone()),
            None => {
                unexpected.get_or_insert_with(|| k.clone());
            }
        }
    }
    let mut items = Vec::new();
    for (i, p) in params.iter().enumerate() {
        let v = match (slots[i].take(), &p.default) {
            (Some(v), _) => v,
            (None, Some(d)) => d.clone(),
            (None, None) => return Err(format!("missing a required argument: '{}'", p.name)),
        };
        let kind = if p.kw_only {
            Kind::KwOnly
        } else {
            Kind::Positional
        };
        items.push((p.name.clone(), v, kind));
        if i + 1 == npos {
            if let Some(n) = &sig.vararg {
                items.push((
                    n.clone(),
                    Value::tuple(std::mem::take(&mut extra)),
                    Kind::VarArgs,
                ));
            }
        }
    }
    if let Some(k) = unexpected {
        return Err(format!("got an unexpected keyword argument '{k}'"));
    }
    if npos == 0 {
        if let Some(n) = &sig.vararg {
            items.insert(0, (n.clone(), Value::tuple(extra), Kind::VarArgs));
        }
    }
    if let Some(n) = &sig.kwarg {
        items.push((
            n.clone(),
            Value::Dict(Rc::new(std::cell::RefCell::new(kwargs))),
            Kind::KwArgs,
        ));
    }
    Ok(Bound { items })
}

/// TF's `TypeError` for a call that does not bind.
pub fn binding_error(why: &str, args: &Args, signature: &str, ctx: &mut dyn Ctx) -> PyErr {
    let pos: Vec<String> = args
        .pos
        .iter()
        .map(|v| ctx.repr(v).unwrap_or_else(|_| "?".into()))
        .collect();
    let kw: Vec<String> = args
        .kw
        .iter()
        .map(|(k, v)| {
            format!(
                "{}: {}",
                str_repr(k),
                ctx.repr(v).unwrap_or_else(|_| "?".into())
            )
        })
        .collect();
    PyErr::type_error(format!(
        "Binding inputs to tf.function failed due to `{why}`. Received args: {} and kwargs: \
         {{{}}} for signature: {signature}.",
        super::super::py_tuple(&pos),
        kw.join(", ")
    ))
}

/// One tensor or variable of a call, with the parameter it came from.
#[derive(Clone)]
pub enum Leaf {
    Tensor(ops::Tensor, String),
    Variable(ops::Variable, Value),
}

/// A call flattened: its concrete trace type, its leaves in order, the type the
/// `input_signature` gives it, and whether its tensors stand in for `TensorSpec`s.
pub struct Flat {
    pub key: TraceType,
    pub leaves: Vec<Leaf>,
    pub sig: Option<TraceType>,
    pub stand_in: bool,
}

/// A Python value's text in a `Literal[...]`.
fn literal_text(v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(x) => float_repr(*x),
        Value::Str(s) => str_repr(s),
        other => format!("<{} object>", other.type_name()),
    }
}

/// Dict entries in TF's flattening order (sorted by key).
fn sorted_items(d: &Dict) -> Vec<(Value, Value)> {
    let mut items = items_of(d);
    items.sort_by(|(a, _), (b, _)| key_order(a, b));
    items
}

/// A dict's items in its own order.
fn items_of(d: &Dict) -> Vec<(Value, Value)> {
    d.items().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// The order TF's nest flattens a dict's keys in.
fn key_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Str(_), _) => std::cmp::Ordering::Greater,
        (_, Value::Str(_)) => std::cmp::Ordering::Less,
        _ => std::cmp::Ordering::Equal,
    }
}

/// The placeholder name of a parameter's next tensor: `d`, then `d_1`, `d_2`, ... in the
/// order TF names them.
fn numbered(name: &str, named: &mut usize) -> String {
    let n = *named;
    *named += 1;
    if n == 0 {
        name.to_string()
    } else {
        format!("{name}_{n}")
    }
}

fn object_id(v: &Value) -> u64 {
    match v {
        Value::Obj(o) | Value::Native(o) => Rc::as_ptr(o) as *const () as usize as u64,
        _ => 0,
    }
}

fn flatten_value(
    v: &Value,
    name: &str,
    leaves: &mut Vec<Leaf>,
    stand_in: &mut bool,
    named: &mut usize,
    depth: usize,
) -> PyResult<TraceType> {
    if depth > 64 {
        return Err(PyErr::value_error(
            "tf.function arguments are nested too deeply",
        ));
    }
    if let Some(t) = v.downcast::<Tensor>() {
        leaves.push(Leaf::Tensor(t.tensor.clone(), numbered(name, named)));
        return Ok(TraceType::Tensor(TensorSpec {
            shape: known(t.tensor.shape()),
            dtype: t.tensor.dtype(),
            name: None,
        }));
    }
    if let Some(var) = variable_of(v) {
        let t = TraceType::Variable {
            dtype: var.dtype(),
            shape: var.shape().to_vec(),
        };
        leaves.push(Leaf::Variable(var, v.clone()));
        return Ok(t);
    }
    if let Some(s) = v.downcast::<TensorSpec>() {
        // A stand-in value for a spec: zeros, seven where a dimension is unknown (a size
        // unlikely to equal a known one, which would blur the static shapes).
        let dims: Vec<usize> = match &s.shape {
            Some(d) => d.iter().map(|x| x.unwrap_or(7)).collect(),
            None => vec![],
        };
        let a = NdArray::full(&dims, 0.0, s.dtype).map_err(super::super::convert::tensor_err)?;
        leaves.push(Leaf::Tensor(ops::Tensor::new(a), numbered(name, named)));
        *stand_in = true;
        return Ok(TraceType::Tensor(TensorSpec {
            name: None,
            ..s.clone()
        }));
    }
    if let Some(a) = numpy_array(v) {
        let t = ops::Tensor::new((*a).clone());
        let ty = TraceType::Tensor(TensorSpec {
            shape: known(t.shape()),
            dtype: t.dtype(),
            name: None,
        });
        leaves.push(Leaf::Tensor(t, numbered(name, named)));
        return Ok(ty);
    }
    if let Some(parts) = per_replica_parts(v) {
        // TF flattens a `PerReplica` into its components: each batch of a distributed
        // dataset is a new object, but of the same type, so one trace serves them all.
        let types = parts
            .iter()
            .map(|x| flatten_value(x, name, leaves, stand_in, named, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(TraceType::PerReplica(types));
    }
    Ok(match v {
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => {
            TraceType::Literal {
                key: HashKey::of(v)?,
                text: super::spec::Shown(literal_text(v)),
            }
        }
        Value::List(_) | Value::Tuple(_) => {
            let items = v.as_seq().unwrap_or_default();
            let types = items
                .iter()
                .map(|x| flatten_value(x, name, leaves, stand_in, named, depth + 1))
                .collect::<PyResult<Vec<_>>>()?;
            if matches!(v, Value::List(_)) {
                TraceType::List(types)
            } else {
                TraceType::Tuple(types)
            }
        }
        Value::Dict(d) => {
            // TF flattens a dict in sorted key order but names its tensors in the dict's
            // own order (`{'b': d:0, 'a': d_1:0}`): each value is flattened in the dict's
            // order, then the parts are laid out sorted.
            let items = items_of(&d.borrow());
            let mut parts = Vec::with_capacity(items.len());
            for (k, x) in items {
                let mut sub = Vec::new();
                let ty = flatten_value(&x, name, &mut sub, stand_in, named, depth + 1)?;
                parts.push((k, ty, sub));
            }
            parts.sort_by(|(a, ..), (b, ..)| key_order(a, b));
            let mut out = Vec::with_capacity(parts.len());
            for (k, ty, sub) in parts {
                out.push((HashKey::of(&k)?, literal_text(&k), ty));
                leaves.extend(sub);
            }
            TraceType::Dict(out)
        }
        other => TraceType::Object {
            id: object_id(other),
            text: format!("<{} object>", other.type_name()),
        },
    })
}

/// Flattens a call without an input signature.
pub fn flatten(bound: &Bound, _ctx: &mut dyn Ctx) -> PyResult<Flat> {
    let mut leaves = Vec::new();
    let mut stand_in = false;
    let mut types = Vec::with_capacity(bound.items.len());
    for (name, v, _) in &bound.items {
        types.push(flatten_value(
            v,
            name,
            &mut leaves,
            &mut stand_in,
            &mut 0,
            0,
        )?);
    }
    Ok(Flat {
        key: TraceType::Tuple(types),
        leaves,
        sig: None,
        stand_in,
    })
}

/// Flattens a call against the `input_signature`: every argument becomes a tensor of its
/// spec's dtype (tensors must already have it) whose shape the spec covers.
pub fn flatten_with(bound: &Bound, specs: &[TraceType], ctx: &mut dyn Ctx) -> Result<Flat, String> {
    if bound.items.len() > specs.len()
        && bound.items[specs.len()..]
            .iter()
            .any(|(_, _, k)| !matches!(k, Kind::VarArgs | Kind::KwArgs))
    {
        return Err("too many positional arguments".into());
    }
    let mut leaves = Vec::new();
    let mut stand_in = false;
    let mut types = Vec::new();
    for ((name, v, _), spec) in bound.items.iter().zip(specs) {
        types.push(conform(v, spec, name, &mut leaves, &mut stand_in, ctx)?);
    }
    Ok(Flat {
        key: TraceType::Tuple(types),
        leaves,
        sig: Some(TraceType::Tuple(specs.to_vec())),
        stand_in,
    })
}

fn conform(
    v: &Value,
    spec: &TraceType,
    name: &str,
    leaves: &mut Vec<Leaf>,
    stand_in: &mut bool,
    ctx: &mut dyn Ctx,
) -> Result<TraceType, String> {
    match spec {
        TraceType::Tensor(s) => {
            let given = if let Some(sp) = v.downcast::<TensorSpec>() {
                flatten_value(
                    &Value::native(sp.clone()),
                    name,
                    leaves,
                    stand_in,
                    &mut 0,
                    0,
                )
                .map_err(|e| e.message().to_string())?
            } else if v.downcast::<Tensor>().is_some() || variable_of(v).is_some() {
                flatten_value(v, name, leaves, stand_in, &mut 0, 0)
                    .map_err(|e| e.message().to_string())?
            } else {
                let a =
                    to_array(v, Some(s.dtype), false, ctx).map_err(|e| e.message().to_string())?;
                let t = ops::Tensor::new(a);
                let ty = TraceType::Tensor(TensorSpec {
                    shape: known(t.shape()),
                    dtype: t.dtype(),
                    name: None,
                });
                leaves.push(Leaf::Tensor(t, name.into()));
                ty
            };
            let fits = match &given {
                TraceType::Tensor(g) => {
                    g.dtype == s.dtype
                        && TraceType::Tensor(TensorSpec {
                            name: None,
                            ..s.clone()
                        })
                        .covers(&given)
                }
                _ => false,
            };
            if fits {
                Ok(given)
            } else {
                let shown = match &given {
                    TraceType::Tensor(g) => g.text(),
                    other => other.text(),
                };
                Err(format!("Can not cast {shown} to {}", spec.text()))
            }
        }
        TraceType::List(specs) | TraceType::Tuple(specs) => {
            let items = v
                .as_seq()
                .ok_or_else(|| format!("Can not cast {} to {}", literal_text(v), spec.text()))?;
            if items.len() != specs.len() {
                return Err(format!(
                    "Can not cast {} to {}",
                    literal_text(v),
                    spec.text()
                ));
            }
            let types = items
                .iter()
                .zip(specs)
                .map(|(x, s)| conform(x, s, name, leaves, stand_in, ctx))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(if matches!(spec, TraceType::List(_)) {
                TraceType::List(types)
            } else {
                TraceType::Tuple(types)
            })
        }
        other => Err(format!(
            "Can not cast {} to {}",
            literal_text(v),
            other.text()
        )),
    }
}

/// `input_signature=` checked as TF checks it: a list or tuple of (possibly nested)
/// `TensorSpec`s.
pub fn input_signature(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<TraceType>> {
    let Some(items) = v.as_seq() else {
        let cls = class_text(v);
        return Err(TfError::Type(format!(
            "input_signature must be either a tuple or a list, got {cls}."
        ))
        .into());
    };
    let mut bad = Vec::new();
    let out: Vec<TraceType> = items.iter().map(|x| spec_of(x, &mut bad)).collect();
    if !bad.is_empty() {
        let shown: Vec<String> = bad
            .iter()
            .map(|b| ctx.repr(b).unwrap_or_else(|_| "?".into()))
            .collect();
        let types: Vec<String> = bad.iter().map(class_text).collect();
        return Err(TfError::Type(format!(
            "input_signature must be a possibly nested sequence of TensorSpec objects, got \
             invalid args [{}] with types [{}].",
            shown.join(", "),
            types.join(", ")
        ))
        .into());
    }
    Ok(out)
}

fn class_text(v: &Value) -> String {
    let module = match v {
        Value::Native(_) if v.downcast::<TensorSpec>().is_some() => {
            "tensorflow.python.framework.tensor."
        }
        Value::Native(_) | Value::Obj(_) => "",
        _ => "",
    };
    format!("<class '{module}{}'>", v.type_name())
}

fn spec_of(v: &Value, bad: &mut Vec<Value>) -> TraceType {
    if let Some(s) = v.downcast::<TensorSpec>() {
        return TraceType::Tensor(s.clone());
    }
    match v {
        Value::List(_) => TraceType::List(
            v.as_seq()
                .unwrap_or_default()
                .iter()
                .map(|x| spec_of(x, bad))
                .collect(),
        ),
        Value::Tuple(_) => TraceType::Tuple(
            v.as_seq()
                .unwrap_or_default()
                .iter()
                .map(|x| spec_of(x, bad))
                .collect(),
        ),
        other => {
            bad.push(other.clone());
            TraceType::Tuple(vec![])
        }
    }
}

/// A spec of an input signature as a Python value.
pub fn spec_value(t: &TraceType) -> Value {
    match t {
        TraceType::Tensor(s) => Value::native(s.clone()),
        TraceType::List(items) => Value::list(items.iter().map(spec_value).collect()),
        TraceType::Tuple(items) => Value::tuple(items.iter().map(spec_value).collect()),
        _ => Value::None,
    }
}

/// `(name, kind, type)` for each parameter under the trace's key.
pub fn param_types(bound: &Bound, key: &TraceType) -> Vec<super::concrete::Param> {
    let types = match key {
        TraceType::Tuple(t) => t.clone(),
        other => vec![other.clone()],
    };
    bound
        .items
        .iter()
        .zip(types)
        .map(|((n, _, k), t)| {
            let kind = match k {
                Kind::Positional => "POSITIONAL_OR_KEYWORD",
                Kind::KwOnly => "KEYWORD_ONLY",
                Kind::VarArgs => "VAR_POSITIONAL",
                Kind::KwArgs => "VAR_KEYWORD",
            };
            (n.clone(), kind, t)
        })
        .collect()
}

/// The parts of a `PerReplica` value (not of a mirrored variable, which is a leaf).
fn per_replica_parts(v: &Value) -> Option<&[Value]> {
    let d = v.downcast::<DistributedValues>()?;
    (d.kind == "PerReplica").then_some(d.parts.as_slice())
}

fn key_leaves<'a>(t: &'a TraceType, out: &mut Vec<&'a TraceType>) {
    match t {
        TraceType::Tensor(_) | TraceType::Variable { .. } => out.push(t),
        TraceType::List(items) | TraceType::Tuple(items) | TraceType::PerReplica(items) => {
            for i in items {
                key_leaves(i, out);
            }
        }
        TraceType::Dict(items) => {
            for (_, _, i) in items {
                key_leaves(i, out);
            }
        }
        _ => {}
    }
}

/// The values a trace passes for the call's leaves: a fresh graph input per tensor (an
/// identity of the argument, so a tape around the call sees through it), the variable
/// itself per variable.
pub fn placeholders(flat: &Flat, key: &TraceType, rec: &Recorder, ctx: &mut dyn Ctx) -> Vec<Value> {
    let mut specs = Vec::new();
    key_leaves(key, &mut specs);
    let observed = super::trace::active(ctx) || !context(ctx).active_tapes().is_empty();
    let mut out = Vec::with_capacity(flat.leaves.len());
    for (i, leaf) in flat.leaves.iter().enumerate() {
        match leaf {
            Leaf::Tensor(t, name) => {
                let p = if observed {
                    ops::identity(context(ctx), t)
                        .unwrap_or_else(|_| ops::Tensor::from_arc(t.array().clone()))
                } else {
                    ops::Tensor::from_arc(t.array().clone())
                };
                let shape = match specs.get(i) {
                    Some(TraceType::Tensor(s)) => s.shape.clone(),
                    _ => known(t.shape()),
                };
                rec.placeholder(&p, name, shape);
                out.push(wrap(p));
            }
            Leaf::Variable(_, v) => out.push(v.clone()),
        }
    }
    out
}

/// The bound call with its leaves replaced by `values` (in flattening order).
pub fn rebuild(bound: &Bound, _flat: &Flat, values: &[Value]) -> Args {
    let mut next = 0;
    let rebuilt: Vec<Value> = bound
        .items
        .iter()
        .map(|(_, v, _)| replace(v, values, &mut next))
        .collect();
    bound.with_values(&rebuilt)
}

fn is_leaf(v: &Value) -> bool {
    v.downcast::<Tensor>().is_some()
        || variable_of(v).is_some()
        || v.downcast::<TensorSpec>().is_some()
        || numpy_array(v).is_some()
}

fn replace(v: &Value, values: &[Value], next: &mut usize) -> Value {
    if is_leaf(v) {
        let out = values.get(*next).cloned().unwrap_or(Value::None);
        *next += 1;
        return out;
    }
    if let Some(parts) = per_replica_parts(v) {
        return DistributedValues::per_replica(
            parts.iter().map(|x| replace(x, values, next)).collect(),
        );
    }
    match v {
        Value::List(_) | Value::Tuple(_) => {
            let items: Vec<Value> = v
                .as_seq()
                .unwrap_or_default()
                .iter()
                .map(|x| replace(x, values, next))
                .collect();
            if matches!(v, Value::List(_)) {
                Value::list(items)
            } else {
                Value::tuple(items)
            }
        }
        Value::Dict(d) => {
            // Leaves are numbered in sorted key order; the dict keeps its own order.
            let d = d.borrow();
            let sorted = sorted_items(&d);
            let mut new: Vec<(Value, Value)> = Vec::with_capacity(sorted.len());
            for (k, x) in &sorted {
                new.push((k.clone(), replace(x, values, next)));
            }
            let mut out = Dict::default();
            for (k, _) in d.items() {
                if let Some((_, x)) = new.iter().find(|(nk, _)| nk.is(k) || keys_equal(nk, k)) {
                    let _ = out.insert(k.clone(), x.clone());
                }
            }
            Value::Dict(Rc::new(std::cell::RefCell::new(out)))
        }
        other => other.clone(),
    }
}

fn keys_equal(a: &Value, b: &Value) -> bool {
    matches!((HashKey::of(a), HashKey::of(b)), (Ok(x), Ok(y)) if x == y)
}

/// How to rebuild a traced function's result from a replay's output tensors.
#[derive(Debug, Clone)]
pub enum OutTree {
    Tensor(usize),
    List(Vec<OutTree>),
    Tuple(Vec<OutTree>),
    Dict(Vec<(Value, OutTree)>),
    /// A `PerReplica` result (`strategy.run`'s, returned without a reduce).
    PerReplica(Vec<OutTree>),
    /// A value returned as it is (None, or an object that is not a tensor).
    Value(ValueCell),
}

/// A Python value kept in a tree (values are single-threaded; the tree stays on the
/// session thread with the function that owns it).
#[derive(Debug, Clone)]
pub struct ValueCell(pub Value);

impl OutTree {
    pub fn build(&self, outs: &[ops::Tensor]) -> Value {
        match self {
            OutTree::Tensor(i) => outs.get(*i).cloned().map_or(Value::None, wrap),
            OutTree::List(items) => Value::list(items.iter().map(|t| t.build(outs)).collect()),
            OutTree::Tuple(items) => Value::tuple(items.iter().map(|t| t.build(outs)).collect()),
            OutTree::PerReplica(items) => {
                DistributedValues::per_replica(items.iter().map(|t| t.build(outs)).collect())
            }
            OutTree::Dict(items) => {
                let mut d = Dict::default();
                for (k, t) in items {
                    let _ = d.insert(k.clone(), t.build(outs));
                }
                Value::Dict(Rc::new(std::cell::RefCell::new(d)))
            }
            OutTree::Value(v) => v.0.clone(),
        }
    }
}

/// A traced function's result: the value the call returns (Python numbers made tensors,
/// as TF returns them), its tensors in order, and the tree that rebuilds it.
pub struct Outputs {
    pub value: Value,
    pub tensors: Vec<ops::Tensor>,
    pub tree: OutTree,
}

pub fn outputs(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Outputs> {
    let mut tensors = Vec::new();
    let tree = out_tree(v, &mut tensors, ctx, 0)?;
    let value = tree.build(&tensors);
    Ok(Outputs {
        value,
        tensors,
        tree,
    })
}

fn out_tree(
    v: &Value,
    tensors: &mut Vec<ops::Tensor>,
    ctx: &mut dyn Ctx,
    depth: usize,
) -> PyResult<OutTree> {
    if depth > 64 {
        return Err(PyErr::value_error(
            "tf.function result is nested too deeply",
        ));
    }
    if let Some(t) = v.downcast::<Tensor>() {
        tensors.push(t.tensor.clone());
        return Ok(OutTree::Tensor(tensors.len() - 1));
    }
    if variable_of(v).is_some() || numpy_array(v).is_some() {
        // A variable returned is read (TF returns its value); a numpy array is a constant.
        let t = super::super::convert::tensor_of(v, ctx)?;
        tensors.push(t);
        return Ok(OutTree::Tensor(tensors.len() - 1));
    }
    if let Some(parts) = per_replica_parts(v) {
        return Ok(OutTree::PerReplica(
            parts
                .iter()
                .map(|x| out_tree(x, tensors, ctx, depth + 1))
                .collect::<PyResult<_>>()?,
        ));
    }
    Ok(match v {
        Value::Bool(_) | Value::Int(_) | Value::Float(_) => {
            let t = tensor_value(to_array(v, None, false, ctx)?);
            return out_tree(&t, tensors, ctx, depth + 1);
        }
        Value::List(_) => OutTree::List(
            v.as_seq()
                .unwrap_or_default()
                .iter()
                .map(|x| out_tree(x, tensors, ctx, depth + 1))
                .collect::<PyResult<_>>()?,
        ),
        Value::Tuple(_) => OutTree::Tuple(
            v.as_seq()
                .unwrap_or_default()
                .iter()
                .map(|x| out_tree(x, tensors, ctx, depth + 1))
                .collect::<PyResult<_>>()?,
        ),
        Value::Dict(d) => {
            let items: Vec<(Value, Value)> = d
                .borrow()
                .items()
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect();
            OutTree::Dict(
                items
                    .iter()
                    .map(|(k, x)| Ok((k.clone(), out_tree(x, tensors, ctx, depth + 1)?)))
                    .collect::<PyResult<_>>()?,
            )
        }
        other => OutTree::Value(ValueCell(other.clone())),
    })
}

fn join_types(items: &[OutTree], specs: &[TensorSpec]) -> String {
    items
        .iter()
        .map(|t| output_tree_types(t, specs))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The output types of a trace, for a concrete function's signature.
pub fn output_tree_types(tree: &OutTree, specs: &[TensorSpec]) -> String {
    match tree {
        OutTree::Tensor(i) => specs.get(*i).map_or("?".into(), TensorSpec::text),
        OutTree::List(items) => format!("List[{}]", join_types(items, specs)),
        OutTree::Tuple(items) => format!("Tuple[{}]", join_types(items, specs)),
        OutTree::PerReplica(items) => format!("PerReplicaSpec({})", join_types(items, specs)),
        OutTree::Dict(items) => format!(
            "Dict[{}]",
            items
                .iter()
                .map(|(k, t)| format!("[{}, {}]", literal_text(k), output_tree_types(t, specs)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        OutTree::Value(v) => format!("Literal[{}]", literal_text(&v.0)),
    }
}
