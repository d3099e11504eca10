//! Distributed `fit`, `evaluate` and `predict` on a [`MirroredStrategy`]. Each global batch
//! is split across replicas (TensorFlow's split); every replica computes its gradient in
//! parallel on its own thread, the all-reduce sums the gradients, and every replica applies
//! the same optimizer update to its own copy, so the copies stay bit-identical. Losses and
//! metrics are sums weighted by local batch size, added in rank order, so they equal the
//! single-device values. An interrupt flag is checked between steps: a step is never cut in
//! half, so stopping leaves every copy equal. Nothing here imports the language or bindings.

use std::cell::Cell;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::model::{BatchSums, Dataset, FitControl, FitObserver, History};
use super::pool::panic_message;
use super::split::{epoch_batches, split_batch};
use super::stats::FitStats;
use super::strategy::{first_error, MirroredStrategy, ModelId};
use super::{DistributeError, Result};
use crate::device::AllReduce;
use crate::device::{DTensor, Device, DeviceError};
use crate::keras::Rows;

pub use super::model::{BoxError, NoObserver, ReplicaModel};

/// Options of `fit` that the loop itself needs.
#[derive(Clone, Default)]
pub struct FitOptions {
    pub epochs: usize,
    pub batch_size: usize,
    pub initial_epoch: usize,
    /// Shuffle the examples each epoch with this seed (Keras's `shuffle=True`); `None` keeps
    /// the order.
    pub shuffle_seed: Option<u64>,
    /// Checked before every step; when set, `fit` stops with `Interrupted`.
    pub interrupt: Option<Arc<AtomicBool>>,
}

fn interrupted(flag: &Option<Arc<AtomicBool>>) -> bool {
    flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Rows `range` of a row-major matrix `width` wide.
fn rows<'a>(data: &'a [f32], width: usize, range: &Range<usize>) -> &'a [f32] {
    data.get(range.start * width..range.end * width)
        .unwrap_or(&[])
}

/// A global batch: contiguous rows of a data set, or the examples a shuffled order names,
/// which every replica gathers for its own share on its own thread.
#[derive(Clone, Copy)]
enum Batch<'a> {
    Contiguous {
        x: &'a [f32],
        x_width: usize,
        y: &'a [f32],
        y_width: usize,
    },
    Gathered(Rows<'a>),
}

impl<'a> Batch<'a> {
    fn len(&self) -> usize {
        match self {
            Batch::Contiguous { x, x_width, .. } => x.len().checked_div(*x_width).unwrap_or(0),
            Batch::Gathered(r) => r.idx.len(),
        }
    }

    /// The rows `part` of the batch, borrowed in place or gathered into the scratch buffers.
    fn share<'s>(
        &'s self,
        part: &Range<usize>,
        scratch: &'s mut (Vec<f32>, Vec<f32>),
    ) -> (&'s [f32], &'s [f32]) {
        match self {
            Batch::Contiguous {
                x,
                x_width,
                y,
                y_width,
            } => (rows(x, *x_width, part), rows(y, *y_width, part)),
            Batch::Gathered(r) => {
                r.gather(part.clone(), &mut scratch.0, &mut scratch.1);
                (&scratch.0, &scratch.1)
            }
        }
    }
}

/// Runs a model call on a replica, turning its error or panic into that replica's error.
fn guarded<T>(rank: usize, f: impl FnOnce() -> std::result::Result<T, BoxError>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(|source| DistributeError::Model { rank, source }),
        Err(p) => Err(DistributeError::ReplicaPanicked {
            rank,
            message: panic_message(p.as_ref()),
        }),
    }
}

/// One replica's part of a training step: the model's step with the all-reduce as its hook.
/// Returns the loss sums and the [compute, all-reduce, update] times. A replica that fails
/// before reaching the all-reduce aborts it, so the other replicas return instead of waiting.
#[allow(clippy::too_many_arguments)]
fn replica_step(
    reducer: &dyn AllReduce,
    rank: usize,
    model: &mut dyn ReplicaModel,
    device: &dyn Device,
    x: &[f32],
    y: &[f32],
    rows: usize,
    global: usize,
) -> Result<(BatchSums, [Duration; 3])> {
    let t0 = Instant::now();
    let entered = Cell::new(None::<Instant>);
    let left = Cell::new(None::<Instant>);
    let reduce_error = Cell::new(None::<DeviceError>);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut hook =
            |grads: &mut [DTensor], dev: &dyn Device| -> std::result::Result<(), BoxError> {
                if entered.get().is_some() {
                    return Err("the training step called the all-reduce twice".into());
                }
                entered.set(Some(Instant::now()));
                let done = reducer.all_reduce_sum_many(rank, grads, dev);
                left.set(Some(Instant::now()));
                done.map_err(|e| {
                    let text = e.to_string();
                    reduce_error.set(Some(e));
                    text.into()
                })
            };
        model.train_step(device, x, y, rows, global, &mut hook)
    }));
    let end = Instant::now();
    if entered.get().is_none() {
        // Whatever happened, this replica never joined the reduction: release the others.
        reducer.abort();
    }
    if let Some(source) = reduce_error.take() {
        return Err(DistributeError::Device { rank, source });
    }
    let sums = match outcome {
        Ok(Ok(sums)) => sums,
        Ok(Err(source)) => return Err(DistributeError::Model { rank, source }),
        Err(payload) => {
            return Err(DistributeError::ReplicaPanicked {
                rank,
                message: panic_message(payload.as_ref()),
            })
        }
    };
    match (entered.get(), left.get()) {
        (Some(a), Some(b)) => Ok((sums, [a - t0, b - a, end - b])),
        _ => Err(DistributeError::Model {
            rank,
            source: "the model's training step returned without calling the all-reduce".into(),
        }),
    }
}

impl MirroredStrategy {
    /// One synchronous training step on a global batch held in `x`/`y`; returns the summed
    /// loss and metrics and each replica's [compute, all-reduce, update] times.
    pub fn train_step(
        &self,
        id: ModelId,
        x: &[f32],
        x_width: usize,
        y: &[f32],
        y_width: usize,
    ) -> Result<(BatchSums, Vec<[Duration; 3]>)> {
        self.step(
            id,
            Batch::Contiguous {
                x,
                x_width,
                y,
                y_width,
            },
        )
    }

    /// [`Self::train_step`] on the examples `rows.idx` of a data set: every replica gathers
    /// its own share of them, in parallel, instead of one thread copying the whole batch.
    pub fn train_step_rows(
        &self,
        id: ModelId,
        rows: Rows<'_>,
    ) -> Result<(BatchSums, Vec<[Duration; 3]>)> {
        self.step(id, Batch::Gathered(rows))
    }

    fn step(&self, id: ModelId, batch: Batch<'_>) -> Result<(BatchSums, Vec<[Duration; 3]>)> {
        let global = batch.len();
        let ranges = self.train_ranges(global);
        let reducer = &*self.reducer;
        let results = self.pool.run_fallible(|rank, replica| {
            let range = ranges.get(rank).cloned().unwrap_or(0..0);
            let mut scratch = std::mem::take(&mut replica.scratch);
            let (xs, ys) = batch.share(&range, &mut scratch);
            let outcome = match replica.model(id) {
                Ok((model, device)) => {
                    replica_step(reducer, rank, model, device, xs, ys, range.len(), global)
                }
                Err(e) => {
                    reducer.abort();
                    Err(e)
                }
            };
            replica.scratch = scratch;
            outcome
        });
        let mut total = BatchSums::default();
        let mut times = Vec::with_capacity(results.len());
        let mut failures = Vec::new();
        for r in results {
            match r {
                Ok((sums, t)) => {
                    total.add(&sums);
                    times.push(t);
                }
                Err(e) => failures.push(Err::<(), _>(e)),
            }
        }
        if !failures.is_empty() {
            self.reducer.reset();
            first_error(failures)?;
        }
        Ok((total, times))
    }

    /// `model.fit`: trains for `opts.epochs - opts.initial_epoch` epochs and returns the
    /// history. `validation` adds `val_` entries at each epoch's end.
    pub fn fit(
        &self,
        id: ModelId,
        data: Dataset<'_>,
        validation: Option<Dataset<'_>>,
        opts: &FitOptions,
        observer: &mut dyn FitObserver,
    ) -> Result<History> {
        let samples = data.samples(true).map_err(DistributeError::InvalidInput)?;
        if samples == 0 {
            return Err(DistributeError::InvalidInput(
                "Expected input data to be non-empty (fit got 0 samples).".into(),
            ));
        }
        let batch = if opts.batch_size == 0 {
            32
        } else {
            opts.batch_size
        };
        let read = self.on_primary(id, |m| m.log_reader())?;
        let batches = epoch_batches(samples, batch);
        let full = batch.min(samples);
        let mut stats = FitStats::new(
            self.num_replicas_in_sync(),
            self.reducer.name(),
            full,
            self.train_ranges(full).iter().map(|r| r.len()).collect(),
        );
        stats.gradient_len = self.gradient_len(id)?;
        let mut history = History::default();
        let mut order: Vec<usize> = (0..samples).collect();
        observer.on_train_begin(opts.epochs, batches.len());
        let mut stop = false;
        for epoch in opts.initial_epoch..opts.epochs {
            if observer.on_epoch_begin(epoch) == FitControl::Stop {
                break;
            }
            if let Some(seed) = opts.shuffle_seed {
                order = (0..samples).collect();
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed.wrapping_add(epoch as u64));
                order.shuffle(&mut rng);
            }
            let mut running = BatchSums::default();
            for (step, range) in batches.iter().enumerate() {
                if interrupted(&opts.interrupt) {
                    *self.last_stats.lock().unwrap_or_else(|e| e.into_inner()) = Some(stats);
                    return Err(DistributeError::Interrupted);
                }
                let start = Instant::now();
                let (sums, times) = if opts.shuffle_seed.is_some() {
                    let rows = Rows {
                        x: data.x,
                        x_per: data.x_width,
                        y: data.y,
                        y_per: data.y_width,
                        idx: order.get(range.clone()).unwrap_or(&[]),
                    };
                    self.train_step_rows(id, rows)?
                } else {
                    let (xs, ys) = (
                        rows(data.x, data.x_width, range),
                        rows(data.y, data.y_width, range),
                    );
                    self.train_step(id, xs, data.x_width, ys, data.y_width)?
                };
                stats.add_step(start.elapsed(), range.len(), &times);
                running.add(&sums);
                if observer.on_batch_end(epoch, step, &read(&running)) == FitControl::Stop {
                    stop = true;
                    break;
                }
            }
            let mut logs = read(&running);
            if let Some(val) = validation {
                let val_logs = self.evaluate(id, val, batch, opts.interrupt.clone())?;
                logs.extend(val_logs.into_iter().map(|(n, v)| (format!("val_{n}"), v)));
            }
            history.push_epoch(epoch, &logs);
            if stop || observer.on_epoch_end(epoch, &logs) == FitControl::Stop {
                break;
            }
        }
        *self.last_stats.lock().unwrap_or_else(|e| e.into_inner()) = Some(stats);
        observer.on_train_end(&history);
        Ok(history)
    }

    /// Loss and metric sums of one global batch, split across the replicas.
    pub fn evaluate_batch(
        &self,
        id: ModelId,
        x: &[f32],
        x_width: usize,
        y: &[f32],
        y_width: usize,
    ) -> Result<BatchSums> {
        let global = x.len().checked_div(x_width).unwrap_or(0);
        let parts = split_batch(global, self.num_replicas_in_sync());
        let results = self
            .pool
            .run_fallible(|rank, replica| -> Result<BatchSums> {
                let part = parts.get(rank).cloned().unwrap_or(0..0);
                if part.is_empty() {
                    return Ok(BatchSums::default());
                }
                let (model, device) = replica.model(id)?;
                let (xs, ys) = (rows(x, x_width, &part), rows(y, y_width, &part));
                guarded(rank, || model.evaluate_batch(device, xs, ys, part.len()))
            });
        let mut total = BatchSums::default();
        for r in results {
            total.add(&r?);
        }
        Ok(total)
    }

    /// Outputs of one global batch: each replica's rows, concatenated in rank order.
    pub fn predict_batch(&self, id: ModelId, x: &[f32], x_width: usize) -> Result<Vec<f32>> {
        let global = x.len().checked_div(x_width).unwrap_or(0);
        let parts = split_batch(global, self.num_replicas_in_sync());
        let results = self.pool.run_fallible(|rank, replica| -> Result<Vec<f32>> {
            let part = parts.get(rank).cloned().unwrap_or(0..0);
            if part.is_empty() {
                return Ok(Vec::new());
            }
            let (model, device) = replica.model(id)?;
            let xs = rows(x, x_width, &part);
            guarded(rank, || model.predict_batch(device, xs, part.len()))
        });
        let mut out = Vec::new();
        for r in results {
            out.extend(r?);
        }
        Ok(out)
    }

    /// `model.evaluate`: the loss and metrics over the whole data set, as `(name, mean)`.
    pub fn evaluate(
        &self,
        id: ModelId,
        data: Dataset<'_>,
        batch_size: usize,
        interrupt: Option<Arc<AtomicBool>>,
    ) -> Result<Vec<(String, f64)>> {
        let samples = data.samples(true).map_err(DistributeError::InvalidInput)?;
        let read = self.on_primary(id, |m| m.log_reader())?;
        let mut total = BatchSums::default();
        for range in epoch_batches(samples, if batch_size == 0 { 32 } else { batch_size }) {
            if interrupted(&interrupt) {
                return Err(DistributeError::Interrupted);
            }
            let (xs, ys) = (
                rows(data.x, data.x_width, &range),
                rows(data.y, data.y_width, &range),
            );
            total.add(&self.evaluate_batch(id, xs, data.x_width, ys, data.y_width)?);
        }
        Ok(read(&total))
    }

    /// `model.predict`: outputs of every example, row-major, in input order.
    pub fn predict(
        &self,
        id: ModelId,
        x: &[f32],
        x_width: usize,
        batch_size: usize,
        interrupt: Option<Arc<AtomicBool>>,
    ) -> Result<Vec<f32>> {
        let data = Dataset {
            x,
            x_width,
            y: &[],
            y_width: 0,
        };
        let samples = data.samples(false).map_err(DistributeError::InvalidInput)?;
        let mut out = Vec::new();
        for range in epoch_batches(samples, if batch_size == 0 { 32 } else { batch_size }) {
            if interrupted(&interrupt) {
                return Err(DistributeError::Interrupted);
            }
            out.extend(self.predict_batch(id, rows(x, x_width, &range), x_width)?);
        }
        Ok(out)
    }

    /// The names of a model's reported values (from replica 0).
    pub fn metric_names(&self, id: ModelId) -> Result<Vec<String>> {
        self.on_primary(id, |m| m.metric_names())
    }

    /// Length of a model's flat gradient buffer (from replica 0).
    pub fn gradient_len(&self, id: ModelId) -> Result<usize> {
        self.on_primary(id, |m| m.gradient_len())
    }

    fn on_primary<R: Send>(
        &self,
        id: ModelId,
        f: impl Fn(&mut dyn ReplicaModel) -> R + Sync,
    ) -> Result<R> {
        let mut got = self.pool.run_fallible(|rank, replica| {
            if rank == 0 {
                replica.model(id).map(|(m, _)| Some(f(m)))
            } else {
                Ok(None)
            }
        });
        match got.swap_remove(0) {
            Ok(Some(r)) => Ok(r),
            Ok(None) => Err(DistributeError::NoReplicas),
            Err(e) => Err(e),
        }
    }
}
