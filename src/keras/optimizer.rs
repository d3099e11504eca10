//! Keras 3's optimizer objects on the op library: an [`Optimizer`] holds its step counter
//! (`iterations`, int64) and its learning rate (a float32 variable, or a [`Schedule`] of
//! the step) as [`Variable`]s, makes its slots (momentum, velocity, accumulator, ...) as
//! variables the first time it is applied (Keras's `build`), and applies gradients as
//! Keras's `apply` does: unknown variables refused, missing gradients dropped (and named,
//! for the warning), gradients clipped, generic weight decay, then one
//! [`ops::apply_update`] per variable, whose arithmetic is the device's `optimizer_step`
//! for the rule [`OptimizerConfig::step`] gives, the code `fit` runs. Every read and write
//! goes through the execution context, so a graph recorder sees the whole step. It must
//! not touch the language or the bindings.

use super::compile::{OptKind, OptimizerConfig};
use crate::ops::{self, Assign, Binary, Eager, ErrorClass, OpError, OpResult};
use crate::ops::{dims, ReduceKind, Tensor, Unary, Variable};
use crate::tensor::ops::broadcast_shapes;
use crate::tensor::{DType, NdArray, Scalar};

/// A learning-rate schedule of `tf.keras.optimizers.schedules`, computed with ops from
/// the step counter, so a replayed graph follows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Schedule {
    ExponentialDecay {
        initial: f64,
        decay_steps: f64,
        decay_rate: f64,
        staircase: bool,
    },
    PiecewiseConstantDecay {
        boundaries: Vec<f64>,
        values: Vec<f64>,
    },
    CosineDecay {
        initial: f64,
        decay_steps: f64,
        alpha: f64,
        warmup_target: Option<f64>,
        warmup_steps: f64,
    },
}

fn f32s(v: f64) -> Tensor {
    Tensor::scalar(v, DType::F32)
}

impl Schedule {
    /// The rate at `step` (any numeric scalar), as float32.
    pub fn rate(&self, e: &mut Eager, step: &Tensor) -> OpResult<Tensor> {
        match self {
            Schedule::ExponentialDecay {
                initial,
                decay_steps,
                decay_rate,
                staircase,
            } => {
                let s = ops::cast(e, step, DType::F32)?;
                let mut p = ops::div(e, &s, &f32s(*decay_steps))?;
                if *staircase {
                    p = ops::unary(e, Unary::Floor, &p)?;
                }
                let f = ops::binary(e, Binary::Pow, &f32s(*decay_rate), &p)?;
                ops::mul(e, &f32s(*initial), &f)
            }
            Schedule::PiecewiseConstantDecay { boundaries, values } => {
                let bound = |b: f64| Tensor::scalar(b, step.dtype());
                let (Some(&b0), Some(&bl), Some(&v0), Some(&vl)) = (
                    boundaries.first(),
                    boundaries.last(),
                    values.first(),
                    values.last(),
                ) else {
                    return Err(OpError::internal("a piecewise schedule without boundaries"));
                };
                let mut terms = Vec::with_capacity(values.len());
                let le = ops::binary(e, Binary::LessEqual, step, &bound(b0))?;
                terms.push((le, v0));
                let gt = ops::binary(e, Binary::Greater, step, &bound(bl))?;
                terms.push((gt, vl));
                for (w, &v) in boundaries.windows(2).zip(values.iter().skip(1)) {
                    let a = ops::binary(e, Binary::Greater, step, &bound(w[0]))?;
                    let b = ops::binary(e, Binary::LessEqual, step, &bound(w[1]))?;
                    terms.push((ops::binary(e, Binary::LogicalAnd, &a, &b)?, v));
                }
                let mut out = f32s(0.0);
                for (cond, v) in terms {
                    let c = ops::cast(e, &cond, DType::F32)?;
                    let t = ops::mul(e, &c, &f32s(v))?;
                    out = ops::add(e, &out, &t)?;
                }
                Ok(out)
            }
            Schedule::CosineDecay {
                initial,
                decay_steps,
                alpha,
                warmup_target,
                warmup_steps,
            } => {
                let s = ops::cast(e, step, DType::F32)?;
                let decay = |e: &mut Eager, s: &Tensor, from: &Tensor| -> OpResult<Tensor> {
                    let frac = ops::div(e, s, &f32s(*decay_steps))?;
                    let x = ops::mul(e, &f32s(std::f64::consts::PI), &frac)?;
                    let cos = ops::unary(e, Unary::Cos, &x)?;
                    let one = ops::add(e, &f32s(1.0), &cos)?;
                    let cd = ops::mul(e, &f32s(0.5), &one)?;
                    let d = ops::mul(e, &f32s(1.0 - alpha), &cd)?;
                    let d = ops::add(e, &d, &f32s(*alpha))?;
                    ops::mul(e, from, &d)
                };
                let Some(target) = warmup_target else {
                    let s = ops::binary(e, Binary::Minimum, &s, &f32s(*decay_steps))?;
                    return decay(e, &s, &f32s(*initial));
                };
                let s = ops::binary(e, Binary::Minimum, &s, &f32s(decay_steps + warmup_steps))?;
                let frac = ops::div(e, &s, &f32s(*warmup_steps))?;
                let warm = ops::mul(e, &f32s(target - initial), &frac)?;
                let warm = ops::add(e, &warm, &f32s(*initial))?;
                let after = ops::sub(e, &s, &f32s(*warmup_steps))?;
                let dec = decay(e, &after, &f32s(*target))?;
                let warming = ops::binary(e, Binary::Less, &s, &f32s(*warmup_steps))?;
                ops::select(e, &warming, &warm, &dec)
            }
        }
    }
}

/// Where the learning rate comes from.
#[derive(Debug, Clone)]
pub enum Rate {
    /// A float32 variable (`optimizer/learning_rate`), which `learning_rate = x` assigns.
    Variable(Variable),
    Schedule(Schedule),
}

/// Gradient clipping before the update (at most one of Keras's three arguments).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Clip {
    None,
    /// `clipnorm`: each gradient scaled to at most this L2 norm.
    Norm(f64),
    /// `global_clipnorm`: all gradients scaled together.
    GlobalNorm(f64),
    /// `clipvalue`: each element clipped to `[-v, v]`.
    Value(f64),
}

/// A variable as the optimizer refers to it: `name` is Keras's `path` for a Keras
/// variable, TF's name (`Variable:0`) for a `tf.Variable`.
#[derive(Debug, Clone)]
pub struct Target {
    pub var: Variable,
    pub name: String,
}

/// An optimizer object.
pub struct Optimizer {
    pub kind: OptKind,
    pub name: String,
    pub iterations: Variable,
    pub rate: Rate,
    /// Keras's generic `weight_decay` (AdamW keeps its own in `kind`).
    pub weight_decay: Option<f64>,
    pub clip: Clip,
    targets: Vec<Variable>,
    /// Per target, the rule's slots in the device's order.
    slots: Vec<Vec<Variable>>,
    /// Every slot in the order Keras lists them in `variables`.
    listed: Vec<Variable>,
    built: bool,
}

/// The slots Keras makes per variable, by name, and whether `variables` lists them per
/// variable (Adam's `momentum, velocity` for each in turn) or per kind of slot.
fn slot_names(kind: &OptKind) -> (Vec<&'static str>, bool) {
    match *kind {
        OptKind::Sgd { momentum, .. } if momentum != 0.0 => (vec!["momentum"], false),
        OptKind::Sgd { .. } => (vec![], false),
        OptKind::Adam { .. } | OptKind::AdamW { .. } => (vec!["momentum", "velocity"], true),
        OptKind::RmsProp {
            momentum, centered, ..
        } => {
            let mut v = vec!["velocity"];
            if momentum > 0.0 {
                v.push("momentum");
            }
            if centered {
                v.push("average_gradient");
            }
            (v, false)
        }
        OptKind::Adagrad { .. } => (vec!["accumulator"], false),
    }
}

/// What an application of gradients did.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// The variables that got no gradient, for Keras's warning.
    pub missing: Vec<String>,
}

impl Optimizer {
    /// A new optimizer named `name` (unique in the session), at `rate`.
    pub fn new(
        kind: OptKind,
        name: &str,
        rate: Option<f64>,
        schedule: Option<Schedule>,
    ) -> Optimizer {
        let iterations = Variable::new(
            NdArray::from_scalar(Scalar::I64(0)),
            &format!("{name}/iteration"),
            false,
        );
        let rate = match schedule {
            Some(s) => Rate::Schedule(s),
            None => Rate::Variable(Variable::new(
                scalar_f32(rate.unwrap_or(0.001)),
                &format!("{name}/learning_rate"),
                false,
            )),
        };
        Optimizer {
            kind,
            name: name.to_string(),
            iterations,
            rate,
            weight_decay: None,
            clip: Clip::None,
            targets: vec![],
            slots: vec![],
            listed: vec![],
            built: false,
        }
    }

    pub fn built(&self) -> bool {
        self.built
    }

    /// The engine configuration `compile` uses for this optimizer at rate `lr`.
    pub fn config(&self, lr: f32) -> OptimizerConfig {
        OptimizerConfig {
            kind: self.kind,
            learning_rate: lr,
        }
    }

    /// Every variable, as Keras lists them: the step counter, the rate when it is a
    /// variable, then the slots.
    pub fn variables(&self) -> Vec<Variable> {
        let mut out = vec![self.iterations.clone()];
        if let Rate::Variable(v) = &self.rate {
            out.push(v.clone());
        }
        out.extend(self.listed.iter().cloned());
        out
    }

    /// Whether `var` is one of the variables the optimizer was built with.
    pub fn knows(&self, var: &Variable) -> bool {
        self.targets.iter().any(|t| t.same(var))
    }

    /// Makes the slots for `targets` (`optimizer.build(var_list)`).
    pub fn build(&mut self, targets: &[Target]) -> OpResult<()> {
        let (names, per_variable) = slot_names(&self.kind);
        let init = self.config(0.0).slot_init();
        let mut slots: Vec<Vec<Variable>> = Vec::with_capacity(targets.len());
        for t in targets {
            let prefix = t.name.replace(['/', ':'], "_");
            let mut mine = Vec::with_capacity(names.len());
            for n in &names {
                let value = NdArray::full(t.var.shape(), f64::from(init), t.var.dtype())
                    .map_err(|err| OpError::from_tensor("Fill", "CPU:0", err))?;
                mine.push(Variable::new(
                    value,
                    &format!("{}/{prefix}_{n}", self.name),
                    false,
                ));
            }
            slots.push(mine);
        }
        let mut listed = Vec::new();
        if per_variable {
            listed.extend(slots.iter().flatten().cloned());
        } else {
            for k in 0..names.len() {
                listed.extend(slots.iter().filter_map(|s| s.get(k).cloned()));
            }
        }
        self.targets = targets.iter().map(|t| t.var.clone()).collect();
        self.slots = slots;
        self.listed = listed;
        self.built = true;
        Ok(())
    }

    /// The learning rate now: the variable read through the context, or the schedule at
    /// the current step.
    pub fn current_rate(&self, e: &mut Eager) -> OpResult<Tensor> {
        match &self.rate {
            Rate::Variable(v) => Ok(e.read(v)),
            Rate::Schedule(s) => {
                let step = e.read(&self.iterations);
                s.rate(e, &step)
            }
        }
    }

    /// `apply_gradients(zip(grads, vars))`: builds on first use, refuses variables it was
    /// not built with (the caller words that error, which shows the variable), drops the
    /// missing gradients, and applies the rest; the step counter advances by one.
    pub fn apply(
        &mut self,
        e: &mut Eager,
        grads: &[Option<Tensor>],
        targets: &[Target],
    ) -> OpResult<Applied> {
        if !self.built {
            self.build(targets)?;
        }
        let mut missing = Vec::new();
        let mut pairs = Vec::new();
        for (g, t) in grads.iter().zip(targets) {
            match g {
                Some(g) => pairs.push((g.clone(), t)),
                None => missing.push(t.name.clone()),
            }
        }
        if pairs.is_empty() {
            return Err(OpError::new(
                ErrorClass::Value,
                "No gradients provided for any variable.",
            ));
        }
        e.pause();
        let done = self.update(e, pairs);
        e.resume();
        done?;
        Ok(Applied { missing })
    }

    fn update(&mut self, e: &mut Eager, pairs: Vec<(Tensor, &Target)>) -> OpResult<()> {
        let grads: Vec<Tensor> = pairs.iter().map(|(g, _)| g.clone()).collect();
        let grads = clip(e, self.clip, grads)?;
        let lr = self.current_rate(e)?;
        if let Some(wd) = self.weight_decay {
            for (_, t) in &pairs {
                let v = e.read(&t.var);
                let l = ops::cast(e, &lr, v.dtype())?;
                let vw = ops::mul(e, &v, &Tensor::scalar(wd, v.dtype()))?;
                let vwl = ops::mul(e, &vw, &l)?;
                let nv = ops::sub(e, &v, &vwl)?;
                e.assign(&t.var, Assign::Set, &nv)?;
            }
        }
        let iterations = e.read(&self.iterations);
        let rule = self.config(0.0).step(0.0, 1);
        for (g, (_, t)) in grads.iter().zip(&pairs) {
            let i = self
                .targets
                .iter()
                .position(|v| v.same(&t.var))
                .ok_or_else(|| OpError::internal("an optimizer target without slots"))?;
            let g = fit_gradient(e, &self.kind, &t.var, g)?;
            let slots = self.slots.get(i).cloned().unwrap_or_default();
            ops::apply_update(e, rule, &t.var, &g, &lr, &iterations, &slots)?;
        }
        let one = Tensor::new(NdArray::from_scalar(Scalar::I64(1)));
        e.assign(&self.iterations, Assign::Add, &one)
    }
}

fn scalar_f32(v: f64) -> NdArray {
    Tensor::scalar(v, DType::F32).value().clone()
}

/// The gradient in the variable's dtype and shape, or the error TensorFlow raises where
/// Keras's update would meet the mismatch: the assignment of plain SGD and Adagrad, the
/// first broadcasting op of the others (a gradient that broadcasts to the variable's
/// shape is broadcast, as their arithmetic does).
fn fit_gradient(e: &mut Eager, kind: &OptKind, var: &Variable, g: &Tensor) -> OpResult<Tensor> {
    let g = if g.dtype() == var.dtype() {
        g.clone()
    } else {
        ops::cast(e, g, var.dtype())?
    };
    let (vs, gs) = (var.shape().to_vec(), g.shape().to_vec());
    if vs == gs {
        return Ok(g);
    }
    let dev = e.device().name();
    let assign_error = |op: &str, shape: &[usize]| {
        OpError::framed(
            op,
            op,
            &dev,
            &format!(
                "Cannot update variable with shape {} using a Tensor with shape {}, shapes must be equal.",
                dims(&vs),
                dims(shape)
            ),
            Some(""),
        )
    };
    match *kind {
        OptKind::Sgd { momentum: 0.0, .. } => return Err(assign_error("AssignSubVariableOp", &gs)),
        OptKind::Adagrad { .. } => return Err(assign_error("AssignAddVariableOp", &gs)),
        _ => {}
    }
    match broadcast_shapes(&gs, &vs).ok() {
        Some(b) if b == vs => ops::broadcast_to(e, &g, &vs),
        Some(b) => Err(assign_error("AssignAddVariableOp", &b)),
        None => {
            let (op, first, second, name) = match kind {
                OptKind::Adam { .. } | OptKind::AdamW { .. } => ("Sub", &gs, &vs, None),
                OptKind::RmsProp { .. } => ("AddV2", &vs, &gs, Some("")),
                _ => ("Sub", &vs, &gs, Some("")),
            };
            Err(OpError::framed(
                op,
                op,
                &dev,
                &format!("Incompatible shapes: {} vs. {}", dims(first), dims(second)),
                name,
            ))
        }
    }
}

/// Keras's gradient clipping (`clipnorm`, `global_clipnorm`, `clipvalue`).
fn clip(e: &mut Eager, how: Clip, grads: Vec<Tensor>) -> OpResult<Vec<Tensor>> {
    match how {
        Clip::None => Ok(grads),
        Clip::Value(v) if v > 0.0 => grads
            .iter()
            .map(|g| {
                let lo = Tensor::scalar(-v, g.dtype());
                let hi = Tensor::scalar(v, g.dtype());
                ops::clip_by_value(e, g, &lo, &hi)
            })
            .collect(),
        Clip::Norm(n) if n > 0.0 => grads
            .iter()
            .map(|g| {
                // Keras's `_clip_by_norm`: g * n / max(|g|, n), with |g| taken as 0 for
                // an all-zero gradient.
                let sq = ops::square(e, g)?;
                let l2sum = ops::reduce_sum(e, &sq, None, true)?;
                let zero = Tensor::scalar(0.0, g.dtype());
                let pos = ops::binary(e, Binary::Greater, &l2sum, &zero)?;
                let ones = ops::ones_like(e, &l2sum)?;
                let safe = ops::select(e, &pos, &l2sum, &ones)?;
                let root = ops::unary(e, Unary::Sqrt, &safe)?;
                let norm = ops::select(e, &pos, &root, &l2sum)?;
                let scaled = ops::scale(e, g, n)?;
                let den = ops::binary(e, Binary::Maximum, &norm, &Tensor::scalar(n, g.dtype()))?;
                ops::div(e, &scaled, &den)
            })
            .collect(),
        Clip::GlobalNorm(n) if n > 0.0 => {
            // TF's `clip_by_global_norm`: every gradient times n / max(global norm, n).
            let mut total: Option<Tensor> = None;
            for g in &grads {
                let sq = ops::square(e, g)?;
                let s = ops::reduce(e, &sq, ReduceKind::Sum, None, false)?;
                let s = ops::cast(e, &s, DType::F32)?;
                total = Some(match total {
                    Some(t) => ops::add(e, &t, &s)?,
                    None => s,
                });
            }
            let Some(total) = total else {
                return Ok(grads);
            };
            let norm = ops::unary(e, Unary::Sqrt, &total)?;
            let den = ops::binary(e, Binary::Maximum, &norm, &f32s(n))?;
            let factor = ops::div(e, &f32s(n), &den)?;
            grads
                .iter()
                .map(|g| {
                    let f = ops::cast(e, &factor, g.dtype())?;
                    ops::mul(e, g, &f)
                })
                .collect()
        }
        _ => Ok(grads),
    }
}

#[cfg(test)]
mod tests {
    //! A graph recorder's view of an optimizer step and a metric update: everything they
    //! do is seen as variable reads, ops and assignments, and replaying the record (the
    //! way a traced function runs again) repeats the update with the current step and
    //! rate, bit for bit as the eager call would.

    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::device::cpu::CpuDevice;
    use crate::device::Device;
    use crate::keras::metrics::{auc_thresholds, Curve, Metric, MetricKind, Summation};
    use crate::ops::{Observer, Op, Saved, TensorId};
    use crate::tensor::NdArray;

    enum Event {
        Read(Variable, TensorId),
        Op(Op, Vec<TensorId>, Vec<TensorId>),
        Assign(Variable, Assign, TensorId),
    }

    /// The events in order, and the value of every tensor no recorded op made (the
    /// captures: gradients, constants).
    #[derive(Default)]
    struct Record {
        events: Vec<Event>,
        made: HashMap<TensorId, ()>,
        captured: HashMap<TensorId, NdArray>,
    }

    struct Recorder(Arc<Mutex<Record>>);

    impl Recorder {
        fn capture(r: &mut Record, t: &Tensor) {
            if !r.made.contains_key(&t.id()) {
                r.captured.insert(t.id(), t.value().clone());
            }
        }
    }

    impl Observer for Recorder {
        fn op(&mut self, op: &Op, inputs: &[Tensor], outputs: &[Tensor], _: Option<&Saved>) {
            let mut r = self.0.lock().unwrap_or_else(|e| e.into_inner());
            for t in inputs {
                Recorder::capture(&mut r, t);
            }
            for t in outputs {
                r.made.insert(t.id(), ());
            }
            let ids = |ts: &[Tensor]| ts.iter().map(Tensor::id).collect();
            r.events
                .push(Event::Op(op.clone(), ids(inputs), ids(outputs)));
        }
        fn read_variable(&mut self, var: &Variable, value: &Tensor) {
            let mut r = self.0.lock().unwrap_or_else(|e| e.into_inner());
            r.made.insert(value.id(), ());
            r.events.push(Event::Read(var.clone(), value.id()));
        }
        fn assign_variable(
            &mut self,
            var: &Variable,
            how: Assign,
            value: &Tensor,
            _: &Arc<NdArray>,
        ) {
            let mut r = self.0.lock().unwrap_or_else(|e| e.into_inner());
            Recorder::capture(&mut r, value);
            r.events.push(Event::Assign(var.clone(), how, value.id()));
        }
    }

    /// Runs `f` with a recorder attached and returns what it saw.
    fn record(e: &mut Eager, f: impl FnOnce(&mut Eager)) -> Record {
        let shared = Arc::new(Mutex::new(Record::default()));
        let id = e.attach(Box::new(Recorder(shared.clone())));
        f(e);
        e.detach(id);
        let mut r = shared.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *r)
    }

    /// Replays a record without a context: reads take the variables' current values, ops
    /// run `Op::forward`, assignments store.
    fn replay(r: &Record, dev: &dyn Device) {
        let mut values: HashMap<TensorId, NdArray> = r.captured.clone();
        for ev in &r.events {
            match ev {
                Event::Read(var, id) => {
                    values.insert(*id, (*var.snapshot()).clone());
                }
                Event::Op(op, ins, outs) => {
                    let args: Vec<&NdArray> = ins.iter().map(|i| &values[i]).collect();
                    let out = op.forward(dev, &args).expect("replayed op").values;
                    for (id, v) in outs.iter().zip(out) {
                        values.insert(*id, v);
                    }
                }
                Event::Assign(var, how, id) => {
                    let v = &values[id];
                    let new = match how {
                        Assign::Set => v.clone(),
                        Assign::Add | Assign::Sub => {
                            let op = if *how == Assign::Add {
                                Binary::Add
                            } else {
                                Binary::Sub
                            };
                            let cur = var.snapshot();
                            let mut out =
                                Op::Binary(op).forward(dev, &[&cur, v]).expect("add").values;
                            out.remove(0)
                        }
                    };
                    var.store(new).expect("store");
                }
            }
        }
    }

    fn array(shape: &[usize], v: &[f32]) -> NdArray {
        NdArray::from_f32(shape, v.to_vec()).expect("array")
    }

    fn bits(v: &Variable) -> Vec<u32> {
        v.snapshot()
            .to_f32_vec()
            .1
            .iter()
            .map(|x| x.to_bits())
            .collect()
    }

    /// Two steps of `make()` on fresh variables, eagerly; and one recorded step then its
    /// replay on another set: the same bits, the same step count.
    fn check_replay(make: impl Fn() -> Optimizer) {
        let mut e = Eager::default();
        let g = [
            Tensor::new(array(&[2, 2], &[0.3, -0.7, 0.05, 1.2])),
            Tensor::new(array(&[2], &[-0.4, 0.9])),
        ];
        let fresh = || {
            [
                Variable::new(array(&[2, 2], &[0.5, -0.2, 0.8, 0.1]), "w:0", true),
                Variable::new(array(&[2], &[0.01, -0.03]), "b:0", true),
            ]
        };
        let targets = |vs: &[Variable; 2]| {
            vs.iter()
                .map(|v| Target {
                    var: v.clone(),
                    name: v.name().to_string(),
                })
                .collect::<Vec<_>>()
        };
        let grads: Vec<Option<Tensor>> = g.iter().cloned().map(Some).collect();
        let (eager_vars, mut eager_opt) = (fresh(), make());
        for _ in 0..2 {
            eager_opt
                .apply(&mut e, &grads, &targets(&eager_vars))
                .expect("step");
        }
        let (vars, mut opt) = (fresh(), make());
        let r = record(&mut e, |e| {
            opt.apply(e, &grads, &targets(&vars))
                .expect("recorded step");
        });
        assert!(r
            .events
            .iter()
            .any(|ev| matches!(ev, Event::Op(Op::Update(_), ..))));
        assert!(r
            .events
            .iter()
            .any(|ev| matches!(ev, Event::Assign(v, Assign::Add, _) if v.same(&opt.iterations))));
        replay(&r, e.device());
        for (a, b) in vars.iter().zip(&eager_vars) {
            assert_eq!(bits(a), bits(b), "{}", a.name());
        }
        for (a, b) in opt.variables().iter().zip(eager_opt.variables().iter()) {
            assert_eq!(
                a.snapshot().to_f64_vec(),
                b.snapshot().to_f64_vec(),
                "{}",
                a.name()
            );
        }
    }

    #[test]
    fn a_replayed_optimizer_step_is_the_eager_step() {
        let kinds = [
            OptKind::Sgd {
                momentum: 0.9,
                nesterov: true,
            },
            OptKind::Adam {
                beta_1: 0.9,
                beta_2: 0.999,
                epsilon: 1e-7,
            },
            OptKind::RmsProp {
                rho: 0.9,
                momentum: 0.5,
                epsilon: 1e-7,
                centered: true,
            },
            OptKind::Adagrad {
                initial_accumulator_value: 0.1,
                epsilon: 1e-7,
            },
        ];
        for kind in kinds {
            check_replay(|| Optimizer::new(kind, "opt", Some(0.05), None));
        }
        // A schedule is computed from the step counter inside the record, so the replay
        // takes the next step's rate.
        check_replay(|| {
            let s = Schedule::ExponentialDecay {
                initial: 0.2,
                decay_steps: 1.0,
                decay_rate: 0.5,
                staircase: false,
            };
            Optimizer::new(
                OptKind::Sgd {
                    momentum: 0.0,
                    nesterov: false,
                },
                "s",
                None,
                Some(s),
            )
        });
    }

    #[test]
    fn the_update_op_is_the_device_step_bit_for_bit() {
        let dev = CpuDevice::new(0);
        let kind = OptKind::Adam {
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-7,
        };
        let cfg = OptimizerConfig {
            kind,
            learning_rate: 0.01,
        };
        let p0 = [0.5f32, -0.2, 0.8, 0.1];
        let g = [0.3f32, -0.7, 0.05, 1.2];
        let mut p = dev.upload(&p0, &[4]).expect("upload");
        let gt = dev.upload(&g, &[4]).expect("upload");
        let mut slots = vec![
            dev.zeros(&[4]).expect("zeros"),
            dev.zeros(&[4]).expect("zeros"),
        ];
        for step in 1..=3 {
            dev.optimizer_step(&cfg.step(0.01, step), &mut p, &gt, &mut slots)
                .expect("step");
        }
        let direct: Vec<u32> = dev
            .download(&p)
            .expect("down")
            .iter()
            .map(|x| x.to_bits())
            .collect();
        let mut e = Eager::default();
        let var = Variable::new(array(&[4], &p0), "v:0", true);
        let mut opt = Optimizer::new(kind, "adam", Some(f64::from(0.01f32)), None);
        let t = [Target {
            var: var.clone(),
            name: "v:0".into(),
        }];
        for _ in 0..3 {
            opt.apply(&mut e, &[Some(Tensor::new(array(&[4], &g)))], &t)
                .expect("apply");
        }
        assert_eq!(bits(&var), direct);
    }

    #[test]
    fn a_replayed_metric_update_is_the_eager_update() {
        let mut e = Eager::default();
        let kinds = [
            MetricKind::Mean,
            MetricKind::Auc {
                thresholds: auc_thresholds(7, None),
                curve: Curve::Roc,
                summation: Summation::Interpolation,
                from_logits: false,
            },
        ];
        let t = Tensor::new(array(&[4], &[1.0, 0.0, 1.0, 1.0]));
        let p = Tensor::new(array(&[4], &[0.8, 0.35, 0.4, 0.9]));
        let w = Tensor::new(array(&[4], &[1.0, 2.0, 0.5, 1.0]));
        for kind in kinds {
            let eager = Metric::new(kind.clone(), "m").expect("metric");
            let traced = Metric::new(kind, "m").expect("metric");
            for _ in 0..2 {
                eager.update(&mut e, &t, &p, Some(&w)).expect("update");
            }
            let r = record(&mut e, |e| {
                traced.update(e, &t, &p, Some(&w)).expect("update")
            });
            assert!(r
                .events
                .iter()
                .all(|ev| !matches!(ev, Event::Assign(_, Assign::Set, _))));
            replay(&r, e.device());
            let (a, b) = (
                eager.result(&mut e).expect("r"),
                traced.result(&mut e).expect("r"),
            );
            assert_eq!(a.value().to_f64_vec(), b.value().to_f64_vec());
        }
    }
}
