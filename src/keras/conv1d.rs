//! Keras's `Conv1D` as configuration: its arguments (with `causal` padding and a dilation
//! rate, which only the one-dimensional convolution has), the variables it makes (`kernel`
//! of `(kernel_size, channels, filters)`, `bias`), its output shape and its `get_config`.
//! The arithmetic is the op library's (`ops::conv1d`); the compiled engine does not run this
//! layer. Shapes here never include the batch axis.

use super::activations::Act;
use super::error::{fmt_batch_shape, KResult, KerasError};
use super::init::Init;
use crate::ops::Conv1dPadding;

/// A `Conv1D` layer and its arguments (`groups` is always 1 here).
#[derive(Debug, Clone, PartialEq)]
pub struct Conv1D {
    pub filters: usize,
    pub kernel_size: usize,
    pub strides: usize,
    pub padding: Conv1dPadding,
    pub dilation_rate: usize,
    pub activation: Act,
    pub use_bias: bool,
    pub kernel_initializer: Init,
    pub bias_initializer: Init,
}

/// One variable: its name, shape, initializer and fans.
pub type ConvVar = (&'static str, Vec<usize>, Init, (usize, usize));

impl Conv1D {
    /// The layer with Keras's defaults.
    pub fn new(filters: usize, kernel_size: usize) -> Conv1D {
        Conv1D {
            filters,
            kernel_size,
            strides: 1,
            padding: Conv1dPadding::Valid,
            dilation_rate: 1,
            activation: Act::Elem(crate::device::Activation::Linear),
            use_bias: true,
            kernel_initializer: Init::GlorotUniform,
            bias_initializer: Init::Zeros,
        }
    }

    /// Keras's refusal of a stride together with a dilation, checked at construction.
    pub fn check(&self) -> KResult<()> {
        if self.strides > 1 && self.dilation_rate > 1 {
            return Err(KerasError::Value(format!(
                "`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: strides=({},) and dilation_rate=({},)",
                self.strides, self.dilation_rate
            )));
        }
        Ok(())
    }

    /// The compiled engine's refusal: models holding a Conv1D train on the op library.
    pub fn not_on_engine(&self) -> KerasError {
        KerasError::Value("Conv1D runs on the op library".into())
    }

    /// `(steps, channels)` of an input shape without the batch axis, or Keras's error.
    fn sequence(layer: &str, shape: &[usize]) -> KResult<(usize, usize)> {
        match *shape {
            [t, c] => Ok((t, c)),
            _ => Err(KerasError::Value(format!(
                "Input 0 of layer \"{layer}\" is incompatible with the layer: expected ndim=3, found ndim={}. Full shape received: {}",
                shape.len() + 1,
                fmt_batch_shape(shape)
            ))),
        }
    }

    /// The variables in Keras's order for inputs of `shape`.
    pub fn variables(&self, layer: &str, shape: &[usize]) -> KResult<Vec<ConvVar>> {
        let (_, channels) = Self::sequence(layer, shape)?;
        let fans = (
            self.kernel_size.saturating_mul(channels),
            self.kernel_size.saturating_mul(self.filters),
        );
        let mut out = vec![(
            "kernel",
            vec![self.kernel_size, channels, self.filters],
            self.kernel_initializer.clone(),
            fans,
        )];
        if self.use_bias {
            out.push((
                "bias",
                vec![self.filters],
                self.bias_initializer.clone(),
                fans,
            ));
        }
        Ok(out)
    }

    /// The output steps for `steps` input steps, or `None` when none would remain.
    pub fn out_steps(&self, steps: usize) -> Option<usize> {
        self.padding
            .out_steps(steps, self.kernel_size, self.strides, self.dilation_rate)
    }

    /// The output shape for inputs of `shape`, or Keras's error for an empty output.
    pub fn out_shape(&self, layer: &str, shape: &[usize]) -> KResult<Vec<usize>> {
        let (steps, channels) = Self::sequence(layer, shape)?;
        match self.out_steps(steps) {
            Some(o) => Ok(vec![o, self.filters]),
            None => Err(KerasError::Value(format!(
                "Computed output size would be zero or negative. Received `inputs shape=(None, {steps}, {channels})`, `kernel shape=({}, {channels}, {})`, `dilation_rate=[{}]`, `strides=({},)`, `padding={}`.",
                self.kernel_size,
                self.filters,
                self.dilation_rate,
                self.strides,
                self.padding.keras_name()
            ))),
        }
    }

    /// The layer-specific part of `get_config()`, in Keras 3.15's key order; `init` writes
    /// an initializer as saving writes them.
    pub fn config_json(&self, init: fn(&Init) -> serde_json::Value) -> serde_json::Value {
        serde_json::json!({"filters": self.filters, "kernel_size": [self.kernel_size],
            "strides": [self.strides], "padding": self.padding.keras_name(),
            "data_format": "channels_last", "dilation_rate": [self.dilation_rate],
            "groups": 1, "activation": self.activation.keras_name(),
            "use_bias": self.use_bias,
            "kernel_initializer": init(&self.kernel_initializer),
            "bias_initializer": init(&self.bias_initializer),
            "kernel_regularizer": null, "bias_regularizer": null,
            "activity_regularizer": null, "kernel_constraint": null,
            "bias_constraint": null})
    }
}

/// A Conv1D read back from its saved config; `init` reads an initializer as saving writes
/// them. What this engine does not run (`groups` other than 1) is refused by name.
pub fn from_config(
    c: &serde_json::Value,
    init: fn(&serde_json::Value, &str, Init) -> KResult<Init>,
) -> KResult<Conv1D> {
    use serde_json::Value;
    // Keras writes sizes as one-element lists; an int is read as well.
    let size = |k: &str, d: usize| -> usize {
        match c.get(k) {
            Some(Value::Array(a)) => a.first().and_then(Value::as_u64),
            Some(v) => v.as_u64(),
            None => None,
        }
        .map_or(d, |v| v as usize)
    };
    if size("groups", 1) != 1 {
        return Err(KerasError::Value(
            "Conv1D(groups) other than 1 is not supported here".into(),
        ));
    }
    let filters = size("filters", 0);
    let kernel_size = size("kernel_size", 0);
    if filters == 0 || kernel_size == 0 {
        return Err(KerasError::Value(
            "Conv1D: `filters` and `kernel_size` must be positive".into(),
        ));
    }
    let mut l = Conv1D::new(filters, kernel_size);
    l.strides = size("strides", 1);
    l.dilation_rate = size("dilation_rate", 1);
    l.padding = Conv1dPadding::parse(c.get("padding").and_then(Value::as_str).unwrap_or("valid"))
        .ok_or_else(|| KerasError::Value("Conv1D: unknown padding".into()))?;
    if let Some(a) = c.get("activation").and_then(Value::as_str) {
        l.activation = Act::parse(a)?;
    }
    l.use_bias = c.get("use_bias").and_then(Value::as_bool).unwrap_or(true);
    l.kernel_initializer = init(c, "kernel_initializer", Init::GlorotUniform)?;
    l.bias_initializer = init(c, "bias_initializer", Init::Zeros)?;
    l.check()?;
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init_json(_: &Init) -> serde_json::Value {
        serde_json::Value::Null
    }

    fn init_back(_: &serde_json::Value, _: &str, d: Init) -> KResult<Init> {
        Ok(d)
    }

    #[test]
    fn a_saved_config_reads_back_as_the_same_layer() {
        let mut l = Conv1D::new(4, 3);
        l.padding = Conv1dPadding::Causal;
        l.dilation_rate = 2;
        l.use_bias = false;
        let back = from_config(&l.config_json(init_json), init_back);
        assert_eq!(back.ok(), Some(l));
    }

    #[test]
    fn shapes_and_variables_follow_keras() {
        let mut l = Conv1D::new(4, 3);
        assert_eq!(l.out_shape("c", &[10, 3]).ok(), Some(vec![8, 4]));
        l.padding = Conv1dPadding::Causal;
        l.dilation_rate = 2;
        assert_eq!(l.out_shape("c", &[10, 3]).ok(), Some(vec![10, 4]));
        let vars = l.variables("c", &[10, 3]).unwrap_or_default();
        let names: Vec<_> = vars.iter().map(|v| (v.0, v.1.clone())).collect();
        assert_eq!(names, [("kernel", vec![3, 3, 4]), ("bias", vec![4])]);
        let mut s = Conv1D::new(2, 2);
        s.strides = 2;
        s.padding = Conv1dPadding::Same;
        assert_eq!(s.out_shape("c", &[5, 4]).ok(), Some(vec![3, 2]));
        assert!(Conv1D::new(4, 7).out_shape("c", &[5, 3]).is_err());
    }
}
