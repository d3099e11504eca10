//! `tf.keras.optimizers`: `SGD`, `Adam`, `AdamW`, `RMSprop` and `Adagrad` as objects that
//! update variables (`apply_gradients(zip(grads, vars))`, `apply`, `build`), with Keras 3's
//! `iterations`, `learning_rate` (a variable, or a schedule from
//! `tf.keras.optimizers.schedules`), `variables`, `get_config`, hyper-parameters and repr.
//! The state and the update are the engine's (`keras::optimizer`, whose arithmetic is the
//! device rule `fit` runs); this file reads Python arguments, words Keras's errors and
//! warnings, and binds an object given to `compile(optimizer=...)` to the model, so that
//! it then reports the model's step count and rate. `model.optimizer` is a view whose
//! `learning_rate` reads and writes the engine's rate (what `LearningRateScheduler`
//! changes).

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashSet;

use super::super::convert::{tensor_of, variable_of};
use super::super::eager::{op_err, run};
use super::super::{address_of, bound, given, TfError};
use super::layers::kerr;
use super::metrics::auto_name;
use super::model::ModelObj;
use super::rate_schedules::ScheduleObj;
use super::schedules::warn;
use super::state_variable::StateVariable;
use super::variable::KerasVariable;
use crate::keras::optimizer::{Clip, Optimizer, Rate, Target};
use crate::keras::{OptKind, OptimizerConfig};
use crate::lang::str_repr;
use crate::lang::{Args, Ctx, NativeClass, NativeModule, Object, PyErr, PyResult, Value};
use crate::ops::{self, Assign};
use crate::tensor::{NdArray, Scalar};

/// The Keras arguments every optimizer takes after its own.
const COMMON: &[&str] = &[
    "weight_decay",
    "clipnorm",
    "clipvalue",
    "global_clipnorm",
    "use_ema",
    "ema_momentum",
    "ema_overwrite_frequency",
    "loss_scale_factor",
    "gradient_accumulation_steps",
    "name",
];

/// The common arguments in the order `get_config` lists them.
const CONFIG_COMMON: &[&str] = &[
    "weight_decay",
    "clipnorm",
    "global_clipnorm",
    "clipvalue",
    "use_ema",
    "ema_momentum",
    "ema_overwrite_frequency",
    "loss_scale_factor",
    "gradient_accumulation_steps",
];

/// One optimizer class: its own parameters (after `learning_rate`) with their defaults.
struct Class {
    name: &'static str,
    module: &'static str,
    own: &'static [(&'static str, Hyper)],
}

/// A default value of a hyper-parameter, as Keras's config shows it.
#[derive(Clone, Copy)]
enum Hyper {
    Float(f64),
    Bool(bool),
}

impl Hyper {
    fn value(self) -> Value {
        match self {
            Hyper::Float(x) => Value::Float(x),
            Hyper::Bool(b) => Value::Bool(b),
        }
    }
}

const CLASSES: &[Class] = &[
    Class {
        name: "SGD",
        module: "keras.src.optimizers.sgd",
        own: &[
            ("momentum", Hyper::Float(0.0)),
            ("nesterov", Hyper::Bool(false)),
        ],
    },
    Class {
        name: "Adam",
        module: "keras.src.optimizers.adam",
        own: &[
            ("beta_1", Hyper::Float(0.9)),
            ("beta_2", Hyper::Float(0.999)),
            ("epsilon", Hyper::Float(1e-7)),
            ("amsgrad", Hyper::Bool(false)),
        ],
    },
    Class {
        name: "AdamW",
        module: "keras.src.optimizers.adamw",
        own: &[
            ("weight_decay", Hyper::Float(0.004)),
            ("beta_1", Hyper::Float(0.9)),
            ("beta_2", Hyper::Float(0.999)),
            ("epsilon", Hyper::Float(1e-7)),
            ("amsgrad", Hyper::Bool(false)),
        ],
    },
    Class {
        name: "RMSprop",
        module: "keras.src.optimizers.rmsprop",
        own: &[
            ("rho", Hyper::Float(0.9)),
            ("momentum", Hyper::Float(0.0)),
            ("epsilon", Hyper::Float(1e-7)),
            ("centered", Hyper::Bool(false)),
        ],
    },
    Class {
        name: "Adagrad",
        module: "keras.src.optimizers.adagrad",
        own: &[
            ("initial_accumulator_value", Hyper::Float(0.1)),
            ("epsilon", Hyper::Float(1e-7)),
        ],
    },
];

/// An optimizer object.
pub struct OptimizerObj {
    pub class: &'static str,
    module: &'static str,
    pub opt: RefCell<Optimizer>,
    /// Hyper-parameters as Keras's config lists them (the class's own, then the common
    /// ones), for `get_config` and attribute reads.
    params: Vec<(&'static str, Value)>,
    /// The model this object was compiled into: it then reports that model's step count
    /// and rate.
    model: RefCell<Option<Value>>,
}

/// Warnings already shown this session: Python shows a warning once per place.
#[derive(Default)]
struct ShownWarnings(HashSet<String>);

fn param<'a>(params: &'a [(&'static str, Value)], k: &str) -> Option<&'a Value> {
    params.iter().find(|(n, _)| *n == k).map(|(_, v)| v)
}

fn float_param(params: &[(&'static str, Value)], k: &str) -> PyResult<f64> {
    param(params, k).map_or(Ok(0.0), |v| v.as_float())
}

fn kind_of(class: &str, p: &[(&'static str, Value)]) -> PyResult<OptKind> {
    let f = |k: &str| float_param(p, k).map(|x| x as f32);
    let b = |k: &str| param(p, k).map_or(Ok(false), |v| v.as_bool_strict());
    Ok(match class {
        "SGD" => OptKind::Sgd {
            momentum: f("momentum")?,
            nesterov: b("nesterov")?,
        },
        "Adam" => OptKind::Adam {
            beta_1: f("beta_1")?,
            beta_2: f("beta_2")?,
            epsilon: f("epsilon")?,
        },
        "AdamW" => OptKind::AdamW {
            beta_1: f("beta_1")?,
            beta_2: f("beta_2")?,
            epsilon: f("epsilon")?,
            weight_decay: f("weight_decay")?,
        },
        "RMSprop" => OptKind::RmsProp {
            rho: f("rho")?,
            momentum: f("momentum")?,
            epsilon: f("epsilon")?,
            centered: b("centered")?,
        },
        _ => OptKind::Adagrad {
            initial_accumulator_value: f("initial_accumulator_value")?,
            epsilon: f("epsilon")?,
        },
    })
}

/// `learning_rate=`: a float, or a schedule object; anything else is Keras's error.
fn rate_arg(v: Option<&Value>, default: f64) -> PyResult<(Option<f64>, Option<ScheduleObj>)> {
    match v {
        None => Ok((Some(default), None)),
        Some(Value::Float(x)) => Ok((Some(*x), None)),
        Some(v) => {
            if let Some(s) = v.downcast::<ScheduleObj>() {
                return Ok((None, Some(s.clone_obj())));
            }
            let shown = match v {
                Value::Int(i) => i.to_string(),
                other => other.type_name(),
            };
            Err(TfError::Value(format!(
                "Argument `learning_rate` should be float, or an instance of LearningRateSchedule, or a callable (that takes in the current iteration value and returns the corresponding learning rate value). Received instead: learning_rate={shown}"
            ))
            .into())
        }
    }
}

fn construct(class: &'static Class, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let mut names: Vec<&str> = vec!["learning_rate"];
    names.extend(class.own.iter().map(|(n, _)| *n));
    for c in COMMON {
        if !names.contains(c) {
            names.push(c);
        }
    }
    // Keras takes `**kwargs` and refuses the unknown ones with a ValueError.
    let (known, unknown): (Vec<_>, Vec<_>) = args
        .kw
        .iter()
        .cloned()
        .partition(|(k, _)| names.contains(&k.as_str()) || k == "decay");
    if !unknown.is_empty() {
        let mut parts = vec![];
        for (k, v) in &unknown {
            parts.push(format!("{}: {}", str_repr(k), ctx.repr(v)?));
        }
        return Err(TfError::Value(format!(
            "Argument(s) not recognized: {{{}}}",
            parts.join(", ")
        ))
        .into());
    }
    if known.iter().any(|(k, v)| k == "decay" && !v.is_none()) {
        warn(
            ctx,
            "Argument `decay` is no longer supported and will be ignored.",
        );
    }
    let bind_args = Args {
        pos: args.pos.clone(),
        kw: known.into_iter().filter(|(k, _)| k != "decay").collect(),
    };
    let s = bind_args.bind(class.name, &names, 0)?;
    let slot = |n: &str| {
        names
            .iter()
            .position(|x| *x == n)
            .and_then(|i| given(&s[i]).cloned())
    };
    let default_lr = if class.name == "SGD" { 0.01 } else { 0.001 };
    let (lr, schedule) = rate_arg(slot("learning_rate").as_ref(), default_lr)?;
    let mut params: Vec<(&'static str, Value)> = class
        .own
        .iter()
        .map(|(n, d)| (*n, slot(n).unwrap_or_else(|| d.value())))
        .collect();
    for n in COMMON.iter().filter(|c| **c != "name") {
        if !params.iter().any(|(k, _)| k == n) {
            let default = match *n {
                "use_ema" => Value::Bool(false),
                "ema_momentum" => Value::Float(0.99),
                _ => Value::None,
            };
            params.push((n, slot(n).unwrap_or(default)));
        }
    }
    if param(&params, "amsgrad").is_some_and(|v| v.as_bool_strict().unwrap_or(false)) {
        return Err(TfError::NotImplemented(format!(
            "amsgrad=True is not supported by this kernel's {}",
            class.name
        ))
        .into());
    }
    for unsupported in [
        "use_ema",
        "loss_scale_factor",
        "gradient_accumulation_steps",
    ] {
        let set = match param(&params, unsupported) {
            Some(Value::Bool(b)) => *b,
            Some(Value::None) | None => false,
            Some(_) => true,
        };
        if set {
            return Err(TfError::NotImplemented(format!(
                "{unsupported} is not supported by this kernel's optimizers"
            ))
            .into());
        }
    }
    let clip_args: Vec<(&str, f64)> = ["clipnorm", "clipvalue", "global_clipnorm"]
        .iter()
        .filter_map(|k| match param(&params, k) {
            Some(Value::None) | None => None,
            Some(v) => Some(v.as_float().map(|x| (*k, x))),
        })
        .collect::<PyResult<_>>()?;
    if clip_args.len() > 1 {
        let mut shown = vec![];
        for k in ["clipnorm", "clipvalue", "global_clipnorm"] {
            let v = param(&params, k).cloned().unwrap_or(Value::None);
            shown.push(format!("{k}={}", ctx.str(&v)?));
        }
        return Err(TfError::Value(format!(
            "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: {}",
            shown.join(", ")
        ))
        .into());
    }
    let clip = match clip_args.first() {
        Some(("clipnorm", x)) => Clip::Norm(*x),
        Some(("clipvalue", x)) => Clip::Value(*x),
        Some((_, x)) => Clip::GlobalNorm(*x),
        None => Clip::None,
    };
    let kind = kind_of(class.name, &params)?;
    let name = match slot("name") {
        Some(v) => v.as_str()?.to_string(),
        None => auto_name(class.name, ctx),
    };
    let mut opt = Optimizer::new(kind, &name, lr, schedule.map(|s| s.schedule));
    opt.clip = clip;
    if class.name != "AdamW" {
        opt.weight_decay = param(&params, "weight_decay")
            .filter(|v| !v.is_none())
            .map(|v| v.as_float())
            .transpose()?;
    }
    Ok(Value::native(OptimizerObj {
        class: class.name,
        module: class.module,
        opt: RefCell::new(opt),
        params,
        model: RefCell::new(None),
    }))
}

/// A variable as the optimizer names it, with its op-library handle.
fn target_of(v: &Value) -> PyResult<Target> {
    if let Some(k) = v.downcast::<KerasVariable>() {
        if let Some(var) = variable_of(&k.value) {
            return Ok(Target {
                var,
                name: k.path.clone(),
            });
        }
    }
    match variable_of(v) {
        Some(var) => {
            let name = match v.downcast::<StateVariable>() {
                Some(s) => s.var.name().to_string(),
                None => var.name().to_string(),
            };
            Ok(Target { var, name })
        }
        None => Err(PyErr::attribute_error(format!(
            "'{}' object has no attribute '_unique_id'",
            match v.type_name().as_str() {
                "EagerTensor" => "tensorflow.python.framework.ops.EagerTensor".to_string(),
                other => other.to_string(),
            }
        ))),
    }
}

impl OptimizerObj {
    /// The compiled model's engine values, when this object was compiled into a model
    /// that is built: `(iterations, learning rate)`.
    fn model_state(&self) -> PyResult<Option<(u64, f32)>> {
        let model = self.model.borrow().clone();
        let Some(m) = model.as_ref().and_then(|m| m.downcast::<ModelObj>()) else {
            return Ok(None);
        };
        let Ok(engine) = m.engine.try_borrow() else {
            return Ok(None);
        };
        let Some(engine) = engine.as_ref() else {
            return Ok(None);
        };
        let t = engine.trainer_ref();
        let it = t.optimizer_state().map_err(kerr)?.iterations;
        Ok(Some((it, t.learning_rate())))
    }

    /// Brings the object's own variables up to the model's values when it is bound.
    fn sync_from_model(&self) -> PyResult<()> {
        let Some((it, lr)) = self.model_state()? else {
            return Ok(());
        };
        let opt = self.opt.borrow();
        opt.iterations
            .store(NdArray::from_scalar(Scalar::I64(it as i64)))
            .map_err(op_err)?;
        if let Rate::Variable(v) = &opt.rate {
            v.store(NdArray::from_scalar(Scalar::F32(lr)))
                .map_err(op_err)?;
        }
        Ok(())
    }

    /// The engine configuration for `compile`.
    pub fn engine_config(&self) -> PyResult<OptimizerConfig> {
        let opt = self.opt.borrow();
        let lr = match &opt.rate {
            Rate::Variable(v) => {
                let (_, x) = v.snapshot().to_f64_vec();
                x.first().copied().unwrap_or(0.0) as f32
            }
            Rate::Schedule(_) => {
                return Err(TfError::Value(format!(
                    "compile() on this kernel trains at a constant learning rate (which callbacks such as LearningRateScheduler may change); {} was given a LearningRateSchedule. Give it a float learning_rate, or use the schedule in a custom training loop.",
                    self.class
                ))
                .into())
            }
        };
        if opt.weight_decay.is_some() || opt.clip != Clip::None {
            return Err(TfError::Value(format!(
                "compile() on this kernel does not apply weight_decay (other than AdamW's), clipnorm, clipvalue or global_clipnorm; {} has one of them. Use it in a custom training loop instead.",
                self.class
            ))
            .into());
        }
        Ok(opt.config(lr))
    }

    fn get_config(&self) -> PyResult<Value> {
        let opt = self.opt.borrow();
        let lr = match &opt.rate {
            Rate::Variable(v) => {
                let (_, x) = v.snapshot().to_f64_vec();
                Value::Float(x.first().copied().unwrap_or(0.0))
            }
            Rate::Schedule(_) => Value::str("schedule"),
        };
        let mut pairs: Vec<(&str, Value)> =
            vec![("name", Value::str(&opt.name)), ("learning_rate", lr)];
        // Keras lists the common arguments first (in the base class's order), then the
        // class's own.
        for k in CONFIG_COMMON {
            pairs.push((k, param(&self.params, k).cloned().unwrap_or(Value::None)));
        }
        for (k, v) in &self.params {
            if !CONFIG_COMMON.contains(k) {
                pairs.push((k, v.clone()));
            }
        }
        Ok(Value::dict_from(pairs))
    }

    fn apply_gradients(&self, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind("apply_gradients", &["grads_and_vars"], 1)?;
        let pairs = s[0].clone().unwrap_or(Value::None);
        let items = match ctx.iterate(&pairs) {
            Ok(items) => items,
            Err(e) if e.type_name() == "TypeError" => {
                return Err(PyErr::type_error(format!(
                    "zip() argument after * must be an iterable, not {}",
                    pairs.type_name()
                )))
            }
            Err(e) => return Err(e),
        };
        let mut grads = Vec::with_capacity(items.len());
        let mut vars = Vec::with_capacity(items.len());
        let mut width = usize::MAX;
        for it in &items {
            let parts = ctx.iterate(it)?;
            width = width.min(parts.len());
            let mut parts = parts.into_iter();
            grads.push(parts.next().unwrap_or(Value::None));
            vars.push(parts.next().unwrap_or(Value::None));
        }
        let width = if items.is_empty() { 0 } else { width };
        if width < 2 {
            return Err(PyErr::value_error(format!(
                "not enough values to unpack (expected 2, got {width})"
            )));
        }
        if width > 2 {
            return Err(PyErr::value_error("too many values to unpack (expected 2)"));
        }
        if !self.apply_mirrored(&grads, &vars, ctx)? {
            self.apply(&grads, &vars, ctx)?;
        }
        Ok(StateVariable::value(&self.opt.borrow().iterations))
    }

    /// `apply_gradients` in a replica context of `strategy.run`: the gradients of every
    /// replica are SUM-all-reduced, and the one reduced update is applied to the first copy
    /// of each mirrored variable and copied to the others, so the copies stay identical
    /// and the optimizer steps once per step, as under TF. The replicas meet at the call;
    /// the first to resume applies the update before any replica runs on, so every replica
    /// reads the updated variables after its call. `false` outside a replica context.
    fn apply_mirrored(&self, grads: &[Value], vars: &[Value], ctx: &mut dyn Ctx) -> PyResult<bool> {
        if super::super::distribute::running_replica(ctx).is_none() {
            return Ok(false);
        }
        let mut copies = Vec::with_capacity(vars.len());
        for v in vars {
            // TF asserts that a variable updated in a replica context is distributed.
            match super::super::variable::mirrored_copies(v) {
                Some(c) => copies.push(c),
                None => return Err(PyErr::new("AssertionError", "")),
            }
        }
        let mut part = Vec::with_capacity(grads.len());
        for g in grads {
            part.push(match g {
                Value::None => None,
                g => Some(tensor_of(g, ctx)?),
            });
        }
        use super::super::merge::{collective, Collective};
        let parts = match collective(ctx, part)? {
            Collective::Alone => return Ok(false),
            Collective::Waiting => return Ok(true),
            Collective::Ready(parts) => parts,
        };
        super::super::distribute::cross_replica(ctx, |ctx| {
            self.update_mirrored(&parts, vars, &copies, ctx)
        })?;
        Ok(true)
    }

    /// The reduced update of [`apply_mirrored`](Self::apply_mirrored), once every
    /// replica's part is in.
    fn update_mirrored(
        &self,
        parts: &[Vec<Option<ops::Tensor>>],
        vars: &[Value],
        copies: &[Vec<ops::Variable>],
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        let summed = run(ctx, |e| super::super::distribute::sum_parts(e, parts))?;
        let reduced: Vec<Value> = summed
            .into_iter()
            .map(|g| g.map_or(Value::None, super::super::eager::wrap))
            .collect();
        self.apply(&reduced, vars, ctx)?;
        run(ctx, |e| {
            e.pause();
            let mut done = Ok(());
            for c in copies {
                let Some((first, rest)) = c.split_first() else {
                    continue;
                };
                let t = e.read(first);
                for other in rest {
                    done = done.and_then(|_| e.assign(other, Assign::Set, &t));
                }
            }
            e.resume();
            done
        })
    }

    /// Keras's `apply(grads, trainable_variables)`.
    fn apply(&self, grads: &[Value], vars: &[Value], ctx: &mut dyn Ctx) -> PyResult<()> {
        let targets = vars.iter().map(target_of).collect::<PyResult<Vec<_>>>()?;
        if self.opt.borrow().built() {
            for (t, v) in targets.iter().zip(vars) {
                if !self.opt.borrow().knows(&t.var) {
                    let shown = ctx.repr(v)?;
                    return Err(TfError::Value(format!(
                        "Unknown variable: {shown}. This optimizer can only be called for the variables it was originally built with. When working with a new set of variables, you should recreate a new optimizer instance."
                    ))
                    .into());
                }
            }
        }
        let mut tensors = Vec::with_capacity(grads.len());
        for g in grads {
            tensors.push(match g {
                Value::None => None,
                g => Some(tensor_of(g, ctx)?),
            });
        }
        let missing: Vec<String> = tensors
            .iter()
            .zip(&targets)
            .filter(|(g, _)| g.is_none())
            .map(|(_, t)| str_repr(&t.name))
            .collect();
        if !missing.is_empty() && missing.len() < tensors.len() {
            let text = format!(
                "Gradients do not exist for variables [{}] when minimizing the loss. If using `model.compile()`, did you forget to provide a `loss` argument?",
                missing.join(", ")
            );
            if ctx.state().get::<ShownWarnings>().0.insert(text.clone()) {
                warn(ctx, &text);
            }
        }
        let made_before = self.opt.borrow().variables().len();
        if !self.opt.borrow().built() {
            // A checkpoint restored before the slots existed fills them before the step
            // reads them (TF's deferred restoration).
            self.opt.borrow_mut().build(&targets).map_err(op_err)?;
            super::super::train::optimizer_built(ctx, &self.opt.borrow())?;
        }
        {
            let mut opt = self.opt.borrow_mut();
            run(ctx, |e| opt.apply(e, &tensors, &targets))?;
        }
        // The first step makes the slots. Inside a `tf.function` trace they are variables
        // made on the first call, which TF traces a second time, as it does for any.
        let made: Vec<ops::Variable> = self.opt.borrow().variables()[made_before..].to_vec();
        for var in &made {
            super::super::function::trace::variable_created(ctx, var)?;
        }
        Ok(())
    }

    fn set_learning_rate(&self, v: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        let lr = {
            let opt = self.opt.borrow();
            let Rate::Variable(var) = &opt.rate else {
                return Err(PyErr::type_error(
                    "This optimizer was created with a `LearningRateSchedule` object as its `learning_rate` constructor argument, hence its learning rate is not settable. If you need the learning rate to be settable, you should instantiate the optimizer with a float `learning_rate` argument.",
                ));
            };
            let t = tensor_of(v, ctx)?;
            let t = run(ctx, |e| {
                let t = crate::keras::losses::cast_to(e, &t, crate::tensor::DType::F32)?;
                e.assign(var, Assign::Set, &t)?;
                Ok(t)
            })?;
            let (_, x) = t.value().to_f64_vec();
            x.first().copied().unwrap_or(0.0) as f32
        };
        let model = self.model.borrow().clone();
        if let Some(m) = model.as_ref().and_then(|m| m.downcast::<ModelObj>()) {
            set_model_rate(m, lr);
        }
        Ok(())
    }
}

/// Sets a compiled model's learning rate, in its compile configuration and in its engine
/// (through the shared cell `fit` reads while it holds the engine).
fn set_model_rate(m: &ModelObj, lr: f32) {
    if let Some(c) = m.compiled.borrow_mut().as_mut() {
        c.optimizer.learning_rate = lr;
    }
    if let Ok(mut e) = m.engine.try_borrow_mut() {
        if let Some(e) = e.as_mut() {
            e.trainer().set_learning_rate(lr);
        }
    }
}

impl Object for OptimizerObj {
    fn type_name(&self) -> String {
        self.class.into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<{}.{} object at {}>",
            self.module,
            self.class,
            address_of(self)
        ))
    }
    fn getattr(&self, this: &Value, name: &str, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        if let Some(v) = param(&self.params, name) {
            return Ok(Some(v.clone()));
        }
        Ok(Some(match name {
            "name" => Value::str(&self.opt.borrow().name),
            "built" => Value::Bool(self.opt.borrow().built()),
            "iterations" => {
                self.sync_from_model()?;
                StateVariable::value(&self.opt.borrow().iterations)
            }
            "learning_rate" => {
                self.sync_from_model()?;
                let opt = self.opt.borrow();
                match &opt.rate {
                    Rate::Variable(v) => StateVariable::value(v),
                    Rate::Schedule(_) => super::super::eager::apply(ctx, |e| opt.current_rate(e))?,
                }
            }
            "variables" => {
                self.sync_from_model()?;
                Value::list(
                    self.opt
                        .borrow()
                        .variables()
                        .iter()
                        .map(StateVariable::value)
                        .collect(),
                )
            }
            "apply_gradients" => {
                bound::<OptimizerObj>(this, name, |o, _, args, ctx| o.apply_gradients(args, ctx))
            }
            "apply" => bound::<OptimizerObj>(this, name, |o, _, args, ctx| {
                let s = args.bind("apply", &["grads", "trainable_variables"], 1)?;
                let grads = ctx.iterate(s[0].as_ref().unwrap_or(&Value::None))?;
                if grads.is_empty() {
                    return Ok(Value::None);
                }
                let vars = match given(&s[1]) {
                    Some(v) => ctx.iterate(v)?,
                    None => {
                        return Err(TfError::Value(
                            "When passing `grads` without `variables`, the optimizer must already be built on a list of variables. Call `optimizer.build(trainable_variables)` first. ".into(),
                        )
                        .into())
                    }
                };
                o.apply(&grads, &vars, ctx)?;
                Ok(Value::None)
            }),
            "build" => bound::<OptimizerObj>(this, name, |o, _, args, ctx| {
                let s = args.bind("build", &["variables"], 1)?;
                let vars = ctx.iterate(s[0].as_ref().unwrap_or(&Value::None))?;
                let targets = vars.iter().map(target_of).collect::<PyResult<Vec<_>>>()?;
                o.opt.borrow_mut().build(&targets).map_err(op_err)?;
                super::super::train::optimizer_built(ctx, &o.opt.borrow())?;
                Ok(Value::None)
            }),
            "get_config" => bound::<OptimizerObj>(this, name, |o, _, _, _| o.get_config()),
            _ => return Ok(None),
        }))
    }
    fn setattr(&self, name: &str, v: Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "learning_rate" => self.set_learning_rate(&v, ctx),
            _ => Err(PyErr::attribute_error(format!(
                "can't set attribute '{name}' of a {} optimizer here",
                self.class
            ))),
        }
    }
    fn dir(&self) -> Vec<String> {
        let mut names: Vec<String> = [
            "name",
            "built",
            "iterations",
            "learning_rate",
            "variables",
            "apply_gradients",
            "apply",
            "build",
            "get_config",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.extend(self.params.iter().map(|(k, _)| k.to_string()));
        names
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.class.into(), "Optimizer".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `compile(optimizer=...)`: a name (Keras's defaults) or an optimizer object (its rule,
/// hyper-parameters and rate).
pub fn optimizer_arg(v: Option<&Value>) -> PyResult<OptimizerConfig> {
    match v {
        None => OptimizerConfig::parse("rmsprop").map_err(kerr),
        Some(Value::Str(s)) => OptimizerConfig::parse(s).map_err(kerr),
        Some(o) => match o.downcast::<OptimizerObj>() {
            Some(opt) => opt.engine_config(),
            None => Err(PyErr::value_error(format!(
                "Could not interpret optimizer identifier: {}",
                o.type_name()
            ))),
        },
    }
}

/// After `compile(optimizer=obj)`: the object reports `model`'s step count and rate.
pub fn bind_to_model(v: Option<&Value>, model: &Value) {
    if let Some(opt) = v.and_then(|v| v.downcast::<OptimizerObj>()) {
        *opt.model.borrow_mut() = Some(model.clone());
    }
}

/// `model.optimizer`: reads and sets the compiled model's learning rate and step count.
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
        let engine = m.engine.try_borrow().ok();
        let trainer = engine
            .as_ref()
            .and_then(|e| e.as_ref())
            .map(|e| e.trainer_ref());
        Ok(match name {
            "learning_rate" | "lr" => {
                let lr = match trainer {
                    Some(t) => t.learning_rate(),
                    None => m
                        .compiled
                        .borrow()
                        .as_ref()
                        .map_or(0.0, |c| c.optimizer.learning_rate),
                };
                Some(Value::Float(f64::from(lr)))
            }
            "iterations" => {
                // A model the op library trains keeps its step count with the model.
                let it = match trainer {
                    Some(t) => t.optimizer_state().map_err(kerr)?.iterations,
                    None => m
                        .op_training
                        .borrow()
                        .as_ref()
                        .map_or(0, |t| t.iterations()),
                };
                let var = ops::Variable::new(
                    NdArray::from_scalar(Scalar::I64(it as i64)),
                    &format!("{}/iteration", self.type_name().to_lowercase()),
                    false,
                );
                Some(StateVariable::value(&var))
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
        set_model_rate(self.model()?, lr);
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Registers `tf.keras.optimizers` (with `schedules`).
pub fn register(keras: &NativeModule) {
    let opts = NativeModule::new("keras.optimizers", "Keras optimizers.");
    for class in CLASSES {
        let c: &'static Class = class;
        opts.set(
            c.name,
            NativeClass::new(c.name, c.module, "")
                .base("Optimizer")
                .constructor(move |args: &Args, ctx| construct(c, args, ctx))
                .into_value(),
        );
    }
    opts.set("schedules", super::rate_schedules::module());
    opts.set(
        "Optimizer",
        NativeClass::new("Optimizer", "keras.src.optimizers.optimizer", "").into_value(),
    );
    keras.set("optimizers", opts.into_value());
}
