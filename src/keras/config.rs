//! The model description: activations, initializers, layer kinds and the chain of layers a
//! `Sequential` (or a functional chain) is. A [`ModelConfig`] is plain data, `Clone + Send`,
//! so the distribute part can hand a copy to every replica thread; [`ModelConfig::plan`]
//! infers every layer's output shape and variable list, naming them as Keras does.
//! Numerics live in `replica.rs`; this file never touches a device.

pub use super::activations::Act;
use super::error::{fmt_shape, KResult, KerasError};
pub use super::init::Init;
pub use super::merge::MergeOp;
pub use super::norm::Norm;
pub use super::stateless::Stateless;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    Valid,
    Same,
}

impl Padding {
    pub fn parse(name: &str) -> KResult<Padding> {
        match name.to_ascii_lowercase().as_str() {
            "valid" => Ok(Padding::Valid),
            "same" => Ok(Padding::Same),
            _ => Err(KerasError::unknown("padding", name, &["valid", "same"])),
        }
    }
    pub fn keras_name(&self) -> &'static str {
        match self {
            Padding::Valid => "valid",
            Padding::Same => "same",
        }
    }
    /// Output size and padding before, as TensorFlow computes them.
    pub fn out_and_pad(&self, size: usize, k: usize, stride: usize) -> Option<(usize, usize)> {
        let stride = stride.max(1);
        match self {
            Padding::Valid => (size >= k).then(|| ((size - k) / stride + 1, 0)),
            Padding::Same => {
                let out = size.div_ceil(stride);
                let total = out
                    .saturating_sub(1)
                    .saturating_mul(stride)
                    .saturating_add(k)
                    .saturating_sub(size);
                Some((out, total / 2))
            }
        }
    }
}

/// What one layer is. Shapes here never include the batch axis.
#[derive(Debug, Clone, PartialEq)]
pub enum LayerKind {
    Dense {
        units: usize,
        activation: Act,
        use_bias: bool,
        kernel_initializer: Init,
        bias_initializer: Init,
    },
    Conv2D {
        filters: usize,
        kernel_size: (usize, usize),
        strides: (usize, usize),
        padding: Padding,
        activation: Act,
        use_bias: bool,
        kernel_initializer: Init,
        bias_initializer: Init,
    },
    MaxPooling2D {
        pool_size: (usize, usize),
        strides: (usize, usize),
        padding: Padding,
    },
    Flatten,
    Reshape {
        /// Target shape; at most one entry may be `-1` (inferred).
        target_shape: Vec<i64>,
    },
    Dropout {
        rate: f32,
        seed: Option<u64>,
    },
    Activation(Act),
    Softmax,
    /// A merge of several inputs (`Add`, `Concatenate`, ...): only in a graph of layers.
    Merge(MergeOp),
    /// `BatchNormalization` and `LayerNormalization`: they run on the op library only.
    Norm(Norm),
    /// Pooling, rectifier, rescaling and rearranging layers without variables: they run
    /// on the op library only.
    Stateless(Stateless),
    /// `Embedding`: a row of `embeddings` per integer index (a gather on the op library;
    /// its gradient is a scatter-add of rows).
    Embedding {
        input_dim: usize,
        output_dim: usize,
        embeddings_initializer: Init,
        /// Index 0 is padding: the layer's output carries a mask of the nonzero indices.
        mask_zero: bool,
    },
    /// `SimpleRNN`, `LSTM` and `GRU`: they run on the op library only.
    Recurrent(super::recurrent::Recurrent),
    /// `Conv1D`: it runs on the op library only.
    Conv1D(super::conv1d::Conv1D),
    /// `Bidirectional` around a recurrent layer: it runs on the op library only.
    Bidirectional(Box<super::bidirectional::Bidirectional>),
}

impl LayerKind {
    /// `Dense(units, activation)` with Keras's defaults.
    pub fn dense(units: usize, activation: &str) -> KResult<LayerKind> {
        Ok(LayerKind::Dense {
            units,
            activation: Act::parse(activation)?,
            use_bias: true,
            kernel_initializer: Init::GlorotUniform,
            bias_initializer: Init::Zeros,
        })
    }

    /// `Conv2D(filters, kernel_size, activation=...)` with stride 1 and valid padding.
    pub fn conv2d(filters: usize, kernel: (usize, usize), activation: &str) -> KResult<Self> {
        Ok(LayerKind::Conv2D {
            filters,
            kernel_size: kernel,
            strides: (1, 1),
            padding: Padding::Valid,
            activation: Act::parse(activation)?,
            use_bias: true,
            kernel_initializer: Init::GlorotUniform,
            bias_initializer: Init::Zeros,
        })
    }

    /// `MaxPooling2D(pool_size)`: strides default to the pool size, as in Keras.
    pub fn max_pool(pool: (usize, usize)) -> LayerKind {
        LayerKind::MaxPooling2D {
            pool_size: pool,
            strides: pool,
            padding: Padding::Valid,
        }
    }

    /// The Keras class name (`Dense`, `Conv2D`, ...).
    pub fn class_name(&self) -> &'static str {
        match self {
            LayerKind::Dense { .. } => "Dense",
            LayerKind::Conv2D { .. } => "Conv2D",
            LayerKind::MaxPooling2D { .. } => "MaxPooling2D",
            LayerKind::Flatten => "Flatten",
            LayerKind::Reshape { .. } => "Reshape",
            LayerKind::Dropout { .. } => "Dropout",
            LayerKind::Activation(_) => "Activation",
            LayerKind::Softmax => "Softmax",
            LayerKind::Merge(m) => m.class_name(),
            LayerKind::Norm(n) => n.class_name(),
            LayerKind::Stateless(s) => s.class_name(),
            LayerKind::Embedding { .. } => "Embedding",
            LayerKind::Recurrent(r) => r.class_name(),
            LayerKind::Conv1D(_) => "Conv1D",
            LayerKind::Bidirectional(_) => "Bidirectional",
        }
    }

    /// The base of the automatic name (`dense`, `conv2d`, `max_pooling2d`, ...).
    pub fn base_name(&self) -> &'static str {
        match self {
            LayerKind::Dense { .. } => "dense",
            LayerKind::Conv2D { .. } => "conv2d",
            LayerKind::MaxPooling2D { .. } => "max_pooling2d",
            LayerKind::Flatten => "flatten",
            LayerKind::Reshape { .. } => "reshape",
            LayerKind::Dropout { .. } => "dropout",
            LayerKind::Activation(_) => "activation",
            LayerKind::Softmax => "softmax",
            LayerKind::Merge(m) => m.base_name(),
            LayerKind::Norm(n) => n.base_name(),
            LayerKind::Stateless(s) => s.base_name(),
            LayerKind::Embedding { .. } => "embedding",
            LayerKind::Recurrent(r) => r.base_name(),
            LayerKind::Conv1D(_) => "conv1d",
            LayerKind::Bidirectional(_) => "bidirectional",
        }
    }

    /// Whether the compiled engine runs this kind; the others run on the op library.
    pub fn on_engine(&self) -> bool {
        !matches!(
            self,
            LayerKind::Norm(_)
                | LayerKind::Stateless(_)
                | LayerKind::Embedding { .. }
                | LayerKind::Recurrent(_)
                | LayerKind::Conv1D(_)
                | LayerKind::Bidirectional(_)
        )
    }

    /// The activation applied after the layer's core operation, if any.
    pub fn activation(&self) -> Option<Act> {
        match self {
            LayerKind::Dense { activation, .. } | LayerKind::Conv2D { activation, .. } => {
                Some(*activation)
            }
            LayerKind::Activation(a) => Some(*a),
            LayerKind::Softmax => Some(Act::Softmax),
            _ => None,
        }
    }
}

/// Hands out Keras's automatic names: the first `dense`, then `dense_1`, `dense_2`, ...
/// Keras keeps one counter per session; the caller owns this and decides its lifetime.
#[derive(Debug, Clone, Default)]
pub struct NameScope {
    used: HashMap<String, usize>,
}

impl NameScope {
    pub fn unique(&mut self, base: &str) -> String {
        let n = self.used.entry(base.to_string()).or_insert(0);
        let name = if *n == 0 {
            base.to_string()
        } else {
            format!("{base}_{n}")
        };
        *n += 1;
        name
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LayerSpec {
    pub name: String,
    pub kind: LayerKind,
}

/// A chain of layers from one input: what `Sequential` and a single-path functional
/// `Model(inputs, outputs)` both are.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// `sequential`, `sequential_1`, or `functional` for a functional chain.
    pub name: String,
    /// The input shape without the batch axis.
    pub input_shape: Vec<usize>,
    pub input_name: String,
    pub layers: Vec<LayerSpec>,
    /// True for `Model(inputs, outputs)`, which Keras saves as class `Functional`.
    pub functional: bool,
}

/// One variable of the model, in Keras order (kernel then bias, layer by layer).
#[derive(Debug, Clone, PartialEq)]
pub struct VarSpec {
    /// `kernel` or `bias`.
    pub name: String,
    /// `sequential/dense/kernel`, Keras 3's variable path.
    pub path: String,
    pub layer: usize,
    pub shape: Vec<usize>,
    pub init: Init,
    /// Fan-in and fan-out for the variance-scaling initializers.
    pub fans: (usize, usize),
    /// False for the statistics a layer keeps (a batch normalization's moving mean).
    pub trainable: bool,
}

/// Every layer's input and output shape and the model's variables.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub in_shapes: Vec<Vec<usize>>,
    pub out_shapes: Vec<Vec<usize>>,
    pub vars: Vec<VarSpec>,
    /// Index into `vars` of each layer's kernel and bias.
    pub layer_vars: Vec<(Option<usize>, Option<usize>)>,
}

impl Plan {
    pub fn output_shape(&self) -> &[usize] {
        self.out_shapes.last().map(|v| v.as_slice()).unwrap_or(&[])
    }
    pub fn param_count(&self) -> usize {
        self.vars
            .iter()
            .map(|v| v.shape.iter().product::<usize>())
            .sum()
    }
    pub fn layer_params(&self, layer: usize) -> usize {
        self.vars
            .iter()
            .filter(|v| v.layer == layer)
            .map(|v| v.shape.iter().product::<usize>())
            .sum()
    }
}

impl ModelConfig {
    /// A `Sequential` model named with a fresh [`NameScope`] (`sequential`, `dense`, ...).
    pub fn sequential(input_shape: &[usize], kinds: Vec<LayerKind>) -> KResult<ModelConfig> {
        Self::named(&mut NameScope::default(), false, input_shape, kinds)
    }

    /// Names the model and its layers from `names`, as Keras does within one session.
    pub fn named(
        names: &mut NameScope,
        functional: bool,
        input_shape: &[usize],
        kinds: Vec<LayerKind>,
    ) -> KResult<ModelConfig> {
        let layers = kinds
            .into_iter()
            .map(|kind| LayerSpec {
                name: names.unique(kind.base_name()),
                kind,
            })
            .collect();
        let cfg = ModelConfig {
            name: names.unique(if functional {
                "functional"
            } else {
                "sequential"
            }),
            input_shape: input_shape.to_vec(),
            input_name: names.unique("input_layer"),
            layers,
            functional,
        };
        cfg.plan()?;
        Ok(cfg)
    }

    /// Infers shapes and variables, failing with the layer's name and both shapes when a
    /// layer cannot take its input.
    pub fn plan(&self) -> KResult<Plan> {
        let mut shape = self.input_shape.clone();
        if shape.is_empty() || shape.contains(&0) {
            return Err(KerasError::Value(format!(
                "Invalid input shape {}: every dimension must be a positive integer.",
                fmt_shape(&shape)
            )));
        }
        let mut plan = Plan {
            in_shapes: vec![],
            out_shapes: vec![],
            vars: vec![],
            layer_vars: vec![],
        };
        // The bytes of every variable so far: the model's weights must fit together.
        let mut bytes: u128 = 0;
        for (i, l) in self.layers.iter().enumerate() {
            let mut var = |plan: &mut Plan, name: &str, shape: Vec<usize>, init: &Init, fans| {
                bytes = check_variable(bytes, &shape, init)?;
                plan.vars.push(VarSpec {
                    name: name.to_string(),
                    path: format!("{}/{}/{name}", self.name, l.name),
                    layer: i,
                    shape,
                    init: init.clone(),
                    fans,
                    trainable: true,
                });
                Ok::<_, KerasError>(Some(plan.vars.len() - 1))
            };
            let (out, kb) = match &l.kind {
                LayerKind::Dense {
                    units,
                    use_bias,
                    kernel_initializer,
                    bias_initializer,
                    ..
                } => {
                    let Some(&fan_in) = shape.last() else {
                        return Err(KerasError::shape(&l.name, &[0], &shape));
                    };
                    positive(&l.name, "units", *units)?;
                    let k = var(
                        &mut plan,
                        "kernel",
                        vec![fan_in, *units],
                        kernel_initializer,
                        (fan_in, *units),
                    )?;
                    let b = if *use_bias {
                        var(
                            &mut plan,
                            "bias",
                            vec![*units],
                            bias_initializer,
                            (fan_in, *units),
                        )?
                    } else {
                        None
                    };
                    let mut out = shape.clone();
                    if let Some(last) = out.last_mut() {
                        *last = *units;
                    }
                    (out, (k, b))
                }
                LayerKind::Conv2D {
                    filters,
                    kernel_size: (kh, kw),
                    strides: (sh, sw),
                    padding,
                    use_bias,
                    kernel_initializer,
                    bias_initializer,
                    ..
                } => {
                    let [h, w, c] = image(&l.name, &shape)?;
                    positive(&l.name, "filters", *filters)?;
                    let (oh, ow) = window_out(&l.name, &shape, *padding, (*kh, *kw), (*sh, *sw))?;
                    let area = kh.saturating_mul(*kw);
                    let fans = (area.saturating_mul(c), area.saturating_mul(*filters));
                    let _ = (h, w);
                    let k = var(
                        &mut plan,
                        "kernel",
                        vec![*kh, *kw, c, *filters],
                        kernel_initializer,
                        fans,
                    )?;
                    let b = if *use_bias {
                        var(&mut plan, "bias", vec![*filters], bias_initializer, fans)?
                    } else {
                        None
                    };
                    (vec![oh, ow, *filters], (k, b))
                }
                LayerKind::MaxPooling2D {
                    pool_size,
                    strides,
                    padding,
                } => {
                    let [_, _, c] = image(&l.name, &shape)?;
                    let (oh, ow) = window_out(&l.name, &shape, *padding, *pool_size, *strides)?;
                    (vec![oh, ow, c], (None, None))
                }
                LayerKind::Flatten => match elements(&shape) {
                    Some(n) => (vec![n as usize], (None, None)),
                    None => {
                        return Err(KerasError::InvalidArgument(format!(
                            "Layer '{}': flattening input shape {} would give more than 2**63 - 1 elements",
                            l.name,
                            super::error::fmt_batch_shape(&shape)
                        )))
                    }
                },
                LayerKind::Reshape { target_shape } => {
                    (reshape(&l.name, &shape, target_shape)?, (None, None))
                }
                LayerKind::Dropout { rate, .. } => {
                    if !(0.0..1.0).contains(rate) {
                        return Err(KerasError::Value(format!(
                            "Invalid value received for argument `rate`. Expected a float value between 0 and 1. Received: rate={rate}"
                        )));
                    }
                    (shape.clone(), (None, None))
                }
                LayerKind::Activation(_) | LayerKind::Softmax => (shape.clone(), (None, None)),
                // A chain hands each layer one tensor; a merge needs a list of them.
                LayerKind::Merge(_) => return Err(super::merge::not_a_list(&shape)),
                LayerKind::Norm(n) => {
                    for (name, vshape, init, trainable) in n.variables(&l.name, &shape)? {
                        var(&mut plan, name, vshape, init, (1, 1))?;
                        if let Some(v) = plan.vars.last_mut() {
                            v.trainable = trainable;
                        }
                    }
                    (shape.clone(), (None, None))
                }
                LayerKind::Stateless(s) => (s.out_shape(&l.name, &shape)?, (None, None)),
                LayerKind::Embedding {
                    input_dim,
                    output_dim,
                    embeddings_initializer,
                    ..
                } => {
                    let dims = vec![*input_dim, *output_dim];
                    let e = var(
                        &mut plan,
                        "embeddings",
                        dims,
                        embeddings_initializer,
                        (*input_dim, *output_dim),
                    )?;
                    let mut out = shape.clone();
                    out.push(*output_dim);
                    (out, (e, None))
                }
                LayerKind::Recurrent(r) => {
                    positive(&l.name, "units", r.units)?;
                    for (name, vshape, init, fans) in r.variables(&l.name, &shape)? {
                        var(&mut plan, name, vshape, &init, fans)?;
                        // Keras's cell owns the variables: `lstm/lstm_cell/kernel`.
                        if let Some(v) = plan.vars.last_mut() {
                            v.path = format!("{}/{}/{}/{name}", self.name, l.name, r.cell_scope());
                        }
                    }
                    (r.out_shape(&l.name, &shape)?, (None, None))
                }
                LayerKind::Bidirectional(b) => {
                    positive(&l.name, "units", b.forward.units)?;
                    positive(&l.name, "units", b.backward.units)?;
                    for (scope, (name, vshape, init, fans)) in b.variables(&l.name, &shape)? {
                        var(&mut plan, name, vshape, &init, fans)?;
                        // `bidirectional/forward_lstm/lstm_cell/kernel`, as Keras names it.
                        if let Some(v) = plan.vars.last_mut() {
                            v.path = format!("{}/{}/{scope}/{name}", self.name, l.name);
                        }
                    }
                    (b.out_shape(&l.name, &shape)?, (None, None))
                }
                LayerKind::Conv1D(c) => {
                    positive(&l.name, "filters", c.filters)?;
                    let out = c.out_shape(&l.name, &shape)?;
                    let mut kb = (None, None);
                    for (name, vshape, init, fans) in c.variables(&l.name, &shape)? {
                        let v = var(&mut plan, name, vshape, &init, fans)?;
                        if name == "kernel" {
                            kb.0 = v;
                        } else {
                            kb.1 = v;
                        }
                    }
                    (out, kb)
                }
            };
            plan.in_shapes.push(shape);
            plan.out_shapes.push(out.clone());
            plan.layer_vars.push(kb);
            shape = out;
        }
        Ok(plan)
    }
}

/// The device TensorFlow names in its allocation errors.
const TF_CPU: &str = "/job:localhost/replica:0/task:0/device:CPU:0";

/// The elements of `shape`, when they are at most 2**63 - 1 (TensorFlow's count).
fn elements(shape: &[usize]) -> Option<u64> {
    shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .filter(|&n| n <= i64::MAX as u64)
}

/// The TensorFlow op that fills a variable with this initializer (named in its errors).
fn init_op(init: &Init) -> &'static str {
    match init {
        Init::Zeros | Init::Ones | Init::Constant(_) => "Fill",
        Init::GlorotNormal | Init::HeNormal | Init::LecunNormal | Init::RandomNormal { .. } => {
            "StatelessRandomNormalV2"
        }
        _ => "StatelessRandomUniformV2",
    }
}

/// Refuses a float32 variable of `shape` that has more elements than TensorFlow counts, or
/// that does not fit the memory bound together with the `before` bytes of the variables
/// planned before it; returns the bytes with it. This is checked when the model is planned,
/// before any weight is allocated, so that `summary()` and `count_params()` of a model too
/// large to hold never reach an allocation.
fn check_variable(before: u128, shape: &[usize], init: &Init) -> KResult<u128> {
    let op = init_op(init);
    let dims = shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let Some(n) = elements(shape) else {
        return Err(KerasError::InvalidArgument(format!(
            "{{{{function_node __wrapped__{op}_device_{TF_CPU}}}}} Shape [{dims}] would have more than 2**63 - 1 elements [Op:{op}] name: "
        )));
    };
    let total = before + n as u128 * std::mem::size_of::<f32>() as u128;
    if !crate::memory::fits(total) {
        return Err(KerasError::ResourceExhausted(format!(
            "{{{{function_node __wrapped__{op}_device_{TF_CPU}}}}} OOM when allocating tensor with shape[{dims}] and type float on {TF_CPU} by allocator cpu [Op:{op}] name: "
        )));
    }
    Ok(total)
}

fn positive(layer: &str, what: &str, v: usize) -> KResult<()> {
    if v == 0 {
        return Err(KerasError::Value(format!(
            "Received an invalid value for `{what}` in layer '{layer}', expected a strictly positive value. Received: {what}={v}"
        )));
    }
    Ok(())
}

fn image(layer: &str, shape: &[usize]) -> KResult<[usize; 3]> {
    match shape {
        [h, w, c] => Ok([*h, *w, *c]),
        _ => Err(KerasError::Shape {
            what: format!(
                "Input 0 of layer \"{layer}\" is incompatible with the layer: expected ndim=4 (batch, height, width, channels)"
            ),
            expected: "(None, height, width, channels)".into(),
            got: super::error::fmt_batch_shape(shape),
        }),
    }
}

fn window_out(
    layer: &str,
    shape: &[usize],
    padding: Padding,
    k: (usize, usize),
    s: (usize, usize),
) -> KResult<(usize, usize)> {
    let [h, w, _] = image(layer, shape)?;
    if k.0 == 0 || k.1 == 0 || s.0 == 0 || s.1 == 0 {
        return Err(KerasError::Value(format!(
            "Layer '{layer}': kernel/pool size and strides must be positive."
        )));
    }
    match (
        padding.out_and_pad(h, k.0, s.0),
        padding.out_and_pad(w, k.1, s.1),
    ) {
        (Some((oh, _)), Some((ow, _))) => Ok((oh, ow)),
        _ => Err(KerasError::Shape {
            what: format!(
                "Layer \"{layer}\": the window {k:?} is larger than its input with padding='valid'"
            ),
            expected: format!("(None, >={}, >={}, channels)", k.0, k.1),
            got: super::error::fmt_batch_shape(shape),
        }),
    }
}

fn reshape(layer: &str, shape: &[usize], target: &[i64]) -> KResult<Vec<usize>> {
    let total = elements(shape).unwrap_or(u64::MAX) as usize;
    let known: i64 = target
        .iter()
        .filter(|d| **d > 0)
        .try_fold(1i64, |n, &d| n.checked_mul(d))
        .unwrap_or(-1);
    let unknown = target.iter().filter(|d| **d == -1).count();
    let bad = target.iter().any(|d| *d == 0 || *d < -1) || unknown > 1 || known <= 0;
    let err = || {
        KerasError::Value(format!(
        "Layer '{layer}': the total size of the target shape {target:?} must equal the input size {total} (input shape {})",
        fmt_shape(shape)
    ))
    };
    if bad {
        return Err(err());
    }
    let known = known as usize;
    if unknown == 1 {
        if !total.is_multiple_of(known) {
            return Err(err());
        }
        Ok(target
            .iter()
            .map(|d| if *d == -1 { total / known } else { *d as usize })
            .collect())
    } else if known == total {
        Ok(target.iter().map(|d| *d as usize).collect())
    } else {
        Err(err())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(units: usize) -> LayerKind {
        LayerKind::dense(units, "linear").unwrap()
    }

    #[test]
    fn weights_beyond_the_memory_bound_are_tensorflows_out_of_memory_error() {
        let e = ModelConfig::sequential(&[4], vec![dense(1 << 31)]).unwrap_err();
        assert_eq!(e.py_exception(), "ResourceExhaustedError");
        assert_eq!(
            e.to_string(),
            "{{function_node __wrapped__StatelessRandomUniformV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} \
             OOM when allocating tensor with shape[4,2147483648] and type float on \
             /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu [Op:StatelessRandomUniformV2] name: "
        );
        let e = ModelConfig::sequential(&[1 << 40], vec![dense(1 << 40)]).unwrap_err();
        assert_eq!(e.py_exception(), "InvalidArgumentError");
        assert!(e.to_string().contains(
            "Shape [1099511627776,1099511627776] would have more than 2**63 - 1 elements"
        ));
        let e = ModelConfig::sequential(&[1 << 40, 1 << 40, 1 << 40], vec![LayerKind::Flatten])
            .unwrap_err();
        assert_eq!(e.py_exception(), "InvalidArgumentError");
        let conv = LayerKind::conv2d(4, (usize::MAX / 2, 3), "relu").unwrap();
        assert!(ModelConfig::sequential(&[8, 8, 3], vec![conv]).is_err());
    }

    #[test]
    fn a_model_that_fits_is_planned_and_counted_as_before() {
        let cfg = ModelConfig::sequential(&[1000], vec![dense(1000), dense(10)]).unwrap();
        let plan = cfg.plan().unwrap();
        assert_eq!(plan.param_count(), 1000 * 1000 + 1000 + 1000 * 10 + 10);
    }
}
