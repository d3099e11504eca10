//! The contract between the distribution layer and a model: what one replica's copy of a
//! model must do for a training step (forward and backward into its gradient tensors,
//! then the optimizer update), for evaluation and for prediction, plus reading and writing
//! its variables. The Keras engine implements [`ReplicaModel`]; this file only defines it and
//! the plain data types that cross it (data sets, per-batch sums, history).

use crate::device::{DTensor, Device};

/// Errors a model reports; kept boxed so the engine's own error type survives for the
/// bindings to downcast.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The all-reduce a training step calls with its gradient tensors (one per variable, reduced
/// as one buffer laid end to end) and its device.
pub type ReduceHook<'a> = dyn FnMut(&mut [DTensor], &dyn Device) -> Result<(), BoxError> + 'a;

/// Additive per-batch results: `values[0]` is the sum of per-example losses and the others
/// are the metrics' states (sums of per-example values, or counts), so that sums over
/// replicas and batches give exactly what a single device reports (see
/// [`ReplicaModel::log_reader`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchSums {
    pub examples: usize,
    pub values: Vec<f64>,
}

impl BatchSums {
    /// Adds another batch's (or replica's) sums; missing entries count as zero.
    pub fn add(&mut self, other: &BatchSums) {
        self.examples += other.examples;
        if self.values.len() < other.values.len() {
            self.values.resize(other.values.len(), 0.0);
        }
        for (a, b) in self.values.iter_mut().zip(&other.values) {
            *a += *b;
        }
    }

    /// The means, paired with `names` (`loss`, then the metrics).
    pub fn means(&self, names: &[String]) -> Vec<(String, f64)> {
        let n = self.examples.max(1) as f64;
        names
            .iter()
            .zip(self.values.iter().chain(std::iter::repeat(&0.0)))
            .map(|(name, v)| (name.clone(), v / n))
            .collect()
    }
}

/// Turns summed batch results into the reported `(name, value)` pairs.
pub type LogReader = Box<dyn Fn(&BatchSums) -> Vec<(String, f64)> + Send>;

/// One replica's copy of a model. Every method runs on the replica's own thread with the
/// replica's device. Inputs are row-major host rows: `rows` examples of `x.len() / rows`
/// features (and `y.len() / rows` target values).
pub trait ReplicaModel {
    /// Names of the reported values: `loss` first, then each metric (`accuracy`, ...).
    fn metric_names(&self) -> Vec<String>;

    /// How results summed over batches and replicas become the reported values, paired
    /// with [`metric_names`](Self::metric_names). By default every value is a sum of
    /// per-example values, reported as its mean; a model whose metrics keep other state
    /// (confusion counts at thresholds) reads them its own way.
    fn log_reader(&self) -> LogReader {
        let names = self.metric_names();
        Box::new(move |sums| sums.means(&names))
    }

    /// Length of the gradient (all trainable variables, in order, laid end to end).
    fn gradient_len(&self) -> usize;

    /// One training step on this replica's share of a global batch: forward pass, loss, and
    /// backward pass for `rows` examples into its gradient tensors, with each example's
    /// loss gradient scaled by `1 / global_batch` (so that the all-reduced SUM over replicas
    /// is the gradient of the global batch's mean loss); then `reduce(gradients, device)`
    /// exactly once, which returns with the tensors holding the sums over all replicas; then
    /// the optimizer update of every variable with that summed gradient. `rows` may be 0 (a
    /// short last batch split over many replicas): the gradient is then zero, and `reduce`
    /// and the update still happen, because every replica must take part in both.
    fn train_step(
        &mut self,
        device: &dyn Device,
        x: &[f32],
        y: &[f32],
        rows: usize,
        global_batch: usize,
        reduce: &mut ReduceHook<'_>,
    ) -> Result<BatchSums, BoxError>;

    /// Loss and metric sums for `rows` examples (at least one), without training.
    fn evaluate_batch(
        &mut self,
        device: &dyn Device,
        x: &[f32],
        y: &[f32],
        rows: usize,
    ) -> Result<BatchSums, BoxError>;

    /// Outputs for `rows` examples (at least one), row-major.
    fn predict_batch(
        &mut self,
        device: &dyn Device,
        x: &[f32],
        rows: usize,
    ) -> Result<Vec<f32>, BoxError>;

    /// Every variable's values (weights and optimizer slots need not be included), in order.
    fn variables(&self, device: &dyn Device) -> Result<Vec<Vec<f32>>, BoxError>;

    /// Overwrites every variable, in the order `variables` returns them.
    fn set_variables(&mut self, device: &dyn Device, values: &[Vec<f32>]) -> Result<(), BoxError>;

    /// The concrete model, for operations this trait does not cover (a Keras replica's
    /// learning rate and optimizer state).
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}

/// Host training data: `x` holds rows of `x_width` features, `y` rows of `y_width` targets
/// (`y` may be empty for prediction).
#[derive(Debug, Clone, Copy)]
pub struct Dataset<'a> {
    pub x: &'a [f32],
    pub x_width: usize,
    pub y: &'a [f32],
    pub y_width: usize,
}

impl<'a> Dataset<'a> {
    /// Checks the shapes and returns the number of examples.
    pub fn samples(&self, need_targets: bool) -> Result<usize, String> {
        if self.x_width == 0 {
            return Err("the input has no features (its last dimension is 0)".into());
        }
        if !self.x.len().is_multiple_of(self.x_width) {
            return Err(format!(
                "the input holds {} values, not a whole number of rows of {}",
                self.x.len(),
                self.x_width
            ));
        }
        let n = self.x.len() / self.x_width;
        if need_targets && self.y.len() != n * self.y_width {
            return Err(format!(
                "Data cardinality is ambiguous: x has {n} samples but y holds {} values (expected {n} rows of {})",
                self.y.len(),
                self.y_width
            ));
        }
        Ok(n)
    }
}

/// What an observer asks the loop to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FitControl {
    Continue,
    /// Stop after this batch or epoch (`model.stop_training = True`).
    Stop,
}

/// Progress observer: the Keras callbacks and the live progress bar sit behind it. Called on
/// the thread that called `fit`, between steps, so it may read the strategy's replicas.
pub trait FitObserver {
    fn on_train_begin(&mut self, _epochs: usize, _steps_per_epoch: usize) {}
    fn on_epoch_begin(&mut self, _epoch: usize) -> FitControl {
        FitControl::Continue
    }
    /// `logs` hold the running means over the epoch so far.
    fn on_batch_end(&mut self, _epoch: usize, _step: usize, _logs: &[(String, f64)]) -> FitControl {
        FitControl::Continue
    }
    /// `logs` hold the epoch's means, with `val_` entries when there is validation data.
    fn on_epoch_end(&mut self, _epoch: usize, _logs: &[(String, f64)]) -> FitControl {
        FitControl::Continue
    }
    fn on_train_end(&mut self, _history: &History) {}
}

/// An observer that observes nothing.
pub struct NoObserver;
impl FitObserver for NoObserver {}

/// `History.history`: each name with one value per finished epoch, in first-seen order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    pub epochs: Vec<usize>,
    pub values: Vec<(String, Vec<f64>)>,
}

impl History {
    pub fn push_epoch(&mut self, epoch: usize, logs: &[(String, f64)]) {
        self.epochs.push(epoch);
        for (name, v) in logs {
            match self.values.iter_mut().find(|(n, _)| n == name) {
                Some((_, vs)) => vs.push(*v),
                None => self.values.push((name.clone(), vec![*v])),
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&[f64]> {
        self.values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}
