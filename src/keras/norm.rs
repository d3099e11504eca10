//! Keras's normalization layers as configuration: `BatchNormalization` (batch statistics in
//! training, moving statistics in inference) and `LayerNormalization` (each example's own
//! statistics): their arguments and the variables they make, named, shaped and initialized
//! as Keras makes them. The arithmetic is the op library's (`ops::moments`,
//! `ops::batch_normalization`); the compiled engine does not run these layers. Shapes here
//! never include the batch axis.

use super::error::{fmt_batch_shape, KResult, KerasError};
use super::init::Init;

/// Which normalization, with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Norm {
    BatchNormalization {
        /// The feature axis (negative counts from the end, batch axis included).
        axis: i64,
        /// Kept as the Python float Keras keeps, so `1 - momentum` rounds as Keras's does.
        momentum: f64,
        epsilon: f64,
        center: bool,
        scale: bool,
        beta_initializer: Init,
        gamma_initializer: Init,
        moving_mean_initializer: Init,
        moving_variance_initializer: Init,
        /// Whether replicas all-reduce their batch statistics.
        synchronized: bool,
    },
    LayerNormalization {
        axis: i64,
        epsilon: f64,
        center: bool,
        scale: bool,
        beta_initializer: Init,
        gamma_initializer: Init,
    },
}

/// One variable a normalization makes: its name, shape, initializer and whether it trains.
pub type NormVar<'a> = (&'static str, Vec<usize>, &'a Init, bool);

impl Norm {
    pub fn class_name(&self) -> &'static str {
        match self {
            Norm::BatchNormalization { .. } => "BatchNormalization",
            Norm::LayerNormalization { .. } => "LayerNormalization",
        }
    }

    pub fn base_name(&self) -> &'static str {
        match self {
            Norm::BatchNormalization { .. } => "batch_normalization",
            Norm::LayerNormalization { .. } => "layer_normalization",
        }
    }

    /// The compiled engine's refusal: models holding a normalization train on the op library.
    pub fn not_on_engine(&self) -> KerasError {
        KerasError::Value(format!("{} runs on the op library", self.class_name()))
    }

    pub fn axis(&self) -> i64 {
        match self {
            Norm::BatchNormalization { axis, .. } | Norm::LayerNormalization { axis, .. } => *axis,
        }
    }

    /// The feature axis as an index into a shape of `ndim` axes with the batch axis, or
    /// Keras's error when it is out of bounds.
    pub fn axis_index(&self, ndim: usize) -> KResult<usize> {
        let axis = self.axis();
        let i = if axis < 0 { ndim as i64 + axis } else { axis };
        if i < 0 || i >= ndim as i64 {
            return Err(KerasError::Value(format!(
                "Axis {axis} is out of bounds for input shape {}. Received: axis={axis}",
                self.shape_text(ndim)
            )));
        }
        Ok(i as usize)
    }

    fn shape_text(&self, ndim: usize) -> String {
        let dims: Vec<String> = (0..ndim).map(|_| "None".to_string()).collect();
        format!("({})", dims.join(", "))
    }

    /// The names of its variables, in Keras's order.
    pub fn variable_names(&self) -> Vec<&'static str> {
        let (center, scale) = self.center_scale();
        let mut out = vec![];
        if scale {
            out.push("gamma");
        }
        if center {
            out.push("beta");
        }
        if matches!(self, Norm::BatchNormalization { .. }) {
            out.extend(["moving_mean", "moving_variance"]);
        }
        out
    }

    /// `(center, scale)`: whether it adds `beta` and multiplies by `gamma`.
    pub fn center_scale(&self) -> (bool, bool) {
        match self {
            Norm::BatchNormalization { center, scale, .. }
            | Norm::LayerNormalization { center, scale, .. } => (*center, *scale),
        }
    }

    /// The variables in Keras's order for inputs of `shape` (without the batch axis):
    /// `gamma` (with `scale`), `beta` (with `center`), then a batch normalization's
    /// `moving_mean` and `moving_variance`, which do not train.
    pub fn variables(&self, layer: &str, shape: &[usize]) -> KResult<Vec<NormVar<'_>>> {
        let i = self.axis_index(shape.len() + 1).map_err(|e| match e {
            KerasError::Value(m) => KerasError::Value(format!(
                "{m} (layer '{layer}', input shape {})",
                fmt_batch_shape(shape)
            )),
            other => other,
        })?;
        if i == 0 {
            return Err(KerasError::Value(format!(
                "Layer '{layer}': the normalization axis cannot be the batch axis (axis={})",
                self.axis()
            )));
        }
        let c = vec![shape.get(i - 1).copied().unwrap_or(1)];
        let inits: Vec<&Init> = match self {
            Norm::BatchNormalization {
                beta_initializer,
                gamma_initializer,
                moving_mean_initializer,
                moving_variance_initializer,
                ..
            } => vec![
                gamma_initializer,
                beta_initializer,
                moving_mean_initializer,
                moving_variance_initializer,
            ],
            Norm::LayerNormalization {
                beta_initializer,
                gamma_initializer,
                ..
            } => vec![gamma_initializer, beta_initializer],
        };
        let all = ["gamma", "beta", "moving_mean", "moving_variance"];
        let names = self.variable_names();
        let out = all
            .iter()
            .zip(inits)
            .filter(|(n, _)| names.contains(n))
            .map(|(n, init)| (*n, c.clone(), init, !n.starts_with("moving")))
            .collect();
        Ok(out)
    }
}

/// A normalization read back from its saved config (`config.json`, a legacy `.h5`'s
/// `model_config`), or `None` when `class` is not one; `init` reads an initializer as saving
/// writes them. Options this engine does not run (`renorm`, `synchronized`, `rms_scaling`)
/// are refused by name rather than dropped.
pub fn from_config(
    class: &str,
    c: &serde_json::Value,
    init: fn(&serde_json::Value, &str, Init) -> KResult<Init>,
) -> Option<KResult<Norm>> {
    use serde_json::Value;
    let f = |k: &str, d: f64| c.get(k).and_then(Value::as_f64).unwrap_or(d);
    let b = |k: &str, d: bool| c.get(k).and_then(Value::as_bool).unwrap_or(d);
    let refuse = |k: &str| -> KResult<()> {
        if b(k, false) {
            return Err(KerasError::Value(format!(
                "{class}({k}=True) is not supported here"
            )));
        }
        Ok(())
    };
    // LayerNormalization writes its axis as a list; a single axis is all this engine runs.
    let axis = match c.get("axis") {
        None | Some(Value::Null) => Ok(-1),
        Some(Value::Array(a)) => match a.as_slice() {
            [one] => one.as_i64().ok_or(()),
            _ => Err(()),
        },
        Some(v) => v.as_i64().ok_or(()),
    }
    .map_err(|()| {
        KerasError::Value(format!(
            "{class}: only a single integer axis is supported here. Received: axis={}",
            c.get("axis").map_or("None".to_string(), |v| v.to_string())
        ))
    });
    let read = || -> KResult<Norm> {
        Ok(match class {
            "BatchNormalization" => {
                refuse("renorm")?;
                refuse("synchronized")?;
                Norm::BatchNormalization {
                    axis: axis?,
                    momentum: f("momentum", 0.99),
                    epsilon: f("epsilon", 1e-3),
                    center: b("center", true),
                    scale: b("scale", true),
                    beta_initializer: init(c, "beta_initializer", Init::Zeros)?,
                    gamma_initializer: init(c, "gamma_initializer", Init::Ones)?,
                    moving_mean_initializer: init(c, "moving_mean_initializer", Init::Zeros)?,
                    moving_variance_initializer: init(
                        c,
                        "moving_variance_initializer",
                        Init::Ones,
                    )?,
                    synchronized: false,
                }
            }
            _ => {
                refuse("rms_scaling")?;
                Norm::LayerNormalization {
                    axis: axis?,
                    epsilon: f("epsilon", 1e-3),
                    center: b("center", true),
                    scale: b("scale", true),
                    beta_initializer: init(c, "beta_initializer", Init::Zeros)?,
                    gamma_initializer: init(c, "gamma_initializer", Init::Ones)?,
                }
            }
        })
    };
    match class {
        "BatchNormalization" | "LayerNormalization" => Some(read()),
        _ => None,
    }
}

/// The class names [`from_config`] reads.
pub const CLASSES: &[&str] = &["BatchNormalization", "LayerNormalization"];

/// The layer-specific part of `get_config()`, as Keras 3.15 writes it; `init` writes an
/// initializer as saving writes them.
pub fn config_json(n: &Norm, init: fn(&Init) -> serde_json::Value) -> serde_json::Value {
    use serde_json::json;
    match n {
        Norm::BatchNormalization {
            axis,
            momentum,
            epsilon,
            center,
            scale,
            beta_initializer,
            gamma_initializer,
            moving_mean_initializer,
            moving_variance_initializer,
            synchronized,
        } => json!({"axis": axis, "momentum": momentum, "epsilon": epsilon,
            "center": center, "scale": scale,
            "beta_initializer": init(beta_initializer),
            "gamma_initializer": init(gamma_initializer),
            "moving_mean_initializer": init(moving_mean_initializer),
            "moving_variance_initializer": init(moving_variance_initializer),
            "beta_regularizer": null, "gamma_regularizer": null,
            "beta_constraint": null, "gamma_constraint": null,
            "synchronized": synchronized, "renorm": false, "renorm_clipping": null,
            "renorm_momentum": 0.99}),
        Norm::LayerNormalization {
            axis,
            epsilon,
            center,
            scale,
            beta_initializer,
            gamma_initializer,
        } => json!({"axis": [axis], "epsilon": epsilon, "center": center, "scale": scale,
            "rms_scaling": false,
            "beta_initializer": init(beta_initializer),
            "gamma_initializer": init(gamma_initializer),
            "beta_regularizer": null, "gamma_regularizer": null,
            "beta_constraint": null, "gamma_constraint": null}),
    }
}
