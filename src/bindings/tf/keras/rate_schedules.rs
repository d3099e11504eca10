//! `tf.keras.optimizers.schedules`: `ExponentialDecay`, `PiecewiseConstantDecay` and
//! `CosineDecay` as objects an optimizer takes for its `learning_rate`, callable on a step
//! (`schedule(step)` is a float32 tensor), with `get_config` and Keras's repr. The rate is
//! computed by the engine (`keras::optimizer::Schedule`) with ops, so a graph recorder sees
//! it follow the step counter.

use std::any::Any;

use super::super::convert::tensor_of;
use super::super::eager::apply;
use super::super::ops::arg;
use super::super::{address_of, bound, given, TfError};
use crate::keras::optimizer::Schedule;
use crate::lang::{Args, Ctx, NativeClass, NativeModule, Object, PyResult, Value};

/// A learning-rate schedule.
pub struct ScheduleObj {
    pub class: &'static str,
    pub schedule: Schedule,
    /// The constructor's arguments as given, in Keras's config order.
    pub config: Vec<(&'static str, Value)>,
}

impl ScheduleObj {
    /// A copy for an optimizer to keep.
    pub fn clone_obj(&self) -> ScheduleObj {
        ScheduleObj {
            class: self.class,
            schedule: self.schedule.clone(),
            config: self.config.clone(),
        }
    }
}

impl Object for ScheduleObj {
    fn type_name(&self) -> String {
        self.class.into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<keras.src.optimizers.schedules.learning_rate_schedule.{} object at {}>",
            self.class,
            address_of(self)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if let Some((_, v)) = self.config.iter().find(|(k, _)| *k == name) {
            return Ok(Some(v.clone()));
        }
        Ok(match name {
            "get_config" => Some(bound::<ScheduleObj>(this, name, |s, _, _, _| {
                Ok(Value::dict_from(s.config.clone()))
            })),
            _ => None,
        })
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind("__call__", &["step"], 1)?;
        let step = tensor_of(arg(&s, 0), ctx)?;
        apply(ctx, |e| self.schedule.rate(e, &step))
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.class.into(), "LearningRateSchedule".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn positive_steps(v: f64) -> PyResult<()> {
    if v <= 0.0 {
        let shown = if v.fract() == 0.0 {
            format!("{}", v as i64)
        } else {
            crate::lang::float_repr(v)
        };
        return Err(TfError::Value(format!(
            "Argument `decay_steps` must be > 0. Received: decay_steps={shown}"
        ))
        .into());
    }
    Ok(())
}

fn slot_or(s: &[Option<Value>], i: usize, default: Value) -> Value {
    s.get(i).and_then(|v| v.clone()).unwrap_or(default)
}

fn exponential(args: &Args) -> PyResult<ScheduleObj> {
    let names = [
        "initial_learning_rate",
        "decay_steps",
        "decay_rate",
        "staircase",
        "name",
    ];
    let s = args.bind("ExponentialDecay", &names, 3)?;
    let decay_steps = arg(&s, 1).as_float()?;
    positive_steps(decay_steps)?;
    let config = vec![
        ("initial_learning_rate", arg(&s, 0).clone()),
        ("decay_steps", arg(&s, 1).clone()),
        ("decay_rate", arg(&s, 2).clone()),
        ("staircase", slot_or(&s, 3, Value::Bool(false))),
        ("name", slot_or(&s, 4, Value::str("ExponentialDecay"))),
    ];
    Ok(ScheduleObj {
        class: "ExponentialDecay",
        schedule: Schedule::ExponentialDecay {
            initial: arg(&s, 0).as_float()?,
            decay_steps,
            decay_rate: arg(&s, 2).as_float()?,
            staircase: given(&s[3]).map_or(Ok(false), |v| v.as_bool_strict())?,
        },
        config,
    })
}

fn piecewise(args: &Args, ctx: &mut dyn Ctx) -> PyResult<ScheduleObj> {
    let s = args.bind(
        "PiecewiseConstantDecay",
        &["boundaries", "values", "name"],
        2,
    )?;
    let boundaries = ctx.iterate(arg(&s, 0))?;
    let values = ctx.iterate(arg(&s, 1))?;
    if boundaries.len() + 1 != values.len() {
        let (b, v) = (ctx.repr(arg(&s, 0))?, ctx.repr(arg(&s, 1))?);
        return Err(TfError::Value(format!(
            "The length of boundaries should be 1 less than the length of values. Received: boundaries={b} of length {}, and values={v} of length {}.",
            boundaries.len(),
            values.len()
        ))
        .into());
    }
    // TF casts the boundaries to the step's dtype (an integer step truncates them).
    let bounds = boundaries
        .iter()
        .map(|b| b.as_float().map(f64::trunc))
        .collect::<PyResult<Vec<_>>>()?;
    let vals = values
        .iter()
        .map(|v| v.as_float())
        .collect::<PyResult<Vec<_>>>()?;
    Ok(ScheduleObj {
        class: "PiecewiseConstantDecay",
        schedule: Schedule::PiecewiseConstantDecay {
            boundaries: bounds,
            values: vals,
        },
        config: vec![
            ("boundaries", arg(&s, 0).clone()),
            ("values", arg(&s, 1).clone()),
            ("name", slot_or(&s, 2, Value::str("PiecewiseConstant"))),
        ],
    })
}

fn cosine(args: &Args) -> PyResult<ScheduleObj> {
    let s = args.bind(
        "CosineDecay",
        &[
            "initial_learning_rate",
            "decay_steps",
            "alpha",
            "name",
            "warmup_target",
            "warmup_steps",
        ],
        2,
    )?;
    let decay_steps = arg(&s, 1).as_float()?;
    positive_steps(decay_steps)?;
    let warmup_target = given(&s[4]).map(|v| v.as_float()).transpose()?;
    let config = vec![
        ("initial_learning_rate", arg(&s, 0).clone()),
        ("decay_steps", arg(&s, 1).clone()),
        ("alpha", slot_or(&s, 2, Value::Float(0.0))),
        ("name", slot_or(&s, 3, Value::str("CosineDecay"))),
        ("warmup_target", slot_or(&s, 4, Value::None)),
        ("warmup_steps", slot_or(&s, 5, Value::Int(0))),
    ];
    Ok(ScheduleObj {
        class: "CosineDecay",
        schedule: Schedule::CosineDecay {
            initial: arg(&s, 0).as_float()?,
            decay_steps,
            alpha: given(&s[2]).map_or(Ok(0.0), |v| v.as_float())?,
            warmup_target,
            warmup_steps: given(&s[5]).map_or(Ok(0.0), |v| v.as_float())?,
        },
        config,
    })
}

fn class(name: &'static str, make: fn(&Args, &mut dyn Ctx) -> PyResult<ScheduleObj>) -> Value {
    NativeClass::new(
        name,
        "keras.src.optimizers.schedules.learning_rate_schedule",
        "",
    )
    .base("LearningRateSchedule")
    .constructor(move |args: &Args, ctx| Ok(Value::native(make(args, ctx)?)))
    .into_value()
}

/// `tf.keras.optimizers.schedules`.
pub fn module() -> Value {
    let m = NativeModule::new(
        "keras.optimizers.schedules",
        "Learning-rate schedules for the optimizers.",
    );
    m.set(
        "ExponentialDecay",
        class("ExponentialDecay", |a, _| exponential(a)),
    );
    m.set(
        "PiecewiseConstantDecay",
        class("PiecewiseConstantDecay", piecewise),
    );
    m.set("CosineDecay", class("CosineDecay", |a, _| cosine(a)));
    m.set(
        "LearningRateSchedule",
        NativeClass::new(
            "LearningRateSchedule",
            "keras.src.optimizers.schedules.learning_rate_schedule",
            "",
        )
        .into_value(),
    );
    m.into_value()
}
