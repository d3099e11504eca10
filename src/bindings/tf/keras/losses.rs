//! The loss classes of `tf.keras.losses` (`MeanSquaredError`, `Huber`,
//! `SparseCategoricalCrossentropy`, ... fifteen in all) as callable objects:
//! `loss(y_true, y_pred, sample_weight=None)` with Keras 3's `reduction` spellings (and
//! `tf.keras.losses.Reduction`'s legacy constants), `name`, `dtype`, `get_config()`, `call`,
//! and Keras's repr. The arithmetic is the engine's Keras losses (`keras::losses`), run in
//! the session's execution context, so a tape records a loss object's value. The six that
//! the engine's `fit` trains with are also what `compile(loss=...)` accepts (`loss_arg`).
//! Also `tf.nn.compute_average_loss` and `tf.nn.scale_regularization_loss`, with TF's
//! semantics inside and outside a strategy.

use std::any::Any;

use super::super::convert::{tensor_as, tensor_of, to_array};
use super::super::distribute::{active_strategy, replica_context, Strategy};
use super::super::eager::{apply, op_err};
use super::super::ops::arg;
use super::super::{address_of, func, given, TfError};
use crate::keras::losses::{self, LossFn, Reduction};
use crate::lang::str_repr;
use crate::lang::{Args, Ctx, NativeClass, NativeFn, NativeModule, Object, PyErr, PyResult, Value};
use crate::ops::{self, Tensor};
use crate::tensor::DType;

/// A loss object.
pub struct LossObj {
    pub f: LossFn,
    pub name: String,
    pub reduction: Reduction,
    /// The reduction as given (`'none'` and `None` reduce alike but print differently).
    pub reduction_shown: Value,
    pub dtype: DType,
    /// Constructor arguments as given, for `get_config` and the repr (`label_smoothing=0`
    /// stays an int, as Keras keeps it).
    pub shown: Vec<(&'static str, Value)>,
}

/// The number of replicas Keras divides a reduced loss by: the active strategy's.
pub fn replicas_in_sync(ctx: &mut dyn Ctx) -> usize {
    active_strategy(ctx)
        .and_then(|s| s.downcast::<Strategy>().map(Strategy::num_replicas))
        .unwrap_or(1)
}

/// A value as a float tensor of `dtype` (Keras's `convert_to_tensor(x, dtype)`): tensors
/// and variables keep their identity and are cast, other values convert directly.
fn as_dtype(v: &Value, dtype: DType, ctx: &mut dyn Ctx) -> PyResult<Tensor> {
    let t = tensor_as(v, dtype, ctx)?;
    if t.dtype() == dtype {
        return Ok(t);
    }
    super::super::eager::run(ctx, |e| ops::cast(e, &t, dtype))
}

impl LossObj {
    fn kwargs_repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        let mut parts = Vec::new();
        for (k, v) in self.kwargs() {
            parts.push(format!("{}: {}", str_repr(k), ctx.repr(&v)?));
        }
        Ok(format!("{{{}}}", parts.join(", ")))
    }

    /// The keyword arguments the wrapped function gets (`LossFunctionWrapper._fn_kwargs`).
    fn kwargs(&self) -> Vec<(&'static str, Value)> {
        let get = |k: &str| {
            self.shown
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.clone())
                .unwrap_or(Value::None)
        };
        let keys: &[&'static str] = match self.f {
            LossFn::Huber { .. } => &["delta"],
            LossFn::BinaryCrossentropy { .. } | LossFn::CategoricalCrossentropy { .. } => {
                &["from_logits", "label_smoothing", "axis"]
            }
            LossFn::SparseCategoricalCrossentropy { .. } => {
                &["from_logits", "ignore_class", "axis"]
            }
            LossFn::CosineSimilarity { .. } => &["axis"],
            _ => &[],
        };
        keys.iter().map(|k| (*k, get(k))).collect()
    }

    fn config(&self) -> Value {
        let mut pairs = vec![
            ("name", Value::str(&self.name)),
            ("reduction", self.reduction_shown.clone()),
        ];
        let extra: &[&str] = match self.f {
            LossFn::BinaryCrossentropy { .. } | LossFn::CategoricalCrossentropy { .. } => {
                &["from_logits", "label_smoothing", "axis"]
            }
            LossFn::SparseCategoricalCrossentropy { .. } => &["from_logits", "ignore_class"],
            _ => &[],
        };
        pairs.extend(self.kwargs().into_iter().filter(|(k, _)| extra.contains(k)));
        Value::dict_from(pairs)
    }

    /// `loss(y_true, y_pred, sample_weight=None)`.
    fn call_loss(&self, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind("__call__", &["y_true", "y_pred", "sample_weight"], 2)?;
        let p = as_dtype(arg(&s, 1), self.dtype, ctx)?;
        let t = as_dtype(arg(&s, 0), self.dtype, ctx)?;
        let w = match given(&s[2]) {
            Some(w) => Some(as_dtype(w, self.dtype, ctx)?),
            None => None,
        };
        let replicas = replicas_in_sync(ctx);
        let (f, reduction, dtype) = (self.f, self.reduction, self.dtype);
        apply(ctx, |e| {
            losses::call(e, f, reduction, &t, &p, w.as_ref(), dtype, replicas)
        })
    }
}

impl Object for LossObj {
    fn type_name(&self) -> String {
        self.f.class_name().into()
    }
    fn repr(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<LossFunctionWrapper(<function {} at {}>, kwargs={})>",
            self.f.function_name(),
            address_of(self),
            self.kwargs_repr(ctx)?
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "name" => Value::str(&self.name),
            "reduction" => self.reduction_shown.clone(),
            "dtype" => Value::str(self.dtype.name()),
            "get_config" => super::super::bound::<LossObj>(this, name, |l, _, _, _| Ok(l.config())),
            "call" => super::super::bound::<LossObj>(this, name, |l, _, args, ctx| {
                let s = args.bind("call", &["y_true", "y_pred"], 2)?;
                let p = tensor_of(arg(&s, 1), ctx)?;
                let t = tensor_as(arg(&s, 0), p.dtype(), ctx)?;
                let f = l.f;
                apply(ctx, |e| {
                    let (t, p) = losses::same_rank(e, t, p, true)?;
                    Ok(losses::per_example(e, f, &t, &p)?.values)
                })
            }),
            _ => return Ok(None),
        }))
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        self.call_loss(&args, ctx)
    }
    fn dir(&self) -> Vec<String> {
        ["name", "reduction", "dtype", "get_config", "call"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }
    fn class_chain(&self) -> Vec<String> {
        vec![
            self.f.class_name().into(),
            "LossFunctionWrapper".into(),
            "Loss".into(),
        ]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Keras's `standardize_reduction`.
fn reduction_arg(v: Option<&Option<Value>>, ctx: &mut dyn Ctx) -> PyResult<Reduction> {
    let v = match v {
        None => return Ok(Reduction::SumOverBatchSize),
        Some(None) => return Ok(Reduction::SumOverBatchSize),
        Some(Some(v)) => v,
    };
    let text = match v {
        Value::None => return Ok(Reduction::None),
        Value::Str(s) => s.to_string(),
        other => ctx.str(other)?,
    };
    Ok(match text.as_str() {
        "none" => Reduction::None,
        "sum" => Reduction::Sum,
        "sum_over_batch_size" => Reduction::SumOverBatchSize,
        "mean" => Reduction::Mean,
        "mean_with_sample_weight" => Reduction::MeanWithSampleWeight,
        _ => {
            return Err(TfError::Value(format!(
                "Invalid value for argument `reduction`. Expected one of {{'none', 'sum', None, \
                 'mean', 'sum_over_batch_size', 'mean_with_sample_weight'}}. Received: \
                 reduction={text}"
            ))
            .into())
        }
    })
}

/// A loss class's constructor parameters (in Keras's order) and its loss from them.
#[derive(Clone, Copy)]
enum Ctor {
    Plain(LossFn),
    Huber,
    Cosine,
    Crossentropy(bool),
    Sparse,
}

impl Ctor {
    fn params(self) -> &'static [&'static str] {
        match self {
            Ctor::Plain(_) => &["reduction", "name", "dtype"],
            Ctor::Huber => &["delta", "reduction", "name", "dtype"],
            Ctor::Cosine => &["axis", "reduction", "name", "dtype"],
            Ctor::Crossentropy(_) => &[
                "from_logits",
                "label_smoothing",
                "axis",
                "reduction",
                "name",
                "dtype",
            ],
            Ctor::Sparse => &[
                "from_logits",
                "ignore_class",
                "reduction",
                "axis",
                "name",
                "dtype",
            ],
        }
    }

    fn defaults(self) -> Vec<(&'static str, Value)> {
        match self {
            Ctor::Plain(_) => vec![],
            Ctor::Huber => vec![("delta", Value::Float(1.0))],
            Ctor::Cosine => vec![("axis", Value::Int(-1))],
            Ctor::Crossentropy(_) => vec![
                ("from_logits", Value::Bool(false)),
                ("label_smoothing", Value::Float(0.0)),
                ("axis", Value::Int(-1)),
            ],
            Ctor::Sparse => vec![
                ("from_logits", Value::Bool(false)),
                ("ignore_class", Value::None),
                ("axis", Value::Int(-1)),
            ],
        }
    }

    fn make(self, class: &str, args: &Args, ctx: &mut dyn Ctx) -> PyResult<LossObj> {
        let params = self.params();
        let s = args.bind(class, params, 0)?;
        let slot = |n: &str| {
            params
                .iter()
                .position(|p| *p == n)
                .and_then(|i| s[i].clone())
        };
        let mut shown = self.defaults();
        for (k, v) in shown.iter_mut() {
            if let Some(given) = slot(k) {
                *v = given;
            }
        }
        let get = |k: &str| -> Value {
            shown
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.clone())
                .unwrap_or(Value::None)
        };
        let f = match self {
            Ctor::Plain(f) => f,
            Ctor::Huber => LossFn::Huber {
                delta: get("delta").as_float()?,
            },
            Ctor::Cosine => LossFn::CosineSimilarity {
                axis: get("axis").as_int()?,
            },
            Ctor::Crossentropy(binary) => {
                let from_logits = get("from_logits").as_bool_strict()?;
                let label_smoothing = get("label_smoothing").as_float()?;
                losses::check_axis(class, get("axis").as_int()?).map_err(op_err)?;
                LossFn::crossentropy(binary, from_logits, label_smoothing)
            }
            Ctor::Sparse => {
                losses::check_axis(class, get("axis").as_int()?).map_err(op_err)?;
                LossFn::SparseCategoricalCrossentropy {
                    from_logits: get("from_logits").as_bool_strict()?,
                    ignore_class: match get("ignore_class") {
                        Value::None => None,
                        v => Some(v.as_int()?),
                    },
                }
            }
        };
        let reduction_slot = params.iter().position(|p| *p == "reduction").map(|i| &s[i]);
        let reduction = reduction_arg(reduction_slot, ctx)?;
        let reduction_shown = match reduction_slot {
            Some(Some(v)) => v.clone(),
            _ => Value::str("sum_over_batch_size"),
        };
        let name = match slot("name").filter(|v| !v.is_none()) {
            Some(v) => v.as_str()?.to_string(),
            None => f.default_name().to_string(),
        };
        let dtype = match slot("dtype").filter(|v| !v.is_none()) {
            Some(v) => match DType::parse(v.as_str()?) {
                Some(d) if d.is_float() => d,
                _ => {
                    return Err(TfError::Value(format!(
                        "Invalid dtype: {}",
                        v.as_str().unwrap_or_default()
                    ))
                    .into())
                }
            },
            None => DType::F32,
        };
        Ok(LossObj {
            f,
            name,
            reduction,
            reduction_shown,
            dtype,
            shown,
        })
    }
}

fn loss_class(ctor: Ctor, class: &'static str) -> Value {
    NativeClass::new(class, "keras.src.losses.losses", "")
        .base("LossFunctionWrapper")
        .base("Loss")
        .constructor(move |args: &Args, ctx| Ok(Value::native(ctor.make(class, args, ctx)?)))
        .into_value()
}

/// `compile(loss=...)`: a name, or a loss object whose loss the engine trains with.
pub fn loss_arg(v: Option<&Value>, _ctx: &mut dyn Ctx) -> PyResult<(String, bool)> {
    match v {
        None => Err(PyErr::value_error(
            "No loss to compute. Provide a `loss` argument in `compile()`.",
        )),
        Some(Value::Str(s)) => Ok((s.to_string(), false)),
        Some(o) => match o.downcast::<LossObj>() {
            Some(l) => match compiled_loss(&l.f) {
                Some((name, from_logits)) => Ok((name.to_string(), from_logits)),
                None => Err(TfError::Value(format!(
                    "compile() on this kernel trains with mean_squared_error, \
                     mean_absolute_error, huber, binary_crossentropy, \
                     categorical_crossentropy and sparse_categorical_crossentropy (as names \
                     or loss objects); {} works as a function but not in compile().",
                    l.f.class_name()
                ))
                .into()),
            },
            None => Err(PyErr::value_error(format!(
                "Could not interpret loss identifier: {}",
                o.type_name()
            ))),
        },
    }
}

/// The engine's loss for a loss object, as `(name, from_logits)`, when `fit` has it with
/// these arguments.
fn compiled_loss(f: &LossFn) -> Option<(&'static str, bool)> {
    Some(match *f {
        LossFn::MeanSquaredError => ("mean_squared_error", false),
        LossFn::MeanAbsoluteError => ("mean_absolute_error", false),
        LossFn::Huber { delta: 1.0 } => ("huber", false),
        LossFn::BinaryCrossentropy {
            from_logits,
            label_smoothing: 0.0,
        } => ("binary_crossentropy", from_logits),
        LossFn::CategoricalCrossentropy {
            from_logits,
            label_smoothing: 0.0,
        } => ("categorical_crossentropy", from_logits),
        LossFn::SparseCategoricalCrossentropy {
            from_logits,
            ignore_class: None,
        } => ("sparse_categorical_crossentropy", from_logits),
        _ => return None,
    })
}

/// `tf.keras.losses.Reduction`: Keras 2's reduction keys, which Keras 3 keeps as strings.
fn reduction_class() -> Value {
    const ALL: [&str; 4] = ["auto", "none", "sum", "sum_over_batch_size"];
    let all_text = format!(
        "({})",
        ALL.iter()
            .map(|k| str_repr(k))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let shown = all_text.clone();
    NativeClass::new("Reduction", "keras.src.legacy.losses", "")
        .static_attr("AUTO", Value::str("auto"))
        .static_attr("NONE", Value::str("none"))
        .static_attr("SUM", Value::str("sum"))
        .static_attr("SUM_OVER_BATCH_SIZE", Value::str("sum_over_batch_size"))
        .static_attr(
            "all",
            NativeFn::value("all", "all()", |_, _| {
                Ok(Value::tuple(ALL.iter().map(|k| Value::str(k)).collect()))
            }),
        )
        .static_attr(
            "validate",
            NativeFn::value("validate", "validate(key)", move |args, ctx| {
                let s = args.bind("validate", &["key"], 1)?;
                let key = arg(&s, 0);
                let known = matches!(key, Value::Str(k) if ALL.contains(&k.as_ref()));
                if known {
                    return Ok(Value::None);
                }
                Err(TfError::Value(format!(
                    "Invalid Reduction Key: {}. Expected keys are \"{shown}\"",
                    ctx.str(key)?
                ))
                .into())
            }),
        )
        .into_value()
}

/// `tf.nn.compute_average_loss(per_example_loss, sample_weight=None,
/// global_batch_size=None)`: the weighted losses summed and divided by the global batch
/// (the first axis times the replicas in sync; zero when it is zero).
fn compute_average_loss(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "compute_average_loss",
        &["per_example_loss", "sample_weight", "global_batch_size"],
        1,
    )?;
    let loss = tensor_of(arg(&s, 0), ctx)?;
    if loss.ndim() == 0 {
        // TF formats the tensor, which formats its numpy value.
        let value = crate::bindings::numpy::convert::wrap(loss.value().clone());
        let shown = ctx.str(&value)?;
        return Err(TfError::Value(format!(
            "Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1. Received per_example_loss={shown} with rank 0"
        ))
        .into());
    }
    let weight = match given(&s[1]) {
        Some(w) => Some(tensor_of(w, ctx)?),
        None => None,
    };
    let global = match given(&s[2]) {
        Some(v) => {
            let a = to_array(v, None, false, ctx)?;
            if !a.dtype().is_int() {
                return Err(PyErr::type_error(format!(
                    "global_batch_size must be an integer..  Expected \"x\" to be integer type.  Found: tensor of dtype <dtype: '{}'>",
                    a.dtype().name()
                )));
            }
            let (_, n) = a.to_i64_vec();
            let n = n.first().copied().unwrap_or(0);
            if n < 0 {
                return Err(PyErr::new(
                    "InvalidArgumentError",
                    format!(
                        "global_batch_size must be non-negative..  \nCondition x >= 0 did not hold element-wise:\nx (shape=() dtype={}) = \n{n}",
                        a.dtype().name()
                    ),
                ));
            }
            n as usize
        }
        None => {
            if active_strategy(ctx).is_some() && replica_context(ctx).is_none() {
                return Err(PyErr::runtime_error(
                    "You are calling `compute_average_loss` in cross replica context, while it was expected to be called in replica context.",
                ));
            }
            loss.shape().first().copied().unwrap_or(1) * replicas_in_sync(ctx)
        }
    };
    apply(ctx, |e| {
        let input = loss.dtype();
        // TF scales by the weights in float32, then casts back to the loss's dtype.
        let mut l = loss.clone();
        if let Some(w) = &weight {
            let lf = losses::cast_to(e, &l, DType::F32)?;
            let wf = losses::cast_to(e, w, DType::F32)?;
            let (lf, wf) = losses::same_rank(e, lf, wf, true)?;
            let scaled = ops::mul(e, &lf, &wf)?;
            l = losses::cast_to(e, &scaled, input)?;
        }
        // TF divides an integer sum as float64 (its true division).
        let out = if input.is_float() { input } else { DType::F64 };
        let l = losses::cast_to(e, &l, out)?;
        let total = ops::reduce_sum(e, &l, None, false)?;
        losses::div_no_nan(e, &total, &Tensor::scalar(global as f64, out))
    })
}

/// `tf.nn.scale_regularization_loss(regularization_loss)`: the summed loss divided by the
/// replicas in sync.
fn scale_regularization_loss(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("scale_regularization_loss", &["regularization_loss"], 1)?;
    if active_strategy(ctx).is_some() && replica_context(ctx).is_none() {
        return Err(PyErr::runtime_error(
            "You are calling `scale_regularization_loss` in cross replica context, while it was expected to be called in replica context.",
        ));
    }
    let v = arg(&s, 0);
    let parts: Vec<Tensor> = match v {
        Value::List(_) | Value::Tuple(_) => {
            let items = ctx.iterate(v)?;
            if items.iter().any(super::super::tensor::is_tensor) {
                items
                    .iter()
                    .map(|i| tensor_of(i, ctx))
                    .collect::<PyResult<_>>()?
            } else {
                vec![tensor_of(v, ctx)?]
            }
        }
        _ => vec![tensor_of(v, ctx)?],
    };
    let n = replicas_in_sync(ctx);
    apply(ctx, |e| {
        let t = if parts.len() == 1 {
            parts[0].clone()
        } else {
            ops::add_n(e, &parts)?
        };
        let total = ops::reduce_sum(e, &t, None, false)?;
        let d = Tensor::scalar(n as f64, total.dtype());
        ops::div(e, &total, &d)
    })
}

/// Adds `compute_average_loss` and `scale_regularization_loss` to `tf.nn`.
pub fn register_nn(nn: &NativeModule) {
    nn.set(
        "compute_average_loss",
        func(
            "compute_average_loss",
            "compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None)",
            compute_average_loss,
        ),
    );
    nn.set(
        "scale_regularization_loss",
        func(
            "scale_regularization_loss",
            "scale_regularization_loss(regularization_loss)",
            scale_regularization_loss,
        ),
    );
}

/// Adds the loss classes, `Reduction` and the loss functions to `tf.keras.losses`.
pub fn register(losses: &NativeModule) {
    let plain = Ctor::Plain;
    for (class, ctor) in [
        ("MeanSquaredError", plain(LossFn::MeanSquaredError)),
        ("MeanAbsoluteError", plain(LossFn::MeanAbsoluteError)),
        (
            "MeanAbsolutePercentageError",
            plain(LossFn::MeanAbsolutePercentageError),
        ),
        (
            "MeanSquaredLogarithmicError",
            plain(LossFn::MeanSquaredLogarithmicError),
        ),
        ("Huber", Ctor::Huber),
        ("LogCosh", plain(LossFn::LogCosh)),
        ("BinaryCrossentropy", Ctor::Crossentropy(true)),
        ("CategoricalCrossentropy", Ctor::Crossentropy(false)),
        ("SparseCategoricalCrossentropy", Ctor::Sparse),
        ("KLDivergence", plain(LossFn::KlDivergence)),
        ("Hinge", plain(LossFn::Hinge)),
        ("SquaredHinge", plain(LossFn::SquaredHinge)),
        ("CategoricalHinge", plain(LossFn::CategoricalHinge)),
        ("Poisson", plain(LossFn::Poisson)),
        ("CosineSimilarity", Ctor::Cosine),
    ] {
        losses.set(class, loss_class(ctor, class));
    }
    losses.set("Reduction", reduction_class());
    losses.set(
        "Loss",
        NativeClass::new("Loss", "keras.src.losses.loss", "").into_value(),
    );
    super::loss_functions::register(losses);
}
