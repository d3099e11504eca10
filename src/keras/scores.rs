//! The metrics whose state is sized by the number of classes the first update shows, as
//! Keras's `_build` sizes it: `FBetaScore` (and `F1Score`) keeps true positives, false
//! positives, false negatives and the labels' weight per class (or one of each with
//! `average='micro'`), and `R2Score` keeps per-class sums of the targets, of their squares,
//! of the squared residuals and of the weights, besides the count of values seen. Updates
//! and results are ops through the caller's context, as Keras's `update_state` and
//! `result` write them. It must not touch the language or the bindings.

use super::losses::{cast_to, same_rank};
use super::metrics::{Metric, MetricKind};
use crate::ops::{self, Assign, Binary, Eager, ErrorClass, OpError, OpResult, ReduceKind};
use crate::ops::{Tensor, Unary};
use crate::tensor::DType;

/// `FBetaScore`'s `average`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Average {
    /// One score per class.
    PerClass,
    Micro,
    Macro,
    Weighted,
}

/// `R2Score`'s `class_aggregation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum R2Aggregation {
    /// One score per output (`None`).
    PerOutput,
    UniformAverage,
    VarianceWeightedAverage,
}

/// Keras's `backend.epsilon()`.
const EPSILON: f64 = 1e-7;

fn f32s(v: f64) -> Tensor {
    Tensor::scalar(v, DType::F32)
}

/// Both inputs of a class-sized metric must be (batch, classes), as Keras's `_build`
/// checks.
fn two_d(class: &str, t: &Tensor, p: &Tensor) -> OpResult<usize> {
    if p.ndim() != 2 || t.ndim() != 2 {
        return Err(OpError::new(
            ErrorClass::Value,
            format!(
                "{class} expects 2D inputs with shape (batch_size, output_dim). Received input shapes: y_pred.shape={} and y_true.shape={}.",
                crate::tensor::shape_str(p.shape()),
                crate::tensor::shape_str(t.shape())
            ),
        ));
    }
    Ok(p.shape()[1])
}

impl Metric {
    /// `FBetaScore.update_state`.
    pub(super) fn update_fbeta(
        &self,
        e: &mut Eager,
        average: Average,
        threshold: Option<f64>,
        y_true: &Tensor,
        y_pred: &Tensor,
        sample_weight: Option<&Tensor>,
    ) -> OpResult<()> {
        let t = cast_to(e, y_true, DType::F32)?;
        let p = cast_to(e, y_pred, DType::F32)?;
        let classes = two_d("FBetaScore", &t, &p)?;
        let shape = if average == Average::Micro {
            vec![]
        } else {
            vec![classes]
        };
        self.build(
            &[
                "true_positives",
                "false_positives",
                "false_negatives",
                "intermediate_weights",
            ],
            &shape,
        )?;
        let positive = match threshold {
            None => {
                // Each row's largest prediction (all of them, on a tie) is its positive,
                // unless it is zero.
                let top = ops::reduce(e, &p, ReduceKind::Max, Some(vec![-1]), true)?;
                let at_top = ops::binary(e, Binary::GreaterEqual, &p, &top)?;
                let size = ops::unary(e, Unary::Abs, &p)?;
                let nonzero = ops::binary(e, Binary::Greater, &size, &f32s(1e-9))?;
                ops::binary(e, Binary::LogicalAnd, &at_top, &nonzero)?
            }
            Some(th) => ops::binary(e, Binary::Greater, &p, &f32s(th))?,
        };
        let pb = cast_to(e, &positive, DType::F32)?;
        let weight = match sample_weight {
            Some(w) => {
                let w = cast_to(e, w, DType::F32)?;
                Some(ops::expand_dims(e, &w, 1)?)
            }
            None => None,
        };
        let axes = (average != Average::Micro).then(|| vec![0]);
        let not_t = ops::sub(e, &f32s(1.0), &t)?;
        let not_p = ops::sub(e, &f32s(1.0), &pb)?;
        let parts = [
            ("true_positives", ops::mul(e, &pb, &t)?),
            ("false_positives", ops::mul(e, &pb, &not_t)?),
            ("false_negatives", ops::mul(e, &not_p, &t)?),
            ("intermediate_weights", t.clone()),
        ];
        for (name, value) in parts {
            let value = match &weight {
                Some(w) => ops::mul(e, &value, w)?,
                None => value,
            };
            let sum = ops::reduce_sum(e, &value, axes.clone(), false)?;
            e.assign(self.var(name)?, Assign::Add, &sum)?;
        }
        Ok(())
    }

    /// `FBetaScore.result`.
    pub(super) fn fbeta(&self, e: &mut Eager, average: Average, beta: f64) -> OpResult<Tensor> {
        let tp = e.read(self.var("true_positives")?);
        let fp = e.read(self.var("false_positives")?);
        let fneg = e.read(self.var("false_negatives")?);
        let eps = f32s(EPSILON);
        let ratio = |e: &mut Eager, other: &Tensor| -> OpResult<Tensor> {
            let den = ops::add(e, &tp, other)?;
            let den = ops::add(e, &den, &eps)?;
            ops::div(e, &tp, &den)
        };
        let precision = ratio(e, &fp)?;
        let recall = ratio(e, &fneg)?;
        let b2 = beta * beta;
        let num = ops::mul(e, &precision, &recall)?;
        let scaled = ops::mul(e, &f32s(b2), &precision)?;
        let den = ops::add(e, &scaled, &recall)?;
        let den = ops::add(e, &den, &eps)?;
        let mean = ops::div(e, &num, &den)?;
        let score = ops::mul(e, &mean, &f32s(1.0 + b2))?;
        match average {
            Average::PerClass => Ok(score),
            Average::Micro | Average::Macro => ops::reduce_mean(e, &score, None, false),
            Average::Weighted => {
                let iw = e.read(self.var("intermediate_weights")?);
                let total = ops::reduce_sum(e, &iw, None, false)?;
                let total = ops::add(e, &total, &eps)?;
                let weights = ops::div(e, &iw, &total)?;
                let weighted = ops::mul(e, &score, &weights)?;
                ops::reduce_sum(e, &weighted, None, false)
            }
        }
    }

    /// `R2Score.update_state`.
    pub(super) fn update_r2(
        &self,
        e: &mut Eager,
        y_true: &Tensor,
        y_pred: &Tensor,
        sample_weight: Option<&Tensor>,
    ) -> OpResult<()> {
        let t = cast_to(e, y_true, DType::F32)?;
        let p = cast_to(e, y_pred, DType::F32)?;
        let (t, p) = same_rank(e, t, p, true)?;
        let classes = two_d("R2Score", &t, &p)?;
        self.build(&["squared_sum", "sum", "residual", "count"], &[classes])?;
        let w = match sample_weight {
            Some(w) => {
                let w = cast_to(e, w, DType::F32)?;
                if w.ndim() == 1 {
                    ops::expand_dims(e, &w, 1)?
                } else {
                    w
                }
            }
            None => f32s(1.0),
        };
        let w = ops::broadcast_to(e, &w, t.shape())?;
        let wt = ops::mul(e, &t, &w)?;
        let sum = ops::reduce_sum(e, &wt, Some(vec![0]), false)?;
        e.assign(self.var("sum")?, Assign::Add, &sum)?;
        let sq = ops::mul(e, &t, &wt)?;
        let sq = ops::reduce_sum(e, &sq, Some(vec![0]), false)?;
        e.assign(self.var("squared_sum")?, Assign::Add, &sq)?;
        let d = ops::sub(e, &t, &p)?;
        let d2 = ops::square(e, &d)?;
        let res = ops::mul(e, &d2, &w)?;
        let res = ops::reduce_sum(e, &res, Some(vec![0]), false)?;
        e.assign(self.var("residual")?, Assign::Add, &res)?;
        let count = ops::reduce_sum(e, &w, Some(vec![0]), false)?;
        e.assign(self.var("count")?, Assign::Add, &count)?;
        let n = f32s(t.size() as f64);
        e.assign(self.var("num_samples")?, Assign::Add, &n)
    }

    /// Why `R2Score` falls back from the adjusted score to the plain one (Keras warns with
    /// this text), if it does: too few values for `num_regressors`.
    pub fn r2_fallback(&self) -> Option<&'static str> {
        let MetricKind::R2 { num_regressors, .. } = self.kind else {
            return None;
        };
        if num_regressors == 0 {
            return None;
        }
        let seen = self
            .var("num_samples")
            .ok()
            .and_then(|v| v.snapshot().to_f64_vec().1.first().copied())
            .unwrap_or(0.0);
        let p = num_regressors as f64;
        if p > seen - 1.0 {
            Some("More independent predictors than datapoints in adjusted R2 score. Falling back to standard R2 score.")
        } else if p == seen - 1.0 {
            Some("Division by zero in Adjusted R2 score. Falling back to standard R2 score.")
        } else {
            None
        }
    }

    /// `R2Score.result`.
    pub(super) fn r2(
        &self,
        e: &mut Eager,
        aggregation: R2Aggregation,
        num_regressors: usize,
    ) -> OpResult<Tensor> {
        let sum = e.read(self.var("sum")?);
        let sq = e.read(self.var("squared_sum")?);
        let res = e.read(self.var("residual")?);
        let count = e.read(self.var("count")?);
        let mean = ops::div(e, &sum, &count)?;
        let sm = ops::mul(e, &sum, &mean)?;
        let total = ops::sub(e, &sq, &sm)?;
        let frac = ops::div(e, &res, &total)?;
        let raw = ops::sub(e, &f32s(1.0), &frac)?;
        let inf = ops::unary(e, Unary::IsInf, &raw)?;
        let zero = ops::zeros_like(e, &raw)?;
        let raw = ops::select(e, &inf, &zero, &raw)?;
        let score = match aggregation {
            R2Aggregation::UniformAverage => ops::reduce_mean(e, &raw, None, false)?,
            R2Aggregation::VarianceWeightedAverage => {
                let tr = ops::mul(e, &total, &raw)?;
                let num = ops::reduce_sum(e, &tr, None, false)?;
                let den = ops::reduce_sum(e, &total, None, false)?;
                ops::div(e, &num, &den)?
            }
            R2Aggregation::PerOutput => raw,
        };
        if num_regressors == 0 || self.r2_fallback().is_some() {
            return Ok(score);
        }
        let n = e.read(self.var("num_samples")?);
        let rest = ops::sub(e, &f32s(1.0), &score)?;
        let n1 = ops::sub(e, &n, &f32s(1.0))?;
        let num = ops::mul(e, &rest, &n1)?;
        let np = ops::sub(e, &n, &f32s(num_regressors as f64))?;
        let den = ops::sub(e, &np, &f32s(1.0))?;
        let q = ops::div(e, &num, &den)?;
        ops::sub(e, &f32s(1.0), &q)
    }
}
