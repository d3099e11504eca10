//! `model.weights`: Keras 3's variables (`<KerasVariable shape=(5, 10), dtype=float32,
//! path=sequential/dense/kernel>`) whose `.value` is a `ResourceVariable`, or a
//! `MirroredVariable` with one copy per replica when the model was built in a strategy's
//! scope. These are snapshots of the engine's weights, read when asked for.

use std::any::Any;

use super::super::variable::{MirroredVariable, Variable};
use super::layers::kerr;
use super::model::{Engine, ModelObj};
use crate::lang::{Ctx, Object, PyResult, Value};
use crate::tensor::NdArray;

pub struct KerasVariable {
    pub path: String,
    pub shape: Vec<usize>,
    pub value: Value,
}

impl Object for KerasVariable {
    fn type_name(&self) -> String {
        "Variable".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<KerasVariable shape={}, dtype=float32, path={}>",
            crate::tensor::shape_str(&self.shape),
            self.path
        ))
    }
    fn getattr(&self, _this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        match name {
            "value" => Ok(Some(self.value.clone())),
            "path" => Ok(Some(Value::str(&self.path))),
            "name" => Ok(Some(Value::str(self.path.rsplit('/').next().unwrap_or("")))),
            _ => match &self.value {
                Value::Native(o) => o.clone().getattr(&self.value, name, ctx),
                _ => Ok(None),
            },
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The model's variables, in Keras order.
pub fn weight_list(_this: &Value, m: &ModelObj, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let Some(cfg) = m.config.borrow().clone() else {
        return Ok(Value::list(vec![]));
    };
    let plan = cfg.plan().map_err(kerr)?;
    let strategy = m.created_under.borrow().clone();
    let per_replica = m.with_engine(|e| {
        Ok(match e {
            Engine::Mirrored(t) => t.replica_weights().map_err(kerr)?,
            Engine::Single(r) => {
                vec![crate::keras::Trainer::get_weights(r.as_ref()).map_err(kerr)?]
            }
        })
    })?;
    let mut out = vec![];
    for (i, v) in plan.vars.iter().enumerate() {
        let arrays: Vec<NdArray> = per_replica
            .iter()
            .filter_map(|ws| ws.get(i))
            .map(|h| {
                NdArray::from_f32(&h.shape, h.data.clone())
                    .map_err(super::super::convert::tensor_err)
            })
            .collect::<PyResult<_>>()?;
        let value = match (&strategy, arrays.as_slice()) {
            (Some(s), [first, ..]) => {
                let mv = MirroredVariable::new(first, &v.path, arrays.len(), true, s.clone());
                for (p, a) in mv.parts.iter().zip(&arrays) {
                    if let Some(var) = p.downcast::<Variable>() {
                        var.store(a.clone())?;
                    }
                }
                Value::native(mv)
            }
            (_, [first, ..]) => {
                Value::native(Variable::new(first.clone(), &format!("{}:0", v.path), true))
            }
            _ => Value::None,
        };
        out.push(Value::native(KerasVariable {
            path: v.path.clone(),
            shape: v.shape.clone(),
            value,
        }));
    }
    Ok(Value::list(out))
}

/// One weight array as the numpy array `get_weights` returns.
pub fn host_to_numpy(h: &crate::keras::HostArray) -> PyResult<Value> {
    NdArray::from_f32(&h.shape, h.data.clone())
        .map(super::super::convert::numpy_value)
        .map_err(super::super::convert::tensor_err)
}
