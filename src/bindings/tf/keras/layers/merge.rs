//! The merge layers as a notebook sees them: the classes `Add`, `Subtract`, `Multiply`,
//! `Average`, `Maximum`, `Minimum` and `Concatenate(axis=-1)`, their functional forms
//! (`layers.add(inputs)`, `layers.concatenate(inputs, axis=-1)`, ...), and their arithmetic
//! on data as the ops Keras's TensorFlow backend runs (pairwise `AddV2`, `Sub`, `Mul`,
//! `Maximum`, `Minimum`, a division for the average, `ConcatV2`), so a tape records them and
//! the gradient of a fan-out is summed. The shape rule is the engine's (`keras::merge`).

use super::super::super::eager::run;
use super::args::{bind, make};
use super::call::call_layer;
use crate::keras::{KerasError, LayerKind, MergeOp};
use crate::lang::{Args, Ctx, NativeClass, NativeFn, NativeModule, PyErr, PyResult, Value};
use crate::ops::{self, Binary, Tensor};

/// Every merge class: its Keras name, its functional form and the op it makes.
const MERGES: &[(&str, &str, MergeOp)] = &[
    ("Add", "add", MergeOp::Add),
    ("Subtract", "subtract", MergeOp::Subtract),
    ("Multiply", "multiply", MergeOp::Multiply),
    ("Average", "average", MergeOp::Average),
    ("Maximum", "maximum", MergeOp::Maximum),
    ("Minimum", "minimum", MergeOp::Minimum),
    (
        "Concatenate",
        "concatenate",
        MergeOp::Concatenate { axis: -1 },
    ),
];

/// `Add(**kwargs)`, `Concatenate(axis=-1, **kwargs)`, ...
fn construct(op: MergeOp, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let cls = op.class_name();
    let own: &[&str] = match op {
        MergeOp::Concatenate { .. } => &["axis"],
        _ => &[],
    };
    let b = bind(cls, args, own, 0)?;
    let op = match (op, b.own.first().and_then(|v| v.as_ref())) {
        (MergeOp::Concatenate { .. }, Some(a)) if !a.is_none() => {
            MergeOp::Concatenate { axis: a.as_int()? }
        }
        (op, _) => op,
    };
    Ok(make(LayerKind::Merge(op), b, ctx))
}

/// The functional form: `layers.add(inputs, **kwargs)` is `layers.Add(**kwargs)(inputs)`.
fn functional(op: MergeOp, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let name = op.base_name();
    let mut pos = args.pos.clone().into_iter();
    let mut rest = Args::new(vec![]);
    let mut inputs = pos.next();
    for (k, v) in &args.kw {
        if k == "inputs" && inputs.is_none() {
            inputs = Some(v.clone());
        } else {
            rest.kw.push((k.clone(), v.clone()));
        }
    }
    // `concatenate(inputs, axis)` also takes the axis by position.
    rest.pos.extend(pos);
    let inputs = inputs.ok_or_else(|| {
        PyErr::type_error(format!(
            "{name}() missing 1 required positional argument: 'inputs'"
        ))
    })?;
    let layer = construct(op, &rest, ctx)?;
    call_layer(&layer, Args::new(vec![inputs]), ctx)
}

/// Registers the classes and functional forms in `tf.keras.layers`.
pub fn register(m: NativeModule) -> NativeModule {
    let mut m = m;
    for &(cls, func, op) in MERGES {
        let class = NativeClass::new(cls, "keras.src.layers", "")
            .base("Merge")
            .base("Layer")
            .base("Operation")
            .constructor(move |a, c| construct(op, a, c))
            .into_value();
        let f = NativeFn::value(func, "", move |a, c| functional(op, a, c));
        m = m.with(cls, class).with(func, f);
    }
    m
}

/// A merge layer's shape error as Keras raises it: its message alone, with no hint.
pub fn merge_err(e: KerasError) -> PyErr {
    PyErr::new(e.py_exception(), e.to_string())
}

/// The merge of `xs` (data) through the op library.
pub fn forward(op: MergeOp, xs: &[Tensor], ctx: &mut dyn Ctx) -> PyResult<Tensor> {
    let shapes: Vec<Vec<Option<usize>>> = xs
        .iter()
        .map(|t| t.shape().iter().map(|d| Some(*d)).collect())
        .collect();
    op.out_shape(&shapes).map_err(merge_err)?;
    // The shape rule refuses an empty list, so there is a first tensor.
    let Some((first, rest)) = xs.split_first() else {
        return Err(PyErr::value_error(
            "A merge layer should be called on a list of inputs.",
        ));
    };
    let pairwise = |b: Binary, ctx: &mut dyn Ctx| -> PyResult<Tensor> {
        let mut acc = first.clone();
        for x in rest {
            acc = run(ctx, |e| ops::binary(e, b, &acc, x))?;
        }
        Ok(acc)
    };
    match op {
        MergeOp::Add => pairwise(Binary::Add, ctx),
        MergeOp::Subtract => pairwise(Binary::Sub, ctx),
        MergeOp::Multiply => pairwise(Binary::Mul, ctx),
        MergeOp::Maximum => pairwise(Binary::Maximum, ctx),
        MergeOp::Minimum => pairwise(Binary::Minimum, ctx),
        MergeOp::Average => {
            let sum = pairwise(Binary::Add, ctx)?;
            let n = Tensor::scalar(xs.len() as f64, sum.dtype());
            run(ctx, |e| ops::div(e, &sum, &n))
        }
        MergeOp::Concatenate { axis } => run(ctx, |e| ops::concat(e, xs, axis)),
    }
}
