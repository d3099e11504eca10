//! Gradient checks for every layer, activation and loss of the engine: the analytic
//! gradients a replica computes are compared with central finite differences of the loss
//! (summed in f64) on small random models, on the CPU device.

use mirror_kernel::device::cpu::CpuDevice;
use mirror_kernel::device::LossKind;
use mirror_kernel::keras::{
    initial_weights, Act, CompileConfig, HostArray, Init, LayerKind, ModelConfig, OptimizerConfig,
    Padding, Replica,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect()
}

fn loss_at(r: &mut Replica, x: &[f32], y: &[f32], batch: usize, training: bool) -> f64 {
    let (stats, _) = r.gradients(x, y, batch, batch, training).expect("loss");
    stats.loss_sum / batch as f64
}

/// Checks d(loss)/d(w) for a sample of entries of every variable.
fn check(input: &[usize], kinds: Vec<LayerKind>, loss: LossKind, y: Vec<f32>, training: bool) {
    check_h(input, kinds, loss, y, training, 1e-3)
}

/// `h` is the finite-difference step: small enough not to cross a kink of relu or a
/// max-pooling tie, large enough that f32 rounding stays below the tolerance.
fn check_h(
    input: &[usize],
    kinds: Vec<LayerKind>,
    loss: LossKind,
    y: Vec<f32>,
    training: bool,
    h: f32,
) {
    let cfg = ModelConfig::sequential(input, kinds).expect("config");
    let plan = cfg.plan().expect("plan");
    let mut weights = initial_weights(&plan, 3);
    // Non-zero biases, so that bias gradients and activations away from 0 are exercised.
    for (w, v) in weights.iter_mut().zip(&plan.vars) {
        if v.name == "bias" {
            w.data = data(w.data.len(), 11);
        }
    }
    let batch = 4;
    let x = data(batch * input.iter().product::<usize>(), 5);
    let mut r = Replica::new(&cfg, &weights, Box::new(CpuDevice::new(0))).expect("replica");
    let compile = CompileConfig {
        loss,
        optimizer: OptimizerConfig::parse("sgd").expect("sgd"),
        metrics: vec![],
        heads: vec![],
        weighted: 0,
    };
    r.compile(&compile).expect("compile");
    let (_, grads) = r.gradients(&x, &y, batch, batch, training).expect("grads");
    for (vi, g) in grads.iter().enumerate() {
        let step = (g.data.len() / 7).max(1);
        for i in (0..g.data.len()).step_by(step) {
            let mut w: Vec<HostArray> = weights.clone();
            w[vi].data[i] += h;
            r.set_weights(&w).expect("set");
            let up = loss_at(&mut r, &x, &y, batch, training);
            w[vi].data[i] -= 2.0 * h;
            r.set_weights(&w).expect("set");
            let down = loss_at(&mut r, &x, &y, batch, training);
            let num = (up - down) / (2.0 * f64::from(h));
            let ana = f64::from(g.data[i]);
            let tol = 2e-3 + 2e-2 * num.abs().max(ana.abs());
            assert!(
                (num - ana).abs() <= tol,
                "{loss:?} {:?}: var {vi} entry {i}: analytic {ana}, numeric {num}",
                plan.vars[vi].path
            );
        }
        r.set_weights(&weights).expect("restore");
    }
}

fn dense(units: usize, act: &str) -> LayerKind {
    LayerKind::dense(units, act).expect("dense")
}

#[test]
fn every_activation_has_the_right_gradient() {
    for act in [
        "linear",
        "relu",
        "sigmoid",
        "tanh",
        "elu",
        "selu",
        "gelu",
        "swish",
        "softplus",
        "leaky_relu",
        "softmax",
        "log_softmax",
    ] {
        let y = data(4 * 3, 9);
        check(
            &[5],
            vec![dense(6, act), dense(3, "linear")],
            LossKind::MeanSquaredError,
            y,
            false,
        );
    }
}

#[test]
fn regression_losses_have_the_right_gradient() {
    for loss in [
        LossKind::MeanSquaredError,
        LossKind::MeanAbsoluteError,
        LossKind::Huber { delta: 0.5 },
    ] {
        check(
            &[5],
            vec![dense(6, "tanh"), dense(3, "linear")],
            loss,
            data(12, 9),
            false,
        );
    }
}

fn one_hot(labels: &[usize], classes: usize) -> Vec<f32> {
    let mut v = vec![0.0; labels.len() * classes];
    for (r, l) in labels.iter().enumerate() {
        v[r * classes + l] = 1.0;
    }
    v
}

#[test]
fn cross_entropies_have_the_right_gradient_in_every_form() {
    let labels = [0usize, 2, 1, 2];
    let sparse: Vec<f32> = labels.iter().map(|l| *l as f32).collect();
    let hot = one_hot(&labels, 3);
    let bits: Vec<f32> = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0].to_vec();
    let cce = |l| LossKind::CategoricalCrossentropy { from_logits: l };
    let sce = |l| LossKind::SparseCategoricalCrossentropy { from_logits: l };
    let bce = |l| LossKind::BinaryCrossentropy { from_logits: l };
    let hidden = || dense(6, "tanh");
    // Logits, the fused softmax/sigmoid paths, and the plain probability paths.
    check(
        &[5],
        vec![hidden(), dense(3, "linear")],
        cce(true),
        hot.clone(),
        false,
    );
    check(
        &[5],
        vec![hidden(), dense(3, "softmax")],
        cce(false),
        hot.clone(),
        false,
    );
    check(
        &[5],
        vec![hidden(), dense(3, "linear"), LayerKind::Softmax],
        cce(false),
        hot.clone(),
        false,
    );
    check(
        &[5],
        vec![hidden(), dense(3, "sigmoid")],
        cce(false),
        hot,
        false,
    );
    check(
        &[5],
        vec![hidden(), dense(3, "linear")],
        sce(true),
        sparse.clone(),
        false,
    );
    check(
        &[5],
        vec![hidden(), dense(3, "softmax")],
        sce(false),
        sparse.clone(),
        false,
    );
    check(
        &[5],
        vec![hidden(), dense(3, "sigmoid")],
        sce(false),
        sparse,
        false,
    );
    check(
        &[5],
        vec![hidden(), dense(3, "linear")],
        bce(true),
        bits.clone(),
        false,
    );
    check(
        &[5],
        vec![hidden(), dense(3, "sigmoid")],
        bce(false),
        bits.clone(),
        false,
    );
    check(
        &[5],
        vec![hidden(), dense(3, "linear"), LayerKind::Softmax],
        bce(false),
        bits,
        false,
    );
}

fn conv(filters: usize, k: usize, stride: usize, padding: Padding, act: &str) -> LayerKind {
    LayerKind::Conv2D {
        filters,
        kernel_size: (k, k),
        strides: (stride, stride),
        padding,
        activation: Act::parse(act).expect("act"),
        use_bias: true,
        kernel_initializer: Init::GlorotUniform,
        bias_initializer: Init::Zeros,
    }
}

#[test]
fn conv_pool_flatten_reshape_have_the_right_gradient() {
    let y = data(4 * 2, 9);
    // Two pooled values of this model lie within 1e-3 of each other, hence the finer step.
    check_h(
        &[6, 5, 2],
        vec![
            conv(3, 3, 1, Padding::Same, "tanh"),
            LayerKind::max_pool((2, 2)),
            conv(2, 2, 1, Padding::Valid, "linear"),
            LayerKind::Flatten,
            dense(2, "linear"),
        ],
        LossKind::MeanSquaredError,
        y.clone(),
        false,
        3e-4,
    );
    check(
        &[7, 7, 1],
        vec![
            conv(2, 3, 2, Padding::Same, "sigmoid"),
            LayerKind::MaxPooling2D {
                pool_size: (2, 2),
                strides: (1, 1),
                padding: Padding::Same,
            },
            LayerKind::Reshape {
                target_shape: vec![-1],
            },
            dense(2, "linear"),
        ],
        LossKind::MeanSquaredError,
        y,
        false,
    );
}

#[test]
fn dropout_and_activation_layers_have_the_right_gradient() {
    check(
        &[5],
        vec![
            dense(8, "linear"),
            LayerKind::Activation(Act::parse("elu").expect("elu")),
            LayerKind::Dropout {
                rate: 0.4,
                seed: Some(1),
            },
            dense(2, "linear"),
        ],
        LossKind::MeanSquaredError,
        data(8, 9),
        true,
    );
}

#[test]
fn conv_alone_has_the_right_gradient() {
    for (k, s, p) in [
        (3, 1, Padding::Same),
        (3, 2, Padding::Same),
        (2, 1, Padding::Valid),
        (3, 2, Padding::Valid),
    ] {
        check(
            &[6, 5, 2],
            vec![
                conv(3, k, s, p, "tanh"),
                LayerKind::Flatten,
                dense(2, "linear"),
            ],
            LossKind::MeanSquaredError,
            data(8, 9),
            false,
        );
    }
}

#[test]
fn pool_after_dense_has_the_right_gradient() {
    check(
        &[6, 5, 2],
        vec![
            dense(3, "tanh"),
            LayerKind::max_pool((2, 2)),
            LayerKind::Flatten,
            dense(2, "linear"),
        ],
        LossKind::MeanSquaredError,
        data(8, 9),
        false,
    );
}
