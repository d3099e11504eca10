//! `layer(x)`: Keras's `Layer.__call__` for every layer (built-in, a user's subclass, a
//! model). On data it converts the inputs (numpy arrays and Python numbers become float32
//! tensors, as Keras's autocasting makes them), builds the layer from the input shape at
//! the first call, checks the input spec, runs the layer with `training` (given, else
//! inherited from the call around it) and the name scope of the call (so sublayers built
//! inside get `model/layer/...` paths), and records the output shape. Built-in layers
//! compute through the op library (`eager.rs`); a subclass runs its Python `call`; a
//! native model runs its layers. On symbolic tensors (`keras.Input`) it records a node of a
//! functional graph instead (`symbolic.rs`).

use super::super::super::convert::tensor_of;
use super::super::super::eager::{run, wrap, wrap_masked};
use super::super::super::tensor::Tensor;
use super::super::super::TfState;
use super::super::model::ModelObj;
use super::build::{build_builtin, out_dims};
use super::handle::{HandleKind, LayerHandle};
use super::lambda::LambdaLayer;
use super::layer::{dims_value, Dims, LayerObj};
use super::symbolic;
use crate::keras::LayerKind;
use crate::lang::{Args, Ctx, NativeFn, PyErr, PyResult, Value};
use crate::ops;
use crate::tensor::DType;

/// A call's arguments as Keras splits them.
pub struct CallArgs {
    pub inputs: Value,
    /// Positional arguments after the inputs.
    pub extra: Vec<Value>,
    pub training: Option<bool>,
    /// The `mask=` argument, when one was given (not `None`).
    pub mask: Option<Value>,
    /// Keyword arguments other than `inputs`, `training` and `mask`.
    pub kwargs: Vec<(String, Value)>,
}

impl CallArgs {
    pub fn split(args: Args) -> PyResult<CallArgs> {
        let mut pos = args.pos.into_iter();
        let mut inputs = pos.next();
        let mut training = None;
        let mut mask = None;
        let mut kwargs = vec![];
        for (k, v) in args.kw {
            match k.as_str() {
                "inputs" if inputs.is_none() => inputs = Some(v),
                "training" => {
                    training = match v {
                        Value::None => None,
                        other => Some(other.as_bool_strict()?),
                    }
                }
                "mask" => mask = Some(v).filter(|v| !v.is_none()),
                _ => kwargs.push((k, v)),
            }
        }
        let inputs = inputs.ok_or_else(|| {
            PyErr::type_error("__call__() missing 1 required positional argument: 'inputs'")
        })?;
        Ok(CallArgs {
            inputs,
            extra: pos.collect(),
            training,
            mask,
            kwargs,
        })
    }
}

/// The `training` flag of the call running now (`False` outside any call).
pub fn inherited_training(ctx: &mut dyn Ctx) -> bool {
    ctx.state()
        .get::<TfState>()
        .keras
        .training
        .last()
        .copied()
        .unwrap_or(false)
}

/// Runs `f` inside the name scope `name` with `training` in force, restoring both after.
pub fn in_call<R>(
    ctx: &mut dyn Ctx,
    name: &str,
    training: bool,
    f: impl FnOnce(&mut dyn Ctx) -> PyResult<R>,
) -> PyResult<R> {
    {
        let st = &mut ctx.state().get::<TfState>().keras;
        st.scope.push(name.to_string());
        st.training.push(training);
    }
    let out = f(ctx);
    let st = &mut ctx.state().get::<TfState>().keras;
    st.scope.pop();
    st.training.pop();
    out
}

/// An input converted as Keras converts a layer's inputs: tensors stay (floats other than
/// float32 are cast to it, and for built-in layers every dtype is), numpy arrays and
/// Python numbers become tensors; lists and tuples are converted item by item.
pub fn convert_input(v: &Value, builtin: bool, ctx: &mut dyn Ctx) -> PyResult<Value> {
    if matches!(v, Value::List(_) | Value::Tuple(_)) && !is_numeric_nest(v) {
        let items = v
            .as_seq()
            .unwrap_or_default()
            .iter()
            .map(|x| convert_input(x, builtin, ctx))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(match v {
            Value::Tuple(_) => Value::tuple(items),
            _ => Value::list(items),
        });
    }
    if super::super::track::is_layer_like(v) {
        return Err(PyErr::value_error(format!(
            "Inputs to a layer should be tensors. Got '{}' as input.",
            v.type_name()
        )));
    }
    let t = tensor_of(v, ctx)?;
    let cast = if builtin {
        t.dtype() != DType::F32
    } else {
        t.dtype().is_float() && t.dtype() != DType::F32
    };
    if cast {
        return run(ctx, |e| ops::cast(e, &t, DType::F32)).map(wrap);
    }
    if v.downcast::<Tensor>().is_some() {
        return Ok(v.clone());
    }
    Ok(wrap(t))
}

/// Whether a list holds numbers (a tensor's worth of data) rather than several inputs.
fn is_numeric_nest(v: &Value) -> bool {
    match v {
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => true,
        Value::List(_) | Value::Tuple(_) => v
            .as_seq()
            .unwrap_or_default()
            .first()
            .is_some_and(is_numeric_nest),
        _ => false,
    }
}

/// The shape Keras hands to `build`: one tensor's dims, or a list of them.
pub fn shape_of(v: &Value) -> Option<Vec<Dims>> {
    if let Some(t) = v.downcast::<Tensor>() {
        return Some(vec![t.tensor.shape().iter().map(|d| Some(*d)).collect()]);
    }
    let items = v.as_seq()?;
    let mut out = vec![];
    for i in items {
        out.extend(shape_of(&i)?);
    }
    Some(out)
}

/// The first input tensor of a call.
pub fn first_tensor(v: &Value) -> Option<ops::Tensor> {
    if let Some(t) = v.downcast::<Tensor>() {
        return Some(t.tensor.clone());
    }
    v.as_seq()?.iter().find_map(first_tensor)
}

/// `layer(inputs, training=..., **kwargs)` for any layer.
pub fn call_layer(this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let handle = match LayerHandle::of(this, ctx) {
        Some(h) => h,
        None => super::base::ensure_core(this, ctx)?,
    };
    let call = CallArgs::split(args)?;
    if symbolic::is_symbolic(&call.inputs) {
        return symbolic::call(&handle, call, ctx);
    }
    // Built-in layers take float32 whatever they are given; Keras's autocasting casts only
    // the floats a user's layer or a Lambda gets.
    let builtin = !handle.is_subclass() && !matches!(handle.kind, HandleKind::Lambda);
    let x = convert_input(&call.inputs, builtin, ctx)?;
    let training = match call.training {
        Some(t) => t,
        None => inherited_training(ctx),
    };
    let shapes = shape_of(&x).unwrap_or_default();
    // Keras checks the spec the layer has now (before a build, the one of its class), then
    // builds: a wrong rank fails before any variable is made.
    if let (Some(spec), Some(shape)) = (handle.core.input_spec.borrow().clone(), shapes.first()) {
        spec.check(&handle.core.name(), 0, shape)?;
    }
    if !is_built(&handle, ctx) {
        build(&handle, &x, &shapes, ctx)?;
    }
    let name = handle.core.name();
    let out = in_call(ctx, &name, training, |ctx| {
        run_call(&handle, &x, &call, training, ctx)
    })?;
    if let Some(s) = shape_of(&out).and_then(|s| s.into_iter().next()) {
        *handle.core.output_shape.borrow_mut() = Some(s);
    }
    Ok(out)
}

/// Whether the layer is built, as Python sees it (a subclass's `built` attribute).
pub fn is_built(h: &LayerHandle, ctx: &mut dyn Ctx) -> bool {
    if h.is_subclass() {
        if let Ok(v) = ctx.getattr(&h.this, "built") {
            return v.as_bool_strict().unwrap_or(false);
        }
    }
    h.core.built.get()
}

/// Marks a subclass (or any layer) built, as Keras's `self.built = True` does.
pub fn mark_built(h: &LayerHandle, ctx: &mut dyn Ctx) -> PyResult<()> {
    h.core.built.set(true);
    if h.is_subclass() {
        ctx.setattr(&h.this, "built", Value::Bool(true))?;
    }
    Ok(())
}

/// Builds a layer at its first call, from the shapes of its inputs.
fn build(h: &LayerHandle, x: &Value, shapes: &[Dims], ctx: &mut dyn Ctx) -> PyResult<()> {
    let first = shapes.first().cloned().unwrap_or_default();
    match &h.kind {
        HandleKind::Builtin => {
            if let Some(l) = h.this.downcast::<LayerObj>() {
                build_builtin(l, &h.this, &first, None, ctx)?;
            }
            Ok(())
        }
        HandleKind::Model(m) if !h.is_subclass() => match m.downcast::<ModelObj>() {
            Some(model) => model.build_for(m, &first, ctx),
            None => Ok(()),
        },
        // A Lambda has no variables: building only records the shape.
        HandleKind::Lambda => {
            *h.core.build_shape.borrow_mut() = Some(first);
            mark_built(h, ctx)
        }
        _ => {
            let arg = match x {
                Value::List(_) | Value::Tuple(_) => {
                    Value::list(shapes.iter().map(|s| dims_value(s)).collect())
                }
                _ => dims_value(&first),
            };
            let f = ctx.getattr(&h.this, "build")?;
            if f.downcast::<NativeFn>().is_none() {
                ctx.call(&f, Args::new(vec![arg]))?;
            }
            *h.core.build_shape.borrow_mut() = Some(first);
            if let HandleKind::Model(m) = &h.kind {
                if let Some(model) = m.downcast::<ModelObj>() {
                    // A subclassed model's variables were made just now, under the scope
                    // it was created in: `fit` checks that scope against the active one.
                    *model.created_under.borrow_mut() = model.scope_at_creation.clone();
                }
            }
            mark_built(h, ctx)
        }
    }
}

/// The computation of one call, inside the layer's name scope.
fn run_call(
    h: &LayerHandle,
    x: &Value,
    call: &CallArgs,
    training: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Value> {
    match &h.kind {
        HandleKind::Builtin => {
            let Some(l) = h.this.downcast::<LayerObj>() else {
                return Ok(x.clone());
            };
            let Some(kind) = l.kind() else {
                return Ok(x.clone());
            };
            if let LayerKind::Merge(op) = kind {
                let xs = match x {
                    Value::List(_) | Value::Tuple(_) => x
                        .as_seq()
                        .unwrap_or_default()
                        .iter()
                        .map(|v| tensor_of(v, ctx))
                        .collect::<PyResult<Vec<_>>>()?,
                    _ => {
                        let shape = first_tensor(x).map(|t| t.shape().to_vec());
                        let shape = shape.unwrap_or_default();
                        let features = shape.get(1..).unwrap_or(&[]);
                        return Err(super::merge::merge_err(crate::keras::merge::not_a_list(
                            features,
                        )));
                    }
                };
                return super::merge::forward(*op, &xs, ctx).map(wrap);
            }
            let t = first_tensor(x).ok_or_else(|| {
                PyErr::value_error(format!(
                    "Layer '{}' expects 1 input(s), but it received a structure of inputs.",
                    h.core.name()
                ))
            })?;
            let weights = h.core.weights.borrow().clone();
            let trainable = h.core.trainable.get();
            let explicit = match &call.mask {
                Some(m) => Some(tensor_of(m, ctx)?),
                None => None,
            };
            let previous = super::mask::previous_mask(&call.inputs, explicit);
            let out_mask = run(ctx, |e| {
                super::mask::output_mask(e, kind, &t, previous.as_ref())
            })?;
            if let LayerKind::Bidirectional(b) = kind {
                let outs =
                    super::eager::bidirectional_call(b, &weights, &t, previous.as_ref(), ctx)?;
                let mut outs = outs.into_iter().map(|o| wrap_masked(o, out_mask.clone()));
                return Ok(match b.merge_mode {
                    None => Value::tuple(outs.collect()),
                    Some(_) => outs.next().unwrap_or(Value::None),
                });
            }
            if let LayerKind::Recurrent(r) = kind {
                // `initial_state` by keyword or as the second positional argument.
                let given = call
                    .kwargs
                    .iter()
                    .find(|(k, _)| k == "initial_state")
                    .map(|(_, v)| v.clone())
                    .or_else(|| call.extra.first().cloned())
                    .filter(|v| !v.is_none());
                let initial = match given {
                    Some(v) => match v.as_seq() {
                        Some(items) => items
                            .iter()
                            .map(|s| tensor_of(s, ctx))
                            .collect::<PyResult<Vec<_>>>()?,
                        None => vec![tensor_of(&v, ctx)?],
                    },
                    None => vec![],
                };
                let outs = super::eager::recurrent_call(
                    r,
                    &weights,
                    &t,
                    &initial,
                    previous.as_ref(),
                    ctx,
                )?;
                // Only the output carries the mask; the states carry none.
                let mut outs = outs
                    .into_iter()
                    .enumerate()
                    .map(|(i, o)| wrap_masked(o, out_mask.clone().filter(|_| i == 0)));
                return Ok(if r.return_state {
                    Value::tuple(outs.collect())
                } else {
                    outs.next().unwrap_or(Value::None)
                });
            }
            super::eager::forward(
                kind,
                &weights,
                &t,
                previous.as_ref(),
                training,
                trainable,
                ctx,
            )
            .map(|y| wrap_masked(y, out_mask))
        }
        HandleKind::Model(m) if !h.is_subclass() => match m.downcast::<ModelObj>() {
            Some(model) => model.call_on(m, x, training, ctx),
            None => Ok(x.clone()),
        },
        HandleKind::Lambda => {
            let Some(l) = h.this.downcast::<LambdaLayer>() else {
                return Ok(x.clone());
            };
            let explicit = match &call.mask {
                Some(m) => Some(tensor_of(m, ctx)?),
                None => None,
            };
            let previous = super::mask::previous_mask(&call.inputs, explicit);
            l.call(x, previous, training, ctx)
        }
        _ => {
            let f = ctx.getattr(&h.this, "call")?;
            if f.downcast::<NativeFn>().is_some() {
                return Err(PyErr::not_implemented(format!(
                    "Layer {} does not have a `call()` method implemented.",
                    h.this.type_name()
                )));
            }
            let mut args = Args::new(
                std::iter::once(x.clone())
                    .chain(call.extra.clone())
                    .collect(),
            );
            args.kw = call.kwargs.clone();
            if ctx.accepts_keyword(&f, "training") == Some(true)
                && !args.kw.iter().any(|(k, _)| k == "training")
            {
                args.kw.push(("training".into(), Value::Bool(training)));
            }
            ctx.call(&f, args)
        }
    }
}

/// The output shape a built-in layer gives for `input` (with the batch axis).
pub fn builtin_out_dims(l: &LayerObj, input: &[Option<usize>]) -> PyResult<Dims> {
    match l.kind() {
        Some(kind) => out_dims(&l.core.name(), kind, input),
        None => Ok(input.to_vec()),
    }
}
