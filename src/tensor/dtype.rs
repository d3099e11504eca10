//! The six dtypes the kernel supports and numpy 2's promotion rules between them,
//! including NEP 50's "weak" Python scalars (a Python float does not widen a float32
//! array). Owns no data; `array.rs` stores values of these types.

/// An array element type, ordered from narrowest kind to widest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    U8,
    I32,
    I64,
    F32,
    F64,
}

/// A Python scalar operand, which under NEP 50 adopts the array's dtype where it can.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WeakScalar {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl DType {
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }

    /// A dtype from the names numpy accepts in `astype`/`dtype=` (`'float32'`, `'f4'`,
    /// `'int'`, `'float'`, `'bool'`, ...).
    pub fn parse(s: &str) -> Option<DType> {
        Some(match s {
            "bool" | "bool_" | "?" | "b1" => DType::Bool,
            "uint8" | "u1" | "B" | "ubyte" => DType::U8,
            "int32" | "i4" | "intc" => DType::I32,
            "int64" | "i8" | "int" | "int_" | "long" | "intp" | "l" => DType::I64,
            "float32" | "f4" | "single" | "f" => DType::F32,
            "float64" | "f8" | "float" | "double" | "d" | "float_" => DType::F64,
            _ => return None,
        })
    }

    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::U8 => 1,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(self, DType::U8 | DType::I32 | DType::I64)
    }

    /// numpy's `result_type` of two array dtypes.
    pub fn promote(a: DType, b: DType) -> DType {
        use DType::*;
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        match (lo, hi) {
            // A float32 cannot hold every int32/int64 exactly, so numpy goes to float64.
            (I32, F32) | (I64, F32) => F64,
            _ => hi,
        }
    }

    /// The dtype of `array <op> python_scalar` under NEP 50.
    pub fn promote_weak(a: DType, s: WeakScalar) -> DType {
        match s {
            WeakScalar::Bool(_) => a,
            WeakScalar::Int(_) => {
                if a == DType::Bool {
                    DType::I64
                } else {
                    a
                }
            }
            WeakScalar::Float(_) => {
                if a.is_float() {
                    a
                } else {
                    DType::F64
                }
            }
        }
    }

    /// The dtype a Python scalar becomes on its own (`np.asarray(1.5)`).
    pub fn of_scalar(s: WeakScalar) -> DType {
        match s {
            WeakScalar::Bool(_) => DType::Bool,
            WeakScalar::Int(_) => DType::I64,
            WeakScalar::Float(_) => DType::F64,
        }
    }

    /// Whether a Python integer fits this dtype (NEP 50 raises `OverflowError` otherwise).
    pub fn holds_int(self, v: i64) -> bool {
        match self {
            DType::U8 => (0..=255).contains(&v),
            DType::I32 => i32::try_from(v).is_ok(),
            _ => true,
        }
    }
}
