//! [`NdArray`]: a dtype-tagged `ndarray::ArrayD`, with casts, conversions for the engine
//! (`to_f32_vec`, `from_f32`), shape manipulation and numpy scalars ([`Scalar`]). The
//! arithmetic lives in `ops.rs`, reductions in `reduce.rs`, indexing in `index.rs`.

use ndarray::{ArrayD, Axis, IxDyn};

use super::dtype::DType;
use super::{check_alloc, shape_str, TResult, TensorError};

/// The storage of an array: one `ArrayD` per supported dtype.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Bool(ArrayD<bool>),
    U8(ArrayD<u8>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
}

/// Applies `$body` to the inner `ArrayD` of any variant, binding it as `$a`.
#[macro_export]
macro_rules! with_data {
    ($data:expr, $a:ident => $body:expr) => {
        match $data {
            $crate::tensor::Data::Bool($a) => $body,
            $crate::tensor::Data::U8($a) => $body,
            $crate::tensor::Data::I32($a) => $body,
            $crate::tensor::Data::I64($a) => $body,
            $crate::tensor::Data::F32($a) => $body,
            $crate::tensor::Data::F64($a) => $body,
        }
    };
}

/// Like [`with_data!`] but rewraps the resulting `ArrayD` in the same variant.
#[macro_export]
macro_rules! map_data {
    ($data:expr, $a:ident => $body:expr) => {
        match $data {
            $crate::tensor::Data::Bool($a) => $crate::tensor::Data::Bool($body),
            $crate::tensor::Data::U8($a) => $crate::tensor::Data::U8($body),
            $crate::tensor::Data::I32($a) => $crate::tensor::Data::I32($body),
            $crate::tensor::Data::I64($a) => $crate::tensor::Data::I64($body),
            $crate::tensor::Data::F32($a) => $crate::tensor::Data::F32($body),
            $crate::tensor::Data::F64($a) => $crate::tensor::Data::F64($body),
        }
    };
}

/// A host array with numpy semantics.
#[derive(Debug, Clone, PartialEq)]
pub struct NdArray {
    pub data: Data,
}

/// A numpy scalar (`np.float32(2.5)`, `np.int64(3)`, `np.True_`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    Bool(bool),
    U8(u8),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

/// Element types that convert to and from the two wide kinds used for arithmetic.
pub trait Elem: Copy + Default + PartialEq + std::fmt::Debug + 'static {
    fn to_f64(self) -> f64;
    fn to_i64(self) -> i64;
    fn from_f64(v: f64) -> Self;
    fn from_i64(v: i64) -> Self;
}

macro_rules! elem_num {
    ($t:ty) => {
        impl Elem for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_i64(self) -> i64 {
                self as i64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
        }
    };
}
elem_num!(u8);
elem_num!(i32);
elem_num!(i64);
elem_num!(f32);
elem_num!(f64);

impl Elem for bool {
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
}

fn cast_arr<T: Elem, U: Elem>(a: &ArrayD<T>, float: bool) -> ArrayD<U> {
    if float {
        a.mapv(|v| U::from_f64(v.to_f64()))
    } else {
        a.mapv(|v| U::from_i64(v.to_i64()))
    }
}

impl NdArray {
    pub fn new(data: Data) -> NdArray {
        NdArray { data }
    }

    pub fn dtype(&self) -> DType {
        match &self.data {
            Data::Bool(_) => DType::Bool,
            Data::U8(_) => DType::U8,
            Data::I32(_) => DType::I32,
            Data::I64(_) => DType::I64,
            Data::F32(_) => DType::F32,
            Data::F64(_) => DType::F64,
        }
    }

    pub fn shape(&self) -> &[usize] {
        with_data!(&self.data, a => a.shape())
    }

    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    pub fn size(&self) -> usize {
        self.shape().iter().product()
    }

    /// An array of `dtype` and `shape` filled with the value `v` (cast as numpy casts).
    pub fn full(shape: &[usize], v: f64, dtype: DType) -> TResult<NdArray> {
        check_alloc(shape, dtype)?;
        let sh = IxDyn(shape);
        Ok(NdArray::new(match dtype {
            DType::Bool => Data::Bool(ArrayD::from_elem(sh, v != 0.0)),
            DType::U8 => Data::U8(ArrayD::from_elem(sh, v as u8)),
            DType::I32 => Data::I32(ArrayD::from_elem(sh, v as i32)),
            DType::I64 => Data::I64(ArrayD::from_elem(sh, v as i64)),
            DType::F32 => Data::F32(ArrayD::from_elem(sh, v as f32)),
            DType::F64 => Data::F64(ArrayD::from_elem(sh, v)),
        }))
    }

    pub fn zeros(shape: &[usize], dtype: DType) -> TResult<NdArray> {
        NdArray::full(shape, 0.0, dtype)
    }

    pub fn from_scalar(s: Scalar) -> NdArray {
        let sh = IxDyn(&[]);
        NdArray::new(match s {
            Scalar::Bool(v) => Data::Bool(ArrayD::from_elem(sh, v)),
            Scalar::U8(v) => Data::U8(ArrayD::from_elem(sh, v)),
            Scalar::I32(v) => Data::I32(ArrayD::from_elem(sh, v)),
            Scalar::I64(v) => Data::I64(ArrayD::from_elem(sh, v)),
            Scalar::F32(v) => Data::F32(ArrayD::from_elem(sh, v)),
            Scalar::F64(v) => Data::F64(ArrayD::from_elem(sh, v)),
        })
    }

    fn shaped<T>(shape: &[usize], v: Vec<T>) -> TResult<ArrayD<T>> {
        ArrayD::from_shape_vec(IxDyn(shape), v).map_err(|_| {
            TensorError::Value(format!("data does not fill shape {}", shape_str(shape)))
        })
    }

    pub fn from_f32(shape: &[usize], v: Vec<f32>) -> TResult<NdArray> {
        Ok(NdArray::new(Data::F32(Self::shaped(shape, v)?)))
    }
    pub fn from_f64(shape: &[usize], v: Vec<f64>) -> TResult<NdArray> {
        Ok(NdArray::new(Data::F64(Self::shaped(shape, v)?)))
    }
    pub fn from_i64(shape: &[usize], v: Vec<i64>) -> TResult<NdArray> {
        Ok(NdArray::new(Data::I64(Self::shaped(shape, v)?)))
    }
    pub fn from_i32(shape: &[usize], v: Vec<i32>) -> TResult<NdArray> {
        Ok(NdArray::new(Data::I32(Self::shaped(shape, v)?)))
    }
    pub fn from_u8(shape: &[usize], v: Vec<u8>) -> TResult<NdArray> {
        Ok(NdArray::new(Data::U8(Self::shaped(shape, v)?)))
    }
    pub fn from_bool(shape: &[usize], v: Vec<bool>) -> TResult<NdArray> {
        Ok(NdArray::new(Data::Bool(Self::shaped(shape, v)?)))
    }

    /// A copy converted to `dtype` (C casting: floats truncate toward zero into ints).
    pub fn astype(&self, dtype: DType) -> NdArray {
        if self.dtype() == dtype {
            return self.clone();
        }
        let float = self.dtype().is_float();
        NdArray::new(with_data!(&self.data, a => match dtype {
            DType::Bool => Data::Bool(a.mapv(|v| v.to_f64() != 0.0)),
            DType::U8 => Data::U8(cast_arr(a, float)),
            DType::I32 => Data::I32(cast_arr(a, float)),
            DType::I64 => Data::I64(cast_arr(a, float)),
            DType::F32 => Data::F32(cast_arr(a, true)),
            DType::F64 => Data::F64(cast_arr(a, true)),
        }))
    }

    /// The values as float64 (a copy).
    pub fn to_f64_array(&self) -> ArrayD<f64> {
        match &self.data {
            Data::F64(a) => a.clone(),
            other => with_data!(other, a => a.mapv(|v| v.to_f64())),
        }
    }

    /// The values as int64 (a copy; floats truncate).
    pub fn to_i64_array(&self) -> ArrayD<i64> {
        match &self.data {
            Data::I64(a) => a.clone(),
            Data::F32(a) => a.mapv(|v| v as i64),
            Data::F64(a) => a.mapv(|v| v as i64),
            other => with_data!(other, a => a.mapv(|v| v.to_i64())),
        }
    }

    pub fn to_bool_array(&self) -> ArrayD<bool> {
        match &self.data {
            Data::Bool(a) => a.clone(),
            other => with_data!(other, a => a.mapv(|v| v.to_f64() != 0.0)),
        }
    }

    /// Shape and row-major float32 values, for the engine. No conversion when the array is
    /// already float32; one copy to lay it out.
    pub fn to_f32_vec(&self) -> (Vec<usize>, Vec<f32>) {
        let shape = self.shape().to_vec();
        let v = match &self.data {
            Data::F32(a) => match a.as_slice() {
                Some(s) => s.to_vec(),
                None => a.iter().copied().collect(),
            },
            other => with_data!(other, a => a.iter().map(|v| v.to_f64() as f32).collect()),
        };
        (shape, v)
    }

    /// Borrowed float32 data when the array is float32 and contiguous (no copy at all).
    pub fn as_f32_slice(&self) -> Option<&[f32]> {
        match &self.data {
            Data::F32(a) => a.as_slice(),
            _ => None,
        }
    }

    pub fn to_f64_vec(&self) -> (Vec<usize>, Vec<f64>) {
        let shape = self.shape().to_vec();
        (shape, self.to_f64_array().iter().copied().collect())
    }

    pub fn to_i64_vec(&self) -> (Vec<usize>, Vec<i64>) {
        let shape = self.shape().to_vec();
        (shape, self.to_i64_array().iter().copied().collect())
    }

    /// The element at a flat row-major position.
    pub fn scalar_at(&self, flat: usize) -> Option<Scalar> {
        macro_rules! at {
            ($a:expr, $v:ident) => {
                $a.iter().nth(flat).map(|x| Scalar::$v(*x))
            };
        }
        match &self.data {
            Data::Bool(a) => at!(a, Bool),
            Data::U8(a) => at!(a, U8),
            Data::I32(a) => at!(a, I32),
            Data::I64(a) => at!(a, I64),
            Data::F32(a) => at!(a, F32),
            Data::F64(a) => at!(a, F64),
        }
    }

    /// `a.item()`: the only element, or numpy's error for bigger arrays.
    pub fn item(&self) -> TResult<Scalar> {
        if self.size() != 1 {
            return Err(TensorError::Value(
                "can only convert an array of size 1 to a Python scalar".into(),
            ));
        }
        self.scalar_at(0)
            .ok_or_else(|| TensorError::Value("empty array".into()))
    }

    /// All elements as scalars in row-major order.
    pub fn scalars(&self) -> Vec<Scalar> {
        macro_rules! all {
            ($a:expr, $v:ident) => {
                $a.iter().map(|x| Scalar::$v(*x)).collect()
            };
        }
        match &self.data {
            Data::Bool(a) => all!(a, Bool),
            Data::U8(a) => all!(a, U8),
            Data::I32(a) => all!(a, I32),
            Data::I64(a) => all!(a, I64),
            Data::F32(a) => all!(a, F32),
            Data::F64(a) => all!(a, F64),
        }
    }

    /// `reshape`, with one dimension allowed to be -1.
    pub fn reshape(&self, dims: &[i64]) -> TResult<NdArray> {
        let size = self.size();
        let mut unknown = None;
        let mut known: usize = 1;
        for (i, &d) in dims.iter().enumerate() {
            if d == -1 {
                if unknown.is_some() {
                    return Err(TensorError::Value(
                        "can only specify one unknown dimension".into(),
                    ));
                }
                unknown = Some(i);
            } else if d < 0 {
                return Err(TensorError::Value("negative dimensions not allowed".into()));
            } else {
                known = known.saturating_mul(d as usize);
            }
        }
        let mut shape: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
        if let Some(i) = unknown {
            if known == 0 || !size.is_multiple_of(known) {
                return Err(self.reshape_error(dims));
            }
            shape[i] = size / known;
        } else if known != size {
            return Err(self.reshape_error(dims));
        }
        let sh = IxDyn(&shape);
        Ok(NdArray::new(map_data!(&self.data, a => {
            let flat: Vec<_> = a.iter().copied().collect();
            ArrayD::from_shape_vec(sh.clone(), flat).map_err(|_| self.reshape_error(dims))?
        })))
    }

    fn reshape_error(&self, dims: &[i64]) -> TensorError {
        let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
        let want = if dims.len() == 1 {
            format!("({},)", parts[0])
        } else {
            format!("({})", parts.join(", "))
        };
        TensorError::Value(format!(
            "cannot reshape array of size {} into shape {want}",
            self.size()
        ))
    }

    pub fn ravel(&self) -> NdArray {
        let n = self.size() as i64;
        self.reshape(&[n]).unwrap_or_else(|_| self.clone())
    }

    /// `transpose(axes)`; `None` reverses the axes.
    pub fn transpose(&self, axes: Option<&[i64]>) -> TResult<NdArray> {
        let nd = self.ndim();
        let perm: Vec<usize> = match axes {
            None => (0..nd).rev().collect(),
            Some(ax) => {
                if ax.len() != nd {
                    return Err(TensorError::Value("axes don't match array".into()));
                }
                let mut p = Vec::with_capacity(nd);
                for &a in ax {
                    let k = norm_axis(a, nd)?;
                    if p.contains(&k) {
                        return Err(TensorError::Value("repeated axis in transpose".into()));
                    }
                    p.push(k);
                }
                p
            }
        };
        Ok(NdArray::new(map_data!(&self.data, a => {
            a.clone().permuted_axes(IxDyn(&perm)).as_standard_layout().into_owned()
        })))
    }

    pub fn expand_dims(&self, axis: i64) -> TResult<NdArray> {
        let k = norm_axis(axis, self.ndim() + 1)?;
        Ok(NdArray::new(
            map_data!(&self.data, a => a.clone().insert_axis(Axis(k))),
        ))
    }

    /// `squeeze(axis)`: drops length-1 axes (all of them when `axis` is `None`).
    pub fn squeeze(&self, axis: Option<i64>) -> TResult<NdArray> {
        let shape = self.shape();
        let new: Vec<i64> = match axis {
            None => shape
                .iter()
                .filter(|&&d| d != 1)
                .map(|&d| d as i64)
                .collect(),
            Some(ax) => {
                let k = norm_axis(ax, self.ndim())?;
                if shape[k] != 1 {
                    return Err(TensorError::Value(
                        "cannot select an axis to squeeze out which has size not equal to one"
                            .into(),
                    ));
                }
                let mut v: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
                v.remove(k);
                v
            }
        };
        self.reshape(&new)
    }

    /// A contiguous (standard layout) copy of the data, so flat positions are row-major.
    pub fn standard(&self) -> NdArray {
        NdArray::new(map_data!(&self.data, a => a.as_standard_layout().into_owned()))
    }
}

/// A possibly negative axis checked against `ndim`, with numpy's error.
pub fn norm_axis(axis: i64, ndim: usize) -> TResult<usize> {
    let n = ndim as i64;
    let k = if axis < 0 { axis + n } else { axis };
    if k < 0 || k >= n {
        return Err(TensorError::Axis(format!(
            "axis {axis} is out of bounds for array of dimension {ndim}"
        )));
    }
    Ok(k as usize)
}

impl Scalar {
    pub fn dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::U8(_) => DType::U8,
            Scalar::I32(_) => DType::I32,
            Scalar::I64(_) => DType::I64,
            Scalar::F32(_) => DType::F32,
            Scalar::F64(_) => DType::F64,
        }
    }
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(v) => v as u8 as f64,
            Scalar::U8(v) => v as f64,
            Scalar::I32(v) => v as f64,
            Scalar::I64(v) => v as f64,
            Scalar::F32(v) => v as f64,
            Scalar::F64(v) => v,
        }
    }
    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Bool(v) => v as i64,
            Scalar::U8(v) => v as i64,
            Scalar::I32(v) => v as i64,
            Scalar::I64(v) => v,
            Scalar::F32(v) => v as i64,
            Scalar::F64(v) => v as i64,
        }
    }
}
