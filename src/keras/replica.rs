//! One replica of a model: a device, its own copy of every variable, the optimizer slots
//! and the scratch buffers of a forward and backward pass. `train_step` runs forward, the
//! per-example loss with gradients scaled by 1/global batch, backward into per-variable
//! gradients, the caller's all-reduce on those tensors as one reduction (the tensors are not
//! copied into one buffer first), then the optimizer on every variable. With one replica and no reduction this is single-device
//! Keras. The layer arithmetic is in `layers.rs`; this file owns state and the step order.

use super::compile::CompileConfig;
use super::config::{Act, LayerKind, ModelConfig, Plan};
use super::error::{KResult, KerasError};
use super::init::HostArray;
use super::layers::{self, Buffers, Fuse, Input};
use super::sample_weight;
use super::trainer::Rows;
use super::validate::{check_data, check_weight};
use crate::device::{Activation, DResult, DTensor, Device, LossKind};
use std::borrow::Cow;

/// The all-reduce hook a caller passes to `train_step`: it must leave the element-wise sum
/// over all replicas in every gradient tensor (the distribute part wraps
/// `AllReduce::all_reduce_sum_many`).
pub type GradSync<'a> = &'a dyn Fn(&mut [DTensor], &dyn Device) -> DResult<()>;

/// A batch's targets (borrowed when they carry no weights) and its examples' weights.
type Targets<'a> = (Cow<'a, [f32]>, Option<Vec<f32>>);

/// What one step measured on this replica's share of the batch. Sums, not means, so the
/// caller can add replicas together and divide by the global count.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepStats {
    pub loss_sum: f64,
    /// Each compiled metric's state, in compile order, laid end to end: one sum for a
    /// running mean, the counts at every threshold for a confusion metric (see
    /// `Metric::state_len`). Every entry adds across batches and replicas.
    pub metric_sums: Vec<f64>,
    pub count: usize,
}

impl StepStats {
    /// Adds another replica's (or batch's) sums into this one.
    pub fn add(&mut self, other: &StepStats) {
        self.loss_sum += other.loss_sum;
        if self.metric_sums.len() < other.metric_sums.len() {
            self.metric_sums.resize(other.metric_sums.len(), 0.0);
        }
        for (a, b) in self.metric_sums.iter_mut().zip(&other.metric_sums) {
            *a += *b;
        }
        self.count += other.count;
    }
}

/// The optimizer's state on the host: its step counter and every slot, per trainable
/// variable in Keras order (the variables the optimizer updates).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OptimizerState {
    pub iterations: u64,
    pub slots: Vec<Vec<HostArray>>,
}

/// How many sets of scratch buffers a replica keeps (see `Replica::bufs`).
const BUFFER_SETS: usize = 2;

/// The most examples an inference pass runs at once; larger batches go in slices of this
/// many, so the intermediate tensors of a convolution stay in cache.
const INFER_CHUNK: usize = 64;

pub struct Replica {
    device: Box<dyn Device>,
    config: ModelConfig,
    plan: Plan,
    compile: Option<CompileConfig>,
    params: Vec<DTensor>,
    grads: Vec<DTensor>,
    slots: Vec<Vec<DTensor>>,
    iterations: u64,
    learning_rate: f32,
    /// Scratch buffers of the last two batch sizes used, most recent last: an epoch's
    /// short last batch and validation or predict batches do not reallocate the full-size
    /// training buffers every epoch.
    bufs: Vec<Buffers>,
    /// Mixed into dropout seeds so replicas draw different masks for different examples.
    rank: u64,
    seed: u64,
    /// Whether each target row ends in its example's weight (see `sample_weight.rs`).
    sample_weighted: bool,
}

impl Replica {
    /// Builds a replica on `device` from the model description and its weights (Keras
    /// order, as `initial_weights` or `get_weights` return them).
    pub fn new(
        config: &ModelConfig,
        weights: &[HostArray],
        device: Box<dyn Device>,
    ) -> KResult<Replica> {
        let plan = config.plan()?;
        if weights.len() != plan.vars.len() {
            return Err(KerasError::Value(format!(
                "You called `set_weights(weights)` on model '{}' with a weight list of length {}, but the model was expecting {} weights.",
                config.name,
                weights.len(),
                plan.vars.len()
            )));
        }
        let mut params = Vec::with_capacity(weights.len());
        let mut grads = Vec::with_capacity(weights.len());
        for (v, w) in plan.vars.iter().zip(weights) {
            check_weight(&v.path, &v.shape, w)?;
            params.push(device.upload(&w.data, &v.shape)?);
            grads.push(device.zeros(&v.shape)?);
        }
        Ok(Replica {
            device,
            config: config.clone(),
            plan,
            compile: None,
            params,
            grads,
            slots: vec![],
            iterations: 0,
            learning_rate: 0.0,
            bufs: Vec::new(),
            rank: 0,
            seed: 0x5EED,
            sample_weighted: false,
        })
    }

    /// Sets the rank and base seed that dropout mixes into its masks.
    pub fn set_rank(&mut self, rank: usize, seed: u64) {
        self.rank = rank as u64;
        self.seed = seed;
    }

    /// Fixes loss, optimizer and metrics, and creates fresh optimizer slots.
    pub fn compile(&mut self, compile: &CompileConfig) -> KResult<()> {
        let opt = compile.optimizer;
        let n = opt.step(opt.learning_rate, 1).slots();
        let init = opt.slot_init();
        let mut slots = Vec::with_capacity(self.params.len());
        for v in &self.plan.vars {
            let len: usize = v.shape.iter().product();
            let mut s = Vec::with_capacity(n);
            for _ in 0..n {
                s.push(self.device.upload(&vec![init; len], &v.shape)?);
            }
            slots.push(s);
        }
        self.slots = slots;
        // The loss decides the targets' shape and whether it reads the logits.
        self.bufs.clear();
        self.iterations = 0;
        self.learning_rate = opt.learning_rate;
        self.compile = Some(compile.clone());
        Ok(())
    }

    pub fn device(&self) -> &dyn Device {
        self.device.as_ref()
    }
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }
    pub fn plan(&self) -> &Plan {
        &self.plan
    }
    pub fn compiled(&self) -> Option<&CompileConfig> {
        self.compile.as_ref()
    }
    pub fn learning_rate(&self) -> f32 {
        self.learning_rate
    }
    /// Changes the learning rate from the next step on (schedulers, callbacks).
    pub fn set_learning_rate(&mut self, lr: f32) {
        self.learning_rate = lr;
    }
    /// Whether target rows end in their example's weight, from now until told otherwise.
    pub fn set_sample_weighted(&mut self, on: bool) {
        self.sample_weighted = on;
    }
    pub fn sample_weighted(&self) -> bool {
        self.sample_weighted
    }

    /// The targets of `batch` examples and, when they carry them, their weights.
    fn targets<'a>(&self, y: &'a [f32], batch: usize) -> KResult<Targets<'a>> {
        if !self.sample_weighted {
            return Ok((Cow::Borrowed(y), None));
        }
        let (t, w) = sample_weight::split(y, batch)?;
        Ok((Cow::Owned(t), Some(w)))
    }

    /// How many optimizer steps have been applied (`optimizer.iterations`).
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    pub fn get_weights(&self) -> KResult<Vec<HostArray>> {
        self.params
            .iter()
            .map(|p| Ok(HostArray::new(p.shape.clone(), self.device.download(p)?)))
            .collect()
    }

    pub fn set_weights(&mut self, weights: &[HostArray]) -> KResult<()> {
        if weights.len() != self.params.len() {
            return Err(KerasError::Value(format!(
                "You called `set_weights(weights)` on model '{}' with a weight list of length {}, but the model was expecting {} weights.",
                self.config.name,
                weights.len(),
                self.params.len()
            )));
        }
        for (v, w) in self.plan.vars.iter().zip(weights) {
            check_weight(&v.path, &v.shape, w)?;
        }
        for (p, w) in self.params.iter_mut().zip(weights) {
            self.device.write(&w.data, p)?;
        }
        Ok(())
    }

    pub fn optimizer_state(&self) -> KResult<OptimizerState> {
        let mut slots = Vec::with_capacity(self.slots.len());
        for s in &self.slots {
            let mut v = Vec::with_capacity(s.len());
            for t in s {
                v.push(HostArray::new(t.shape.clone(), self.device.download(t)?));
            }
            slots.push(v);
        }
        Ok(OptimizerState {
            iterations: self.iterations,
            slots,
        })
    }

    pub fn set_optimizer_state(&mut self, state: &OptimizerState) -> KResult<()> {
        let fits = state.slots.len() == self.slots.len()
            && state.slots.iter().zip(&self.slots).all(|(a, b)| {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.data.len() == y.len())
            });
        if !fits {
            return Err(KerasError::Value(
                "The optimizer state does not match this model's optimizer and variables.".into(),
            ));
        }
        for (a, b) in state.slots.iter().zip(self.slots.iter_mut()) {
            for (x, y) in a.iter().zip(b.iter_mut()) {
                self.device.write(&x.data, y)?;
            }
        }
        self.iterations = state.iterations;
        Ok(())
    }

    /// Checks that `x` and `y` fit the model for `batch` examples, with Keras's messages.
    /// Callers running several replicas should call this before splitting the batch, so no
    /// replica fails alone while the others wait in the all-reduce.
    pub fn check_batch(&self, x: &[f32], y: Option<&[f32]>, batch: usize) -> KResult<()> {
        let targets = match y {
            Some(y) => Some(self.targets(y, batch)?.0),
            None => None,
        };
        let c = self.compile.as_ref();
        check_data(&self.config, &self.plan, c, x, targets.as_deref(), batch)
    }

    /// Buffers for `batch` examples, with gradients when `train`.
    fn buffers(&mut self, batch: usize, train: bool) -> KResult<()> {
        let fuse = self.fuse();
        let fits = |b: &Buffers| b.batch == batch && b.fuse == fuse && (b.train || !train);
        if let Some(at) = self.bufs.iter().position(fits) {
            let b = self.bufs.remove(at);
            self.bufs.push(b);
            return Ok(());
        }
        if self.bufs.len() >= BUFFER_SETS {
            // Free the oldest before allocating, so that peak memory holds two sets at most.
            self.bufs.remove(0);
        }
        let b = Buffers::new(
            self.device.as_ref(),
            &self.config,
            &self.plan,
            batch,
            fuse,
            self.compile.as_ref().map(|c| c.loss),
            train,
        )?;
        self.bufs.push(b);
        Ok(())
    }

    /// Whether the loss reads the logits before the last softmax/sigmoid, as Keras's
    /// TensorFlow backend does for cross-entropies on a softmax or sigmoid output.
    fn fuse(&self) -> Fuse {
        let Some(c) = &self.compile else {
            return Fuse::None;
        };
        let Some(last) = self.config.layers.last() else {
            return Fuse::None;
        };
        let matches = matches!(
            (last.kind.activation(), c.loss),
            (
                Some(Act::Softmax),
                LossKind::CategoricalCrossentropy { from_logits: false }
                    | LossKind::SparseCategoricalCrossentropy { from_logits: false }
            ) | (
                Some(Act::Elem(Activation::Sigmoid)),
                LossKind::BinaryCrossentropy { from_logits: false }
            )
        );
        match (&last.kind, matches) {
            (_, false) => Fuse::None,
            (LayerKind::Dense { .. } | LayerKind::Conv2D { .. }, true) => Fuse::PreActivation,
            (_, true) => Fuse::ActivationLayer,
        }
    }

    /// Runs the model on `batch` examples and returns the outputs on the host.
    pub fn forward(&mut self, x: &[f32], batch: usize, training: bool) -> KResult<Vec<f32>> {
        check_data(&self.config, &self.plan, None, x, None, batch)?;
        if !training && batch > INFER_CHUNK {
            // Inference runs a large batch in slices: each example's outputs do not depend
            // on the others, and a slice's intermediate tensors stay in cache.
            let per = x.len() / batch;
            let mut out = Vec::new();
            for start in (0..batch).step_by(INFER_CHUNK) {
                let rows = INFER_CHUNK.min(batch - start);
                let part = &x[start * per..(start + rows) * per];
                out.extend(self.forward_batch(part, rows, false)?);
            }
            return Ok(out);
        }
        self.forward_batch(x, batch, training)
    }

    /// [`Replica::forward`] on one batch the caller has checked.
    fn forward_batch(&mut self, x: &[f32], batch: usize, training: bool) -> KResult<Vec<f32>> {
        self.buffers(batch, training)?;
        let seed = self.step_seed();
        let Replica {
            device,
            config,
            plan,
            params,
            bufs,
            ..
        } = self;
        let dev = device.as_ref();
        let bufs = bufs
            .last_mut()
            .ok_or_else(|| KerasError::Value("no buffers".into()))?;
        layers::forward(
            dev,
            config,
            plan,
            params,
            bufs,
            Input::Batch(x),
            training,
            seed,
        )?;
        Ok(dev.download(bufs.output())?)
    }

    fn step_seed(&self) -> u64 {
        self.seed ^ self.iterations.wrapping_mul(0x9E37_79B9) ^ (self.rank << 48)
    }

    /// Loss and metric sums on one batch without touching the weights.
    pub fn evaluate_step(&mut self, x: &[f32], y: &[f32], batch: usize) -> KResult<StepStats> {
        let compile = self
            .compile
            .clone()
            .ok_or(KerasError::NotCompiled("evaluate"))?;
        let (y, weights) = self.targets(y, batch)?;
        check_data(&self.config, &self.plan, Some(&compile), x, Some(&y), batch)?;
        self.buffers(batch, false)?;
        let seed = self.step_seed();
        let Replica {
            device,
            config,
            plan,
            params,
            bufs,
            ..
        } = self;
        let dev = device.as_ref();
        let bufs = bufs.last_mut().ok_or(KerasError::NotCompiled("evaluate"))?;
        layers::forward(
            dev,
            config,
            plan,
            params,
            bufs,
            Input::Batch(x),
            false,
            seed,
        )?;
        layers::loss(dev, &compile, bufs, &y, weights.as_deref(), batch, 1.0)
    }

    /// One training step on this replica's `batch` examples of a `global_batch`: forward,
    /// loss, backward, `sync` on the gradient tensors (skipped when `None`), optimizer.
    pub fn train_step(
        &mut self,
        x: &[f32],
        y: &[f32],
        batch: usize,
        global_batch: usize,
        sync: Option<GradSync<'_>>,
    ) -> KResult<StepStats> {
        let compile = self
            .compile
            .clone()
            .ok_or(KerasError::NotCompiled("training"))?;
        let (y, weights) = self.targets(y, batch)?;
        check_data(&self.config, &self.plan, Some(&compile), x, Some(&y), batch)?;
        let input = Input::Batch(x);
        let w = weights.as_deref();
        let stats = self.forward_backward(&compile, input, &y, w, batch, global_batch, true)?;
        if let Some(sync) = sync {
            self.sync_gradients(sync)?;
        }
        self.apply_gradients(&compile)?;
        Ok(stats)
    }

    /// One training step on the examples `rows.idx` of a data set that `check_batch` has
    /// accepted whole: the inputs are gathered straight into the device's input buffer,
    /// the targets into `targets` (reused between steps).
    pub fn train_rows(&mut self, rows: Rows<'_>, targets: &mut Vec<f32>) -> KResult<StepStats> {
        let compile = self
            .compile
            .clone()
            .ok_or(KerasError::NotCompiled("training"))?;
        let batch = rows.idx.len();
        targets.clear();
        for &i in rows.idx {
            match rows.y.get(i * rows.y_per..(i + 1) * rows.y_per) {
                Some(t) => targets.extend_from_slice(t),
                None => {
                    return Err(KerasError::Value(format!(
                        "example {i} is outside the data set"
                    )))
                }
            }
        }
        let input = Input::Rows {
            data: rows.x,
            per: rows.x_per,
            idx: rows.idx,
        };
        let (y, weights) = self.targets(targets, batch)?;
        let w = weights.as_deref();
        let stats = self.forward_backward(&compile, input, &y, w, batch, batch, true)?;
        self.apply_gradients(&compile)?;
        Ok(stats)
    }

    /// Loss sums and the gradient of (sum of per-example losses / `global_batch`) with
    /// respect to every variable, without applying them: for gradient checks and for
    /// callers that apply gradients themselves (`GradientTape`).
    pub fn gradients(
        &mut self,
        x: &[f32],
        y: &[f32],
        batch: usize,
        global_batch: usize,
        training: bool,
    ) -> KResult<(StepStats, Vec<HostArray>)> {
        let compile = self
            .compile
            .clone()
            .ok_or(KerasError::NotCompiled("training"))?;
        let (y, weights) = self.targets(y, batch)?;
        check_data(&self.config, &self.plan, Some(&compile), x, Some(&y), batch)?;
        let input = Input::Batch(x);
        let w = weights.as_deref();
        let stats = self.forward_backward(&compile, input, &y, w, batch, global_batch, training)?;
        let grads = self
            .grads
            .iter()
            .map(|g| Ok(HostArray::new(g.shape.clone(), self.device.download(g)?)))
            .collect::<KResult<Vec<_>>>()?;
        Ok((stats, grads))
    }

    /// Forward, loss and backward on a batch the caller has checked, each example's loss
    /// weighted by `weights` when given.
    #[allow(clippy::too_many_arguments)]
    fn forward_backward(
        &mut self,
        compile: &CompileConfig,
        x: Input<'_>,
        y: &[f32],
        weights: Option<&[f32]>,
        batch: usize,
        global_batch: usize,
        training: bool,
    ) -> KResult<StepStats> {
        self.buffers(batch, true)?;
        let seed = self.step_seed();
        let Replica {
            device,
            config,
            plan,
            params,
            grads,
            bufs,
            ..
        } = self;
        let dev = device.as_ref();
        let bufs = bufs.last_mut().ok_or(KerasError::NotCompiled("training"))?;
        layers::forward(dev, config, plan, params, bufs, x, training, seed)?;
        let scale = 1.0 / global_batch.max(1) as f32;
        let stats = layers::loss(dev, compile, bufs, y, weights, batch, scale)?;
        layers::backward(dev, config, plan, params, grads, bufs)?;
        Ok(stats)
    }

    fn sync_gradients(&mut self, sync: GradSync<'_>) -> KResult<()> {
        // The gradient tensors are reduced where they are, as one buffer laid end to end.
        sync(&mut self.grads, self.device.as_ref())?;
        Ok(())
    }

    fn apply_gradients(&mut self, compile: &CompileConfig) -> KResult<()> {
        let step = compile
            .optimizer
            .step(self.learning_rate, self.iterations + 1);
        for ((p, g), s) in self
            .params
            .iter_mut()
            .zip(&self.grads)
            .zip(self.slots.iter_mut())
        {
            self.device.optimizer_step(&step, p, g, s)?;
        }
        self.iterations += 1;
        Ok(())
    }
}
