//! `tf.keras.datasets`: `mnist`, `fashion_mnist` and `cifar10`, whose `load_data()` reads
//! the files Keras caches (no network), returning numpy arrays in Keras's dtypes. The
//! readers and their file checks live in `keras::datasets` and `keras::cifar`; this file
//! only converts their arrays to numpy values.

use super::layers::kerr;
use crate::bindings::tf::func;
use crate::keras::datasets::{Array, Split};
use crate::lang::{Args, Ctx, NativeModule, PyResult, Value};

fn array_value(a: Array) -> PyResult<Value> {
    let arr = a
        .into_ndarray()
        .map_err(crate::bindings::tf::convert::tensor_err)?;
    Ok(crate::bindings::tf::convert::numpy_value(arr))
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
