//! `tf.keras.callbacks.TensorBoard` and the `tensorboard` module a notebook loads with
//! `%load_ext tensorboard`. The callback writes real event files as Keras 3.15 does through
//! `tf.summary`: under `log_dir/train` the epoch's training logs and the learning rate as
//! `epoch_<name>` at step `epoch`, and with `update_freq` a batch count the running batch
//! logs as `batch_<name>` at the global batch number; under `log_dir/validation` the
//! validation logs as `epoch_<name>` and, as Keras's evaluation inside fit does,
//! `evaluation_<name>_vs_iterations` at the optimizer's step count; with a batch frequency,
//! only at the steps Keras's `record_if` lets through. `%tensorboard --logdir
//! DIR` (`tensorboard.notebook.start`) reads those files back and shows every scalar as an
//! inline plot, saying that no TensorBoard server is started. The byte format is
//! `keras::callbacks::event_file`'s; the plot is the display part's.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::super::{func, given, print_line};
use super::callbacks::{to_f64, CallbackObj, Kind};
use super::schedules::{epoch_and_logs, opt_i64, Rule};
use crate::bindings::stdlib::io_err;
use crate::cell::Output;
use crate::display::tensorboard::{scalar_figure, Run};
use crate::keras::callbacks::event_file::{read_scalars, EventWriter};
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};

/// TensorFlow numbers the event files a process writes, across all writers.
static FILES_WRITTEN: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Copy, PartialEq)]
enum UpdateFreq {
    Epoch,
    Batches(i64),
}

struct BoardState {
    train: Option<EventWriter>,
    val: Option<EventWriter>,
    global_train_batch: i64,
    /// Validation batches seen by this callback, across fits, as Keras counts them.
    global_test_batch: i64,
}

struct TensorBoard {
    log_dir: String,
    histogram_freq: i64,
    write_graph: bool,
    update_freq: UpdateFreq,
    st: RefCell<BoardState>,
}

fn io_error(e: std::io::Error, path: &Path) -> PyErr {
    io_err(e, &path.display().to_string())
}

/// The open writer of one run folder, made on first use as `tf.summary` makes it.
fn writer<'a>(slot: &'a mut Option<EventWriter>, dir: &Path) -> PyResult<&'a mut EventWriter> {
    if slot.is_none() {
        let n = FILES_WRITTEN.fetch_add(1, Ordering::SeqCst);
        *slot = Some(EventWriter::create(dir, n).map_err(|e| io_error(e, dir))?);
    }
    slot.as_mut()
        .ok_or_else(|| PyErr::new("OSError", "the event file could not be opened"))
}

/// `(name, value)` of a logs dict, in its order.
fn entries(logs: &Option<Value>, ctx: &mut dyn Ctx) -> PyResult<Vec<(String, f64)>> {
    let mut out = vec![];
    if let Some(Value::Dict(d)) = logs {
        let items: Vec<(Value, Value)> = d
            .borrow()
            .items()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (k, v) in items {
            out.push((ctx.str(&k)?, to_f64(ctx, &v)?));
        }
    }
    Ok(out)
}

impl TensorBoard {
    fn train_dir(&self) -> PathBuf {
        Path::new(&self.log_dir).join("train")
    }
    fn val_dir(&self) -> PathBuf {
        Path::new(&self.log_dir).join("validation")
    }

    /// Keras records summaries under `tf.summary.record_if(step % update_freq == 0)`, the
    /// step being the batch count (training, or validation while it runs) when the writer
    /// was last entered; so with a batch frequency even the epoch's scalars are written only
    /// when the batch count at the epoch's end is a multiple of it.
    fn records_at(&self, step: i64) -> bool {
        match self.update_freq {
            UpdateFreq::Epoch => true,
            UpdateFreq::Batches(every) => every > 0 && step % every == 0,
        }
    }

    fn batch_end(&self, logs: &Option<Value>, ctx: &mut dyn Ctx) -> PyResult<()> {
        let step = self.st.borrow().global_train_batch;
        if self.update_freq == UpdateFreq::Epoch || !self.records_at(step) {
            return Ok(());
        }
        let logs = entries(logs, ctx)?;
        let dir = self.train_dir();
        let mut st = self.st.borrow_mut();
        let w = writer(&mut st.train, &dir)?;
        for (name, v) in logs {
            w.scalar(&format!("batch_{name}"), v, step)
                .map_err(|e| io_error(e, &w.path))?;
        }
        Ok(())
    }

    /// Keras's `on_test_end` inside fit: the validation results against the optimizer's
    /// step count.
    fn test_end(&self, logs: &Option<Value>, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        let logs = entries(logs, ctx)?;
        let opt = ctx.getattr(model, "optimizer")?;
        // The optimizer's step count, as Keras reads it; this fit's batches if unknown.
        let iterations = ctx
            .getattr(&opt, "iterations")
            .ok()
            .and_then(|v| to_f64(ctx, &v).ok())
            .map_or(self.st.borrow().global_train_batch, |n| n as i64);
        if !self.records_at(self.st.borrow().global_test_batch) {
            return Ok(());
        }
        let dir = self.val_dir();
        let mut st = self.st.borrow_mut();
        let w = writer(&mut st.val, &dir)?;
        for (name, v) in &logs {
            w.scalar(&format!("evaluation_{name}_vs_iterations"), *v, iterations)
                .map_err(|e| io_error(e, &w.path))?;
        }
        Ok(())
    }

    fn epoch_end(
        &self,
        epoch: i64,
        logs: &Option<Value>,
        model: &Value,
        ctx: &mut dyn Ctx,
    ) -> PyResult<()> {
        let logs = entries(logs, ctx)?;
        if logs.is_empty() {
            return Ok(());
        }
        let (val, mut train): (Vec<_>, Vec<_>) =
            logs.into_iter().partition(|(k, _)| k.starts_with("val_"));
        let opt = ctx.getattr(model, "optimizer")?;
        let lr = ctx.getattr(&opt, "learning_rate")?;
        let lr = f64::from(to_f64(ctx, &lr)? as f32);
        match train.iter_mut().find(|(k, _)| k == "learning_rate") {
            Some(entry) => entry.1 = lr,
            None => train.push(("learning_rate".into(), lr)),
        }
        let (train_dir, val_dir) = (self.train_dir(), self.val_dir());
        let records = self.records_at(self.st.borrow().global_train_batch);
        let mut st = self.st.borrow_mut();
        let w = writer(&mut st.train, &train_dir)?;
        if records {
            for (name, v) in &train {
                w.scalar(&format!("epoch_{name}"), *v, epoch)
                    .map_err(|e| io_error(e, &w.path))?;
            }
        }
        w.flush().map_err(|e| io_error(e, &w.path))?;
        if !val.is_empty() {
            let w = writer(&mut st.val, &val_dir)?;
            if records {
                for (name, v) in &val {
                    let name = name.strip_prefix("val_").unwrap_or(name);
                    w.scalar(&format!("epoch_{name}"), *v, epoch)
                        .map_err(|e| io_error(e, &w.path))?;
                }
            }
            w.flush().map_err(|e| io_error(e, &w.path))?;
        }
        Ok(())
    }

    fn close(&self) -> PyResult<()> {
        let mut st = self.st.borrow_mut();
        for w in [st.train.take(), st.val.take()].into_iter().flatten() {
            let mut w = w;
            w.flush().map_err(|e| io_error(e, &w.path))?;
        }
        Ok(())
    }
}

impl Rule for TensorBoard {
    fn class_name(&self) -> &'static str {
        "TensorBoard"
    }
    fn module_path(&self) -> &'static str {
        "keras.src.callbacks.tensorboard"
    }
    fn hook(&self, name: &str, args: &Args, model: &Value, ctx: &mut dyn Ctx) -> PyResult<()> {
        match name {
            "on_train_begin" => {
                self.st.borrow_mut().global_train_batch = 0;
                Ok(())
            }
            "on_train_batch_begin" => {
                self.st.borrow_mut().global_train_batch += 1;
                Ok(())
            }
            "on_test_batch_begin" => {
                self.st.borrow_mut().global_test_batch += 1;
                Ok(())
            }
            "on_test_end" => {
                let s = args.bind(name, &["logs"], 0)?;
                self.test_end(&given(&s[0]).cloned(), model, ctx)
            }
            "on_train_batch_end" => {
                let s = args.bind(name, &["batch", "logs"], 1)?;
                self.batch_end(&given(&s[1]).cloned(), ctx)
            }
            "on_epoch_end" => {
                let (epoch, logs) = epoch_and_logs(args, name)?;
                self.epoch_end(epoch, &logs, model, ctx)
            }
            "on_train_end" => self.close(),
            _ => Ok(()),
        }
    }
    fn attr(&self, name: &str) -> Option<Value> {
        Some(match name {
            "log_dir" => Value::str(&self.log_dir),
            "histogram_freq" => Value::Int(self.histogram_freq),
            "write_graph" => Value::Bool(self.write_graph),
            "update_freq" => match self.update_freq {
                UpdateFreq::Epoch => Value::str("epoch"),
                UpdateFreq::Batches(n) => Value::Int(n),
            },
            _ => return None,
        })
    }
}

fn tensorboard(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let names = [
        "log_dir",
        "histogram_freq",
        "write_graph",
        "write_images",
        "write_steps_per_second",
        "update_freq",
        "profile_batch",
        "embeddings_freq",
        "embeddings_metadata",
    ];
    let s = args.bind("TensorBoard", &names, 0)?;
    let log_dir = match given(&s[0]) {
        Some(v) => ctx.str(v)?,
        None => "logs".to_string(),
    };
    let histogram_freq = opt_i64(&s[1], 0)?;
    if histogram_freq != 0 {
        return Err(PyErr::not_implemented(
            "TensorBoard(histogram_freq=...) is not available here: this kernel writes \
             scalars (epoch and batch logs) only. Use histogram_freq=0.",
        ));
    }
    // Options that add other kinds of data than scalars are refused rather than ignored.
    for (i, what) in [
        (3, "write_images"),
        (4, "write_steps_per_second"),
        (6, "profile_batch"),
        (7, "embeddings_freq"),
        (8, "embeddings_metadata"),
    ] {
        let set = match given(&s[i]) {
            None | Some(Value::None) => false,
            Some(Value::Bool(b)) => *b,
            Some(Value::Int(n)) => *n != 0,
            Some(_) => true,
        };
        if set {
            return Err(PyErr::not_implemented(format!(
                "TensorBoard({what}=...) is not available here: this kernel writes scalars \
                 (epoch and batch logs) only."
            )));
        }
    }
    let update_freq = match given(&s[5]) {
        None => UpdateFreq::Epoch,
        Some(Value::Str(t)) if &**t == "epoch" => UpdateFreq::Epoch,
        Some(Value::Str(t)) if &**t == "batch" => UpdateFreq::Batches(1),
        Some(Value::Int(n)) => UpdateFreq::Batches(*n),
        Some(other) => {
            let shown = ctx.repr(other)?;
            return Err(PyErr::value_error(format!(
                "Unrecognized update_freq: {shown}. Expected 'epoch', 'batch' or an integer"
            )));
        }
    };
    let write_graph = match given(&s[2]) {
        Some(v) => v.as_bool_strict()?,
        None => true,
    };
    Ok(CallbackObj::value(Kind::Rule(Box::new(TensorBoard {
        log_dir,
        histogram_freq,
        write_graph,
        update_freq,
        st: RefCell::new(BoardState {
            train: None,
            val: None,
            global_train_batch: 0,
            global_test_batch: 0,
        }),
    }))))
}

/// Registers `TensorBoard` in `tf.keras.callbacks`.
pub fn register(m: &NativeModule) {
    m.set(
        "TensorBoard",
        func(
            "TensorBoard",
            "TensorBoard(log_dir='logs', histogram_freq=0, write_graph=True, \
             write_images=False, write_steps_per_second=False, update_freq='epoch', \
             profile_batch=0, embeddings_freq=0, embeddings_metadata=None)",
            tensorboard,
        ),
    );
}

/// Every run under `logdir` (a folder holding event files, named by its path below
/// `logdir`), with its scalars in the order written.
fn runs_under(logdir: &Path) -> Vec<Run> {
    let mut out = vec![];
    let mut stack = vec![logdir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = vec![];
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains("tfevents"))
            {
                files.push(p);
            }
        }
        files.sort();
        let mut scalars = vec![];
        for f in files {
            if let Ok(bytes) = std::fs::read(&f) {
                scalars.extend(read_scalars(&bytes));
            }
        }
        if !scalars.is_empty() {
            let name = dir
                .strip_prefix(logdir)
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            out.push(Run {
                name: if name.is_empty() { ".".into() } else { name },
                scalars: scalars
                    .into_iter()
                    .map(|s| (s.tag, s.step, s.value))
                    .collect(),
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The `--logdir` of TensorBoard's command line (`--logdir DIR` or `--logdir=DIR`).
fn logdir_arg(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        if let Some(v) = w.strip_prefix("--logdir=") {
            return Some(v.trim_matches(|c| c == '"' || c == '\'').to_string());
        }
        if *w == "--logdir" {
            return words
                .get(i + 1)
                .map(|v| v.trim_matches(|c| c == '"' || c == '\'').to_string());
        }
    }
    None
}

/// `tensorboard.notebook.start(args_string)`: what `%tensorboard ARGS` runs.
fn start(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("start", &["args_string"], 1)?;
    let line = match given(&s[0]) {
        Some(v) => v.as_str()?.to_string(),
        None => String::new(),
    };
    let Some(logdir) = logdir_arg(&line) else {
        return Err(PyErr::value_error(
            "%tensorboard needs a log folder: %tensorboard --logdir DIR",
        ));
    };
    print_line(
        ctx,
        &format!(
            "This kernel does not start a TensorBoard server; the scalars logged under \
             {logdir} are plotted here."
        ),
    );
    let runs = runs_under(Path::new(&logdir));
    if runs.is_empty() {
        print_line(ctx, &format!("No scalar data was found in {logdir}."));
        return Ok(Value::None);
    }
    let fig = scalar_figure(&runs);
    let data = crate::bindings::plt::objects::figure_bundle(&fig)?;
    ctx.emit(Output::DisplayData {
        data,
        metadata: Default::default(),
        display_id: None,
    });
    Ok(Value::None)
}

/// The `tensorboard` module: `tensorboard.notebook.start`, which `%tensorboard` calls.
pub fn module(name: &str) -> Value {
    let notebook = NativeModule::new(
        "tensorboard.notebook",
        "TensorBoard in a notebook: start(args_string) plots the logged scalars inline.",
    )
    .with(
        "start",
        func(
            "start",
            "start(args_string)\n\nPlots the scalars of the event files under --logdir.",
            start,
        ),
    )
    .into_value();
    if name == "tensorboard.notebook" {
        return notebook;
    }
    NativeModule::new("tensorboard", "TensorBoard's notebook support.")
        .with("notebook", notebook)
        .into_value()
}
