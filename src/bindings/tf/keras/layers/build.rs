//! Building a built-in layer for an input shape: the engine's plan gives its variables
//! (names, shapes, initializers, fans) and its output shape; the variables are made here,
//! named under the current name scope as Keras 3 names them (`dense/kernel` for a layer
//! built on its own, `sequential/dense/kernel` inside a model), filled with the layer's
//! initializers from the session's seed counter (or with values a model hands over), and
//! mirrored when a strategy's scope is active.

use super::super::super::shape::TensorShape;
use super::super::super::TfState;
use super::super::variable::KerasVariable;
use super::kerr;
use super::layer::{built_spec, Dims, LayerObj};
use crate::keras::{
    initial_weights, HostArray, LayerKind, LayerSpec, ModelConfig, Plan, Stateless,
};
use crate::lang::{Ctx, PyErr, PyResult, Value};
use crate::tensor::NdArray;

/// A `build` argument (a tuple, list or `TensorShape` with the batch axis) as dims.
pub fn shape_from(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Dims> {
    TensorShape::from_value(v, ctx)?
        .dims
        .ok_or_else(|| PyErr::value_error("build() needs an input shape of known rank"))
}

/// The plan of `kind` alone on inputs of `input`. A layer's variables depend only on its
/// channels, so an unknown size is planned as the least the layer's window needs (one
/// step, or a convolution's or pooling's whole window, which a valid padding would
/// otherwise refuse); the output keeps it unknown (`out_dims`).
fn single_plan(name: &str, kind: &LayerKind, input: &[Option<usize>]) -> PyResult<Plan> {
    let least = match kind {
        LayerKind::Conv1D(c) => (c.kernel_size.saturating_sub(1))
            .saturating_mul(c.dilation_rate)
            .saturating_add(1),
        LayerKind::Stateless(Stateless::Pool { pool_size, .. }) => pool_size.0.max(pool_size.1),
        LayerKind::Conv2D { kernel_size, .. } => kernel_size.0.max(kernel_size.1),
        LayerKind::MaxPooling2D { pool_size, .. } => pool_size.0.max(pool_size.1),
        _ => 1,
    };
    let features: Vec<usize> = input.iter().skip(1).map(|d| d.unwrap_or(least)).collect();
    let cfg = ModelConfig {
        name: String::new(),
        input_shape: features,
        input_name: String::new(),
        layers: vec![LayerSpec {
            name: name.to_string(),
            kind: kind.clone(),
        }],
        functional: false,
    };
    cfg.plan().map_err(kerr)
}

/// The output shape of `kind` on inputs of `input`, unknown sizes kept unknown where they
/// reach the output.
pub fn out_dims(name: &str, kind: &LayerKind, input: &[Option<usize>]) -> PyResult<Dims> {
    if let LayerKind::Merge(op) = kind {
        return op
            .out_shape(&[input.to_vec()])
            .map_err(super::merge::merge_err);
    }
    let plan = single_plan(name, kind, input)?;
    let planned = plan.out_shapes.first().cloned().unwrap_or_default();
    let batch = input.first().copied().flatten();
    let rest = input.get(1..).unwrap_or(&[]);
    let known = rest.iter().all(Option::is_some);
    let mut out: Dims = vec![batch];
    match kind {
        LayerKind::Dense { units, .. } => {
            out.extend(rest.iter().take(rest.len().saturating_sub(1)).copied());
            out.push(Some(*units));
        }
        LayerKind::Dropout { .. }
        | LayerKind::Activation(_)
        | LayerKind::Softmax
        | LayerKind::Norm(_) => {
            out.extend(rest.iter().copied());
        }
        LayerKind::Conv2D { .. } | LayerKind::MaxPooling2D { .. } => {
            for (i, d) in planned.iter().enumerate() {
                let unknown = i < 2 && rest.get(i).is_some_and(Option::is_none);
                out.push(if unknown { None } else { Some(*d) });
            }
        }
        LayerKind::Flatten | LayerKind::Reshape { .. } => {
            out.extend(planned.iter().map(|d| known.then_some(*d)));
        }
        LayerKind::Merge(_) => out.extend(rest.iter().copied()),
        LayerKind::Stateless(s) => out.extend(stateless_dims(s, rest, &planned)),
        LayerKind::Recurrent(r) => {
            if r.return_state {
                return Err(PyErr::not_implemented(format!(
                    "{}(return_state=True) is supported on tensors here, not in a functional model or summary",
                    r.class_name()
                )));
            }
            // The time axis may be unknown; the output keeps it.
            if r.return_sequences {
                out.push(rest.first().copied().flatten());
            }
            out.push(Some(r.units));
        }
        LayerKind::Bidirectional(b) => {
            if b.merge_mode.is_none() || b.forward.return_state {
                return Err(PyErr::not_implemented(
                    "Bidirectional(merge_mode=None) and return_state=True are supported on tensors here, not in a functional model or summary",
                ));
            }
            if b.return_sequences() {
                out.push(rest.first().copied().flatten());
            }
            out.push(planned.last().copied());
        }
        LayerKind::Embedding { output_dim, .. } => {
            out.extend(rest.iter().copied());
            out.push(Some(*output_dim));
        }
        // Unknown steps stay unknown.
        LayerKind::Conv1D(c) => {
            out.push(
                rest.first()
                    .copied()
                    .flatten()
                    .and(planned.first().copied()),
            );
            out.push(Some(c.filters));
        }
    }
    Ok(out)
}

/// The output dims (without the batch axis) of a layer without variables, sizes that come
/// from unknown input sizes kept unknown.
fn stateless_dims(s: &Stateless, rest: &[Option<usize>], planned: &[usize]) -> Dims {
    let at = |i: usize| rest.get(i).copied().flatten();
    match s {
        Stateless::GlobalPool { keepdims, .. } => {
            let kept = if *keepdims {
                rest.len().saturating_sub(1)
            } else {
                0
            };
            let mut out: Dims = vec![Some(1); kept];
            out.push(rest.last().copied().flatten());
            out
        }
        Stateless::Pool { rank, .. } => planned
            .iter()
            .enumerate()
            .map(|(i, d)| (i >= *rank || at(i).is_some()).then_some(*d))
            .collect(),
        Stateless::RepeatVector { n } => vec![Some(*n), at(0)],
        Stateless::Permute { dims } => dims.iter().map(|d| at(d.saturating_sub(1))).collect(),
        Stateless::UpSampling2D { .. } | Stateless::ZeroPadding2D { .. } => planned
            .iter()
            .enumerate()
            .map(|(i, d)| (i >= 2 || at(i).is_some()).then_some(*d))
            .collect(),
        _ => rest.to_vec(),
    }
}

/// The name scope's prefix for a variable made now (`sequential/` inside a model's build or
/// call, empty at the top).
pub fn scope_prefix(ctx: &mut dyn Ctx) -> String {
    let scope = &ctx.state().get::<TfState>().keras.scope;
    scope.iter().map(|s| format!("{s}/")).collect()
}

/// Builds the built-in layer `l` for inputs of `input` (with the batch axis). `values`
/// holds its initial variables when a model chose them (in the plan's order); otherwise the
/// layer's initializers fill them from the session's seed counter.
pub fn build_builtin(
    l: &LayerObj,
    _this: &Value,
    input: &[Option<usize>],
    values: Option<Vec<HostArray>>,
    ctx: &mut dyn Ctx,
) -> PyResult<()> {
    if l.core.built.get() {
        return Ok(());
    }
    let Some(kind) = l.kind().filter(|k| !matches!(k, LayerKind::Merge(_))) else {
        // Input and merge layers have no variables.
        l.core.built.set(true);
        *l.core.build_shape.borrow_mut() = Some(input.to_vec());
        return Ok(());
    };
    let name = l.core.name();
    let plan = single_plan(&name, kind, input)?;
    let values = match values {
        Some(v) => v,
        None => initial_weights(
            &plan,
            crate::bindings::tf::keras::model::next_weight_seed(ctx),
        ),
    };
    let prefix = scope_prefix(ctx);
    let mut vars = Vec::with_capacity(plan.vars.len());
    for (spec, init) in plan.vars.iter().zip(values) {
        let a = NdArray::from_f32(&spec.shape, init.data)
            .map_err(super::super::super::convert::tensor_err)?;
        // The plan's path below the layer (`kernel`, or a cell's `lstm_cell/kernel`).
        let own = spec
            .path
            .strip_prefix(&format!("/{name}/"))
            .unwrap_or(&spec.name);
        let path = format!("{prefix}{name}/{own}");
        vars.push(KerasVariable::make(
            ctx,
            &path,
            &spec.name,
            a,
            spec.trainable,
        ));
    }
    *l.core.weights.borrow_mut() = vars;
    *l.core.input_spec.borrow_mut() = built_spec(kind, input);
    *l.core.build_shape.borrow_mut() = Some(input.to_vec());
    l.core.built.set(true);
    Ok(())
}
