//! Keras's recurrent layers as configuration: `SimpleRNN`, `LSTM` and `GRU` with their
//! arguments, the variables their cell makes (`kernel`, `recurrent_kernel`, `bias`, named
//! and shaped as Keras 3.15 makes them, under the cell's own scope `lstm_cell/`), their
//! output shape and their `get_config`. The arithmetic is the op library's
//! (`ops::recurrence`); the compiled engine does not run these layers. Shapes here never
//! include the batch axis.

use super::activations::Act;
use super::error::{fmt_batch_shape, KResult, KerasError};
use super::init::Init;
use crate::ops::Cell;

/// A recurrent layer and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Recurrent {
    pub cell: Cell,
    pub units: usize,
    pub activation: Act,
    /// The gates' activation (`sigmoid`); a SimpleRNN has none.
    pub recurrent_activation: Act,
    pub use_bias: bool,
    pub return_sequences: bool,
    pub return_state: bool,
    pub go_backwards: bool,
    /// A masked step outputs zeros instead of repeating the last output (`Bidirectional`
    /// sets it on its layers when they return sequences).
    pub zero_output_for_mask: bool,
    /// Accepted and kept for `get_config`: the steps run one by one either way.
    pub unroll: bool,
    pub kernel_initializer: Init,
    pub recurrent_initializer: Init,
    pub bias_initializer: Init,
    /// An LSTM's forget gate bias starts at one (Keras's `unit_forget_bias=True`).
    pub unit_forget_bias: bool,
}

/// One variable of the cell: its name, shape, initializer and fans.
pub type CellVar = (&'static str, Vec<usize>, Init, (usize, usize));

impl Recurrent {
    /// The layer with Keras's defaults for `cell`.
    pub fn new(cell: Cell, units: usize) -> Recurrent {
        Recurrent {
            cell,
            units,
            activation: Act::parse("tanh").unwrap_or(Act::Softmax),
            recurrent_activation: Act::parse("sigmoid").unwrap_or(Act::Softmax),
            use_bias: true,
            return_sequences: false,
            return_state: false,
            go_backwards: false,
            zero_output_for_mask: false,
            unroll: false,
            kernel_initializer: Init::GlorotUniform,
            recurrent_initializer: Init::Orthogonal { gain: 1.0 },
            bias_initializer: Init::Zeros,
            unit_forget_bias: true,
        }
    }

    pub fn class_name(&self) -> &'static str {
        match self.cell {
            Cell::Simple => "SimpleRNN",
            Cell::Lstm => "LSTM",
            Cell::Gru { .. } => "GRU",
        }
    }

    pub fn base_name(&self) -> &'static str {
        match self.cell {
            Cell::Simple => "simple_rnn",
            Cell::Lstm => "lstm",
            Cell::Gru { .. } => "gru",
        }
    }

    /// The scope Keras's cell puts its variables under (`lstm_cell`).
    pub fn cell_scope(&self) -> &'static str {
        match self.cell {
            Cell::Simple => "simple_rnn_cell",
            Cell::Lstm => "lstm_cell",
            Cell::Gru { .. } => "gru_cell",
        }
    }

    /// The compiled engine's refusal: models holding a recurrent layer train on the op
    /// library.
    pub fn not_on_engine(&self) -> KerasError {
        KerasError::Value(format!("{} runs on the op library", self.class_name()))
    }

    /// `(time, features)` of an input shape without the batch axis, or Keras's error.
    fn sequence(&self, layer: &str, shape: &[usize]) -> KResult<(usize, usize)> {
        match *shape {
            [t, f] => Ok((t, f)),
            _ => Err(KerasError::Value(format!(
                "Input 0 of layer '{layer}' is incompatible with the layer: expected ndim=3, found ndim={}. Full shape received: {}",
                shape.len() + 1,
                fmt_batch_shape(shape)
            ))),
        }
    }

    /// The variables in Keras's order for inputs of `shape`.
    pub fn variables(&self, layer: &str, shape: &[usize]) -> KResult<Vec<CellVar>> {
        let (_, features) = self.sequence(layer, shape)?;
        let cols = self.cell.gates() * self.units;
        let mut out = vec![
            (
                "kernel",
                vec![features, cols],
                self.kernel_initializer.clone(),
                (features, cols),
            ),
            (
                "recurrent_kernel",
                vec![self.units, cols],
                self.recurrent_initializer.clone(),
                (self.units, cols),
            ),
        ];
        if self.use_bias {
            let shape = match self.cell {
                Cell::Gru { reset_after: true } => vec![2, cols],
                _ => vec![cols],
            };
            let init = match self.cell {
                Cell::Lstm if self.unit_forget_bias => {
                    Init::ForgetGateOnes(Box::new(self.bias_initializer.clone()))
                }
                _ => self.bias_initializer.clone(),
            };
            out.push(("bias", shape, init, (features, cols)));
        }
        Ok(out)
    }

    /// The output shape (the sequence or the last step) for inputs of `shape`; the states
    /// `return_state` adds are each `(units,)`.
    pub fn out_shape(&self, layer: &str, shape: &[usize]) -> KResult<Vec<usize>> {
        let (time, _) = self.sequence(layer, shape)?;
        Ok(if self.return_sequences {
            vec![time, self.units]
        } else {
            vec![self.units]
        })
    }

    /// The layer-specific part of `get_config()`, in Keras 3.15's key order; `init` writes
    /// an initializer as saving writes them.
    pub fn config_json(&self, init: fn(&Init) -> serde_json::Value) -> serde_json::Value {
        use serde_json::{json, Map, Value};
        let mut c = Map::new();
        let mut put = |k: &str, v: Value| {
            c.insert(k.to_string(), v);
        };
        put("return_sequences", json!(self.return_sequences));
        put("return_state", json!(self.return_state));
        put("go_backwards", json!(self.go_backwards));
        put("stateful", json!(false));
        put("unroll", json!(self.unroll));
        put("zero_output_for_mask", json!(self.zero_output_for_mask));
        put("units", json!(self.units));
        put("activation", json!(self.activation.keras_name()));
        if self.cell != Cell::Simple {
            put(
                "recurrent_activation",
                json!(self.recurrent_activation.keras_name()),
            );
        }
        put("use_bias", json!(self.use_bias));
        put("kernel_initializer", init(&self.kernel_initializer));
        put("recurrent_initializer", init(&self.recurrent_initializer));
        put("bias_initializer", init(&self.bias_initializer));
        if self.cell == Cell::Lstm {
            put("unit_forget_bias", json!(self.unit_forget_bias));
        }
        for k in UNSUPPORTED {
            put(k, Value::Null);
        }
        put("dropout", json!(0.0));
        put("recurrent_dropout", json!(0.0));
        if let Cell::Gru { reset_after } = self.cell {
            put("reset_after", json!(reset_after));
        }
        if self.cell != Cell::Simple {
            put("seed", Value::Null);
        }
        Value::Object(c)
    }
}

/// The regularizer and constraint arguments: `None` in every config written here, and
/// refused when given.
pub const UNSUPPORTED: &[&str] = &[
    "kernel_regularizer",
    "recurrent_regularizer",
    "bias_regularizer",
    "activity_regularizer",
    "kernel_constraint",
    "recurrent_constraint",
    "bias_constraint",
];

/// The class names [`from_config`] reads.
pub const CLASSES: &[&str] = &["SimpleRNN", "LSTM", "GRU"];

/// A recurrent layer read back from its saved config, or `None` when `class` is not one;
/// `init` reads an initializer as saving writes them. What this engine does not run
/// (`stateful`, dropout) is refused by name rather than dropped.
pub fn from_config(
    class: &str,
    c: &serde_json::Value,
    init: fn(&serde_json::Value, &str, Init) -> KResult<Init>,
) -> Option<KResult<Recurrent>> {
    use serde_json::Value;
    let cell = match class {
        "SimpleRNN" => Cell::Simple,
        "LSTM" => Cell::Lstm,
        "GRU" => Cell::Gru {
            reset_after: c
                .get("reset_after")
                .and_then(Value::as_bool)
                .unwrap_or(true),
        },
        _ => return None,
    };
    let b = |k: &str, d: bool| c.get(k).and_then(Value::as_bool).unwrap_or(d);
    let read = || -> KResult<Recurrent> {
        if b("stateful", false) {
            return Err(KerasError::Value(format!(
                "{class}(stateful=True) is not supported here"
            )));
        }
        for k in ["dropout", "recurrent_dropout"] {
            if c.get(k).and_then(Value::as_f64).unwrap_or(0.0) != 0.0 {
                return Err(KerasError::Value(format!(
                    "{class}({k}) other than 0 is not supported here"
                )));
            }
        }
        let units = c
            .get("units")
            .and_then(Value::as_u64)
            .filter(|u| *u > 0)
            .ok_or_else(|| KerasError::Value(format!("{class}: `units` is missing")))?;
        let mut r = Recurrent::new(cell, units as usize);
        let act = |k: &str, d: Act| -> KResult<Act> {
            match c.get(k).and_then(Value::as_str) {
                Some(name) => Act::parse(name),
                None => Ok(d),
            }
        };
        r.activation = act("activation", r.activation)?;
        r.recurrent_activation = act("recurrent_activation", r.recurrent_activation)?;
        r.use_bias = b("use_bias", true);
        r.return_sequences = b("return_sequences", false);
        r.return_state = b("return_state", false);
        r.go_backwards = b("go_backwards", false);
        r.zero_output_for_mask = b("zero_output_for_mask", false);
        r.unroll = b("unroll", false);
        r.unit_forget_bias = b("unit_forget_bias", true);
        r.kernel_initializer = init(c, "kernel_initializer", Init::GlorotUniform)?;
        r.recurrent_initializer = init(c, "recurrent_initializer", Init::Orthogonal { gain: 1.0 })?;
        r.bias_initializer = init(c, "bias_initializer", Init::Zeros)?;
        Ok(r)
    };
    Some(read())
}
