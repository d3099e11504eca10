//! The epoch loop behind `fit`, `evaluate` and `predict`, over any [`Trainer`] (one replica
//! or N mirrored ones). It owns batching, shuffling, the validation split, Keras's
//! running-mean logs (weighted by batch size), the History, callbacks, and the interrupt
//! check between steps. It formats nothing: progress bars are callbacks of the display
//! part, fed with the same logs.

use super::callbacks::{Callback, TrainInfo};
use super::compile::metric_results;
use super::error::{KResult, KerasError};
use super::replica::StepStats;
use super::trainer::{example_lens, Rows, Trainer};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// Metric name to value. A `BTreeMap`, so keys come out sorted as Keras sorts them
/// (`accuracy`, `loss`, `val_accuracy`, `val_loss`).
pub type Logs = BTreeMap<String, f64>;

/// What `fit` returns: one value per epoch for each log key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    pub epoch: Vec<usize>,
    pub history: BTreeMap<String, Vec<f64>>,
    /// `(epoch, batch)` where a NaN or infinite loss stopped training under [`OnNaN::Stop`].
    pub invalid_loss: Option<(usize, usize)>,
}

impl History {
    pub fn record(&mut self, epoch: usize, logs: &Logs) {
        self.epoch.push(epoch);
        for (k, v) in logs {
            self.history.entry(k.clone()).or_default().push(*v);
        }
    }
}

/// Examples as flat f32 rows: `x` holds `n` inputs, `y` `n` targets.
#[derive(Debug, Clone, Copy)]
pub struct Data<'a> {
    pub x: &'a [f32],
    pub y: &'a [f32],
}

/// `fit`'s keyword arguments, with Keras's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct FitOptions {
    pub epochs: usize,
    pub batch_size: usize,
    pub shuffle: bool,
    /// Fraction taken from the END of the data (before shuffling), as Keras does.
    pub validation_split: f32,
    pub initial_epoch: usize,
    /// Seeds the per-epoch shuffle.
    pub seed: u64,
    /// What a NaN or infinite batch loss does.
    pub on_nan: OnNaN,
}

/// What `fit` does when a batch's loss is NaN or infinite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnNaN {
    /// Stop after that batch, as Keras's `TerminateOnNaN` does: the epoch's logs are
    /// recorded, `on_epoch_end` and `on_train_end` run, and the History says where it
    /// stopped ([`History::invalid_loss`]) so the caller can warn. Keras itself keeps going
    /// by default; a classroom is better served by stopping at the first invalid loss.
    Stop,
    /// Fail with `KerasError::NanLoss`.
    Raise,
    /// Keep training, as Keras does without `TerminateOnNaN`.
    Continue,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            epochs: 1,
            batch_size: 32,
            shuffle: true,
            validation_split: 0.0,
            initial_epoch: 0,
            seed: 0,
            on_nan: OnNaN::Stop,
        }
    }
}

/// Running means of loss and metrics over the batches seen so far.
struct Running {
    compiled: Option<super::CompileConfig>,
    total: StepStats,
}

impl Running {
    fn new(t: &dyn Trainer) -> Running {
        Running {
            compiled: t.compiled().cloned(),
            total: StepStats::default(),
        }
    }
    fn logs(&self, prefix: &str) -> Logs {
        let n = self.total.count.max(1) as f64;
        let mut logs = Logs::new();
        logs.insert(format!("{prefix}loss"), self.total.loss_sum / n);
        if let Some(c) = &self.compiled {
            for (name, value) in metric_results(c, &self.total.metric_sums, self.total.count) {
                logs.insert(format!("{prefix}{name}"), value);
            }
        }
        logs
    }
}

/// How many of `n` examples `validation_split` takes: Keras splits off the last fraction
/// of the examples before any shuffling.
pub fn validation_rows(n: usize, validation_split: f32) -> usize {
    (n as f64 * f64::from(validation_split)).floor() as usize
}

fn count(data: &Data, x_per: usize, y_per: usize) -> KResult<usize> {
    let n = data.x.len() / x_per.max(1);
    if n * x_per != data.x.len() || data.y.len() != n * y_per {
        return Err(KerasError::Shape {
            what: "Data cardinality is ambiguous: x and y must hold the same number of examples"
                .into(),
            expected: format!("{n} targets of {y_per} values"),
            got: format!("{} values", data.y.len()),
        });
    }
    Ok(n)
}

fn interrupted(flag: Option<&AtomicBool>) -> KResult<()> {
    match flag {
        Some(f) if f.load(Ordering::SeqCst) => Err(KerasError::Interrupted),
        _ => Ok(()),
    }
}

/// Trains for `opts.epochs` epochs and returns the History.
pub fn fit(
    t: &mut dyn Trainer,
    data: Data,
    validation: Option<Data>,
    opts: &FitOptions,
    callbacks: &mut [&mut dyn Callback],
    interrupt: Option<&AtomicBool>,
) -> KResult<History> {
    if t.compiled().is_none() {
        return Err(KerasError::NotCompiled("training"));
    }
    let (x_per, y_per) = example_lens(t)?;
    let n_all = count(&data, x_per, y_per)?;
    if !(0.0..1.0).contains(&opts.validation_split) {
        return Err(KerasError::Value(format!(
            "`validation_split` must be between 0 and 1, received: {}",
            opts.validation_split
        )));
    }
    let n_val_split = validation_rows(n_all, opts.validation_split);
    let n = n_all - n_val_split;
    let split_val = (n_val_split > 0).then(|| Data {
        x: &data.x[n * x_per..],
        y: &data.y[n * y_per..],
    });
    let validation = validation.or(split_val);
    let batch_size = opts.batch_size.max(1);
    t.check_batch(&data.x[..n * x_per], Some(&data.y[..n * y_per]), n)?;
    let mut history = History::default();
    let mut order: Vec<usize> = (0..n).collect();
    let mut scratch = (Vec::new(), Vec::new());
    let info = TrainInfo {
        epochs: opts.epochs,
        initial_epoch: opts.initial_epoch,
        steps: n.div_ceil(batch_size),
        samples: n,
    };
    for cb in callbacks.iter_mut() {
        cb.on_train_begin(&info, t)?;
    }
    let mut stop = false;
    for epoch in opts.initial_epoch..opts.epochs {
        for cb in callbacks.iter_mut() {
            cb.on_epoch_begin(epoch, t)?;
        }
        if opts.shuffle {
            let mut rng = StdRng::seed_from_u64(opts.seed ^ (epoch as u64).wrapping_mul(0x9E37));
            order.shuffle(&mut rng);
        }
        let mut run = Running::new(t);
        for (b, idx) in order.chunks(batch_size).enumerate() {
            interrupted(interrupt)?;
            for cb in callbacks.iter_mut() {
                cb.on_batch_begin(b, t)?;
            }
            let rows = Rows {
                x: data.x,
                x_per,
                y: data.y,
                y_per,
                idx,
            };
            let stats = t.train_rows(rows, &mut scratch)?;
            let invalid = !stats.loss_sum.is_finite();
            if invalid && opts.on_nan == OnNaN::Raise {
                return Err(KerasError::NanLoss { epoch, batch: b });
            }
            run.total.add(&stats);
            let logs = run.logs("");
            for cb in callbacks.iter_mut() {
                stop |= cb.on_batch_end(b, &logs, t)?;
            }
            if invalid && opts.on_nan == OnNaN::Stop {
                history.invalid_loss = Some((epoch, b));
                stop = true;
            }
            // Keras 3 checks `stop_training` after every batch, not only at an epoch's end.
            if stop {
                break;
            }
        }
        let mut logs = run.logs("");
        if let Some(v) = validation {
            // Keras's validation is an evaluate run, with the test hooks, logged unprefixed.
            let val = evaluate_logs(t, v, batch_size, interrupt, callbacks)?;
            logs.extend(val.into_iter().map(|(k, x)| (format!("val_{k}"), x)));
        }
        for cb in callbacks.iter_mut() {
            stop |= cb.on_epoch_end(epoch, &mut logs, t)?;
        }
        // Keras's History callback runs last, so it records keys other callbacks added.
        history.record(epoch, &logs);
        if stop {
            break;
        }
    }
    for cb in callbacks.iter_mut() {
        cb.on_train_end(t)?;
    }
    Ok(history)
}

fn evaluate_logs(
    t: &mut dyn Trainer,
    data: Data,
    batch_size: usize,
    interrupt: Option<&AtomicBool>,
    callbacks: &mut [&mut dyn Callback],
) -> KResult<Logs> {
    let (x_per, y_per) = example_lens(t)?;
    let n = count(&data, x_per, y_per)?;
    t.check_batch(data.x, Some(data.y), n)?;
    let mut run = Running::new(t);
    let bs = batch_size.max(1);
    for cb in callbacks.iter_mut() {
        cb.on_test_begin(t)?;
    }
    for (b, start) in (0..n).step_by(bs).enumerate() {
        interrupted(interrupt)?;
        for cb in callbacks.iter_mut() {
            cb.on_test_batch_begin(b, t)?;
        }
        let m = bs.min(n - start);
        let stats = t.eval_batch(
            &data.x[start * x_per..(start + m) * x_per],
            &data.y[start * y_per..(start + m) * y_per],
            m,
        )?;
        run.total.add(&stats);
        if !callbacks.is_empty() {
            let logs = run.logs("");
            for cb in callbacks.iter_mut() {
                cb.on_test_batch_end(b, &logs, t)?;
            }
        }
    }
    let logs = run.logs("");
    for cb in callbacks.iter_mut() {
        cb.on_test_end(&logs, t)?;
    }
    Ok(logs)
}

/// `model.evaluate`: the loss first, then each metric in compile order.
pub fn evaluate(
    t: &mut dyn Trainer,
    data: Data,
    batch_size: usize,
    interrupt: Option<&AtomicBool>,
) -> KResult<Vec<(String, f64)>> {
    if t.compiled().is_none() {
        return Err(KerasError::NotCompiled("evaluate"));
    }
    let logs = evaluate_logs(t, data, batch_size, interrupt, &mut [])?;
    Ok(in_compile_order(t, &logs))
}

/// `model.train_on_batch`: one step on all of `data`. Keras 3 resets the metrics first, so
/// the logs are this batch's, in `evaluate`'s order.
pub fn train_on_batch(t: &mut dyn Trainer, data: Data) -> KResult<Vec<(String, f64)>> {
    if t.compiled().is_none() {
        return Err(KerasError::NotCompiled("training"));
    }
    let (x_per, y_per) = example_lens(t)?;
    let n = count(&data, x_per, y_per)?;
    t.check_batch(data.x, Some(data.y), n)?;
    let mut run = Running::new(t);
    run.total.add(&t.train_batch(data.x, data.y, n)?);
    Ok(in_compile_order(t, &run.logs("")))
}

/// The logs as Keras 3 lists them: the loss first, then each compiled metric in compile
/// order; for several outputs, each output's loss in output order, then their metrics
/// ordered by name (Keras flattens them from a dict keyed `cls_accuracy`, ...).
fn in_compile_order(t: &dyn Trainer, logs: &Logs) -> Vec<(String, f64)> {
    let mut names = vec!["loss".to_string()];
    if let Some(c) = t.compiled() {
        let losses = c.heads.len().min(c.metrics.len());
        let (head_losses, metrics) = c.metrics.split_at(losses);
        names.extend(head_losses.iter().map(|(n, _)| n.clone()));
        let mut metrics: Vec<String> = metrics.iter().map(|(n, _)| n.clone()).collect();
        if !c.heads.is_empty() {
            metrics.sort();
        }
        names.extend(metrics);
    }
    names
        .into_iter()
        .map(|n| {
            let v = logs.get(&n).copied().unwrap_or(f64::NAN);
            (n, v)
        })
        .collect()
}

/// `model.predict`: outputs for every example, in order, batch by batch.
pub fn predict(
    t: &mut dyn Trainer,
    x: &[f32],
    batch_size: usize,
    interrupt: Option<&AtomicBool>,
) -> KResult<Vec<f32>> {
    let x_per: usize = t.config().input_shape.iter().product();
    let n = x.len() / x_per.max(1);
    t.check_batch(x, None, n)?;
    let bs = batch_size.max(1);
    let out_per: usize = t.plan().output_shape().iter().product();
    let mut out = Vec::with_capacity(n * out_per);
    for start in (0..n).step_by(bs) {
        interrupted(interrupt)?;
        let m = bs.min(n - start);
        out.extend(t.predict_batch(&x[start * x_per..(start + m) * x_per], m)?);
    }
    Ok(out)
}
