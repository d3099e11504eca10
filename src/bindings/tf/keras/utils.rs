//! `tf.keras.utils.to_categorical` (one-hot rows as float64, as Keras returns them),
//! `get_file` (from `get_file.rs`) and
//! `tf.keras.activations` (functions on tensors that layers also accept by name; on
//! tensors they are the op library's activations, `tf.nn`'s).

use std::any::Any;

use super::super::convert::{numpy_value, tensor_err, to_array};
use super::super::given;
use crate::lang::{Args, Ctx, NativeModule, Object, PyErr, PyResult, Value};
use crate::tensor::{DType, NdArray};

fn to_categorical(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("to_categorical", &["x", "num_classes"], 1)?;
    let a = to_array(
        s[0].as_ref().unwrap_or(&Value::None),
        Some(DType::I64),
        false,
        ctx,
    )?;
    let (_, labels) = a.to_i64_vec();
    let max = labels.iter().copied().max().unwrap_or(-1);
    let n = match given(&s[1]) {
        Some(v) => v.as_int()?,
        None => max + 1,
    };
    if labels.iter().any(|l| *l < 0 || *l >= n) {
        return Err(PyErr::index_error(format!(
            "index {max} is out of bounds for axis 1 with size {n}"
        )));
    }
    let n = n.max(0) as usize;
    let mut data = vec![0.0; labels.len() * n];
    for (i, l) in labels.iter().enumerate() {
        if let Some(x) = data.get_mut(i * n + *l as usize) {
            *x = 1.0;
        }
    }
    // Keras drops a trailing axis of length 1 before adding the class axis.
    let mut shape: Vec<usize> = a.shape().to_vec();
    if shape.len() > 1 && shape.last() == Some(&1) {
        shape.pop();
    }
    shape.push(n);
    NdArray::from_f64(&shape, data)
        .map(numpy_value)
        .map_err(tensor_err)
}

/// An activation function value: callable on tensors, named for `Dense(activation=...)`.
pub struct ActivationFn {
    pub name: &'static str,
}

impl Object for ActivationFn {
    fn type_name(&self) -> String {
        "function".into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!("<function {}>", self.name))
    }
    fn getattr(&self, _this: &Value, name: &str, _ctx: &mut dyn Ctx) -> PyResult<Option<Value>> {
        Ok((name == "__name__").then(|| Value::str(self.name)))
    }
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        super::super::nn::keras_activation(self.name, &args, ctx).unwrap_or_else(|| {
            Err(PyErr::not_implemented(format!(
                "activation {} on tensors",
                self.name
            )))
        })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `keras.utils.set_random_seed(seed)`: seeds NumPy's global generator and TensorFlow's
/// global seed (which the layers' initializers and dropout draw from), as Keras does; the
/// kernel has no `random` module to seed.
fn set_random_seed(args: &Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
    let s = args.bind("set_random_seed", &["seed"], 1)?;
    let v = s[0].clone().unwrap_or(Value::None);
    let seed = match v {
        Value::Int(i) => i,
        Value::Bool(b) => i64::from(b),
        other => {
            let shown = ctx.str(&other)?;
            return Err(PyErr::value_error(format!(
                "Expected `seed` argument to be an integer. Received: seed={shown} (of type \
                 <class '{}'>)",
                other.type_name()
            )));
        }
    };
    crate::bindings::numpy::random::seed_global(seed, ctx)?;
    super::super::random::set_global_seed(Some(seed as u64), ctx);
    Ok(Value::None)
}

/// Registers `utils` and `activations` in `tf.keras`.
pub fn register(keras: &NativeModule) {
    let utils = NativeModule::new("keras.utils", "Keras utilities.")
        .with(
            "to_categorical",
            super::super::func(
                "to_categorical",
                "to_categorical(x, num_classes=None)",
                to_categorical,
            ),
        )
        .with(
            "get_file",
            super::super::func(
                "get_file",
                "get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, \
                 cache_subdir='datasets', hash_algorithm='auto', extract=False, \
                 archive_format='auto', cache_dir=None, force_download=False)",
                super::get_file::get_file,
            ),
        )
        .with(
            "set_random_seed",
            super::super::func("set_random_seed", "set_random_seed(seed)", set_random_seed),
        );
    let acts = NativeModule::new("keras.activations", "Keras activations.");
    for n in [
        "relu",
        "sigmoid",
        "softmax",
        "log_softmax",
        "tanh",
        "linear",
        "elu",
        "selu",
        "gelu",
        "swish",
        "silu",
        "softplus",
        "leaky_relu",
    ] {
        acts.set(n, Value::native(ActivationFn { name: n }));
    }
    for (name, f) in super::saving::registry::members() {
        utils.set(name, f);
    }
    keras.set("utils", utils.into_value());
    keras.set("activations", acts.into_value());
}
