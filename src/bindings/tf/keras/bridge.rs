//! The seam between the engine's epoch loop and the notebook during `model.fit`: [`Bridge`]
//! implements the engine's `Callback`, calls the user's Python callbacks with Keras-style
//! `logs`, keeps the learning rate the same on both sides, keeps the layers' variables and
//! the running trainer's weights the same around every hook that may read or write them,
//! and draws Keras's progress as one display per epoch updated in place (text and HTML from
//! the display part). It owns no training logic; fit.rs builds it and reads what it
//! recorded. It shares the interpreter with a trainer whose steps run Python
//! (`op_trainer.rs`): the loop calls one, then the other.

use std::time::Instant;

use super::callbacks::{logs_dict, CallbackList};
use super::model::ModelObj;
use super::op_trainer::SharedCtx;
use crate::cell::{Output, StreamName};
use crate::display::progress::{epoch_header, keras_order, Mode, ProgressBar};
use crate::keras::{Callback, KResult, KerasError, Logs, TrainInfo, Trainer};
use crate::lang::{Ctx, PyErr, Value};

/// A save asked for while `fit` holds the model's engine (a ModelCheckpoint's `model.save`
/// inside a hook). It waits in the model's `pending_saves`, and the bridge does it with the
/// running trainer as soon as the hook returns.
pub struct PendingSave {
    pub path: String,
    pub weights_only: bool,
}

/// Shows progress frames: the first as a display with an id, later ones as updates.
pub struct Display {
    id: String,
    shown: bool,
}

impl Display {
    pub fn new(tag: &str) -> Display {
        Display {
            id: format!("keras-{tag}-{}", uuid::Uuid::new_v4()),
            shown: false,
        }
    }
    pub fn show(&mut self, ctx: &mut dyn Ctx, r: &crate::display::progress::Rendered, verbose: u8) {
        if verbose == 2 {
            if r.finished {
                ctx.emit(Output::Stream {
                    name: StreamName::Stdout,
                    text: format!("{}\n", r.plain),
                });
            }
            return;
        }
        let data = r.bundle();
        let out = if self.shown {
            Output::UpdateDisplayData {
                data,
                metadata: Default::default(),
                display_id: self.id.clone(),
            }
        } else {
            Output::DisplayData {
                data,
                metadata: Default::default(),
                display_id: Some(self.id.clone()),
            }
        };
        self.shown = true;
        ctx.emit(out);
    }
}

/// The engine's callback seam, calling the user's Python callbacks and drawing progress.
pub struct Bridge<'a> {
    pub ctx: SharedCtx<'a>,
    pub list: CallbackList,
    /// The model as Python sees it (a subclass's instance).
    pub model: Value,
    /// The model's state (`ModelObj`).
    pub state: Value,
    pub err: Option<PyErr>,
    pub verbose: u8,
    pub epochs: usize,
    pub steps: usize,
    pub bar: Option<(ProgressBar, Display, Instant)>,
}

impl Bridge<'_> {
    /// Does the saves of this bridge's model that the last hook asked for, with the running
    /// trainer (its weights are the model's weights of the moment).
    fn saves(&mut self, t: &dyn Trainer) -> KResult<()> {
        let Some(m) = self.state.downcast::<ModelObj>() else {
            return Ok(());
        };
        let mine = std::mem::take(&mut *m.pending_saves.borrow_mut());
        for d in mine {
            if let Err(e) = super::fit::save_trainer(t, &d.path, d.weights_only) {
                self.err = Some(super::layers::kerr(e));
                return Err(KerasError::Interrupted);
            }
        }
        Ok(())
    }
    /// A hook that does not need the layers' variables current, each callback's saves done
    /// before the next callback runs.
    fn py_saving(
        &mut self,
        hook: &str,
        pos: Vec<Value>,
        logs: &Value,
        t: &mut dyn Trainer,
    ) -> KResult<()> {
        self.each(hook, pos, logs, t, false)
    }
    /// Calls `hook` on every callback in order. The saves a callback asked for are done as
    /// soon as it returns, before the next one runs, and also when it fails: a backup or
    /// checkpoint written by one callback is on disk even when a later one (or the same one,
    /// after saving) raises, as in Keras, where `save` writes at once. With `live`, the
    /// layers' variables hold the trainer's weights for each callback, and what a callback
    /// changed goes back into the trainer before the next one sees it.
    fn each(
        &mut self,
        hook: &str,
        pos: Vec<Value>,
        logs: &Value,
        t: &mut dyn Trainer,
        live: bool,
    ) -> KResult<()> {
        let state = self.state.clone();
        let model = state.downcast::<ModelObj>().filter(|_| live);
        let py = |e: PyErr| KerasError::Value(e.to_string());
        if let Some(m) = model {
            m.engine_vars.borrow_mut().pull_from(t).map_err(py)?;
        }
        for cb in self.list.items.clone() {
            let r = {
                let mut g = self.ctx.borrow_mut();
                CallbackList::call_one(&mut **g, &cb, hook, pos.clone(), logs)
            };
            if let Some(m) = model {
                m.engine_vars.borrow_mut().push(t).map_err(py)?;
            }
            self.saves(t)?;
            if let Err(e) = r {
                self.err = Some(e);
                return Err(KerasError::Interrupted);
            }
        }
        Ok(())
    }
    fn emit(&self, out: Output) {
        self.ctx.borrow_mut().emit(out);
    }
    /// A hook that may read or write the model's weights: the trainer's weights go into the
    /// layers' variables before it, and variables it changed go back into the trainer.
    fn py_live(
        &mut self,
        hook: &str,
        pos: Vec<Value>,
        logs: &Value,
        t: &mut dyn Trainer,
    ) -> KResult<()> {
        self.each(hook, pos, logs, t, true)
    }
    fn stop(&self) -> bool {
        let mut g = self.ctx.borrow_mut();
        g.getattr(&self.model, "stop_training")
            .ok()
            .and_then(|v| v.as_bool_strict().ok())
            .unwrap_or(false)
    }
    /// Keeps the compiled learning rate and the engine's equal, in whichever direction
    /// Python changed it (LearningRateScheduler writes `model.optimizer.learning_rate`).
    fn sync_lr(&self, t: &mut dyn Trainer, from_python: bool) {
        let Some(m) = self.state.downcast::<ModelObj>() else {
            return;
        };
        // The trainer may keep its rate in the compiled settings (an op trainer), so the two
        // are never borrowed together.
        if from_python {
            let lr = m
                .compiled
                .borrow()
                .as_ref()
                .map(|c| c.optimizer.learning_rate);
            if let Some(lr) = lr {
                t.set_learning_rate(lr);
            }
        } else {
            let lr = t.learning_rate();
            if let Some(c) = m.compiled.borrow_mut().as_mut() {
                c.optimizer.learning_rate = lr;
            }
        }
    }
}

impl Drop for Bridge<'_> {
    /// A fit that failed may leave saves asked for and not done: they go with it.
    fn drop(&mut self) {
        if let Some(m) = self.state.downcast::<ModelObj>() {
            m.pending_saves.borrow_mut().clear();
        }
    }
}

pub fn logs_vec(logs: &Logs) -> Vec<(String, f64)> {
    logs.iter().map(|(k, v)| (k.clone(), *v)).collect()
}

impl Callback for Bridge<'_> {
    fn on_train_begin(&mut self, info: &TrainInfo, t: &mut dyn Trainer) -> KResult<()> {
        self.steps = info.steps;
        self.epochs = info.epochs;
        self.sync_lr(t, false);
        self.py_live("on_train_begin", vec![], &Value::dict_from(vec![]), t)
    }
    fn on_epoch_begin(&mut self, epoch: usize, t: &mut dyn Trainer) -> KResult<()> {
        if self.verbose > 0 {
            if let Some(h) = epoch_header(epoch, self.epochs) {
                self.emit(Output::Stream {
                    name: StreamName::Stdout,
                    text: format!("{h}\n"),
                });
            }
        }
        self.bar = Some((
            ProgressBar::new(Some(self.steps), self.verbose, Mode::Notebook),
            Display::new("fit"),
            Instant::now(),
        ));
        self.sync_lr(t, false);
        self.py_live(
            "on_epoch_begin",
            vec![Value::Int(epoch as i64)],
            &Value::dict_from(vec![]),
            t,
        )?;
        self.sync_lr(t, true);
        Ok(())
    }
    fn on_batch_begin(&mut self, batch: usize, t: &mut dyn Trainer) -> KResult<()> {
        let empty = Value::dict_from(vec![]);
        let pos = vec![Value::Int(batch as i64)];
        if self.list.reads_weights_per_batch() {
            self.py_live("on_train_batch_begin", pos, &empty, t)
        } else {
            self.py_saving("on_train_batch_begin", pos, &empty, t)
        }
    }
    fn on_batch_end(&mut self, batch: usize, logs: &Logs, t: &mut dyn Trainer) -> KResult<bool> {
        let shown = keras_order(&logs_vec(logs));
        if let Some((bar, disp, start)) = self.bar.as_mut() {
            if let Some(r) = bar.update(batch + 1, &shown, start.elapsed()) {
                disp.show(&mut **self.ctx.borrow_mut(), &r, self.verbose);
            }
        }
        self.ctx
            .borrow_mut()
            .check_interrupt()
            .map_err(|_| KerasError::Interrupted)?;
        let pos = vec![Value::Int(batch as i64)];
        let dict = logs_dict(&logs_vec(logs));
        if self.list.reads_weights_per_batch() {
            self.py_live("on_train_batch_end", pos, &dict, t)?;
        } else {
            self.py_saving("on_train_batch_end", pos, &dict, t)?;
        }
        Ok(self.stop())
    }
    fn on_epoch_end(
        &mut self,
        epoch: usize,
        logs: &mut Logs,
        t: &mut dyn Trainer,
    ) -> KResult<bool> {
        let shown = keras_order(&logs_vec(logs));
        if let Some((mut bar, mut disp, start)) = self.bar.take() {
            if let Some(r) = bar.finish(self.steps, &shown, start.elapsed()) {
                disp.show(&mut **self.ctx.borrow_mut(), &r, self.verbose);
            }
        }
        self.sync_lr(t, false);
        let dict = logs_dict(&logs_vec(logs));
        self.py_live("on_epoch_end", vec![Value::Int(epoch as i64)], &dict, t)?;
        // Callbacks may add entries (the learning rate); the History records them too.
        if let Value::Dict(d) = &dict {
            for (k, v) in d.borrow().items() {
                if let (Value::Str(k), Ok(x)) = (k, v.as_float()) {
                    logs.insert(k.to_string(), x);
                }
            }
        }
        self.sync_lr(t, true);
        Ok(self.stop())
    }
    fn on_test_begin(&mut self, t: &mut dyn Trainer) -> KResult<()> {
        self.py_saving("on_test_begin", vec![], &Value::dict_from(vec![]), t)
    }
    fn on_test_batch_begin(&mut self, batch: usize, t: &mut dyn Trainer) -> KResult<()> {
        let pos = vec![Value::Int(batch as i64)];
        self.py_saving("on_test_batch_begin", pos, &Value::dict_from(vec![]), t)
    }
    fn on_test_batch_end(&mut self, batch: usize, logs: &Logs, t: &mut dyn Trainer) -> KResult<()> {
        let dict = logs_dict(&logs_vec(logs));
        self.py_saving(
            "on_test_batch_end",
            vec![Value::Int(batch as i64)],
            &dict,
            t,
        )
    }
    fn on_test_end(&mut self, logs: &Logs, t: &mut dyn Trainer) -> KResult<()> {
        self.py_saving("on_test_end", vec![], &logs_dict(&logs_vec(logs)), t)
    }
    fn on_train_end(&mut self, t: &mut dyn Trainer) -> KResult<()> {
        self.py_live("on_train_end", vec![], &Value::dict_from(vec![]), t)
    }
}
