//! What `model.compile` fixes: the loss, the optimizer with Keras 3's defaults, and the
//! metrics (with Keras's automatic choice of accuracy). Plain data, `Clone + Send`, so each
//! replica gets its own copy. Parsing from Keras's string names lists the valid ones on
//! failure.

use super::confusion::Confusion;
use super::error::{KResult, KerasError};
use crate::device::{LossKind, OptStep};
use crate::ops::Loss;

const LOSS_NAMES: &[&str] = &[
    "mse",
    "mean_squared_error",
    "mae",
    "mean_absolute_error",
    "binary_crossentropy",
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "huber",
];

/// Parses a Keras loss name (the function names and the short aliases).
pub fn parse_loss(name: &str) -> KResult<LossKind> {
    Ok(match name {
        "mse" | "mean_squared_error" | "MeanSquaredError" => LossKind::MeanSquaredError,
        "mae" | "mean_absolute_error" | "MeanAbsoluteError" => LossKind::MeanAbsoluteError,
        "huber" | "huber_loss" | "Huber" => LossKind::Huber { delta: 1.0 },
        "binary_crossentropy" | "BinaryCrossentropy" => {
            LossKind::BinaryCrossentropy { from_logits: false }
        }
        "categorical_crossentropy" | "CategoricalCrossentropy" => {
            LossKind::CategoricalCrossentropy { from_logits: false }
        }
        "sparse_categorical_crossentropy" | "SparseCategoricalCrossentropy" => {
            LossKind::SparseCategoricalCrossentropy { from_logits: false }
        }
        other => return Err(KerasError::unknown("loss", other, LOSS_NAMES)),
    })
}

/// The name Keras reports for a loss function (`loss` key in configs).
pub fn loss_name(kind: &LossKind) -> &'static str {
    match kind {
        LossKind::MeanSquaredError => "mean_squared_error",
        LossKind::MeanAbsoluteError => "mean_absolute_error",
        LossKind::Huber { .. } => "huber",
        LossKind::BinaryCrossentropy { .. } => "binary_crossentropy",
        LossKind::CategoricalCrossentropy { .. } => "categorical_crossentropy",
        LossKind::SparseCategoricalCrossentropy { .. } => "sparse_categorical_crossentropy",
    }
}

/// An optimizer rule without its step counter or learning rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptKind {
    Sgd {
        momentum: f32,
        nesterov: bool,
    },
    Adam {
        beta_1: f32,
        beta_2: f32,
        epsilon: f32,
    },
    AdamW {
        beta_1: f32,
        beta_2: f32,
        epsilon: f32,
        weight_decay: f32,
    },
    RmsProp {
        rho: f32,
        momentum: f32,
        epsilon: f32,
        centered: bool,
    },
    Adagrad {
        initial_accumulator_value: f32,
        epsilon: f32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptimizerConfig {
    pub kind: OptKind,
    pub learning_rate: f32,
}

const OPT_NAMES: &[&str] = &["sgd", "adam", "adamw", "rmsprop", "adagrad"];

impl OptimizerConfig {
    /// Keras 3's defaults for each optimizer, by its string name (case-insensitive).
    pub fn parse(name: &str) -> KResult<OptimizerConfig> {
        let (kind, lr) = match name.to_ascii_lowercase().as_str() {
            "sgd" => (
                OptKind::Sgd {
                    momentum: 0.0,
                    nesterov: false,
                },
                0.01,
            ),
            "adam" => (
                OptKind::Adam {
                    beta_1: 0.9,
                    beta_2: 0.999,
                    epsilon: 1e-7,
                },
                0.001,
            ),
            "adamw" => (
                OptKind::AdamW {
                    beta_1: 0.9,
                    beta_2: 0.999,
                    epsilon: 1e-7,
                    weight_decay: 0.004,
                },
                0.001,
            ),
            "rmsprop" => (
                OptKind::RmsProp {
                    rho: 0.9,
                    momentum: 0.0,
                    epsilon: 1e-7,
                    centered: false,
                },
                0.001,
            ),
            "adagrad" => (
                OptKind::Adagrad {
                    initial_accumulator_value: 0.1,
                    epsilon: 1e-7,
                },
                0.001,
            ),
            _ => return Err(KerasError::unknown("optimizer", name, OPT_NAMES)),
        };
        Ok(OptimizerConfig {
            kind,
            learning_rate: lr,
        })
    }

    /// The Keras class name (`SGD`, `Adam`, ...).
    pub fn class_name(&self) -> &'static str {
        match self.kind {
            OptKind::Sgd { .. } => "SGD",
            OptKind::Adam { .. } => "Adam",
            OptKind::AdamW { .. } => "AdamW",
            OptKind::RmsProp { .. } => "RMSprop",
            OptKind::Adagrad { .. } => "Adagrad",
        }
    }

    /// The device rule for update number `step` (counting from 1) at learning rate `lr`.
    pub fn step(&self, lr: f32, step: u64) -> OptStep {
        match self.kind {
            OptKind::Sgd { momentum, nesterov } => OptStep::Sgd {
                lr,
                momentum,
                nesterov,
            },
            OptKind::Adam {
                beta_1,
                beta_2,
                epsilon,
            } => OptStep::Adam {
                lr,
                beta_1,
                beta_2,
                epsilon,
                step,
            },
            OptKind::AdamW {
                beta_1,
                beta_2,
                epsilon,
                weight_decay,
            } => OptStep::AdamW {
                lr,
                beta_1,
                beta_2,
                epsilon,
                weight_decay,
                step,
            },
            OptKind::RmsProp {
                rho,
                momentum,
                epsilon,
                centered,
            } => OptStep::RmsProp {
                lr,
                rho,
                momentum,
                epsilon,
                centered,
            },
            OptKind::Adagrad { epsilon, .. } => OptStep::Adagrad { lr, epsilon },
        }
    }

    /// The value each slot starts at (Adagrad's accumulator starts above zero).
    pub fn slot_init(&self) -> f32 {
        match self.kind {
            OptKind::Adagrad {
                initial_accumulator_value,
                ..
            } => initial_accumulator_value,
            _ => 0.0,
        }
    }
}

/// A metric `fit` tracks over an epoch: most are a running mean of a per-example value (the
/// root mean squared error takes the square root of that mean when it is reported); the
/// confusion-count metrics keep counts at thresholds instead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// `accuracy`/`acc`: Keras 3 picks the variant from the shapes of each batch: binary
    /// when predictions have one column, sparse categorical when targets hold one value
    /// per example, categorical otherwise.
    Accuracy,
    /// `accuracy` resolved for sparse categorical cross-entropy: argmax equals the label.
    SparseCategoricalAccuracy,
    /// argmax of the prediction equals argmax of the one-hot target.
    CategoricalAccuracy,
    /// prediction above 0.5 equals the 0/1 target.
    BinaryAccuracy,
    MeanAbsoluteError,
    MeanSquaredError,
    /// Keras's `Accuracy`: the fraction of elements equal to the target.
    Equality,
    /// The target's class (argmax of a one-hot row, or the label itself when `sparse`)
    /// is among the `k` highest predictions.
    TopK {
        k: usize,
        sparse: bool,
    },
    /// The square root of the mean squared error over the examples seen.
    RootMeanSquaredError,
    /// A cross-entropy as a metric, per example as the loss op computes it.
    Crossentropy(Loss),
    /// The unweighted loss of output `i` of a model with several outputs, logged as
    /// `<output>_loss`. Only the trainer that computes each output's loss can sum it, so
    /// [`Metric::batch_sum`] gives nothing for it.
    OutputLoss(usize),
    /// `Precision`, `Recall`, `AUC`, a count or an operating-point rate: confusion counts,
    /// summed over the epoch.
    Confusion(Confusion),
}

const METRIC_NAMES: &[&str] = &[
    "accuracy",
    "acc",
    "sparse_categorical_accuracy",
    "categorical_accuracy",
    "binary_accuracy",
    "mae",
    "mse",
    "top_k_categorical_accuracy",
    "sparse_top_k_categorical_accuracy",
    "auc",
    "precision",
    "recall",
    "true_positives",
    "false_positives",
    "true_negatives",
    "false_negatives",
];

impl Metric {
    /// Resolves a metric name. The loss is taken for the day a metric depends on it; today
    /// `accuracy` is resolved from shapes, batch by batch, as Keras 3 does.
    pub fn parse(name: &str, _loss: &LossKind) -> KResult<(String, Metric)> {
        let m = match name {
            "accuracy" | "acc" => Metric::Accuracy,
            "sparse_categorical_accuracy" => Metric::SparseCategoricalAccuracy,
            "categorical_accuracy" => Metric::CategoricalAccuracy,
            "binary_accuracy" => Metric::BinaryAccuracy,
            "mae" | "mean_absolute_error" => Metric::MeanAbsoluteError,
            "mse" | "mean_squared_error" => Metric::MeanSquaredError,
            "top_k_categorical_accuracy" => Metric::TopK {
                k: 5,
                sparse: false,
            },
            "sparse_top_k_categorical_accuracy" => Metric::TopK { k: 5, sparse: true },
            other => match Confusion::parse(other) {
                Some(c) => Metric::Confusion(c),
                None => return Err(KerasError::unknown("metric", other, METRIC_NAMES)),
            },
        };
        // Keras logs the metric under the name the user wrote ("acc" stays "acc").
        Ok((name.to_string(), m))
    }

    /// How many numbers a batch contributes to this metric's state: one sum for a running
    /// mean (and the weights' sum when it is `weighted`), the counts at every threshold for
    /// a confusion metric.
    pub fn state_len(&self, weighted: bool) -> usize {
        match self {
            Metric::Confusion(c) => c.state_len(),
            _ => 1 + usize::from(weighted),
        }
    }

    /// Appends one batch's contribution to this metric's state (see [`Metric::state_len`]):
    /// for a running mean, the sum of the per-example values, each example's rows counting
    /// as `per` (a sequence's outputs average over its steps). A weighted metric (Keras's
    /// `weighted_metrics`) gets one weight per example in `weights` and adds the weighted
    /// sum and the weights' sum, as Keras's `Mean` does.
    pub fn accumulate(
        &self,
        pred: &[f32],
        target: &[f32],
        cols: usize,
        per: f64,
        weights: Option<&[f32]>,
        out: &mut Vec<f64>,
    ) -> KResult<()> {
        match (self, weights) {
            (Metric::Confusion(c), w) => c.batch_counts(pred, target, cols, w, out),
            (_, None) => {
                out.push(self.batch_sum(pred, target, cols) / per);
                Ok(())
            }
            (_, Some(w)) => {
                let rows = pred.len().checked_div(cols).unwrap_or(0);
                let rows_per = rows.checked_div(w.len()).unwrap_or(0);
                let t_per = target.len().checked_div(rows).unwrap_or(0);
                let (mut sum, mut total) = (0.0, 0.0);
                for (i, wi) in w.iter().enumerate() {
                    let mut v = 0.0;
                    for r in i * rows_per..(i + 1) * rows_per {
                        let p = pred.get(r * cols..(r + 1) * cols).unwrap_or(&[]);
                        let t = target.get(r * t_per..(r + 1) * t_per).unwrap_or(&[]);
                        v += self.batch_sum(p, t, cols);
                    }
                    sum += f64::from(*wi) * v / rows_per.max(1) as f64;
                    total += f64::from(*wi);
                }
                out.push(sum);
                out.push(total);
                Ok(())
            }
        }
    }

    /// The value logged for a state summed over `count` examples.
    pub fn result(&self, state: &[f64], count: usize, weighted: bool) -> f64 {
        let sum = state.first().copied().unwrap_or(0.0);
        match self {
            Metric::Confusion(c) => c.result(state).unwrap_or(f64::NAN),
            _ if weighted => {
                let total = state.get(1).copied().unwrap_or(0.0);
                // Keras divides with `divide_no_nan`: no weight at all gives 0.
                self.finish(if total == 0.0 { 0.0 } else { sum / total })
            }
            _ => self.finish(sum / count.max(1) as f64),
        }
    }
}

/// The compiled metrics' values from their summed states laid end to end (each
/// [`Metric::state_len`] long, in the order of `metrics`), over `count` examples, with the
/// names they are logged under.
pub fn metric_results(c: &CompileConfig, state: &[f64], count: usize) -> Vec<(String, f64)> {
    let mut offset = 0;
    c.metrics
        .iter()
        .enumerate()
        .map(|(i, (name, m))| {
            let weighted = c.is_weighted(i);
            let n = m.state_len(weighted);
            let part = state.get(offset..offset + n).unwrap_or(&[]);
            offset += n;
            (name.clone(), m.result(part, count, weighted))
        })
        .collect()
}

impl Metric {
    /// The value reported for the mean of the per-example values seen.
    pub fn finish(&self, mean: f64) -> f64 {
        match self {
            Metric::RootMeanSquaredError => mean.sqrt(),
            _ => mean,
        }
    }

    /// Sum over the rows of `pred` of this metric's per-example value. `cols` is the width
    /// of a prediction row; `target` holds one label per row for the sparse metric.
    pub fn batch_sum(&self, pred: &[f32], target: &[f32], cols: usize) -> f64 {
        if cols == 0 {
            return 0.0;
        }
        let argmax = |r: &[f32]| {
            let mut best = 0;
            for (i, v) in r.iter().enumerate() {
                if *v > r[best] {
                    best = i;
                }
            }
            best
        };
        let rows = pred.chunks_exact(cols);
        match self {
            Metric::Accuracy => {
                let n = pred.len() / cols;
                let resolved = if cols == 1 {
                    Metric::BinaryAccuracy
                } else if target.len() == n {
                    Metric::SparseCategoricalAccuracy
                } else {
                    Metric::CategoricalAccuracy
                };
                resolved.batch_sum(pred, target, cols)
            }
            Metric::SparseCategoricalAccuracy => rows
                .zip(target)
                .filter(|(r, t)| argmax(r) as f32 == **t)
                .count() as f64,
            Metric::CategoricalAccuracy => rows
                .zip(target.chunks_exact(cols))
                .filter(|(r, t)| argmax(r) == argmax(t))
                .count() as f64,
            Metric::BinaryAccuracy => {
                let hits = pred
                    .iter()
                    .zip(target)
                    .filter(|(p, t)| f32::from(u8::from(**p > 0.5)) == **t)
                    .count();
                hits as f64 / cols as f64
            }
            Metric::Equality => {
                let hits = pred.iter().zip(target).filter(|(p, t)| p == t).count();
                hits as f64 / cols as f64
            }
            Metric::TopK { k, sparse } => {
                let targets: Vec<usize> = if *sparse {
                    target.iter().map(|&t| t as usize).collect()
                } else {
                    target.chunks_exact(cols).map(argmax).collect()
                };
                rows.zip(targets)
                    .filter(|(r, t)| match r.get(*t) {
                        Some(&v) if v.is_finite() => r.iter().filter(|&&x| x > v).count() < *k,
                        _ => false,
                    })
                    .count() as f64
            }
            Metric::Crossentropy(loss) => {
                let per = if loss.sparse() { 1 } else { cols };
                rows.zip(target.chunks_exact(per))
                    .map(|(r, t)| {
                        let p: Vec<f64> = r.iter().map(|&v| f64::from(v)).collect();
                        let t: Vec<f64> = t.iter().map(|&v| f64::from(v)).collect();
                        loss.row(&p, &t)
                    })
                    .sum()
            }
            // Their state is not a sum of per-example values (see `accumulate`).
            Metric::OutputLoss(_) | Metric::Confusion(_) => 0.0,
            Metric::MeanAbsoluteError | Metric::MeanSquaredError | Metric::RootMeanSquaredError => {
                let sq = *self != Metric::MeanAbsoluteError;
                let total: f64 = pred
                    .iter()
                    .zip(target)
                    .map(|(p, t)| {
                        let e = f64::from(*p - *t);
                        if sq {
                            e * e
                        } else {
                            e.abs()
                        }
                    })
                    .sum();
                total / cols as f64
            }
        }
    }
}

/// Everything `compile` decides, ready to be cloned into each replica.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileConfig {
    /// The loss of a model of one output (the first head's for several).
    pub loss: LossKind,
    pub optimizer: OptimizerConfig,
    /// Metric names as logged (`accuracy`) with their resolved kinds. With several
    /// outputs: each output's loss (`reg_loss`, [`Metric::OutputLoss`]) in output order,
    /// then each output's metrics (`cls_accuracy`) in output order (`evaluate` lists
    /// those by name, as Keras 3 does: see `fit::in_compile_order`).
    pub metrics: Vec<(String, Metric)>,
    /// One per output of a model with several outputs; empty for a model of one.
    pub heads: Vec<Head>,
    /// How many of the last `metrics` are `weighted_metrics`: they weigh each example by its
    /// `sample_weight` (one each when none is given), the others count every example once.
    pub weighted: usize,
}

/// What `compile` fixes for one output of a model with several: the output's name (its
/// layer's name, or its key when the outputs were given as a dict), its loss, and the
/// weight of that loss in the total Keras minimizes (`sum(weight * loss)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    pub name: String,
    pub loss: LossKind,
    pub weight: f32,
    /// How many values of an example's target row this output reads: one label for a
    /// sparse loss, else the output's size (the targets of all outputs lie side by side).
    pub target: usize,
    /// The output's metrics as Keras logs them (`cls_accuracy`).
    pub metrics: Vec<(String, Metric)>,
}

impl CompileConfig {
    /// Whether `metrics[i]` is one of the `weighted_metrics`.
    pub fn is_weighted(&self, i: usize) -> bool {
        i + self.weighted >= self.metrics.len()
    }

    /// `compile(weighted_metrics=[...])` of a model with one output: the metrics follow the
    /// others, named as Keras names them (a name already logged gets `weighted_` before it,
    /// then `_1`, `_2`, ... while it is still taken).
    pub fn add_weighted_metrics(&mut self, specs: &[MetricSpec]) -> KResult<()> {
        let mut taken: std::collections::HashMap<String, usize> =
            self.metrics.iter().map(|(n, _)| (n.clone(), 1)).collect();
        for spec in specs {
            let (name, m) = match spec {
                MetricSpec::Name(n) => Metric::parse(n, &self.loss)?,
                MetricSpec::Resolved(n, m) => (n.clone(), *m),
            };
            let name = match taken.get(&name) {
                None => name,
                Some(_) => {
                    let prefixed = format!("weighted_{name}");
                    match taken.get_mut(&prefixed) {
                        None => prefixed,
                        Some(count) => {
                            let renamed = format!("{prefixed}_{count}");
                            *count += 1;
                            renamed
                        }
                    }
                }
            };
            taken.entry(name.clone()).or_insert(1);
            self.metrics.push((name, m));
            self.weighted += 1;
        }
        Ok(())
    }
}

/// Keras's names in the logs for metrics of the same name: the first keeps it, the
/// others get `_1`, `_2`, ... in compile order (`['precision', 'precision']` logs
/// `precision` and `precision_1`).
fn unique_log_names(metrics: &mut [(String, Metric)]) {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (name, _) in metrics.iter_mut() {
        match seen.get_mut(name.as_str()) {
            Some(count) => {
                let renamed = format!("{name}_{count}");
                *count += 1;
                *name = renamed;
            }
            None => {
                seen.insert(name.clone(), 1);
            }
        }
    }
}

/// A metric as `compile` receives it: a Keras name, or a metric object already resolved
/// to the name it is logged under and the engine's metric.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricSpec {
    Name(String),
    Resolved(String, Metric),
}

impl CompileConfig {
    /// `compile(optimizer=..., loss=..., metrics=[...])` from Keras's string names.
    pub fn from_names(optimizer: &str, loss: &str, metrics: &[&str]) -> KResult<CompileConfig> {
        let metrics: Vec<MetricSpec> = metrics
            .iter()
            .map(|m| MetricSpec::Name(m.to_string()))
            .collect();
        CompileConfig::new(OptimizerConfig::parse(optimizer)?, loss, &metrics)
    }

    /// `compile` with an optimizer already configured (from a name or an object).
    pub fn new(
        optimizer: OptimizerConfig,
        loss: &str,
        metrics: &[MetricSpec],
    ) -> KResult<CompileConfig> {
        let loss = parse_loss(loss)?;
        let metrics = metrics
            .iter()
            .map(|m| match m {
                MetricSpec::Name(n) => Metric::parse(n, &loss),
                MetricSpec::Resolved(n, m) => Ok((n.clone(), *m)),
            })
            .collect::<KResult<Vec<_>>>()?;
        let mut metrics = metrics;
        unique_log_names(&mut metrics);
        Ok(CompileConfig {
            loss,
            optimizer,
            metrics,
            heads: vec![],
            weighted: 0,
        })
    }

    /// `compile` of a model with several outputs, one [`Head`] each (at least one).
    pub fn with_heads(optimizer: OptimizerConfig, heads: Vec<Head>) -> KResult<CompileConfig> {
        let loss = heads
            .first()
            .map(|h| h.loss)
            .ok_or_else(|| KerasError::Value("a model has at least one output".into()))?;
        let mut metrics: Vec<(String, Metric)> = heads
            .iter()
            .enumerate()
            .map(|(i, h)| (format!("{}_loss", h.name), Metric::OutputLoss(i)))
            .collect();
        metrics.extend(heads.iter().flat_map(|h| h.metrics.iter().cloned()));
        Ok(CompileConfig {
            loss,
            optimizer,
            metrics,
            heads,
            weighted: 0,
        })
    }
}
