//! `model.fit`, `evaluate`, `predict`, `summary` and saving: arguments converted to flat f32
//! rows, the engine's epoch loop run over the model's trainer (one replica, or the mirrored
//! trainer of a strategy), the user's callbacks called through [`Bridge`], and Keras's
//! progress shown as one display per epoch updated in place (text and HTML from the
//! display part). KeyboardInterrupt stops between steps and leaves the model usable.

use std::path::Path;
use std::time::{Duration, Instant};

use super::super::convert::{numpy_value, to_array};
use super::super::data_iter::{dataset_arg, is_dataset, validation_pair};
use super::super::distribute::check_fit_scope;
use super::super::{bound, given};
use super::callbacks::{logs_dict, new_history, CallbackList};
use super::layers::kerr;
use super::model::{Engine, ModelObj};
use crate::display::progress::{epoch_header, keras_order, Mode, ProgressBar};
use crate::keras::{Callback, KResult, KerasError, Logs, TrainInfo, Trainer};
use crate::lang::{Args, Ctx, PyErr, PyResult, Value};
use crate::session::{Output, StreamName};
use crate::tensor::DType;

/// Keras's `verbose` argument: `'auto'` is 1 in a notebook.
fn verbose_arg(v: Option<&Value>) -> PyResult<u8> {
    match v {
        None | Some(Value::Str(_)) => Ok(1),
        Some(v) => Ok(v.as_int()?.clamp(0, 2) as u8),
    }
}

fn rows(v: &Value, ctx: &mut dyn Ctx) -> PyResult<(Vec<usize>, Vec<f32>)> {
    Ok(to_array(v, Some(DType::F32), false, ctx)?.to_f32_vec())
}

/// Shows progress frames: the first as a display with an id, later ones as updates.
struct Display {
    id: String,
    shown: bool,
}

impl Display {
    fn new(tag: &str) -> Display {
        Display {
            id: format!("keras-{tag}-{}", uuid::Uuid::new_v4()),
            shown: false,
        }
    }
    fn show(&mut self, ctx: &mut dyn Ctx, r: &crate::display::progress::Rendered, verbose: u8) {
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
struct Bridge<'a> {
    ctx: &'a mut dyn Ctx,
    list: CallbackList,
    model: Value,
    err: Option<PyErr>,
    verbose: u8,
    epochs: usize,
    steps: usize,
    bar: Option<(ProgressBar, Display, Instant)>,
}

impl Bridge<'_> {
    fn py(&mut self, hook: &str, pos: Vec<Value>, logs: &Value) -> KResult<()> {
        match self.list.call(self.ctx, hook, pos, logs) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.err = Some(e);
                Err(KerasError::Interrupted)
            }
        }
    }
    /// A hook that may read or write the model's weights: they go through the running
    /// trainer `t` (see `live.rs`).
    fn py_live(
        &mut self,
        hook: &str,
        pos: Vec<Value>,
        logs: &Value,
        t: &mut dyn Trainer,
    ) -> KResult<()> {
        let model = self.model.clone();
        let Some(m) = model.downcast::<ModelObj>() else {
            return self.py(hook, pos, logs);
        };
        m.live.enter(t)?;
        let r = self.py(hook, pos, logs);
        m.live.leave(t)?;
        r
    }
    fn stop(&self) -> bool {
        self.model
            .downcast::<ModelObj>()
            .is_some_and(|m| m.stop_training.get())
    }
    /// Keeps the compiled learning rate and the engine's equal, in whichever direction
    /// Python changed it (LearningRateScheduler writes `model.optimizer.learning_rate`).
    fn sync_lr(&self, t: &mut dyn Trainer, from_python: bool) {
        if let Some(m) = self.model.downcast::<ModelObj>() {
            if let Some(c) = m.compiled.borrow_mut().as_mut() {
                if from_python {
                    t.set_learning_rate(c.optimizer.learning_rate);
                } else {
                    c.optimizer.learning_rate = t.learning_rate();
                }
            }
        }
    }
}

fn logs_vec(logs: &Logs) -> Vec<(String, f64)> {
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
                self.ctx.emit(Output::Stream {
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
    fn on_batch_end(&mut self, batch: usize, logs: &Logs, _t: &mut dyn Trainer) -> KResult<bool> {
        let shown = keras_order(&logs_vec(logs));
        if let Some((bar, disp, start)) = self.bar.as_mut() {
            if let Some(r) = bar.update(batch + 1, &shown, start.elapsed()) {
                disp.show(self.ctx, &r, self.verbose);
            }
        }
        self.ctx
            .check_interrupt()
            .map_err(|_| KerasError::Interrupted)?;
        self.py(
            "on_train_batch_end",
            vec![Value::Int(batch as i64)],
            &logs_dict(&logs_vec(logs)),
        )?;
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
                disp.show(self.ctx, &r, self.verbose);
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
    fn on_train_end(&mut self, t: &mut dyn Trainer) -> KResult<()> {
        self.py_live("on_train_end", vec![], &Value::dict_from(vec![]), t)
    }
}

fn first_variable(m: &ModelObj) -> String {
    let cfg = m.config.borrow();
    match cfg
        .as_ref()
        .and_then(|c| c.plan().ok())
        .and_then(|p| p.vars.first().cloned())
    {
        Some(v) => format!(
            "<KerasVariable shape={}, dtype=float32, path={}>",
            crate::tensor::shape_str(&v.shape),
            v.path
        ),
        None => "<no variables>".into(),
    }
}

fn fit(m: &ModelObj, this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "fit",
        &[
            "x",
            "y",
            "batch_size",
            "epochs",
            "verbose",
            "callbacks",
            "validation_split",
            "validation_data",
            "shuffle",
            "class_weight",
            "sample_weight",
            "initial_epoch",
            "steps_per_epoch",
        ],
        1,
    )?;
    let x = s[0].clone().unwrap_or(Value::None);
    let ds = dataset_arg(&x, given(&s[12]), ctx)?;
    let (x, y_ds) = ds
        .as_ref()
        .map_or((x.clone(), None), |d| (d.x.clone(), d.y.clone()));
    let (xs, xd) = rows(&x, ctx)?;
    let y = y_ds.as_ref().or(given(&s[1])).ok_or_else(|| {
        PyErr::value_error(
            "fit needs targets: pass y (this kernel does not take datasets of (x, y) here yet)",
        )
    })?;
    let (_, yd) = rows(y, ctx)?;
    m.ensure_built(this, &xs, ctx)?;
    let created = m.created_under.borrow().clone();
    let compiled = m.compiled_under.borrow().clone();
    check_fit_scope(ctx, created.as_ref(), compiled.as_ref(), &first_variable(m))?;
    let batch = match &ds {
        Some(d) => d.batch,
        None => given(&s[2]).map_or(Ok(32), |v| v.as_int())?.max(1) as usize,
    };
    let opts = crate::keras::FitOptions {
        epochs: given(&s[3]).map_or(Ok(1), |v| v.as_int())?.max(0) as usize,
        batch_size: batch,
        shuffle: match &ds {
            Some(d) => d.shuffle,
            None => given(&s[8]).map_or(Ok(true), |v| v.as_bool_strict())?,
        },
        validation_split: given(&s[6]).map_or(Ok(0.0), |v| v.as_float())? as f32,
        initial_epoch: given(&s[11]).map_or(Ok(0), |v| v.as_int())?.max(0) as usize,
        seed: ctx.execution_count(),
        nan_is_error: true,
    };
    let val = match given(&s[7]) {
        Some(v) if is_dataset(v) => {
            let (vx, vy) = validation_pair(v, ctx)?;
            Some((rows(&vx, ctx)?.1, rows(&vy, ctx)?.1))
        }
        Some(v) => {
            let items = v.as_seq().unwrap_or_default();
            let (Some(vx), Some(vy)) = (items.first(), items.get(1)) else {
                return Err(PyErr::value_error(
                    "validation_data must be a tuple (x_val, y_val)",
                ));
            };
            Some((rows(vx, ctx)?.1, rows(vy, ctx)?.1))
        }
        None => None,
    };
    let verbose = verbose_arg(given(&s[4]))?;
    let mut list = CallbackList::from_arg(given(&s[5]), ctx)?;
    let history = new_history();
    list.items.push(history.clone());
    let params = Value::dict_from(vec![
        ("verbose", Value::Int(verbose as i64)),
        ("epochs", Value::Int(opts.epochs as i64)),
    ]);
    list.set_model(ctx, this, &params)?;
    m.stop_training.set(false);
    let flag = ctx.interrupt_flag();
    let mut bridge = Bridge {
        ctx,
        list,
        model: this.clone(),
        err: None,
        verbose,
        epochs: opts.epochs,
        steps: 0,
        bar: None,
    };
    let result = m.with_engine(|e| {
        if let Engine::Mirrored(t) = e {
            t.begin_fit(batch);
        }
        let data = crate::keras::Data { x: &xd, y: &yd };
        let validation = val
            .as_ref()
            .map(|(vx, vy)| crate::keras::Data { x: vx, y: vy });
        let mut cbs: [&mut dyn Callback; 1] = [&mut bridge];
        Ok(crate::keras::fit(
            e.trainer(),
            data,
            validation,
            &opts,
            &mut cbs,
            Some(&flag),
        ))
    })?;
    // The interrupt flag is the session's to clear; this only reports it.
    if let Some(e) = bridge.err.take() {
        return Err(e);
    }
    result.map_err(kerr)?;
    Ok(history)
}

fn predict(m: &ModelObj, this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "predict",
        &["x", "batch_size", "verbose", "steps", "callbacks"],
        1,
    )?;
    let x = s[0].clone().unwrap_or(Value::None);
    let ds = dataset_arg(&x, given(&s[3]), ctx)?;
    let x = ds.as_ref().map_or(x, |d| d.x.clone());
    let batch = match &ds {
        Some(d) => d.batch,
        None => given(&s[1]).map_or(Ok(32), |v| v.as_int())?.max(1) as usize,
    };
    let verbose = verbose_arg(given(&s[2]))?;
    let start = Instant::now();
    let out = m.forward(this, &x, batch, ctx)?;
    let steps = out
        .shape()
        .first()
        .copied()
        .unwrap_or(0)
        .div_ceil(batch)
        .max(1);
    final_frame(ctx, steps, &[], verbose, start.elapsed(), "predict");
    Ok(numpy_value(out))
}

fn final_frame(
    ctx: &mut dyn Ctx,
    steps: usize,
    logs: &[(String, f64)],
    verbose: u8,
    elapsed: Duration,
    tag: &str,
) {
    let mut bar = ProgressBar::new(Some(steps), verbose, Mode::Notebook);
    if let Some(r) = bar.finish(steps, logs, elapsed) {
        Display::new(tag).show(ctx, &r, verbose);
    }
}

fn evaluate(m: &ModelObj, this: &Value, args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "evaluate",
        &[
            "x",
            "y",
            "batch_size",
            "verbose",
            "sample_weight",
            "steps",
            "callbacks",
            "return_dict",
        ],
        1,
    )?;
    let x = s[0].clone().unwrap_or(Value::None);
    let ds = dataset_arg(&x, given(&s[5]), ctx)?;
    let (x, y) = match &ds {
        Some(d) => (d.x.clone(), d.y.clone().unwrap_or(Value::None)),
        None => (x, s[1].clone().unwrap_or(Value::None)),
    };
    let (xs, xd) = rows(&x, ctx)?;
    let (_, yd) = rows(&y, ctx)?;
    m.ensure_built(this, &xs, ctx)?;
    let batch = match &ds {
        Some(d) => d.batch,
        None => given(&s[2]).map_or(Ok(32), |v| v.as_int())?.max(1) as usize,
    };
    let verbose = verbose_arg(given(&s[3]))?;
    let flag = ctx.interrupt_flag();
    let start = Instant::now();
    let logs = m.with_engine(|e| {
        crate::keras::evaluate(
            e.trainer(),
            crate::keras::Data { x: &xd, y: &yd },
            batch,
            Some(&flag),
        )
        .map_err(kerr)
    })?;
    let steps = xs.first().copied().unwrap_or(0).div_ceil(batch).max(1);
    final_frame(
        ctx,
        steps,
        &keras_order(&logs),
        verbose,
        start.elapsed(),
        "evaluate",
    );
    if given(&s[7]).is_some_and(|v| matches!(v, Value::Bool(true))) {
        let pairs: Vec<(&str, Value)> = logs
            .iter()
            .map(|(k, v)| (k.as_str(), Value::Float(*v)))
            .collect();
        return Ok(Value::dict_from(pairs));
    }
    Ok(match logs.as_slice() {
        [(_, only)] => Value::Float(*only),
        many => Value::list(many.iter().map(|(_, v)| Value::Float(*v)).collect()),
    })
}

fn path_arg(args: &Args, name: &str) -> PyResult<String> {
    let s = args.bind(name, &["filepath", "overwrite", "save_format"], 1)?;
    Ok(s[0].as_ref().unwrap_or(&Value::None).as_str()?.to_string())
}

fn save(m: &ModelObj, args: &Args, weights_only: bool) -> PyResult<Value> {
    let path = path_arg(args, if weights_only { "save_weights" } else { "save" })?;
    m.with_engine(|e| {
        let t = e.trainer_ref();
        if weights_only {
            crate::keras::save_weights(
                Path::new(&path),
                t.config(),
                &t.get_weights().map_err(kerr)?,
            )
            .map_err(kerr)
        } else {
            let saved = crate::keras::SavedModel::from_trainer(t).map_err(kerr)?;
            crate::keras::save_model(Path::new(&path), &saved).map_err(kerr)
        }
    })?;
    Ok(Value::None)
}

fn load_weights(m: &ModelObj, args: &Args) -> PyResult<Value> {
    let path = path_arg(args, "load_weights")?;
    let cfg = m
        .config
        .borrow()
        .clone()
        .ok_or_else(|| PyErr::value_error("Build the model before loading weights into it."))?;
    let ws = crate::keras::load_weights(Path::new(&path), &cfg).map_err(kerr)?;
    m.with_engine(|e| e.trainer().set_weights(&ws).map_err(kerr))?;
    Ok(Value::None)
}

fn summary(m: &ModelObj, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let summary = super::summary::summary_of(m)?;
    ctx.emit(Output::DisplayData {
        data: summary.bundle(),
        metadata: Default::default(),
        display_id: None,
    });
    Ok(Value::None)
}

/// The model methods implemented here, bound to `this`.
pub fn model_method(this: &Value, name: &str) -> PyResult<Option<Value>> {
    Ok(Some(match name {
        "fit" => bound::<ModelObj>(this, name, |m, this, a, c| fit(m, this, a, c)),
        "predict" => bound::<ModelObj>(this, name, |m, this, a, c| predict(m, this, a, c)),
        "evaluate" => bound::<ModelObj>(this, name, |m, this, a, c| evaluate(m, this, a, c)),
        "summary" => bound::<ModelObj>(this, name, |m, _, _, c| summary(m, c)),
        "save" => bound::<ModelObj>(this, name, |m, _, a, _| save(m, a, false)),
        "save_weights" => bound::<ModelObj>(this, name, |m, _, a, _| save(m, a, true)),
        "load_weights" => bound::<ModelObj>(this, name, |m, _, a, _| load_weights(m, a)),
        _ => return Ok(None),
    }))
}
