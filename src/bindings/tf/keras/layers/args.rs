//! The constructors of the built-in layers (`Dense(units, activation=...)`, `Conv2D`,
//! `MaxPooling2D`, `Flatten`, `Dropout`, `Activation`, `Softmax`, `Reshape`, `InputLayer`)
//! and their argument rules: each reads its own arguments, then the keyword arguments every
//! layer takes (`name`, `trainable`, `dtype`, `input_shape`), with Keras's errors. A layer
//! gets its automatic name (`dense`, `dense_1`, ...) when it is made, as in Keras 3.

use super::super::super::given;
use super::super::initializers::{init_arg, InitArg};
use super::base::{check_kwargs, unique_name, LAYER_KWARGS};
use super::kerr;
use super::layer::{Builtin, LayerObj};
use crate::keras::conv1d::Conv1D;
use crate::keras::norm::Norm;
use crate::keras::recurrent::Recurrent;
use crate::keras::{Act, Init, LayerKind, Padding, Stateless};
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use crate::ops;

pub fn pos_usize(v: &Value, what: &str) -> PyResult<usize> {
    let n = v.as_int()?;
    usize::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
        PyErr::value_error(format!(
            "Received an invalid value for `{what}`, expected a positive integer. Received: \
             {what}={n}"
        ))
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

/// A variable's shape (`add_weight(shape=...)`): a tuple, list or `TensorShape` of sizes,
/// zero allowed, every size known.
pub fn shape_arg_dims(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<usize>> {
    let s = super::super::super::shape::TensorShape::from_value(v, ctx)?;
    let dims = s.dims.unwrap_or_default();
    dims.iter()
        .map(|d| {
            d.ok_or_else(|| {
                PyErr::value_error(format!(
                    "Shapes used to initialize variables must be fully-defined (no `None` \
                     dimensions). Received: shape={} for variable path=''",
                    super::layer::dims_text(&dims)
                ))
            })
        })
        .collect()
}

fn pair(v: Option<&Value>, default: (usize, usize), what: &str) -> PyResult<(usize, usize)> {
    match v {
        None => Ok(default),
        Some(n @ Value::Int(_)) => {
            let n = pos_usize(n, what)?;
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

/// An initializer the engine can fill (names and initializer objects).
fn engine_init(v: Option<&Value>, default: Init) -> PyResult<Init> {
    match init_arg(v, default)? {
        InitArg::Known(i) => Ok(i),
        InitArg::Call(_) => Err(PyErr::not_implemented(
            "a built-in layer takes an initializer name or a keras.initializers object here",
        )),
    }
}

/// The arguments a built-in constructor got: its own (by position or keyword) and the
/// common ones.
pub(super) struct Bound {
    pub(super) own: Vec<Option<Value>>,
    name: Option<String>,
    trainable: bool,
    input_shape: Option<Vec<usize>>,
}

pub(super) fn bind(cls: &str, args: &Args, own: &[&str], required: usize) -> PyResult<Bound> {
    let (mine, rest): (Vec<_>, Vec<_>) = args
        .kw
        .iter()
        .cloned()
        .partition(|(k, _)| own.contains(&k.as_str()));
    check_kwargs(cls, &rest, &[])?;
    // Python names the constructor in its arity errors (`Dense.__init__() missing ...`).
    let own = Args {
        pos: args.pos.clone(),
        kw: mine,
    }
    .bind(&format!("{cls}.__init__"), own, required)?;
    let get = |k: &str| {
        rest.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_none())
    };
    let name = get("name")
        .map(|v| v.as_str().map(str::to_string))
        .transpose()?;
    let trainable = get("trainable").map_or(Ok(true), |v| v.as_bool_strict())?;
    let mut input_shape = get("input_shape").map(|v| shape_arg(&v)).transpose()?;
    if let Some(d) = get("input_dim") {
        input_shape = Some(vec![pos_usize(&d, "input_dim")?]);
    }
    let _ = LAYER_KWARGS;
    Ok(Bound {
        own,
        name,
        trainable,
        input_shape,
    })
}

pub(super) fn make(kind: LayerKind, b: Bound, ctx: &mut dyn Ctx) -> Value {
    let name = b.name.unwrap_or_else(|| unique_name(ctx, kind.base_name()));
    let l = LayerObj::new(Builtin::Kind(kind), b.input_shape, name);
    l.core.trainable.set(b.trainable);
    Value::native(l)
}

pub fn dense(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind(
        "Dense",
        args,
        &[
            "units",
            "activation",
            "use_bias",
            "kernel_initializer",
            "bias_initializer",
            "kernel_regularizer",
            "bias_regularizer",
            "kernel_constraint",
            "bias_constraint",
        ],
        1,
    )?;
    let s = &b.own;
    let units = pos_usize(s[0].as_ref().unwrap_or(&Value::None), "units")?;
    let act = activation_arg(given(&s[1]), ctx)?;
    let kind = LayerKind::Dense {
        units,
        activation: Act::parse(&act).map_err(kerr)?,
        use_bias: given(&s[2]).map_or(Ok(true), |v| v.as_bool_strict())?,
        kernel_initializer: engine_init(given(&s[3]), Init::GlorotUniform)?,
        bias_initializer: engine_init(given(&s[4]), Init::Zeros)?,
    };
    Ok(make(kind, b, ctx))
}

/// The arguments Keras's convolutions share, in their constructors' order.
const CONV_ARGS: [&str; 11] = [
    "filters",
    "kernel_size",
    "strides",
    "padding",
    "data_format",
    "dilation_rate",
    "groups",
    "activation",
    "use_bias",
    "kernel_initializer",
    "bias_initializer",
];

pub fn conv2d(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("Conv2D", args, &CONV_ARGS, 2)?;
    let s = &b.own;
    let filters = pos_usize(s[0].as_ref().unwrap_or(&Value::None), "filters")?;
    let kernel_size = pair(given(&s[1]), (3, 3), "kernel_size")?;
    let padding = match given(&s[3]) {
        Some(p) => Padding::parse(p.as_str()?).map_err(kerr)?,
        None => Padding::Valid,
    };
    let act = activation_arg(given(&s[7]), ctx)?;
    let kind = LayerKind::Conv2D {
        filters,
        kernel_size,
        strides: pair(given(&s[2]), (1, 1), "strides")?,
        padding,
        activation: Act::parse(&act).map_err(kerr)?,
        use_bias: given(&s[8]).map_or(Ok(true), |v| v.as_bool_strict())?,
        kernel_initializer: engine_init(given(&s[9]), Init::GlorotUniform)?,
        bias_initializer: engine_init(given(&s[10]), Init::Zeros)?,
    };
    Ok(make(kind, b, ctx))
}

/// `Conv1D(filters, kernel_size, strides=1, padding='valid', data_format=None,
/// dilation_rate=1, groups=1, activation=None, use_bias=True, ...)`: `groups` other than 1,
/// `channels_first`, regularizers and constraints are refused by name.
pub fn conv1d(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let cls = "Conv1D";
    let refused = [
        "kernel_regularizer",
        "bias_regularizer",
        "activity_regularizer",
        "kernel_constraint",
        "bias_constraint",
    ];
    let names: Vec<&str> = CONV_ARGS.iter().chain(&refused).copied().collect();
    let b = bind(cls, args, &names, 2)?;
    let s = &b.own;
    let at = |k: &str| {
        names
            .iter()
            .position(|n| *n == k)
            .and_then(|i| s[i].clone())
    };
    let filters = at("filters").unwrap_or(Value::None).as_int()?;
    let filters = usize::try_from(filters).ok().filter(|f| *f > 0).ok_or_else(|| {
        PyErr::value_error(format!(
            "Invalid value for argument `filters`. Expected a strictly positive value. Received filters={filters}."
        ))
    })?;
    let one = |k: &str, ctx: &mut dyn Ctx| -> PyResult<usize> {
        match at(k).filter(|v| !matches!(v, Value::None)) {
            Some(v) => Ok(standardize_tuple(&v, 1, k, false, ctx)?
                .first()
                .copied()
                .unwrap_or(1)),
            None => Ok(1),
        }
    };
    let kernel_size = one("kernel_size", ctx)?;
    let mut c = Conv1D::new(filters, kernel_size);
    c.strides = one("strides", ctx)?;
    c.dilation_rate = one("dilation_rate", ctx)?;
    if let Some(p) = given(&at("padding")) {
        let name = p.as_str()?;
        c.padding = ops::Conv1dPadding::parse(name).ok_or_else(|| {
            PyErr::value_error(format!(
                "The `padding` argument must be a list/tuple or one of {{'same', 'causal', 'valid'}}. Received: {name}"
            ))
        })?;
    }
    channels_last(given(&at("data_format")), ctx)?;
    if let Some(g) = given(&at("groups")) {
        if g.as_int()? != 1 {
            return Err(PyErr::not_implemented(format!(
                "{cls}(groups={}) is not supported here: only groups=1 is",
                ctx.repr(g)?
            )));
        }
    }
    c.activation = Act::parse(&activation_arg(given(&at("activation")), ctx)?).map_err(kerr)?;
    c.use_bias = flag_arg(&at("use_bias"), true)?;
    c.kernel_initializer = engine_init(given(&at("kernel_initializer")), Init::GlorotUniform)?;
    c.bias_initializer = engine_init(given(&at("bias_initializer")), Init::Zeros)?;
    let values: Vec<Option<Value>> = refused.iter().map(|&k| at(k)).collect();
    refuse_given(cls, &refused, &values)?;
    c.check().map_err(kerr)?;
    Ok(make(LayerKind::Conv1D(c), b, ctx))
}

pub fn max_pool(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind(
        "MaxPooling2D",
        args,
        &["pool_size", "strides", "padding", "data_format"],
        0,
    )?;
    let s = &b.own;
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
    Ok(make(kind, b, ctx))
}

/// A layer without arguments of its own (`Flatten()`, `Softmax()`).
pub fn simple(args: &Args, ctx: &mut dyn Ctx, cls: &str, kind: LayerKind) -> PyResult<Value> {
    let own: &[&str] = match kind {
        LayerKind::Flatten => &["data_format"],
        LayerKind::Softmax => &["axis"],
        _ => &[],
    };
    let b = bind(cls, args, own, 0)?;
    if let (LayerKind::Softmax, Some(axis)) = (&kind, b.own.first().and_then(|v| given(v))) {
        if axis.as_int()? != -1 {
            return Err(PyErr::not_implemented(
                "Softmax over an axis other than the last is not supported here",
            ));
        }
    }
    Ok(make(kind, b, ctx))
}

pub fn dropout(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("Dropout", args, &["rate", "noise_shape", "seed"], 1)?;
    let s = &b.own;
    let rate = s[0].as_ref().unwrap_or(&Value::None).as_float()?;
    if !(0.0..1.0).contains(&rate) {
        return Err(PyErr::value_error(format!(
            "Invalid value received for argument `rate`. Expected a float value between 0 and \
             1. Received: rate={}",
            crate::lang::float_repr(rate)
        )));
    }
    if given(&s[1]).is_some() {
        return Err(PyErr::not_implemented(
            "Dropout with noise_shape is not supported here",
        ));
    }
    let seed = given(&s[2])
        .map(|v| v.as_int().map(|x| x as u64))
        .transpose()?;
    Ok(make(
        LayerKind::Dropout {
            rate: rate as f32,
            seed,
        },
        b,
        ctx,
    ))
}

pub fn activation_layer(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("Activation", args, &["activation"], 1)?;
    let act = activation_arg(given(&b.own[0]), ctx)?;
    let kind = if act == "softmax" {
        LayerKind::Softmax
    } else {
        LayerKind::Activation(Act::parse(&act).map_err(kerr)?)
    };
    Ok(make(kind, b, ctx))
}

pub fn reshape(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("Reshape", args, &["target_shape"], 1)?;
    let target = b.own[0]
        .as_ref()
        .and_then(|v| v.as_seq())
        .ok_or_else(|| PyErr::type_error("target_shape must be a tuple of integers"))?
        .iter()
        .map(|v| v.as_int())
        .collect::<PyResult<Vec<_>>>()?;
    Ok(make(
        LayerKind::Reshape {
            target_shape: target,
        },
        b,
        ctx,
    ))
}

/// `InputLayer(shape=None, batch_size=None, dtype=None, name=None)`.
pub fn input_layer(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "InputLayer",
        &[
            "shape",
            "batch_size",
            "dtype",
            "sparse",
            "batch_shape",
            "input_tensor",
            "optional",
            "name",
            "input_shape",
        ],
        0,
    )?;
    let shape = given(&s[0]).or(given(&s[8])).map(shape_arg).transpose()?;
    let name = match given(&s[7]) {
        Some(v) => v.as_str()?.to_string(),
        None => unique_name(ctx, "input_layer"),
    };
    Ok(Value::native(LayerObj::new(Builtin::Input, shape, name)))
}

/// The arguments of a normalization layer that are refused when given.
const NORM_EXTRAS: &[&str] = &[
    "beta_regularizer",
    "gamma_regularizer",
    "beta_constraint",
    "gamma_constraint",
];

/// Refuses an argument this kernel does not implement when it is given (not `None`).
fn refuse_given(cls: &str, names: &[&str], values: &[Option<Value>]) -> PyResult<()> {
    for (n, v) in names.iter().zip(values) {
        if given(v).is_some() {
            return Err(PyErr::not_implemented(format!(
                "{cls}({n}=...) is not supported here"
            )));
        }
    }
    Ok(())
}

fn float_arg(v: &Option<Value>, default: f64) -> PyResult<f64> {
    given(v).map_or(Ok(default), |v| v.as_float())
}

fn flag_arg(v: &Option<Value>, default: bool) -> PyResult<bool> {
    given(v).map_or(Ok(default), |v| v.as_bool_strict())
}

/// `BatchNormalization(axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True,
/// beta_initializer='zeros', gamma_initializer='ones', moving_mean_initializer='zeros',
/// moving_variance_initializer='ones', ..., synchronized=False)`.
pub fn batch_normalization(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let cls = "BatchNormalization";
    let b = bind(
        cls,
        args,
        &[
            "axis",
            "momentum",
            "epsilon",
            "center",
            "scale",
            "beta_initializer",
            "gamma_initializer",
            "moving_mean_initializer",
            "moving_variance_initializer",
            "beta_regularizer",
            "gamma_regularizer",
            "beta_constraint",
            "gamma_constraint",
            "renorm",
            "renorm_clipping",
            "renorm_momentum",
            "synchronized",
        ],
        0,
    )?;
    let s = &b.own;
    refuse_given(cls, NORM_EXTRAS, &s[9..13])?;
    if flag_arg(&s[13], false)? {
        return Err(PyErr::not_implemented(
            "BatchNormalization(renorm=True) is not supported here",
        ));
    }
    // Replicas here take their steps one after another, so none can wait for the others'
    // batch statistics: an all-reduce of them is refused rather than silently skipped.
    if flag_arg(&s[16], false)? {
        return Err(PyErr::not_implemented(
            "BatchNormalization(synchronized=True) is not supported here",
        ));
    }
    let kind = LayerKind::Norm(Norm::BatchNormalization {
        axis: given(&s[0]).map_or(Ok(-1), |v| v.as_int())?,
        momentum: float_arg(&s[1], 0.99)?,
        epsilon: float_arg(&s[2], 1e-3)?,
        center: flag_arg(&s[3], true)?,
        scale: flag_arg(&s[4], true)?,
        beta_initializer: engine_init(given(&s[5]), Init::Zeros)?,
        gamma_initializer: engine_init(given(&s[6]), Init::Ones)?,
        moving_mean_initializer: engine_init(given(&s[7]), Init::Zeros)?,
        moving_variance_initializer: engine_init(given(&s[8]), Init::Ones)?,
        synchronized: false,
    });
    Ok(make(kind, b, ctx))
}

/// `LayerNormalization(axis=-1, epsilon=0.001, center=True, scale=True,
/// beta_initializer='zeros', gamma_initializer='ones', ...)`.
pub fn layer_normalization(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let cls = "LayerNormalization";
    let b = bind(
        cls,
        args,
        &[
            "axis",
            "epsilon",
            "center",
            "scale",
            "beta_initializer",
            "gamma_initializer",
            "beta_regularizer",
            "gamma_regularizer",
            "beta_constraint",
            "gamma_constraint",
            "rms_scaling",
        ],
        0,
    )?;
    let s = &b.own;
    refuse_given(cls, NORM_EXTRAS, &s[6..10])?;
    if flag_arg(&s[10], false)? {
        return Err(PyErr::not_implemented(
            "LayerNormalization(rms_scaling=True) is not supported here",
        ));
    }
    let axis = match given(&s[0]) {
        None => -1,
        Some(Value::Int(a)) => *a,
        Some(other) => {
            return Err(PyErr::type_error(format!(
                "Expected an int or a list/tuple of ints for the argument 'axis', but \
                 received: {}",
                match other {
                    Value::Str(t) => crate::lang::str_repr(t),
                    v => v.type_name(),
                }
            )))
        }
    };
    let kind = LayerKind::Norm(Norm::LayerNormalization {
        axis,
        epsilon: float_arg(&s[1], 1e-3)?,
        center: flag_arg(&s[2], true)?,
        scale: flag_arg(&s[3], true)?,
        beta_initializer: engine_init(given(&s[4]), Init::Zeros)?,
        gamma_initializer: engine_init(given(&s[5]), Init::Ones)?,
    });
    Ok(make(kind, b, ctx))
}

/// A number argument of a rectifier that must be a number at least 0 (Keras's test), or
/// Keras's `ValueError` with `message` and the value as given.
fn non_negative(
    v: Option<&Value>,
    default: f64,
    message: &str,
    what: &str,
    ctx: &mut dyn Ctx,
) -> PyResult<f64> {
    let Some(v) = v else {
        return Ok(default);
    };
    let x = match v {
        Value::None => None,
        other => Some(other.as_float()?),
    };
    match x {
        Some(x) if x >= 0.0 => Ok(x),
        _ => Err(PyErr::value_error(format!(
            "{message} Received: {what}={}",
            ctx.repr(v)?
        ))),
    }
}

/// A `Some` for an argument given, `None` passed explicitly included (`threshold=None`).
fn passed(v: &Option<Value>) -> Option<&Value> {
    v.as_ref()
}

/// `data_format`: only `channels_last` (the default) runs here.
fn channels_last(v: Option<&Value>, ctx: &mut dyn Ctx) -> PyResult<()> {
    match v
        .map(|v| v.as_str().map(str::to_ascii_lowercase))
        .transpose()?
    {
        None => Ok(()),
        Some(f) if f == "channels_last" => Ok(()),
        Some(f) if f == "channels_first" => Err(PyErr::not_implemented(
            "data_format='channels_first' is not supported here",
        )),
        Some(_) => Err(PyErr::value_error(format!(
            "The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. \
             Received: data_format={}",
            v.map(|v| ctx.repr(v)).transpose()?.unwrap_or_default()
        ))),
    }
}

/// `GlobalAveragePooling1D/2D` and `GlobalMaxPooling1D/2D(data_format=None,
/// keepdims=False)`.
pub fn global_pool(args: &Args, ctx: &mut dyn Ctx, max: bool, rank: usize) -> PyResult<Value> {
    let kind = Stateless::GlobalPool {
        max,
        rank,
        keepdims: false,
    };
    let b = bind(kind.class_name(), args, &["data_format", "keepdims"], 0)?;
    channels_last(given(&b.own[0]), ctx)?;
    let keepdims = flag_arg(&b.own[1], false)?;
    let kind = Stateless::GlobalPool {
        max,
        rank,
        keepdims,
    };
    Ok(make(LayerKind::Stateless(kind), b, ctx))
}

/// Keras's `standardize_tuple`: an int (repeated `n` times) or `n` ints, each positive
/// (or with `allow_zero` at least 0), with Keras's `ValueError` otherwise.
fn standardize_tuple(
    v: &Value,
    n: usize,
    name: &str,
    allow_zero: bool,
    ctx: &mut dyn Ctx,
) -> PyResult<Vec<usize>> {
    let mut msg = format!(
        "The `{name}` argument must be a tuple of {n} integers. Received {name}={}",
        ctx.repr(v)?
    );
    let items: Vec<i64> = match v {
        Value::Int(k) => vec![*k; n],
        other => {
            let seq = other
                .as_seq()
                .filter(|s| s.len() == n)
                .ok_or_else(|| PyErr::value_error(msg.clone()))?;
            seq.iter().map(|d| d.as_int()).collect::<PyResult<_>>()?
        }
    };
    let mut bad: Vec<i64> = items
        .iter()
        .copied()
        .filter(|d| if allow_zero { *d < 0 } else { *d <= 0 })
        .collect();
    bad.sort_unstable();
    bad.dedup();
    if !bad.is_empty() {
        let shown: Vec<String> = bad.iter().map(i64::to_string).collect();
        let req = if allow_zero { ">= 0" } else { "> 0" };
        msg.push_str(&format!(
            ", including values {{{}}} that do not satisfy `value {req}`",
            shown.join(", ")
        ));
        return Err(PyErr::value_error(msg));
    }
    Ok(items.iter().map(|d| *d as usize).collect())
}

/// A window argument of a pooling of `rank` axes (1 or 2) as a pair.
fn window(v: &Value, rank: usize, what: &str, ctx: &mut dyn Ctx) -> PyResult<(usize, usize)> {
    let t = standardize_tuple(v, rank, what, false, ctx)?;
    Ok((
        t.first().copied().unwrap_or(1),
        t.get(1).copied().unwrap_or(1),
    ))
}

/// `UpSampling2D(size=(2, 2), data_format=None, interpolation='nearest')`.
pub fn up_sampling2d(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind(
        "UpSampling2D",
        args,
        &["size", "data_format", "interpolation"],
        0,
    )?;
    let s = &b.own;
    let size = match given(&s[0]) {
        Some(v) => window(v, 2, "size", ctx)?,
        None => (2, 2),
    };
    channels_last(given(&s[1]), ctx)?;
    if let Some(i) = given(&s[2]) {
        if !i.as_str()?.eq_ignore_ascii_case("nearest") {
            return Err(PyErr::not_implemented(format!(
                "UpSampling2D(interpolation={}) is not supported here: only 'nearest' is",
                ctx.repr(i)?
            )));
        }
    }
    let kind = Stateless::UpSampling2D { size };
    Ok(make(LayerKind::Stateless(kind), b, ctx))
}

/// `ZeroPadding2D(padding=(1, 1), data_format=None)`: an int, `(rows, cols)` on both
/// sides, or `((top, bottom), (left, right))`.
pub fn zero_padding2d(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("ZeroPadding2D", args, &["padding", "data_format"], 0)?;
    let s = &b.own;
    let padding = match given(&s[0]) {
        None => ((1, 1), (1, 1)),
        Some(Value::Int(p)) => {
            let p = standardize_tuple(&Value::Int(*p), 2, "padding", true, ctx)?;
            let p = p.first().copied().unwrap_or(0);
            ((p, p), (p, p))
        }
        Some(v) => {
            let shown = ctx.repr(v)?;
            let items = v.as_seq().ok_or_else(|| {
                PyErr::value_error(format!(
                    "`padding` should be either an int, a tuple of 2 ints \
                     (symmetric_height_crop, symmetric_width_crop), or a tuple of 2 tuples of \
                     2 ints ((top_crop, bottom_crop), (left_crop, right_crop)). Received: \
                     padding={shown}."
                ))
            })?;
            let [rows, cols] = items.as_slice() else {
                return Err(PyErr::value_error(format!(
                    "`padding` should have two elements. Received: padding={shown}."
                )));
            };
            let side = |v: &Value, name: &str, ctx: &mut dyn Ctx| {
                let t = standardize_tuple(v, 2, name, true, ctx)?;
                Ok::<_, PyErr>((
                    t.first().copied().unwrap_or(0),
                    t.get(1).copied().unwrap_or(0),
                ))
            };
            (
                side(rows, "1st entry of padding", ctx)?,
                side(cols, "2nd entry of padding", ctx)?,
            )
        }
    };
    channels_last(given(&s[1]), ctx)?;
    let kind = Stateless::ZeroPadding2D { padding };
    Ok(make(LayerKind::Stateless(kind), b, ctx))
}

/// `AveragePooling1D/2D(pool_size, strides=None, padding='valid', data_format=None)`, and
/// with `max` `MaxPooling1D(pool_size=2, ...)`.
pub fn window_pool(args: &Args, ctx: &mut dyn Ctx, max: bool, rank: usize) -> PyResult<Value> {
    let cls = match (max, rank) {
        (true, _) => "MaxPooling1D",
        (false, 1) => "AveragePooling1D",
        _ => "AveragePooling2D",
    };
    // Keras's MaxPooling1D defaults its window to 2; the average poolings require one.
    let required = usize::from(!max);
    let b = bind(
        cls,
        args,
        &["pool_size", "strides", "padding", "data_format"],
        required,
    )?;
    let s = &b.own;
    let pool_size = match given(&s[0]) {
        Some(v) => window(v, rank, "pool_size", ctx)?,
        None => (2, 1),
    };
    let strides = match given(&s[1]) {
        Some(v) => window(v, rank, "strides", ctx)?,
        None => pool_size,
    };
    let padding = match given(&s[2]) {
        Some(p) => Padding::parse(p.as_str()?).map_err(kerr)?,
        None => Padding::Valid,
    };
    channels_last(given(&s[3]), ctx)?;
    let kind = Stateless::Pool {
        max,
        rank,
        pool_size,
        strides,
        padding,
    };
    Ok(make(LayerKind::Stateless(kind), b, ctx))
}

/// `ReLU(max_value=None, negative_slope=0.0, threshold=0.0)`.
pub fn relu(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind(
        "ReLU",
        args,
        &["max_value", "negative_slope", "threshold"],
        0,
    )?;
    let s = &b.own;
    let max_value = match given(&s[0]) {
        None => None,
        Some(v) => Some(non_negative(
            Some(v),
            0.0,
            "max_value of a ReLU layer cannot be a negative value.",
            "max_value",
            ctx,
        )?),
    };
    let negative_slope = non_negative(
        passed(&s[1]),
        0.0,
        "negative_slope of a ReLU layer cannot be None or a negative value.",
        "negative_slope",
        ctx,
    )?;
    let threshold = non_negative(
        passed(&s[2]),
        0.0,
        "threshold of a ReLU layer cannot be None or a negative value.",
        "threshold",
        ctx,
    )?;
    let kind = Stateless::ReLU {
        max_value,
        negative_slope,
        threshold,
    };
    Ok(make(LayerKind::Stateless(kind), b, ctx))
}

/// `LeakyReLU(negative_slope=0.3)`; Keras 3 still takes the deprecated `alpha` for it, with
/// a warning.
pub fn leaky_relu(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("LeakyReLU", args, &["negative_slope", "alpha"], 0)?;
    let s = &b.own;
    let slope = match passed(&s[1]) {
        Some(alpha) => {
            ctx.emit(crate::cell::Output::Stream {
                name: crate::cell::StreamName::Stderr,
                text: "UserWarning: Argument `alpha` is deprecated. Use `negative_slope` \
                       instead.\n"
                    .into(),
            });
            Some(alpha)
        }
        None => passed(&s[0]),
    };
    let negative_slope = non_negative(
        slope,
        0.3,
        "The negative_slope value of a Leaky ReLU layer cannot be None or negative value. \
         Expected a float.",
        "negative_slope",
        ctx,
    )?;
    let kind = Stateless::LeakyReLU { negative_slope };
    Ok(make(LayerKind::Stateless(kind), b, ctx))
}

/// `ELU(alpha=1.0)`.
pub fn elu(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("ELU", args, &["alpha"], 0)?;
    let alpha = float_arg(&b.own[0], 1.0)?;
    Ok(make(LayerKind::Stateless(Stateless::ELU { alpha }), b, ctx))
}

/// `Rescaling(scale, offset=0.0)`.
pub fn rescaling(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("Rescaling", args, &["scale", "offset"], 1)?;
    let scale = b.own[0].as_ref().unwrap_or(&Value::None).as_float()?;
    let offset = float_arg(&b.own[1], 0.0)?;
    let kind = Stateless::Rescaling { scale, offset };
    Ok(make(LayerKind::Stateless(kind), b, ctx))
}

/// `Masking(mask_value=0.0)`.
pub fn masking(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("Masking", args, &["mask_value"], 0)?;
    let mask_value = float_arg(&b.own[0], 0.0)?;
    let kind = Stateless::Masking { mask_value };
    Ok(make(LayerKind::Stateless(kind), b, ctx))
}

/// Keras's check of an Embedding's size argument: an `int` above zero.
fn embedding_size(v: Option<&Value>, what: &str) -> PyResult<usize> {
    let v = v.unwrap_or(&Value::None);
    let n = match v {
        Value::Int(n) => usize::try_from(*n).ok().filter(|n| *n > 0),
        _ => None,
    };
    n.ok_or_else(|| {
        let shown = match v {
            Value::Str(t) => crate::lang::str_repr(t),
            Value::Int(n) => n.to_string(),
            Value::Float(f) => crate::lang::float_repr(*f),
            Value::None => "None".to_string(),
            other => other.type_name().to_string(),
        };
        PyErr::value_error(format!(
            "`{what}` must be a positive integer. Received: {what}={shown} (of type {}).",
            v.type_name()
        ))
    })
}

/// `Embedding(input_dim, output_dim, embeddings_initializer='uniform', ...,
/// mask_zero=False)`.
pub fn embedding(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let cls = "Embedding";
    let b = bind(
        cls,
        args,
        &[
            "input_dim",
            "output_dim",
            "embeddings_initializer",
            "embeddings_regularizer",
            "embeddings_constraint",
            "mask_zero",
            "weights",
            "lora_rank",
        ],
        2,
    )?;
    let s = &b.own;
    let input_dim = embedding_size(s[0].as_ref(), "input_dim")?;
    let output_dim = embedding_size(s[1].as_ref(), "output_dim")?;
    refuse_given(
        cls,
        &[
            "embeddings_regularizer",
            "embeddings_constraint",
            "weights",
            "lora_rank",
        ],
        &s[3..5].iter().chain(&s[6..8]).cloned().collect::<Vec<_>>(),
    )?;
    let kind = LayerKind::Embedding {
        mask_zero: flag_arg(&s[5], false)?,
        input_dim,
        output_dim,
        embeddings_initializer: engine_init(given(&s[2]), Init::parse("uniform").map_err(kerr)?)?,
    };
    Ok(make(kind, b, ctx))
}

/// The recurrent layer (and its name) a `Bidirectional` argument holds.
fn wrapped_recurrent(v: &Value, what: &str) -> PyResult<(Recurrent, String)> {
    let l = v.downcast::<LayerObj>().ok_or_else(|| {
        PyErr::value_error(format!(
            "Please initialize `Bidirectional` layer with a `keras.layers.Layer` instance. Received: {what}={}",
            v.type_name()
        ))
    })?;
    match l.kind() {
        Some(LayerKind::Recurrent(r)) => Ok((r.clone(), l.core.name())),
        _ => Err(PyErr::not_implemented(format!(
            "Bidirectional wraps SimpleRNN, LSTM and GRU layers here, not {}",
            l.class_name()
        ))),
    }
}

/// `Bidirectional(layer, merge_mode='concat', weights=None, backward_layer=None)`: the
/// forward copy and the backward one (made from `layer` with `go_backwards` flipped, or
/// `backward_layer`), as Keras makes them; `weights` is refused.
pub fn bidirectional(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind(
        "Bidirectional",
        args,
        &["layer", "merge_mode", "weights", "backward_layer"],
        1,
    )?;
    let s = &b.own;
    let (layer, name) = wrapped_recurrent(s[0].as_ref().unwrap_or(&Value::None), "layer")?;
    let merge_mode = match &s[1] {
        None => Some(crate::keras::bidirectional::MergeMode::Concat),
        Some(Value::None) => None,
        Some(v) => {
            crate::keras::bidirectional::MergeMode::parse(Some(v.as_str()?)).map_err(kerr)?
        }
    };
    refuse_given("Bidirectional", &["weights"], &s[2..3])?;
    let backward = match given(&s[3]) {
        Some(v) => Some(wrapped_recurrent(v, "backward_layer")?),
        None => None,
    };
    let kind = crate::keras::bidirectional::Bidirectional::new(&layer, &name, backward, merge_mode)
        .map_err(kerr)?;
    Ok(make(LayerKind::Bidirectional(Box::new(kind)), b, ctx))
}

/// Keras's check of a recurrent layer's `units`: an `int` above zero.
fn recurrent_units(v: Option<&Value>) -> PyResult<usize> {
    let v = v.unwrap_or(&Value::None);
    match v {
        Value::Int(n) if *n > 0 => Ok(*n as usize),
        other => Err(PyErr::value_error(format!(
            "Received an invalid value for argument `units`, expected a positive integer, got {}.",
            match other {
                Value::Int(n) => n.to_string(),
                Value::Float(f) => crate::lang::float_repr(*f),
                Value::Str(t) => t.to_string(),
                Value::None => "None".to_string(),
                o => o.type_name().to_string(),
            }
        ))),
    }
}

/// An activation argument of a recurrent layer: `None` is linear, absent is `default`.
fn cell_activation(v: &Option<Value>, default: &str, ctx: &mut dyn Ctx) -> PyResult<Act> {
    let name = match v {
        None => default.to_string(),
        Some(_) => activation_arg(given(v), ctx)?,
    };
    Act::parse(&name).map_err(kerr)
}

/// `SimpleRNN`, `LSTM` and `GRU` with Keras 3.15's arguments: `units`, the activations,
/// `use_bias`, the initializers, `return_sequences`, `return_state`, `go_backwards`,
/// `unroll` (accepted: the steps run one by one either way), an LSTM's
/// `unit_forget_bias` and a GRU's `reset_after`. Regularizers, constraints, `stateful` and
/// dropout other than 0 are refused by name.
fn recurrent(args: &Args, ctx: &mut dyn Ctx, cell: ops::Cell) -> PyResult<Value> {
    let cls = match cell {
        ops::Cell::Simple => "SimpleRNN",
        ops::Cell::Lstm => "LSTM",
        ops::Cell::Gru { .. } => "GRU",
    };
    let mut own = vec!["units", "activation"];
    if cell != ops::Cell::Simple {
        own.push("recurrent_activation");
    }
    own.extend([
        "use_bias",
        "kernel_initializer",
        "recurrent_initializer",
        "bias_initializer",
    ]);
    if cell == ops::Cell::Lstm {
        own.push("unit_forget_bias");
    }
    let refused = crate::keras::recurrent::UNSUPPORTED;
    own.extend(refused);
    own.extend([
        "dropout",
        "recurrent_dropout",
        "seed",
        "return_sequences",
        "return_state",
        "go_backwards",
        "stateful",
        "unroll",
        "zero_output_for_mask",
    ]);
    if matches!(cell, ops::Cell::Gru { .. }) {
        own.push("reset_after");
    }
    if cell != ops::Cell::Simple {
        own.push("use_cudnn");
    }
    let b = bind(cls, args, &own, 1)?;
    let s = &b.own;
    let at = |k: &str| own.iter().position(|n| *n == k).and_then(|i| s[i].clone());
    let units = recurrent_units(at("units").as_ref())?;
    let cell = match cell {
        ops::Cell::Gru { .. } => ops::Cell::Gru {
            reset_after: flag_arg(&at("reset_after"), true)?,
        },
        other => other,
    };
    let mut r = Recurrent::new(cell, units);
    r.activation = cell_activation(&at("activation"), "tanh", ctx)?;
    if cell != ops::Cell::Simple {
        r.recurrent_activation = cell_activation(&at("recurrent_activation"), "sigmoid", ctx)?;
    }
    r.use_bias = flag_arg(&at("use_bias"), true)?;
    r.kernel_initializer = engine_init(given(&at("kernel_initializer")), Init::GlorotUniform)?;
    r.recurrent_initializer = engine_init(
        given(&at("recurrent_initializer")),
        Init::Orthogonal { gain: 1.0 },
    )?;
    r.bias_initializer = engine_init(given(&at("bias_initializer")), Init::Zeros)?;
    r.unit_forget_bias = flag_arg(&at("unit_forget_bias"), true)?;
    r.return_sequences = flag_arg(&at("return_sequences"), false)?;
    r.return_state = flag_arg(&at("return_state"), false)?;
    r.go_backwards = flag_arg(&at("go_backwards"), false)?;
    r.zero_output_for_mask = flag_arg(&at("zero_output_for_mask"), false)?;
    r.unroll = flag_arg(&at("unroll"), false)?;
    let values: Vec<Option<Value>> = refused.iter().map(|&k| at(k)).collect();
    refuse_given(cls, refused, &values)?;
    if flag_arg(&at("stateful"), false)? {
        return Err(PyErr::not_implemented(format!(
            "{cls}(stateful=True) is not supported here: the layer starts every call from zeros or initial_state"
        )));
    }
    for k in ["dropout", "recurrent_dropout"] {
        if float_arg(&at(k), 0.0)? != 0.0 {
            return Err(PyErr::not_implemented(format!(
                "{cls}({k}=...) other than 0 is not supported here"
            )));
        }
    }
    Ok(make(LayerKind::Recurrent(r), b, ctx))
}

pub fn simple_rnn(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    recurrent(args, ctx, ops::Cell::Simple)
}

pub fn lstm(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    recurrent(args, ctx, ops::Cell::Lstm)
}

pub fn gru(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    recurrent(args, ctx, ops::Cell::Gru { reset_after: true })
}

/// `RepeatVector(n)`.
pub fn repeat_vector(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("RepeatVector", args, &["n"], 1)?;
    let n = match b.own[0].as_ref() {
        Some(Value::Int(n)) => *n,
        Some(other) => {
            return Err(PyErr::type_error(format!(
                "Expected an integer value for `n`, got <class '{}'>.",
                other.type_name()
            )))
        }
        None => 0,
    };
    let n = usize::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
        PyErr::value_error(format!(
            "Argument `n` should be a positive integer. Received: n={n}"
        ))
    })?;
    Ok(make(
        LayerKind::Stateless(Stateless::RepeatVector { n }),
        b,
        ctx,
    ))
}

/// `Permute(dims)`: the new order of the axes after the batch axis, from 1.
pub fn permute(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let b = bind("Permute", args, &["dims"], 1)?;
    let given_dims = b.own[0].clone().unwrap_or(Value::None);
    let dims: Vec<i64> = given_dims
        .as_seq()
        .ok_or_else(|| {
            PyErr::type_error(format!(
                "'{}' object is not iterable",
                given_dims.type_name()
            ))
        })?
        .iter()
        .map(|d| d.as_int())
        .collect::<PyResult<_>>()?;
    let mut sorted = dims.clone();
    sorted.sort_unstable();
    if sorted != (1..=dims.len() as i64).collect::<Vec<_>>() {
        return Err(PyErr::value_error(format!(
            "Invalid permutation argument `dims` for Permute Layer. The set of indices in \
             `dims` must be consecutive and start from 1. Received dims={}",
            ctx.repr(&given_dims)?
        )));
    }
    let dims = dims.iter().map(|d| *d as usize).collect();
    Ok(make(
        LayerKind::Stateless(Stateless::Permute { dims }),
        b,
        ctx,
    ))
}
