//! The loss functions of `tf.keras.losses` under the names TF 2.21's `tf.keras` exports
//! (`mse`/`MSE`, `mae`/`MAE`, `mape`/`MAPE`, `msle`/`MSLE`, `huber`, `logcosh`,
//! `kld`/`KLD`/`kullback_leibler_divergence`, `poisson`, the hinges, `cosine_similarity`
//! and the cross-entropies): their arguments read as Keras reads them, then the engine's
//! Keras losses (`keras::losses`), run in the session's execution context so a tape records
//! them. Each returns the loss per example.

use super::super::convert::{tensor_as, tensor_of};
use super::super::eager::apply;
use super::super::given;
use super::super::ops::{arg, flag};
use crate::keras::losses::{self, LossFn};
use crate::lang::{Args, Ctx, NativeFn, NativeModule, PyResult, Value};

/// A function's extra parameters and how they make its [`LossFn`].
#[derive(Clone, Copy)]
enum Params {
    None(LossFn),
    Delta,
    Axis,
    /// `from_logits, label_smoothing, axis` (binary when true).
    Crossentropy(bool),
    /// `from_logits, ignore_class, axis`.
    Sparse,
}

impl Params {
    fn names(self) -> &'static [&'static str] {
        match self {
            Params::None(_) => &["y_true", "y_pred"],
            Params::Delta => &["y_true", "y_pred", "delta"],
            Params::Axis => &["y_true", "y_pred", "axis"],
            Params::Crossentropy(_) => {
                &["y_true", "y_pred", "from_logits", "label_smoothing", "axis"]
            }
            Params::Sparse => &["y_true", "y_pred", "from_logits", "ignore_class", "axis"],
        }
    }

    fn signature(self) -> &'static str {
        match self {
            Params::None(_) => "(y_true, y_pred)",
            Params::Delta => "(y_true, y_pred, delta=1.0)",
            Params::Axis => "(y_true, y_pred, axis=-1)",
            Params::Crossentropy(_) => {
                "(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1)"
            }
            Params::Sparse => "(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1)",
        }
    }

    fn loss(self, name: &str, s: &[Option<Value>]) -> PyResult<LossFn> {
        let axis = |i: usize| -> PyResult<i64> { given(&s[i]).map_or(Ok(-1), |v| v.as_int()) };
        Ok(match self {
            Params::None(f) => f,
            Params::Delta => LossFn::Huber {
                delta: given(&s[2]).map_or(Ok(1.0), |v| v.as_float())?,
            },
            Params::Axis => LossFn::CosineSimilarity { axis: axis(2)? },
            Params::Crossentropy(binary) => {
                losses::check_axis(name, axis(4)?).map_err(super::super::eager::op_err)?;
                let from_logits = flag(s, 2, false)?;
                let label_smoothing = given(&s[3]).map_or(Ok(0.0), |v| v.as_float())?;
                LossFn::crossentropy(binary, from_logits, label_smoothing)
            }
            Params::Sparse => {
                losses::check_axis(name, axis(4)?).map_err(super::super::eager::op_err)?;
                LossFn::SparseCategoricalCrossentropy {
                    from_logits: flag(s, 2, false)?,
                    ignore_class: given(&s[3]).map(|v| v.as_int()).transpose()?,
                }
            }
        })
    }
}

/// Reads a loss function's arguments: `(loss, y_true, y_pred)` with the target converted
/// as Keras converts it (to the prediction's dtype where it can).
pub fn loss_args(
    name: &str,
    params: &[&str],
    args: &Args,
    ctx: &mut dyn Ctx,
) -> PyResult<(Vec<Option<Value>>, crate::ops::Tensor, crate::ops::Tensor)> {
    let s = args.bind(name, params, 2)?;
    let p = tensor_of(arg(&s, 1), ctx)?;
    let t = tensor_as(arg(&s, 0), p.dtype(), ctx)?;
    Ok((s, t, p))
}

fn function(name: &'static str, params: Params) -> Value {
    let doc = format!("{name}{}", params.signature());
    NativeFn::value(name, &doc, move |args, ctx| {
        let (s, t, p) = loss_args(name, params.names(), args, ctx)?;
        let f = params.loss(name, &s)?;
        apply(ctx, |e| Ok(losses::per_example(e, f, &t, &p)?.values))
    })
}

/// Adds the loss functions to `tf.keras.losses`, under the names TF 2.21's `tf.keras` has.
pub fn register(m: &NativeModule) {
    let set = |names: &[&str], v: Value| {
        for n in names {
            m.set(n, v.clone());
        }
    };
    let none = Params::None;
    set(
        &["mse", "MSE"],
        function("mean_squared_error", none(LossFn::MeanSquaredError)),
    );
    set(
        &["mae", "MAE"],
        function("mean_absolute_error", none(LossFn::MeanAbsoluteError)),
    );
    set(
        &["mape", "MAPE"],
        function(
            "mean_absolute_percentage_error",
            none(LossFn::MeanAbsolutePercentageError),
        ),
    );
    set(
        &["msle", "MSLE"],
        function(
            "mean_squared_logarithmic_error",
            none(LossFn::MeanSquaredLogarithmicError),
        ),
    );
    set(&["huber"], function("huber", Params::Delta));
    set(&["logcosh"], function("log_cosh", none(LossFn::LogCosh)));
    set(
        &["kld", "KLD", "kullback_leibler_divergence"],
        function("kl_divergence", none(LossFn::KlDivergence)),
    );
    set(&["poisson"], function("poisson", none(LossFn::Poisson)));
    set(&["hinge"], function("hinge", none(LossFn::Hinge)));
    set(
        &["squared_hinge"],
        function("squared_hinge", none(LossFn::SquaredHinge)),
    );
    set(
        &["categorical_hinge"],
        function("categorical_hinge", none(LossFn::CategoricalHinge)),
    );
    set(
        &["cosine_similarity"],
        function("cosine_similarity", Params::Axis),
    );
    set(
        &["binary_crossentropy"],
        function("binary_crossentropy", Params::Crossentropy(true)),
    );
    set(
        &["categorical_crossentropy"],
        function("categorical_crossentropy", Params::Crossentropy(false)),
    );
    set(
        &["sparse_categorical_crossentropy"],
        function("sparse_categorical_crossentropy", Params::Sparse),
    );
}
