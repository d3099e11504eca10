//! `tf.image`: `flip_left_right`, `flip_up_down`, `rot90`, `convert_image_dtype`,
//! `per_image_standardization` and `resize` (with `ResizeMethod`), composed of op-library
//! ops (reversing strided slices, transposes, casts, gathers, element-wise math and
//! reductions) the way TensorFlow composes them,
//! so tapes and `tf.function` traces see them and their gradients are those ops'. Shape
//! checks and their texts are TensorFlow's (including its missing space in the flips'
//! rank error).

use super::convert::{dtype_arg, tensor_of};
use super::eager::apply;
use super::ops::arg;
use super::{given, set_all, Body, TfError};
use crate::lang::{Args, Ctx, NativeClass, NativeModule, PyResult, Value};
use crate::ops::{self, Binary, Eager, OpResult, ReduceKind, SliceItem, Tensor, Unary};
use crate::tensor::{shape_str, DType};

/// TensorFlow's `_AssertAtLeast3DImage`.
fn at_least_3d(t: &Tensor) -> PyResult<()> {
    if t.ndim() < 3 {
        return Err(TfError::Value(format!(
            "'image' (shape {}) must be at least three-dimensional.",
            shape_str(t.shape())
        ))
        .into());
    }
    Ok(())
}

/// A 3-D or 4-D image; `gap` is the text between the shape and "must" (TF's flips leave
/// out the space).
fn image_3d_or_4d(v: &Value, gap: &str, ctx: &mut dyn Ctx) -> PyResult<Tensor> {
    let t = tensor_of(v, ctx)?;
    at_least_3d(&t)?;
    if t.ndim() > 4 {
        return Err(TfError::Value(format!(
            "'image' (shape {}){gap}must have either 3 or 4 dimensions.",
            shape_str(t.shape())
        ))
        .into());
    }
    Ok(t)
}

/// `x` reversed along `axes` (TF's `reverse_v2`), as a strided slice with stride -1.
fn reverse(e: &mut Eager, x: &Tensor, axes: &[usize]) -> OpResult<Tensor> {
    let spec: Vec<SliceItem> = (0..x.ndim())
        .map(|d| {
            let step = if axes.contains(&d) { -1 } else { 1 };
            SliceItem::Range(None, None, Some(step))
        })
        .collect();
    ops::strided_slice(e, x, &spec)
}

/// A flip along the height (`axis_from_end` 3) or width (2) axis of a 3-D or 4-D image.
fn flip(args: &Args, func: &str, axis_from_end: usize, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(func, &["image"], 1)?;
    let t = image_3d_or_4d(arg(&s, 0), "", ctx)?;
    let axis = t.ndim() - axis_from_end;
    apply(ctx, |e| reverse(e, &t, &[axis]))
}

fn rot90(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("rot90", &["image", "k", "name"], 1)?;
    let t = image_3d_or_4d(arg(&s, 0), " ", ctx)?;
    let k = match given(&s[1]) {
        None => 1,
        Some(Value::Int(k)) => *k,
        Some(Value::Bool(b)) => *b as i64,
        // An integer scalar tensor (or numpy integer) counts as its value.
        Some(v) if tensor_of(v, ctx).is_ok_and(|t| t.ndim() == 0 && t.dtype().is_int()) => {
            tensor_of(v, ctx)?
                .value()
                .to_i64_vec()
                .1
                .first()
                .copied()
                .unwrap_or(1)
        }
        Some(v) => {
            let shown = ctx.repr(v)?;
            return Err(TfError::Type(format!(
                "Cannot convert {shown} to EagerTensor of dtype int32"
            ))
            .into());
        }
    };
    // Height and width sit after the batch axis of a 4-D image.
    let b = t.ndim() - 3;
    let mut swap: Vec<i64> = (0..t.ndim() as i64).collect();
    swap.swap(b, b + 1);
    apply(ctx, |e| match k.rem_euclid(4) {
        1 => {
            let r = reverse(e, &t, &[b + 1])?;
            ops::transpose(e, &r, &swap)
        }
        2 => reverse(e, &t, &[b, b + 1]),
        3 => {
            let r = ops::transpose(e, &t, &swap)?;
            reverse(e, &r, &[b + 1])
        }
        _ => ops::identity(e, &t),
    })
}

/// The largest value of an integer dtype, as TF's `dtype.max`.
fn int_max(d: DType) -> i64 {
    match d {
        DType::U8 => u8::MAX as i64,
        DType::I32 => i32::MAX as i64,
        _ => i64::MAX,
    }
}

/// `x` cast to `to`, clipped to `to`'s range first when `saturate` (TF's `saturate_cast`).
fn cast(e: &mut Eager, x: &Tensor, to: DType, saturate: bool) -> OpResult<Tensor> {
    let x = if saturate && to.is_int() && int_max(to) < int_max_of(x.dtype()) {
        let lo = Tensor::scalar(
            if to == DType::U8 {
                0.0
            } else {
                -(int_max(to) as f64) - 1.0
            },
            x.dtype(),
        );
        let hi = Tensor::scalar(int_max(to) as f64, x.dtype());
        let up = ops::binary(e, Binary::Maximum, x, &lo)?;
        ops::binary(e, Binary::Minimum, &up, &hi)?
    } else {
        x.clone()
    };
    // A float beyond an integer's range wraps as TensorFlow's CPU kernel does (through
    // int64, then truncated to the narrower type), rather than saturating.
    if x.dtype().is_float() && to.is_int() && to != DType::I64 {
        let wide = ops::cast(e, &x, DType::I64)?;
        return ops::cast(e, &wide, to);
    }
    ops::cast(e, &x, to)
}

/// The range a dtype's values span, for deciding whether a saturating cast must clip.
fn int_max_of(d: DType) -> i64 {
    if d.is_float() {
        i64::MAX
    } else {
        int_max(d)
    }
}

fn convert_image_dtype(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "convert_image_dtype",
        &["image", "dtype", "saturate", "name"],
        2,
    )?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    let to = dtype_arg(s[1].as_ref(), ctx)?.unwrap_or(t.dtype());
    let saturate = given(&s[2]).map_or(Ok(false), |v| ctx.truthy(v))?;
    let numeric = |d: DType| d.is_float() || d.is_int();
    if !numeric(to) {
        return Err(
            TfError::Attribute("dtype must be either floating point or integer".into()).into(),
        );
    }
    if !numeric(t.dtype()) {
        return Err(TfError::Attribute(
            "image dtype must be either floating point or integer".into(),
        )
        .into());
    }
    let from = t.dtype();
    apply(ctx, |e| {
        if from == to {
            return ops::identity(e, &t);
        }
        match (from.is_int(), to.is_int()) {
            (true, true) if int_max(from) > int_max(to) => {
                let scale = (int_max(from) as i128 + 1) / (int_max(to) as i128 + 1);
                let scaled =
                    ops::binary(e, Binary::FloorDiv, &t, &Tensor::scalar(scale as f64, from))?;
                cast(e, &scaled, to, saturate)
            }
            (true, true) => {
                let c = cast(e, &t, to, saturate)?;
                let scale = (int_max(to) as i128 + 1) / (int_max(from) as i128 + 1);
                ops::mul(e, &c, &Tensor::scalar(scale as f64, to))
            }
            (false, false) => ops::cast(e, &t, to),
            (true, false) => {
                let c = ops::cast(e, &t, to)?;
                ops::mul(e, &c, &Tensor::scalar(1.0 / int_max(from) as f64, to))
            }
            (false, true) => {
                let scaled = ops::mul(e, &t, &Tensor::scalar(int_max(to) as f64 + 0.5, from))?;
                cast(e, &scaled, to, saturate)
            }
        }
    })
}

fn per_image_standardization(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("per_image_standardization", &["image"], 1)?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    at_least_3d(&t)?;
    let pixels: usize = t.shape()[t.ndim() - 3..].iter().product();
    apply(ctx, |e| {
        let x = if t.dtype() == DType::F32 {
            t.clone()
        } else {
            ops::cast(e, &t, DType::F32)?
        };
        let axes = Some(vec![-1, -2, -3]);
        let mean = ops::reduce(e, &x, ReduceKind::Mean, axes.clone(), true)?;
        let std = ops::reduce_std(e, &x, axes, true)?;
        let min_std = ops::unary(e, Unary::Rsqrt, &Tensor::scalar(pixels as f64, DType::F32))?;
        let adjusted = ops::binary(e, Binary::Maximum, &std, &min_std)?;
        let centred = ops::sub(e, &x, &mean)?;
        ops::div(e, &centred, &adjusted)
    })
}

/// `tf.image.ResizeMethod`'s names and the strings they stand for.
const RESIZE_METHODS: &[(&str, &str)] = &[
    ("AREA", "area"),
    ("BICUBIC", "bicubic"),
    ("BILINEAR", "bilinear"),
    ("GAUSSIAN", "gaussian"),
    ("LANCZOS3", "lanczos3"),
    ("LANCZOS5", "lanczos5"),
    ("MITCHELLCUBIC", "mitchellcubic"),
    ("NEAREST_NEIGHBOR", "nearest"),
];

fn resize_method_class() -> Value {
    RESIZE_METHODS
        .iter()
        .fold(
            NativeClass::new(
                "ResizeMethod",
                "tensorflow.python.ops.image_ops_impl",
                "See `tf.image.resize` for details.",
            ),
            |class, (name, method)| class.static_attr(name, Value::str(method)),
        )
        .into_value()
}

/// `size` of `tf.image.resize`: two positive integers, with TF's errors for another shape
/// or dtype.
fn resize_size(v: &Value, ctx: &mut dyn Ctx) -> PyResult<(i64, i64)> {
    let size = tensor_of(v, ctx)?;
    if size.shape() != [2] {
        return Err(TfError::Value(
            "'size' must be a 1-D Tensor of 2 elements: new_height, new_width".into(),
        )
        .into());
    }
    if !size.dtype().is_int() {
        return Err(TfError::Value("'size' must be a 1-D int32 Tensor".into()).into());
    }
    match size.value().to_i64_vec().1.as_slice() {
        [h, w] => Ok((*h, *w)),
        _ => Err(TfError::Value(
            "'size' must be a 1-D Tensor of 2 elements: new_height, new_width".into(),
        )
        .into()),
    }
}

/// The size `preserve_aspect_ratio=True` resizes an `h` x `w` image to: the largest that
/// fits in `height` x `width` at the image's own aspect ratio, computed in float32 and
/// rounded half to even, as TF's graph computes it.
fn fit_aspect(h: usize, w: usize, (height, width): (i64, i64)) -> (i64, i64) {
    let (h, w) = (h as f32, w as f32);
    let scale = (height as f32 / h).min(width as f32 / w);
    (
        (scale * h).round_ties_even() as i64,
        (scale * w).round_ties_even() as i64,
    )
}

/// `tf.image.resize(images, size, method='bilinear', preserve_aspect_ratio=False,
/// antialias=False)`: a 3-D image or a 4-D batch resampled to `size`.
fn resize(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "resize",
        &[
            "images",
            "size",
            "method",
            "preserve_aspect_ratio",
            "antialias",
            "name",
        ],
        2,
    )?;
    let t = tensor_of(arg(&s, 0), ctx)?;
    if !(3..=4).contains(&t.ndim()) {
        return Err(TfError::Value("'images' must have either 3 or 4 dimensions.".into()).into());
    }
    let (mut height, mut width) = resize_size(arg(&s, 1), ctx)?;
    let method = match given(&s[2]) {
        None => "bilinear".to_string(),
        Some(v) => ctx.str(v)?,
    };
    let method = match method.as_str() {
        "bilinear" => ops::Interpolation::Bilinear,
        "nearest" => ops::Interpolation::Nearest,
        known if RESIZE_METHODS.iter().any(|(_, m)| *m == known) => {
            return Err(TfError::NotImplemented(format!(
                "tf.image.resize with method='{known}' is not supported by this kernel;                  'bilinear' (the default) and 'nearest' are."
            ))
            .into())
        }
        other => {
            return Err(
                TfError::Value(format!("Resize method is not implemented: {other}")).into(),
            )
        }
    };
    if let Some(v) = given(&s[4]) {
        if ctx.truthy(v)? {
            return Err(TfError::NotImplemented(
                "tf.image.resize with antialias=True is not supported by this kernel;                  resize without it."
                    .into(),
            )
            .into());
        }
    }
    let batched = t.ndim() == 4;
    let dims = t.shape().to_vec();
    let (h, w) = (dims[dims.len() - 3], dims[dims.len() - 2]);
    if let Some(v) = given(&s[3]) {
        if ctx.truthy(v)? && h > 0 && w > 0 {
            (height, width) = fit_aspect(h, w, (height, width));
        }
    }
    // A negative size is the kernel's error, as zero is.
    let size = (height.max(0) as usize, width.max(0) as usize);
    apply(ctx, |e| {
        let x = if batched {
            t.clone()
        } else {
            ops::expand_dims(e, &t, 0)?
        };
        let y = ops::resize_images(e, &x, size, method)?;
        if batched {
            Ok(y)
        } else {
            ops::squeeze(e, &y, &[0])
        }
    })
}

/// The functions of `tf.image`: signature (whose text before `(` is the name), body.
const FUNCTIONS: &[(&str, Body)] = &[
    ("flip_left_right(image)", |a, ctx| {
        flip(a, "flip_left_right", 2, ctx)
    }),
    ("flip_up_down(image)", |a, ctx| {
        flip(a, "flip_up_down", 3, ctx)
    }),
    ("rot90(image, k=1, name=None)", rot90),
    (
        "convert_image_dtype(image, dtype, saturate=False, name=None)",
        convert_image_dtype,
    ),
    (
        "per_image_standardization(image)",
        per_image_standardization,
    ),
    (
        "resize(images, size, method='bilinear', preserve_aspect_ratio=False, \
         antialias=False, name=None)",
        resize,
    ),
];

/// The `tf.image` module.
pub fn module() -> Value {
    let m = NativeModule::new("tensorflow.image", "Image ops.");
    set_all(&m, FUNCTIONS);
    m.with("ResizeMethod", resize_method_class()).into_value()
}
