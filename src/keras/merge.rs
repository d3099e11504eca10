//! Keras's merge layers (`Add`, `Subtract`, `Multiply`, `Average`, `Maximum`, `Minimum`,
//! `Concatenate`): what each is called and the shape rule that joins several inputs into
//! one, with Keras's messages when the inputs do not fit. A merge layer only makes sense
//! in a graph of layers; the arithmetic runs on the op library where the graph runs.
//! Shapes here never include the batch axis.

use super::error::{fmt_batch_shape, KResult, KerasError};

/// Which merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeOp {
    Add,
    Subtract,
    Multiply,
    Average,
    Maximum,
    Minimum,
    /// Joins along `axis` (negative counts from the end, batch axis included).
    Concatenate {
        axis: i64,
    },
}

impl MergeOp {
    /// The Keras class name.
    pub fn class_name(&self) -> &'static str {
        match self {
            MergeOp::Add => "Add",
            MergeOp::Subtract => "Subtract",
            MergeOp::Multiply => "Multiply",
            MergeOp::Average => "Average",
            MergeOp::Maximum => "Maximum",
            MergeOp::Minimum => "Minimum",
            MergeOp::Concatenate { .. } => "Concatenate",
        }
    }

    /// The Keras classes of the merge layers, as a saved config names them.
    pub const CLASSES: [&'static str; 7] = [
        "Add",
        "Subtract",
        "Multiply",
        "Average",
        "Maximum",
        "Minimum",
        "Concatenate",
    ];

    /// The merge layer a saved config names (`class_name`), with its `axis` for
    /// `Concatenate` (Keras's default -1 when absent).
    pub fn from_config(class: &str, axis: Option<i64>) -> Option<MergeOp> {
        Some(match class {
            "Add" => MergeOp::Add,
            "Subtract" => MergeOp::Subtract,
            "Multiply" => MergeOp::Multiply,
            "Average" => MergeOp::Average,
            "Maximum" => MergeOp::Maximum,
            "Minimum" => MergeOp::Minimum,
            "Concatenate" => MergeOp::Concatenate {
                axis: axis.unwrap_or(-1),
            },
            _ => return None,
        })
    }

    /// The base of the automatic name (`add`, `concatenate`, ...).
    pub fn base_name(&self) -> &'static str {
        match self {
            MergeOp::Add => "add",
            MergeOp::Subtract => "subtract",
            MergeOp::Multiply => "multiply",
            MergeOp::Average => "average",
            MergeOp::Maximum => "maximum",
            MergeOp::Minimum => "minimum",
            MergeOp::Concatenate { .. } => "concatenate",
        }
    }

    /// The merge of inputs of `shapes` (with the batch axis; `None` is unknown), as Keras
    /// computes it when the layer is called, with its messages.
    pub fn out_shape(&self, shapes: &[Vec<Option<usize>>]) -> KResult<Vec<Option<usize>>> {
        let all = shapes
            .iter()
            .map(|s| tuple_text(s))
            .collect::<Vec<_>>()
            .join(", ");
        let Some(first) = shapes.first() else {
            return Err(KerasError::Value(
                "A merge layer should be called on a list of at least 1 input. Got 0 inputs. Full input_shape received: []".into(),
            ));
        };
        if let MergeOp::Concatenate { axis } = self {
            let rank = first.len() as i64;
            let at = if *axis < 0 { rank + axis } else { *axis };
            let fits = (0..rank).contains(&at)
                && shapes.iter().all(|s| {
                    s.len() == first.len()
                        && s.iter().zip(first).enumerate().all(|(i, (a, b))| {
                            i as i64 == at || a.is_none() || b.is_none() || a == b
                        })
                });
            if !fits {
                return Err(KerasError::Value(format!(
                    "A `Concatenate` layer requires inputs with matching shapes except for the concatenation axis. Received: input_shape=[{all}]"
                )));
            }
            let at = at as usize;
            let mut out = first.clone();
            out[at] = shapes
                .iter()
                .map(|s| s.get(at).copied().flatten())
                .try_fold(0usize, |n, d| d.map(|d| n + d));
            return Ok(out);
        }
        // Keras compares the shapes without the batch axis, broadcasting ones.
        let mut out: Vec<Option<usize>> = first.iter().skip(1).copied().collect();
        for s in &shapes[1..] {
            let rest: Vec<Option<usize>> = s.iter().skip(1).copied().collect();
            let incompatible = || {
                KerasError::Value(format!(
                    "Inputs have incompatible shapes. Received shapes {} and {}",
                    tuple_text(&out),
                    tuple_text(&rest)
                ))
            };
            if rest.len() != out.len() {
                return Err(incompatible());
            }
            let mut next = Vec::with_capacity(out.len());
            for (o, d) in out.iter().zip(&rest) {
                next.push(match (*o, *d) {
                    (Some(a), Some(b)) if a == b => Some(a),
                    (Some(1), b) | (b, Some(1)) => b,
                    (None, b) | (b, None) => b,
                    _ => return Err(incompatible()),
                });
            }
            out = next;
        }
        if matches!(self, MergeOp::Subtract) && shapes.len() != 2 {
            return Err(KerasError::Value(format!(
                "A `Subtract` layer should be called on exactly 2 inputs. Received: input_shape=[{all}]"
            )));
        }
        let mut with_batch = vec![first.first().copied().flatten()];
        with_batch.extend(out);
        Ok(with_batch)
    }
}

/// A shape as Python prints a tuple: `(None, 3)`, `(5,)`.
fn tuple_text(s: &[Option<usize>]) -> String {
    let dims: Vec<String> = s
        .iter()
        .map(|d| d.map_or("None".into(), |d| d.to_string()))
        .collect();
    match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    }
}

/// The message a merge layer gives when called on one tensor rather than a list.
pub fn not_a_list(shape: &[usize]) -> KerasError {
    KerasError::Value(format!(
        "A merge layer should be called on a list of inputs. Received: input_shape={} (not a list of shapes)",
        fmt_batch_shape(shape)
    ))
}
