//! A functional model with several outputs, as Keras 3.15 reads `compile`, `fit`'s
//! targets and `predict`'s answer for one: each output's name (its layer's name, or its key
//! when the outputs were given as a dict), `loss` as one loss for every output, a list or a
//! dict keyed by output name, `loss_weights` as a list or dict, `metrics` as a list with
//! one entry (a name or a list) per output or a dict, and the targets as a list, tuple or
//! dict of arrays. It turns them into the engine's [`Head`]s and rows; it computes nothing
//! (the op trainer in `op_trainer.rs` runs the heads) and must not touch the graph itself.

use super::layers::graph::Graph;
use super::layers::symbolic::{KerasTensor, Source};
use super::metrics::metric_specs;
use crate::keras::{Head, Metric, MetricSpec};
use crate::lang::{Ctx, PyErr, PyResult, Value};

/// The names Keras gives a graph's outputs: the keys of a dict of outputs, else the name
/// of the layer that made each output.
pub fn output_names(g: &Graph, ctx: &mut dyn Ctx) -> PyResult<Vec<String>> {
    if let Value::Dict(d) = &g.output_struct {
        let keys: Vec<Value> = d.borrow().items().map(|(k, _)| k.clone()).collect();
        return keys.iter().map(|k| ctx.str(k)).collect();
    }
    let mut names = Vec::with_capacity(g.outputs.len());
    for o in &g.outputs {
        let layer = match o.downcast::<KerasTensor>().map(|k| &k.source) {
            Some(Source::Call(n)) => n.layer.clone(),
            Some(Source::Input(l)) => l.clone(),
            None => return Err(PyErr::type_error("a model output is not a KerasTensor")),
        };
        let name = ctx.getattr(&layer, "name")?;
        names.push(ctx.str(&name)?);
    }
    Ok(names)
}

/// Each output's shape without the batch axis.
pub fn output_shapes(g: &Graph) -> Vec<Vec<usize>> {
    g.outputs
        .iter()
        .filter_map(|o| o.downcast::<KerasTensor>().map(|k| k.features()))
        .collect()
}

/// The Python list of `names` as Keras prints it in its errors (`['reg', 'cls']`).
fn names_repr(names: &[String], ctx: &mut dyn Ctx) -> PyResult<String> {
    ctx.repr(&Value::list(names.iter().map(|n| Value::str(n)).collect()))
}

/// One value per output from a `compile` argument given per output: a list or tuple of
/// exactly one entry per output, or a dict keyed by output name; `None` for an output a
/// dict leaves out. A value that is neither is returned for every output.
enum PerOutput {
    Each(Vec<Option<Value>>),
    Same(Value),
}

/// `compile(loss=...)` for outputs `names`, with Keras's errors for a dict whose keys are
/// not the outputs' and for more losses than outputs.
fn loss_per_output(loss: &Value, names: &[String], ctx: &mut dyn Ctx) -> PyResult<PerOutput> {
    match loss {
        Value::Dict(d) => {
            let keys: Vec<Value> = d.borrow().items().map(|(k, _)| k.clone()).collect();
            let key_names = keys
                .iter()
                .map(|k| ctx.str(k))
                .collect::<PyResult<Vec<_>>>()?;
            let mut sorted_keys = key_names.clone();
            sorted_keys.sort();
            let mut sorted_names = names.to_vec();
            sorted_names.sort();
            if sorted_keys != sorted_names {
                return Err(PyErr::value_error(format!(
                    "Expected keys {} in loss dict, but found loss.keys()={}",
                    names_repr(names, ctx)?,
                    names_repr(&key_names, ctx)?
                )));
            }
            let d = d.borrow();
            Ok(PerOutput::Each(
                names.iter().map(|n| d.get_str(n)).collect(),
            ))
        }
        Value::List(_) | Value::Tuple(_) => {
            let items = loss.as_seq().unwrap_or_default();
            if items.len() > names.len() {
                // The message is the key error's argument; `str()` shows its repr, as
                // CPython's KeyError does.
                return Err(PyErr::key_error(format!(
                    "The path: ({},) in the `loss` argument, can't be found in either the \
                     model's output (`y_pred`) or in the labels (`y_true`).",
                    names.len()
                )));
            }
            if items.len() < names.len() {
                return Err(PyErr::value_error(format!(
                    "The model has {} outputs ({}) and `loss` lists {}: give one loss per \
                     output (leaving an output without a loss is not supported here).",
                    names.len(),
                    names_repr(names, ctx)?,
                    items.len()
                )));
            }
            Ok(PerOutput::Each(items.into_iter().map(Some).collect()))
        }
        other => Ok(PerOutput::Same(other.clone())),
    }
}

/// `compile(loss_weights=...)`: one weight per output (1 where none is given).
fn weights_per_output(w: Option<&Value>, names: &[String]) -> PyResult<Vec<f32>> {
    let Some(w) = w else {
        return Ok(vec![1.0; names.len()]);
    };
    match w {
        Value::Dict(d) => {
            let d = d.borrow();
            names
                .iter()
                .map(|n| {
                    d.get_str(n)
                        .map_or(Ok(1.0), |v| v.as_float().map(|f| f as f32))
                })
                .collect()
        }
        Value::List(_) | Value::Tuple(_) => {
            let items = w.as_seq().unwrap_or_default();
            if items.len() != names.len() {
                return Err(PyErr::value_error(format!(
                    "`loss_weights` must match the number of losses, got {} losses and {} \
                     weights.",
                    names.len(),
                    items.len()
                )));
            }
            items
                .iter()
                .map(|v| v.as_float().map(|f| f as f32))
                .collect()
        }
        other => Err(PyErr::value_error(format!(
            "Expected `loss_weights` argument to be a float (single output case) or a list, \
             tuple, or dict (multiple output case). Received instead: loss_weights={} of \
             type {}",
            other
                .as_float()
                .map_or_else(|_| "?".into(), |f| f.to_string()),
            other.type_name()
        ))),
    }
}

/// `compile(metrics=...)` for outputs `names`: a dict keyed by output names, or a list
/// with one entry (a metric or a list of them) per output, with Keras's error otherwise.
fn metrics_per_output(
    metrics: Option<&Value>,
    names: &[String],
    ctx: &mut dyn Ctx,
) -> PyResult<Vec<Option<Value>>> {
    let Some(m) = metrics else {
        return Ok(vec![None; names.len()]);
    };
    let invalid = |first: String, ctx: &mut dyn Ctx| -> PyResult<PyErr> {
        let xs = vec!["X".to_string(); names.len()];
        Ok(PyErr::value_error(format!(
            "{first}\nInvalid `metrics`. `metrics` should contain metrics objects and either \
             be a dict or a list matching the output names of the functional model {} or \
             match the output structure of the model: {}.\nReceived: metrics={}",
            names_repr(names, ctx)?,
            names_repr(&xs, ctx)?,
            ctx.repr(m)?
        )))
    };
    match m {
        Value::Dict(d) => {
            let keys: Vec<Value> = d.borrow().items().map(|(k, _)| k.clone()).collect();
            for k in &keys {
                let k = ctx.str(k)?;
                if !names.contains(&k) {
                    let first = format!("Expected an instance of tuple, got {}.", ctx.repr(m)?);
                    return Err(invalid(first, ctx)?);
                }
            }
            let d = d.borrow();
            Ok(names.iter().map(|n| d.get_str(n)).collect())
        }
        Value::List(_) | Value::Tuple(_) => {
            let items = m.as_seq().unwrap_or_default();
            if items.len() != names.len() {
                let tuple = ctx.repr(&Value::tuple(items.clone()))?;
                let first = format!(
                    "tuple arity mismatch; expected: {}, got: {}; tuple: {tuple}.",
                    names.len(),
                    items.len()
                );
                return Err(invalid(first, ctx)?);
            }
            Ok(items.into_iter().map(Some).collect())
        }
        other => Err(PyErr::type_error(format!(
            "Expected `metrics` argument to be a list, tuple, or dict. Received instead: \
             metrics={} of type {}",
            ctx.repr(other)?,
            other.type_name()
        ))),
    }
}

/// The engine's loss for one output's `loss` value (a name or a loss object).
fn engine_loss(l: Option<&Value>, ctx: &mut dyn Ctx) -> PyResult<crate::device::LossKind> {
    let (name, logits) = super::losses::loss_arg(l, ctx)?;
    let kind = crate::keras::compile::parse_loss(&name).map_err(super::layers::kerr)?;
    Ok(if logits { kind.with_logits() } else { kind })
}

/// The engine's heads for `compile(loss=..., loss_weights=..., metrics=...)` on outputs
/// `names` of `shapes` (without the batch axis).
pub fn compile_heads(
    names: &[String],
    shapes: &[Vec<usize>],
    loss: Option<&Value>,
    loss_weights: Option<&Value>,
    metrics: Option<&Value>,
    ctx: &mut dyn Ctx,
) -> PyResult<Vec<Head>> {
    let losses = match loss {
        Some(l) => loss_per_output(l, names, ctx)?,
        None => PerOutput::Same(Value::None),
    };
    let weights = weights_per_output(loss_weights.filter(|v| !v.is_none()), names)?;
    let metrics = metrics_per_output(metrics.filter(|v| !v.is_none()), names, ctx)?;
    let mut heads = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let l = match &losses {
            PerOutput::Same(Value::None) => None,
            PerOutput::Same(v) => Some(v.clone()),
            PerOutput::Each(each) => each.get(i).cloned().flatten(),
        };
        let kind = engine_loss(l.as_ref(), ctx)?;
        let specs = match metrics.get(i).cloned().flatten() {
            None => vec![],
            Some(v @ (Value::List(_) | Value::Tuple(_))) => metric_specs(&v, ctx)?,
            Some(one) => metric_specs(&Value::list(vec![one]), ctx)?,
        };
        let mut resolved = Vec::with_capacity(specs.len());
        for s in specs {
            let (n, m) = match s {
                MetricSpec::Name(n) => Metric::parse(&n, &kind).map_err(super::layers::kerr)?,
                MetricSpec::Resolved(n, m) => (n, m),
            };
            resolved.push((format!("{name}_{n}"), m));
        }
        let size = shapes.get(i).map_or(1, |s| s.iter().product());
        let sparse = matches!(
            kind,
            crate::device::LossKind::SparseCategoricalCrossentropy { .. }
        );
        heads.push(Head {
            name: name.clone(),
            loss: kind,
            weight: weights.get(i).copied().unwrap_or(1.0),
            target: if sparse { 1 } else { size },
            metrics: resolved,
        });
    }
    Ok(heads)
}

/// Targets for outputs `names`: a list or tuple with one array per output, or a dict keyed
/// by output name, one value per output in output order.
pub fn bind_targets(y: &Value, names: &[String]) -> PyResult<Vec<Value>> {
    let items = match y {
        Value::Dict(d) => {
            let d = d.borrow();
            let mut out = Vec::with_capacity(names.len());
            for n in names {
                out.push(d.get_str(n).ok_or_else(|| PyErr::key_error(n.clone()))?);
            }
            out
        }
        Value::List(_) | Value::Tuple(_) => y.as_seq().unwrap_or_default(),
        _ => vec![y.clone()],
    };
    if items.len() != names.len() {
        return Err(PyErr::value_error(format!(
            "The model has {} outputs, but received {} targets: pass one array per output \
             (a list in output order, or a dict keyed by output name).",
            names.len(),
            items.len()
        )));
    }
    Ok(items)
}

/// `predict`'s answer for several outputs from `cols`-wide rows holding every output side
/// by side: a list of arrays, or a dict when the outputs were given as one.
pub fn split_outputs(
    g: &Graph,
    names: &[String],
    rows: usize,
    shapes: &[Vec<usize>],
    data: &[f32],
) -> PyResult<Value> {
    let sizes: Vec<usize> = shapes.iter().map(|s| s.iter().product()).collect();
    let per: usize = sizes.iter().sum();
    let mut arrays = Vec::with_capacity(shapes.len());
    let mut at = 0;
    for (shape, size) in shapes.iter().zip(&sizes) {
        let mut out = Vec::with_capacity(rows * size);
        for r in 0..rows {
            let start = r * per + at;
            out.extend_from_slice(data.get(start..start + size).unwrap_or(&[]));
        }
        at += size;
        let mut dims = vec![rows];
        dims.extend(shape);
        let a = crate::tensor::NdArray::from_f32(&dims, out)
            .map_err(super::super::convert::tensor_err)?;
        arrays.push(super::super::convert::numpy_value(a));
    }
    Ok(match &g.output_struct {
        Value::Dict(_) => Value::dict_from(
            names
                .iter()
                .map(String::as_str)
                .zip(arrays)
                .collect::<Vec<_>>(),
        ),
        _ => Value::list(arrays),
    })
}
