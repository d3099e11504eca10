//! Loading what the engine saved and the small namespaces around it: `tf.keras.models.
//! load_model` / `tf.keras.saving.load_model` (a `.keras` archive back into a model, built
//! under the active strategy's scope, compiled with its optimizer state restored),
//! `tf.keras.datasets.mnist` / `fashion_mnist` / `cifar10` (`load_data()` from the Keras cache), and
//! `tf.errors` (TensorFlow's `OpError` family, owned by the interpreter). The formats and
//! file checks live in `keras::saving` and `keras::datasets`; this file only converts.

use std::cell::RefCell;
use std::path::Path;

use super::distribute::active_strategy;
use super::keras::layers::{kerr, LayerObj};
use super::keras::model::ModelObj;
use super::{func, given};
use crate::keras::datasets::{Array, ArrayData, Split};
use crate::lang::{Args, Ctx, NativeModule, PyErr, PyResult, Value};
use crate::tensor::NdArray;

/// TensorFlow's error classes that `tf.errors` lists, below `OpError`.
const TF_ERRORS: &[&str] = &[
    "OpError",
    "InvalidArgumentError",
    "ResourceExhaustedError",
    "NotFoundError",
    "UnimplementedError",
    "FailedPreconditionError",
    "OutOfRangeError",
    "UnknownError",
    "InternalError",
    "AbortedError",
    "CancelledError",
    "AlreadyExistsError",
    "PermissionDeniedError",
    "DeadlineExceededError",
    "DataLossError",
    "UnavailableError",
    "UnauthenticatedError",
];

/// `tf.errors`: the interpreter's own classes, so `except tf.errors.InvalidArgumentError`
/// catches what the engine raises by that name.
pub fn errors_module(ctx: &mut dyn Ctx) -> Value {
    let m = NativeModule::new("tensorflow.errors", "TensorFlow's exception classes.");
    for name in TF_ERRORS {
        m.set(name, crate::lang::exception_class(ctx, name));
    }
    m.into_value()
}

/// `load_model(filepath, custom_objects=None, compile=True, safe_mode=True)`.
pub fn load_model(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind(
        "load_model",
        &["filepath", "custom_objects", "compile", "safe_mode"],
        1,
    )?;
    let path = s[0].as_ref().unwrap_or(&Value::None).as_str()?.to_string();
    let compile = match given(&s[2]) {
        Some(v) => v.as_bool_strict()?,
        None => true,
    };
    let saved = crate::keras::load_model(Path::new(&path)).map_err(kerr)?;
    let layers: Vec<Value> = saved
        .config
        .layers
        .iter()
        .map(|spec| {
            Value::native(LayerObj {
                kind: Some(spec.kind.clone()),
                input_shape: None,
                name: RefCell::new(Some(spec.name.clone())),
                owner: RefCell::new(None),
            })
        })
        .collect();
    let scope = active_strategy(ctx);
    let m = ModelObj::new(
        layers,
        Some(saved.config.input_shape.clone()),
        saved.config.functional,
        Some(saved.config.name.clone()),
        scope.clone(),
    );
    if compile {
        *m.compiled.borrow_mut() = saved.compile.clone();
        *m.compiled_under.borrow_mut() = scope;
    }
    let v = Value::native(m);
    let model = v
        .downcast::<ModelObj>()
        .ok_or_else(|| PyErr::runtime_error("load_model: the model was not made"))?;
    model.build(&v, &saved.config.input_shape, ctx)?;
    model.with_engine(|e| {
        let t = e.trainer();
        t.set_weights(&saved.weights).map_err(kerr)?;
        if let (true, Some(opt)) = (compile, &saved.optimizer) {
            t.set_optimizer_state(opt).map_err(kerr)?;
        }
        Ok(())
    })?;
    Ok(v)
}

/// `tf.keras.saving`: the functions Keras 3 keeps there.
pub fn saving_module() -> Value {
    NativeModule::new("keras.saving", "Saving and loading Keras models.")
        .with(
            "load_model",
            func(
                "load_model",
                "load_model(filepath, custom_objects=None, compile=True, safe_mode=True)",
                load_model,
            ),
        )
        .into_value()
}

fn array_value(a: Array) -> PyResult<Value> {
    let shape = a.shape;
    let arr = match a.data {
        ArrayData::U8(v) => NdArray::from_u8(&shape, v),
        ArrayData::I32(v) => NdArray::from_i32(&shape, v),
        ArrayData::I64(v) => NdArray::from_i64(&shape, v),
        ArrayData::F32(v) => NdArray::from_f32(&shape, v),
        ArrayData::F64(v) => NdArray::from_f64(&shape, v),
    }
    .map_err(super::convert::tensor_err)?;
    Ok(super::convert::numpy_value(arr))
}

fn split_value(s: Split) -> PyResult<Value> {
    let train = Value::tuple(vec![array_value(s.x_train)?, array_value(s.y_train)?]);
    let test = Value::tuple(vec![array_value(s.x_test)?, array_value(s.y_test)?]);
    Ok(Value::tuple(vec![train, test]))
}

fn dataset(name: &str, doc: &str, body: fn(&Args, &mut dyn Ctx) -> PyResult<Value>) -> Value {
    NativeModule::new(&format!("keras.datasets.{name}"), doc)
        .with("load_data", func("load_data", "load_data()", body))
        .into_value()
}

/// `tf.keras.datasets`: MNIST, Fashion-MNIST and CIFAR-10 from the files Keras caches.
pub fn datasets_module() -> Value {
    NativeModule::new(
        "keras.datasets",
        "Keras's small datasets, read from its cache.",
    )
    .with(
        "mnist",
        dataset("mnist", "MNIST digits.", |args, _| {
            args.bind("load_data", &["path"], 0)?;
            split_value(crate::keras::datasets::mnist().map_err(kerr)?)
        }),
    )
    .with(
        "fashion_mnist",
        dataset("fashion_mnist", "Fashion-MNIST.", |args, _| {
            args.bind("load_data", &[], 0)?;
            split_value(crate::keras::datasets::fashion_mnist().map_err(kerr)?)
        }),
    )
    .with(
        "cifar10",
        dataset("cifar10", "CIFAR-10 small colour images.", |args, _| {
            args.bind("load_data", &[], 0)?;
            split_value(crate::keras::cifar::cifar10().map_err(kerr)?)
        }),
    )
    .into_value()
}
