//! The [`Rule`] every built-in callback with state implements (its hooks and readable
//! attributes), the small readers of hook arguments they share, and `EarlyStopping` (watch
//! a metric, stop when it stops improving, restore the best weights when training ends),
//! step for step as Keras 3.15's, including its messages with `verbose=1`. It registers the
//! rule-driven callbacks of the other files. They act on the model only through Python
//! attribute calls (`get_weights`, `optimizer.learning_rate`, `save`).

use std::cell::RefCell;

use super::super::{func, given, print_line};
use super::callbacks::{set_attr, to_f64, CallbackObj, Kind};
use super::monitor::Monitor;
use crate::cell::{Output, StreamName};
use crate::lang::{Args, Ctx, NativeModule, PyResult, Value};

/// A built-in callback's rule: its hooks and its readable attributes.
pub trait Rule {
    fn class_name(&self) -> &'static str;
    fn module_path(&self) -> &'static str;
    fn hook(&self, name: &str, args: &Args, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()>;
    fn attr(&self, name: &str) -> Option<Value>;
    /// Whether its batch hooks read the model's weights (a checkpoint every N batches), so
    /// the weights must be current in the layers' variables at each batch.
    fn reads_weights_per_batch(&self) -> bool {
        false
    }
    /// Before the first epoch, a callback that restores an interrupted training
    /// (`BackupAndRestore`) loads its weights file through `load` (the model's
    /// `load_weights`, with the optimizer built) and names the epoch to continue from.
    fn resume(&self, _load: &mut dyn FnMut(&str) -> PyResult<()>) -> PyResult<Option<usize>> {
        Ok(None)
    }
}

pub(crate) fn warn(ctx: &mut dyn Ctx, text: &str) {
    ctx.emit(Output::Stream {
        name: StreamName::Stderr,
        text: format!("UserWarning: {text}\n"),
    });
}

/// `(epoch, logs)` of an epoch hook; `logs` may be absent.
pub(crate) fn epoch_and_logs(args: &Args, name: &str) -> PyResult<(i64, Option<Value>)> {
    let s = args.bind(name, &["epoch", "logs"], 1)?;
    let epoch = s[0].as_ref().map_or(Ok(0), |v| v.as_int())?;
    Ok((epoch, given(&s[1]).cloned()))
}

pub(crate) fn log_value(logs: &Option<Value>, key: &str) -> PyResult<Option<Value>> {
    match logs {
        Some(Value::Dict(d)) => Ok(d.borrow().get_str(key)),
        _ => Ok(None),
    }
}

pub(crate) fn log_keys(logs: &Option<Value>, ctx: &mut dyn Ctx) -> PyResult<Vec<String>> {
    let mut out = vec![];
    if let Some(Value::Dict(d)) = logs {
        let keys: Vec<Value> = d.borrow().items().map(|(k, _)| k.clone()).collect();
        for k in keys {
            out.push(ctx.str(&k)?);
        }
    }
    Ok(out)
}

struct EarlyState {
    wait: i64,
    stopped_epoch: i64,
    best: Option<f64>,
    best_weights: Option<Value>,
    best_epoch: i64,
}

impl EarlyState {
    fn fresh() -> EarlyState {
        EarlyState {
            wait: 0,
            stopped_epoch: 0,
            best: None,
            best_weights: None,
            best_epoch: 0,
        }
    }
}

/// `keras.callbacks.EarlyStopping`, step for step as Keras 3.15's.
struct EarlyStopping {
    watch: Monitor,
    patience: i64,
    verbose: i64,
    baseline: Option<f64>,
    restore_best_weights: bool,
    start_from_epoch: i64,
    st: RefCell<EarlyState>,
}

impl EarlyStopping {
    fn epoch_end(
        &self,
        epoch: i64,
        logs: &Option<Value>,
        model: &Value,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        self.watch.resolve("EarlyStopping", model, ctx)?;
        let current = match log_value(logs, &self.watch.monitor)? {
            Some(v) => to_f64(ctx, &v)?,
            None => {
                let keys = log_keys(logs, ctx)?.join(",");
                warn(ctx, &format!(
                    "Early stopping conditioned on metric `{}` which is not available. Available metrics are: {keys}",
                    self.watch.monitor
                ));
                return Ok(());
            }
        };
        if epoch < self.start_from_epoch {
            return Ok(());
        }
        let get_weights = |ctx: &mut dyn Ctx| -> PyResult<Value> {
            let f = ctx.getattr(model, "get_weights")?;
            ctx.call(&f, Args::default())
        };
        if self.restore_best_weights && self.st.borrow().best_weights.is_none() {
            let w = get_weights(ctx)?;
            let mut st = self.st.borrow_mut();
            st.best_weights = Some(w);
            st.best_epoch = epoch;
        }
        self.st.borrow_mut().wait += 1;
        let best = self.st.borrow().best;
        if self.watch.is_improvement(current, best) {
            let w = if self.restore_best_weights {
                Some(get_weights(ctx)?)
            } else {
                None
            };
            let mut st = self.st.borrow_mut();
            st.best = Some(current);
            st.best_epoch = epoch;
            if w.is_some() {
                st.best_weights = w;
            }
            if self.baseline.is_none() || self.watch.is_improvement(current, self.baseline) {
                st.wait = 0;
            }
            return Ok(());
        }
        let wait = self.st.borrow().wait;
        if wait >= self.patience && epoch > 0 {
            self.st.borrow_mut().stopped_epoch = epoch;
            set_attr(ctx, model, "stop_training", Value::Bool(true))?;
        }
        Ok(())
    }

    /// Keras restores the best weights when training ends, stopped early or not.
    fn train_end(&self, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        let (stopped, best_epoch, weights) = {
            let st = self.st.borrow();
            (st.stopped_epoch, st.best_epoch, st.best_weights.clone())
        };
        if stopped > 0 && self.verbose > 0 {
            print_line(ctx, &format!("Epoch {}: early stopping", stopped + 1));
        }
        if let (true, Some(w)) = (self.restore_best_weights, weights) {
            if self.verbose > 0 {
                print_line(
                    ctx,
                    &format!(
                        "Restoring model weights from the end of the best epoch: {}.",
                        best_epoch + 1
                    ),
                );
            }
            let f = ctx.getattr(model, "set_weights")?;
            ctx.call(&f, Args::new(vec![w]))?;
        }
        Ok(())
    }
}

impl Rule for EarlyStopping {
    fn class_name(&self) -> &'static str {
        "EarlyStopping"
    }
    fn module_path(&self) -> &'static str {
        "keras.src.callbacks.early_stopping"
    }
    fn hook(&self, name: &str, args: &Args, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "on_train_begin" => {
                *self.st.borrow_mut() = EarlyState::fresh();
                Ok(())
            }
            "on_epoch_end" => {
                let (epoch, logs) = epoch_and_logs(args, name)?;
                self.epoch_end(epoch, &logs, model, ctx)
            }
            "on_train_end" => self.train_end(model, ctx),
            _ => Ok(()),
        }
    }
    fn attr(&self, name: &str) -> Option<Value> {
        let st = self.st.borrow();
        Some(match name {
            "monitor" => Value::str(&self.watch.monitor),
            "mode" => Value::str(&self.watch.mode),
            "min_delta" => Value::Float(self.watch.min_delta),
            "patience" => Value::Int(self.patience),
            "verbose" => Value::Int(self.verbose),
            "baseline" => self.baseline.map_or(Value::None, Value::Float),
            "start_from_epoch" => Value::Int(self.start_from_epoch),
            "wait" => Value::Int(st.wait),
            "stopped_epoch" => Value::Int(st.stopped_epoch),
            "best_epoch" => Value::Int(st.best_epoch),
            "best" => st.best.map_or(Value::None, Value::Float),
            "restore_best_weights" => Value::Bool(self.restore_best_weights),
            _ => return None,
        })
    }
}

pub(crate) fn opt_i64(slot: &Option<Value>, default: i64) -> PyResult<i64> {
    given(slot).map_or(Ok(default), |v| v.as_int())
}

pub(crate) fn opt_str(slot: &Option<Value>, default: &str) -> PyResult<String> {
    given(slot).map_or(Ok(default.to_string()), |v| Ok(v.as_str()?.to_string()))
}

pub(crate) fn opt_bool(slot: &Option<Value>) -> PyResult<bool> {
    given(slot).map_or(Ok(false), |v| v.as_bool_strict())
}

fn early_stopping(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "EarlyStopping",
        &[
            "monitor",
            "min_delta",
            "patience",
            "verbose",
            "mode",
            "baseline",
            "restore_best_weights",
            "start_from_epoch",
        ],
        0,
    )?;
    let monitor = opt_str(&s[0], "val_loss")?;
    let mode = opt_str(&s[4], "auto")?;
    let min_delta = given(&s[1]).map_or(Ok(0.0), |v| to_f64(ctx, v))?;
    let watch = Monitor::new("EarlyStopping", &monitor, &mode, min_delta, ctx);
    Ok(CallbackObj::value(Kind::Rule(Box::new(EarlyStopping {
        watch,
        patience: opt_i64(&s[2], 0)?,
        verbose: opt_i64(&s[3], 0)?,
        baseline: given(&s[5]).map(|v| to_f64(ctx, v)).transpose()?,
        restore_best_weights: opt_bool(&s[6])?,
        start_from_epoch: opt_i64(&s[7], 0)?,
        st: RefCell::new(EarlyState::fresh()),
    }))))
}

/// Registers the rule-driven callbacks in `tf.keras.callbacks`.
pub fn register(m: &NativeModule) {
    m.set("EarlyStopping", func("EarlyStopping", "EarlyStopping(monitor='val_loss', min_delta=0, patience=0, verbose=0, mode='auto', baseline=None, restore_best_weights=False, start_from_epoch=0)", early_stopping));
    super::checkpoint::register(m);
    super::plateau::register(m);
    super::csv_logger::register(m);
    super::tensorboard::register(m);
    super::backup::register(m);
}
