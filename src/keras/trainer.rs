//! The seam between the epoch loop and whoever runs the steps. [`Trainer`] is what `fit`,
//! `evaluate`, `predict` and the callbacks drive: one [`Replica`] implements it for a single
//! device, and the distribute part implements it for N mirrored replicas (splitting each
//! global batch, all-reducing, keeping the copies identical). The loop never asks which.

use super::compile::CompileConfig;
use super::config::{ModelConfig, Plan};
use super::error::{KResult, KerasError};
use super::init::HostArray;
use super::replica::{OptimizerState, Replica, StepStats};

/// The examples `idx` of a data set (row-major `x` and `y`, `x_per` and `y_per` values per
/// example): one shuffled batch, not yet gathered into one buffer.
#[derive(Debug, Clone, Copy)]
pub struct Rows<'a> {
    pub x: &'a [f32],
    pub x_per: usize,
    pub y: &'a [f32],
    pub y_per: usize,
    pub idx: &'a [usize],
}

impl Rows<'_> {
    /// Copies the examples `idx[part]` into `xb` and `yb` (reused between steps). Indices
    /// outside the data set copy nothing; callers validate the data set beforehand.
    pub fn gather(&self, part: std::ops::Range<usize>, xb: &mut Vec<f32>, yb: &mut Vec<f32>) {
        xb.clear();
        yb.clear();
        for &i in self.idx.get(part).unwrap_or(&[]) {
            let xs = self.x.get(i * self.x_per..(i + 1) * self.x_per);
            xb.extend_from_slice(xs.unwrap_or(&[]));
            let ys = self.y.get(i * self.y_per..(i + 1) * self.y_per);
            yb.extend_from_slice(ys.unwrap_or(&[]));
        }
    }
}

pub trait Trainer {
    fn config(&self) -> &ModelConfig;
    fn plan(&self) -> &Plan;
    fn compiled(&self) -> Option<&CompileConfig>;
    /// Validates a global batch before any replica starts on it.
    fn check_batch(&self, x: &[f32], y: Option<&[f32]>, batch: usize) -> KResult<()>;
    /// One optimizer step on a global batch; returns sums over the whole batch.
    fn train_batch(&mut self, x: &[f32], y: &[f32], batch: usize) -> KResult<StepStats>;
    /// One optimizer step on the examples `rows.idx` of a data set that `check_batch` has
    /// accepted whole. The default gathers them into one batch in `scratch`; a trainer that
    /// splits the batch across replicas lets each replica gather its own share instead, in
    /// parallel, so no thread copies the whole batch between steps.
    fn train_rows(
        &mut self,
        rows: Rows<'_>,
        scratch: &mut (Vec<f32>, Vec<f32>),
    ) -> KResult<StepStats> {
        rows.gather(0..rows.idx.len(), &mut scratch.0, &mut scratch.1);
        self.train_batch(&scratch.0, &scratch.1, rows.idx.len())
    }
    fn eval_batch(&mut self, x: &[f32], y: &[f32], batch: usize) -> KResult<StepStats>;
    fn predict_batch(&mut self, x: &[f32], batch: usize) -> KResult<Vec<f32>>;
    fn get_weights(&self) -> KResult<Vec<HostArray>>;
    fn set_weights(&mut self, weights: &[HostArray]) -> KResult<()>;
    fn optimizer_state(&self) -> KResult<OptimizerState>;
    fn set_optimizer_state(&mut self, state: &OptimizerState) -> KResult<()>;
    fn learning_rate(&self) -> f32;
    fn set_learning_rate(&mut self, lr: f32);
    /// Whether each target row ends in its example's weight (`sample_weight.rs`), from now
    /// until told otherwise: `fit` and `evaluate` with `sample_weight` or `class_weight`
    /// turn it on for their run.
    fn set_sample_weighted(&mut self, on: bool) -> KResult<()>;
    fn sample_weighted(&self) -> bool;
}

impl Trainer for Replica {
    fn config(&self) -> &ModelConfig {
        Replica::config(self)
    }
    fn plan(&self) -> &Plan {
        Replica::plan(self)
    }
    fn compiled(&self) -> Option<&CompileConfig> {
        Replica::compiled(self)
    }
    fn check_batch(&self, x: &[f32], y: Option<&[f32]>, batch: usize) -> KResult<()> {
        Replica::check_batch(self, x, y, batch)
    }
    fn train_batch(&mut self, x: &[f32], y: &[f32], batch: usize) -> KResult<StepStats> {
        self.train_step(x, y, batch, batch, None)
    }
    /// The rows go straight from the data set into the device's input buffer.
    fn train_rows(
        &mut self,
        rows: Rows<'_>,
        scratch: &mut (Vec<f32>, Vec<f32>),
    ) -> KResult<StepStats> {
        Replica::train_rows(self, rows, &mut scratch.1)
    }
    fn eval_batch(&mut self, x: &[f32], y: &[f32], batch: usize) -> KResult<StepStats> {
        self.evaluate_step(x, y, batch)
    }
    fn predict_batch(&mut self, x: &[f32], batch: usize) -> KResult<Vec<f32>> {
        self.forward(x, batch, false)
    }
    fn get_weights(&self) -> KResult<Vec<HostArray>> {
        Replica::get_weights(self)
    }
    fn set_weights(&mut self, weights: &[HostArray]) -> KResult<()> {
        Replica::set_weights(self, weights)
    }
    fn optimizer_state(&self) -> KResult<OptimizerState> {
        Replica::optimizer_state(self)
    }
    fn set_optimizer_state(&mut self, state: &OptimizerState) -> KResult<()> {
        Replica::set_optimizer_state(self, state)
    }
    fn learning_rate(&self) -> f32 {
        Replica::learning_rate(self)
    }
    fn set_learning_rate(&mut self, lr: f32) {
        Replica::set_learning_rate(self, lr)
    }
    fn set_sample_weighted(&mut self, on: bool) -> KResult<()> {
        Replica::set_sample_weighted(self, on);
        Ok(())
    }
    fn sample_weighted(&self) -> bool {
        Replica::sample_weighted(self)
    }
}

/// Per-example lengths of inputs and targets for this model and loss (a target row's
/// length counts the weight at its end while the trainer is sample-weighted).
pub fn example_lens(t: &dyn Trainer) -> KResult<(usize, usize)> {
    let x_per: usize = t.config().input_shape.iter().product();
    let out = t.plan().output_shape();
    let out_per: usize = out.iter().product();
    let c = t.compiled().ok_or(KerasError::NotCompiled("training"))?;
    let weight = usize::from(t.sample_weighted());
    if !c.heads.is_empty() {
        return Ok((
            x_per,
            c.heads.iter().map(|h| h.target).sum::<usize>() + weight,
        ));
    }
    let y_per = match c.loss {
        crate::device::LossKind::SparseCategoricalCrossentropy { .. } => {
            out_per / out.last().copied().unwrap_or(1).max(1)
        }
        _ => out_per,
    };
    Ok((x_per, y_per + weight))
}
