//! `tf.float32` and friends: TensorFlow's dtype objects, printed as `tf.float32`, compared
//! with each other and with dtype names (`tf.float32 == 'float32'` is true in TF). Owns no
//! array storage; the tensor part decides what each dtype holds.

use std::any::Any;

use crate::lang::{CmpOp, Ctx, NativeFn, NativeModule, Object, PyResult, Value};

/// The dtypes a cell can name, in the order `dir(tf.dtypes)` lists them here.
const NAMES: &[&str] = &[
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "string",
    "complex64",
    "complex128",
];

/// One TensorFlow dtype, known by its canonical name (`float32`, `int64`, `bool`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DType {
    pub name: &'static str,
}

impl DType {
    /// The dtype for a name or alias (`float`, `double`, `half` as TF accepts them).
    pub fn from_name(name: &str) -> Option<DType> {
        let canonical = match name {
            "float" => "float32",
            "double" => "float64",
            "half" => "float16",
            other => other,
        };
        NAMES
            .iter()
            .find(|n| **n == canonical)
            .map(|n| DType { name: n })
    }

    pub fn value(name: &str) -> Option<Value> {
        DType::from_name(name).map(Value::native)
    }

    pub fn is_floating(&self) -> bool {
        matches!(self.name, "float16" | "bfloat16" | "float32" | "float64")
    }

    pub fn is_integer(&self) -> bool {
        self.name.starts_with("int") || self.name.starts_with("uint")
    }

    pub fn is_complex(&self) -> bool {
        self.name.starts_with("complex")
    }

    /// Bytes per element, as `dtype.size` reports it (strings report 8 as in TF).
    pub fn size(&self) -> i64 {
        match self.name {
            "bool" | "int8" | "uint8" => 1,
            "float16" | "bfloat16" | "int16" | "uint16" => 2,
            "float32" | "int32" | "uint32" => 4,
            "complex128" => 16,
            _ => 8,
        }
    }

    /// The dtype named by a value: a `DType`, a name string, or a numpy dtype whose `str()`
    /// is its name. `None` when the value names no dtype.
    pub fn from_value(v: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<DType>> {
        if let Some(d) = v.downcast::<DType>() {
            return Ok(Some(d.clone()));
        }
        if let Value::Str(s) = v {
            return Ok(DType::from_name(s));
        }
        if matches!(v, Value::Native(_)) {
            let text = ctx.str(v)?;
            let text = text
                .trim_start_matches("<class 'numpy.")
                .trim_end_matches("'>");
            return Ok(DType::from_name(text));
        }
        Ok(None)
    }
}

impl Object for DType {
    fn type_name(&self) -> String {
        "DType".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("tf.{}", self.name))
    }
    /// TF's `str` of a dtype differs from its `repr`: `print(t.dtype)` shows this.
    fn str(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<dtype: '{}'>", self.name))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok(Some(match name {
            "name" => Value::str(self.name),
            "is_floating" => Value::Bool(self.is_floating()),
            "is_integer" => Value::Bool(self.is_integer()),
            "is_complex" => Value::Bool(self.is_complex()),
            "is_bool" => Value::Bool(self.name == "bool"),
            "is_unsigned" => Value::Bool(self.name.starts_with("uint") || self.name == "bool"),
            "size" => Value::Int(self.size()),
            "base_dtype" => Value::native(self.clone()),
            _ => return Ok(None),
        }))
    }
    fn compare(&self, op: CmpOp, other: &Value, ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        let same = match DType::from_value(other, ctx) {
            Ok(Some(d)) => d == *self,
            _ => false,
        };
        Ok(match op {
            CmpOp::Eq => Some(Value::Bool(same)),
            CmpOp::Ne => Some(Value::Bool(!same)),
            _ => None,
        })
    }
    fn hash(&self) -> Option<u64> {
        NAMES
            .iter()
            .position(|n| *n == self.name)
            .map(|i| 0xd7_0000 + i as u64)
    }
    fn dir(&self) -> Vec<String> {
        [
            "name",
            "is_floating",
            "is_integer",
            "is_complex",
            "is_bool",
            "size",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Every dtype as `(name, value)`, for `tf.<name>` and `tf.dtypes.<name>`.
pub fn all() -> Vec<(&'static str, Value)> {
    let mut out: Vec<(&'static str, Value)> = NAMES
        .iter()
        .map(|n| (*n, Value::native(DType { name: n })))
        .collect();
    out.push(("double", Value::native(DType { name: "float64" })));
    out.push(("half", Value::native(DType { name: "float16" })));
    out
}

/// `tf.dtypes`: the dtypes plus `as_dtype`.
pub fn module() -> Value {
    let m = NativeModule::new("tensorflow.dtypes", "TensorFlow dtypes.");
    for (name, v) in all() {
        m.set(name, v);
    }
    m.set("DType", NativeFn::value("DType", "DType(name)", dtype_ctor));
    m.set(
        "as_dtype",
        NativeFn::value("as_dtype", "as_dtype(type_value)", dtype_ctor),
    );
    m.into_value()
}

fn dtype_ctor(args: &crate::lang::Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let slots = args.bind("as_dtype", &["type_value"], 1)?;
    let v = slots[0].clone().unwrap_or(Value::None);
    match DType::from_value(&v, ctx)? {
        Some(d) => Ok(Value::native(d)),
        None => {
            let shown = ctx.repr(&v)?;
            Err(crate::lang::PyErr::type_error(format!(
                "Cannot convert the argument `type_value`: {shown} to a TensorFlow DType."
            )))
        }
    }
}
