//! What the callbacks that watch one logged quantity share, as Keras 3's `MonitorCallback`
//! does for ModelCheckpoint, EarlyStopping and ReduceLROnPlateau: the `mode` (an unknown one
//! falls back to `auto` with a warning), the direction `auto` resolves to at the first
//! epoch's end (`loss` goes down; a compiled metric goes the way Keras's metric of that name
//! does; anything else is refused), `min_delta`, and the improvement test. It keeps no
//! callback's own state beyond that and reaches the model only to read its compiled metrics.

use std::cell::Cell;

use super::model::ModelObj;
use super::schedules::warn;
use super::subclass::model_of;
use crate::keras::confusion::Confusion;
use crate::keras::Metric;
use crate::lang::{Ctx, PyErr, PyResult, Value};

/// The monitored quantity, its direction and the least change that counts.
pub struct Monitor {
    pub monitor: String,
    /// `auto`, `min` or `max`, after the fallback.
    pub mode: String,
    /// Always positive; the direction decides its sign, as Keras's `_set_monitor_op` does.
    pub min_delta: f64,
    /// `Some(true)` once resolved to "greater is better", `Some(false)` to "less is".
    higher: Cell<Option<bool>>,
}

impl Monitor {
    /// Keras's `MonitorCallback.__init__`: warns about an unknown mode and uses `auto`.
    pub fn new(class: &str, monitor: &str, mode: &str, min_delta: f64, ctx: &mut dyn Ctx) -> Self {
        let mode = if matches!(mode, "auto" | "min" | "max") {
            mode
        } else {
            warn(
                ctx,
                &format!("{class} mode '{mode}' is unknown, fallback to auto mode."),
            );
            "auto"
        };
        Monitor {
            monitor: monitor.to_string(),
            mode: mode.to_string(),
            min_delta: min_delta.abs(),
            higher: Cell::new(None),
        }
    }

    /// Keras's `_set_monitor_op`, run at the first epoch's end (the model's metrics are
    /// compiled by then): the direction of the monitored quantity, or Keras's ValueError.
    pub fn resolve(&self, class: &str, model: &Value, ctx: &mut dyn Ctx) -> PyResult<bool> {
        if let Some(h) = self.higher.get() {
            return Ok(h);
        }
        let higher = match self.mode.as_str() {
            "min" => Some(false),
            "max" => Some(true),
            _ => {
                let name = self.monitor.strip_prefix("val_").unwrap_or(&self.monitor);
                let from_metrics = compiled_metrics(model, ctx)
                    .into_iter()
                    .find(|(n, _)| n == name)
                    .and_then(|(_, m)| goes_up(&m));
                from_metrics.or((name == "loss").then_some(false))
            }
        };
        let Some(higher) = higher else {
            return Err(PyErr::value_error(format!(
                "{class} callback received monitor={}, but Keras isn't able to automatically \
                 determine whether that metric should be maximized or minimized. Pass \
                 `mode='max'` in order to monitor based on the highest metric value, or pass \
                 `mode='min'` in order to use the lowest value.",
                self.monitor
            )));
        };
        self.higher.set(Some(higher));
        Ok(higher)
    }

    /// Keras's `_is_improvement`: anything beats no reference; otherwise the value must
    /// pass the reference by more than `min_delta` in the monitored direction. Call after
    /// [`Monitor::resolve`].
    pub fn is_improvement(&self, current: f64, reference: Option<f64>) -> bool {
        match (reference, self.higher.get()) {
            (None, _) => true,
            (Some(r), Some(true)) => current - self.min_delta > r,
            (Some(r), _) => current + self.min_delta < r,
        }
    }
}

/// The metrics `compile` gave the model (a functional/Sequential model or a subclass).
fn compiled_metrics(model: &Value, ctx: &mut dyn Ctx) -> Vec<(String, Metric)> {
    let state = if model.downcast::<ModelObj>().is_some() {
        model.clone()
    } else {
        match model_of(model, ctx) {
            Ok((mv, _)) => mv,
            Err(_) => return vec![],
        }
    };
    state
        .downcast::<ModelObj>()
        .and_then(|m| m.compiled.borrow().as_ref().map(|c| c.metrics.clone()))
        .unwrap_or_default()
}

/// The `_direction` Keras gives each metric: the accuracies go up, the errors and
/// cross-entropies down; the plain counts have none.
fn goes_up(m: &Metric) -> Option<bool> {
    Some(match m {
        Metric::Confusion(Confusion::Count { .. }) => return None,
        Metric::Accuracy
        | Metric::SparseCategoricalAccuracy
        | Metric::CategoricalAccuracy
        | Metric::BinaryAccuracy
        | Metric::Equality
        | Metric::TopK { .. }
        | Metric::Confusion(_) => true,
        Metric::MeanAbsoluteError
        | Metric::MeanSquaredError
        | Metric::RootMeanSquaredError
        | Metric::Crossentropy(_)
        | Metric::OutputLoss(_) => false,
    })
}
