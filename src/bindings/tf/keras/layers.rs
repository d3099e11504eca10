//! `tf.keras.layers`: Dense, Flatten, Dropout, Activation, Softmax, Conv2D, MaxPooling2D,
//! Reshape and InputLayer as native classes (so `isinstance(l, layers.Dense)` works), each
//! holding the engine's [`LayerKind`] and, once its model is built, its name and a link to
//! the model for `get_weights`. Also `Input(shape=...)` and calling a layer on it, which
//! records the chain a functional `Model(inputs, outputs)` is made of.

use std::any::Any;
use std::cell::RefCell;

use super::super::{address_of, bound, given};
use crate::keras::{Act, KerasError, LayerKind, Padding};
use crate::lang::{Args, Ctx, NativeClass, NativeModule, Object, PyErr, PyResult, Value};

/// A Keras error as the Python exception Keras raises, with the engine's hint.
pub fn kerr(e: KerasError) -> PyErr {
    let hint = e.hint();
    let msg = if hint.is_empty() {
        e.to_string()
    } else {
        format!("{e}\nHint: {hint}")
    };
    PyErr::new(e.py_exception(), msg)
}

/// One layer: its engine description, its Keras name once known, the input shape it was
/// given, and (after its model is built) the model value and its index there.
pub struct LayerObj {
    pub kind: Option<LayerKind>,
    pub input_shape: Option<Vec<usize>>,
    pub name: RefCell<Option<String>>,
    pub owner: RefCell<Option<(Value, usize)>>,
}

impl LayerObj {
    pub fn class_name(&self) -> &'static str {
        self.kind.as_ref().map_or("InputLayer", |k| k.class_name())
    }
}

/// The symbolic tensor `Input(...)` returns; calling a layer on it appends to the chain.
pub struct KerasTensor {
    pub shape: Vec<usize>,
    pub layers: Vec<Value>,
}

impl Object for KerasTensor {
    fn type_name(&self) -> String {
        "KerasTensor".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let dims: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        Ok(format!(
            "<KerasTensor shape=(None, {}), dtype=float32, sparse=False, name=keras_tensor>",
            dims.join(", ")
        ))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "shape" => {
                let mut dims = vec![Value::None];
                dims.extend(self.shape.iter().map(|d| Value::Int(*d as i64)));
                Some(Value::tuple(dims))
            }
            _ => None,
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Object for LayerObj {
    fn type_name(&self) -> String {
        self.class_name().into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let name = self
            .name
            .borrow()
            .clone()
            .unwrap_or_else(|| "unbuilt".into());
        Ok(format!(
            "<{} name={name}, built={}>",
            self.class_name(),
            self.owner.borrow().is_some()
        ))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let owner = self.owner.borrow().clone();
        Ok(Some(match name {
            "name" => match self.name.borrow().clone() {
                Some(n) => Value::from(n),
                None => Value::str(self.kind.as_ref().map_or("input_layer", |k| k.base_name())),
            },
            "built" => Value::Bool(owner.is_some()),
            "trainable" => Value::Bool(true),
            "units" => match &self.kind {
                Some(LayerKind::Dense { units, .. }) => Value::Int(*units as i64),
                _ => return Ok(None),
            },
            "rate" => match &self.kind {
                Some(LayerKind::Dropout { rate, .. }) => Value::Float(f64::from(*rate)),
                _ => return Ok(None),
            },
            "get_weights" | "weights" | "trainable_weights" | "output_shape" | "input_shape"
            | "count_params" => {
                let Some((model, index)) = owner else {
                    return Err(PyErr::value_error(format!(
                        "Layer {} is not built yet: add it to a model with a known input shape \
                         (or call the model on data) first.",
                        self.class_name()
                    )));
                };
                let f = ctx.getattr(&model, "_layer_info")?;
                let info = ctx.call(
                    &f,
                    Args::new(vec![Value::Int(index as i64), Value::str(name)]),
                )?;
                if name == "get_weights" || name == "count_params" {
                    return Ok(Some(crate::lang::NativeFn::value(name, "", move |_, _| {
                        Ok(info.clone())
                    })));
                }
                info
            }
            "__call__" => bound::<LayerObj>(this, name, |l, this, a, c| l.call(this, a.clone(), c)),
            _ => return Ok(None),
        }))
    }
    fn call(&self, this: &Value, args: Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
        let x = args.pos.first().cloned().unwrap_or(Value::None);
        match x.downcast::<KerasTensor>() {
            Some(t) => {
                let mut layers = t.layers.clone();
                layers.push(this.clone());
                Ok(Value::native(KerasTensor {
                    shape: t.shape.clone(),
                    layers,
                }))
            }
            None => Err(PyErr::not_implemented(
                "calling a layer on data directly is not supported here; put it in a model and \
                 call the model.",
            )),
        }
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.class_name().into(), "Layer".into(), "Operation".into()]
    }
    fn hash(&self) -> Option<u64> {
        Some(address_of(self).len() as u64 ^ (self as *const LayerObj as usize as u64))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn pos_usize(v: &Value, what: &str) -> PyResult<usize> {
    let n = v.as_int()?;
    usize::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
        PyErr::value_error(format!("Received an invalid value for `{what}`, expected a positive integer. Received: {what}={n}"))
    })
}

/// A shape argument `(5,)`, `[28, 28]`, or an int.
pub fn shape_arg(v: &Value) -> PyResult<Vec<usize>> {
    match v {
        Value::Int(_) => Ok(vec![pos_usize(v, "shape")?]),
        other => other
            .as_seq()
            .ok_or_else(|| PyErr::type_error("a shape must be a tuple of integers"))?
            .iter()
            .map(|d| pos_usize(d, "shape"))
            .collect(),
    }
}

fn pair(v: Option<&Value>, default: (usize, usize), what: &str) -> PyResult<(usize, usize)> {
    match v {
        None => Ok(default),
        Some(Value::Int(_)) => {
            let n = pos_usize(v.unwrap_or(&Value::None), what)?;
            Ok((n, n))
        }
        Some(other) => {
            let d = shape_arg(other)?;
            match d.as_slice() {
                [a, b] => Ok((*a, *b)),
                _ => Err(PyErr::value_error(format!(
                    "`{what}` must be an int or a tuple of 2 ints"
                ))),
            }
        }
    }
}

/// An activation argument: a name, None, or a function from `tf.keras.activations`.
pub fn activation_arg(v: Option<&Value>, ctx: &mut dyn Ctx) -> PyResult<String> {
    match v {
        None => Ok("linear".into()),
        Some(Value::Str(s)) => Ok(s.to_string()),
        Some(other) => {
            let name = ctx.getattr(other, "__name__")?;
            Ok(name.as_str()?.to_string())
        }
    }
}

fn make(kind: LayerKind, input_shape: Option<Vec<usize>>, name: Option<String>) -> Value {
    Value::native(LayerObj {
        kind: Some(kind),
        input_shape,
        name: RefCell::new(name),
        owner: RefCell::new(None),
    })
}

fn common(
    s: &[Option<Value>],
    shape_at: usize,
    name_at: usize,
) -> PyResult<(Option<Vec<usize>>, Option<String>)> {
    let shape = given(&s[shape_at]).map(shape_arg).transpose()?;
    let name = given(&s[name_at])
        .map(|v| v.as_str().map(str::to_string))
        .transpose()?;
    Ok((shape, name))
}

fn dense(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "Dense",
        &[
            "units",
            "activation",
            "use_bias",
            "kernel_initializer",
            "bias_initializer",
            "input_shape",
            "name",
            "input_dim",
        ],
        1,
    )?;
    let units = pos_usize(s[0].as_ref().unwrap_or(&Value::None), "units")?;
    let act = activation_arg(given(&s[1]), ctx)?;
    let mut kind = LayerKind::dense(units, &act).map_err(kerr)?;
    if let LayerKind::Dense { use_bias, .. } = &mut kind {
        *use_bias = given(&s[2]).map_or(Ok(true), |v| v.as_bool_strict())?;
    }
    let (mut shape, name) = common(&s, 5, 6)?;
    if let Some(d) = given(&s[7]) {
        shape = Some(vec![pos_usize(d, "input_dim")?]);
    }
    Ok(make(kind, shape, name))
}

fn conv2d(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "Conv2D",
        &[
            "filters",
            "kernel_size",
            "strides",
            "padding",
            "activation",
            "use_bias",
            "input_shape",
            "name",
        ],
        2,
    )?;
    let filters = pos_usize(s[0].as_ref().unwrap_or(&Value::None), "filters")?;
    let k = pair(given(&s[1]), (3, 3), "kernel_size")?;
    let act = activation_arg(given(&s[4]), ctx)?;
    let mut kind = LayerKind::conv2d(filters, k, &act).map_err(kerr)?;
    if let LayerKind::Conv2D {
        strides, padding, ..
    } = &mut kind
    {
        *strides = pair(given(&s[2]), (1, 1), "strides")?;
        if let Some(p) = given(&s[3]) {
            *padding = Padding::parse(p.as_str()?).map_err(kerr)?;
        }
    }
    let (shape, name) = common(&s, 6, 7)?;
    Ok(make(kind, shape, name))
}

fn max_pool(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "MaxPooling2D",
        &["pool_size", "strides", "padding", "input_shape", "name"],
        0,
    )?;
    let pool = pair(given(&s[0]), (2, 2), "pool_size")?;
    let mut kind = LayerKind::max_pool(pool);
    if let LayerKind::MaxPooling2D {
        strides, padding, ..
    } = &mut kind
    {
        *strides = pair(given(&s[1]), pool, "strides")?;
        if let Some(p) = given(&s[2]) {
            *padding = Padding::parse(p.as_str()?).map_err(kerr)?;
        }
    }
    let (shape, name) = common(&s, 3, 4)?;
    Ok(make(kind, shape, name))
}

fn simple(args: &Args, _ctx: &mut dyn Ctx, cls: &str, kind: LayerKind) -> PyResult<Value> {
    let s = args.bind(cls, &["input_shape", "name"], 0)?;
    let (shape, name) = common(&s, 0, 1)?;
    Ok(make(kind, shape, name))
}

fn dropout(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "Dropout",
        &["rate", "noise_shape", "seed", "input_shape", "name"],
        1,
    )?;
    let rate = s[0].as_ref().unwrap_or(&Value::None).as_float()?;
    if !(0.0..1.0).contains(&rate) {
        return Err(PyErr::value_error(format!(
            "Invalid value received for argument `rate`. Expected a float value between 0 and 1. Received: rate={rate}"
        )));
    }
    let seed = given(&s[2])
        .map(|v| v.as_int().map(|x| x as u64))
        .transpose()?;
    let (shape, name) = common(&s, 3, 4)?;
    Ok(make(
        LayerKind::Dropout {
            rate: rate as f32,
            seed,
        },
        shape,
        name,
    ))
}

fn activation_layer(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("Activation", &["activation", "input_shape", "name"], 1)?;
    let act = activation_arg(given(&s[0]), ctx)?;
    let kind = if act == "softmax" {
        LayerKind::Softmax
    } else {
        LayerKind::Activation(Act::parse(&act).map_err(kerr)?)
    };
    let (shape, name) = common(&s, 1, 2)?;
    Ok(make(kind, shape, name))
}

fn reshape(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("Reshape", &["target_shape", "input_shape", "name"], 1)?;
    let target = s[0]
        .as_ref()
        .and_then(|v| v.as_seq())
        .ok_or_else(|| PyErr::type_error("target_shape must be a tuple of integers"))?
        .iter()
        .map(|v| v.as_int())
        .collect::<PyResult<Vec<_>>>()?;
    let (shape, name) = common(&s, 1, 2)?;
    Ok(make(
        LayerKind::Reshape {
            target_shape: target,
        },
        shape,
        name,
    ))
}

fn input_layer(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "InputLayer",
        &["shape", "batch_size", "dtype", "name", "input_shape"],
        0,
    )?;
    let shape = given(&s[0]).or(given(&s[4])).map(shape_arg).transpose()?;
    let name = given(&s[3])
        .map(|v| v.as_str().map(str::to_string))
        .transpose()?;
    Ok(Value::native(LayerObj {
        kind: None,
        input_shape: shape,
        name: RefCell::new(name),
        owner: RefCell::new(None),
    }))
}

/// `tf.keras.Input(shape=...)`.
pub fn input(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("Input", &["shape", "batch_size", "dtype", "name"], 1)?;
    let shape = shape_arg(s[0].as_ref().unwrap_or(&Value::None))?;
    Ok(Value::native(KerasTensor {
        shape,
        layers: vec![],
    }))
}

fn class(name: &str, body: fn(&Args, &mut dyn Ctx) -> PyResult<Value>) -> Value {
    NativeClass::new(name, "keras.src.layers", "")
        .base("Layer")
        .constructor(body)
        .into_value()
}

/// `tf.keras.layers`.
pub fn module() -> Value {
    NativeModule::new("keras.layers", "Keras layers.")
        .with("Dense", class("Dense", dense))
        .with("Conv2D", class("Conv2D", conv2d))
        .with("MaxPooling2D", class("MaxPooling2D", max_pool))
        .with("MaxPool2D", class("MaxPooling2D", max_pool))
        .with(
            "Flatten",
            class("Flatten", |a, c| {
                simple(a, c, "Flatten", LayerKind::Flatten)
            }),
        )
        .with(
            "Softmax",
            class("Softmax", |a, c| {
                simple(a, c, "Softmax", LayerKind::Softmax)
            }),
        )
        .with("Dropout", class("Dropout", dropout))
        .with("Activation", class("Activation", activation_layer))
        .with("Reshape", class("Reshape", reshape))
        .with("InputLayer", class("InputLayer", input_layer))
        .with(
            "Input",
            super::super::func(
                "Input",
                "Input(shape, batch_size=None, dtype=None, name=None)",
                input,
            ),
        )
        .with(
            "Layer",
            NativeClass::new("Layer", "keras.src.layers.layer", "").into_value(),
        )
        .into_value()
}
