//! `tf.keras.layers.Layer` as a base class for a user's layers: `super().__init__(name=...)`
//! gives the instance a core (kept in an attribute) and Keras's automatic name
//! (`MyBlock` becomes `my_block`, `my_block_1`, ...); `add_weight` makes a Keras variable
//! under the layer's name scope; `__call__` is Keras's (build at the first call from the
//! input shape, then the user's `call`); the attributes every layer has (`weights`,
//! `trainable_weights`, `get_weights`, `count_params`, ...) are properties computed from
//! the core and from what the instance tracks in its attributes. `Model` (subclass.rs)
//! builds on the same pieces.

use std::rc::Rc;

use super::super::super::TfState;
use super::super::initializers::{init_arg, InitArg};
use super::super::variable::KerasVariable;
use super::build::scope_prefix;
use super::call::call_layer;
use super::handle::{LayerHandle, LayerState, CORE_ATTR};
use super::layer::{common_attr, LayerCore};
use super::{kerr, shape_arg_dims};
use crate::keras::init::fill;
use crate::keras::Init;
use crate::lang::{Args, Ctx, NativeClass, PyErr, PyResult, Value};
use crate::tensor::{DType, NdArray};

/// Keras's `to_snake_case` (one definition, shared with saving).
pub use crate::keras::saving::naming::snake_case;

/// A fresh automatic name from the session's counters (`dense`, `dense_1`, ...).
pub fn unique_name(ctx: &mut dyn Ctx, base: &str) -> String {
    ctx.state().get::<TfState>().keras.names.unique(base)
}

/// The keyword arguments every layer constructor accepts (`name`, `trainable`, `dtype`,
/// and the input shape of a first layer).
pub const LAYER_KWARGS: &[&str] = &[
    "trainable",
    "name",
    "dtype",
    "autocast",
    "input_shape",
    "input_dim",
    "batch_size",
    "activity_regularizer",
];

/// Checks `kw` against what Keras's `Layer.__init__` accepts, with its error.
pub fn check_kwargs(cls: &str, kw: &[(String, Value)], also: &[&str]) -> PyResult<()> {
    let bad: Vec<&(String, Value)> = kw
        .iter()
        .filter(|(k, _)| !LAYER_KWARGS.contains(&k.as_str()) && !also.contains(&k.as_str()))
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    let items: Vec<String> = bad
        .iter()
        .map(|(k, v)| format!("'{k}': {}", short_repr(v)))
        .collect();
    Err(PyErr::value_error(format!(
        "Unrecognized keyword arguments passed to {cls}: {{{}}}",
        items.join(", ")
    )))
}

fn short_repr(v: &Value) -> String {
    match v {
        Value::Str(s) => crate::lang::str_repr(s),
        Value::Int(i) => i.to_string(),
        Value::Float(x) => crate::lang::float_repr(*x),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::None => "None".into(),
        other => format!("<{}>", other.type_name()),
    }
}

/// The `name=` argument, or an automatic name from the instance's class.
pub fn name_arg(this: &Value, kw: &[(String, Value)], ctx: &mut dyn Ctx) -> PyResult<String> {
    match kw.iter().find(|(k, _)| k == "name").map(|(_, v)| v) {
        Some(Value::None) | None => {
            let base = snake_case(&this.type_name());
            Ok(unique_name(ctx, &base))
        }
        Some(v) => Ok(v.as_str()?.to_string()),
    }
}

/// `Layer.__init__(self, trainable=True, name=None, dtype=None, **kwargs)`.
fn layer_init(this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if !args.pos.is_empty() {
        return Err(PyErr::type_error(format!(
            "Layer.__init__() takes 1 positional argument but {} were given",
            args.pos.len() + 1
        )));
    }
    check_kwargs(&this.type_name(), &args.kw, &[])?;
    let name = name_arg(this, &args.kw, ctx)?;
    let core = LayerCore::new(name.clone());
    if let Some((_, v)) = args.kw.iter().find(|(k, _)| k == "trainable") {
        core.trainable.set(v.as_bool_strict()?);
    }
    init_attrs(this, Value::native(LayerState(Rc::new(core))), &name, ctx)?;
    Ok(Value::None)
}

/// Sets the attributes Keras's `__init__` sets on every layer: `name`, `built`, and the
/// core.
pub fn init_attrs(this: &Value, core: Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<()> {
    ctx.setattr(this, CORE_ATTR, core)?;
    ctx.setattr(this, "name", Value::str(name))?;
    ctx.setattr(this, "built", Value::Bool(false))
}

/// The handle of a subclass instance, or Keras's error when its `__init__` did not call
/// `super().__init__()`.
pub fn ensure_core(this: &Value, ctx: &mut dyn Ctx) -> PyResult<LayerHandle> {
    if let Some(h) = LayerHandle::of(this, ctx) {
        return Ok(h);
    }
    Err(PyErr::runtime_error(format!(
        "In layer '{}', you forgot to call `super().__init__()` as the first statement in \
         the `__init__()` method. Go add it!",
        this.type_name()
    )))
}

/// Keras's `compute_fans` for a variable of `shape`.
pub fn fans(shape: &[usize]) -> (usize, usize) {
    match shape {
        [] => (1, 1),
        [n] => (*n, *n),
        [a, b] => (*a, *b),
        _ => {
            let receptive: usize = shape[..shape.len() - 2].iter().product();
            (
                shape[shape.len() - 2] * receptive,
                shape[shape.len() - 1] * receptive,
            )
        }
    }
}

/// The initial value of a new variable from its initializer argument.
pub fn initial_value(
    init: InitArg,
    shape: &[usize],
    dtype: DType,
    ctx: &mut dyn Ctx,
) -> PyResult<NdArray> {
    match init {
        InitArg::Known(init) => {
            let seed = crate::bindings::tf::keras::model::next_weight_seed(ctx);
            let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
            let h = fill(&init, shape, fans(shape), &mut rng);
            let a = NdArray::from_f32(shape, h.data)
                .map_err(super::super::super::convert::tensor_err)?;
            Ok(a.astype(dtype))
        }
        InitArg::Call(f) => {
            let dims = Value::tuple(shape.iter().map(|d| Value::Int(*d as i64)).collect());
            let v = ctx.call(&f, Args::new(vec![dims]))?;
            let a = super::super::super::convert::to_array(&v, Some(dtype), false, ctx)?;
            if a.shape() != shape {
                return Err(PyErr::value_error(format!(
                    "The initializer returned a value of shape {}, expected {}",
                    crate::tensor::shape_str(a.shape()),
                    crate::tensor::shape_str(shape)
                )));
            }
            Ok(a)
        }
    }
}

/// `add_weight(shape=None, initializer=None, dtype=None, trainable=True, ..., name=None)`.
fn add_weight(this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let h = ensure_core(this, ctx)?;
    if args.pos.len() > 3 {
        return Err(PyErr::type_error(format!(
            "add_weight() takes at most 3 positional arguments but {} were given.",
            args.pos.len()
        )));
    }
    if let Some(Value::Str(s)) = args.pos.first() {
        return Err(PyErr::value_error(format!(
            "`name` must be passed as a keyword argument. Received: add_weight('{s}', ...). \
             Use: add_weight(shape=..., name='{s}')."
        )));
    }
    let names = [
        "shape",
        "initializer",
        "dtype",
        "trainable",
        "autocast",
        "regularizer",
        "constraint",
        "aggregation",
        "overwrite_with_gradient",
        "name",
    ];
    let s = args.bind("add_weight", &names, 0)?;
    let shape = match super::super::super::given(&s[0]) {
        Some(v) => shape_arg_dims(v, ctx)?,
        None => vec![],
    };
    let dtype = match super::super::super::given(&s[2]) {
        Some(v) => super::super::super::convert::dtype_arg(Some(v), ctx)?.unwrap_or(DType::F32),
        None => DType::F32,
    };
    let default = if dtype.is_float() {
        Init::GlorotUniform
    } else {
        Init::Zeros
    };
    let init = init_arg(super::super::super::given(&s[1]), default)?;
    let trainable = match super::super::super::given(&s[3]) {
        Some(v) => v.as_bool_strict()?,
        None => true,
    };
    let name = match super::super::super::given(&s[9]) {
        Some(v) => v.as_str()?.to_string(),
        None => unique_name(ctx, "variable"),
    };
    let value = initial_value(init, &shape, dtype, ctx)?;
    let prefix = scope_prefix(ctx);
    let own = h.core.name();
    // Inside the layer's own call the scope already ends with its name.
    let top = ctx.state().get::<TfState>().keras.scope.last().cloned();
    let path = if top.as_deref() == Some(own.as_str()) {
        format!("{prefix}{name}")
    } else {
        format!("{prefix}{own}/{name}")
    };
    let var = KerasVariable::make(ctx, &path, &name, value, trainable);
    h.core.weights.borrow_mut().push(var.clone());
    Ok(var)
}

/// `Layer.build(input_shape)`: a layer without variables of its own is built as it is.
fn default_build(this: &Value, _args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let h = ensure_core(this, ctx)?;
    super::call::mark_built(&h, ctx)?;
    Ok(Value::None)
}

/// The properties every layer subclass inherits.
pub const PROPERTIES: &[&str] = &[
    "trainable",
    "dtype",
    "compute_dtype",
    "variable_dtype",
    "input_spec",
    "weights",
    "variables",
    "trainable_weights",
    "trainable_variables",
    "non_trainable_weights",
    "non_trainable_variables",
    "get_weights",
    "set_weights",
    "count_params",
    "output",
];

/// A property of a subclass instance answered from its core.
pub fn core_property(this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let h = ensure_core(this, ctx)?;
    match common_attr(&h, this, name, ctx)? {
        Some(v) => Ok(v),
        None => Err(PyErr::attribute_error(format!(
            "'{}' object has no attribute '{name}'",
            this.type_name()
        ))),
    }
}

/// Adds the properties and methods every layer subclass inherits to `class`.
pub fn with_layer_members(mut class: NativeClass) -> NativeClass {
    for &p in PROPERTIES {
        class = class.property(p, move |this, _, ctx| core_property(this, p, ctx));
    }
    class
        .method("__call__", |this, a, c| call_layer(this, a.clone(), c))
        .method("add_weight", add_weight)
        .method("build", default_build)
        .method("get_config", |this, _, c| {
            super::super::saving::custom::base_get_config(this, c)
        })
        .method(
            "from_config",
            super::super::saving::custom::layer_from_config,
        )
        .method("get_build_config", |this, _, c| {
            super::super::saving::custom::get_build_config(this, c)
        })
        .method(
            "build_from_config",
            super::super::saving::custom::build_from_config,
        )
        .method("__repr__", |this, _, c| {
            let h = ensure_core(this, c)?;
            let built = super::call::is_built(&h, c);
            Ok(Value::from(format!(
                "<{} name={}, built={}>",
                this.type_name(),
                h.core.name(),
                if built { "True" } else { "False" }
            )))
        })
}

/// `tf.keras.layers.Layer`.
pub fn layer_class() -> Value {
    with_layer_members(
        NativeClass::new(
            "Layer",
            "keras.src.layers.layer",
            "Layer(trainable=True, name=None, dtype=None, **kwargs)",
        )
        .base("Operation"),
    )
    .method("__init__", layer_init)
    .into_value()
}

/// An error from the engine's Keras part, for callers here.
pub fn engine_err(e: crate::keras::KerasError) -> PyErr {
    kerr(e)
}
