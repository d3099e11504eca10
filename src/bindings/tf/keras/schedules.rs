//! The callbacks that follow a rule across epochs: `EarlyStopping` (watch a metric, stop
//! when it stops improving, optionally restore the best weights) here, and in
//! `checkpoint.rs` `LearningRateScheduler` and `ModelCheckpoint`. Their state machines follow
//! Keras 3's, including the messages printed with `verbose=1`; they act on the model only
//! through Python attribute calls (`get_weights`, `optimizer.learning_rate`, `save`).

use std::cell::RefCell;

use super::super::{func, given, print_line};
use super::callbacks::{set_attr, to_f64, CallbackObj, Kind};
use crate::cell::{Output, StreamName};
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};

/// A built-in callback's rule: its hooks and its readable attributes.
pub trait Rule {
    fn class_name(&self) -> &'static str;
    fn module_path(&self) -> &'static str;
    fn hook(&self, name: &str, args: &Args, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()>;
    fn attr(&self, name: &str) -> Option<Value>;
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

/// `mode='auto'` as Keras decides it: accuracy-like and AUC metrics improve upwards.
pub(crate) fn higher_is_better(mode: &str, monitor: &str) -> bool {
    match mode {
        "max" => true,
        "min" => false,
        _ => monitor.contains("acc") || monitor.contains("auc"),
    }
}

pub(crate) fn check_mode(mode: &str, class: &str) -> PyResult<()> {
    if matches!(mode, "auto" | "min" | "max") {
        Ok(())
    } else {
        Err(PyErr::value_error(format!(
            "{class} mode {mode} is unknown, expected one of ('auto', 'min', 'max')"
        )))
    }
}

struct EarlyState {
    wait: i64,
    stopped_epoch: i64,
    best: Option<f64>,
    best_weights: Option<Value>,
    best_epoch: i64,
}

struct EarlyStopping {
    monitor: String,
    min_delta: f64,
    patience: i64,
    verbose: i64,
    higher: bool,
    baseline: Option<f64>,
    restore_best_weights: bool,
    start_from_epoch: i64,
    st: RefCell<EarlyState>,
}

impl EarlyStopping {
    fn improved(&self, current: f64, reference: Option<f64>) -> bool {
        match reference {
            None => true,
            Some(r) if self.higher => current - self.min_delta > r,
            Some(r) => current + self.min_delta < r,
        }
    }

    fn epoch_end(
        &self,
        epoch: i64,
        logs: &Option<Value>,
        model: &Value,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        let current = match log_value(logs, &self.monitor)? {
            Some(v) => to_f64(ctx, &v)?,
            None => {
                let keys = log_keys(logs, ctx)?.join(",");
                warn(ctx, &format!(
                    "Early stopping conditioned on metric `{}` which is not available. Available metrics are: {keys}",
                    self.monitor
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
        if self.improved(current, best) {
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
            if self.baseline.is_none() || self.improved(current, self.baseline) {
                st.wait = 0;
            }
            return Ok(());
        }
        let (wait, best_epoch, weights) = {
            let st = self.st.borrow();
            (st.wait, st.best_epoch, st.best_weights.clone())
        };
        if wait >= self.patience && epoch > 0 {
            self.st.borrow_mut().stopped_epoch = epoch;
            set_attr(ctx, model, "stop_training", Value::Bool(true))?;
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
                *self.st.borrow_mut() = EarlyState {
                    wait: 0,
                    stopped_epoch: 0,
                    best: None,
                    best_weights: None,
                    best_epoch: 0,
                };
                Ok(())
            }
            "on_epoch_end" => {
                let (epoch, logs) = epoch_and_logs(args, name)?;
                self.epoch_end(epoch, &logs, model, ctx)
            }
            "on_train_end" => {
                let stopped = self.st.borrow().stopped_epoch;
                if stopped > 0 && self.verbose > 0 {
                    print_line(ctx, &format!("Epoch {}: early stopping", stopped + 1));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    fn attr(&self, name: &str) -> Option<Value> {
        let st = self.st.borrow();
        Some(match name {
            "monitor" => Value::str(&self.monitor),
            "patience" => Value::Int(self.patience),
            "wait" => Value::Int(st.wait),
            "stopped_epoch" => Value::Int(st.stopped_epoch),
            "best_epoch" => Value::Int(st.best_epoch),
            "best" => st.best.map_or(Value::None, Value::Float),
            "restore_best_weights" => Value::Bool(self.restore_best_weights),
            _ => return None,
        })
    }
}

pub(crate) fn opt_f64(slot: &Option<Value>, default: f64) -> PyResult<f64> {
    given(slot).map_or(Ok(default), |v| v.as_float())
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

fn early_stopping(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
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
    check_mode(&mode, "EarlyStopping")?;
    Ok(CallbackObj::value(Kind::Rule(Box::new(EarlyStopping {
        higher: higher_is_better(&mode, &monitor),
        monitor,
        min_delta: opt_f64(&s[1], 0.0)?.abs(),
        patience: opt_i64(&s[2], 0)?,
        verbose: opt_i64(&s[3], 0)?,
        baseline: given(&s[5]).map(|v| v.as_float()).transpose()?,
        restore_best_weights: opt_bool(&s[6])?,
        start_from_epoch: opt_i64(&s[7], 0)?,
        st: RefCell::new(EarlyState {
            wait: 0,
            stopped_epoch: 0,
            best: None,
            best_weights: None,
            best_epoch: 0,
        }),
    }))))
}

/// Registers the rule-driven callbacks in `tf.keras.callbacks`.
pub fn register(m: &NativeModule) {
    m.set("EarlyStopping", func("EarlyStopping", "EarlyStopping(monitor='val_loss', min_delta=0, patience=0, verbose=0, mode='auto', baseline=None, restore_best_weights=False, start_from_epoch=0)", early_stopping));
    super::checkpoint::register(m);
}
