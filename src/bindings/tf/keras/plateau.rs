//! `ReduceLROnPlateau`: at each epoch's end, log the optimizer's learning rate, and when the
//! monitored value has not improved for `patience` epochs, multiply the rate by `factor`
//! (never below `min_lr`), then wait `cooldown` epochs before counting again. It follows
//! Keras 3.15 step for step, including its verbose line and its float32 view of the rate;
//! it reaches the model only through `model.optimizer.learning_rate`.

use std::cell::RefCell;

use super::super::{func, given, print_line};
use super::callbacks::{set_attr, to_f64, CallbackObj, Kind};
use super::monitor::Monitor;
use super::schedules::{epoch_and_logs, log_keys, log_value, opt_i64, opt_str, warn, Rule};
use crate::lang::float_repr;
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};

struct PlateauState {
    best: Option<f64>,
    wait: i64,
    cooldown_counter: i64,
}

struct ReduceLrOnPlateau {
    watch: Monitor,
    factor: f64,
    patience: i64,
    verbose: i64,
    cooldown: i64,
    min_lr: f64,
    st: RefCell<PlateauState>,
}

/// The optimizer and its learning rate as Keras reads it: the float32 variable's value.
fn optimizer_rate(model: &Value, ctx: &mut dyn Ctx) -> PyResult<(Value, f64)> {
    let opt = ctx.getattr(model, "optimizer")?;
    let lr = ctx.getattr(&opt, "learning_rate")?;
    let lr = to_f64(ctx, &lr)?;
    Ok((opt, f64::from(lr as f32)))
}

impl ReduceLrOnPlateau {
    fn reduce(&self, epoch: i64, model: &Value, ctx: &mut dyn Ctx) -> PyResult<bool> {
        let (opt, old) = optimizer_rate(model, ctx)?;
        if old <= f64::from(self.min_lr as f32) {
            return Ok(false);
        }
        let new = (old * self.factor).max(self.min_lr);
        set_attr(ctx, &opt, "learning_rate", Value::Float(new))?;
        if self.verbose > 0 {
            print_line(
                ctx,
                &format!(
                    "\nEpoch {}: ReduceLROnPlateau reducing learning rate to {}.",
                    epoch + 1,
                    float_repr(new)
                ),
            );
        }
        Ok(true)
    }

    fn epoch_end(
        &self,
        epoch: i64,
        logs: &Option<Value>,
        model: &Value,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        self.watch.resolve("ReduceLROnPlateau", model, ctx)?;
        let (_, lr) = optimizer_rate(model, ctx)?;
        if let Some(Value::Dict(d)) = logs {
            d.borrow_mut().insert_str("learning_rate", Value::Float(lr));
        }
        let Some(current) = log_value(logs, &self.watch.monitor)? else {
            let keys = log_keys(logs, ctx)?.join(",");
            warn(
                ctx,
                &format!(
                    "Learning rate reduction is conditioned on metric `{}` which is not \
                     available. Available metrics are: {keys}.",
                    self.watch.monitor
                ),
            );
            return Ok(());
        };
        let current = to_f64(ctx, &current)?;
        let mut st = self.st.borrow_mut();
        if st.cooldown_counter > 0 {
            st.cooldown_counter -= 1;
            st.wait = 0;
        }
        if self.watch.is_improvement(current, st.best) {
            st.best = Some(current);
            st.wait = 0;
            return Ok(());
        }
        if st.cooldown_counter > 0 {
            return Ok(());
        }
        st.wait += 1;
        if st.wait >= self.patience {
            drop(st);
            if self.reduce(epoch, model, ctx)? {
                let mut st = self.st.borrow_mut();
                st.cooldown_counter = self.cooldown;
                st.wait = 0;
            }
        }
        Ok(())
    }
}

impl Rule for ReduceLrOnPlateau {
    fn class_name(&self) -> &'static str {
        "ReduceLROnPlateau"
    }
    fn module_path(&self) -> &'static str {
        "keras.src.callbacks.reduce_lr_on_plateau"
    }
    fn hook(&self, name: &str, args: &Args, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "on_train_begin" => {
                *self.st.borrow_mut() = PlateauState {
                    best: None,
                    wait: 0,
                    cooldown_counter: 0,
                };
                Ok(())
            }
            "on_epoch_end" => {
                let (epoch, logs) = epoch_and_logs(args, name)?;
                self.epoch_end(epoch, &logs, model, ctx)
            }
            _ => Ok(()),
        }
    }
    fn attr(&self, name: &str) -> Option<Value> {
        let st = self.st.borrow();
        Some(match name {
            "monitor" => Value::str(&self.watch.monitor),
            "mode" => Value::str(&self.watch.mode),
            "min_delta" => Value::Float(self.watch.min_delta),
            "factor" => Value::Float(self.factor),
            "patience" => Value::Int(self.patience),
            "verbose" => Value::Int(self.verbose),
            "cooldown" => Value::Int(self.cooldown),
            "min_lr" => Value::Float(self.min_lr),
            "best" => st.best.map_or(Value::None, Value::Float),
            "wait" => Value::Int(st.wait),
            "cooldown_counter" => Value::Int(st.cooldown_counter),
            _ => return None,
        })
    }
}

fn reduce_lr_on_plateau(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "ReduceLROnPlateau",
        &[
            "monitor",
            "factor",
            "patience",
            "verbose",
            "mode",
            "min_delta",
            "cooldown",
            "min_lr",
        ],
        0,
    )?;
    let number = |slot: &Option<Value>, default: f64, ctx: &mut dyn Ctx| {
        given(slot).map_or(Ok(default), |v| to_f64(ctx, v))
    };
    let factor = number(&s[1], 0.1, ctx)?;
    let monitor = opt_str(&s[0], "val_loss")?;
    let mode = opt_str(&s[4], "auto")?;
    let min_delta = number(&s[5], 1e-4, ctx)?;
    let watch = Monitor::new("ReduceLROnPlateau", &monitor, &mode, min_delta, ctx);
    if factor >= 1.0 {
        return Err(PyErr::value_error(format!(
            "ReduceLROnPlateau does not support a factor >= 1.0. Received factor={}",
            float_repr(factor)
        )));
    }
    Ok(CallbackObj::value(Kind::Rule(Box::new(
        ReduceLrOnPlateau {
            watch,
            factor,
            patience: opt_i64(&s[2], 10)?,
            verbose: opt_i64(&s[3], 0)?,
            cooldown: opt_i64(&s[6], 0)?,
            min_lr: number(&s[7], 0.0, ctx)?,
            st: RefCell::new(PlateauState {
                best: None,
                wait: 0,
                cooldown_counter: 0,
            }),
        },
    ))))
}

/// Registers `ReduceLROnPlateau` in `tf.keras.callbacks`.
pub fn register(m: &NativeModule) {
    m.set(
        "ReduceLROnPlateau",
        func(
            "ReduceLROnPlateau",
            "ReduceLROnPlateau(monitor='val_loss', factor=0.1, patience=10, verbose=0, \
             mode='auto', min_delta=0.0001, cooldown=0, min_lr=0.0)",
            reduce_lr_on_plateau,
        ),
    );
}
