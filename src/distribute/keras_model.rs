//! The Keras engine on mirrored replicas. [`keras::Replica`](crate::keras::Replica) gets the
//! [`ReplicaModel`] contract (its `train_step` already takes an all-reduce hook), and
//! [`MirroredTrainer`] implements the engine's [`Trainer`] seam for N replicas: every global
//! batch is split across the replica threads, gradients are all-reduced, and every replica
//! applies the same update, so `keras::fit`, `evaluate`, `predict` and the callbacks run
//! unchanged on a `MirroredStrategy`. Weights and optimizer state are read from replica 0
//! and written to all. Nothing here imports the language, the bindings or the protocol.

use std::any::Any;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::model::{BatchSums, BoxError, LogReader, ReduceHook, ReplicaModel};
use super::stats::FitStats;
use super::strategy::{MirroredStrategy, ModelId};
use super::DistributeError;
use crate::device::{DTensor, Device, DeviceError};
use crate::keras::compile::metric_results;
use crate::keras::sample_weight;
use crate::keras::trainer::example_lens;
use crate::keras::Rows;
use crate::keras::{
    CompileConfig, HostArray, KResult, KerasError, ModelConfig, OptimizerState, Plan, Replica,
    StepStats, Trainer,
};

fn to_sums(s: StepStats) -> BatchSums {
    let mut values = Vec::with_capacity(1 + s.metric_sums.len());
    values.push(s.loss_sum);
    values.extend(s.metric_sums);
    BatchSums {
        examples: s.count,
        values,
    }
}

fn to_stats(s: BatchSums) -> StepStats {
    let mut it = s.values.into_iter();
    StepStats {
        loss_sum: it.next().unwrap_or(0.0),
        metric_sums: it.collect(),
        count: s.examples,
    }
}

impl ReplicaModel for Replica {
    fn metric_names(&self) -> Vec<String> {
        let mut names = vec!["loss".to_string()];
        if let Some(c) = self.compiled() {
            names.extend(c.metrics.iter().map(|(n, _)| n.clone()));
        }
        names
    }

    fn log_reader(&self) -> LogReader {
        let compiled = self.compiled().cloned();
        Box::new(move |sums| {
            let n = sums.examples.max(1) as f64;
            let loss = sums.values.first().copied().unwrap_or(0.0);
            let mut logs = vec![("loss".to_string(), loss / n)];
            let state = sums.values.get(1..).unwrap_or(&[]);
            if let Some(c) = &compiled {
                logs.extend(metric_results(c, state, sums.examples));
            }
            logs
        })
    }

    fn gradient_len(&self) -> usize {
        self.plan().param_count()
    }

    fn train_step(
        &mut self,
        _: &dyn Device,
        x: &[f32],
        y: &[f32],
        rows: usize,
        global: usize,
        reduce: &mut ReduceHook<'_>,
    ) -> Result<BatchSums, BoxError> {
        // The engine's hook is `Fn`; the cell lets it call our `FnMut` (it calls it once).
        let hook = RefCell::new(reduce);
        let sync = |grads: &mut [DTensor], dev: &dyn Device| -> Result<(), DeviceError> {
            let mut reduce = hook
                .try_borrow_mut()
                .map_err(|_| DeviceError::Unavailable("a re-entrant all-reduce".into()))?;
            (*reduce)(grads, dev)
                .map_err(|e| DeviceError::Unavailable(format!("the all-reduce: {e}")))
        };
        Ok(to_sums(Replica::train_step(
            self,
            x,
            y,
            rows,
            global,
            Some(&sync),
        )?))
    }

    fn evaluate_batch(
        &mut self,
        _: &dyn Device,
        x: &[f32],
        y: &[f32],
        rows: usize,
    ) -> Result<BatchSums, BoxError> {
        Ok(to_sums(self.evaluate_step(x, y, rows)?))
    }

    fn predict_batch(
        &mut self,
        _: &dyn Device,
        x: &[f32],
        rows: usize,
    ) -> Result<Vec<f32>, BoxError> {
        Ok(self.forward(x, rows, false)?)
    }

    fn variables(&self, _: &dyn Device) -> Result<Vec<Vec<f32>>, BoxError> {
        Ok(self.get_weights()?.into_iter().map(|w| w.data).collect())
    }

    fn set_variables(&mut self, _: &dyn Device, values: &[Vec<f32>]) -> Result<(), BoxError> {
        let shapes: Vec<Vec<usize>> = self.plan().vars.iter().map(|v| v.shape.clone()).collect();
        let weights: Vec<HostArray> = shapes
            .into_iter()
            .zip(values)
            .map(|(s, v)| HostArray::new(s, v.clone()))
            .collect();
        Ok(self.set_weights(&weights)?)
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn Any> {
        Some(self)
    }
}

/// A distribution error as the engine reports errors: the engine's own error when a replica
/// raised one (so Keras's messages survive), else a `ValueError`-style text.
pub fn to_keras(e: DistributeError) -> KerasError {
    match e {
        DistributeError::Interrupted => KerasError::Interrupted,
        DistributeError::Model { source, rank } => match source.downcast::<KerasError>() {
            Ok(k) => *k,
            Err(other) => KerasError::Value(format!("replica {rank}: {other}")),
        },
        DistributeError::Device { source, .. } => KerasError::Device(source),
        other => KerasError::Value(other.to_string()),
    }
}

/// A Keras model mirrored on every replica of a strategy, driven through the engine's
/// [`Trainer`] seam (so `keras::fit` and its callbacks work unchanged).
pub struct MirroredTrainer {
    strategy: Arc<MirroredStrategy>,
    id: ModelId,
    config: ModelConfig,
    plan: Plan,
    compile: Option<CompileConfig>,
    learning_rate: f32,
    /// Whether target rows end in their example's weight; every replica is told the same.
    sample_weighted: bool,
    /// Statistics of the fit in progress; published to the strategy after every step.
    stats: Mutex<Option<FitStats>>,
}

impl MirroredTrainer {
    /// Adds a step's times to the fit statistics the strategy shows, and returns its sums.
    fn record_step(
        &mut self,
        start: Instant,
        batch: usize,
        stepped: super::Result<(BatchSums, Vec<[std::time::Duration; 3]>)>,
    ) -> KResult<StepStats> {
        let (sums, times) = stepped.map_err(to_keras)?;
        let mut guard = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            drop(guard);
            self.begin_fit(batch);
            guard = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        }
        if let Some(st) = guard.as_mut() {
            st.add_step(start.elapsed(), batch, &times);
            self.strategy.publish_stats(st.clone());
        }
        Ok(to_stats(sums))
    }

    /// Builds one engine replica per strategy replica, each on its own thread with a device
    /// from the strategy's factory, all starting from `weights` (Keras order), compiled with
    /// `compile` when given. `seed` feeds dropout (mixed with each replica's rank).
    pub fn new(
        strategy: Arc<MirroredStrategy>,
        config: &ModelConfig,
        weights: &[HostArray],
        compile: Option<&CompileConfig>,
        seed: u64,
    ) -> KResult<Self> {
        let plan = config.plan()?;
        let factory = strategy.device_factory();
        let devices = strategy.devices().to_vec();
        let id = strategy
            .build_model(|rank, _| {
                let spec = devices.get(rank).ok_or("no device for this replica")?;
                let mut r = Replica::new(config, weights, factory(spec)?)?;
                r.set_rank(rank, seed);
                if let Some(c) = compile {
                    r.compile(c)?;
                }
                Ok(Box::new(r) as Box<dyn ReplicaModel>)
            })
            .map_err(to_keras)?;
        Ok(MirroredTrainer {
            strategy,
            id,
            config: config.clone(),
            plan,
            compile: compile.cloned(),
            learning_rate: compile.map_or(0.0, |c| c.optimizer.learning_rate),
            sample_weighted: false,
            stats: Mutex::new(None),
        })
    }

    pub fn strategy(&self) -> &Arc<MirroredStrategy> {
        &self.strategy
    }

    pub fn model_id(&self) -> ModelId {
        self.id
    }

    /// Runs `f` on every replica's engine model; results in rank order.
    fn on_replicas<T: Send>(
        &self,
        f: impl Fn(usize, &mut Replica) -> KResult<T> + Sync,
    ) -> KResult<Vec<T>> {
        let id = self.id;
        let got = self.strategy.run(|replica| {
            let rank = replica.rank;
            let (model, _) = replica.model(id)?;
            let engine = model
                .as_any_mut()
                .and_then(|a| a.downcast_mut::<Replica>())
                .ok_or_else(|| {
                    DistributeError::InvalidInput("this model is not a Keras replica".into())
                })?;
            f(rank, engine).map_err(|e| DistributeError::Model {
                rank,
                source: Box::new(e),
            })
        });
        got.into_iter()
            .map(|r| r.and_then(|x| x).map_err(to_keras))
            .collect()
    }

    fn on_primary<T: Send>(&self, f: impl Fn(&mut Replica) -> KResult<T> + Sync) -> KResult<T> {
        let mut all =
            self.on_replicas(|rank, r| if rank == 0 { f(r).map(Some) } else { Ok(None) })?;
        all.swap_remove(0)
            .ok_or_else(|| KerasError::Value("replica 0 gave no answer".into()))
    }

    /// (Re)compiles every replica: fresh optimizer slots, same on all.
    pub fn compile(&mut self, compile: &CompileConfig) -> KResult<()> {
        self.on_replicas(|_, r| r.compile(compile))?;
        self.learning_rate = compile.optimizer.learning_rate;
        self.compile = Some(compile.clone());
        Ok(())
    }

    /// Starts the statistics of a new fit (the teaching view shows the last one).
    pub fn begin_fit(&self, global_batch: usize) {
        let n = self.strategy.num_replicas_in_sync();
        let mut st = FitStats::new(
            n,
            self.strategy.all_reduce_name(),
            global_batch,
            self.strategy
                .train_ranges(global_batch)
                .iter()
                .map(|r| r.len())
                .collect(),
        );
        st.gradient_len = self.plan.param_count();
        *self.stats.lock().unwrap_or_else(|e| e.into_inner()) = Some(st);
    }

    /// Every replica's weights, `[replica][variable]`: the mirror invariant's test hook and
    /// the source of a per-replica table.
    pub fn replica_weights(&self) -> KResult<Vec<Vec<HostArray>>> {
        self.on_replicas(|_, r| r.get_weights())
    }
}

impl Trainer for MirroredTrainer {
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
        let targets = match y {
            Some(y) if self.sample_weighted => Some(sample_weight::split(y, batch)?.0),
            Some(y) => Some(y.to_vec()),
            None => None,
        };
        crate::keras::validate::check_data(
            &self.config,
            &self.plan,
            self.compile.as_ref(),
            x,
            targets.as_deref(),
            batch,
        )
    }
    fn train_batch(&mut self, x: &[f32], y: &[f32], batch: usize) -> KResult<StepStats> {
        // Every replica must accept its share, or one would fail alone inside the reduction.
        self.check_batch(x, Some(y), batch)?;
        let (x_per, y_per) = example_lens(self)?;
        let start = Instant::now();
        let stepped = self.strategy.train_step(self.id, x, x_per, y, y_per);
        self.record_step(start, batch, stepped)
    }
    /// `fit`'s shuffled batches: `fit` checked the whole data set, and every replica gathers
    /// its own share of the rows.
    fn train_rows(&mut self, rows: Rows<'_>, _: &mut (Vec<f32>, Vec<f32>)) -> KResult<StepStats> {
        let start = Instant::now();
        let stepped = self.strategy.train_step_rows(self.id, rows);
        self.record_step(start, rows.idx.len(), stepped)
    }
    fn eval_batch(&mut self, x: &[f32], y: &[f32], batch: usize) -> KResult<StepStats> {
        self.check_batch(x, Some(y), batch)?;
        let (x_per, y_per) = example_lens(self)?;
        self.strategy
            .evaluate_batch(self.id, x, x_per, y, y_per)
            .map(to_stats)
            .map_err(to_keras)
    }
    fn predict_batch(&mut self, x: &[f32], batch: usize) -> KResult<Vec<f32>> {
        crate::keras::validate::check_data(&self.config, &self.plan, None, x, None, batch)?;
        let x_per: usize = self.config.input_shape.iter().product();
        self.strategy
            .predict_batch(self.id, x, x_per)
            .map_err(to_keras)
    }
    fn get_weights(&self) -> KResult<Vec<HostArray>> {
        self.on_primary(|r| r.get_weights())
    }
    fn set_weights(&mut self, weights: &[HostArray]) -> KResult<()> {
        self.on_replicas(|_, r| r.set_weights(weights)).map(|_| ())
    }
    fn optimizer_state(&self) -> KResult<OptimizerState> {
        self.on_primary(|r| r.optimizer_state())
    }
    fn set_optimizer_state(&mut self, state: &OptimizerState) -> KResult<()> {
        self.on_replicas(|_, r| r.set_optimizer_state(state))
            .map(|_| ())
    }
    fn learning_rate(&self) -> f32 {
        self.learning_rate
    }
    fn set_learning_rate(&mut self, lr: f32) {
        // A failure here would leave replicas with different rates; it cannot fail today
        // (the engine only stores the value), and the trait gives no way to report it.
        let _ = self.on_replicas(|_, r| {
            r.set_learning_rate(lr);
            Ok(())
        });
        self.learning_rate = lr;
    }
    fn set_sample_weighted(&mut self, on: bool) -> KResult<()> {
        self.on_replicas(|_, r| {
            r.set_sample_weighted(on);
            Ok(())
        })?;
        self.sample_weighted = on;
        Ok(())
    }
    fn sample_weighted(&self) -> bool {
        self.sample_weighted
    }
}

impl Drop for MirroredTrainer {
    fn drop(&mut self) {
        self.strategy.drop_model(self.id);
    }
}
