//! Errors of the op library, each tagged with the exception class TensorFlow raises for it
//! ([`ErrorClass`]) and worded as TensorFlow 2.21 words it. A kernel error carries TF's
//! eager framing (`{{function_node __wrapped__MatMul_device_...}} ... [Op:MatMul] name: `),
//! so the bindings only map the class to a Python exception and pass the text through.

use crate::tensor::{DType, TensorError};

/// The TensorFlow (or Python) exception class of an [`OpError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    InvalidArgument,
    Unimplemented,
    NotFound,
    Value,
    Type,
    Lookup,
    Runtime,
    Memory,
}

impl ErrorClass {
    /// The Python exception name (`tf.errors.InvalidArgumentError` is `InvalidArgumentError`).
    pub fn py_name(self) -> &'static str {
        match self {
            ErrorClass::InvalidArgument => "InvalidArgumentError",
            ErrorClass::Unimplemented => "UnimplementedError",
            ErrorClass::NotFound => "NotFoundError",
            ErrorClass::Value => "ValueError",
            ErrorClass::Type => "TypeError",
            ErrorClass::Lookup => "LookupError",
            ErrorClass::Runtime => "RuntimeError",
            ErrorClass::Memory => "MemoryError",
        }
    }
}

/// An error of an op or of the tape, with TensorFlow's class and text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct OpError {
    pub class: ErrorClass,
    pub message: String,
}

pub type OpResult<T> = Result<T, OpError>;

/// TF's own name of a dtype in kernel messages (`float`, `double`, `int32`).
pub fn kernel_dtype_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F64 => "double",
        other => other.name(),
    }
}

/// The dtypes an op's signature allows, as TF lists them in its op-definition error:
/// plain names, then `DT_` names.
#[derive(Debug, Clone, Copy)]
pub struct Allowed(pub &'static str, pub &'static str);

/// Element-wise math on floats (Sqrt, Exp, Log, Sigmoid, ...).
pub const FLOAT_COMPLEX: Allowed = Allowed(
    "bfloat16, half, float, double, complex64, complex128",
    "DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64, DT_COMPLEX128",
);

/// Real floats only (Softmax, the activations, the losses).
pub const FLOAT: Allowed = Allowed(
    "half, bfloat16, float, double",
    "DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE",
);

/// Numbers: arithmetic ops refuse bool.
pub const NUMBER: Allowed = Allowed(
    "bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, int32, int64, \
     complex64, complex128",
    "DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, \
     DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_COMPLEX64, DT_COMPLEX128",
);

/// Integers and bool (the bitwise ops).
pub const INTEGER: Allowed = Allowed(
    "int8, int16, int32, int64, uint8, uint16, uint32, uint64",
    "DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64",
);

/// A shape as TF writes it in messages: `[2,3]`.
pub fn dims(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(","))
}

impl OpError {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> OpError {
        OpError {
            class,
            message: message.into(),
        }
    }

    /// An error raised inside an op's kernel, framed as TF's eager runtime frames it.
    /// `device` is the device's name (`CPU:0`).
    pub fn kernel(op: &str, device: &str, message: &str) -> OpError {
        OpError::framed(op, op, device, message, Some(""))
    }

    /// A kernel error with TF's full framing: `frame` is the wrapped function's name
    /// (`ConcatV2_N_2` for a two-input concat), `name` the op's name when TF prints one
    /// (`Some("")` prints ` name: ` with nothing after it, as eager ops do).
    pub fn framed(
        frame: &str,
        op: &str,
        device: &str,
        message: &str,
        name: Option<&str>,
    ) -> OpError {
        let tail = match name {
            Some(n) => format!(" name: {n}"),
            None => String::new(),
        };
        OpError::new(
            ErrorClass::InvalidArgument,
            format!(
                "{{{{function_node __wrapped__{frame}_device_/job:localhost/replica:0/task:0/\
                 device:{device}}}}} {message} [Op:{op}]{tail}"
            ),
        )
    }

    /// Two inputs of one op that must share a dtype but do not.
    pub fn input_dtype(op: &str, index: usize, want: DType, got: DType) -> OpError {
        OpError::new(
            ErrorClass::InvalidArgument,
            format!(
                "cannot compute {op} as input #{index}(zero-based) was expected to be a {} \
                 tensor but is a {} tensor [Op:{op}] name: ",
                kernel_dtype_name(want),
                kernel_dtype_name(got)
            ),
        )
    }

    /// An input dtype the op's signature does not allow: TF's op-definition check
    /// (`signature` is e.g. `x:T -> y:T`).
    pub fn attr_dtype(op: &str, signature: &str, got: DType, allowed: Allowed) -> OpError {
        OpError::new(
            ErrorClass::InvalidArgument,
            format!(
                "Value for attr 'T' of {} is not in the list of allowed values: {}\n\t; \
                 NodeDef: {{{{node {op}}}}}; Op<name={op}; signature={signature}; \
                 attr=T:type,allowed=[{}]> [Op:{op}] name: ",
                got.name(),
                allowed.0,
                allowed.1
            ),
        )
    }

    /// The gradient of an op that has none, as TF's gradient registry reports it.
    pub fn no_gradient(op: &str) -> OpError {
        OpError::new(
            ErrorClass::Lookup,
            format!("gradient registry has no entry for: {op}"),
        )
    }

    /// A fault of the library itself (a device error on arrays the op already checked).
    pub fn internal(message: impl std::fmt::Display) -> OpError {
        OpError::new(ErrorClass::InvalidArgument, message.to_string())
    }

    /// An array error from the tensor part, seen from op `op`: allocation failures stay
    /// `MemoryError`, the rest are the kernel's `InvalidArgumentError`.
    pub fn from_tensor(op: &str, device: &str, e: TensorError) -> OpError {
        match e {
            TensorError::Memory(m) => OpError::new(ErrorClass::Memory, m),
            other => OpError::kernel(op, device, &other.to_string()),
        }
    }
}

impl From<crate::device::DeviceError> for OpError {
    fn from(e: crate::device::DeviceError) -> OpError {
        OpError::internal(e)
    }
}
