//! Python exceptions as Rust errors. A [`PyErr`] carries the exception's class name (one of
//! CPython's or TensorFlow's, e.g. `ValueError`, `ResourceExhaustedError`), its message, the
//! raised instance when user code raised one, and the traceback frames collected while it
//! unwinds. Natives build them with the constructors below; the interpreter matches them
//! against `except` clauses by walking the class hierarchy.

use super::value::Value;

/// One frame of a traceback: where the exception passed on its way out.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// `Cell In[3]`, or the file name for scripts.
    pub file: String,
    /// The function as IPython names it in a traceback (`f(a, b, *args)`), or `None` at
    /// the cell's top level.
    pub function: Option<String>,
    /// 1-based line number within the cell.
    pub line: usize,
    /// The source line, to print under the frame header.
    pub source: String,
}

#[derive(Debug, Clone)]
pub struct PyErrInner {
    /// The exception class name, as `type(e).__name__` shows it.
    pub type_name: String,
    /// `str(e)`.
    pub message: String,
    /// The instance, when the exception is a Python object (user classes, `raise X(...)`).
    pub value: Option<Value>,
    /// Innermost frame last, as CPython prints them.
    pub traceback: Vec<Frame>,
    /// Extra lines printed after the message (SyntaxError's source line and caret).
    pub notes: Vec<String>,
    /// A teaching hint ("Hint: ..."), shown as the traceback's last line and never part
    /// of `str(e)`, so that `evalue` stays the library's exact text.
    pub hint: Option<String>,
}

/// A raised Python exception. Boxed so that `PyResult<Value>` stays small on the hot path.
#[derive(Debug, Clone)]
pub struct PyErr(pub Box<PyErrInner>);

pub type PyResult<T> = Result<T, PyErr>;

impl PyErr {
    /// A message's "\nHint: ..." tail becomes the error's hint, out of `str(e)`.
    pub fn new(type_name: &str, message: impl Into<String>) -> PyErr {
        let mut message: String = message.into();
        let hint = message.find("\nHint: ").map(|at| {
            let h = message[at + 1..].to_string();
            message.truncate(at);
            h
        });
        PyErr(Box::new(PyErrInner {
            type_name: type_name.to_string(),
            message,
            value: None,
            traceback: vec![],
            notes: vec![],
            hint,
        }))
    }

    /// The teaching hint shown after the traceback, if any.
    pub fn hint(&self) -> Option<&str> {
        self.0.hint.as_deref()
    }

    pub fn type_name(&self) -> &str {
        &self.0.type_name
    }

    pub fn message(&self) -> &str {
        &self.0.message
    }

    pub fn type_error(m: impl Into<String>) -> PyErr {
        PyErr::new("TypeError", m)
    }
    /// Converting a NaN or an infinity to `int`: CPython's `ValueError` or `OverflowError`.
    pub fn float_to_int(x: f64) -> PyErr {
        if x.is_nan() {
            PyErr::value_error("cannot convert float NaN to integer")
        } else {
            PyErr::new("OverflowError", "cannot convert float infinity to integer")
        }
    }
    pub fn value_error(m: impl Into<String>) -> PyErr {
        PyErr::new("ValueError", m)
    }
    pub fn runtime_error(m: impl Into<String>) -> PyErr {
        PyErr::new("RuntimeError", m)
    }
    pub fn attribute_error(m: impl Into<String>) -> PyErr {
        PyErr::new("AttributeError", m)
    }
    pub fn index_error(m: impl Into<String>) -> PyErr {
        PyErr::new("IndexError", m)
    }
    pub fn key_error(m: impl Into<String>) -> PyErr {
        PyErr::new("KeyError", m)
    }
    pub fn not_implemented(m: impl Into<String>) -> PyErr {
        PyErr::new("NotImplementedError", m)
    }
    pub fn keyboard_interrupt() -> PyErr {
        PyErr::new("KeyboardInterrupt", "")
    }
    pub fn os_error(m: impl Into<String>) -> PyErr {
        PyErr::new("OSError", m)
    }
    pub fn memory_error(m: impl Into<String>) -> PyErr {
        PyErr::new("MemoryError", m)
    }
}

impl std::fmt::Display for PyErr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.message.is_empty() {
            write!(f, "{}", self.0.type_name)
        } else {
            write!(f, "{}: {}", self.0.type_name, self.0.message)
        }
    }
}

impl std::error::Error for PyErr {}
