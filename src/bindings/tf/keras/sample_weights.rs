//! `sample_weight=` and `class_weight=` of `fit`, `evaluate` and the `*_on_batch` calls, and
//! the weights of `(x, y, sample_weight)` datasets and validation tuples: each read into one
//! weight per example with Keras's checks and errors, then appended to the target rows
//! (`keras::sample_weight`) for a trainer told to read them there. The arithmetic of a
//! weighted loss is the engine's.

use super::super::convert::to_array;
use super::layers::kerr;
use super::model::ModelObj;
use crate::keras::{sample_weight, KResult, Trainer};
use crate::lang::{Ctx, PyErr, PyResult, Value};
use crate::tensor::DType;

/// The weights of `n` examples given as `sample_weight` (an array of shape `(n,)` or
/// `(n, 1)`) or as `class_weight` (a dict from class index to weight, read against the
/// targets `y`); `None` when neither is given.
pub fn example_weights(
    m: &ModelObj,
    sample_weight: Option<&Value>,
    class_weight: Option<&Value>,
    y: &[f32],
    n: usize,
    ctx: &mut dyn Ctx,
) -> PyResult<Option<Vec<f32>>> {
    let sample_weight = sample_weight.filter(|v| !v.is_none());
    let class_weight = class_weight.filter(|v| !v.is_none());
    match (sample_weight, class_weight) {
        (Some(_), Some(_)) => Err(PyErr::value_error(
            "You cannot `class_weight` and `sample_weight` at the same time.",
        )),
        (Some(w), None) => per_example(m, w, n, ctx).map(Some),
        (None, Some(c)) => {
            if m.running_graph().is_some_and(|g| g.outputs.len() > 1) {
                return Err(PyErr::value_error(
                    "`class_weight` is only supported for Models with a single output.",
                ));
            }
            let Value::Dict(d) = c else {
                return Err(PyErr::attribute_error(format!(
                    "'{}' object has no attribute 'get'",
                    c.type_name()
                )));
            };
            let mut classes = Vec::new();
            for (k, v) in d.borrow().items() {
                classes.push((k.as_int()?, v.as_float()? as f32));
            }
            Ok(Some(sample_weight::from_class_weight(y, n, &classes)))
        }
        (None, None) => Ok(None),
    }
}

/// A `sample_weight` array as one weight per example of `n`.
fn per_example(m: &ModelObj, w: &Value, n: usize, ctx: &mut dyn Ctx) -> PyResult<Vec<f32>> {
    let (shape, data) = to_array(w, Some(DType::F32), false, ctx)?.to_f32_vec();
    let count = shape.first().copied().unwrap_or(1);
    if count != n {
        return Err(PyErr::value_error(format!(
            "Data cardinality is ambiguous. Make sure all arrays contain the same number of \
             samples.'x' sizes: {n}\n'y' sizes: {n}\n'sample_weight' sizes: {count}\n"
        )));
    }
    let samplewise = shape.len() == 1 || (shape.len() == 2 && shape[1] == 1);
    if !samplewise {
        let several = m.running_graph().is_some_and(|g| g.outputs.len() > 1);
        let msg = match several {
            true => "For a model with multiple outputs, when providing a single \
                     `sample_weight` array, it should only have one scalar score per sample \
                     (i.e. shape `(num_samples,)`). If you want to use non-scalar sample \
                     weights, pass a `sample_weight` argument with one array per model output."
                .to_string(),
            false => format!(
                "`sample_weight` must hold one weight per example (shape ({n},)); received \
                 shape {}",
                crate::tensor::shape_str(&shape)
            ),
        };
        return Err(PyErr::value_error(msg));
    }
    Ok(data)
}

/// Target rows (`n` of them) with each example's weight appended, ones where `weights` is
/// `None`.
pub fn with_weights(y: &[f32], n: usize, weights: Option<&[f32]>) -> Vec<f32> {
    let ones;
    let w = match weights {
        Some(w) => w,
        None => {
            ones = vec![1.0; n];
            &ones
        }
    };
    sample_weight::join(y, w)
}

/// Runs `f` on the trainer told that its target rows end in their weights when `weighted`,
/// and tells it so no longer afterwards: the engine's trainer outlives the call.
pub fn run_weighted<R>(
    t: &mut dyn Trainer,
    weighted: bool,
    f: impl FnOnce(&mut dyn Trainer) -> KResult<R>,
) -> PyResult<R> {
    if !weighted {
        return f(t).map_err(kerr);
    }
    t.set_sample_weighted(true).map_err(kerr)?;
    let r = f(t);
    let reset = t.set_sample_weighted(false);
    let r = r.map_err(kerr)?;
    reset.map_err(kerr)?;
    Ok(r)
}
