//! Callbacks as a Rust trait, called by the epoch loop in `fit.rs`. (History is what `fit`
//! returns.) A callback may stop training by returning `true`, and may read or change the
//! model through the [`Trainer`] it is handed. The bindings wrap every Python callback,
//! Keras's built-in ones included (EarlyStopping, ModelCheckpoint, LearningRateScheduler
//! live once, as Python-level objects, in `bindings/tf/keras/`), in this one trait;
//! progress bars (display part) are callbacks too.
//! [`event_file`] holds TensorBoard's file format, which the TensorBoard callback writes.

pub mod event_file;

use super::error::KResult;
use super::fit::Logs;
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
