//! Checks of user data against the model before anything runs on a device: input and
//! target sizes (naming both shapes), sparse labels in range, weight lists that fit. Errors
//! carry Keras's wording so the user recognises them.

use super::compile::CompileConfig;
use super::config::{ModelConfig, Plan};
use super::error::{KResult, KerasError};
use super::init::HostArray;
use crate::device::LossKind;

pub(crate) fn check_weight(path: &str, shape: &[usize], w: &HostArray) -> KResult<()> {
    let n: usize = shape.iter().product();
    if w.data.len() != n || w.shape.iter().product::<usize>() != n {
        return Err(KerasError::shape(
            format!("weight '{path}' does not fit"),
            shape,
            &w.shape,
        ));
    }
    Ok(())
}

/// Checks data against the model: `x` must hold `batch` inputs, `y` `batch` targets, and
/// sparse labels must be class indices.
pub fn check_data(
    config: &ModelConfig,
    plan: &Plan,
    compile: Option<&CompileConfig>,
    x: &[f32],
    y: Option<&[f32]>,
    batch: usize,
) -> KResult<()> {
    let per: usize = config.input_shape.iter().product();
    if x.len() != per * batch {
        let mut want = vec![batch];
        want.extend(&config.input_shape);
        return Err(KerasError::shape(
            format!(
                "Input 0 of model \"{}\" is incompatible: {} values for {batch} examples",
                config.name,
                x.len()
            ),
            &want,
            &[x.len() / batch.max(1)],
        ));
    }
    let (Some(y), Some(c)) = (y, compile) else {
        return Ok(());
    };
    let out = plan.output_shape();
    let out_per: usize = out.iter().product();
    if let LossKind::SparseCategoricalCrossentropy { .. } = c.loss {
        let classes = out.last().copied().unwrap_or(1);
        let rows = batch * (out_per / classes.max(1));
        if y.len() != rows {
            return Err(KerasError::shape(
                "Targets for sparse_categorical_crossentropy must hold one class index per example",
                &[rows],
                &[y.len()],
            ));
        }
        if let Some(bad) = y
            .iter()
            .find(|v| !(**v >= 0.0 && v.fract() == 0.0 && (**v as usize) < classes))
        {
            return Err(KerasError::LabelOutOfRange {
                label: *bad,
                classes,
            });
        }
    } else if y.len() != out_per * batch {
        let mut want = vec![batch];
        want.extend(out);
        return Err(KerasError::shape(
            format!(
                "Arguments `target` and `output` of {} must have the same shape",
                super::compile::loss_name(&c.loss)
            ),
            &want,
            &[batch, y.len() / batch.max(1)],
        ));
    }
    Ok(())
}
