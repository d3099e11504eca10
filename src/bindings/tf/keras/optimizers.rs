//! `tf.keras.optimizers` and `tf.keras.losses` as values `compile` accepts next to their
//! string names: optimizer objects remember their class and learning rate; loss objects
//! their Keras name and `from_logits`. `model.optimizer` is a view whose `learning_rate`
//! reads and writes the engine's rate (what LearningRateScheduler changes).

use std::any::Any;

use super::super::given;
use super::model::ModelObj;
use crate::device::LossKind;
use crate::lang::{Args, Ctx, NativeClass, NativeModule, Object, PyErr, PyResult, Value};

/// An optimizer made by `tf.keras.optimizers.Adam(learning_rate=...)` and friends.
pub struct OptimizerObj {
    pub name: &'static str,
    pub learning_rate: Option<f32>,
}

impl Object for OptimizerObj {
    fn type_name(&self) -> String {
        self.name.into()
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "learning_rate" | "lr" => self.learning_rate.map(|x| Value::Float(f64::from(x))),
            "name" => Some(Value::str(&self.name.to_lowercase())),
            _ => None,
        })
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.name.into(), "Optimizer".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A loss made by `tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)` etc.
pub struct LossObj {
    pub class: &'static str,
    pub key: &'static str,
    pub from_logits: bool,
}

impl Object for LossObj {
    fn type_name(&self) -> String {
        self.class.into()
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(match name {
            "from_logits" => Some(Value::Bool(self.from_logits)),
            "name" => Some(Value::str(self.key)),
            _ => None,
        })
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.class.into(), "Loss".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `compile(optimizer=...)`: a name, or an optimizer object with its learning rate.
pub fn optimizer_arg(v: Option<&Value>, _ctx: &mut dyn Ctx) -> PyResult<(String, Option<f32>)> {
    match v {
        None => Ok(("rmsprop".into(), None)),
        Some(Value::Str(s)) => Ok((s.to_string(), None)),
        Some(o) => match o.downcast::<OptimizerObj>() {
            Some(opt) => Ok((opt.name.to_lowercase(), opt.learning_rate)),
            None => Err(PyErr::value_error(format!(
                "Could not interpret optimizer identifier: {}",
                o.type_name()
            ))),
        },
    }
}

/// `compile(loss=...)`: `(name, from_logits)`.
pub fn loss_arg(v: Option<&Value>, _ctx: &mut dyn Ctx) -> PyResult<(String, bool)> {
    match v {
        None => Err(PyErr::value_error(
            "No loss to compute. Provide a `loss` argument in `compile()`.",
        )),
        Some(Value::Str(s)) => Ok((s.to_string(), false)),
        Some(o) => match o.downcast::<LossObj>() {
            Some(l) => Ok((l.key.to_string(), l.from_logits)),
            None => Err(PyErr::value_error(format!(
                "Could not interpret loss identifier: {}",
                o.type_name()
            ))),
        },
    }
}

pub fn metric_name(v: &Value, ctx: &mut dyn Ctx) -> PyResult<String> {
    match v {
        Value::Str(s) => Ok(s.to_string()),
        other => Ok(ctx.getattr(other, "name")?.as_str()?.to_string()),
    }
}

pub fn with_logits(k: LossKind) -> LossKind {
    match k {
        LossKind::BinaryCrossentropy { .. } => LossKind::BinaryCrossentropy { from_logits: true },
        LossKind::CategoricalCrossentropy { .. } => {
            LossKind::CategoricalCrossentropy { from_logits: true }
        }
        LossKind::SparseCategoricalCrossentropy { .. } => {
            LossKind::SparseCategoricalCrossentropy { from_logits: true }
        }
        other => other,
    }
}

/// `model.optimizer`: reads and sets the compiled model's learning rate.
pub struct BoundOptimizer {
    pub model: Value,
}

impl BoundOptimizer {
    fn model(&self) -> PyResult<&ModelObj> {
        self.model
            .downcast::<ModelObj>()
            .ok_or_else(|| PyErr::runtime_error("optimizer without a model"))
    }
}

impl Object for BoundOptimizer {
    fn type_name(&self) -> String {
        self.model()
            .ok()
            .and_then(|m| {
                m.compiled
                    .borrow()
                    .as_ref()
                    .map(|c| c.optimizer.class_name().to_string())
            })
            .unwrap_or_else(|| "Optimizer".into())
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let m = self.model()?;
        Ok(match name {
            "learning_rate" | "lr" => {
                let lr = match m
                    .engine
                    .try_borrow()
                    .ok()
                    .and_then(|e| e.as_ref().map(|e| e.trainer_ref().learning_rate()))
                {
                    Some(lr) => lr,
                    None => m
                        .compiled
                        .borrow()
                        .as_ref()
                        .map_or(0.0, |c| c.optimizer.learning_rate),
                };
                Some(Value::Float(f64::from(lr)))
            }
            "name" => Some(Value::from(self.type_name().to_lowercase())),
            _ => None,
        })
    }
    fn setattr(&self, name: &str, v: Value, _ctx: &mut dyn Ctx) -> PyResult<()> {
        if name != "learning_rate" && name != "lr" {
            return Err(PyErr::attribute_error(format!(
                "can't set attribute '{name}'"
            )));
        }
        let lr = v.as_float()? as f32;
        let m = self.model()?;
        if let Some(c) = m.compiled.borrow_mut().as_mut() {
            c.optimizer.learning_rate = lr;
        }
        if let Ok(mut e) = m.engine.try_borrow_mut() {
            if let Some(e) = e.as_mut() {
                e.trainer().set_learning_rate(lr);
            }
        }
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// While `fit` holds the engine, callbacks change the rate through this shared cell.
fn opt_class(name: &'static str) -> Value {
    NativeClass::new(name, "keras.src.optimizers", "")
        .base("Optimizer")
        .constructor(move |args: &Args, _| {
            let s = args.bind(
                name,
                &[
                    "learning_rate",
                    "momentum",
                    "nesterov",
                    "weight_decay",
                    "rho",
                    "epsilon",
                    "beta_1",
                    "beta_2",
                    "name",
                ],
                0,
            )?;
            let lr = given(&s[0])
                .map(|v| v.as_float().map(|x| x as f32))
                .transpose()?;
            Ok(Value::native(OptimizerObj {
                name,
                learning_rate: lr,
            }))
        })
        .into_value()
}

fn loss_class(class: &'static str, key: &'static str) -> Value {
    NativeClass::new(class, "keras.src.losses.losses", "")
        .base("Loss")
        .constructor(move |args: &Args, _| {
            let s = args.bind(class, &["from_logits", "reduction", "name"], 0)?;
            let from_logits = given(&s[0]).map_or(Ok(false), |v| v.as_bool_strict())?;
            Ok(Value::native(LossObj {
                class,
                key,
                from_logits,
            }))
        })
        .into_value()
}

/// Registers `optimizers` and `losses` in `tf.keras`.
pub fn register(keras: &NativeModule) {
    let opts = NativeModule::new("keras.optimizers", "Keras optimizers.");
    for n in ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"] {
        opts.set(n, opt_class(n));
    }
    let losses = NativeModule::new("keras.losses", "Keras losses.");
    for (c, k) in [
        (
            "SparseCategoricalCrossentropy",
            "sparse_categorical_crossentropy",
        ),
        ("CategoricalCrossentropy", "categorical_crossentropy"),
        ("BinaryCrossentropy", "binary_crossentropy"),
        ("MeanSquaredError", "mean_squared_error"),
        ("MeanAbsoluteError", "mean_absolute_error"),
        ("Huber", "huber"),
    ] {
        losses.set(c, loss_class(c, k));
    }
    super::loss_functions::register(&losses);
    keras.set("optimizers", opts.into_value());
    keras.set("losses", losses.into_value());
}
