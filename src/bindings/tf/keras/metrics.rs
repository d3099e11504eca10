//! `tf.keras.metrics`: the metric classes (`Mean`, `Sum`, the accuracies, top-k, `AUC`,
//! `Precision`, `Recall`, the regression and cross-entropy metrics) as objects with
//! `update_state`, `result`, `reset_state`, `variables`, `name`, `dtype`, `get_config`,
//! calling (update, then result) and Keras's repr (`<Mean name=mean>`). The state and its
//! arithmetic are the engine's (`keras::metrics`): variables read and written through the
//! session's execution context. `compile(metrics=[...])` maps the objects the engine's
//! `fit` computes to its metrics (`engine_metric`) and names them in the logs by their
//! `name`, as Keras does.

use std::any::Any;
use std::cell::RefCell;

use super::super::convert::{tensor_err, tensor_of};
use super::super::eager::{apply, op_err, run};
use super::super::ops::arg;
use super::super::{bound, given, TfError, TfState};
use super::schedules::warn;
use super::state_variable::StateVariable;
use crate::keras::confusion::Confusion;
use crate::keras::losses::LossFn;
use crate::keras::metrics::{
    auc_thresholds, evenly_distributed, point_thresholds, Average, Count, Curve, Metric,
    MetricKind, Point, R2Aggregation, Summation, Wrapped, NEG_INF,
};
use crate::keras::{Metric as EngineMetric, MetricSpec};
use crate::lang::{Args, Ctx, NativeClass, NativeModule, Object, PyErr, PyResult, Value};
use crate::ops::Loss;
use crate::tensor::{DType, NdArray, Scalar};

/// A metric object.
pub struct MetricObj {
    pub class: &'static str,
    /// The state; inside `strategy.run`, replica 0's part of it.
    pub metric: Metric,
    /// `get_config()` beyond `name` and `dtype`, in Keras's order.
    pub config: Vec<(&'static str, Value)>,
    /// The state of replicas 1, 2, ... of `strategy.run` (made when a replica first
    /// updates the metric). As TF's metric variables are sync-on-read, each replica
    /// updates its own part (so replicas never write the same variable and a traced step
    /// runs them at once), and `result()` reads the sum of the parts: every metric's state
    /// is totals and counts, so the sum is the state of one replica that saw every batch.
    replicas: RefCell<Vec<Metric>>,
    /// Where `result()` puts the summed parts, to compute the result from them.
    combined: RefCell<Option<Metric>>,
}

impl MetricObj {
    fn update(&self, args: &Args, ctx: &mut dyn Ctx) -> PyResult<()> {
        let values_only = matches!(self.metric.kind, MetricKind::Mean | MetricKind::Sum);
        let (t, p, w) = if values_only {
            let s = args.bind("update_state", &["values", "sample_weight"], 1)?;
            let v = tensor_of(arg(&s, 0), ctx)?;
            (None, v, given(&s[1]).cloned())
        } else {
            let s = args.bind("update_state", &["y_true", "y_pred", "sample_weight"], 2)?;
            let p = tensor_of(arg(&s, 1), ctx)?;
            let t = tensor_of(arg(&s, 0), ctx)?;
            (Some(t), p, given(&s[2]).cloned())
        };
        let w = match w {
            Some(w) => Some(tensor_of(&w, ctx)?),
            None => None,
        };
        let r = super::super::distribute::running_replica(ctx).unwrap_or(0);
        while r > 0 && self.replicas.borrow().len() < r {
            let part = Metric::new(self.metric.kind.clone(), &self.metric.name).map_err(op_err)?;
            self.replicas.borrow_mut().push(part);
        }
        let parts = self.replicas.borrow();
        let m = match r.checked_sub(1) {
            Some(i) => parts.get(i).unwrap_or(&self.metric),
            None => &self.metric,
        };
        run(ctx, |e| match &t {
            Some(t) => m.update(e, t, &p, w.as_ref()),
            None => m.update_values(e, &p, w.as_ref()),
        })
    }

    fn result(&self, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let parts = self.replicas.borrow();
        if parts.is_empty() {
            if let Some(text) = self.metric.r2_fallback() {
                warn(ctx, text);
            }
            return apply(ctx, |e| self.metric.result(e));
        }
        if self.combined.borrow().is_none() {
            let m = Metric::new(self.metric.kind.clone(), &self.metric.name).map_err(op_err)?;
            *self.combined.borrow_mut() = Some(m);
        }
        let combined = self.combined.borrow();
        let Some(sum) = combined.as_ref() else {
            return apply(ctx, |e| self.metric.result(e));
        };
        for part in parts.iter() {
            sum.build_like(part).map_err(op_err)?;
        }
        sum.build_like(&self.metric).map_err(op_err)?;
        // A part that no update reached yet holds none of the variables its first update
        // makes; it adds nothing to them.
        let mine_all = self.metric.variables();
        let parts_all: Vec<_> = parts.iter().map(|p| p.variables()).collect();
        let sum_all = sum.variables();
        if let Some(text) = sum.r2_fallback() {
            warn(ctx, text);
        }
        apply(ctx, |e| {
            for (i, (_, into)) in sum_all.iter().enumerate() {
                let mut values = vec![];
                for vars in std::iter::once(&mine_all).chain(parts_all.iter()) {
                    if let Some((_, v)) = vars.get(i) {
                        values.push(e.read(v));
                    }
                }
                if values.is_empty() {
                    continue;
                }
                let total = crate::ops::add_n(e, &values)?;
                e.assign(into, crate::ops::Assign::Set, &total)?;
            }
            sum.result(e)
        })
    }

    fn reset(&self, ctx: &mut dyn Ctx) -> PyResult<()> {
        run(ctx, |e| {
            self.metric.reset(e)?;
            for part in self.replicas.borrow().iter() {
                part.reset(e)?;
            }
            Ok(())
        })
    }

    fn get_config(&self) -> Value {
        let mut pairs = vec![
            ("name", Value::str(&self.metric.name)),
            ("dtype", Value::str("float32")),
        ];
        pairs.extend(self.config.iter().cloned());
        Value::dict_from(pairs)
    }

    fn variable(&self, which: &str) -> Option<Value> {
        self.metric
            .variables()
            .iter()
            .find(|(p, _)| p.rsplit('/').next() == Some(which))
            .map(|(_, v)| StateVariable::value(v))
    }
}

impl Object for MetricObj {
    fn type_name(&self) -> String {
        self.class.into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<{} name={}>", self.class, self.metric.name))
    }
    fn getattr(&self, this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "name" => Value::str(&self.metric.name),
            "dtype" => Value::str("float32"),
            "variables" => Value::list(
                self.metric
                    .variables()
                    .iter()
                    .map(|(_, v)| StateVariable::value(v))
                    .collect(),
            ),
            "update_state" => bound::<MetricObj>(this, name, |m, _, args, ctx| {
                m.update(args, ctx)?;
                Ok(Value::None)
            }),
            "result" => bound::<MetricObj>(this, name, |m, _, _, ctx| m.result(ctx)),
            "reset_state" => bound::<MetricObj>(this, name, |m, _, _, ctx| {
                m.reset(ctx)?;
                Ok(Value::None)
            }),
            "get_config" => bound::<MetricObj>(this, name, |m, _, _, _| Ok(m.get_config())),
            // Keras keeps AUC's thresholds in a numpy array and lists its float64 items;
            // Precision and Recall keep the Python floats they were given.
            "thresholds" => match &self.metric.kind {
                MetricKind::Auc { thresholds, .. } => {
                    Value::list(thresholds.iter().map(|t| np_float64(*t)).collect())
                }
                MetricKind::Precision { thresholds, .. }
                | MetricKind::Recall { thresholds, .. }
                | MetricKind::Count { thresholds, .. }
                | MetricKind::AtPoint { thresholds, .. } => {
                    Value::list(thresholds.iter().map(|t| Value::Float(*t)).collect())
                }
                _ => return Ok(None),
            },
            other => match self.variable(other) {
                Some(v) => v,
                None => return Ok(None),
            },
        }))
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        self.update(&args, ctx)?;
        self.result(ctx)
    }
    fn str(&self, ctx: &mut dyn Ctx) -> PyResult<String> {
        self.repr(ctx)
    }
    fn dir(&self) -> Vec<String> {
        let mut names: Vec<String> = [
            "name",
            "dtype",
            "variables",
            "update_state",
            "result",
            "reset_state",
            "get_config",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        names.extend(
            self.metric
                .variables()
                .iter()
                .filter_map(|(p, _)| p.rsplit('/').next().map(str::to_string)),
        );
        names
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.class.into(), "Metric".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Keras's `auto_name`: the class name in snake case (`AUC` is `auc`, `AdamW` is
/// `adam_w`), made unique in the session.
pub fn auto_name(class: &str, ctx: &mut dyn Ctx) -> String {
    let mut snake = String::new();
    let chars: Vec<char> = class.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev_lower = i > 0 && chars[i - 1].is_lowercase();
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) {
                snake.push('_');
            }
            snake.extend(c.to_lowercase());
        } else {
            snake.push(*c);
        }
    }
    ctx.state().get::<TfState>().keras.names.unique(&snake)
}

/// A numpy float64 scalar (what iterating a numpy array gives).
fn np_float64(x: f64) -> Value {
    crate::bindings::numpy::convert::wrap(NdArray::from_scalar(Scalar::F64(x)))
}

/// The constructor of one metric class: its parameters and how they make the metric.
type Make = fn(&[Option<Value>]) -> PyResult<(MetricKind, Vec<(&'static str, Value)>)>;

fn param(s: &[Option<Value>], i: usize) -> Option<&Value> {
    s.get(i).and_then(given)
}

fn float_or(s: &[Option<Value>], i: usize, d: f64) -> PyResult<f64> {
    param(s, i).map_or(Ok(d), |v| v.as_float())
}

fn flag_or(s: &[Option<Value>], i: usize) -> PyResult<bool> {
    param(s, i).map_or(Ok(false), |v| v.as_bool_strict())
}

/// The value a config shows for a parameter: as given, else its default.
fn shown(s: &[Option<Value>], i: usize, default: Value) -> Value {
    s.get(i).and_then(|v| v.clone()).unwrap_or(default)
}

fn threshold_list(v: Option<&Value>) -> PyResult<Option<Vec<f64>>> {
    match v {
        None => Ok(None),
        Some(seq @ (Value::List(_) | Value::Tuple(_))) => Ok(Some(
            seq.as_seq()
                .unwrap_or_default()
                .iter()
                .map(|x| x.as_float())
                .collect::<PyResult<_>>()?,
        )),
        Some(x) => Ok(Some(vec![x.as_float()?])),
    }
}

fn check_thresholds(t: &[f64]) -> PyResult<()> {
    // Keras lists only the thresholds out of range.
    let bad: Vec<String> = t
        .iter()
        .filter(|x| !(0.0..=1.0).contains(*x))
        .map(|x| crate::lang::float_repr(*x))
        .collect();
    if !bad.is_empty() {
        let shown = bad;
        return Err(TfError::Value(format!(
            "Threshold values must be in [0, 1]. Received: [{}]",
            shown.join(", ")
        ))
        .into());
    }
    Ok(())
}

/// `Precision` and `Recall` (`thresholds, top_k, class_id, name, dtype`).
fn confusion(
    s: &[Option<Value>],
    precision: bool,
) -> PyResult<(MetricKind, Vec<(&'static str, Value)>)> {
    let top_k = param(s, 1)
        .map(|v| v.as_int())
        .transpose()?
        .map(|k| k.max(0) as usize);
    // With `top_k` a prediction outside the top k is pushed to NEG_INF, so the default
    // threshold is NEG_INF itself: every kept prediction counts as positive.
    let default = if top_k.is_some() { NEG_INF } else { 0.5 };
    let thresholds = given_thresholds(s, 0, default)?;
    let evenly = evenly_distributed(&thresholds);
    let class_id = param(s, 2)
        .map(|v| v.as_int())
        .transpose()?
        .map(|k| k.max(0) as usize);
    let config = vec![
        ("thresholds", shown(s, 0, Value::None)),
        ("top_k", shown(s, 1, Value::None)),
        ("class_id", shown(s, 2, Value::None)),
    ];
    let kind = if precision {
        MetricKind::Precision {
            thresholds,
            evenly,
            class_id,
            top_k,
        }
    } else {
        MetricKind::Recall {
            thresholds,
            evenly,
            class_id,
            top_k,
        }
    };
    Ok((kind, config))
}

/// Keras's `parse_init_thresholds`: the thresholds given at `i` (one or a list), each in
/// [0, 1], else the default alone.
fn given_thresholds(s: &[Option<Value>], i: usize, default: f64) -> PyResult<Vec<f64>> {
    let given = threshold_list(param(s, i))?;
    if let Some(t) = &given {
        check_thresholds(t)?;
    }
    Ok(given.unwrap_or_else(|| vec![default]))
}

/// `TruePositives`, `FalsePositives`, `TrueNegatives`, `FalseNegatives` (`thresholds,
/// name, dtype`).
fn count(s: &[Option<Value>], which: Count) -> PyResult<(MetricKind, Vec<(&'static str, Value)>)> {
    let thresholds = given_thresholds(s, 0, 0.5)?;
    let evenly = evenly_distributed(&thresholds);
    Ok((
        MetricKind::Count {
            which,
            thresholds,
            evenly,
        },
        vec![("thresholds", shown(s, 0, Value::None))],
    ))
}

/// `SensitivityAtSpecificity` and its kin (`value, num_thresholds, class_id, name, dtype`,
/// the value's parameter named by the class).
fn at_point(
    s: &[Option<Value>],
    point: Point,
) -> PyResult<(MetricKind, Vec<(&'static str, Value)>)> {
    let key = point_param(point);
    let given = param(s, 0).cloned().unwrap_or(Value::None);
    let value = given.as_float()?;
    if !(0.0..=1.0).contains(&value) {
        return Err(TfError::Value(format!(
            "Argument `{key}` must be in the range [0, 1]. Received: {key}={}",
            match given {
                Value::Int(i) => i.to_string(),
                _ => crate::lang::float_repr(value),
            }
        ))
        .into());
    }
    let num = param(s, 1).map_or(Ok(200), |v| v.as_int())?;
    if num <= 0 {
        return Err(TfError::Value(format!(
            "Argument `num_thresholds` must be an integer > 0. Received: num_thresholds={num}"
        ))
        .into());
    }
    // The four counts are sized by the argument, so they are held against the memory
    // bound before they are made.
    crate::tensor::check_alloc(&[num as usize, 5], DType::F64).map_err(tensor_err)?;
    let class_id = param(s, 2)
        .map(|v| v.as_int())
        .transpose()?
        .map(|k| k.max(0) as usize);
    Ok((
        MetricKind::AtPoint {
            point,
            value,
            thresholds: point_thresholds(num as usize),
            class_id,
        },
        vec![
            ("class_id", shown(s, 2, Value::None)),
            ("num_thresholds", Value::Int(num)),
            (key, given),
        ],
    ))
}

/// What an f-string shows for a constructor argument.
fn shown_str(v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => crate::lang::float_repr(*f),
        Value::Str(_) => v.as_str().unwrap_or_default().to_string(),
        other => other.type_name(),
    }
}

/// `FBetaScore` (`average, beta, threshold, name, dtype`) and `F1Score` (`average,
/// threshold, name, dtype`; its `beta` is 1 and its config leaves it out).
fn fbeta(
    s: &[Option<Value>],
    beta: Option<&Value>,
    threshold_at: usize,
    shows_beta: bool,
) -> PyResult<(MetricKind, Vec<(&'static str, Value)>)> {
    let average_v = param(s, 0).cloned().unwrap_or(Value::None);
    let average = match &average_v {
        Value::None => Average::PerClass,
        Value::Str(_) => match average_v.as_str()? {
            "micro" => Average::Micro,
            "macro" => Average::Macro,
            "weighted" => Average::Weighted,
            _ => return Err(bad_average(&average_v)),
        },
        _ => return Err(bad_average(&average_v)),
    };
    let beta_v = beta.cloned().unwrap_or(Value::Float(1.0));
    let Value::Float(b) = beta_v else {
        return Err(TfError::Value(format!(
            "Invalid `beta` argument value. It should be a Python float. Received: beta={} of type '<class '{}'>'",
            shown_str(&beta_v),
            beta_v.type_name()
        ))
        .into());
    };
    if b <= 0.0 {
        return Err(TfError::Value(format!(
            "Invalid `beta` argument value. It should be > 0. Received: beta={}",
            shown_str(&beta_v)
        ))
        .into());
    }
    let threshold_v = param(s, threshold_at).cloned().unwrap_or(Value::None);
    let threshold = match &threshold_v {
        Value::None => None,
        Value::Float(t) => {
            if *t > 1.0 || *t <= 0.0 {
                return Err(TfError::Value(format!(
                    "Invalid `threshold` argument value. It should verify 0 < threshold <= 1. Received: threshold={}",
                    shown_str(&threshold_v)
                ))
                .into());
            }
            Some(*t)
        }
        other => {
            return Err(TfError::Value(format!(
                "Invalid `threshold` argument value. It should be a Python float. Received: threshold={} of type '<class '{}'>'",
                shown_str(other),
                other.type_name()
            ))
            .into())
        }
    };
    let mut config = vec![("average", average_v)];
    if shows_beta {
        config.push(("beta", beta_v));
    }
    config.push(("threshold", threshold_v));
    Ok((
        MetricKind::FBeta {
            average,
            beta: b,
            threshold,
        },
        config,
    ))
}

fn bad_average(v: &Value) -> PyErr {
    TfError::Value(format!(
        "Invalid `average` argument value. Expected one of: {{None, 'micro', 'macro', 'weighted'}}. Received: average={}",
        shown_str(v)
    ))
    .into()
}

/// `R2Score` (`class_aggregation, num_regressors, name, dtype`).
fn r2(s: &[Option<Value>]) -> PyResult<(MetricKind, Vec<(&'static str, Value)>)> {
    let given = s
        .first()
        .cloned()
        .flatten()
        .unwrap_or(Value::str("uniform_average"));
    let aggregation = match &given {
        Value::None => Some(R2Aggregation::PerOutput),
        Value::Str(_) => match given.as_str()? {
            "uniform_average" => Some(R2Aggregation::UniformAverage),
            "variance_weighted_average" => Some(R2Aggregation::VarianceWeightedAverage),
            _ => None,
        },
        _ => None,
    };
    let Some(aggregation) = aggregation else {
        return Err(TfError::Value(format!(
            "Invalid value for argument `class_aggregation`. Expected one of (None, 'uniform_average', 'variance_weighted_average'). Received: class_aggregation={}",
            shown_str(&given)
        ))
        .into());
    };
    let n = param(s, 1).map_or(Ok(0), |v| v.as_int())?;
    if n < 0 {
        return Err(TfError::Value(format!(
            "Invalid value for argument `num_regressors`. Expected a value >= 0. Received: num_regressors={n}"
        ))
        .into());
    }
    Ok((
        MetricKind::R2 {
            aggregation,
            num_regressors: n as usize,
        },
        vec![
            ("class_aggregation", given),
            ("num_regressors", Value::Int(n)),
        ],
    ))
}

/// The parameter that holds an operating-point metric's floor.
fn point_param(point: Point) -> &'static str {
    match point {
        Point::SensitivityAtSpecificity => "specificity",
        Point::SpecificityAtSensitivity => "sensitivity",
        Point::PrecisionAtRecall => "recall",
        Point::RecallAtPrecision => "precision",
    }
}

fn auc(s: &[Option<Value>]) -> PyResult<(MetricKind, Vec<(&'static str, Value)>)> {
    // num_thresholds, curve, summation_method, name, dtype, thresholds, multi_label,
    // num_labels, label_weights, from_logits
    if flag_or(s, 6)? || param(s, 7).is_some() || param(s, 8).is_some() {
        return Err(TfError::NotImplemented(
            "multi_label, num_labels and label_weights are not supported by this kernel's AUC"
                .into(),
        )
        .into());
    }
    let curve_text = param(s, 1).map_or(Ok("ROC".to_string()), |v| {
        Ok::<_, PyErr>(v.as_str()?.to_string())
    })?;
    let curve = match curve_text.to_uppercase().as_str() {
        "ROC" => Curve::Roc,
        "PR" => Curve::Pr,
        _ => {
            return Err(TfError::Value(format!(
                "Invalid AUC curve value: \"{curve_text}\". Expected values are [\"PR\", \"ROC\"]"
            ))
            .into())
        }
    };
    let sum_text = param(s, 2).map_or(Ok("interpolation".to_string()), |v| {
        Ok::<_, PyErr>(v.as_str()?.to_string())
    })?;
    let summation = match sum_text.to_lowercase().as_str() {
        "interpolation" => Summation::Interpolation,
        "minoring" => Summation::Minoring,
        "majoring" => Summation::Majoring,
        _ => {
            return Err(TfError::Value(format!(
                "Invalid AUC summation method value: \"{sum_text}\". Expected values are [\"interpolation\", \"majoring\", \"minoring\"]"
            ))
            .into())
        }
    };
    let given = threshold_list(param(s, 5))?;
    let num = match &given {
        Some(t) => {
            check_thresholds(t)?;
            t.len() + 2
        }
        None => {
            let n = param(s, 0).map_or(Ok(200), |v| v.as_int())?;
            if n <= 1 {
                return Err(TfError::Value(format!(
                    "Argument `num_thresholds` must be an integer > 1. Received: num_thresholds={n}"
                ))
                .into());
            }
            n as usize
        }
    };
    // The thresholds and the four confusion counts are sized by the argument, so they are
    // held against the memory bound before they are made.
    crate::tensor::check_alloc(&[num, 5], DType::F64).map_err(tensor_err)?;
    let thresholds = auc_thresholds(num, given.as_deref());
    let mut config = vec![
        ("num_thresholds", Value::Int(num as i64)),
        (
            "curve",
            Value::str(if curve == Curve::Roc { "ROC" } else { "PR" }),
        ),
        (
            "summation_method",
            Value::str(match summation {
                Summation::Interpolation => "interpolation",
                Summation::Minoring => "minoring",
                Summation::Majoring => "majoring",
            }),
        ),
        ("multi_label", Value::Bool(false)),
        ("num_labels", Value::None),
        ("label_weights", Value::None),
        ("from_logits", Value::Bool(flag_or(s, 9)?)),
    ];
    if given.is_some() {
        let inner = thresholds
            .get(1..thresholds.len().saturating_sub(1))
            .unwrap_or(&[])
            .iter()
            .map(|t| np_float64(*t))
            .collect();
        config.push(("thresholds", Value::list(inner)));
    }
    Ok((
        MetricKind::Auc {
            thresholds,
            curve,
            summation,
            from_logits: flag_or(s, 9)?,
        },
        config,
    ))
}

/// One metric class: its Keras name, parameters (`name` and `dtype` among them), default
/// name (`None` for an automatic one) and constructor.
struct Class {
    class: &'static str,
    params: &'static [&'static str],
    /// How many leading parameters must be given (the operating-point metrics' floor).
    required: usize,
    default_name: Option<&'static str>,
    make: Make,
}

const NAME_DTYPE: &[&str] = &["name", "dtype"];
const COUNT_PARAMS: &[&str] = &["thresholds", "name", "dtype"];

fn wrapped(w: Wrapped) -> MetricKind {
    MetricKind::Wrapped(w)
}

fn classes() -> Vec<Class> {
    vec![
        Class {
            class: "Mean",
            params: NAME_DTYPE,
            required: 0,
            default_name: Some("mean"),
            make: |_| Ok((MetricKind::Mean, vec![])),
        },
        Class {
            class: "Sum",
            params: NAME_DTYPE,
            required: 0,
            default_name: Some("sum"),
            make: |_| Ok((MetricKind::Sum, vec![])),
        },
        Class {
            class: "Accuracy",
            params: NAME_DTYPE,
            required: 0,
            default_name: Some("accuracy"),
            make: |_| Ok((wrapped(Wrapped::Accuracy), vec![])),
        },
        Class {
            class: "BinaryAccuracy",
            params: &["name", "dtype", "threshold"],
            required: 0,
            default_name: Some("binary_accuracy"),
            make: |s| {
                let threshold = float_or(s, 2, 0.5)?;
                Ok((
                    wrapped(Wrapped::BinaryAccuracy { threshold }),
                    vec![("threshold", shown(s, 2, Value::Float(0.5)))],
                ))
            },
        },
        Class {
            class: "CategoricalAccuracy",
            params: NAME_DTYPE,
            required: 0,
            default_name: Some("categorical_accuracy"),
            make: |_| Ok((wrapped(Wrapped::CategoricalAccuracy), vec![])),
        },
        Class {
            class: "SparseCategoricalAccuracy",
            params: NAME_DTYPE,
            required: 0,
            default_name: Some("sparse_categorical_accuracy"),
            make: |_| Ok((wrapped(Wrapped::SparseCategoricalAccuracy), vec![])),
        },
        Class {
            class: "TopKCategoricalAccuracy",
            params: &["k", "name", "dtype"],
            required: 0,
            default_name: Some("top_k_categorical_accuracy"),
            make: |s| {
                let k = param(s, 0).map_or(Ok(5), |v| v.as_int())?.max(0) as usize;
                Ok((
                    wrapped(Wrapped::TopKCategoricalAccuracy { k }),
                    vec![("k", shown(s, 0, Value::Int(5)))],
                ))
            },
        },
        Class {
            class: "SparseTopKCategoricalAccuracy",
            params: &["k", "name", "dtype", "from_sorted_ids"],
            required: 0,
            default_name: Some("sparse_top_k_categorical_accuracy"),
            make: |s| {
                if flag_or(s, 3)? {
                    return Err(TfError::NotImplemented(
                        "from_sorted_ids=True is not supported by this kernel".into(),
                    )
                    .into());
                }
                let k = param(s, 0).map_or(Ok(5), |v| v.as_int())?.max(0) as usize;
                Ok((
                    wrapped(Wrapped::SparseTopKCategoricalAccuracy { k }),
                    vec![("k", shown(s, 0, Value::Int(5)))],
                ))
            },
        },
        Class {
            class: "AUC",
            params: &[
                "num_thresholds",
                "curve",
                "summation_method",
                "name",
                "dtype",
                "thresholds",
                "multi_label",
                "num_labels",
                "label_weights",
                "from_logits",
            ],
            required: 0,
            default_name: None,
            make: auc,
        },
        Class {
            class: "Precision",
            params: &["thresholds", "top_k", "class_id", "name", "dtype"],
            required: 0,
            default_name: None,
            make: |s| confusion(s, true),
        },
        Class {
            class: "Recall",
            params: &["thresholds", "top_k", "class_id", "name", "dtype"],
            required: 0,
            default_name: None,
            make: |s| confusion(s, false),
        },
        Class {
            class: "TruePositives",
            params: COUNT_PARAMS,
            required: 0,
            default_name: None,
            make: |s| count(s, Count::TruePositives),
        },
        Class {
            class: "FalsePositives",
            params: COUNT_PARAMS,
            required: 0,
            default_name: None,
            make: |s| count(s, Count::FalsePositives),
        },
        Class {
            class: "TrueNegatives",
            params: COUNT_PARAMS,
            required: 0,
            default_name: None,
            make: |s| count(s, Count::TrueNegatives),
        },
        Class {
            class: "FalseNegatives",
            params: COUNT_PARAMS,
            required: 0,
            default_name: None,
            make: |s| count(s, Count::FalseNegatives),
        },
        Class {
            class: "SensitivityAtSpecificity",
            params: &["specificity", "num_thresholds", "class_id", "name", "dtype"],
            required: 1,
            default_name: None,
            make: |s| at_point(s, Point::SensitivityAtSpecificity),
        },
        Class {
            class: "SpecificityAtSensitivity",
            params: &["sensitivity", "num_thresholds", "class_id", "name", "dtype"],
            required: 1,
            default_name: None,
            make: |s| at_point(s, Point::SpecificityAtSensitivity),
        },
        Class {
            class: "PrecisionAtRecall",
            params: &["recall", "num_thresholds", "class_id", "name", "dtype"],
            required: 1,
            default_name: None,
            make: |s| at_point(s, Point::PrecisionAtRecall),
        },
        Class {
            class: "RecallAtPrecision",
            params: &["precision", "num_thresholds", "class_id", "name", "dtype"],
            required: 1,
            default_name: None,
            make: |s| at_point(s, Point::RecallAtPrecision),
        },
        Class {
            class: "FBetaScore",
            params: &["average", "beta", "threshold", "name", "dtype"],
            required: 0,
            default_name: Some("fbeta_score"),
            make: |s| fbeta(s, param(s, 1), 2, true),
        },
        Class {
            class: "F1Score",
            params: &["average", "threshold", "name", "dtype"],
            required: 0,
            default_name: Some("f1_score"),
            make: |s| fbeta(s, None, 1, false),
        },
        Class {
            class: "R2Score",
            params: &["class_aggregation", "num_regressors", "name", "dtype"],
            required: 0,
            default_name: Some("r2_score"),
            make: r2,
        },
        Class {
            class: "MeanSquaredError",
            params: NAME_DTYPE,
            required: 0,
            default_name: Some("mean_squared_error"),
            make: |_| Ok((wrapped(Wrapped::Loss(LossFn::MeanSquaredError)), vec![])),
        },
        Class {
            class: "MeanAbsoluteError",
            params: NAME_DTYPE,
            required: 0,
            default_name: Some("mean_absolute_error"),
            make: |_| Ok((wrapped(Wrapped::Loss(LossFn::MeanAbsoluteError)), vec![])),
        },
        Class {
            class: "RootMeanSquaredError",
            params: NAME_DTYPE,
            required: 0,
            default_name: Some("root_mean_squared_error"),
            make: |_| Ok((MetricKind::RootMeanSquaredError, vec![])),
        },
        Class {
            class: "SparseCategoricalCrossentropy",
            params: &["name", "dtype", "from_logits", "ignore_class", "axis"],
            required: 0,
            default_name: Some("sparse_categorical_crossentropy"),
            make: |s| {
                only_last_axis("SparseCategoricalCrossentropy", param(s, 4))?;
                let f = LossFn::SparseCategoricalCrossentropy {
                    from_logits: flag_or(s, 2)?,
                    ignore_class: param(s, 3).map(|v| v.as_int()).transpose()?,
                };
                Ok((
                    wrapped(Wrapped::Loss(f)),
                    vec![
                        ("from_logits", shown(s, 2, Value::Bool(false))),
                        ("ignore_class", shown(s, 3, Value::None)),
                        ("axis", shown(s, 4, Value::Int(-1))),
                    ],
                ))
            },
        },
        Class {
            class: "CategoricalCrossentropy",
            params: &["name", "dtype", "from_logits", "label_smoothing", "axis"],
            required: 0,
            default_name: Some("categorical_crossentropy"),
            make: |s| {
                only_last_axis("CategoricalCrossentropy", param(s, 4))?;
                let f = LossFn::CategoricalCrossentropy {
                    from_logits: flag_or(s, 2)?,
                    label_smoothing: float_or(s, 3, 0.0)?,
                };
                Ok((
                    wrapped(Wrapped::Loss(f)),
                    vec![
                        ("from_logits", shown(s, 2, Value::Bool(false))),
                        ("label_smoothing", shown(s, 3, Value::Int(0))),
                        ("axis", shown(s, 4, Value::Int(-1))),
                    ],
                ))
            },
        },
        Class {
            class: "BinaryCrossentropy",
            params: &["name", "dtype", "from_logits", "label_smoothing"],
            required: 0,
            default_name: Some("binary_crossentropy"),
            make: |s| {
                let f = LossFn::BinaryCrossentropy {
                    from_logits: flag_or(s, 2)?,
                    label_smoothing: float_or(s, 3, 0.0)?,
                };
                Ok((
                    wrapped(Wrapped::Loss(f)),
                    vec![
                        ("from_logits", shown(s, 2, Value::Bool(false))),
                        ("label_smoothing", shown(s, 3, Value::Int(0))),
                    ],
                ))
            },
        },
    ]
}

fn only_last_axis(class: &str, axis: Option<&Value>) -> PyResult<()> {
    let axis = axis.map_or(Ok(-1), |v| v.as_int())?;
    crate::keras::losses::check_axis(class, axis).map_err(op_err)
}

fn metric_class(c: Class) -> Value {
    let Class {
        class,
        params,
        required,
        default_name,
        make,
    } = c;
    NativeClass::new(class, "keras.src.metrics", "")
        .base("Metric")
        .constructor(move |args: &Args, ctx| {
            let s = args.bind(&format!("{class}.__init__"), params, required)?;
            let slot = |n: &str| {
                params
                    .iter()
                    .position(|p| *p == n)
                    .and_then(|i| param(&s, i))
            };
            if let Some(d) = slot("dtype") {
                if d.as_str().ok() != Some("float32") {
                    return Err(TfError::NotImplemented(
                        "metrics on this kernel keep their state in float32".into(),
                    )
                    .into());
                }
            }
            let name = match (slot("name"), default_name) {
                (Some(n), _) => n.as_str()?.to_string(),
                (None, Some(d)) => d.to_string(),
                (None, None) => auto_name(class, ctx),
            };
            let (kind, config) = make(&s)?;
            let metric = Metric::new(kind, &name).map_err(op_err)?;
            Ok(Value::native(MetricObj {
                class,
                metric,
                config,
                replicas: RefCell::new(Vec::new()),
                combined: RefCell::new(None),
            }))
        })
        .into_value()
}

/// `compile(metrics=[...])`: a name, or a metric object the engine's `fit` computes, as
/// `(name logged, engine metric)`; for another object, an error naming what `compile`
/// supports.
pub fn engine_metric(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<(String, EngineMetric)>> {
    if let Value::Str(_) = v {
        return Ok(None);
    }
    let Some(m) = v.downcast::<MetricObj>() else {
        let name = ctx.getattr(v, "name")?;
        return Err(TfError::Value(format!(
            "compile() on this kernel cannot compute the metric {}; {}",
            ctx.str(&name)?,
            SUPPORTED
        ))
        .into());
    };
    let engine = match &m.metric.kind {
        MetricKind::Wrapped(w) => match *w {
            Wrapped::Accuracy => Some(EngineMetric::Equality),
            Wrapped::BinaryAccuracy { threshold: 0.5 } => Some(EngineMetric::BinaryAccuracy),
            Wrapped::CategoricalAccuracy => Some(EngineMetric::CategoricalAccuracy),
            Wrapped::SparseCategoricalAccuracy => Some(EngineMetric::SparseCategoricalAccuracy),
            Wrapped::TopKCategoricalAccuracy { k } => Some(EngineMetric::TopK { k, sparse: false }),
            Wrapped::SparseTopKCategoricalAccuracy { k } => {
                Some(EngineMetric::TopK { k, sparse: true })
            }
            Wrapped::Loss(LossFn::MeanSquaredError) => Some(EngineMetric::MeanSquaredError),
            Wrapped::Loss(LossFn::MeanAbsoluteError) => Some(EngineMetric::MeanAbsoluteError),
            Wrapped::Loss(LossFn::BinaryCrossentropy {
                from_logits,
                label_smoothing: 0.0,
            }) => Some(EngineMetric::Crossentropy(Loss::BinaryCrossentropy {
                from_logits,
            })),
            Wrapped::Loss(LossFn::CategoricalCrossentropy {
                from_logits,
                label_smoothing: 0.0,
            }) => Some(EngineMetric::Crossentropy(Loss::CategoricalCrossentropy {
                from_logits,
            })),
            Wrapped::Loss(LossFn::SparseCategoricalCrossentropy {
                from_logits,
                ignore_class: None,
            }) => Some(EngineMetric::Crossentropy(
                Loss::SparseCategoricalCrossentropy { from_logits },
            )),
            _ => None,
        },
        MetricKind::RootMeanSquaredError => Some(EngineMetric::RootMeanSquaredError),
        MetricKind::Precision {
            thresholds,
            class_id,
            top_k,
            ..
        } => match thresholds.as_slice() {
            [t] => Some(EngineMetric::Confusion(Confusion::Precision {
                threshold: *t as f32,
                class_id: *class_id,
                top_k: *top_k,
            })),
            _ => None,
        },
        MetricKind::Recall {
            thresholds,
            class_id,
            top_k,
            ..
        } => match thresholds.as_slice() {
            [t] => Some(EngineMetric::Confusion(Confusion::Recall {
                threshold: *t as f32,
                class_id: *class_id,
                top_k: *top_k,
            })),
            _ => None,
        },
        MetricKind::Count {
            which, thresholds, ..
        } => match thresholds.as_slice() {
            [t] => Some(EngineMetric::Confusion(Confusion::Count {
                which: *which,
                threshold: *t as f32,
            })),
            _ => None,
        },
        MetricKind::AtPoint {
            point,
            value,
            thresholds,
            class_id,
        } => Some(EngineMetric::Confusion(Confusion::AtPoint {
            point: *point,
            value: *value,
            num_thresholds: thresholds.len(),
            class_id: *class_id,
        })),
        MetricKind::Auc {
            thresholds,
            curve,
            summation,
            from_logits,
        } => {
            // `fit` keeps AUC's counts at evenly spread thresholds, the default form
            // (`num_thresholds`); thresholds given one by one are for `update_state`.
            let n = thresholds.len();
            (*thresholds == auc_thresholds(n, None)).then_some(EngineMetric::Confusion(
                Confusion::Auc {
                    num_thresholds: n,
                    curve: *curve,
                    summation: *summation,
                    from_logits: *from_logits,
                },
            ))
        }
        _ => None,
    };
    match engine {
        Some(e) => Ok(Some((m.metric.name.clone(), e))),
        None => Err(TfError::Value(format!(
            "compile() on this kernel cannot compute {} with these arguments during fit(); {}",
            m.class, SUPPORTED
        ))
        .into()),
    }
}

/// `compile(metrics=[...])`: each entry a Keras name or a metric object the engine
/// computes.
pub fn metric_specs(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Vec<MetricSpec>> {
    let mut out = vec![];
    for m in ctx.iterate(v)? {
        out.push(match (&m, engine_metric(&m, ctx)?) {
            (_, Some((name, metric))) => MetricSpec::Resolved(name, metric),
            (Value::Str(s), None) => {
                // Keras makes a metric object for a class's name, and the object takes its
                // default name (`auc`), so a later `AUC()` is `auc_1`.
                let class = match Confusion::parse(s) {
                    Some(Confusion::Auc { .. }) => Some("AUC"),
                    Some(Confusion::Precision { .. }) => Some("Precision"),
                    Some(Confusion::Recall { .. }) => Some("Recall"),
                    Some(Confusion::Count { which, .. }) => Some(match which {
                        Count::TruePositives => "TruePositives",
                        Count::FalsePositives => "FalsePositives",
                        Count::TrueNegatives => "TrueNegatives",
                        Count::FalseNegatives => "FalseNegatives",
                    }),
                    Some(Confusion::AtPoint { .. }) | None => None,
                };
                if let Some(class) = class {
                    auto_name(class, ctx);
                }
                MetricSpec::Name(s.to_string())
            }
            (other, None) => MetricSpec::Name(ctx.str(other)?),
        });
    }
    Ok(out)
}

/// What `compile(metrics=...)` accepts, for its error.
const SUPPORTED: &str = "it supports the names 'accuracy', 'acc', 'sparse_categorical_accuracy', \
'categorical_accuracy', 'binary_accuracy', 'mae', 'mse', 'top_k_categorical_accuracy', \
'sparse_top_k_categorical_accuracy', 'auc', 'precision', 'recall', 'true_positives', \
'false_positives', 'true_negatives', 'false_negatives' and the objects Accuracy, \
BinaryAccuracy (threshold 0.5), CategoricalAccuracy, SparseCategoricalAccuracy, \
TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, MeanSquaredError, MeanAbsoluteError, \
RootMeanSquaredError, the cross-entropies (without label smoothing or ignore_class), \
Precision, Recall and the four counts (one threshold), PrecisionAtRecall, RecallAtPrecision, \
SensitivityAtSpecificity, SpecificityAtSensitivity and AUC (num_thresholds, without a list of \
thresholds). \
Update other metrics (Mean, Sum) yourself with update_state after predict().";

/// Registers `tf.keras.metrics`.
pub fn register(keras: &NativeModule) {
    let m = NativeModule::new("keras.metrics", "Keras metrics.");
    for c in classes() {
        let name = c.class;
        m.set(name, metric_class(c));
    }
    m.set(
        "Metric",
        NativeClass::new("Metric", "keras.src.metrics.metric", "").into_value(),
    );
    keras.set("metrics", m.into_value());
}
