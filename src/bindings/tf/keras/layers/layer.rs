//! What every Keras layer holds ([`LayerCore`]: its name, whether it is built, whether it
//! trains, the variables it made, the input spec it checks, the shapes it was built for and
//! last produced) and the built-in layers as natives ([`LayerObj`]: a core plus the engine's
//! [`LayerKind`]). A user's subclass of `Layer` keeps its core in an instance attribute
//! (`base.rs`); models keep one too. The attributes Keras gives every layer (`weights`,
//! `trainable_weights`, `get_weights`, `count_params`, ...) are answered here from the core,
//! for built-in layers directly and for subclasses through the `Layer` class's properties.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::super::super::convert::tensor_of;
use super::super::super::eager::{run, wrap};
use super::super::super::{address_of, bound, given};
use super::super::variable::{keras_variable, weight_array};
use super::handle::{layer_weights, LayerHandle};
use crate::keras::LayerKind;
use crate::lang::{Args, Ctx, NativeFn, Object, PyErr, PyResult, Value};

/// A shape with the batch axis, `None` where unknown.
pub type Dims = Vec<Option<usize>>;

/// `(None, 4)`, as Keras prints shapes.
pub fn dims_text(d: &[Option<usize>]) -> String {
    let parts: Vec<String> = d
        .iter()
        .map(|x| x.map_or("None".to_string(), |n| n.to_string()))
        .collect();
    super::super::super::py_tuple(&parts)
}

/// A shape as the Python tuple Keras hands to `build` and `compute_output_shape`.
pub fn dims_value(d: &[Option<usize>]) -> Value {
    Value::tuple(
        d.iter()
            .map(|x| x.map_or(Value::None, |n| Value::Int(n as i64)))
            .collect(),
    )
}

/// Keras's `InputSpec`: what a layer checks about each input before calling it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InputSpec {
    pub ndim: Option<usize>,
    pub min_ndim: Option<usize>,
    /// `(axis, size)`: the size an axis must have (negative axes count from the end).
    pub axes: Vec<(i64, usize)>,
}

impl InputSpec {
    /// `InputSpec(min_ndim=2, axes={-1: 4})`, as Keras prints it.
    pub fn text(&self) -> String {
        let mut parts = vec![];
        if let Some(n) = self.ndim {
            parts.push(format!("ndim={n}"));
        }
        if let Some(n) = self.min_ndim {
            parts.push(format!("min_ndim={n}"));
        }
        if !self.axes.is_empty() {
            let axes: Vec<String> = self.axes.iter().map(|(a, v)| format!("{a}: {v}")).collect();
            parts.push(format!("axes={{{}}}", axes.join(", ")));
        }
        format!("InputSpec({})", parts.join(", "))
    }

    /// Keras's `assert_input_compatibility` for input `index` of layer `layer`.
    pub fn check(&self, layer: &str, index: usize, shape: &[Option<usize>]) -> PyResult<()> {
        let head = format!(
            "Input {index} with name 'None' of layer '{layer}' is incompatible with the layer:"
        );
        let ndim = shape.len();
        if let Some(n) = self.ndim {
            if ndim != n {
                return Err(PyErr::value_error(format!(
                    "{head} expected ndim={n}, found ndim={ndim}. Full shape received: {}",
                    dims_text(shape)
                )));
            }
        }
        if let Some(n) = self.min_ndim {
            if ndim < n {
                return Err(PyErr::value_error(format!(
                    "{head} expected min_ndim={n}, found ndim={ndim}. Full shape received: {}",
                    dims_text(shape)
                )));
            }
        }
        for (axis, want) in &self.axes {
            let i = if *axis < 0 { ndim as i64 + axis } else { *axis };
            let got = usize::try_from(i).ok().and_then(|i| shape.get(i)).copied();
            if let Some(Some(g)) = got {
                if g != *want {
                    return Err(PyErr::value_error(format!(
                        "{head} expected axis {axis} of input shape to have value {want}, but \
                         received input with shape {}",
                        dims_text(shape)
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The state every layer has, whatever computes it.
pub struct LayerCore {
    pub name: RefCell<String>,
    pub built: Cell<bool>,
    pub trainable: Cell<bool>,
    /// The variables this layer made itself, in creation order (not its sublayers').
    pub weights: RefCell<Vec<Value>>,
    pub input_spec: RefCell<Option<InputSpec>>,
    /// The input shape it was built for (with the batch axis).
    pub build_shape: RefCell<Option<Dims>>,
    /// The output shape of its last call (with the batch axis).
    pub output_shape: RefCell<Option<Dims>>,
    /// How many times it was called on symbolic tensors: each call is a node of a
    /// functional graph, numbered from 0 as "Connected to" numbers them.
    pub symbolic_calls: Cell<usize>,
}

impl LayerCore {
    pub fn new(name: String) -> LayerCore {
        LayerCore {
            name: RefCell::new(name),
            built: Cell::new(false),
            trainable: Cell::new(true),
            weights: RefCell::new(vec![]),
            input_spec: RefCell::new(None),
            build_shape: RefCell::new(None),
            output_shape: RefCell::new(None),
            symbolic_calls: Cell::new(0),
        }
    }

    pub fn name(&self) -> String {
        self.name.borrow().clone()
    }
}

/// What a built-in layer is: one of the engine's layer kinds, or an `InputLayer`.
#[derive(Debug, Clone, PartialEq)]
pub enum Builtin {
    Kind(LayerKind),
    /// `InputLayer` (what `keras.Input` makes): its shape without the batch axis.
    Input,
}

/// A built-in layer.
pub struct LayerObj {
    pub builtin: Builtin,
    /// The `input_shape=` (or `input_dim=`) given to its constructor, without the batch axis.
    pub input_shape: Option<Vec<usize>>,
    pub core: Rc<LayerCore>,
}

impl LayerObj {
    pub fn new(builtin: Builtin, input_shape: Option<Vec<usize>>, name: String) -> LayerObj {
        let spec = match &builtin {
            Builtin::Kind(k) => initial_spec(k),
            Builtin::Input => None,
        };
        let core = LayerCore::new(name);
        *core.input_spec.borrow_mut() = spec;
        LayerObj {
            builtin,
            input_shape,
            core: Rc::new(core),
        }
    }

    pub fn kind(&self) -> Option<&LayerKind> {
        match &self.builtin {
            Builtin::Kind(k) => Some(k),
            Builtin::Input => None,
        }
    }

    pub fn class_name(&self) -> &'static str {
        self.kind().map_or("InputLayer", |k| k.class_name())
    }
}

/// The spec a layer checks before it is built.
fn initial_spec(kind: &LayerKind) -> Option<InputSpec> {
    match kind {
        LayerKind::Dense { .. } => Some(InputSpec {
            min_ndim: Some(2),
            ..InputSpec::default()
        }),
        LayerKind::Conv2D { .. } => Some(InputSpec {
            min_ndim: Some(4),
            ..InputSpec::default()
        }),
        LayerKind::Conv1D(_) => Some(InputSpec {
            min_ndim: Some(3),
            ..InputSpec::default()
        }),
        LayerKind::MaxPooling2D { .. } => Some(InputSpec {
            ndim: Some(4),
            ..InputSpec::default()
        }),
        // (batch, time, features).
        LayerKind::Recurrent(_) | LayerKind::Bidirectional(_) => Some(InputSpec {
            ndim: Some(3),
            ..InputSpec::default()
        }),
        LayerKind::Flatten => Some(InputSpec {
            min_ndim: Some(1),
            ..InputSpec::default()
        }),
        LayerKind::Stateless(s) => s.input_ndim().map(|n| InputSpec {
            ndim: Some(n),
            ..InputSpec::default()
        }),
        _ => None,
    }
}

/// The spec a built layer checks: its kernel fixes the size of the last input axis.
pub fn built_spec(kind: &LayerKind, input: &[Option<usize>]) -> Option<InputSpec> {
    let last = input.last().copied().flatten();
    match (kind, last) {
        (LayerKind::Dense { .. }, Some(c)) => Some(InputSpec {
            min_ndim: Some(2),
            axes: vec![(-1, c)],
            ..InputSpec::default()
        }),
        (LayerKind::Conv2D { .. }, Some(c)) => Some(InputSpec {
            min_ndim: Some(4),
            axes: vec![(-1, c)],
            ..InputSpec::default()
        }),
        (LayerKind::Conv1D(_), Some(c)) => Some(InputSpec {
            min_ndim: Some(3),
            axes: vec![(-1, c)],
            ..InputSpec::default()
        }),
        // Keras fixes the rank, and a batch normalization the size of its feature axis.
        (LayerKind::Norm(n), _) => {
            let size = n
                .axis_index(input.len())
                .ok()
                .and_then(|i| input.get(i).copied().flatten());
            Some(InputSpec {
                ndim: Some(input.len()),
                axes: match (n, size) {
                    (crate::keras::norm::Norm::BatchNormalization { axis, .. }, Some(c)) => {
                        vec![(*axis, c)]
                    }
                    _ => vec![],
                },
                ..InputSpec::default()
            })
        }
        _ => initial_spec(kind),
    }
}

/// The attributes every layer answers from its core and its variables. `handle` is the
/// layer as a whole (its sublayers count for `weights`).
pub fn common_attr(
    handle: &LayerHandle,
    this: &Value,
    name: &str,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Value>> {
    let core = handle.core();
    Ok(Some(match name {
        "name" => Value::from(core.name()),
        "built" => Value::Bool(core.built.get()),
        "trainable" => Value::Bool(core.trainable.get()),
        "dtype" | "compute_dtype" | "variable_dtype" => Value::str("float32"),
        "input_spec" => match core.input_spec.borrow().as_ref() {
            Some(s) => Value::native(SpecValue(s.clone())),
            None => Value::None,
        },
        "weights" | "variables" => Value::list(layer_weights(handle, ctx, None)?),
        "trainable_weights" | "trainable_variables" => {
            Value::list(layer_weights(handle, ctx, Some(true))?)
        }
        "non_trainable_weights" | "non_trainable_variables" => {
            Value::list(layer_weights(handle, ctx, Some(false))?)
        }
        "get_weights" => {
            let h = handle.clone();
            NativeFn::value("get_weights", "", move |_, c| {
                let mut out = vec![];
                for w in layer_weights(&h, c, None)? {
                    let numpy = c.getattr(&w, "numpy")?;
                    out.push(c.call(&numpy, Args::default())?);
                }
                Ok(Value::list(out))
            })
        }
        "set_weights" => {
            let h = handle.clone();
            NativeFn::value("set_weights", "", move |a, c| {
                let s = a.bind("set_weights", &["weights"], 1)?;
                set_weights(&h, s[0].as_ref().unwrap_or(&Value::None), c)?;
                Ok(Value::None)
            })
        }
        "count_params" => {
            let h = handle.clone();
            NativeFn::value("count_params", "", move |_, c| {
                if !h.core().built.get() {
                    return Err(PyErr::value_error(format!(
                        "You tried to call `count_params` on layer '{}', but the layer isn't \
                         built. You can build it manually via: `layer.build(input_shape)`.",
                        h.core().name()
                    )));
                }
                let n: usize = layer_weights(&h, c, None)?
                    .iter()
                    .filter_map(keras_variable)
                    .map(|v| v.size())
                    .sum();
                Ok(Value::Int(n as i64))
            })
        }
        "output" => {
            return Err(PyErr::attribute_error(format!(
                "The layer {} has never been called and thus has no defined output.",
                core.name()
            )))
        }
        _ => {
            let _ = this;
            return Ok(None);
        }
    }))
}

/// `layer.set_weights(weights)` with Keras's checks: as many arrays as variables, each of
/// the variable's shape.
pub fn set_weights(handle: &LayerHandle, arrays: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
    let items = ctx.iterate(arrays)?;
    let vars = layer_weights(handle, ctx, None)?;
    let what = if handle.is_model() { "model" } else { "layer" };
    if items.len() != vars.len() {
        return Err(PyErr::value_error(format!(
            "You called `set_weights(weights)` on {what} '{}' with a weight list of length {}, \
             but the {what} was expecting {} weights.",
            handle.core().name(),
            items.len(),
            vars.len()
        )));
    }
    let mut arrays = Vec::with_capacity(items.len());
    for (item, var) in items.iter().zip(&vars) {
        let a = weight_array(item, ctx)?;
        let want = keras_variable(var).map(|v| v.shape()).unwrap_or_default();
        if a.shape() != want.as_slice() {
            return Err(PyErr::value_error(format!(
                "Layer {} weight shape {} is not compatible with provided weight shape {}.",
                handle.core().name(),
                crate::tensor::shape_str(&want),
                crate::tensor::shape_str(a.shape())
            )));
        }
        arrays.push(a);
    }
    for (a, var) in arrays.iter().zip(&vars) {
        if let Some(v) = keras_variable(var) {
            v.store(a)?;
        }
    }
    Ok(())
}

/// `layer.input_spec` as a value.
pub struct SpecValue(pub InputSpec);

impl Object for SpecValue {
    fn type_name(&self) -> String {
        "InputSpec".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(self.0.text())
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let opt = |n: Option<usize>| n.map_or(Value::None, |n| Value::Int(n as i64));
        Ok(match name {
            "ndim" => Some(opt(self.0.ndim)),
            "min_ndim" => Some(opt(self.0.min_ndim)),
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
        Ok(format!(
            "<{} name={}, built={}>",
            self.class_name(),
            self.core.name(),
            if self.core.built.get() {
                "True"
            } else {
                "False"
            }
        ))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if let Some(v) = self.kind_attr(name)? {
            return Ok(Some(v));
        }
        match name {
            "kernel" | "bias" => return self.variable_attr(name).map(Some),
            "get_config"
                if matches!(
                    self.kind(),
                    Some(
                        LayerKind::Norm(_)
                            | LayerKind::Stateless(_)
                            | LayerKind::Embedding { .. }
                            | LayerKind::Recurrent(_)
                            | LayerKind::Conv1D(_)
                            | LayerKind::Bidirectional(_)
                    )
                ) =>
            {
                return Ok(Some(bound::<LayerObj>(this, name, |l, _, _, _| {
                    Ok(l.own_config())
                })))
            }
            "gamma" | "beta" | "moving_mean" | "moving_variance"
                if matches!(self.kind(), Some(LayerKind::Norm(_))) =>
            {
                return self.norm_variable(name).map(Some)
            }
            "embeddings" if matches!(self.kind(), Some(LayerKind::Embedding { .. })) => {
                if !self.core.built.get() {
                    return Err(PyErr::attribute_error(
                        "'Embedding' object has no attribute 'embeddings'",
                    ));
                }
                return Ok(Some(self.weight_at(0)));
            }
            "supports_masking" if self.kind().is_some() => {
                let kind = self.kind().map(super::mask::supports_masking);
                return Ok(kind.map(Value::Bool));
            }
            "compute_mask" if self.kind().is_some() => {
                return Ok(Some(bound::<LayerObj>(this, name, |l, _, a, c| {
                    let s = a.bind("compute_mask", &["inputs", "mask"], 1)?;
                    let x = tensor_of(s[0].as_ref().unwrap_or(&Value::None), c)?;
                    let previous = match given(&s[1]) {
                        Some(m) => Some(tensor_of(m, c)?),
                        None => None,
                    };
                    let Some(kind) = l.kind() else {
                        return Ok(Value::None);
                    };
                    let m = run(c, |e| {
                        super::mask::compute_mask(e, kind, &x, previous.as_ref())
                    })?;
                    Ok(m.map_or(Value::None, wrap))
                })));
            }
            "build" => {
                return Ok(Some(bound::<LayerObj>(this, name, |l, this, a, c| {
                    let s = a.bind("build", &["input_shape"], 1)?;
                    let shape = super::build::shape_from(s[0].as_ref().unwrap_or(&Value::None), c)?;
                    super::build::build_builtin(l, this, &shape, None, c)?;
                    Ok(Value::None)
                })))
            }
            "__call__" => {
                return Ok(Some(bound::<LayerObj>(this, name, |_, this, a, c| {
                    super::call::call_layer(this, a.clone(), c)
                })))
            }
            _ => {}
        }
        let handle = LayerHandle {
            this: this.clone(),
            core: self.core.clone(),
            kind: super::handle::HandleKind::Builtin,
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
                "can't set attribute '{name}' of a {} layer here",
                self.class_name()
            ))),
        }
    }
    fn call(&self, this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        super::call::call_layer(this, args, ctx)
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

impl LayerObj {
    /// The constructor arguments Keras exposes as attributes (`units`, `rate`, ...).
    fn kind_attr(&self, name: &str) -> PyResult<Option<Value>> {
        let Some(kind) = self.kind() else {
            return Ok(None);
        };
        let pair =
            |(a, b): (usize, usize)| Value::tuple(vec![Value::Int(a as i64), Value::Int(b as i64)]);
        Ok(match (kind, name) {
            (LayerKind::Dense { units, .. }, "units") => Some(Value::Int(*units as i64)),
            (LayerKind::Conv2D { filters, .. }, "filters") => Some(Value::Int(*filters as i64)),
            (LayerKind::Conv2D { kernel_size, .. }, "kernel_size") => Some(pair(*kernel_size)),
            (LayerKind::Conv2D { strides, .. }, "strides")
            | (LayerKind::MaxPooling2D { strides, .. }, "strides") => Some(pair(*strides)),
            (LayerKind::MaxPooling2D { pool_size, .. }, "pool_size") => Some(pair(*pool_size)),
            (LayerKind::Conv2D { padding, .. }, "padding")
            | (LayerKind::MaxPooling2D { padding, .. }, "padding") => {
                Some(Value::str(padding.keras_name()))
            }
            (LayerKind::Dense { use_bias, .. }, "use_bias")
            | (LayerKind::Conv2D { use_bias, .. }, "use_bias") => Some(Value::Bool(*use_bias)),
            (LayerKind::Dropout { rate, .. }, "rate") => Some(Value::Float(f64::from(*rate))),
            (LayerKind::Reshape { target_shape }, "target_shape") => Some(Value::tuple(
                target_shape.iter().map(|d| Value::Int(*d)).collect(),
            )),
            (LayerKind::Dense { activation, .. }, "activation")
            | (LayerKind::Conv2D { activation, .. }, "activation")
            | (LayerKind::Activation(activation), "activation") => {
                Some(Value::native(super::super::utils::ActivationFn {
                    name: activation.keras_name(),
                }))
            }
            (LayerKind::Softmax, "axis") => Some(Value::Int(-1)),
            (LayerKind::Norm(n), _) => norm_attr(n, name),
            (LayerKind::Stateless(s), _) => stateless_attr(s, name),
            (LayerKind::Embedding { input_dim, .. }, "input_dim") => {
                Some(Value::Int(*input_dim as i64))
            }
            (LayerKind::Embedding { output_dim, .. }, "output_dim") => {
                Some(Value::Int(*output_dim as i64))
            }
            (LayerKind::Embedding { mask_zero, .. }, "mask_zero") => Some(Value::Bool(*mask_zero)),
            (LayerKind::Recurrent(r), _) => recurrent_attr(r, name),
            (LayerKind::Bidirectional(b), "merge_mode") => Some(match b.merge_mode {
                Some(m) => Value::str(m.keras_name()),
                None => Value::None,
            }),
            (LayerKind::Bidirectional(b), "return_sequences") => {
                Some(Value::Bool(b.return_sequences()))
            }
            (LayerKind::Bidirectional(b), "return_state") => {
                Some(Value::Bool(b.forward.return_state))
            }
            (LayerKind::Bidirectional(_), "stateful") => Some(Value::Bool(false)),
            (LayerKind::Conv1D(c), _) => conv1d_attr(c, name),
            _ => None,
        })
    }

    /// The `get_config()` of a normalization or of a layer without variables: the common
    /// entries (`name`, `trainable`, the dtype policy), then the layer's own, in Keras's
    /// order.
    fn own_config(&self) -> Value {
        let own = match self.kind() {
            Some(
                k @ (LayerKind::Norm(_)
                | LayerKind::Stateless(_)
                | LayerKind::Embedding { .. }
                | LayerKind::Recurrent(_)
                | LayerKind::Conv1D(_)
                | LayerKind::Bidirectional(_)),
            ) => crate::keras::saving::kind_config(k),
            _ => return Value::None,
        };
        let policy = serde_json::json!({"module": "keras", "class_name": "DTypePolicy",
            "config": {"name": "float32"}, "registered_name": null});
        let mut pairs = vec![
            ("name".to_string(), Value::from(self.core.name())),
            (
                "trainable".to_string(),
                Value::Bool(self.core.trainable.get()),
            ),
            ("dtype".to_string(), json_value(&policy)),
        ];
        if let Some(own) = own.as_object() {
            for (k, v) in own {
                // LayerNormalization keeps its axis as given until it is built.
                let v = match (self.kind(), k.as_str(), self.core.built.get()) {
                    (
                        Some(LayerKind::Norm(crate::keras::norm::Norm::LayerNormalization {
                            axis,
                            ..
                        })),
                        "axis",
                        false,
                    ) => Value::Int(*axis),
                    // Keras keeps window sizes and axis orders as tuples.
                    (
                        Some(LayerKind::Stateless(_)),
                        "pool_size" | "strides" | "dims" | "size" | "padding",
                        _,
                    ) => tuple_value(v),
                    (
                        Some(LayerKind::Conv1D(_)),
                        "kernel_size" | "strides" | "dilation_rate",
                        _,
                    ) => tuple_value(v),
                    _ => json_value(v),
                };
                pairs.push((k.clone(), v));
            }
        }
        // ELU's `alpha` comes from its constructor's arguments, which Keras lists after the
        // name and before the base layer's entries.
        if matches!(
            self.kind(),
            Some(LayerKind::Stateless(crate::keras::Stateless::ELU { .. }))
        ) {
            if let Some(alpha) = pairs.pop() {
                pairs.insert(1, alpha);
            }
        }
        Value::dict_from(pairs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect())
    }

    /// A normalization's `gamma`, `beta`, `moving_mean` or `moving_variance`: the variable,
    /// `None` for a `gamma` or `beta` it does not have (as Keras sets them), or Keras's
    /// error before building.
    fn norm_variable(&self, name: &str) -> PyResult<Value> {
        let Some(LayerKind::Norm(n)) = self.kind() else {
            return Ok(Value::None);
        };
        let Some(i) = n.variable_names().iter().position(|v| *v == name) else {
            if name.starts_with("moving") {
                return Err(PyErr::attribute_error(format!(
                    "'{}' object has no attribute '{name}'",
                    self.class_name()
                )));
            }
            return Ok(Value::None);
        };
        if !self.core.built.get() {
            return Err(PyErr::attribute_error(format!(
                "'{}' object has no attribute '{name}'",
                self.class_name()
            )));
        }
        Ok(self.weight_at(i))
    }

    /// The `i`-th variable the layer made.
    fn weight_at(&self, i: usize) -> Value {
        self.core
            .weights
            .borrow()
            .get(i)
            .cloned()
            .unwrap_or(Value::None)
    }

    /// `layer.kernel` / `layer.bias`: the variable, or Keras's error before building.
    fn variable_attr(&self, name: &str) -> PyResult<Value> {
        let has = match self.kind() {
            Some(LayerKind::Dense { use_bias, .. }) | Some(LayerKind::Conv2D { use_bias, .. }) => {
                name == "kernel" || *use_bias
            }
            Some(LayerKind::Conv1D(c)) => name == "kernel" || c.use_bias,
            _ => false,
        };
        if !has {
            if name == "bias"
                && matches!(
                    self.kind(),
                    Some(LayerKind::Dense { .. } | LayerKind::Conv2D { .. } | LayerKind::Conv1D(_))
                )
            {
                return Ok(Value::None);
            }
            return Err(PyErr::attribute_error(format!(
                "'{}' object has no attribute '{name}'",
                self.class_name()
            )));
        }
        if !self.core.built.get() {
            return Err(PyErr::attribute_error(format!(
                "You must build the layer before accessing `{name}`."
            )));
        }
        let i = usize::from(name == "bias");
        Ok(self.weight_at(i))
    }
}

/// A normalization's arguments as attributes (`axis`, `momentum`, `epsilon`, ...).
fn norm_attr(n: &crate::keras::norm::Norm, name: &str) -> Option<Value> {
    use crate::keras::norm::Norm;
    let (center, scale) = n.center_scale();
    Some(match (n, name) {
        (_, "axis") => Value::Int(n.axis()),
        (_, "center") => Value::Bool(center),
        (_, "scale") => Value::Bool(scale),
        (Norm::BatchNormalization { epsilon, .. }, "epsilon")
        | (Norm::LayerNormalization { epsilon, .. }, "epsilon") => Value::Float(*epsilon),
        (Norm::BatchNormalization { momentum, .. }, "momentum") => Value::Float(*momentum),
        (Norm::BatchNormalization { synchronized, .. }, "synchronized") => {
            Value::Bool(*synchronized)
        }
        _ => return None,
    })
}

/// A layer without variables's arguments as attributes (`keepdims`, `max_value`, ...).
fn stateless_attr(s: &crate::keras::Stateless, name: &str) -> Option<Value> {
    let own = crate::keras::stateless::config_json(s);
    let v = own.get(name)?;
    Some(match name {
        "pool_size" | "strides" | "dims" | "size" | "padding" => tuple_value(v),
        _ => json_value(v),
    })
}

/// A JSON array as a Python tuple of its items (nested arrays as tuples too).
fn tuple_value(v: &serde_json::Value) -> Value {
    match v.as_array() {
        Some(a) => Value::tuple(a.iter().map(tuple_value).collect()),
        None => json_value(v),
    }
}

/// A JSON value as the Python value `json.loads` gives.
pub(crate) fn json_value(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::None,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::str(s),
        serde_json::Value::Array(a) => Value::list(a.iter().map(json_value).collect()),
        serde_json::Value::Object(o) => {
            Value::dict_from(o.iter().map(|(k, v)| (k.as_str(), json_value(v))).collect())
        }
    }
}

/// The attributes Keras's recurrent layers expose (`units`, `return_sequences`, ...).
fn recurrent_attr(r: &crate::keras::recurrent::Recurrent, name: &str) -> Option<Value> {
    use crate::ops::Cell;
    let act = |a: crate::keras::Act| {
        Value::native(super::super::utils::ActivationFn {
            name: a.keras_name(),
        })
    };
    Some(match name {
        "units" => Value::Int(r.units as i64),
        "return_sequences" => Value::Bool(r.return_sequences),
        "return_state" => Value::Bool(r.return_state),
        "go_backwards" => Value::Bool(r.go_backwards),
        "stateful" => Value::Bool(false),
        "unroll" => Value::Bool(r.unroll),
        "use_bias" => Value::Bool(r.use_bias),
        "dropout" | "recurrent_dropout" => Value::Float(0.0),
        "activation" => act(r.activation),
        "recurrent_activation" if r.cell != Cell::Simple => act(r.recurrent_activation),
        "unit_forget_bias" if r.cell == Cell::Lstm => Value::Bool(r.unit_forget_bias),
        "reset_after" => match r.cell {
            Cell::Gru { reset_after } => Value::Bool(reset_after),
            _ => return None,
        },
        _ => return None,
    })
}

/// A Conv1D's constructor arguments as Keras exposes them (sizes as one-element tuples).
fn conv1d_attr(c: &crate::keras::conv1d::Conv1D, name: &str) -> Option<Value> {
    let one = |n: usize| Value::tuple(vec![Value::Int(n as i64)]);
    Some(match name {
        "filters" => Value::Int(c.filters as i64),
        "kernel_size" => one(c.kernel_size),
        "strides" => one(c.strides),
        "dilation_rate" => one(c.dilation_rate),
        "padding" => Value::str(c.padding.keras_name()),
        "groups" | "rank" => Value::Int(1),
        "data_format" => Value::str("channels_last"),
        "use_bias" => Value::Bool(c.use_bias),
        "activation" => Value::native(super::super::utils::ActivationFn {
            name: c.activation.keras_name(),
        }),
        _ => return None,
    })
}
