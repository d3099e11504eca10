//! Reads the weights files earlier versions of this kernel wrote (inside `.keras` archives
//! as `model.weights.safetensors`, and under `.weights.h5` names): safetensors, one
//! f32 tensor per variable named by its Keras path (`sequential/dense/kernel`), plus the
//! optimizer's slots (`optimizer/<path>/<slot>`) and step counter (`optimizer/iterations`,
//! i64). The header's metadata lists the variable names in Keras order, because Keras
//! matches weights to a model by position, not by name (layer names change between
//! sessions: `dense` becomes `dense_3`).

use crate::keras::compile::CompileConfig;
use crate::keras::config::ModelConfig;
use crate::keras::error::{KResult, KerasError};
use crate::keras::init::HostArray;
use crate::keras::replica::OptimizerState;
use crate::keras::saving::read_optimizer_state;
use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use std::path::Path;

const ORDER_KEY: &str = "variables";

fn floats(path: &Path, name: &str, view: &TensorView) -> KResult<Vec<f32>> {
    if view.dtype() != Dtype::F32 {
        return Err(corrupt(
            path,
            format!("{name} is {:?}, not float32", view.dtype()),
        ));
    }
    Ok(view
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

fn corrupt(path: &Path, detail: String) -> KerasError {
    KerasError::Corrupt {
        path: path.display().to_string(),
        detail,
    }
}

pub fn decode(
    path: &Path,
    config: &ModelConfig,
    bytes: &[u8],
    compile: Option<&CompileConfig>,
) -> KResult<(Vec<HostArray>, Option<OptimizerState>)> {
    let plan = config.plan()?;
    let st = SafeTensors::deserialize(bytes)
        .map_err(|e| corrupt(path, format!("the weights are damaged or truncated ({e})")))?;
    let (_, meta) = SafeTensors::read_metadata(bytes)
        .map_err(|e| corrupt(path, format!("the weights header is unreadable ({e})")))?;
    let order: Vec<String> = meta
        .metadata()
        .as_ref()
        .and_then(|m| m.get(ORDER_KEY))
        .and_then(|s| serde_json::from_str(s).ok())
        .ok_or_else(|| corrupt(path, "the weights header lists no variables".into()))?;
    if order.len() != plan.vars.len() {
        return Err(KerasError::Value(format!(
            "A total of {} objects could not be loaded: the file holds {} variables and model '{}' has {}.",
            order.len().abs_diff(plan.vars.len()),
            order.len(),
            config.name,
            plan.vars.len()
        )));
    }
    let mut weights = Vec::with_capacity(order.len());
    for (name, v) in order.iter().zip(&plan.vars) {
        let view = st
            .tensor(name)
            .map_err(|_| corrupt(path, format!("missing tensor {name}")))?;
        if view.shape() != v.shape.as_slice() {
            return Err(KerasError::shape(
                format!(
                    "The shape of the saved variable '{name}' does not match the model's '{}'",
                    v.path
                ),
                &v.shape,
                view.shape(),
            ));
        }
        weights.push(HostArray::new(v.shape.clone(), floats(path, name, &view)?));
    }
    let optimizer = match (compile, st.tensor("optimizer/iterations")) {
        (Some(c), Ok(it)) => {
            let b = it.data();
            let iterations = match b {
                [a, b2, c2, d, e, f, g, h] => {
                    i64::from_le_bytes([*a, *b2, *c2, *d, *e, *f, *g, *h])
                }
                _ => return Err(corrupt(path, "optimizer/iterations is not an i64".into())),
            };
            let n = c.optimizer.step(c.optimizer.learning_rate, 1).slots();
            let state = read_optimizer_state(&plan.vars, n, iterations, |i, v, k| {
                let name = order.get(i).map(String::as_str).unwrap_or_default();
                let key = format!("optimizer/{name}/{k}");
                let view = st
                    .tensor(&key)
                    .map_err(|_| corrupt(path, format!("missing tensor {key}")))?;
                let data = floats(path, &key, &view)?;
                if data.len() != v.shape.iter().product::<usize>() {
                    return Err(corrupt(path, format!("{key} has the wrong size")));
                }
                Ok(data)
            })?;
            Some(state)
        }
        _ => None,
    };
    Ok((weights, optimizer))
}
