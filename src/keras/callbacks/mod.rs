//! Callbacks as a Rust trait, called by the epoch loop in `fit.rs`, and the built-in ones
//! with Keras 3's semantics: EarlyStopping, LearningRateScheduler and ModelCheckpoint.
//! (History is what `fit` returns.) A callback may stop training by returning `true`, and
//! may read or change the model through the [`Trainer`] it is handed. Bindings wrap Python
//! callbacks in this same trait; progress bars (display part) are callbacks too.
//! [`event_file`] holds TensorBoard's file format, which the TensorBoard callback writes.

pub mod event_file;

use super::error::{KResult, KerasError};
use super::fit::Logs;
use super::init::HostArray;
use super::trainer::Trainer;

/// What a callback learns when training starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrainInfo {
    pub epochs: usize,
    pub initial_epoch: usize,
    /// Optimizer steps per epoch.
    pub steps: usize,
    pub samples: usize,
}

pub trait Callback {
    fn on_train_begin(&mut self, _info: &TrainInfo, _model: &mut dyn Trainer) -> KResult<()> {
        Ok(())
    }
    fn on_train_end(&mut self, _model: &mut dyn Trainer) -> KResult<()> {
        Ok(())
    }
    fn on_epoch_begin(&mut self, _epoch: usize, _model: &mut dyn Trainer) -> KResult<()> {
        Ok(())
    }
    /// May add keys to `logs` (the History records them); returns whether to stop.
    fn on_epoch_end(
        &mut self,
        _epoch: usize,
        _logs: &mut Logs,
        _model: &mut dyn Trainer,
    ) -> KResult<bool> {
        Ok(false)
    }
    /// Before each training step (Keras's `on_train_batch_begin`).
    fn on_batch_begin(&mut self, _batch: usize, _model: &mut dyn Trainer) -> KResult<()> {
        Ok(())
    }
    /// `logs` holds the running means of the epoch so far; returns whether to stop.
    fn on_batch_end(
        &mut self,
        _batch: usize,
        _logs: &Logs,
        _model: &mut dyn Trainer,
    ) -> KResult<bool> {
        Ok(false)
    }
    /// Validation inside `fit` starts (Keras's `on_test_begin`).
    fn on_test_begin(&mut self, _model: &mut dyn Trainer) -> KResult<()> {
        Ok(())
    }
    fn on_test_batch_begin(&mut self, _batch: usize, _model: &mut dyn Trainer) -> KResult<()> {
        Ok(())
    }
    /// `logs` holds the running means of the validation so far, without the `val_` prefix.
    fn on_test_batch_end(
        &mut self,
        _batch: usize,
        _logs: &Logs,
        _model: &mut dyn Trainer,
    ) -> KResult<()> {
        Ok(())
    }
    /// Validation ends with these results (no `val_` prefix).
    fn on_test_end(&mut self, _logs: &Logs, _model: &mut dyn Trainer) -> KResult<()> {
        Ok(())
    }
}

/// Whether a monitored quantity should go down or up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Min,
    Max,
}

impl Mode {
    /// Keras's `mode="auto"`: maximise accuracy-like metrics, minimise everything else.
    pub fn auto(monitor: &str) -> Mode {
        let m = monitor.strip_prefix("val_").unwrap_or(monitor);
        if m.contains("acc") || m.contains("auc") || m == "fbeta_score" || m == "f1_score" {
            Mode::Max
        } else {
            Mode::Min
        }
    }
    pub fn parse(mode: &str, monitor: &str) -> KResult<Mode> {
        match mode {
            "auto" => Ok(Mode::auto(monitor)),
            "min" => Ok(Mode::Min),
            "max" => Ok(Mode::Max),
            other => Err(KerasError::unknown("mode", other, &["auto", "min", "max"])),
        }
    }
    fn improved(&self, current: f64, reference: f64, min_delta: f64) -> bool {
        match self {
            Mode::Min => current + min_delta < reference,
            Mode::Max => current - min_delta > reference,
        }
    }
    fn worst(&self) -> f64 {
        match self {
            Mode::Min => f64::INFINITY,
            Mode::Max => f64::NEG_INFINITY,
        }
    }
}

/// `keras.callbacks.EarlyStopping`.
#[derive(Debug, Clone)]
pub struct EarlyStopping {
    pub monitor: String,
    pub min_delta: f64,
    pub patience: usize,
    pub mode: Mode,
    pub baseline: Option<f64>,
    pub restore_best_weights: bool,
    pub start_from_epoch: usize,
    wait: usize,
    best: f64,
    best_weights: Option<Vec<HostArray>>,
    /// The epoch training stopped at (0 when it ran to the end), for the
    /// "Epoch N: early stopping" line.
    pub stopped_epoch: usize,
    pub best_epoch: usize,
    /// Set when the monitored key was missing from the logs, so the caller can warn as
    /// Keras does ("Early stopping conditioned on metric ... which is not available").
    pub missing_monitor: bool,
}

impl EarlyStopping {
    pub fn new(monitor: &str, patience: usize) -> EarlyStopping {
        EarlyStopping {
            monitor: monitor.to_string(),
            min_delta: 0.0,
            patience,
            mode: Mode::auto(monitor),
            baseline: None,
            restore_best_weights: false,
            start_from_epoch: 0,
            wait: 0,
            best: Mode::auto(monitor).worst(),
            best_weights: None,
            stopped_epoch: 0,
            best_epoch: 0,
            missing_monitor: false,
        }
    }
}

impl Callback for EarlyStopping {
    fn on_train_begin(&mut self, _info: &TrainInfo, _m: &mut dyn Trainer) -> KResult<()> {
        self.wait = 0;
        self.stopped_epoch = 0;
        self.best = self.mode.worst();
        self.best_weights = None;
        self.best_epoch = 0;
        Ok(())
    }

    fn on_epoch_end(
        &mut self,
        epoch: usize,
        logs: &mut Logs,
        model: &mut dyn Trainer,
    ) -> KResult<bool> {
        let Some(&current) = logs.get(&self.monitor) else {
            self.missing_monitor = true;
            return Ok(false);
        };
        if epoch < self.start_from_epoch {
            return Ok(false);
        }
        if self.restore_best_weights && self.best_weights.is_none() {
            // Until something improves, the current weights count as the best.
            self.best_weights = Some(model.get_weights()?);
        }
        self.wait += 1;
        let delta = self.min_delta.abs();
        if self.mode.improved(current, self.best, delta) {
            self.best = current;
            self.best_epoch = epoch;
            if self.restore_best_weights {
                self.best_weights = Some(model.get_weights()?);
            }
            let beats_baseline = self
                .baseline
                .is_none_or(|b| self.mode.improved(current, b, delta));
            if beats_baseline {
                self.wait = 0;
                return Ok(false);
            }
        }
        if self.wait >= self.patience && epoch > 0 {
            self.stopped_epoch = epoch;
            if self.restore_best_weights {
                if let Some(w) = &self.best_weights {
                    model.set_weights(w)?;
                }
            }
            return Ok(true);
        }
        Ok(false)
    }
}

/// The schedule a LearningRateScheduler calls: `(epoch, current lr) -> new lr`.
pub type Schedule = Box<dyn FnMut(usize, f32) -> KResult<f32> + Send>;

/// `keras.callbacks.LearningRateScheduler`: sets the learning rate at each epoch's start
/// and logs it as `learning_rate`, as Keras 3 does.
pub struct LearningRateScheduler {
    pub schedule: Schedule,
}

impl LearningRateScheduler {
    pub fn new(schedule: Schedule) -> Self {
        LearningRateScheduler { schedule }
    }
}

impl Callback for LearningRateScheduler {
    fn on_epoch_begin(&mut self, epoch: usize, model: &mut dyn Trainer) -> KResult<()> {
        let lr = (self.schedule)(epoch, model.learning_rate())?;
        if !lr.is_finite() {
            return Err(KerasError::Value(format!(
                "The output of the \"schedule\" function should be a float. Got: {lr}"
            )));
        }
        model.set_learning_rate(lr);
        Ok(())
    }
    fn on_epoch_end(
        &mut self,
        _epoch: usize,
        logs: &mut Logs,
        model: &mut dyn Trainer,
    ) -> KResult<bool> {
        logs.insert("learning_rate".into(), f64::from(model.learning_rate()));
        Ok(false)
    }
}
