//! `tf.nn`: activations, softmax and log-softmax, `conv2d`, max and average pooling,
//! `dropout`, `bias_add` and the cross-entropies with logits; and the activations of
//! `tf.keras.activations`, which are the same ops. Each function reads its arguments as TF
//! does and runs the op library through the session's execution context (`eager.rs`).

use super::convert::{matching, tensor_of};
use super::eager::apply;
use super::ops::{activation, arg, flag};
use super::{func, given, TfError};
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyResult, Value};
use crate::ops::{self, Activation, Conv, Loss, Padding, Pool};

type R = PyResult<Value>;

/// `tf.nn.softmax(logits, axis=None)` or `log_softmax`: the last axis by default.
pub fn softmax_fn(name: &'static str, log: bool) -> Value {
    NativeFn::value(
        name,
        "softmax(logits, axis=None, name=None)",
        move |args, ctx| {
            let s = args.bind(name, &["logits", "axis", "name"], 1)?;
            let t = tensor_of(arg(&s, 0), ctx)?;
            let axis = given(&s[1]).map_or(Ok(-1), |v| v.as_int())?;
            apply(ctx, |e| ops::softmax(e, &t, axis, log))
        },
    )
}

fn gelu(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("gelu", &["features", "approximate", "name"], 1)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let approximate = flag(&s, 1, false)?;
    apply(ctx, |e| {
        ops::activate(e, Activation::Gelu { approximate }, &t)
    })
}

fn leaky_relu(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("leaky_relu", &["features", "alpha", "name"], 1)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let alpha = given(&s[1]).map_or(Ok(0.2), |v| v.as_float())? as f32;
    apply(ctx, |e| {
        ops::activate(e, Activation::LeakyRelu { alpha }, &t)
    })
}

/// An integer or a list of 1, 2 or 4 integers (`[1, h, w, 1]`) as a height-width pair,
/// as `tf.nn.conv2d` and the pooling functions accept `strides` and `ksize`.
fn pair(v: &Value, what: &str) -> PyResult<(usize, usize)> {
    let nums: Vec<i64> = match v {
        Value::Int(n) => vec![*n],
        other => match other.as_seq() {
            Some(items) => items.iter().map(|x| x.as_int()).collect::<PyResult<_>>()?,
            None => vec![other.as_int()?],
        },
    };
    let (h, w) = match nums.as_slice() {
        [n] => (*n, *n),
        [h, w] => (*h, *w),
        [1, h, w, 1] => (*h, *w),
        _ => {
            return Err(TfError::Value(format!(
                "{what} should be of length 1, 2 or 4 (with 1 in the batch and channel positions), got {nums:?}"
            ))
            .into())
        }
    };
    match (usize::try_from(h), usize::try_from(w)) {
        (Ok(h), Ok(w)) => Ok((h, w)),
        _ => Err(TfError::Value(format!("{what} must be positive, got {nums:?}")).into()),
    }
}

fn padding(v: &Value) -> PyResult<Padding> {
    let s = v.as_str()?;
    Padding::parse(s).ok_or_else(|| {
        TfError::Value(format!(
            "padding must be one of 'SAME' or 'VALID' (explicit paddings are not supported here), got {s}"
        ))
        .into()
    })
}

fn nhwc_only(v: Option<&Value>) -> PyResult<()> {
    match v.map(|v| v.as_str()).transpose()? {
        None | Some("NHWC") => Ok(()),
        Some(other) => Err(TfError::NotImplemented(format!(
            "data_format {other} is not supported here; use NHWC"
        ))
        .into()),
    }
}

fn conv2d(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind(
        "conv2d",
        &[
            "input",
            "filters",
            "strides",
            "padding",
            "data_format",
            "dilations",
            "name",
        ],
        4,
    )?;
    nhwc_only(given(&s[4]))?;
    if let Some(d) = given(&s[5]) {
        if pair(d, "dilations")? != (1, 1) {
            return Err(TfError::NotImplemented(
                "dilated convolutions are not supported here".into(),
            )
            .into());
        }
    }
    let t = matching(&[arg(&s, 0), arg(&s, 1)], ctx)?;
    let conv = Conv {
        strides: pair(arg(&s, 2), "strides")?,
        padding: padding(arg(&s, 3))?,
    };
    apply(ctx, |e| ops::conv2d(e, &t[0], &t[1], conv))
}

fn pooling(name: &'static str, max: bool) -> Value {
    NativeFn::value(
        name,
        "pool(input, ksize, strides, padding, data_format='NHWC', name=None)",
        move |args, ctx| {
            let s = args.bind(
                name,
                &[
                    "input",
                    "ksize",
                    "strides",
                    "padding",
                    "data_format",
                    "name",
                ],
                4,
            )?;
            nhwc_only(given(&s[4]))?;
            let t = tensor_of(arg(&s, 0), ctx)?;
            let p = Pool {
                ksize: pair(arg(&s, 1), "ksize")?,
                strides: pair(arg(&s, 2), "strides")?,
                padding: padding(arg(&s, 3))?,
            };
            apply(ctx, |e| ops::pool(e, &t, p, max))
        },
    )
}

fn dropout(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("dropout", &["x", "rate", "noise_shape", "seed", "name"], 2)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let rate = arg(&s, 1).as_float()?;
    if !(0.0..1.0).contains(&rate) {
        return Err(TfError::Value(format!(
            "rate must be a scalar tensor or a float in the range [0, 1), got {}",
            crate::lang::float_repr(rate)
        ))
        .into());
    }
    if given(&s[2]).is_some() {
        return Err(TfError::NotImplemented(
            "tf.nn.dropout with noise_shape is not supported here".into(),
        )
        .into());
    }
    let op_seed = given(&s[3]).map(|v| v.as_int()).transpose()?;
    let seeds = super::random::seeds(ctx, op_seed);
    apply(ctx, |e| ops::dropout(e, &t, rate, &seeds))
}

fn bias_add(args: &Args, ctx: &mut dyn Ctx) -> R {
    let s = args.bind("bias_add", &["value", "bias", "data_format", "name"], 2)?;
    nhwc_only(given(&s[2]))?;
    let t = matching(&[arg(&s, 0), arg(&s, 1)], ctx)?;
    apply(ctx, |e| ops::add(e, &t[0], &t[1]))
}

/// One of TF's cross-entropies with logits: `labels` converted to the logits' dtype
/// (integers for the sparse one).
fn cross_entropy(name: &'static str, kind: Loss) -> Value {
    NativeFn::value(
        name,
        "cross_entropy(labels=None, logits=None, name=None)",
        move |args, ctx| {
            let s = args.bind(name, &["labels", "logits", "axis", "name"], 0)?;
            let (labels, logits) = match (given(&s[0]), given(&s[1])) {
                (Some(l), Some(z)) => (l.clone(), z.clone()),
                _ => {
                    return Err(TfError::Value(format!(
                        "Both labels and logits must be provided for {name}"
                    ))
                    .into())
                }
            };
            if given(&s[2]).is_some_and(|a| !matches!(a, Value::Int(-1))) {
                return Err(TfError::NotImplemented(format!(
                    "{name} over an axis other than the last is not supported here"
                ))
                .into());
            }
            let (y, z) = if kind == Loss::SparseSoftmaxCrossEntropyWithLogits {
                (tensor_of(&labels, ctx)?, tensor_of(&logits, ctx)?)
            } else {
                let t = matching(&[&logits, &labels], ctx)?;
                (t[1].clone(), t[0].clone())
            };
            if kind == Loss::SigmoidCrossEntropyWithLogits && y.shape() != z.shape() {
                return Err(TfError::Value(format!(
                    "logits and labels must have the same shape ({} vs {})",
                    crate::tensor::shape_str(z.shape()),
                    crate::tensor::shape_str(y.shape())
                ))
                .into());
            }
            apply(ctx, |e| ops::loss(e, kind, &y, &z))
        },
    )
}

/// The activations by Keras's names, as `tf.keras.activations.<name>(x, ...)` computes
/// them (`None` for a name that is not one).
pub fn keras_activation(name: &str, args: &Args, ctx: &mut dyn Ctx) -> Option<R> {
    let act = match name {
        "relu" => Activation::Relu,
        "sigmoid" => Activation::Sigmoid,
        "tanh" => Activation::Tanh,
        "elu" => Activation::Elu,
        "selu" => Activation::Selu,
        "swish" | "silu" => Activation::Swish,
        "softplus" => Activation::Softplus,
        "gelu" => {
            return Some(args.bind("gelu", &["x", "approximate"], 1).and_then(|s| {
                let t = tensor_of(arg(&s, 0), ctx)?;
                let approximate = flag(&s, 1, false)?;
                apply(ctx, |e| {
                    ops::activate(e, Activation::Gelu { approximate }, &t)
                })
            }))
        }
        "leaky_relu" => {
            return Some(
                args.bind("leaky_relu", &["x", "negative_slope"], 1)
                    .and_then(|s| {
                        let t = tensor_of(arg(&s, 0), ctx)?;
                        let alpha = given(&s[1]).map_or(Ok(0.2), |v| v.as_float())? as f32;
                        apply(ctx, |e| {
                            ops::activate(e, Activation::LeakyRelu { alpha }, &t)
                        })
                    }),
            )
        }
        "softmax" | "log_softmax" => {
            return Some(args.bind(name, &["x", "axis"], 1).and_then(|s| {
                let t = tensor_of(arg(&s, 0), ctx)?;
                let axis = given(&s[1]).map_or(Ok(-1), |v| v.as_int())?;
                apply(ctx, |e| ops::softmax(e, &t, axis, name == "log_softmax"))
            }))
        }
        "linear" => {
            return Some(
                args.bind("linear", &["x"], 1)
                    .and_then(|s| tensor_of(arg(&s, 0), ctx).map(super::eager::wrap)),
            )
        }
        _ => return None,
    };
    Some(args.bind(name, &["x"], 1).and_then(|s| {
        let t = tensor_of(arg(&s, 0), ctx)?;
        apply(ctx, |e| ops::activate(e, act, &t))
    }))
}

/// The `tf.nn` module.
pub fn module() -> Value {
    let nn = NativeModule::new("tensorflow.nn", "Neural-network functions.");
    super::keras::losses::register_nn(&nn);
    nn.set("top_k", super::select::top_k_fn());
    for (n, act) in [
        ("relu", Activation::Relu),
        ("sigmoid", Activation::Sigmoid),
        ("tanh", Activation::Tanh),
        ("softplus", Activation::Softplus),
        ("elu", Activation::Elu),
        ("selu", Activation::Selu),
        ("silu", Activation::Swish),
        ("swish", Activation::Swish),
    ] {
        nn.set(n, activation(n, act));
    }
    for (n, f) in [
        ("softmax", softmax_fn("softmax", false)),
        ("log_softmax", softmax_fn("log_softmax", true)),
        (
            "gelu",
            func("gelu", "gelu(features, approximate=False, name=None)", gelu),
        ),
        (
            "leaky_relu",
            func("leaky_relu", "leaky_relu(features, alpha=0.2, name=None)", leaky_relu),
        ),
        (
            "conv2d",
            func(
                "conv2d",
                "conv2d(input, filters, strides, padding, data_format='NHWC', dilations=None, name=None)",
                conv2d,
            ),
        ),
        ("max_pool2d", pooling("max_pool2d", true)),
        ("max_pool", pooling("max_pool", true)),
        ("avg_pool2d", pooling("avg_pool2d", false)),
        ("avg_pool", pooling("avg_pool", false)),
        (
            "dropout",
            func(
                "dropout",
                "dropout(x, rate, noise_shape=None, seed=None, name=None)",
                dropout,
            ),
        ),
        (
            "bias_add",
            func("bias_add", "bias_add(value, bias, data_format=None, name=None)", bias_add),
        ),
        (
            "softmax_cross_entropy_with_logits",
            cross_entropy(
                "softmax_cross_entropy_with_logits",
                Loss::SoftmaxCrossEntropyWithLogits,
            ),
        ),
        (
            "sparse_softmax_cross_entropy_with_logits",
            cross_entropy(
                "sparse_softmax_cross_entropy_with_logits",
                Loss::SparseSoftmaxCrossEntropyWithLogits,
            ),
        ),
        (
            "sigmoid_cross_entropy_with_logits",
            cross_entropy(
                "sigmoid_cross_entropy_with_logits",
                Loss::SigmoidCrossEntropyWithLogits,
            ),
        ),
    ] {
        nn.set(n, f);
    }
    nn.into_value()
}
