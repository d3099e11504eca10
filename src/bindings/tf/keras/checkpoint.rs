//! `LearningRateScheduler` (each epoch, ask the user's `schedule(epoch, lr)` for the rate and
//! set `model.optimizer.learning_rate`; the rate joins the epoch's logs) and
//! `ModelCheckpoint` (save the model or its weights each epoch, or only when the monitored
//! value improves, to a path formatted like `str.format` from the epoch and the logs). Both
//! follow Keras 3, including its messages and its file-extension checks.

use std::cell::RefCell;

use super::super::{func, given, print_line};
use super::callbacks::{to_f64, CallbackObj, Kind};
use super::schedules::{
    check_mode, epoch_and_logs, higher_is_better, log_value, opt_bool, opt_i64, opt_str, warn, Rule,
};
use crate::lang::float_repr;
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};

struct LrScheduler {
    schedule: Value,
    verbose: i64,
}

fn optimizer_lr(model: &Value, ctx: &mut dyn Ctx) -> PyResult<(Value, f64)> {
    let opt = ctx.getattr(model, "optimizer")?;
    let lr = ctx.getattr(&opt, "learning_rate")?;
    let lr = to_f64(ctx, &lr)?;
    Ok((opt, lr))
}

impl Rule for LrScheduler {
    fn class_name(&self) -> &'static str {
        "LearningRateScheduler"
    }
    fn module_path(&self) -> &'static str {
        "keras.src.callbacks.learning_rate_scheduler"
    }
    fn hook(&self, name: &str, args: &Args, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "on_epoch_begin" => {
                let (epoch, _) = epoch_and_logs(args, name)?;
                let (opt, lr) = optimizer_lr(model, ctx)?;
                let two = Args::new(vec![Value::Int(epoch), Value::Float(lr)]);
                // Keras accepts the old one-argument schedules too: it retries on TypeError.
                let new = match ctx.call(&self.schedule, two) {
                    Err(e) if e.type_name() == "TypeError" => {
                        ctx.call(&self.schedule, Args::new(vec![Value::Int(epoch)]))?
                    }
                    other => other?,
                };
                let Value::Float(rate) = new else {
                    let shown = ctx.repr(&new)?;
                    return Err(PyErr::value_error(format!(
                        "The output of the `schedule` function should be a float. Got: {shown}"
                    )));
                };
                super::callbacks::set_attr(ctx, &opt, "learning_rate", Value::Float(rate))?;
                if self.verbose > 0 {
                    print_line(
                        ctx,
                        &format!(
                            "\nEpoch {}: LearningRateScheduler setting learning rate to {}.",
                            epoch + 1,
                            float_repr(rate)
                        ),
                    );
                }
                Ok(())
            }
            "on_epoch_end" => {
                let (_, logs) = epoch_and_logs(args, name)?;
                let (_, lr) = optimizer_lr(model, ctx)?;
                if let Some(Value::Dict(d)) = logs {
                    d.borrow_mut().insert_str("learning_rate", Value::Float(lr));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    fn attr(&self, name: &str) -> Option<Value> {
        match name {
            "schedule" => Some(self.schedule.clone()),
            "verbose" => Some(Value::Int(self.verbose)),
            _ => None,
        }
    }
}

fn lr_scheduler(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("LearningRateScheduler", &["schedule", "verbose"], 1)?;
    Ok(CallbackObj::value(Kind::Rule(Box::new(LrScheduler {
        schedule: s[0].clone().unwrap_or(Value::None),
        verbose: opt_i64(&s[1], 0)?,
    }))))
}

/// Formats `{name}`, `{name:02d}`, `{name:.2f}` fields as Python's `str.format` does for
/// the epoch number and the logged values.
pub fn format_path(
    template: &str,
    fields: &[(String, Value)],
    ctx: &mut dyn Ctx,
) -> PyResult<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        if let Some(stripped) = after.strip_prefix('{') {
            out.push('{');
            rest = stripped;
            continue;
        }
        let close = after
            .find('}')
            .ok_or_else(|| PyErr::value_error("Single '{' encountered in format string"))?;
        let field = &after[..close];
        let (name, spec) = field.split_once(':').unwrap_or((field, ""));
        let v = fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| PyErr::key_error(format!("'{name}'")))?;
        out.push_str(&format_one(&v, spec, ctx)?);
        rest = &after[close + 1..];
    }
    out.push_str(&rest.replace("}}", "}"));
    Ok(out)
}

fn format_one(v: &Value, spec: &str, ctx: &mut dyn Ctx) -> PyResult<String> {
    if spec.is_empty() {
        return match v {
            Value::Float(x) => Ok(float_repr(*x)),
            other => ctx.str(other),
        };
    }
    let zero = spec.starts_with('0');
    let kind = spec.chars().last().unwrap_or('s');
    let body = &spec[..spec.len() - kind.len_utf8()];
    let (width, prec) = match body.split_once('.') {
        Some((w, p)) => (w.parse::<usize>().unwrap_or(0), p.parse::<usize>().ok()),
        None => (body.parse::<usize>().unwrap_or(0), None),
    };
    let text = match kind {
        'd' => v.as_int()?.to_string(),
        'f' => format!("{:.*}", prec.unwrap_or(6), v.as_float()?),
        'e' => {
            let t = format!("{:.*e}", prec.unwrap_or(6), v.as_float()?);
            match t.split_once('e') {
                Some((m, e)) => {
                    let n: i32 = e.parse().unwrap_or(0);
                    format!("{m}e{}{:02}", if n < 0 { '-' } else { '+' }, n.abs())
                }
                None => t,
            }
        }
        _ => {
            return Err(PyErr::value_error(format!(
                "Unknown format code '{kind}' for object of type '{}'",
                v.type_name()
            )))
        }
    };
    Ok(if text.len() >= width {
        text
    } else if zero {
        let (sign, digits) = text
            .strip_prefix('-')
            .map_or(("", text.as_str()), |d| ("-", d));
        format!("{sign}{}{digits}", "0".repeat(width - text.len()))
    } else {
        format!("{}{text}", " ".repeat(width - text.len()))
    })
}

struct Checkpoint {
    filepath: String,
    monitor: String,
    verbose: i64,
    save_best_only: bool,
    save_weights_only: bool,
    higher: bool,
    best: RefCell<f64>,
}

impl Checkpoint {
    fn save(
        &self,
        epoch: i64,
        logs: &Option<Value>,
        model: &Value,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        let mut fields = vec![("epoch".to_string(), Value::Int(epoch + 1))];
        if let Some(Value::Dict(d)) = logs {
            for (k, v) in d.borrow().items() {
                fields.push((k.as_str()?.to_string(), v.clone()));
            }
        }
        let path = format_path(&self.filepath, &fields, ctx)?;
        if self.save_best_only {
            let Some(current) = log_value(logs, &self.monitor)? else {
                warn(
                    ctx,
                    &format!(
                        "Can save best model only with {} available, skipping.",
                        self.monitor
                    ),
                );
                return Ok(());
            };
            let current = to_f64(ctx, &current)?;
            let best = *self.best.borrow();
            let better = if self.higher {
                current > best
            } else {
                current < best
            };
            if !better {
                if self.verbose > 0 {
                    print_line(
                        ctx,
                        &format!(
                            "\nEpoch {}: {} did not improve from {best:.5}",
                            epoch + 1,
                            self.monitor
                        ),
                    );
                }
                return Ok(());
            }
            if self.verbose > 0 {
                print_line(ctx, &format!(
                    "\nEpoch {}: {} improved from {best:.5} to {current:.5}, saving model to {path}",
                    epoch + 1,
                    self.monitor
                ));
            }
            *self.best.borrow_mut() = current;
        } else if self.verbose > 0 {
            print_line(
                ctx,
                &format!("\nEpoch {}: saving model to {path}", epoch + 1),
            );
        }
        let method = if self.save_weights_only {
            "save_weights"
        } else {
            "save"
        };
        let f = ctx.getattr(model, method)?;
        ctx.call(&f, Args::new(vec![Value::from(path)]))?;
        Ok(())
    }
}

impl Rule for Checkpoint {
    fn class_name(&self) -> &'static str {
        "ModelCheckpoint"
    }
    fn module_path(&self) -> &'static str {
        "keras.src.callbacks.model_checkpoint"
    }
    fn hook(&self, name: &str, args: &Args, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        if name != "on_epoch_end" {
            return Ok(());
        }
        let (epoch, logs) = epoch_and_logs(args, name)?;
        self.save(epoch, &logs, model, ctx)
    }
    fn attr(&self, name: &str) -> Option<Value> {
        Some(match name {
            "filepath" => Value::str(&self.filepath),
            "monitor" => Value::str(&self.monitor),
            "best" => Value::Float(*self.best.borrow()),
            "save_best_only" => Value::Bool(self.save_best_only),
            _ => return None,
        })
    }
}

fn model_checkpoint(args: &Args, _ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "ModelCheckpoint",
        &[
            "filepath",
            "monitor",
            "verbose",
            "save_best_only",
            "save_weights_only",
            "mode",
            "save_freq",
            "initial_value_threshold",
        ],
        1,
    )?;
    let filepath = opt_str(&s[0], "")?;
    let save_weights_only = opt_bool(&s[4])?;
    if save_weights_only && !filepath.ends_with(".weights.h5") {
        return Err(PyErr::value_error(format!(
            "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided \
             must end in `.weights.h5` (Keras weights format). Received: filepath={filepath}"
        )));
    }
    if !save_weights_only && !filepath.ends_with(".keras") {
        return Err(PyErr::value_error(format!(
            "The filepath provided must end in `.keras` (Keras model format). Received: \
             filepath={filepath}"
        )));
    }
    if let Some(v) = given(&s[6]) {
        if v.as_str().ok() != Some("epoch") {
            return Err(PyErr::not_implemented(
                "ModelCheckpoint saves once per epoch here (save_freq='epoch').",
            ));
        }
    }
    let monitor = opt_str(&s[1], "val_loss")?;
    let mode = opt_str(&s[5], "auto")?;
    check_mode(&mode, "ModelCheckpoint")?;
    let higher = higher_is_better(&mode, &monitor);
    let initial = given(&s[7]).map(|v| v.as_float()).transpose()?;
    let start = initial.unwrap_or(if higher {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    });
    Ok(CallbackObj::value(Kind::Rule(Box::new(Checkpoint {
        filepath,
        monitor,
        verbose: opt_i64(&s[2], 0)?,
        save_best_only: opt_bool(&s[3])?,
        save_weights_only,
        higher,
        best: RefCell::new(start),
    }))))
}

/// Registers these callbacks in `tf.keras.callbacks`.
pub fn register(m: &NativeModule) {
    m.set(
        "LearningRateScheduler",
        func(
            "LearningRateScheduler",
            "LearningRateScheduler(schedule, verbose=0)",
            lr_scheduler,
        ),
    );
    m.set("ModelCheckpoint", func("ModelCheckpoint", "ModelCheckpoint(filepath, monitor='val_loss', verbose=0, save_best_only=False, save_weights_only=False, mode='auto', save_freq='epoch', initial_value_threshold=None)", model_checkpoint));
}
