//! The errors a Keras user meets, as one enum. Each variant knows the Python exception it
//! becomes (`ValueError`, `RuntimeError`, ...) and a hint of what to do, so the bindings can
//! raise it without knowing the engine; the engine itself never imports the language.

use crate::device::DeviceError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum KerasError {
    /// Two shapes that must agree do not; `what` says where (layer names, data vs model).
    #[error("{what}: expected shape {expected}, got {got}")]
    Shape {
        what: String,
        expected: String,
        got: String,
    },
    #[error(
        "Received a label value of {label} which is outside the valid range of [0, {classes})."
    )]
    LabelOutOfRange { label: f32, classes: usize },
    /// Keras 3 names no use in its text; the field says which one was refused (in `Debug`).
    #[error("You must call `compile()` before using the model.")]
    NotCompiled(&'static str),
    #[error("Could not interpret {kind} identifier: '{name}'. Valid values: {valid}")]
    Unknown {
        kind: &'static str,
        name: String,
        valid: String,
    },
    #[error("The loss became NaN at epoch {epoch}, batch {batch}.")]
    NanLoss { epoch: usize, batch: usize },
    /// A bad argument value (a negative number of units, a dropout rate of 1.5, ...).
    #[error("{0}")]
    Value(String),
    /// Keras's own message for a path without a valid extension; the text is the message.
    #[error("{0}")]
    Path(String),
    #[error("No such file or directory: '{0}'")]
    NotFound(String),
    #[error("could not read '{path}': {detail}")]
    Corrupt { path: String, detail: String },
    #[error("I/O error on '{path}': {detail}")]
    Io { path: String, detail: String },
    #[error("Training was interrupted.")]
    Interrupted,
    /// A variable the memory bound cannot hold: TensorFlow's out-of-memory error, in its
    /// words (the text is the message).
    #[error("{0}")]
    ResourceExhausted(String),
    /// A shape with more elements than TensorFlow counts (2**63 - 1), in its words.
    #[error("{0}")]
    InvalidArgument(String),
    #[error(transparent)]
    Device(#[from] DeviceError),
}

pub type KResult<T> = Result<T, KerasError>;

impl KerasError {
    /// The Python exception class this error is raised as.
    pub fn py_exception(&self) -> &'static str {
        match self {
            // TensorFlow raises this one from the loss kernel, as InvalidArgumentError.
            KerasError::LabelOutOfRange { .. } => "InvalidArgumentError",
            KerasError::Shape { .. }
            | KerasError::Unknown { .. }
            | KerasError::Value(_)
            | KerasError::Path(_)
            | KerasError::Corrupt { .. }
            | KerasError::NotCompiled(_) => "ValueError",
            KerasError::NanLoss { .. } => "RuntimeError",
            KerasError::NotFound(_) => "FileNotFoundError",
            KerasError::Interrupted => "KeyboardInterrupt",
            KerasError::ResourceExhausted(_) => "ResourceExhaustedError",
            KerasError::InvalidArgument(_) => "InvalidArgumentError",
            KerasError::Io { .. } => "OSError",
            KerasError::Device(DeviceError::OutOfMemory { .. }) => "ResourceExhaustedError",
            KerasError::Device(DeviceError::Shape { .. }) => "InvalidArgumentError",
            KerasError::Device(_) => "InternalError",
        }
    }

    /// One sentence on what to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            KerasError::Shape { .. } => {
                "check the input_shape of the first layer and the shape of the data you pass"
            }
            KerasError::LabelOutOfRange { .. } => {
                "sparse labels must be integers from 0 to (number of units in the last layer - 1)"
            }
            KerasError::NotCompiled(_) => {
                "call model.compile(optimizer=..., loss=...) before fit or evaluate"
            }
            KerasError::Unknown { .. } => "use one of the names listed",
            KerasError::NanLoss { .. } => {
                "lower the learning rate, normalise the inputs, or check the data for NaN"
            }
            KerasError::Value(_) => "check the argument values",
            KerasError::Path(_) => "add the extension to the file name",
            KerasError::NotFound(_) => "check the path; relative paths start at the notebook",
            KerasError::Interrupted => "the weights keep the values of the last finished step",
            KerasError::ResourceExhausted(_) | KerasError::InvalidArgument(_) => {
                "a layer this large does not fit in memory: use fewer units or filters, or a smaller input"
            }
            KerasError::Corrupt { .. } => "the file is damaged or not a Keras file; save it again",
            KerasError::Io { .. } => "check permissions and free disk space",
            KerasError::Device(DeviceError::OutOfMemory { .. }) => "use a smaller batch size",
            KerasError::Device(_) => "check the shapes of the data passed to the model",
        }
    }

    pub(crate) fn shape(what: impl Into<String>, expected: &[usize], got: &[usize]) -> Self {
        KerasError::Shape {
            what: what.into(),
            expected: fmt_shape(expected),
            got: fmt_shape(got),
        }
    }

    pub(crate) fn unknown(kind: &'static str, name: &str, valid: &[&str]) -> Self {
        KerasError::Unknown {
            kind,
            name: name.to_string(),
            valid: valid.join(", "),
        }
    }
}

/// A shape as Python prints a tuple, with `None` for the batch axis when asked:
/// `(None, 28, 28, 1)`, `(10,)`.
pub fn fmt_shape(dims: &[usize]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

/// Like [`fmt_shape`] with a leading `None` batch axis.
pub fn fmt_batch_shape(dims: &[usize]) -> String {
    let mut parts = vec!["None".to_string()];
    parts.extend(dims.iter().map(|d| d.to_string()));
    if parts.len() == 1 {
        "(None,)".to_string()
    } else {
        format!("({})", parts.join(", "))
    }
}
