//! `tf.keras.initializers`: the initializer classes (`Zeros()`, `Constant(0.5)`,
//! `GlorotUniform(seed=1)`, ...) as values a layer accepts for `kernel_initializer` or
//! `add_weight(initializer=...)`, alongside their string names. Each holds the engine's
//! [`Init`], which fills arrays with Keras's formulas; called as `initializer(shape,
//! dtype=None)` it returns such an array as a tensor. A layer also accepts any callable
//! `initializer(shape, dtype=None)` returning an array.

use std::any::Any;

use super::super::convert::{dtype_arg, tensor_value};
use super::layers::base::initial_value;
use super::layers::{kerr, shape_arg};
use crate::keras::Init;
use crate::lang::{Args, Ctx, NativeClass, NativeModule, Object, PyErr, PyResult, Value};
use crate::tensor::DType;

/// An initializer object.
pub struct InitializerObj {
    pub init: Init,
}

impl Object for InitializerObj {
    fn type_name(&self) -> String {
        self.init.keras_name().into()
    }
    fn repr(&self, _ctx: &mut dyn Ctx) -> PyResult<String> {
        Ok(format!(
            "<keras.src.initializers.{}>",
            self.init.keras_name()
        ))
    }
    fn class_chain(&self) -> Vec<String> {
        vec![self.init.keras_name().into(), "Initializer".into()]
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    /// `initializer(shape, dtype=None)`: a new tensor of that shape (float32 by default),
    /// filled as a layer's variable of that shape would be.
    fn call(&self, _this: &Value, args: Args, ctx: &mut dyn Ctx) -> PyResult<Value> {
        let s = args.bind("__call__", &["shape", "dtype"], 1)?;
        let shape = shape_arg(s[0].as_ref().unwrap_or(&Value::None))?;
        let dtype = dtype_arg(super::super::given(&s[1]), ctx)?.unwrap_or(DType::F32);
        let a = initial_value(InitArg::Known(self.init.clone()), &shape, dtype, ctx)?;
        Ok(tensor_value(a))
    }
}

/// What an initializer argument asks for.
pub enum InitArg {
    Known(Init),
    /// A callable `f(shape, dtype=None)`.
    Call(Value),
}

/// Reads `kernel_initializer=...` / `initializer=...`: a name, an initializer object, or a
/// callable; `default` when absent.
pub fn init_arg(v: Option<&Value>, default: Init) -> PyResult<InitArg> {
    match v {
        None => Ok(InitArg::Known(default)),
        Some(Value::Str(s)) => Init::parse(&snake(s)).map(InitArg::Known).map_err(kerr),
        Some(other) => match other.downcast::<InitializerObj>() {
            Some(i) => Ok(InitArg::Known(i.init.clone())),
            None => Ok(InitArg::Call(other.clone())),
        },
    }
}

/// `GlorotUniform` as `glorot_uniform`: Keras accepts both spellings of a name.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn opt_f32(s: &[Option<Value>], i: usize, default: f32) -> PyResult<f32> {
    match super::super::given(&s[i]) {
        Some(v) => Ok(v.as_float()? as f32),
        None => Ok(default),
    }
}

fn class(
    name: &str,
    params: &'static [&'static str],
    make: fn(&[Option<Value>]) -> PyResult<Init>,
) -> Value {
    let cls = name.to_string();
    NativeClass::new(name, "keras.src.initializers", "")
        .base("Initializer")
        .constructor(move |a: &Args, _c: &mut dyn Ctx| {
            let s = a.bind(&cls, params, 0)?;
            Ok(Value::native(InitializerObj { init: make(&s)? }))
        })
        .into_value()
}

/// `tf.keras.initializers`.
pub fn module() -> Value {
    let m = NativeModule::new("keras.initializers", "Keras initializers.");
    let seeded: &[(&str, Init)] = &[
        ("GlorotUniform", Init::GlorotUniform),
        ("GlorotNormal", Init::GlorotNormal),
        ("HeNormal", Init::HeNormal),
        ("HeUniform", Init::HeUniform),
        ("LecunNormal", Init::LecunNormal),
        ("LecunUniform", Init::LecunUniform),
    ];
    for (name, init) in seeded {
        let init = init.clone();
        let cls = name.to_string();
        m.set(
            name,
            NativeClass::new(name, "keras.src.initializers", "")
                .base("Initializer")
                .constructor(move |a: &Args, _c: &mut dyn Ctx| {
                    a.bind(&cls, &["seed"], 0)?;
                    Ok(Value::native(InitializerObj { init: init.clone() }))
                })
                .into_value(),
        );
    }
    m.set("Zeros", class("Zeros", &[], |_| Ok(Init::Zeros)));
    m.set("Ones", class("Ones", &[], |_| Ok(Init::Ones)));
    m.set(
        "Constant",
        class("Constant", &["value"], |s| {
            Ok(Init::Constant(opt_f32(s, 0, 0.0)?))
        }),
    );
    m.set(
        "RandomNormal",
        class("RandomNormal", &["mean", "stddev", "seed"], |s| {
            Ok(Init::RandomNormal {
                mean: opt_f32(s, 0, 0.0)?,
                stddev: opt_f32(s, 1, 0.05)?,
            })
        }),
    );
    m.set(
        "RandomUniform",
        class("RandomUniform", &["minval", "maxval", "seed"], |s| {
            let (lo, hi) = (opt_f32(s, 0, -0.05)?, opt_f32(s, 1, 0.05)?);
            if hi <= lo {
                return Err(PyErr::value_error(format!(
                    "Invalid value for `maxval`: it must be greater than `minval` ({lo}), \
                     received: {hi}"
                )));
            }
            Ok(Init::RandomUniform {
                minval: lo,
                maxval: hi,
            })
        }),
    );
    for alias in [
        ("zeros", "Zeros"),
        ("ones", "Ones"),
        ("constant", "Constant"),
        ("glorot_uniform", "GlorotUniform"),
        ("glorot_normal", "GlorotNormal"),
        ("he_normal", "HeNormal"),
        ("he_uniform", "HeUniform"),
        ("random_normal", "RandomNormal"),
        ("random_uniform", "RandomUniform"),
    ] {
        let class = m.attrs.borrow().get(alias.1).cloned();
        if let Some(v) = class {
            m.set(alias.0, v);
        }
    }
    m.into_value()
}
