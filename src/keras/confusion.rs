//! The metrics `compile` takes whose state is confusion counts rather than a running mean:
//! `Precision`, `Recall`, `AUC`, the four counts (`TruePositives`, ...) and the rates at an
//! operating point (`PrecisionAtRecall`, `SensitivityAtSpecificity`, ...). A batch contributes its counts at each threshold as
//! plain numbers (true and false positives, true and false negatives), which add across
//! batches and across replicas, so N replicas report what one replica would; the result is
//! computed from the summed counts. Both steps run the metric objects' own arithmetic
//! (`metrics.rs`, Keras's `update_confusion_matrix_variables` and AUC's Riemann sums) on a
//! one-thread CPU context, so a metric in `fit` and the same metric updated by hand agree.
//! It must not touch the language or the bindings.

use super::error::{KResult, KerasError};
use super::metrics::{
    auc_thresholds, point_thresholds, Count, Curve, Metric, MetricKind, Point, Summation,
};
use crate::device::cpu::CpuDevice;
use crate::ops::{Eager, ErrorClass, OpError, Tensor};
use crate::tensor::NdArray;

/// A confusion-count metric as `compile` fixes it: one threshold for `Precision`, `Recall`
/// and the counts (their result is then one number, what a log holds), evenly spread
/// thresholds for `AUC` and the operating-point rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Confusion {
    Precision {
        threshold: f32,
        class_id: Option<usize>,
        top_k: Option<usize>,
    },
    Recall {
        threshold: f32,
        class_id: Option<usize>,
        top_k: Option<usize>,
    },
    Count {
        which: Count,
        threshold: f32,
    },
    AtPoint {
        point: Point,
        value: f64,
        num_thresholds: usize,
        class_id: Option<usize>,
    },
    Auc {
        num_thresholds: usize,
        curve: Curve,
        summation: Summation,
        from_logits: bool,
    },
}

/// A metric's arithmetic reports errors in the op library's words; `compile`'s callers see
/// them as Keras errors of the same class.
fn keras_err(err: OpError) -> KerasError {
    match err.class {
        ErrorClass::InvalidArgument => KerasError::InvalidArgument(err.message),
        _ => KerasError::Value(err.message),
    }
}

impl Confusion {
    /// The metric a Keras name stands for in `compile(metrics=[...])`: Keras resolves the
    /// class names and their snake-case forms to a default instance.
    pub fn parse(name: &str) -> Option<Confusion> {
        Some(match name {
            "auc" | "AUC" => Confusion::Auc {
                num_thresholds: 200,
                curve: Curve::Roc,
                summation: Summation::Interpolation,
                from_logits: false,
            },
            "precision" | "Precision" => Confusion::Precision {
                threshold: 0.5,
                class_id: None,
                top_k: None,
            },
            "recall" | "Recall" => Confusion::Recall {
                threshold: 0.5,
                class_id: None,
                top_k: None,
            },
            "true_positives" | "TruePositives" => Confusion::count(Count::TruePositives),
            "false_positives" | "FalsePositives" => Confusion::count(Count::FalsePositives),
            "true_negatives" | "TrueNegatives" => Confusion::count(Count::TrueNegatives),
            "false_negatives" | "FalseNegatives" => Confusion::count(Count::FalseNegatives),
            _ => return None,
        })
    }

    /// A count at Keras's default threshold, 0.5.
    fn count(which: Count) -> Confusion {
        Confusion::Count {
            which,
            threshold: 0.5,
        }
    }

    /// The metric object's kind, whose arithmetic this uses.
    fn kind(&self) -> MetricKind {
        match *self {
            Confusion::Precision {
                threshold,
                class_id,
                top_k,
            } => MetricKind::Precision {
                thresholds: vec![f64::from(threshold)],
                evenly: false,
                class_id,
                top_k,
            },
            Confusion::Recall {
                threshold,
                class_id,
                top_k,
            } => MetricKind::Recall {
                thresholds: vec![f64::from(threshold)],
                evenly: false,
                class_id,
                top_k,
            },
            Confusion::Count { which, threshold } => MetricKind::Count {
                which,
                thresholds: vec![f64::from(threshold)],
                evenly: false,
            },
            Confusion::AtPoint {
                point,
                value,
                num_thresholds,
                class_id,
            } => MetricKind::AtPoint {
                point,
                value,
                thresholds: point_thresholds(num_thresholds),
                class_id,
            },
            Confusion::Auc {
                num_thresholds,
                curve,
                summation,
                from_logits,
            } => MetricKind::Auc {
                thresholds: auc_thresholds(num_thresholds, None),
                curve,
                summation,
                from_logits,
            },
        }
    }

    /// How many numbers a batch contributes: each count at each threshold.
    pub fn state_len(&self) -> usize {
        match *self {
            Confusion::Precision { .. } | Confusion::Recall { .. } => 2,
            Confusion::Count { .. } => 1,
            Confusion::AtPoint { num_thresholds, .. } => 4 * num_thresholds.max(1),
            Confusion::Auc { num_thresholds, .. } => 4 * num_thresholds,
        }
    }

    /// Appends the counts of one batch: `pred` holds rows of `cols` predictions, `target`
    /// the matching labels (as many, or one per row), `weight` one weight per row.
    pub fn batch_counts(
        &self,
        pred: &[f32],
        target: &[f32],
        cols: usize,
        weight: Option<&[f32]>,
        out: &mut Vec<f64>,
    ) -> KResult<()> {
        let rows = pred.len().checked_div(cols).unwrap_or(0);
        let array = |data: &[f32], rows: usize| -> KResult<Tensor> {
            let per = data.len().checked_div(rows).unwrap_or(0);
            NdArray::from_f32(&[rows, per], data.to_vec())
                .map(Tensor::new)
                .map_err(|err| keras_err(OpError::from_tensor("Const", "CPU:0", err)))
        };
        let p = array(pred, rows)?;
        let t = array(target, rows)?;
        let w = match weight {
            Some(w) => Some(
                NdArray::from_f32(&[w.len()], w.to_vec())
                    .map(Tensor::new)
                    .map_err(|err| keras_err(OpError::from_tensor("Const", "CPU:0", err)))?,
            ),
            None => None,
        };
        let mut e = context();
        let m = Metric::new(self.kind(), "confusion").map_err(keras_err)?;
        m.update(&mut e, &t, &p, w.as_ref()).map_err(keras_err)?;
        for (_, v) in &m.vars {
            let (_, values) = v.snapshot().to_f64_vec();
            out.extend(values);
        }
        Ok(())
    }

    /// The metric's result from counts summed over batches (and replicas).
    pub fn result(&self, counts: &[f64]) -> KResult<f64> {
        let mut e = context();
        let m = Metric::new(self.kind(), "confusion").map_err(keras_err)?;
        let mut rest = counts;
        for (_, v) in &m.vars {
            let n = v.shape().iter().product::<usize>();
            let (mine, after) = rest.split_at(n.min(rest.len()));
            rest = after;
            let values: Vec<f32> = mine.iter().map(|&c| c as f32).collect();
            let a = NdArray::from_f32(v.shape(), values)
                .map_err(|err| keras_err(OpError::from_tensor("Const", "CPU:0", err)))?;
            v.store(a).map_err(keras_err)?;
        }
        let r = m.result(&mut e).map_err(keras_err)?;
        let (_, values) = r.value().to_f64_vec();
        Ok(values.first().copied().unwrap_or(f64::NAN))
    }
}

/// A context of its own on one CPU thread: a replica's thread computes its batch's counts
/// without sharing the session's context or fanning out over the cores its peers use.
fn context() -> Eager {
    Eager::new(Box::new(CpuDevice::with_threads(0, 1)))
}
