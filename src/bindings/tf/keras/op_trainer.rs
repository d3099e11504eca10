//! Training through the op library for every model the compiled engine does not run (a
//! subclass of `tf.keras.Model`, or a model holding a user's layers).
//!
//! [`OpTrainer`] is the engine's `Trainer` seam for such models, so `keras::fit`,
//! `evaluate`, `predict`, the callbacks and the progress display run unchanged. A step runs
//! the model's `call` (Python) under a gradient tape, the compiled loss on the op library
//! (the sum of per-example losses over the global batch, as the engine scales it), the
//! gradients of every trainable variable, and the compiled optimizer's update rule (the
//! device's `optimizer_step`, the one `fit` uses on the engine) written into the variables
//! through the execution context. Under a `MirroredStrategy` the Python runs once per
//! replica, one after another, on that replica's share of the batch and with its copies of
//! the variables (reads inside a replica's step read its copy); the gradients are summed
//! over the replicas in rank order and every replica applies the same update to its own
//! copies, so N replicas take the step one device would and the copies stay identical.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::super::convert::{tensor_of, variable_in};
use super::super::distribute::Strategy;
use super::super::eager::{context, keras_mask_of, op_err, wrap};
use super::layers::base::ensure_core;
use super::layers::call::call_layer;
use super::layers::handle::{layer_weights, LayerHandle};
use super::layers::kerr;
use super::model::{ModelKind, ModelObj};
use super::variable::keras_variable;
use crate::device::cpu::CpuDevice;
use crate::device::{DTensor, Device, LossKind};
use crate::keras::{
    CompileConfig, Head, HostArray, KResult, KerasError, ModelConfig, OptimizerState, Plan,
    StepStats, Trainer, VarSpec,
};
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use crate::ops::{self, Assign, Loss, Source, Tape, Tensor, Unconnected};
use crate::tensor::{DType, NdArray};

/// The interpreter shared by the epoch loop's callbacks and the trainer that runs Python
/// steps: the loop calls one, then the other, never both at once.
pub type SharedCtx<'a> = Rc<RefCell<&'a mut dyn Ctx>>;

/// Runs `f` with the shared interpreter.
pub fn with_ctx<R>(c: &SharedCtx<'_>, f: impl FnOnce(&mut dyn Ctx) -> R) -> R {
    let mut g = c.borrow_mut();
    f(&mut **g)
}

/// The optimizer state of a model trained through the op library: a step counter and the
/// slots of every variable copy (keyed by the copy's handle), kept across `fit` calls
/// until the model is compiled again.
#[derive(Default)]
pub struct OpTraining {
    iterations: u64,
    slots: HashMap<u64, Vec<DTensor>>,
}

impl OpTraining {
    /// The optimizer's step count (`model.optimizer.iterations`).
    pub fn iterations(&self) -> u64 {
        self.iterations
    }
}

/// The model a call to `fit` and friends runs: its interpreter value (the instance for a
/// subclass), its state, and its variables in Keras order.
pub struct OpModel {
    pub this: Value,
    pub mv: Value,
    pub handle: LayerHandle,
}

impl OpModel {
    pub fn new(this: &Value, mv: &Value, ctx: &mut dyn Ctx) -> PyResult<OpModel> {
        let handle = match LayerHandle::of(this, ctx) {
            Some(h) => h,
            None => ensure_core(this, ctx)?,
        };
        Ok(OpModel {
            this: this.clone(),
            mv: mv.clone(),
            handle,
        })
    }

    fn model(&self) -> Option<&ModelObj> {
        self.mv.downcast::<ModelObj>()
    }
}

/// The engine's `Trainer` for a model whose steps run Python.
pub struct OpTrainer<'a> {
    ctx: SharedCtx<'a>,
    model: OpModel,
    config: ModelConfig,
    plan: Plan,
    compile: Option<CompileConfig>,
    /// The strategy and its replica count, when the model was built under one.
    strategy: Option<(Value, usize)>,
    device: CpuDevice,
    /// The shapes of a functional graph's several inputs, whose values lie side by side
    /// in each example's row (see `fit.rs`); empty for a model of one input.
    input_parts: Vec<Vec<usize>>,
    /// The shapes of a functional graph's several outputs (without the batch axis), whose
    /// values lie side by side in each row `predict` gives; empty for a model of one output.
    output_parts: Vec<Vec<usize>>,
    /// A Python error raised inside a step; the loop sees `Interrupted` and stops.
    pub err: Option<PyErr>,
    /// Whether each target row ends in its example's weight (see `keras::sample_weight`).
    sample_weighted: bool,
}

impl<'a> OpTrainer<'a> {
    /// A trainer for `model`, built, with inputs of `input` (without the batch axis).
    pub fn new(ctx: SharedCtx<'a>, model: OpModel, input: &[usize]) -> PyResult<OpTrainer<'a>> {
        let m = model
            .model()
            .ok_or_else(|| PyErr::runtime_error("the model has no state"))?;
        let compile = m.compiled.borrow().clone();
        let output: Vec<usize> = m
            .output_dims()
            .unwrap_or_default()
            .iter()
            .skip(1)
            .map(|d| d.unwrap_or(1))
            .collect();
        let strategy = m
            .created_under
            .borrow()
            .clone()
            .or_else(|| m.scope_at_creation.clone())
            .and_then(|s| {
                let n = s.downcast::<Strategy>().map(|st| st.num_replicas())?;
                Some((s, n))
            });
        // A chain of built-in layers is described as the engine describes its models, so
        // that saving (and a checkpoint callback during `fit`) writes it in Keras's layout;
        // any other model has no such description and is not saved.
        let config = ModelConfig {
            name: m.name(),
            input_shape: input.to_vec(),
            input_name: m.input_name.borrow().clone().unwrap_or_default(),
            layers: m.builtin_chain().unwrap_or_default(),
            functional: m.kind == ModelKind::Functional,
        };
        let plan = Plan {
            in_shapes: vec![],
            out_shapes: vec![output],
            vars: vec![],
            layer_vars: vec![],
        };
        if m.op_training.borrow().is_none() {
            *m.op_training.borrow_mut() = Some(OpTraining::default());
        }
        let input_parts = match m.running_graph() {
            Some(g) if g.inputs.len() > 1 => g.input_features(),
            _ => vec![],
        };
        let output_parts: Vec<Vec<usize>> = match m.running_graph() {
            Some(g) if g.outputs.len() > 1 => super::heads::output_shapes(&g),
            _ => vec![],
        };
        let mut plan = plan;
        if !output_parts.is_empty() {
            let width = output_parts
                .iter()
                .map(|p| p.iter().product::<usize>())
                .sum();
            plan.out_shapes = vec![vec![width]];
        }
        Ok(OpTrainer {
            ctx,
            model,
            config,
            plan,
            compile,
            strategy,
            device: CpuDevice::new(0),
            input_parts,
            output_parts,
            err: None,
            sample_weighted: false,
        })
    }

    fn fail(&mut self, e: PyErr) -> KerasError {
        self.err = Some(e);
        KerasError::Interrupted
    }

    fn replicas(&self) -> usize {
        self.strategy.as_ref().map_or(1, |(_, n)| *n)
    }

    /// The model's input of `rows` examples: one tensor, or a list for several inputs.
    fn inputs(&self, x: &[f32], rows: usize) -> PyResult<Value> {
        if !self.input_parts.is_empty() {
            return Ok(Value::list(split_inputs(x, rows, &self.input_parts)?));
        }
        let mut xs = vec![rows];
        xs.extend(&self.config.input_shape);
        let a = NdArray::from_f32(&xs, x.to_vec()).map_err(super::super::convert::tensor_err)?;
        Ok(wrap(Tensor::new(a)))
    }

    /// The model's output on `x` (run through `model(x, training=...)`).
    fn forward(&self, x: &Value, training: bool, ctx: &mut dyn Ctx) -> PyResult<Tensor> {
        let args = Args::new(vec![x.clone()]).with_kw("training", Value::Bool(training));
        let out = call_layer(&self.model.this, args, ctx)?;
        tensor_of(&out, ctx)
    }

    /// Every output of a model with several on `x`, in output order.
    fn forward_all(&self, x: &Value, training: bool, ctx: &mut dyn Ctx) -> PyResult<Vec<Tensor>> {
        let outs = self.forward_masked(x, training, ctx)?;
        Ok(outs.into_iter().map(|(t, _)| t).collect())
    }

    /// Every output on `x` (one for a model of one output) with the Keras mask it carries,
    /// which the loss reads as Keras's does.
    fn forward_masked(
        &self,
        x: &Value,
        training: bool,
        ctx: &mut dyn Ctx,
    ) -> PyResult<Vec<(Tensor, Option<Tensor>)>> {
        let args = Args::new(vec![x.clone()]).with_kw("training", Value::Bool(training));
        let out = call_layer(&self.model.this, args, ctx)?;
        let items = match &out {
            Value::Dict(d) => d.borrow().items().map(|(_, v)| v.clone()).collect(),
            Value::List(_) | Value::Tuple(_) => out.as_seq().unwrap_or_default(),
            other => vec![other.clone()],
        };
        items
            .iter()
            .map(|t| Ok((tensor_of(t, ctx)?, keras_mask_of(t))))
            .collect()
    }

    /// Loss and metric sums of one replica's share, and (when `sources`) the gradients of
    /// the summed loss over `global` examples for each of `sources`. Each output's loss
    /// reads its output and its slice of the target row, and the losses are weighted and
    /// summed as Keras sums them; a model of one output is one head of weight 1.
    fn share(
        &self,
        x: &[f32],
        y: &[f32],
        rows: usize,
        global: usize,
        sources: Option<&[Value]>,
        ctx: &mut dyn Ctx,
    ) -> PyResult<(StepStats, Vec<Option<Tensor>>)> {
        let compile = self
            .compile
            .as_ref()
            .ok_or_else(|| kerr(KerasError::NotCompiled("training")))?;
        let (y, weights) = match self.sample_weighted {
            true => {
                let (t, w) = crate::keras::sample_weight::split(y, rows).map_err(kerr)?;
                (std::borrow::Cow::Owned(t), Some(w))
            }
            false => (std::borrow::Cow::Borrowed(y), None),
        };
        let y: &[f32] = &y;
        let one;
        let heads: &[Head] = match compile.heads.is_empty() {
            true => {
                one = [Head {
                    name: String::new(),
                    loss: compile.loss,
                    weight: 1.0,
                    target: y.len().checked_div(rows).unwrap_or(0),
                    metrics: compile.metrics.clone(),
                }];
                &one
            }
            false => &compile.heads,
        };
        let widths: Vec<usize> = heads.iter().map(|h| h.target).collect();
        let per_row: usize = widths.iter().sum();
        if rows > 0 && y.len() != rows * per_row {
            return Err(PyErr::value_error(format!(
                "The targets hold {} values per example; the outputs {:?} with their losses \
                 read {per_row} ({widths:?}).",
                y.len() / rows,
                heads.iter().map(|h| h.name.as_str()).collect::<Vec<_>>()
            )));
        }
        let targets = split_rows(y, rows, &widths);
        let xt = self.inputs(x, rows)?;
        let ((outs, head_sums, factors), grads) = recorded(sources, ctx, |recording, ctx| {
            let masked = self.forward_masked(&xt, recording, ctx)?;
            let outs: Vec<Tensor> = masked.iter().map(|(t, _)| t.clone()).collect();
            let masks: Vec<Option<Tensor>> = masked.into_iter().map(|(_, m)| m).collect();
            let replicas = self.replicas();
            let e = context(ctx);
            let mut head_sums = Vec::with_capacity(heads.len());
            let mut factors = Vec::with_capacity(heads.len());
            let mut total: Option<Tensor> = None;
            for (i, ((h, out), (t, w))) in heads
                .iter()
                .zip(&outs)
                .zip(targets.iter().zip(&widths))
                .enumerate()
            {
                // The output's shape, else one label per example (a sparse loss reads
                // `[rows]`), else a row of `w` values.
                let mut shape = vec![rows];
                if *w == out.shape().iter().skip(1).product::<usize>() {
                    shape.extend(out.shape().iter().skip(1));
                } else if *w != 1 {
                    shape.push(*w);
                }
                let a = NdArray::from_f32(&shape, t.clone())
                    .map_err(super::super::convert::tensor_err)?;
                let a = if sparse(h.loss) {
                    a.astype(DType::I64)
                } else {
                    a
                };
                let per = ops::loss(e, Loss::from_device(h.loss), &Tensor::new(a), out)
                    .map_err(op_err)?;
                // Each example's losses count its weight times (Keras multiplies before it
                // sums, and still divides by the number of examples).
                let per = match &weights {
                    Some(w) => {
                        let k = (per.size() / rows.max(1)).max(1);
                        let each: Vec<f32> =
                            w.iter().flat_map(|v| std::iter::repeat_n(*v, k)).collect();
                        let wt = NdArray::from_f32(per.shape(), each)
                            .map_err(super::super::convert::tensor_err)?;
                        ops::mul(e, &per, &Tensor::new(wt)).map_err(op_err)?
                    }
                    None => per,
                };
                // A loss of several values per example (a sequence's) counts as their mean.
                let per_factor = (per.size() / rows.max(1)).max(1);
                let mask = masks.get(i).cloned().flatten();
                let (scaled, s) = match mask.filter(|m| m.shape() == per.shape()) {
                    // Keras's masked loss is the mean over the values the output's mask
                    // keeps in this share (zero when it keeps none), divided by the
                    // replicas as TF's strategy divides every loss; it is logged as that
                    // mean for each of the share's rows.
                    Some(m) => {
                        let weights = ops::cast(e, &m, per.dtype()).map_err(op_err)?;
                        let kept = ops::mul(e, &per, &weights).map_err(op_err)?;
                        let sum = ops::reduce_sum(e, &kept, None, false).map_err(op_err)?;
                        let valid: f64 = weights.value().to_f64_vec().1.iter().sum();
                        let mean = if valid > 0.0 { 1.0 / valid } else { 0.0 };
                        let scale = f64::from(h.weight) * mean / replicas.max(1) as f64;
                        let logged: f64 = kept.value().to_f64_vec().1.iter().sum::<f64>() * mean;
                        (
                            ops::scale(e, &sum, scale).map_err(op_err)?,
                            logged * rows as f64,
                        )
                    }
                    None => {
                        let sum = ops::reduce_sum(e, &per, None, false).map_err(op_err)?;
                        let scale = f64::from(h.weight) / (global.max(1) * per_factor) as f64;
                        let logged: f64 = per.value().to_f64_vec().1.iter().sum::<f64>();
                        (
                            ops::scale(e, &sum, scale).map_err(op_err)?,
                            logged / per_factor as f64,
                        )
                    }
                };
                total = Some(match total {
                    None => scaled,
                    Some(acc) => ops::add(e, &acc, &scaled).map_err(op_err)?,
                });
                head_sums.push(s);
                factors.push(per_factor as f64);
            }
            Ok(((outs, head_sums, factors), total))
        })?;
        let loss_sum = heads
            .iter()
            .zip(&head_sums)
            .map(|(h, s)| f64::from(h.weight) * s)
            .sum();
        // Laid out as `CompileConfig::metrics`: with several outputs the outputs' losses,
        // then each output's metrics.
        let mut metric_sums = match compile.heads.is_empty() {
            true => vec![],
            false => head_sums.clone(),
        };
        for (i, h) in heads.iter().enumerate() {
            let (Some(out), Some(t), Some(f)) = (outs.get(i), targets.get(i), factors.get(i))
            else {
                continue;
            };
            let (_, pred) = out.value().to_f32_vec();
            let cols = out.shape().last().copied().unwrap_or(1);
            let ones = vec![1.0; rows];
            for (j, (_, m)) in h.metrics.iter().enumerate() {
                // Only a model of one output has weighted metrics; its head's metrics are
                // the compiled ones, in order.
                let weighted = compile.heads.is_empty() && compile.is_weighted(j);
                let w = weighted.then_some(weights.as_deref().unwrap_or(&ones));
                m.accumulate(&pred, t, cols, *f, w, &mut metric_sums)
                    .map_err(kerr)?;
            }
        }
        let stats = StepStats {
            loss_sum,
            metric_sums,
            count: rows,
        };
        Ok((stats, grads))
    }

    /// Runs `f` as replica `r` of the model's strategy (its variable copies read).
    fn as_replica<R>(
        &self,
        r: usize,
        ctx: &mut dyn Ctx,
        f: impl FnOnce(&mut dyn Ctx) -> PyResult<R>,
    ) -> PyResult<R> {
        match &self.strategy {
            Some((s, _)) => super::super::distribute::as_replica(ctx, s, r, f),
            None => f(ctx),
        }
    }

    /// Runs `f(x rows, first row, rows, ctx)` as each replica on its share of a batch of
    /// `batch` examples, as TensorFlow splits `evaluate`'s and `predict`'s batches: a layer
    /// whose copies differ between replicas (a batch normalization's moving statistics)
    /// gives each share its replica's answer.
    fn each_share(
        &self,
        x: &[f32],
        batch: usize,
        ctx: &mut dyn Ctx,
        mut f: impl FnMut(&[f32], usize, usize, &mut dyn Ctx) -> PyResult<()>,
    ) -> PyResult<()> {
        let x_per = x.len().checked_div(batch).unwrap_or(0);
        let sizes = crate::distribute::split::split_sizes(batch, self.replicas());
        let mut start = 0;
        for (r, rows) in sizes.iter().copied().enumerate() {
            if rows == 0 {
                continue;
            }
            let xs = x.get(start * x_per..(start + rows) * x_per).unwrap_or(&[]);
            self.as_replica(r, ctx, |ctx| f(xs, start, rows, ctx))?;
            start += rows;
        }
        Ok(())
    }

    fn step(&mut self, x: &[f32], y: &[f32], batch: usize) -> PyResult<StepStats> {
        let (x_per, y_per) = (
            self.config.input_shape.iter().product::<usize>(),
            y.len().checked_div(batch).unwrap_or(0),
        );
        let ctx_cell = self.ctx.clone();
        let mut g = ctx_cell.borrow_mut();
        let ctx: &mut dyn Ctx = &mut **g;
        let vars = layer_weights(&self.model.handle, ctx, Some(true))?;
        let sizes = crate::distribute::split::split_sizes(batch, self.replicas());
        let mut total = StepStats::default();
        let mut sum: Vec<Option<Vec<f32>>> = vec![None; vars.len()];
        let mut start = 0;
        for (r, rows) in sizes.iter().copied().enumerate() {
            if rows == 0 {
                continue;
            }
            let xs = x.get(start * x_per..(start + rows) * x_per).unwrap_or(&[]);
            let ys = y.get(start * y_per..(start + rows) * y_per).unwrap_or(&[]);
            start += rows;
            let (stats, grads) = self.as_replica(r, ctx, |ctx| {
                self.share(xs, ys, rows, batch, Some(&vars), ctx)
            })?;
            total.add(&stats);
            // Summed in rank order, as the all-reduce sums, so every run adds alike.
            for (acc, g) in sum.iter_mut().zip(grads) {
                let Some(g) = g else { continue };
                let (_, g) = g.value().to_f32_vec();
                match acc {
                    None => *acc = Some(g),
                    Some(a) => a.iter_mut().zip(&g).for_each(|(a, b)| *a += *b),
                }
            }
        }
        self.apply(&vars, &sum, ctx)?;
        Ok(total)
    }

    /// The optimizer's update of every variable copy with the summed gradients.
    fn apply(&self, vars: &[Value], grads: &[Option<Vec<f32>>], ctx: &mut dyn Ctx) -> PyResult<()> {
        let Some(m) = self.model.model() else {
            return Ok(());
        };
        let Some(compile) = self.compile.as_ref() else {
            return Err(kerr(KerasError::NotCompiled("training")));
        };
        let lr = m
            .compiled
            .borrow()
            .as_ref()
            .map_or(compile.optimizer.learning_rate, |c| {
                c.optimizer.learning_rate
            });
        let mut training = m.op_training.borrow_mut();
        let state = training.get_or_insert_with(OpTraining::default);
        let step = compile.optimizer.step(lr, state.iterations + 1);
        let init = compile.optimizer.slot_init();
        let dev: &dyn Device = &self.device;
        for (v, g) in vars.iter().zip(grads) {
            let (Some(k), Some(gdata)) = (keras_variable(v), g) else {
                continue;
            };
            for copy in k.copies() {
                let shape = copy.shape().to_vec();
                let slots = match state.slots.entry(copy.handle().raw()) {
                    std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        let n = step.slots();
                        let len: usize = shape.iter().product();
                        let mut s = Vec::with_capacity(n);
                        for _ in 0..n {
                            s.push(dev.upload(&vec![init; len], &shape).map_err(dev_err)?);
                        }
                        e.insert(s)
                    }
                };
                let (_, pdata) = copy.snapshot().to_f32_vec();
                let mut p = dev.upload(&pdata, &shape).map_err(dev_err)?;
                let gt = dev.upload(gdata, &shape).map_err(dev_err)?;
                dev.optimizer_step(&step, &mut p, &gt, slots)
                    .map_err(dev_err)?;
                let new = NdArray::from_f32(&shape, dev.download(&p).map_err(dev_err)?)
                    .map_err(super::super::convert::tensor_err)?
                    .astype(copy.dtype());
                context(ctx)
                    .assign(&copy, Assign::Set, &Tensor::new(new))
                    .map_err(op_err)?;
            }
        }
        state.iterations += 1;
        Ok(())
    }
}

impl OpTrainer<'_> {
    /// The variables the optimizer updates, in Keras order: those of the model's
    /// description that train (a batch normalization's moving statistics do not), paired
    /// with their specs; for a model without a description, every trainable variable.
    fn optimized_vars(&self, ctx: &mut dyn Ctx) -> PyResult<Vec<(Value, VarSpec)>> {
        let vars = layer_weights(&self.model.handle, ctx, None)?;
        if self.config.layers.is_empty() {
            // A graph or a subclass: the variables that train, in the model's order, as
            // Keras's `trainable_variables` lists them for the optimizer.
            return Ok(vars
                .into_iter()
                .filter_map(|v| {
                    let k = keras_variable(&v)?;
                    let shape = k.primary()?.shape().to_vec();
                    k.trainable().then(|| {
                        let spec = VarSpec {
                            name: String::new(),
                            path: String::new(),
                            layer: 0,
                            shape,
                            init: crate::keras::Init::Zeros,
                            fans: (0, 0),
                            trainable: true,
                        };
                        (v.clone(), spec)
                    })
                })
                .collect());
        }
        let plan = self.config.plan().map_err(kerr)?;
        if vars.len() != plan.vars.len() {
            return Err(PyErr::value_error(format!(
                "The model has {} variables but its description lists {}.",
                vars.len(),
                plan.vars.len()
            )));
        }
        Ok(vars
            .into_iter()
            .zip(plan.vars)
            .filter(|(_, spec)| spec.trainable)
            .collect())
    }

    /// The step counter and, per trainable variable, the slots of its first copy (the
    /// copies hold the same values); a variable not yet stepped has the slots' start value.
    fn read_optimizer(&self, ctx: &mut dyn Ctx) -> PyResult<OptimizerState> {
        let Some(m) = self.model.model() else {
            return Ok(OptimizerState::default());
        };
        let Some(compile) = self.compile.as_ref() else {
            return Ok(OptimizerState::default());
        };
        let n = compile
            .optimizer
            .step(compile.optimizer.learning_rate, 1)
            .slots();
        let init = compile.optimizer.slot_init();
        let training = m.op_training.borrow();
        let mut slots = vec![];
        for (v, spec) in self.optimized_vars(ctx)? {
            let copy = keras_variable(&v).and_then(|k| k.primary());
            let held = copy.and_then(|c| training.as_ref()?.slots.get(&c.handle().raw()));
            let len: usize = spec.shape.iter().product();
            let mut per = Vec::with_capacity(n);
            for k in 0..n {
                let data = match held.and_then(|h| h.get(k)) {
                    Some(t) => self.device.download(t).map_err(dev_err)?,
                    None => vec![init; len],
                };
                per.push(HostArray::new(spec.shape.clone(), data));
            }
            slots.push(per);
        }
        Ok(OptimizerState {
            iterations: training.as_ref().map_or(0, |t| t.iterations),
            slots,
        })
    }

    /// Restores a saved optimizer state into every copy of every trainable variable, so the
    /// next step is the one the saved model would have taken.
    fn write_optimizer(&self, state: &OptimizerState, ctx: &mut dyn Ctx) -> PyResult<()> {
        let Some(m) = self.model.model() else {
            return Ok(());
        };
        let vars = self.optimized_vars(ctx)?;
        if vars.len() != state.slots.len() {
            return Err(PyErr::value_error(format!(
                "The saved optimizer state holds {} variables and the model trains {}.",
                state.slots.len(),
                vars.len()
            )));
        }
        let dev: &dyn Device = &self.device;
        let mut training = OpTraining {
            iterations: state.iterations,
            slots: HashMap::new(),
        };
        for ((v, spec), saved) in vars.iter().zip(&state.slots) {
            let Some(k) = keras_variable(v) else { continue };
            for copy in k.copies() {
                let slots = saved
                    .iter()
                    .map(|s| dev.upload(&s.data, &spec.shape).map_err(dev_err))
                    .collect::<PyResult<Vec<_>>>()?;
                training.slots.insert(copy.handle().raw(), slots);
            }
        }
        *m.op_training.borrow_mut() = Some(training);
        Ok(())
    }
}

/// Runs `f` (a forward pass and its loss: it returns its results and the loss to
/// differentiate) under a tape when `sources` are given, and gives the gradients of that
/// loss for each of `sources` (none without them).
fn recorded<R>(
    sources: Option<&[Value]>,
    ctx: &mut dyn Ctx,
    f: impl FnOnce(bool, &mut dyn Ctx) -> PyResult<(R, Option<Tensor>)>,
) -> PyResult<(R, Vec<Option<Tensor>>)> {
    let tape = Tape::new(false, true).shared();
    let recording = sources.is_some();
    if recording {
        context(ctx).push_tape(tape.clone());
    }
    let result = f(recording, ctx);
    if recording {
        context(ctx).pop_tape(&tape);
    }
    let (r, loss) = result?;
    let grads = match (sources, loss) {
        (Some(vars), Some(loss)) => {
            let srcs: Vec<Source> = vars
                .iter()
                .filter_map(|v| variable_in(v, ctx))
                .map(Source::Variable)
                .collect();
            context(ctx)
                .gradient(&tape, &[loss], &srcs, None, Unconnected::None)
                .map_err(op_err)?
        }
        _ => vec![],
    };
    Ok((r, grads))
}

/// The parts of `rows` rows that each hold parts of `sizes` values side by side: one
/// `rows * size` buffer per part.
pub fn split_rows(x: &[f32], rows: usize, sizes: &[usize]) -> Vec<Vec<f32>> {
    let per: usize = sizes.iter().sum();
    let mut out = Vec::with_capacity(sizes.len());
    let mut at = 0;
    for size in sizes {
        let mut data = Vec::with_capacity(rows * size);
        for r in 0..rows {
            let start = r * per + at;
            data.extend_from_slice(x.get(start..start + size).unwrap_or(&[]));
        }
        at += size;
        out.push(data);
    }
    out
}

/// The inputs of `rows` examples whose values lie side by side in each row of `x`, one
/// tensor per input of `parts` shapes.
fn split_inputs(x: &[f32], rows: usize, parts: &[Vec<usize>]) -> PyResult<Vec<Value>> {
    let sizes: Vec<usize> = parts.iter().map(|p| p.iter().product()).collect();
    let mut out = Vec::with_capacity(parts.len());
    for (shape, data) in parts.iter().zip(split_rows(x, rows, &sizes)) {
        let mut dims = vec![rows];
        dims.extend(shape);
        let a = NdArray::from_f32(&dims, data).map_err(super::super::convert::tensor_err)?;
        out.push(wrap(Tensor::new(a)));
    }
    Ok(out)
}

fn dev_err(e: crate::device::DeviceError) -> PyErr {
    kerr(KerasError::Device(e))
}

fn sparse(k: LossKind) -> bool {
    matches!(k, LossKind::SparseCategoricalCrossentropy { .. })
}

impl Trainer for OpTrainer<'_> {
    fn config(&self) -> &ModelConfig {
        &self.config
    }
    fn plan(&self) -> &Plan {
        &self.plan
    }
    fn compiled(&self) -> Option<&CompileConfig> {
        self.compile.as_ref()
    }
    fn check_batch(&self, x: &[f32], y: Option<&[f32]>, batch: usize) -> KResult<()> {
        let x_per: usize = self.config.input_shape.iter().product();
        if x.len() != batch * x_per {
            return Err(KerasError::Value(format!(
                "Input data has {} values, expected {batch} examples of shape {:?}",
                x.len(),
                self.config.input_shape
            )));
        }
        if let Some(y) = y {
            if batch > 0 && y.len() % batch != 0 {
                return Err(KerasError::Value(format!(
                    "Target data has {} values, which is not a whole number per example for \
                     {batch} examples",
                    y.len()
                )));
            }
        }
        Ok(())
    }
    fn train_batch(&mut self, x: &[f32], y: &[f32], batch: usize) -> KResult<StepStats> {
        match self.step(x, y, batch) {
            Ok(s) => Ok(s),
            Err(e) => Err(self.fail(e)),
        }
    }
    fn eval_batch(&mut self, x: &[f32], y: &[f32], batch: usize) -> KResult<StepStats> {
        let ctx_cell = self.ctx.clone();
        let r = {
            let mut g = ctx_cell.borrow_mut();
            let ctx: &mut dyn Ctx = &mut **g;
            let y_per = y.len().checked_div(batch).unwrap_or(0);
            let mut total = StepStats::default();
            self.each_share(x, batch, ctx, |xs, at, rows, ctx| {
                let ys = y.get(at * y_per..(at + rows) * y_per).unwrap_or(&[]);
                let (stats, _) = self.share(xs, ys, rows, batch, None, ctx)?;
                total.add(&stats);
                Ok(())
            })
            .map(|()| total)
        };
        r.map_err(|e| self.fail(e))
    }
    fn predict_batch(&mut self, x: &[f32], batch: usize) -> KResult<Vec<f32>> {
        let ctx_cell = self.ctx.clone();
        let r = {
            let mut g = ctx_cell.borrow_mut();
            let ctx: &mut dyn Ctx = &mut **g;
            let mut out = vec![];
            self.each_share(x, batch, ctx, |xs, _, rows, ctx| {
                let xt = self.inputs(xs, rows)?;
                if self.output_parts.is_empty() {
                    let t = self.forward(&xt, false, ctx)?;
                    out.extend(t.value().to_f32_vec().1);
                    return Ok(());
                }
                // Each example's outputs side by side in its row, as `fit.rs` splits them.
                let outs: Vec<Vec<f32>> = self
                    .forward_all(&xt, false, ctx)?
                    .iter()
                    .map(|t| t.value().to_f32_vec().1)
                    .collect();
                for r in 0..rows {
                    for o in &outs {
                        let k = o.len().checked_div(rows).unwrap_or(0);
                        out.extend_from_slice(o.get(r * k..(r + 1) * k).unwrap_or(&[]));
                    }
                }
                Ok(())
            })
            .map(|()| out)
        };
        r.map_err(|e| self.fail(e))
    }
    fn get_weights(&self) -> KResult<Vec<HostArray>> {
        let r = with_ctx(&self.ctx, |ctx| {
            let m = self
                .model
                .model()
                .ok_or_else(|| PyErr::runtime_error("the model has no state"))?;
            m.host_weights(&self.model.this, ctx)
        });
        r.map_err(|e| KerasError::Value(e.to_string()))
    }
    fn set_weights(&mut self, weights: &[HostArray]) -> KResult<()> {
        let r = with_ctx(&self.ctx, |ctx| {
            let vars = layer_weights(&self.model.handle, ctx, None)?;
            for (v, w) in vars.iter().zip(weights) {
                if let Some(k) = keras_variable(v) {
                    let a = NdArray::from_f32(&w.shape, w.data.clone())
                        .map_err(super::super::convert::tensor_err)?;
                    k.store(&a)?;
                }
            }
            Ok::<_, PyErr>(())
        });
        r.map_err(|e| KerasError::Value(e.to_string()))
    }
    fn optimizer_state(&self) -> KResult<OptimizerState> {
        let r = with_ctx(&self.ctx, |ctx| self.read_optimizer(ctx));
        r.map_err(|e| KerasError::Value(e.to_string()))
    }
    fn set_optimizer_state(&mut self, state: &OptimizerState) -> KResult<()> {
        let r = with_ctx(&self.ctx, |ctx| self.write_optimizer(state, ctx));
        r.map_err(|e| KerasError::Value(e.to_string()))
    }
    fn learning_rate(&self) -> f32 {
        self.model
            .model()
            .and_then(|m| {
                m.compiled
                    .borrow()
                    .as_ref()
                    .map(|c| c.optimizer.learning_rate)
            })
            .or(self.compile.as_ref().map(|c| c.optimizer.learning_rate))
            .unwrap_or(0.0)
    }
    fn set_learning_rate(&mut self, lr: f32) {
        if let Some(m) = self.model.model() {
            if let Some(c) = m.compiled.borrow_mut().as_mut() {
                c.optimizer.learning_rate = lr;
            }
        }
    }
    fn set_sample_weighted(&mut self, on: bool) -> KResult<()> {
        self.sample_weighted = on;
        Ok(())
    }
    fn sample_weighted(&self) -> bool {
        self.sample_weighted
    }
}
