//! A model's configuration as Keras-like JSON (`class_name` / `config` / `layers`, the shape
//! of Keras 3's `config.json`), and back. Only what this engine builds is written and read;
//! a config naming a layer we do not have fails with the list of supported ones.

use crate::device::LossKind;
use crate::keras::compile::{
    loss_name, CompileConfig, Metric, MetricSpec, OptKind, OptimizerConfig,
};
use crate::keras::config::{Act, Init, LayerKind, LayerSpec, MergeOp, ModelConfig, Padding};
use crate::keras::error::{KResult, KerasError};
use serde_json::{json, Value};

/// A float32 argument as the Python float it was given as (`0.05`, not the float32's
/// `0.05000000074505806`): the shortest decimal that reads back as the same float32.
fn given_float(v: f32) -> Value {
    json!(v.to_string().parse::<f64>().unwrap_or(f64::from(v)))
}

/// An initializer as Keras serializes it (in `config.json` and in `get_config()`).
pub fn init_json(i: &Init) -> Value {
    let f = |v: &f32| given_float(*v);
    let config = match i {
        // Keras 3's `get_config` puts the base class's `seed` first.
        Init::RandomNormal { mean, stddev } => {
            json!({"seed": null, "mean": f(mean), "stddev": f(stddev)})
        }
        Init::RandomUniform { minval, maxval } => {
            json!({"seed": null, "minval": f(minval), "maxval": f(maxval)})
        }
        Init::Constant(v) => json!({ "value": f(v) }),
        Init::Zeros | Init::Ones => json!({}),
        Init::Orthogonal { gain } => json!({"seed": null, "gain": f(gain)}),
        Init::ForgetGateOnes(inner) => return init_json(inner),
        // The variance-scaling family (Glorot, He, Lecun) as Keras 3.15 writes it.
        _ => json!({"seed": null, "input_axes": null, "output_axes": null}),
    };
    json!({"module": "keras.initializers", "class_name": i.keras_name(), "config": config, "registered_name": null})
}

fn batch_shape(shape: &[usize]) -> Value {
    let mut v = vec![Value::Null];
    v.extend(shape.iter().map(|d| json!(d)));
    Value::Array(v)
}

pub(super) fn layer_json(l: &LayerSpec, input: &[usize]) -> Value {
    let mut c = json!({"name": l.name, "trainable": true, "dtype": "float32"});
    let extra = kind_config(&l.kind);
    if let (Some(c), Some(e)) = (c.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    json!({"module": "keras.layers", "class_name": l.kind.class_name(), "config": c,
        "registered_name": null, "build_config": {"input_shape": batch_shape(input)}})
}

/// A layer's own entries of its config (after `name`, `trainable` and `dtype`), in Keras
/// 3.15's order: what `config.json` holds and what `get_config()` shows.
pub fn kind_config(kind: &LayerKind) -> Value {
    match kind {
        LayerKind::Dense {
            units,
            activation,
            use_bias,
            kernel_initializer,
            bias_initializer,
        } => json!({"units": units, "activation": activation.keras_name(), "use_bias": use_bias,
            "kernel_initializer": init_json(kernel_initializer),
            "bias_initializer": init_json(bias_initializer),
            "kernel_regularizer": null, "bias_regularizer": null,
            "kernel_constraint": null, "bias_constraint": null}),
        LayerKind::Conv2D {
            filters,
            kernel_size,
            strides,
            padding,
            activation,
            use_bias,
            kernel_initializer,
            bias_initializer,
        } => json!({"filters": filters, "kernel_size": [kernel_size.0, kernel_size.1],
            "strides": [strides.0, strides.1], "padding": padding.keras_name(),
            "data_format": "channels_last", "dilation_rate": [1, 1], "groups": 1,
            "activation": activation.keras_name(), "use_bias": use_bias,
            "kernel_initializer": init_json(kernel_initializer),
            "bias_initializer": init_json(bias_initializer)}),
        LayerKind::MaxPooling2D {
            pool_size,
            strides,
            padding,
        } => json!({"pool_size": [pool_size.0, pool_size.1], "strides": [strides.0, strides.1],
            "padding": padding.keras_name(), "data_format": "channels_last"}),
        LayerKind::Flatten => json!({"data_format": "channels_last"}),
        LayerKind::Reshape { target_shape } => json!({ "target_shape": target_shape }),
        LayerKind::Dropout { rate, seed } => {
            json!({"rate": rate, "seed": seed, "noise_shape": null})
        }
        LayerKind::Activation(a) => json!({"activation": a.keras_name()}),
        LayerKind::Softmax => json!({"axis": -1}),
        LayerKind::Merge(MergeOp::Concatenate { axis }) => json!({ "axis": axis }),
        LayerKind::Merge(_) => json!({}),
        LayerKind::Norm(n) => super::super::norm::config_json(n, init_json),
        LayerKind::Stateless(s) => super::super::stateless::config_json(s),
        LayerKind::Embedding {
            input_dim,
            output_dim,
            embeddings_initializer,
            mask_zero,
        } => json!({"input_dim": input_dim, "output_dim": output_dim,
            "embeddings_initializer": init_json(embeddings_initializer),
            "embeddings_regularizer": null, "activity_regularizer": null,
            "embeddings_constraint": null, "mask_zero": mask_zero, "quantization_config": null}),
        LayerKind::Recurrent(r) => r.config_json(init_json),
        LayerKind::Conv1D(c) => c.config_json(init_json),
        LayerKind::Bidirectional(b) => b.config_json(init_json),
    }
}

/// The optimizer's Keras config.
pub fn optimizer_json(o: &OptimizerConfig) -> Value {
    let mut c = json!({"name": o.class_name().to_lowercase(), "learning_rate": o.learning_rate});
    let extra = match o.kind {
        OptKind::Sgd { momentum, nesterov } => json!({"momentum": momentum, "nesterov": nesterov}),
        OptKind::Adam {
            beta_1,
            beta_2,
            epsilon,
        } => json!({"beta_1": beta_1, "beta_2": beta_2, "epsilon": epsilon, "amsgrad": false}),
        OptKind::AdamW {
            beta_1,
            beta_2,
            epsilon,
            weight_decay,
        } => json!({"beta_1": beta_1, "beta_2": beta_2, "epsilon": epsilon, "amsgrad": false,
            "weight_decay": weight_decay}),
        OptKind::RmsProp {
            rho,
            momentum,
            epsilon,
            centered,
        } => json!({"rho": rho, "momentum": momentum, "epsilon": epsilon, "centered": centered}),
        OptKind::Adagrad {
            initial_accumulator_value,
            epsilon,
        } => json!({"initial_accumulator_value": initial_accumulator_value, "epsilon": epsilon}),
    };
    if let (Some(c), Some(e)) = (c.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    json!({"module": "keras.optimizers", "class_name": o.class_name(), "config": c, "registered_name": null})
}

/// The loss as Keras's `compile_config` holds it: its name, or a serialized loss object
/// when it has options (`from_logits`, `delta`), which `Trainer.compile` accepts as given.
pub fn loss_json(loss: &LossKind) -> Value {
    let (class, config) = match *loss {
        LossKind::BinaryCrossentropy { from_logits: true } => {
            ("BinaryCrossentropy", json!({"from_logits": true}))
        }
        LossKind::CategoricalCrossentropy { from_logits: true } => {
            ("CategoricalCrossentropy", json!({"from_logits": true}))
        }
        LossKind::SparseCategoricalCrossentropy { from_logits: true } => (
            "SparseCategoricalCrossentropy",
            json!({"from_logits": true}),
        ),
        LossKind::Huber { delta } if delta != 1.0 => ("Huber", json!({ "delta": delta })),
        _ => return json!(loss_name(loss)),
    };
    json!({"module": "keras.losses", "class_name": class, "config": config, "registered_name": null})
}

/// A functional chain as Keras 3 writes one: each layer names itself and the layer it is
/// called on (`inbound_nodes`, with the shape of the tensor it receives), and the model its
/// `input_layers` and `output_layers`. `layers` starts with the input layer; `shapes` are
/// the shapes the layers produce, the input's first.
fn functional_json(m: &ModelConfig, mut layers: Vec<Value>, shapes: &[Vec<usize>]) -> Value {
    let mut prev: Option<Value> = None;
    for (l, shape) in layers.iter_mut().zip(shapes) {
        let name = l
            .get("config")
            .and_then(|c| c.get("name"))
            .cloned()
            .unwrap_or(Value::Null);
        let nodes = match &prev {
            None => json!([]),
            Some(p) => json!([{"args": [{"class_name": "__keras_tensor__",
                "config": {"shape": p.get("shape"), "dtype": "float32",
                    "keras_history": [p.get("name"), 0, 0]}}],
                "kwargs": {}}]),
        };
        if let Some(obj) = l.as_object_mut() {
            obj.insert("name".into(), name.clone());
            obj.insert("inbound_nodes".into(), nodes);
        }
        prev = Some(json!({"name": name, "shape": batch_shape(shape)}));
    }
    let last = m
        .layers
        .last()
        .map_or(m.input_name.as_str(), |l| l.name.as_str());
    json!({"module": "keras.src.models.functional", "class_name": "Functional",
        "config": {"name": m.name, "trainable": true, "layers": layers,
            "input_layers": [m.input_name, 0, 0], "output_layers": [last, 0, 0]},
        "registered_name": "Functional", "build_config": {"input_shape": null}})
}

/// The whole `config.json`: the model, and `compile_config` when it was compiled.
pub fn model_json(m: &ModelConfig, compile: Option<&CompileConfig>) -> KResult<Value> {
    let plan = m.plan()?;
    let mut layers = vec![input_layer_json(&m.input_name, &m.input_shape)];
    for (l, ins) in m.layers.iter().zip(&plan.in_shapes) {
        layers.push(layer_json(l, ins));
    }
    let mut v = if m.functional {
        let shapes: Vec<Vec<usize>> = std::iter::once(m.input_shape.clone())
            .chain(plan.out_shapes.iter().cloned())
            .collect();
        functional_json(m, layers, &shapes)
    } else {
        sequential_json(&m.name, &m.input_shape, layers)
    };
    if let (Some(c), Some(obj)) = (compile, v.as_object_mut()) {
        obj.insert("compile_config".into(), compile_json(c));
    }
    Ok(v)
}

/// The `InputLayer` entry that opens a Sequential's layers.
pub fn input_layer_json(name: &str, shape: &[usize]) -> Value {
    json!({"module": "keras.layers", "class_name": "InputLayer",
        "config": {"batch_shape": batch_shape(shape), "dtype": "float32",
        "sparse": false, "name": name}, "registered_name": null})
}

/// A Sequential's entry of `config.json` around its layers' entries (the `InputLayer`
/// first), without `compile_config`.
pub fn sequential_json(name: &str, input_shape: &[usize], layers: Vec<Value>) -> Value {
    json!({"module": "keras", "class_name": "Sequential",
    "config": {"name": name, "trainable": true, "dtype": "float32", "layers": layers,
        "build_input_shape": batch_shape(input_shape)},
    "registered_name": null, "build_config": {"input_shape": batch_shape(input_shape)}})
}

/// A built-in layer's entry of `config.json`, built for inputs of `input` features (the
/// batch axis left out), for a model described by its objects.
pub fn builtin_layer_json(name: &str, kind: &LayerKind, input: &[usize]) -> Value {
    let spec = LayerSpec {
        name: name.to_string(),
        kind: kind.clone(),
    };
    layer_json(&spec, input)
}

/// The built-in layer an entry of `config.json` describes (None for an `InputLayer`).
pub fn builtin_layer_from(v: &Value) -> KResult<Option<LayerSpec>> {
    layer_from(v)
}

/// The `weighted_metrics` of a compile config as `compile` took them (Keras's `weighted_`
/// before a name already logged is the log's, not the metric's), or null.
fn weighted_names(c: &CompileConfig) -> Value {
    if c.weighted == 0 {
        return Value::Null;
    }
    let names: Vec<String> = c
        .metrics
        .iter()
        .enumerate()
        .filter(|(i, _)| c.is_weighted(*i))
        .map(|(_, (n, _))| n.strip_prefix("weighted_").unwrap_or(n).to_string())
        .collect();
    json!(names)
}

/// Keras's `compile_config`: the arguments `compile` was given, serialized. A model of
/// several outputs lists a loss per output, the loss weights when any is not 1, and each
/// output's metrics by the names they were given (`accuracy`, not `kind_accuracy`), and
/// the weighted metrics apart.
pub fn compile_json(c: &CompileConfig) -> Value {
    let (loss, weights, metrics) = if c.heads.is_empty() {
        let names: Vec<&String> = c
            .metrics
            .iter()
            .enumerate()
            .filter(|(i, _)| !c.is_weighted(*i))
            .map(|(_, (n, _))| n)
            .collect();
        (loss_json(&c.loss), Value::Null, json!(names))
    } else {
        let losses: Vec<Value> = c.heads.iter().map(|h| loss_json(&h.loss)).collect();
        let weights = if c.heads.iter().all(|h| h.weight == 1.0) {
            Value::Null
        } else {
            json!(c
                .heads
                .iter()
                .map(|h| given_float(h.weight))
                .collect::<Vec<_>>())
        };
        let metrics: Vec<Value> = c
            .heads
            .iter()
            .map(|h| {
                let prefix = format!("{}_", h.name);
                let names: Vec<&str> = h
                    .metrics
                    .iter()
                    .map(|(n, _)| n.strip_prefix(&prefix).unwrap_or(n))
                    .collect();
                json!(names)
            })
            .collect();
        (Value::Array(losses), weights, Value::Array(metrics))
    };
    json!({"optimizer": optimizer_json(&c.optimizer), "loss": loss, "loss_weights": weights,
        "metrics": metrics, "weighted_metrics": weighted_names(c), "run_eagerly": false,
        "steps_per_execution": 1, "jit_compile": false})
}

fn bad(what: &str) -> KerasError {
    KerasError::Value(format!("The saved model config is not valid: {what}."))
}

fn get<'a>(v: &'a Value, key: &str) -> KResult<&'a Value> {
    v.get(key).ok_or_else(|| bad(&format!("missing \"{key}\"")))
}
fn uint(v: &Value, key: &str) -> KResult<usize> {
    get(v, key)?
        .as_u64()
        .map(|x| x as usize)
        .ok_or_else(|| bad(&format!("\"{key}\" is not a non-negative integer")))
}
fn float(v: &Value, key: &str, default: f32) -> f32 {
    v.get(key)
        .and_then(Value::as_f64)
        .map_or(default, |x| x as f32)
}
fn flag(v: &Value, key: &str, default: bool) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(default)
}
fn string<'a>(v: &'a Value, key: &str, default: &'a str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or(default)
}
fn pair(v: &Value, key: &str, default: (usize, usize)) -> KResult<(usize, usize)> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(|n| (n as usize, n as usize))
            .ok_or_else(|| bad(key)),
        Some(Value::Array(a)) => match a.as_slice() {
            [x, y] => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => Ok((x as usize, y as usize)),
                _ => Err(bad(key)),
            },
            _ => Err(bad(key)),
        },
        _ => Err(bad(key)),
    }
}
fn init(v: &Value, key: &str, default: Init) -> KResult<Init> {
    let Some(i) = v.get(key) else {
        return Ok(default);
    };
    if let Some(s) = i.as_str() {
        return Init::parse(s);
    }
    let c = i.get("config").cloned().unwrap_or(json!({}));
    Ok(match string(i, "class_name", "") {
        "RandomNormal" => Init::RandomNormal {
            mean: float(&c, "mean", 0.0),
            stddev: float(&c, "stddev", 0.05),
        },
        "RandomUniform" => Init::RandomUniform {
            minval: float(&c, "minval", -0.05),
            maxval: float(&c, "maxval", 0.05),
        },
        "Constant" => Init::Constant(float(&c, "value", 0.0)),
        "Orthogonal" => Init::Orthogonal {
            gain: float(&c, "gain", 1.0),
        },
        other => {
            // Class names are the snake-case names in CamelCase.
            let snake: String = other
                .chars()
                .enumerate()
                .fold(String::new(), |mut s, (i, ch)| {
                    if ch.is_ascii_uppercase() && i > 0 {
                        s.push('_');
                    }
                    s.push(ch.to_ascii_lowercase());
                    s
                });
            Init::parse(&snake)?
        }
    })
}

pub(super) fn layer_from(v: &Value) -> KResult<Option<LayerSpec>> {
    let class = string(v, "class_name", "");
    let c = get(v, "config")?;
    let act = |key| Act::parse(string(c, key, "linear"));
    let kind = match class {
        "InputLayer" => return Ok(None),
        "Dense" => LayerKind::Dense {
            units: uint(c, "units")?,
            activation: act("activation")?,
            use_bias: flag(c, "use_bias", true),
            kernel_initializer: init(c, "kernel_initializer", Init::GlorotUniform)?,
            bias_initializer: init(c, "bias_initializer", Init::Zeros)?,
        },
        "Conv2D" => LayerKind::Conv2D {
            filters: uint(c, "filters")?,
            kernel_size: pair(c, "kernel_size", (3, 3))?,
            strides: pair(c, "strides", (1, 1))?,
            padding: Padding::parse(string(c, "padding", "valid"))?,
            activation: act("activation")?,
            use_bias: flag(c, "use_bias", true),
            kernel_initializer: init(c, "kernel_initializer", Init::GlorotUniform)?,
            bias_initializer: init(c, "bias_initializer", Init::Zeros)?,
        },
        "MaxPooling2D" => {
            let pool = pair(c, "pool_size", (2, 2))?;
            LayerKind::MaxPooling2D {
                pool_size: pool,
                strides: pair(c, "strides", pool)?,
                padding: Padding::parse(string(c, "padding", "valid"))?,
            }
        }
        "Flatten" => LayerKind::Flatten,
        "Reshape" => LayerKind::Reshape {
            target_shape: get(c, "target_shape")?
                .as_array()
                .ok_or_else(|| bad("target_shape"))?
                .iter()
                .map(|d| d.as_i64().ok_or_else(|| bad("target_shape")))
                .collect::<KResult<_>>()?,
        },
        "Dropout" => LayerKind::Dropout {
            rate: float(c, "rate", 0.0),
            seed: c.get("seed").and_then(Value::as_u64),
        },
        "Activation" => LayerKind::Activation(act("activation")?),
        "Embedding" => LayerKind::Embedding {
            mask_zero: flag(c, "mask_zero", false),
            input_dim: uint(c, "input_dim")?,
            output_dim: uint(c, "output_dim")?,
            embeddings_initializer: init(
                c,
                "embeddings_initializer",
                Init::RandomUniform {
                    minval: -0.05,
                    maxval: 0.05,
                },
            )?,
        },
        "Softmax" => LayerKind::Softmax,
        "Conv1D" => LayerKind::Conv1D(crate::keras::conv1d::from_config(c, init)?),
        "Bidirectional" => {
            LayerKind::Bidirectional(Box::new(crate::keras::bidirectional::from_config(c, init)?))
        }
        "BatchNormalization" | "LayerNormalization" => {
            match crate::keras::norm::from_config(class, c, init) {
                Some(n) => LayerKind::Norm(n?),
                None => return Err(bad(class)),
            }
        }
        other if MergeOp::CLASSES.contains(&other) => {
            let axis = c.get("axis").and_then(Value::as_i64);
            match MergeOp::from_config(other, axis) {
                Some(m) => LayerKind::Merge(m),
                None => return Err(bad(other)),
            }
        }
        other => match crate::keras::stateless::from_config(other, c) {
            Some(s) => LayerKind::Stateless(s?),
            None if crate::keras::recurrent::CLASSES.contains(&other) => {
                match crate::keras::recurrent::from_config(other, c, init) {
                    Some(r) => LayerKind::Recurrent(r?),
                    None => return Err(bad(other)),
                }
            }
            None => {
                let mut known = vec![
                    "InputLayer",
                    "Dense",
                    "Conv1D",
                    "Conv2D",
                    "MaxPooling2D",
                    "Flatten",
                    "Reshape",
                    "Dropout",
                    "Activation",
                    "Softmax",
                    "Embedding",
                    "Bidirectional",
                ];
                known.extend(MergeOp::CLASSES);
                known.extend(crate::keras::norm::CLASSES);
                known.extend(crate::keras::stateless::CLASSES);
                known.extend(crate::keras::recurrent::CLASSES);
                return Err(KerasError::unknown("layer", other, &known));
            }
        },
    };
    let name = string(c, "name", kind.base_name()).to_string();
    Ok(Some(LayerSpec { name, kind }))
}

fn shape_from(v: &Value) -> Option<Vec<usize>> {
    let a = v.as_array()?;
    a.iter()
        .skip(1)
        .map(|d| d.as_u64().map(|d| d as usize))
        .collect()
}

/// Reads a model (and its compile settings, when present) from `config.json`'s value.
pub fn model_from_json(v: &Value) -> KResult<(ModelConfig, Option<CompileConfig>)> {
    let class = string(v, "class_name", "");
    if class != "Sequential" && class != "Functional" && class != "Model" {
        return Err(KerasError::unknown(
            "model class",
            class,
            &["Sequential", "Functional"],
        ));
    }
    let c = get(v, "config")?;
    let raw = get(c, "layers")?.as_array().ok_or_else(|| bad("layers"))?;
    let input_shape = c
        .get("build_input_shape")
        .and_then(shape_from)
        .or_else(|| {
            raw.first()
                .and_then(|l| l.get("config"))
                .and_then(|c| c.get("batch_shape"))
                .and_then(shape_from)
        })
        .ok_or_else(|| bad("no input shape"))?;
    let input_name = raw
        .first()
        .filter(|l| string(l, "class_name", "") == "InputLayer")
        .and_then(|l| l.get("config"))
        .map(|c| string(c, "name", "input_layer").to_string())
        .unwrap_or_else(|| "input_layer".to_string());
    let mut layers = vec![];
    for l in raw {
        if let Some(spec) = layer_from(l)? {
            layers.push(spec);
        }
    }
    let m = ModelConfig {
        name: string(c, "name", "sequential").to_string(),
        input_shape,
        input_name,
        layers,
        functional: class != "Sequential",
    };
    m.plan()?;
    // Keras writes `{}` (older versions `null`) for a model that was never compiled.
    let compile = match v.get("compile_config") {
        Some(cc) if !cc.is_null() && cc.as_object().is_none_or(|o| !o.is_empty()) => {
            Some(compile_from_json(cc)?)
        }
        _ => None,
    };
    Ok((m, compile))
}

/// Reads `compile_config` (optimizer class and config, loss name and options, metrics).
pub fn compile_from_json(cc: &Value) -> KResult<CompileConfig> {
    let opt = optimizer_from_json(get(cc, "optimizer")?)?;
    // Keras writes a loss name, or a serialized loss object (`class_name` and `config`);
    // earlier versions of this kernel wrote a name plus `loss_config`. All are read.
    let (loss_name, lc) = match cc.get("loss") {
        Some(Value::Object(o)) => (
            o.get("class_name").and_then(Value::as_str).unwrap_or(""),
            o.get("config").cloned().unwrap_or(json!({})),
        ),
        _ => (
            string(cc, "loss", ""),
            cc.get("loss_config").cloned().unwrap_or(json!({})),
        ),
    };
    let mut loss = crate::keras::compile::parse_loss(loss_name)?;
    let logits = flag(&lc, "from_logits", false);
    loss = match loss {
        LossKind::BinaryCrossentropy { .. } => LossKind::BinaryCrossentropy {
            from_logits: logits,
        },
        LossKind::CategoricalCrossentropy { .. } => LossKind::CategoricalCrossentropy {
            from_logits: logits,
        },
        LossKind::SparseCategoricalCrossentropy { .. } => LossKind::SparseCategoricalCrossentropy {
            from_logits: logits,
        },
        LossKind::Huber { .. } => LossKind::Huber {
            delta: float(&lc, "delta", 1.0),
        },
        other => other,
    };
    let metrics = match cc.get("metrics").and_then(Value::as_array) {
        Some(a) => a
            .iter()
            .filter_map(|m| {
                m.as_str().or_else(|| {
                    m.get("config")
                        .and_then(|c| c.get("name"))
                        .and_then(Value::as_str)
                })
            })
            .map(|n| Metric::parse(n, &loss))
            .collect::<KResult<Vec<_>>>()?,
        None => vec![],
    };
    let mut c = CompileConfig {
        loss,
        optimizer: opt,
        metrics,
        heads: vec![],
        weighted: 0,
    };
    if let Some(a) = cc.get("weighted_metrics").and_then(Value::as_array) {
        let specs: Vec<MetricSpec> = a
            .iter()
            .filter_map(Value::as_str)
            .map(|n| MetricSpec::Name(n.to_string()))
            .collect();
        c.add_weighted_metrics(&specs)?;
    }
    Ok(c)
}

/// An optimizer serialized as Keras writes it (`class_name` and `config`).
pub fn optimizer_from_json(o: &Value) -> KResult<OptimizerConfig> {
    let oc = get(o, "config")?;
    let mut opt = OptimizerConfig::parse(string(o, "class_name", ""))?;
    opt.learning_rate = float(oc, "learning_rate", opt.learning_rate);
    opt.kind = match opt.kind {
        OptKind::Sgd { .. } => OptKind::Sgd {
            momentum: float(oc, "momentum", 0.0),
            nesterov: flag(oc, "nesterov", false),
        },
        OptKind::Adam { .. } => OptKind::Adam {
            beta_1: float(oc, "beta_1", 0.9),
            beta_2: float(oc, "beta_2", 0.999),
            epsilon: float(oc, "epsilon", 1e-7),
        },
        OptKind::AdamW { .. } => OptKind::AdamW {
            beta_1: float(oc, "beta_1", 0.9),
            beta_2: float(oc, "beta_2", 0.999),
            epsilon: float(oc, "epsilon", 1e-7),
            weight_decay: float(oc, "weight_decay", 0.004),
        },
        OptKind::RmsProp { .. } => OptKind::RmsProp {
            rho: float(oc, "rho", 0.9),
            momentum: float(oc, "momentum", 0.0),
            epsilon: float(oc, "epsilon", 1e-7),
            centered: flag(oc, "centered", false),
        },
        OptKind::Adagrad { .. } => OptKind::Adagrad {
            initial_accumulator_value: float(oc, "initial_accumulator_value", 0.1),
            epsilon: float(oc, "epsilon", 1e-7),
        },
    };
    Ok(opt)
}
