//! `LearningRateScheduler` (each epoch, ask the user's `schedule(epoch, lr)` for the rate and
//! set `model.optimizer.learning_rate`; the rate joins the epoch's logs) and
//! `ModelCheckpoint` (save the model or its weights each epoch or every `save_freq` batches,
//! or only when the monitored value improves, to a path formatted like `str.format` from the
//! epoch, the batch and the logs, making its folder as needed). Both follow Keras 3.15,
//! including its messages and its file-extension checks.

use std::cell::RefCell;

use super::super::{func, given, print_line};
use super::callbacks::{to_f64, CallbackObj, Kind};
use super::monitor::Monitor;
use super::schedules::{epoch_and_logs, log_value, opt_bool, opt_i64, opt_str, warn, Rule};
use crate::bindings::stdlib::io_err;
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

/// When ModelCheckpoint saves: after every epoch, or after every `n` training batches
/// counted across epochs.
#[derive(Clone, Copy)]
enum SaveFreq {
    Epoch,
    Batches(i64),
}

struct CheckpointState {
    best: Option<f64>,
    epoch: i64,
    batches_since_saving: i64,
    last_batch_seen: Option<i64>,
}

struct Checkpoint {
    filepath: String,
    watch: Monitor,
    verbose: i64,
    save_best_only: bool,
    save_weights_only: bool,
    save_freq: SaveFreq,
    st: RefCell<CheckpointState>,
}

impl Checkpoint {
    /// Keras's `_should_save_on_batch`: counts the batches seen (a batch number that does
    /// not grow means a new epoch began) and says when `save_freq` of them have passed.
    fn due_on_batch(&self, batch: i64) -> bool {
        let SaveFreq::Batches(every) = self.save_freq else {
            return false;
        };
        let mut st = self.st.borrow_mut();
        let add = match st.last_batch_seen {
            Some(last) if batch > last => batch - last,
            _ => batch + 1,
        };
        st.batches_since_saving += add;
        st.last_batch_seen = Some(batch);
        if st.batches_since_saving >= every {
            st.batches_since_saving = 0;
            return true;
        }
        false
    }

    /// Keras's `_get_file_path`: `str.format` with the epoch (and batch) counted from 1
    /// and every logged value.
    fn file_path(
        &self,
        epoch: i64,
        batch: Option<i64>,
        logs: &Option<Value>,
        ctx: &mut dyn Ctx,
    ) -> PyResult<String> {
        let mut fields = vec![("epoch".to_string(), Value::Int(epoch + 1))];
        if let Some(b) = batch {
            fields.push(("batch".to_string(), Value::Int(b + 1)));
        }
        if let Some(Value::Dict(d)) = logs {
            for (k, v) in d.borrow().items() {
                let k = k.as_str()?.to_string();
                // A logged `batch` wins over the counted one, as in Keras.
                fields.retain(|(n, _)| n != &k);
                fields.push((k, v.clone()));
            }
        }
        format_path(&self.filepath, &fields, ctx).map_err(|e| {
            if e.type_name() != "KeyError" {
                return e;
            }
            let text = format!(
                "Failed to format this callback filepath: \"{}\". Reason: {}",
                self.filepath,
                e.message()
            );
            PyErr::key_error(text)
        })
    }

    /// Keras's `_should_save_model`, with its messages.
    fn should_save(
        &self,
        epoch: i64,
        logs: &Option<Value>,
        path: &str,
        model: &Value,
        ctx: &mut dyn Ctx,
    ) -> PyResult<bool> {
        if !self.save_best_only {
            if self.verbose > 0 {
                print_line(
                    ctx,
                    &format!("\nEpoch {}: saving model to {path}", epoch + 1),
                );
            }
            return Ok(true);
        }
        let monitor = &self.watch.monitor;
        let Some(current) = log_value(logs, monitor)? else {
            warn(
                ctx,
                &format!("Can save best model only with {monitor} available."),
            );
            return Ok(true);
        };
        let current = to_f64(ctx, &current)?;
        self.watch.resolve("ModelCheckpoint", model, ctx)?;
        let best = self.st.borrow().best;
        let best_str = best.map_or("None".to_string(), |b| format!("{b:.5}"));
        if self.watch.is_improvement(current, best) {
            if self.verbose > 0 {
                print_line(
                    ctx,
                    &format!(
                        "\nEpoch {}: {monitor} improved from {best_str} to {current:.5}, \
                         saving model to {path}",
                        epoch + 1
                    ),
                );
            }
            self.st.borrow_mut().best = Some(current);
            return Ok(true);
        }
        if self.verbose > 0 {
            print_line(
                ctx,
                &format!(
                    "\nEpoch {}: {monitor} did not improve from {best_str}",
                    epoch + 1
                ),
            );
        }
        Ok(false)
    }

    /// Keras's `_save_model`: decides, makes the folder, saves, says so.
    fn save(
        &self,
        epoch: i64,
        batch: Option<i64>,
        logs: &Option<Value>,
        model: &Value,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        let path = self.file_path(epoch, batch, logs, ctx)?;
        if !self.should_save(epoch, logs, &path, model, ctx)? {
            return Ok(());
        }
        let target = std::path::Path::new(&path);
        if target.is_dir() {
            return Err(PyErr::new(
                "OSError",
                format!(
                    "Please specify a non-directory filepath for ModelCheckpoint. Filepath \
                     used is an existing directory: {path}"
                ),
            ));
        }
        if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_err(e, &dir.display().to_string()))?;
        }
        let method = if self.save_weights_only {
            "save_weights"
        } else {
            "save"
        };
        let f = ctx.getattr(model, method)?;
        ctx.call(
            &f,
            Args::new(vec![Value::from(path.clone())]).with_kw("overwrite", Value::Bool(true)),
        )?;
        if self.verbose > 0 {
            print_line(
                ctx,
                &format!("\nEpoch {}: finished saving model to {path}", epoch + 1),
            );
        }
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
        match name {
            "on_epoch_begin" => {
                let (epoch, _) = epoch_and_logs(args, name)?;
                self.st.borrow_mut().epoch = epoch;
                Ok(())
            }
            "on_train_batch_end" => {
                let s = args.bind(name, &["batch", "logs"], 1)?;
                let batch = s[0].as_ref().map_or(Ok(0), |v| v.as_int())?;
                if !self.due_on_batch(batch) {
                    return Ok(());
                }
                let epoch = self.st.borrow().epoch;
                self.save(epoch, Some(batch), &given(&s[1]).cloned(), model, ctx)
            }
            "on_epoch_end" => {
                let (epoch, logs) = epoch_and_logs(args, name)?;
                self.watch.resolve("ModelCheckpoint", model, ctx)?;
                match self.save_freq {
                    SaveFreq::Epoch => self.save(epoch, None, &logs, model, ctx),
                    SaveFreq::Batches(_) => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }
    fn reads_weights_per_batch(&self) -> bool {
        matches!(self.save_freq, SaveFreq::Batches(_))
    }
    fn attr(&self, name: &str) -> Option<Value> {
        Some(match name {
            "filepath" => Value::str(&self.filepath),
            "monitor" => Value::str(&self.watch.monitor),
            "mode" => Value::str(&self.watch.mode),
            "verbose" => Value::Int(self.verbose),
            "best" => self.st.borrow().best.map_or(Value::None, Value::Float),
            "save_best_only" => Value::Bool(self.save_best_only),
            "save_weights_only" => Value::Bool(self.save_weights_only),
            "save_freq" => match self.save_freq {
                SaveFreq::Epoch => Value::str("epoch"),
                SaveFreq::Batches(n) => Value::Int(n),
            },
            _ => return None,
        })
    }
}

fn model_checkpoint(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
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
    let filepath = match given(&s[0]) {
        Some(v) => ctx.str(v)?,
        None => String::new(),
    };
    let monitor = opt_str(&s[1], "val_loss")?;
    let mode = opt_str(&s[5], "auto")?;
    let watch = Monitor::new("ModelCheckpoint", &monitor, &mode, 0.0, ctx);
    let save_freq = match given(&s[6]) {
        None => SaveFreq::Epoch,
        Some(Value::Str(t)) if &**t == "epoch" => SaveFreq::Epoch,
        Some(Value::Int(n)) => SaveFreq::Batches(*n),
        Some(other) => {
            let shown = ctx.str(other)?;
            return Err(PyErr::value_error(format!(
                "Unrecognized save_freq: {shown}. Expected save_freq are 'epoch' or integer \
                 values"
            )));
        }
    };
    let save_weights_only = opt_bool(&s[4])?;
    if save_weights_only && !filepath.ends_with(".weights.h5") {
        return Err(PyErr::value_error(format!(
            "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided \
             must end in `.weights.h5` (Keras weights format). Received: filepath={filepath}"
        )));
    }
    if !save_weights_only && !filepath.ends_with(".keras") && !filepath.ends_with(".h5") {
        return Err(PyErr::value_error(format!(
            "The filepath provided must end in `.keras` (Keras model format). Received: \
             filepath={filepath}"
        )));
    }
    let initial = given(&s[7]).map(|v| to_f64(ctx, v)).transpose()?;
    Ok(CallbackObj::value(Kind::Rule(Box::new(Checkpoint {
        filepath,
        watch,
        verbose: opt_i64(&s[2], 0)?,
        save_best_only: opt_bool(&s[3])?,
        save_weights_only,
        save_freq,
        st: RefCell::new(CheckpointState {
            best: initial,
            epoch: 0,
            batches_since_saving: 0,
            last_batch_seen: None,
        }),
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
