//! `tf.keras.layers.Lambda(function, output_shape=None, mask=None, arguments=None)`: a
//! layer whose call is a Python function. The function runs on the op library like any
//! other code of a cell (its `tf.*` calls are ops that tapes record), so a model holding a
//! Lambda trains through the op trainer, one replica after another under a strategy, as a
//! model holding a user's layer does. The engine never sees the function: a Python value
//! cannot leave the interpreter's thread, which is why this layer lives here and not among
//! the engine's `LayerKind`s.
//!
//! This file owns the layer's arguments, its call (Keras's `arguments`, `mask` and
//! `training` passing), its output shape on symbolic tensors (the given `output_shape`, or
//! the function run once on zeros, where Keras traces it on symbolic tensors), its output
//! mask and its `get_config()`. It must not reach the engine's layer table or saving.

use std::any::Any;
use std::rc::Rc;

use super::super::super::convert::{tensor_err, tensor_of, tensor_value};
use super::super::super::eager::{context, wrap_masked};
use super::super::super::tensor::Tensor;
use super::super::super::{address_of, bound, given};
use super::base::{check_kwargs, unique_name};
use super::call::first_tensor;
use super::handle::{HandleKind, LayerHandle};
use super::layer::{common_attr, dims_value, json_value, Dims, LayerCore};
use crate::lang::{Args, Ctx, Object, PyErr, PyResult, Value};
use crate::tensor::{DType, NdArray};

/// A `Lambda` layer.
pub struct LambdaLayer {
    pub core: Rc<LayerCore>,
    /// The function the layer calls on its inputs.
    function: Value,
    /// `output_shape=`: a tuple without the batch axis, or a function of the input shape.
    output_shape: Option<Value>,
    /// `mask=`: a function `(inputs, mask)` giving the output's mask, or the mask itself.
    mask: Option<Value>,
    /// `arguments=`: keyword arguments handed to every call of the function.
    arguments: Value,
    /// Whether the function takes `training` and `mask` (Keras passes them only then).
    takes_training: bool,
    takes_mask: bool,
}

/// Keras's error when the output shape of a Lambda cannot be traced.
const NO_SHAPE: &str = "We could not automatically infer the shape of the Lambda's output. \
                        Please specify the `output_shape` argument for this Lambda layer.";

/// `Lambda(function, output_shape=None, mask=None, arguments=None, **kwargs)`.
pub fn lambda(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let own = ["function", "output_shape", "mask", "arguments"];
    let (mine, rest): (Vec<_>, Vec<_>) = args
        .kw
        .iter()
        .cloned()
        .partition(|(k, _)| own.contains(&k.as_str()));
    check_kwargs("Lambda", &rest, &[])?;
    // A first layer's input shape would have to reach the Sequential holding it, which
    // reads it from the engine's layers only; `keras.Input` says the same thing.
    if let Some((k, _)) = rest.iter().find(|(k, v)| {
        matches!(k.as_str(), "input_shape" | "input_dim" | "batch_size") && !v.is_none()
    }) {
        return Err(PyErr::not_implemented(format!(
            "Lambda({k}=...) is not supported here: start the model with keras.Input(shape) instead"
        )));
    }
    let s = Args {
        pos: args.pos.clone(),
        kw: mine,
    }
    .bind("Lambda.__init__", &own, 1)?;
    let function = s[0].clone().unwrap_or(Value::None);
    // Keras reads the function's parameters with `inspect.getfullargspec`, which refuses
    // what is not a function.
    if !is_callable(&function, ctx) {
        return Err(PyErr::type_error("unsupported callable"));
    }
    let takes = |name: &str, ctx: &mut dyn Ctx| ctx.accepts_keyword(&function, name) == Some(true);
    let takes_training = takes("training", ctx);
    let takes_mask = takes("mask", ctx);
    let arguments = match given(&s[3]) {
        Some(v @ Value::Dict(_)) => v.clone(),
        Some(v) if !ctx.truthy(v)? => Value::dict_from(vec![]),
        Some(v) => {
            return Err(PyErr::type_error(format!(
                "'{}' object is not a mapping",
                v.type_name()
            )))
        }
        None => Value::dict_from(vec![]),
    };
    let get = |k: &str| {
        rest.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_none())
    };
    let name = match get("name") {
        Some(v) => v.as_str()?.to_string(),
        None => unique_name(ctx, "lambda"),
    };
    let core = LayerCore::new(name);
    if let Some(t) = get("trainable") {
        core.trainable.set(t.as_bool_strict()?);
    }
    Ok(Value::native(LambdaLayer {
        core: Rc::new(core),
        function,
        output_shape: given(&s[1]).cloned(),
        mask: given(&s[2]).cloned(),
        arguments,
        takes_training,
        takes_mask,
    }))
}

/// Whether `v` is something Python could call: a function, method, class or native
/// callable, never a number, string, container or tensor. (`inspect.getfullargspec`, which
/// Keras asks, refuses the same values.)
fn is_callable(v: &Value, _ctx: &mut dyn Ctx) -> bool {
    matches!(v, Value::Obj(_) | Value::Native(_)) && v.downcast::<Tensor>().is_none()
}

impl LambdaLayer {
    /// Keras's `Lambda.call`: the function on the inputs, with the `arguments`, and the
    /// input's mask and the `training` flag when the function takes them; the output
    /// carries the mask that `mask=` gives.
    pub fn call(
        &self,
        x: &Value,
        previous: Option<crate::ops::Tensor>,
        training: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Value> {
        let mut a = Args::new(vec![x.clone()]);
        if let Value::Dict(d) = &self.arguments {
            for (k, v) in d.borrow().items() {
                a.kw.push((k.as_str()?.to_string(), v.clone()));
            }
        }
        let mask_value = previous
            .clone()
            .map_or(Value::None, |m| wrap_masked(m, None));
        if self.takes_mask {
            a.kw.push(("mask".into(), mask_value.clone()));
        }
        if self.takes_training {
            a.kw.push(("training".into(), Value::Bool(training)));
        }
        let out = ctx.call(&self.function, a)?;
        let Some(mask) = &self.mask else {
            return Ok(out);
        };
        // `compute_mask`: the function's answer, or the mask given itself.
        let m = if is_callable(mask, ctx) {
            ctx.call(mask, Args::new(vec![x.clone(), mask_value]))?
        } else {
            mask.clone()
        };
        let Some(t) = out.downcast::<Tensor>() else {
            return Ok(out);
        };
        let m = match m {
            Value::None => None,
            m => Some(tensor_of(&m, ctx)?),
        };
        Ok(wrap_masked(t.tensor.clone(), m))
    }

    /// The output shape of a call on symbolic tensors of `shapes` (each with the batch
    /// axis): from `output_shape` when given, else from running the function once on zeros
    /// with no tape recording, where Keras traces it on symbolic tensors.
    pub fn output_dims(&self, shapes: &[Dims], list: bool, ctx: &mut dyn Ctx) -> PyResult<Dims> {
        let batch = shapes.first().and_then(|s| s.first().copied()).flatten();
        match &self.output_shape {
            Some(f) if is_callable(f, ctx) => {
                let arg = if list {
                    Value::list(shapes.iter().map(|s| dims_value(s)).collect())
                } else {
                    dims_value(shapes.first().map(Vec::as_slice).unwrap_or(&[]))
                };
                let r = ctx.call(f, Args::new(vec![arg]))?;
                dims_of(&r, ctx)
            }
            Some(sizes) => {
                let mut out = vec![batch];
                out.extend(dims_of(sizes, ctx)?);
                Ok(out)
            }
            None => {
                let zeros = |s: &Dims| -> PyResult<Value> {
                    let shape: Vec<usize> = s.iter().map(|d| d.unwrap_or(1)).collect();
                    let a = NdArray::zeros(&shape, DType::F32).map_err(tensor_err)?;
                    Ok(tensor_value(a))
                };
                let x = if list {
                    Value::list(shapes.iter().map(zeros).collect::<PyResult<_>>()?)
                } else {
                    zeros(shapes.first().unwrap_or(&vec![None]))?
                };
                context(ctx).pause();
                let r = self.call(&x, None, false, ctx);
                context(ctx).resume();
                let out = r.map_err(|_| PyErr::not_implemented(NO_SHAPE))?;
                let t = match (first_tensor(&out), out.as_seq()) {
                    (Some(t), None) => t,
                    _ => return Err(PyErr::not_implemented(NO_SHAPE)),
                };
                let mut dims: Dims = t.shape().iter().map(|d| Some(*d)).collect();
                // The zeros stood for a batch of one: the batch axis stays unknown.
                if let Some(b) = dims.first_mut() {
                    *b = batch;
                }
                Ok(dims)
            }
        }
    }

    /// Keras's `Lambda.get_config()`: the base layer's entries, the function, the output
    /// shape and mask when given, and the arguments.
    fn config(&self, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let policy = serde_json::json!({"module": "keras", "class_name": "DTypePolicy",
            "config": {"name": "float32"}, "registered_name": null});
        let mut pairs = vec![
            ("name", Value::from(self.core.name())),
            ("trainable", Value::Bool(self.core.trainable.get())),
            ("dtype", json_value(&policy)),
            ("function", function_config(&self.function, ctx)?),
        ];
        if let Some(s) = &self.output_shape {
            let v = if is_callable(s, ctx) {
                function_config(s, ctx)?
            } else {
                s.clone()
            };
            pairs.push(("output_shape", v));
        }
        if let Some(m) = &self.mask {
            if !is_callable(m, ctx) {
                return Err(PyErr::not_implemented(
                    "get_config() of a Lambda whose mask is a tensor is not supported here",
                ));
            }
            pairs.push(("mask", function_config(m, ctx)?));
        }
        pairs.push(("arguments", plain_copy(&self.arguments)?));
        Ok(Value::dict_from(pairs))
    }
}

/// A function as Keras serializes it in a Lambda's config: a named function by its name;
/// a Python lambda Keras writes as its marshalled CPython bytecode, which this interpreter
/// does not have, so that is refused.
fn function_config(f: &Value, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let name = ctx.getattr(f, "__name__")?;
    let name = name.as_str()?.to_string();
    if name == "<lambda>" {
        return Err(PyErr::not_implemented(
            "serializing a Lambda layer whose function is a Python lambda is not supported \
             here: Keras writes the lambda's CPython bytecode; use a named function (def) instead",
        ));
    }
    Ok(Value::dict_from(vec![
        ("module", Value::str("builtins")),
        ("class_name", Value::str("function")),
        ("config", Value::str(&name)),
        ("registered_name", Value::str("function")),
    ]))
}

/// `serialize_keras_object` of the `arguments`: plain values are kept as they are (a new
/// dict, lists and tuples copied); other objects are refused.
fn plain_copy(v: &Value) -> PyResult<Value> {
    Ok(match v {
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => v.clone(),
        Value::List(_) | Value::Tuple(_) => {
            let items = v
                .as_seq()
                .unwrap_or_default()
                .iter()
                .map(plain_copy)
                .collect::<PyResult<Vec<_>>>()?;
            match v {
                Value::Tuple(_) => Value::tuple(items),
                _ => Value::list(items),
            }
        }
        Value::Dict(d) => {
            let items: Vec<(Value, Value)> = d
                .borrow()
                .items()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let mut pairs = vec![];
            for (k, x) in items {
                pairs.push((k.as_str()?.to_string(), plain_copy(&x)?));
            }
            Value::dict_from(pairs.iter().map(|(k, x)| (k.as_str(), x.clone())).collect())
        }
        other => {
            return Err(PyErr::not_implemented(format!(
                "get_config() of a Lambda whose arguments hold a {} is not supported here",
                other.type_name()
            )))
        }
    })
}

/// A shape (tuple or list of sizes and `None`s) as dims.
fn dims_of(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Dims> {
    let mut out = vec![];
    for d in ctx.iterate(v)? {
        if d.is_none() {
            out.push(None);
            continue;
        }
        let n = usize::try_from(d.as_int()?).map_err(|_| {
            PyErr::value_error(format!("Invalid output_shape: {}", d.as_int().unwrap_or(0)))
        })?;
        out.push(Some(n));
    }
    Ok(out)
}

impl Object for LambdaLayer {
    fn type_name(&self) -> String {
        "Lambda".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        let built = if self.core.built.get() {
            "True"
        } else {
            "False"
        };
        Ok(format!("<Lambda name={}, built={built}>", self.core.name()))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match name {
            "function" => return Ok(Some(self.function.clone())),
            "arguments" => return Ok(Some(self.arguments.clone())),
            "mask" => return Ok(Some(self.mask.clone().unwrap_or(Value::None))),
            "supports_masking" => return Ok(Some(Value::Bool(self.mask.is_some()))),
            "get_config" => {
                return Ok(Some(bound::<LambdaLayer>(this, name, |l, _, _, c| {
                    l.config(c)
                })))
            }
            "compute_output_shape" => {
                return Ok(Some(bound::<LambdaLayer>(this, name, |l, _, a, c| {
                    let s = a.bind("compute_output_shape", &["input_shape"], 1)?;
                    let shape = s[0].clone().unwrap_or(Value::None);
                    let dims = dims_of(&shape, c)?;
                    Ok(dims_value(&l.output_dims(&[dims], false, c)?))
                })))
            }
            "build" => {
                return Ok(Some(bound::<LambdaLayer>(this, name, |l, _, a, c| {
                    let s = a.bind("build", &["input_shape"], 0)?;
                    if let Some(v) = given(&s[0]) {
                        *l.core.build_shape.borrow_mut() = Some(dims_of(v, c)?);
                    }
                    l.core.built.set(true);
                    Ok(Value::None)
                })))
            }
            "__call__" => {
                return Ok(Some(bound::<LambdaLayer>(this, name, |_, this, a, c| {
                    super::call::call_layer(this, a.clone(), c)
                })))
            }
            _ => {}
        }
        let handle = LayerHandle {
            this: this.clone(),
            core: self.core.clone(),
            kind: HandleKind::Lambda,
        };
        common_attr(&handle, this, name, ctx)
    }
    fn setattr(&self, name: &str, v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "trainable" => {
                self.core.trainable.set(v.as_bool_strict()?);
                Ok(())
            }
            _ => Err(PyErr::attribute_error(format!(
                "can't set attribute '{name}' of a Lambda layer here"
            ))),
        }
    }
    fn call(&self, this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        super::call::call_layer(this, args, ctx)
    }
    fn class_chain(&self) -> Vec<String> {
        vec!["Lambda".into(), "Layer".into(), "Operation".into()]
    }
    fn hash(&self) -> Option<u64> {
        Some(address_of(self).len() as u64 ^ (self as *const LambdaLayer as usize as u64))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
