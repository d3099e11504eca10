//! Keras's `Bidirectional` wrapper as configuration: a recurrent layer run forwards and a
//! copy (or the given `backward_layer`) run backwards over the same sequence, their
//! outputs merged by `merge_mode` (`concat`, `sum`, `mul`, `ave`, or `None` for both). It
//! owns the two layers' names (`forward_lstm`, `backward_lstm`), their variables in
//! Keras's order (the forward layer's, then the backward layer's, each under its own
//! cell's scope: `bidirectional/forward_lstm/lstm_cell/kernel`), the output shape and
//! `get_config()`. The arithmetic is the op library's recurrence run twice (the bindings
//! compose it); the compiled engine does not run this layer. Shapes here never include
//! the batch axis.

use super::error::{KResult, KerasError};
use super::init::Init;
use super::recurrent::{CellVar, Recurrent};

/// How the two directions' outputs become one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeMode {
    Concat,
    Sum,
    Mul,
    Ave,
}

impl MergeMode {
    /// `merge_mode` as Keras spells it (`None` keeps both outputs).
    pub fn parse(name: Option<&str>) -> KResult<Option<MergeMode>> {
        Ok(Some(match name {
            None => return Ok(None),
            Some("concat") => MergeMode::Concat,
            Some("sum") => MergeMode::Sum,
            Some("mul") => MergeMode::Mul,
            Some("ave") => MergeMode::Ave,
            Some(other) => {
                return Err(KerasError::Value(format!(
                    "Invalid merge mode. Received: {other}. Merge mode should be one of {{\"sum\", \"mul\", \"ave\", \"concat\", None}}"
                )))
            }
        }))
    }

    pub fn keras_name(self) -> &'static str {
        match self {
            MergeMode::Concat => "concat",
            MergeMode::Sum => "sum",
            MergeMode::Mul => "mul",
            MergeMode::Ave => "ave",
        }
    }
}

/// The wrapper and its two layers.
#[derive(Debug, Clone, PartialEq)]
pub struct Bidirectional {
    pub forward: Recurrent,
    pub backward: Recurrent,
    /// `forward_` and `backward_` before the wrapped layer's name, or the given backward
    /// layer's own name.
    pub forward_name: String,
    pub backward_name: String,
    pub merge_mode: Option<MergeMode>,
}

/// Keras's `removeprefix`: `forward_lstm` names the forward copy of `lstm` and of
/// `forward_lstm` alike.
fn prefixed(prefix: &str, name: &str) -> String {
    format!("{prefix}{}", name.strip_prefix(prefix).unwrap_or(name))
}

impl Bidirectional {
    /// The wrapper around `layer` (named `name`), with the backward copy Keras makes
    /// (`go_backwards` flipped) unless `backward` (and its name) is given. Both layers
    /// output zeros at masked steps when they return sequences, as Keras forces.
    pub fn new(
        layer: &Recurrent,
        name: &str,
        backward: Option<(Recurrent, String)>,
        merge_mode: Option<MergeMode>,
    ) -> KResult<Bidirectional> {
        let mut forward = layer.clone();
        let (mut backward, backward_name) = match backward {
            Some((b, n)) => (b, n),
            None => {
                let mut b = layer.clone();
                b.go_backwards = !layer.go_backwards;
                (b, prefixed("backward_", name))
            }
        };
        if forward.go_backwards == backward.go_backwards {
            return Err(KerasError::Value(format!(
                "Forward layer and backward layer should have different `go_backwards` value. Received: forward_layer.go_backwards {}, backward_layer.go_backwards={}",
                py_bool(forward.go_backwards),
                py_bool(backward.go_backwards)
            )));
        }
        for (what, f, b) in [
            ("stateful", false, false),
            (
                "return_sequences",
                forward.return_sequences,
                backward.return_sequences,
            ),
            ("return_state", forward.return_state, backward.return_state),
        ] {
            if f != b {
                return Err(KerasError::Value(format!(
                    "Forward layer and backward layer are expected to have the same value for attribute \"{what}\", got \"{}\" for forward layer and \"{}\" for backward layer",
                    py_bool(f),
                    py_bool(b)
                )));
            }
        }
        forward.zero_output_for_mask = forward.return_sequences;
        backward.zero_output_for_mask = backward.return_sequences;
        Ok(Bidirectional {
            forward,
            backward,
            forward_name: prefixed("forward_", name),
            backward_name,
            merge_mode,
        })
    }

    pub fn return_sequences(&self) -> bool {
        self.forward.return_sequences
    }

    /// The compiled engine's refusal: models holding one train on the op library.
    pub fn not_on_engine(&self) -> KerasError {
        KerasError::Value("Bidirectional runs on the op library".into())
    }

    /// Every variable in Keras's order, with the path below the wrapper
    /// (`forward_lstm/lstm_cell`) it sits under.
    pub fn variables(&self, layer: &str, shape: &[usize]) -> KResult<Vec<(String, CellVar)>> {
        let mut out = vec![];
        for (r, name) in [
            (&self.forward, &self.forward_name),
            (&self.backward, &self.backward_name),
        ] {
            let scope = format!("{name}/{}", r.cell_scope());
            for v in r.variables(layer, shape)? {
                out.push((scope.clone(), v));
            }
        }
        Ok(out)
    }

    /// The output shape for inputs of `shape` (one output; `merge_mode=None` gives two of
    /// this shape).
    pub fn out_shape(&self, layer: &str, shape: &[usize]) -> KResult<Vec<usize>> {
        let mut out = self.forward.out_shape(layer, shape)?;
        let back = self.backward.out_shape(layer, shape)?;
        if self.merge_mode == Some(MergeMode::Concat) {
            if let (Some(l), Some(b)) = (out.last_mut(), back.last()) {
                *l += *b;
            }
        }
        Ok(out)
    }

    /// The layer-specific part of `get_config()`: `merge_mode`, then each layer as Keras
    /// serializes it (`init` writes an initializer as saving writes them).
    pub fn config_json(&self, init: fn(&Init) -> serde_json::Value) -> serde_json::Value {
        use serde_json::{json, Value};
        let layer = |r: &Recurrent, name: &str| {
            let mut c = serde_json::Map::new();
            c.insert("name".into(), json!(name));
            c.insert("trainable".into(), json!(true));
            c.insert(
                "dtype".into(),
                json!({"module": "keras", "class_name": "DTypePolicy",
                    "config": {"name": "float32"}, "registered_name": null}),
            );
            if let Value::Object(own) = r.config_json(init) {
                c.extend(own);
            }
            json!({"module": "keras.layers", "class_name": r.class_name(),
                "config": Value::Object(c), "registered_name": null})
        };
        json!({
            "merge_mode": self.merge_mode.map(MergeMode::keras_name),
            "layer": layer(&self.forward, &self.forward_name),
            "backward_layer": layer(&self.backward, &self.backward_name),
        })
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// A Bidirectional read back from its saved config; `init` reads an initializer as saving
/// writes them.
pub fn from_config(
    c: &serde_json::Value,
    init: fn(&serde_json::Value, &str, Init) -> KResult<Init>,
) -> KResult<Bidirectional> {
    use serde_json::Value;
    let merge = match c.get("merge_mode") {
        Some(Value::Null) => None,
        Some(v) => MergeMode::parse(v.as_str())?,
        None => Some(MergeMode::Concat),
    };
    let sub = |k: &str| -> KResult<Option<(Recurrent, String)>> {
        let Some(l) = c.get(k).filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        let class = l.get("class_name").and_then(Value::as_str).unwrap_or("");
        let conf = l.get("config").cloned().unwrap_or(Value::Null);
        let name = conf
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match super::recurrent::from_config(class, &conf, init) {
            Some(r) => Ok(Some((r?, name))),
            None => Err(KerasError::Value(format!(
                "Bidirectional wraps a recurrent layer here, not {class}"
            ))),
        }
    };
    let (layer, name) = sub("layer")?
        .ok_or_else(|| KerasError::Value("Bidirectional: `layer` is missing".into()))?;
    // The saved forward name already carries its prefix, which `new` keeps as it is.
    Bidirectional::new(&layer, &name, sub("backward_layer")?, merge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Cell;

    #[test]
    fn names_shapes_and_config_follow_keras() {
        let lstm = Recurrent::new(Cell::Lstm, 3);
        let b = Bidirectional::new(&lstm, "lstm", None, Some(MergeMode::Concat)).unwrap();
        assert_eq!(
            (b.forward_name.as_str(), b.backward_name.as_str()),
            ("forward_lstm", "backward_lstm")
        );
        assert!(b.backward.go_backwards && !b.forward.go_backwards);
        assert_eq!(b.out_shape("b", &[5, 4]).unwrap(), vec![6]);
        let vars = b.variables("b", &[5, 4]).unwrap();
        let paths: Vec<String> = vars.iter().map(|(s, v)| format!("{s}/{}", v.0)).collect();
        assert_eq!(paths[0], "forward_lstm/lstm_cell/kernel");
        assert_eq!(paths[5], "backward_lstm/lstm_cell/bias");
        let back =
            from_config(&b.config_json(|_| serde_json::Value::Null), |_, _, d| Ok(d)).unwrap();
        assert_eq!(back, b);
        assert!(MergeMode::parse(Some("max")).is_err());
    }
}
