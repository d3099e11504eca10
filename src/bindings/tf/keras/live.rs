//! The model's weights while `fit` runs. The engine holds the trainer for the whole loop,
//! so a callback's `model.get_weights()` / `set_weights()` (EarlyStopping's
//! `restore_best_weights`, a user's own checkpointing) cannot reach it through the model's
//! engine cell. Around each epoch-level hook the fit bridge lends a snapshot here; writes
//! made during the hook wait here and go into the running trainer when the hook returns,
//! so the next epoch trains from them exactly as Keras does.

use std::cell::RefCell;

use crate::keras::{HostArray, KResult, Trainer};
use crate::lang::{PyErr, PyResult};

/// The snapshot and pending write of one model during a callback hook.
#[derive(Default)]
pub struct Live {
    weights: RefCell<Option<Vec<HostArray>>>,
    pending: RefCell<bool>,
}

impl Live {
    /// Before a hook: the trainer's current weights become what the model reads.
    pub fn enter(&self, t: &dyn Trainer) -> KResult<()> {
        *self.weights.borrow_mut() = Some(t.get_weights()?);
        *self.pending.borrow_mut() = false;
        Ok(())
    }

    /// After a hook: weights the hook set go into the trainer; the snapshot ends.
    pub fn leave(&self, t: &mut dyn Trainer) -> KResult<()> {
        let ws = self.weights.borrow_mut().take();
        let pending = std::mem::take(&mut *self.pending.borrow_mut());
        match (pending, ws) {
            (true, Some(ws)) => t.set_weights(&ws),
            _ => Ok(()),
        }
    }

    /// The weights as a hook sees them, when a hook is running.
    pub fn read(&self) -> Option<Vec<HostArray>> {
        self.weights.borrow().clone()
    }

    /// Records a hook's `set_weights`, checked as the engine would check it; false when no
    /// hook is running (the caller then writes to the engine itself).
    pub fn write(&self, ws: &[HostArray]) -> PyResult<bool> {
        let mut slot = self.weights.borrow_mut();
        let Some(now) = slot.as_ref() else {
            return Ok(false);
        };
        let same = now.len() == ws.len() && now.iter().zip(ws).all(|(a, b)| a.shape == b.shape);
        if !same {
            return Err(PyErr::value_error(
                "set_weights: the arrays do not match the model's weights in number or shape",
            ));
        }
        *slot = Some(ws.to_vec());
        *self.pending.borrow_mut() = true;
        Ok(true)
    }
}
