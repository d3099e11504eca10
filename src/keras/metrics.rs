//! Keras 3's metric objects on the op library: their state is a few non-trainable
//! [`Variable`]s (`total` and `count` for the means, the confusion counts per threshold for
//! `Precision`, `Recall` and `AUC`), an update computes the batch's contribution with ops
//! and adds it with [`Eager::assign`], and the result is computed with ops from the
//! variables as read through the context. So a graph recorder sees every read, every op and
//! every assignment of an update, and a replayed graph repeats it. The arithmetic follows
//! Keras's `update_state` and `result` (`reduce_to_samplewise_values`, the accuracy
//! functions, `update_confusion_matrix_variables`, AUC's Riemann sums). It must not touch
//! the language or the bindings.

use super::losses::{self, cast_to, div_no_nan, same_rank, LossFn, EPSILON};
use crate::ops::{self, Activation, Assign, Binary, Eager, ErrorClass, OpError, OpResult};
use crate::ops::{ArgReduce, Op, ReduceKind, Tensor, Unary, Variable};
use crate::tensor::{DType, NdArray};
use std::sync::OnceLock;

pub use super::scores::{Average, R2Aggregation};

/// A per-example value that a metric averages over the examples (Keras's
/// `MeanMetricWrapper` functions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wrapped {
    Accuracy,
    BinaryAccuracy {
        threshold: f64,
    },
    CategoricalAccuracy,
    SparseCategoricalAccuracy,
    TopKCategoricalAccuracy {
        k: usize,
    },
    SparseTopKCategoricalAccuracy {
        k: usize,
    },
    /// A loss function as a metric (`MeanSquaredError`, the cross-entropies).
    Loss(LossFn),
}

/// AUC's curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    Roc,
    Pr,
}

/// How AUC sums the area between two thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summation {
    Interpolation,
    Minoring,
    Majoring,
}

/// Which metric, with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricKind {
    Mean,
    Sum,
    Wrapped(Wrapped),
    RootMeanSquaredError,
    /// `thresholds` as given (0.5 by default); `evenly` when they are spread evenly over
    /// [0, 1], where Keras counts by buckets of the clipped predictions.
    /// `top_k` keeps only each row's k highest predictions (the others count as negative).
    Precision {
        thresholds: Vec<f64>,
        evenly: bool,
        class_id: Option<usize>,
        top_k: Option<usize>,
    },
    Recall {
        thresholds: Vec<f64>,
        evenly: bool,
        class_id: Option<usize>,
        top_k: Option<usize>,
    },
    /// `TruePositives`, `FalsePositives`, `TrueNegatives` and `FalseNegatives`: one count
    /// at each threshold, in a variable Keras names `accumulator`.
    Count {
        which: Count,
        thresholds: Vec<f64>,
        evenly: bool,
    },
    /// `SensitivityAtSpecificity` and its kin: the four counts at `thresholds`
    /// ([`point_thresholds`]), and the best of one rate where the other reaches `value`.
    AtPoint {
        point: Point,
        value: f64,
        thresholds: Vec<f64>,
        class_id: Option<usize>,
    },
    /// `FBetaScore` (and `F1Score`, its `beta` 1): `threshold` `None` takes each row's
    /// largest prediction as its positive.
    FBeta {
        average: Average,
        beta: f64,
        threshold: Option<f64>,
    },
    /// `R2Score`, adjusted for `num_regressors` when that is not 0.
    R2 {
        aggregation: R2Aggregation,
        num_regressors: usize,
    },
    /// `thresholds` includes the two end points (`-epsilon` and `1 + epsilon`).
    Auc {
        thresholds: Vec<f64>,
        curve: Curve,
        summation: Summation,
        from_logits: bool,
    },
}

/// Which rate an [`MetricKind::AtPoint`] metric maximizes, under a floor on which other
/// rate (the class names say it: the first rate at the second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
    PrecisionAtRecall,
    RecallAtPrecision,
}

/// Keras's `SensitivitySpecificityBase` thresholds: one at 0.5, or `num_thresholds` spread
/// evenly over [0, 1] with both ends included.
pub fn point_thresholds(num_thresholds: usize) -> Vec<f64> {
    if num_thresholds <= 1 {
        return vec![0.5];
    }
    let mut t = vec![0.0];
    t.extend((0..num_thresholds - 2).map(|i| (i + 1) as f64 / (num_thresholds - 1) as f64));
    t.push(1.0);
    t
}

/// Keras's `NEG_INF`: the threshold `Precision` and `Recall` take with `top_k`, and the
/// value its filter gives the predictions outside the top k.
pub const NEG_INF: f64 = -1e10;

/// Keras's `is_evenly_distributed_thresholds`.
pub fn evenly_distributed(thresholds: &[f64]) -> bool {
    let n = thresholds.len();
    if n < 3 {
        return false;
    }
    thresholds.iter().enumerate().all(|(i, &t)| {
        let even = f64::from(i as f32 / (n - 1) as f32);
        (t - even).abs() <= EPSILON + 1e-5 * even.abs()
    })
}

/// AUC's thresholds: `num_thresholds` evenly spaced ones, or the given ones sorted, with
/// `-epsilon` and `1 + epsilon` at the ends.
pub fn auc_thresholds(num_thresholds: usize, given: Option<&[f64]>) -> Vec<f64> {
    let inner: Vec<f64> = match given {
        Some(t) => {
            let mut t = t.to_vec();
            t.sort_by(|a, b| a.total_cmp(b));
            t
        }
        None => (0..num_thresholds.saturating_sub(2))
            .map(|i| (i + 1) as f64 / (num_thresholds - 1) as f64)
            .collect(),
    };
    let mut out = Vec::with_capacity(inner.len() + 2);
    out.push(0.0 - EPSILON);
    out.extend(inner);
    out.push(1.0 + EPSILON);
    out
}

/// A metric's state: its variables, named `{name}/{variable}` as Keras paths them.
pub struct Metric {
    pub kind: MetricKind,
    pub name: String,
    /// The variables made with the metric.
    pub vars: Vec<(String, Variable)>,
    /// The variables sized by the first update's number of classes (`FBetaScore`,
    /// `R2Score`), made then, as Keras's `_build` makes them.
    built: OnceLock<Vec<(String, Variable)>>,
}

fn zeros(shape: &[usize]) -> OpResult<NdArray> {
    NdArray::zeros(shape, DType::F32).map_err(|err| OpError::from_tensor("Zeros", "CPU:0", err))
}

fn f32s(v: f64) -> Tensor {
    Tensor::scalar(v, DType::F32)
}

impl Metric {
    pub fn new(kind: MetricKind, name: &str) -> OpResult<Metric> {
        let (names, shape): (&[&str], Vec<usize>) = match &kind {
            MetricKind::Sum => (&["total"], vec![]),
            MetricKind::Mean | MetricKind::Wrapped(_) | MetricKind::RootMeanSquaredError => {
                (&["total", "count"], vec![])
            }
            MetricKind::Precision { thresholds, .. } => (
                &["true_positives", "false_positives"],
                vec![thresholds.len()],
            ),
            MetricKind::Recall { thresholds, .. } => (
                &["true_positives", "false_negatives"],
                vec![thresholds.len()],
            ),
            MetricKind::Count { thresholds, .. } => (&["accumulator"], vec![thresholds.len()]),
            MetricKind::FBeta { .. } => (&[], vec![]),
            MetricKind::R2 { .. } => (&["num_samples"], vec![]),
            MetricKind::Auc { thresholds, .. } | MetricKind::AtPoint { thresholds, .. } => (
                &[
                    "true_positives",
                    "false_positives",
                    "true_negatives",
                    "false_negatives",
                ],
                vec![thresholds.len()],
            ),
        };
        let vars = names
            .iter()
            .map(|n| {
                let path = format!("{name}/{n}");
                Ok((path.clone(), Variable::new(zeros(&shape)?, &path, false)))
            })
            .collect::<OpResult<_>>()?;
        Ok(Metric {
            kind,
            name: name.to_string(),
            vars,
            built: OnceLock::new(),
        })
    }

    /// Every variable, in Keras's order: those made with the metric, then those its first
    /// update made.
    pub fn variables(&self) -> Vec<(String, Variable)> {
        let mut all = self.vars.clone();
        if let Some(b) = self.built.get() {
            all.extend(b.iter().cloned());
        }
        all
    }

    /// Makes the variables sized by the number of classes (zeros of `shape`) unless they
    /// are made already.
    pub(super) fn build(&self, names: &[&str], shape: &[usize]) -> OpResult<()> {
        if self.built.get().is_some() {
            return Ok(());
        }
        let vars = names
            .iter()
            .map(|n| {
                let path = format!("{}/{n}", self.name);
                Ok((path.clone(), Variable::new(zeros(shape)?, &path, false)))
            })
            .collect::<OpResult<Vec<_>>>()?;
        // A second builder (none runs at once: a metric lives on one session) would find
        // the variables set and keep the first ones.
        let _ = self.built.set(vars);
        Ok(())
    }

    /// Builds this metric's class-sized variables as `other`'s are (the sum of replicas'
    /// parts is built like the parts).
    pub fn build_like(&self, other: &Metric) -> OpResult<()> {
        let Some(b) = other.built.get() else {
            return Ok(());
        };
        let names: Vec<&str> = b.iter().filter_map(|(p, _)| p.rsplit('/').next()).collect();
        let shape = b
            .first()
            .map(|(_, v)| v.shape().to_vec())
            .unwrap_or_default();
        self.build(&names, &shape)
    }

    pub(super) fn var(&self, which: &str) -> OpResult<&Variable> {
        self.vars
            .iter()
            .chain(self.built.get().into_iter().flatten())
            .find(|(p, _)| p.rsplit('/').next() == Some(which))
            .map(|(_, v)| v)
            .ok_or_else(|| OpError::internal(format!("metric {} has no {which}", self.name)))
    }

    /// Every variable back to zero (`reset_state`).
    pub fn reset(&self, e: &mut Eager) -> OpResult<()> {
        for (_, v) in self.variables().iter() {
            let z = Tensor::new(zeros(v.shape())?);
            e.assign(v, Assign::Set, &z)?;
        }
        Ok(())
    }

    /// `update_state(values, sample_weight)` of `Mean` and `Sum`.
    pub fn update_values(
        &self,
        e: &mut Eager,
        values: &Tensor,
        sample_weight: Option<&Tensor>,
    ) -> OpResult<()> {
        let sum = self.kind == MetricKind::Sum;
        let (values, weight) = samplewise(e, values, sample_weight, sum)?;
        let total = ops::reduce_sum(e, &values, None, false)?;
        e.assign(self.var("total")?, Assign::Add, &total)?;
        if sum {
            return Ok(());
        }
        let count = match &weight {
            Some(w) => ops::reduce_sum(e, w, None, false)?,
            None => f32s(values.shape().first().copied().unwrap_or(1) as f64),
        };
        e.assign(self.var("count")?, Assign::Add, &count)
    }

    /// `update_state(y_true, y_pred, sample_weight)` of the other metrics.
    pub fn update(
        &self,
        e: &mut Eager,
        y_true: &Tensor,
        y_pred: &Tensor,
        sample_weight: Option<&Tensor>,
    ) -> OpResult<()> {
        match &self.kind {
            MetricKind::Mean | MetricKind::Sum => self.update_values(e, y_pred, sample_weight),
            MetricKind::Wrapped(w) => {
                let (values, mask) = wrapped(e, *w, y_true, y_pred)?;
                let weight = match mask {
                    Some(m) => {
                        let fm = cast_to(e, &m, DType::F32)?;
                        Some(match sample_weight {
                            Some(w) => {
                                let w = cast_to(e, w, DType::F32)?;
                                let (fm, w) = same_rank(e, fm, w, true)?;
                                ops::mul(e, &w, &fm)?
                            }
                            None => fm,
                        })
                    }
                    None => sample_weight.cloned(),
                };
                self.update_values(e, &values, weight.as_ref())
            }
            MetricKind::RootMeanSquaredError => {
                let t = cast_to(e, y_true, DType::F32)?;
                let p = cast_to(e, y_pred, DType::F32)?;
                let (t, p) = same_rank(e, t, p, true)?;
                let d = ops::sub(e, &p, &t)?;
                let sq = ops::square(e, &d)?;
                self.update_values(e, &sq, sample_weight)
            }
            MetricKind::Precision {
                thresholds,
                evenly,
                class_id,
                top_k,
            }
            | MetricKind::Recall {
                thresholds,
                evenly,
                class_id,
                top_k,
            } => {
                let second = if matches!(self.kind, MetricKind::Precision { .. }) {
                    Count::FalsePositives
                } else {
                    Count::FalseNegatives
                };
                let p = cast_to(e, y_pred, DType::F32)?;
                let how = Counting {
                    thresholds,
                    evenly: *evenly,
                    class_id: *class_id,
                    top_k: *top_k,
                };
                self.confusion(
                    e,
                    &[Count::TruePositives, second],
                    y_true,
                    &p,
                    sample_weight,
                    &how,
                )
            }
            MetricKind::Count {
                which,
                thresholds,
                evenly,
            } => {
                let p = cast_to(e, y_pred, DType::F32)?;
                let how = Counting {
                    thresholds,
                    evenly: *evenly,
                    class_id: None,
                    top_k: None,
                };
                self.confusion(e, &[*which], y_true, &p, sample_weight, &how)
            }
            MetricKind::AtPoint {
                thresholds,
                class_id,
                ..
            } => {
                let p = cast_to(e, y_pred, DType::F32)?;
                let how = Counting {
                    thresholds,
                    // Keras counts its evenly spread thresholds by buckets whenever there
                    // are at least two of them.
                    evenly: thresholds.len() > 1,
                    class_id: *class_id,
                    top_k: None,
                };
                self.confusion(e, &Count::ALL, y_true, &p, sample_weight, &how)
            }
            MetricKind::FBeta {
                average, threshold, ..
            } => self.update_fbeta(e, *average, *threshold, y_true, y_pred, sample_weight),
            MetricKind::R2 { .. } => self.update_r2(e, y_true, y_pred, sample_weight),
            MetricKind::Auc {
                thresholds,
                from_logits,
                ..
            } => {
                let p = if *from_logits {
                    ops::activate(e, Activation::Sigmoid, y_pred)?
                } else {
                    y_pred.clone()
                };
                let p = cast_to(e, &p, DType::F32)?;
                let how = Counting {
                    thresholds,
                    evenly: true,
                    class_id: None,
                    top_k: None,
                };
                self.confusion(e, &Count::ALL, y_true, &p, sample_weight, &how)
            }
        }
    }

    /// Keras's `update_confusion_matrix_variables` for one label per prediction: each
    /// prediction is positive at a threshold when it exceeds it.
    fn confusion(
        &self,
        e: &mut Eager,
        counts: &[Count],
        y_true: &Tensor,
        p: &Tensor,
        sample_weight: Option<&Tensor>,
        how: &Counting,
    ) -> OpResult<()> {
        let Counting {
            thresholds,
            evenly,
            class_id,
            top_k,
        } = *how;
        let t = cast_to(e, y_true, DType::F32)?;
        let (mut p, mut t) = same_rank(e, p.clone(), t, true)?;
        let mut weight = match sample_weight {
            Some(w) => {
                let w = cast_to(e, w, DType::F32)?;
                let w = ops::expand_dims(e, &w, -1)?;
                Some(same_rank(e, t.clone(), w, false)?.1)
            }
            None => None,
        };
        if let Some(k) = top_k {
            p = filter_top_k(e, &p, k)?;
        }
        if let Some(k) = class_id {
            if p.ndim() < 2 {
                return Err(OpError::new(
                    ErrorClass::Value,
                    format!(
                        "When class_id is provided, y_pred must be a 2D array with shape (num_samples, num_classes), found shape: {}",
                        crate::tensor::shape_str(p.shape())
                    ),
                ));
            }
            p = last_column(e, &p, k)?;
            t = last_column(e, &t, k)?;
        }
        if evenly {
            // Keras counts evenly spread thresholds by buckets of the prediction clipped
            // to [0, 1]; comparing the clipped prediction gives the same counts.
            p = ops::clip_by_value(e, &p, &f32s(0.0), &f32s(1.0))?;
        }
        let m = p.size() as i64;
        let pred = ops::reshape(e, &p, &[1, m])?;
        let thr: Vec<f32> = thresholds.iter().map(|&x| x as f32).collect();
        let thr = NdArray::from_f32(&[thr.len(), 1], thr)
            .map(Tensor::new)
            .map_err(|err| OpError::from_tensor("Const", "CPU:0", err))?;
        let pred_pos = ops::binary(e, Binary::Greater, &pred, &thr)?;
        let label = ops::reshape(e, &t, &[1, m])?;
        let label_pos = cast_to(e, &label, DType::Bool)?;
        let pred_neg = ops::unary(e, Unary::LogicalNot, &pred_pos)?;
        let label_neg = ops::unary(e, Unary::LogicalNot, &label_pos)?;
        if let Some(w) = weight.take() {
            let w = ops::broadcast_to(e, &w, p.shape())?;
            weight = Some(ops::reshape(e, &w, &[1, m])?);
        }
        for count in counts {
            let (l, pr) = match count {
                Count::TruePositives => (&label_pos, &pred_pos),
                Count::FalsePositives => (&label_neg, &pred_pos),
                Count::TrueNegatives => (&label_neg, &pred_neg),
                Count::FalseNegatives => (&label_pos, &pred_neg),
            };
            let both = ops::binary(e, Binary::LogicalAnd, l, pr)?;
            let hits = match &weight {
                Some(w) => {
                    let zero = f32s(0.0);
                    ops::select(e, &both, w, &zero)?
                }
                None => cast_to(e, &both, DType::F32)?,
            };
            let sums = ops::reduce_sum(e, &hits, Some(vec![1]), false)?;
            let var = match self.kind {
                MetricKind::Count { .. } => "accumulator",
                _ => count.name(),
            };
            e.assign(self.var(var)?, Assign::Add, &sums)?;
        }
        Ok(())
    }

    /// `result()`.
    pub fn result(&self, e: &mut Eager) -> OpResult<Tensor> {
        match &self.kind {
            MetricKind::Sum => Ok(e.read(self.var("total")?)),
            MetricKind::Mean | MetricKind::Wrapped(_) => {
                let total = e.read(self.var("total")?);
                let count = e.read(self.var("count")?);
                div_no_nan(e, &total, &count)
            }
            MetricKind::RootMeanSquaredError => {
                let total = e.read(self.var("total")?);
                let count = e.read(self.var("count")?);
                let m = div_no_nan(e, &total, &count)?;
                ops::unary(e, Unary::Sqrt, &m)
            }
            MetricKind::Precision { thresholds, .. } | MetricKind::Recall { thresholds, .. } => {
                let tp = e.read(self.var("true_positives")?);
                let other = match self.kind {
                    MetricKind::Precision { .. } => "false_positives",
                    _ => "false_negatives",
                };
                let other = e.read(self.var(other)?);
                let den = ops::add(e, &tp, &other)?;
                let r = div_no_nan(e, &tp, &den)?;
                if thresholds.len() == 1 {
                    let first = ops::slice(e, &r, &[0], &[1])?;
                    ops::reshape(e, &first, &[])
                } else {
                    Ok(r)
                }
            }
            MetricKind::Count { thresholds, .. } => {
                let counts = e.read(self.var("accumulator")?);
                if thresholds.len() == 1 {
                    let first = ops::slice(e, &counts, &[0], &[1])?;
                    ops::reshape(e, &first, &[])
                } else {
                    Ok(counts)
                }
            }
            MetricKind::AtPoint { point, value, .. } => self.at_point(e, *point, *value),
            MetricKind::FBeta { average, beta, .. } => self.fbeta(e, *average, *beta),
            MetricKind::R2 {
                aggregation,
                num_regressors,
            } => self.r2(e, *aggregation, *num_regressors),
            MetricKind::Auc {
                thresholds,
                curve,
                summation,
                ..
            } => self.auc(e, thresholds.len(), *curve, *summation),
        }
    }

    /// `SensitivitySpecificityBase._find_max_under_constraint`: the largest of one rate
    /// over the thresholds where the other reaches `value`, or 0 where none does.
    fn at_point(&self, e: &mut Eager, point: Point, value: f64) -> OpResult<Tensor> {
        let tp = e.read(self.var("true_positives")?);
        let fp = e.read(self.var("false_positives")?);
        let tn = e.read(self.var("true_negatives")?);
        let fneg = e.read(self.var("false_negatives")?);
        let rate = |e: &mut Eager, num: &Tensor, other: &Tensor| -> OpResult<Tensor> {
            let den = ops::add(e, num, other)?;
            div_no_nan(e, num, &den)
        };
        // Sensitivity and recall are the same rate.
        let recall = rate(e, &tp, &fneg)?;
        let (constrained, dependent) = match point {
            Point::SensitivityAtSpecificity => (rate(e, &tn, &fp)?, recall),
            Point::SpecificityAtSensitivity => (recall, rate(e, &tn, &fp)?),
            Point::PrecisionAtRecall => (recall, rate(e, &tp, &fp)?),
            Point::RecallAtPrecision => (rate(e, &tp, &fp)?, recall),
        };
        let feasible = ops::binary(e, Binary::GreaterEqual, &constrained, &f32s(value))?;
        let zero = ops::zeros_like(e, &dependent)?;
        let kept = ops::select(e, &feasible, &dependent, &zero)?;
        let best = ops::reduce(e, &kept, ReduceKind::Max, None, false)?;
        ops::binary(e, Binary::Maximum, &best, &f32s(0.0))
    }

    /// AUC's area from the confusion counts (Keras's `result` and `interpolate_pr_auc`).
    fn auc(&self, e: &mut Eager, n: usize, curve: Curve, summation: Summation) -> OpResult<Tensor> {
        let tp = e.read(self.var("true_positives")?);
        let fp = e.read(self.var("false_positives")?);
        let tn = e.read(self.var("true_negatives")?);
        let fneg = e.read(self.var("false_negatives")?);
        let n = n as i64;
        let head = |e: &mut Eager, x: &Tensor| ops::slice(e, x, &[0], &[n - 1]);
        let tail = |e: &mut Eager, x: &Tensor| ops::slice(e, x, &[1], &[n - 1]);
        if curve == Curve::Pr && summation == Summation::Interpolation {
            let (tp0, tp1) = (head(e, &tp)?, tail(e, &tp)?);
            let dtp = ops::sub(e, &tp0, &tp1)?;
            let p = ops::add(e, &tp, &fp)?;
            let (p0, p1) = (head(e, &p)?, tail(e, &p)?);
            let dp = ops::sub(e, &p0, &p1)?;
            let dp_pos = ops::binary(e, Binary::Maximum, &dp, &f32s(0.0))?;
            let slope = div_no_nan(e, &dtp, &dp_pos)?;
            let sp1 = ops::mul(e, &slope, &p1)?;
            let intercept = ops::sub(e, &tp1, &sp1)?;
            let a = ops::binary(e, Binary::Greater, &p0, &f32s(0.0))?;
            let b = ops::binary(e, Binary::Greater, &p1, &f32s(0.0))?;
            let both = ops::binary(e, Binary::LogicalAnd, &a, &b)?;
            let p1_pos = ops::binary(e, Binary::Maximum, &p1, &f32s(0.0))?;
            let ratio = div_no_nan(e, &p0, &p1_pos)?;
            let ones = ops::ones_like(e, &p1)?;
            let safe = ops::select(e, &both, &ratio, &ones)?;
            let log = ops::unary(e, Unary::Log, &safe)?;
            let il = ops::mul(e, &intercept, &log)?;
            let inner = ops::add(e, &dtp, &il)?;
            let num = ops::mul(e, &slope, &inner)?;
            let fn1 = tail(e, &fneg)?;
            let den = ops::add(e, &tp1, &fn1)?;
            let den = ops::binary(e, Binary::Maximum, &den, &f32s(0.0))?;
            let inc = div_no_nan(e, &num, &den)?;
            return ops::reduce_sum(e, &inc, None, false);
        }
        let tp_fn = ops::add(e, &tp, &fneg)?;
        let recall = div_no_nan(e, &tp, &tp_fn)?;
        let (x, y) = match curve {
            Curve::Roc => {
                let fp_tn = ops::add(e, &fp, &tn)?;
                (div_no_nan(e, &fp, &fp_tn)?, recall)
            }
            Curve::Pr => {
                let tp_fp = ops::add(e, &tp, &fp)?;
                (recall, div_no_nan(e, &tp, &tp_fp)?)
            }
        };
        let (y0, y1) = (head(e, &y)?, tail(e, &y)?);
        let heights = match summation {
            Summation::Interpolation => {
                let s = ops::add(e, &y0, &y1)?;
                ops::div(e, &s, &f32s(2.0))?
            }
            Summation::Minoring => ops::binary(e, Binary::Minimum, &y0, &y1)?,
            Summation::Majoring => ops::binary(e, Binary::Maximum, &y0, &y1)?,
        };
        let (x0, x1) = (head(e, &x)?, tail(e, &x)?);
        let dx = ops::sub(e, &x0, &x1)?;
        let terms = ops::mul(e, &dx, &heights)?;
        ops::reduce_sum(e, &terms, None, false)
    }
}

/// How [`Metric::confusion`] counts: at which thresholds, whether they are spread evenly
/// (then Keras clips the predictions to [0, 1]), for one class only, among the top k only.
struct Counting<'a> {
    thresholds: &'a [f64],
    evenly: bool,
    class_id: Option<usize>,
    top_k: Option<usize>,
}

/// Keras's `_filter_top_k`: each row's k highest predictions (ties to the first) kept, the
/// others set to [`NEG_INF`].
fn filter_top_k(e: &mut Eager, p: &Tensor, k: usize) -> OpResult<Tensor> {
    let classes = p.shape().last().copied().unwrap_or(0);
    let picked = ops::top_k(e, p, k as i64)?;
    let Some(idx) = picked.get(1) else {
        return Err(OpError::internal("TopKV2 gave no indices".to_string()));
    };
    let oh = ops::one_hot(e, idx, classes, 1.0, 0.0, -1, DType::F32)?;
    let mask = ops::reduce_sum(e, &oh, Some(vec![-2]), false)?;
    let kept = ops::mul(e, p, &mask)?;
    let off = ops::sub(e, &f32s(1.0), &mask)?;
    let floor = ops::mul(e, &f32s(NEG_INF), &off)?;
    ops::add(e, &kept, &floor)
}

/// The confusion counts a metric keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    TruePositives,
    FalsePositives,
    TrueNegatives,
    FalseNegatives,
}

impl Count {
    const ALL: [Count; 4] = [
        Count::TruePositives,
        Count::FalsePositives,
        Count::TrueNegatives,
        Count::FalseNegatives,
    ];

    /// The count's variable name in Keras (and its metric's default name).
    pub fn name(self) -> &'static str {
        match self {
            Count::TruePositives => "true_positives",
            Count::FalsePositives => "false_positives",
            Count::TrueNegatives => "true_negatives",
            Count::FalseNegatives => "false_negatives",
        }
    }
}

/// `x[..., k:k+1]`.
fn last_column(e: &mut Eager, x: &Tensor, k: usize) -> OpResult<Tensor> {
    let nd = x.ndim();
    let mut begin = vec![0i64; nd];
    let mut size: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    if let (Some(b), Some(s)) = (begin.last_mut(), size.last_mut()) {
        *b = k as i64;
        *s = 1;
    }
    ops::slice(e, x, &begin, &size)
}

/// Keras's `reduce_to_samplewise_values`: values weighted and reduced to one per example
/// (by the mean, or by the sum for `Sum`); returns them with the weights per example.
fn samplewise(
    e: &mut Eager,
    values: &Tensor,
    sample_weight: Option<&Tensor>,
    sum: bool,
) -> OpResult<(Tensor, Option<Tensor>)> {
    let kind = if sum {
        ReduceKind::Sum
    } else {
        ReduceKind::Mean
    };
    let mut values = cast_to(e, values, DType::F32)?;
    let mut weight = None;
    if let Some(w) = sample_weight {
        let w = cast_to(e, w, DType::F32)?;
        let (v, w) = same_rank(e, values, w, true)?;
        let (wn, vn) = (w.ndim(), v.ndim());
        values = v;
        if vn > wn {
            let axes = (wn as i64..vn as i64).collect();
            values = ops::reduce(e, &values, kind, Some(axes), false)?;
        }
        let w = ops::broadcast_to(e, &w, values.shape())?;
        values = ops::mul(e, &values, &w)?;
        weight = Some(if wn > 1 {
            ops::reduce(e, &w, kind, Some((1..wn as i64).collect()), false)?
        } else {
            w
        });
    }
    if values.ndim() > 1 {
        let axes = (1..values.ndim() as i64).collect();
        values = ops::reduce(e, &values, kind, Some(axes), false)?;
    }
    Ok((values, weight))
}

fn argmax(e: &mut Eager, x: &Tensor) -> OpResult<Tensor> {
    e.execute1(
        Op::ArgReduce(ArgReduce {
            max: true,
            axis: -1,
            output: DType::I64,
        }),
        std::slice::from_ref(x),
    )
}

/// `tf.math.in_top_k(targets, predictions, k)`: a target is in the top k when fewer than
/// k classes are predicted strictly more probable than it.
fn in_top_k(e: &mut Eager, targets: &Tensor, p: &Tensor, k: usize) -> OpResult<Tensor> {
    let classes = p.shape().last().copied().unwrap_or(0);
    let oh = ops::one_hot(e, targets, classes, 1.0, 0.0, -1, p.dtype())?;
    let picked = ops::mul(e, &oh, p)?;
    let target = ops::reduce_sum(e, &picked, Some(vec![-1]), true)?;
    let above = ops::binary(e, Binary::Greater, p, &target)?;
    let above = cast_to(e, &above, DType::F32)?;
    let n = ops::reduce_sum(e, &above, Some(vec![-1]), false)?;
    ops::binary(e, Binary::Less, &n, &f32s(k as f64))
}

/// The per-example values of a wrapped metric, and the mask a masked loss gives.
fn wrapped(
    e: &mut Eager,
    w: Wrapped,
    t: &Tensor,
    p: &Tensor,
) -> OpResult<(Tensor, Option<Tensor>)> {
    let matches = |e: &mut Eager, a: &Tensor, b: &Tensor| -> OpResult<Tensor> {
        let eq = ops::binary(e, Binary::Equal, a, b)?;
        cast_to(e, &eq, DType::F32)
    };
    let values = match w {
        Wrapped::Loss(f) => {
            let per = losses::per_example(e, f, t, p)?;
            return Ok((per.values, per.mask));
        }
        Wrapped::Accuracy => {
            let t = cast_to(e, t, p.dtype())?;
            let (t, p) = same_rank(e, t, p.clone(), true)?;
            matches(e, &t, &p)?
        }
        Wrapped::BinaryAccuracy { threshold } => {
            let (t, p) = same_rank(e, t.clone(), p.clone(), true)?;
            let above = ops::binary(
                e,
                Binary::Greater,
                &p,
                &Tensor::scalar(threshold, p.dtype()),
            )?;
            let above = cast_to(e, &above, t.dtype())?;
            matches(e, &t, &above)?
        }
        Wrapped::CategoricalAccuracy => {
            let t = argmax(e, t)?;
            let t = cast_to(e, &t, p.dtype())?;
            let pa = argmax(e, p)?;
            let pa = cast_to(e, &pa, t.dtype())?;
            matches(e, &t, &pa)?
        }
        Wrapped::SparseCategoricalAccuracy => {
            let mut t = cast_to(e, t, p.dtype())?;
            let shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
            let reshape = t.ndim() == p.ndim() && t.shape().last() == Some(&1);
            if reshape {
                t = ops::squeeze(e, &t, &[-1])?;
            }
            let pa = argmax(e, p)?;
            let pa = cast_to(e, &pa, t.dtype())?;
            let mut m = matches(e, &t, &pa)?;
            if reshape {
                m = ops::reshape(e, &m, &shape)?;
            }
            if m.ndim() > 1 && m.shape().last() == Some(&1) {
                m = ops::squeeze(e, &m, &[-1])?;
            }
            m
        }
        Wrapped::TopKCategoricalAccuracy { k } | Wrapped::SparseTopKCategoricalAccuracy { k } => {
            let sparse = matches!(w, Wrapped::SparseTopKCategoricalAccuracy { .. });
            let t = if sparse {
                cast_to(e, t, DType::I32)?
            } else {
                let t = cast_to(e, t, p.dtype())?;
                argmax(e, &t)?
            };
            let shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
            let classes = p.shape().last().copied().unwrap_or(0) as i64;
            let p = if p.ndim() > 2 {
                ops::reshape(e, p, &[-1, classes])?
            } else {
                p.clone()
            };
            let flat = if t.ndim() > 1 {
                ops::reshape(e, &t, &[-1])?
            } else {
                t.clone()
            };
            let hit = in_top_k(e, &flat, &p, k)?;
            let hit = cast_to(e, &hit, DType::F32)?;
            if t.ndim() > 1 {
                ops::reshape(e, &hit, &shape)?
            } else {
                hit
            }
        }
    };
    Ok((values, None))
}
