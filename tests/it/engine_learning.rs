//! Learning checks: the engine must actually learn. An MLP separates Gaussian blobs, a small
//! Conv2D net's loss falls on synthetic images, and a linear model fits a linear target;
//! all through the same `fit` loop users call, on one CPU replica.

use mirror_kernel::device::cpu::CpuDevice;
use mirror_kernel::keras::{
    evaluate, fit, initial_weights, predict, CompileConfig, Data, FitOptions, KerasError,
    LayerKind, ModelConfig, Replica,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn replica(cfg: &ModelConfig, compile: &CompileConfig) -> Replica {
    let w = initial_weights(&cfg.plan().expect("plan"), 42);
    let mut r = Replica::new(cfg, &w, Box::new(CpuDevice::new(0))).expect("replica");
    r.compile(compile).expect("compile");
    r
}

/// Four classes of points in 8 dimensions around well-separated centres.
fn blobs(n: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut x, mut y) = (vec![], vec![]);
    for i in 0..n {
        let c = i % 4;
        for d in 0..8 {
            let centre = if d % 4 == c { 2.0 } else { 0.0 };
            x.push(centre + rng.gen_range(-0.8f32..0.8));
        }
        y.push(c as f32);
    }
    (x, y)
}

#[test]
fn an_mlp_separates_blobs() {
    let cfg = ModelConfig::sequential(
        &[8],
        vec![
            LayerKind::dense(16, "relu").expect("dense"),
            LayerKind::dense(4, "softmax").expect("dense"),
        ],
    )
    .expect("config");
    let compile =
        CompileConfig::from_names("adam", "sparse_categorical_crossentropy", &["accuracy"])
            .expect("compile");
    let mut r = replica(&cfg, &compile);
    let (x, y) = blobs(800, 1);
    let opts = FitOptions {
        epochs: 10,
        validation_split: 0.2,
        ..FitOptions::default()
    };
    let h = fit(&mut r, Data { x: &x, y: &y }, None, &opts, &mut [], None).expect("fit");
    let keys: Vec<&String> = h.history.keys().collect();
    assert_eq!(keys, ["accuracy", "loss", "val_accuracy", "val_loss"]);
    let loss = &h.history["loss"];
    assert!(loss[9] < loss[0], "loss did not fall: {loss:?}");
    let (tx, ty) = blobs(400, 2);
    let res = evaluate(&mut r, Data { x: &tx, y: &ty }, 32, None).expect("evaluate");
    assert_eq!(res[1].0, "accuracy");
    assert!(res[1].1 >= 0.95, "test accuracy {}", res[1].1);
    let p = predict(&mut r, &tx[..8 * 10], 4, None).expect("predict");
    assert_eq!(p.len(), 40);
    for row in p.chunks(4) {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
}

/// 8x8 single-channel images: a bright 3x3 square in the top-left (class 0) or the
/// bottom-right (class 1) quarter, over noise.
fn squares(n: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut x, mut y) = (vec![], vec![]);
    for i in 0..n {
        let c = i % 2;
        let (oy, ox) = if c == 0 {
            (rng.gen_range(0..2), rng.gen_range(0..2))
        } else {
            (rng.gen_range(4..6), rng.gen_range(4..6))
        };
        for r in 0..8 {
            for col in 0..8 {
                let on = (oy..oy + 3).contains(&r) && (ox..ox + 3).contains(&col);
                x.push(if on { 1.0 } else { 0.0 } + rng.gen_range(0.0f32..0.2));
            }
        }
        y.push(c as f32);
    }
    (x, y)
}

#[test]
fn a_small_conv_net_learns_images() {
    let cfg = ModelConfig::sequential(
        &[8, 8, 1],
        vec![
            LayerKind::conv2d(4, (3, 3), "relu").expect("conv"),
            LayerKind::max_pool((2, 2)),
            LayerKind::Flatten,
            LayerKind::dense(2, "softmax").expect("dense"),
        ],
    )
    .expect("config");
    let mut compile =
        CompileConfig::from_names("adam", "sparse_categorical_crossentropy", &["accuracy"])
            .expect("compile");
    compile.optimizer.learning_rate = 0.01;
    let mut r = replica(&cfg, &compile);
    let (x, y) = squares(256, 3);
    let opts = FitOptions {
        epochs: 5,
        batch_size: 16,
        ..FitOptions::default()
    };
    let h = fit(&mut r, Data { x: &x, y: &y }, None, &opts, &mut [], None).expect("fit");
    let loss = &h.history["loss"];
    assert!(
        loss[4] < 0.5 * loss[0],
        "loss did not fall enough: {loss:?}"
    );
    assert!(
        h.history["accuracy"][4] > 0.9,
        "{:?}",
        h.history["accuracy"]
    );
}

#[test]
fn regression_fits_a_linear_target() {
    let cfg = ModelConfig::sequential(&[3], vec![LayerKind::dense(1, "linear").expect("dense")])
        .expect("config");
    let mut compile = CompileConfig::from_names("sgd", "mse", &["mae"]).expect("compile");
    compile.optimizer.learning_rate = 0.1;
    let mut r = replica(&cfg, &compile);
    let mut rng = StdRng::seed_from_u64(4);
    let x: Vec<f32> = (0..3 * 512).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let y: Vec<f32> = x
        .chunks(3)
        .map(|v| 2.0 * v[0] - 3.0 * v[1] + 0.5 * v[2] + 1.0)
        .collect();
    let opts = FitOptions {
        epochs: 40,
        ..FitOptions::default()
    };
    let h = fit(&mut r, Data { x: &x, y: &y }, None, &opts, &mut [], None).expect("fit");
    assert!(h.history["loss"][39] < 1e-3, "{:?}", h.history["loss"]);
    let w = r.get_weights().expect("weights");
    let want = [2.0, -3.0, 0.5];
    for (got, want) in w[0].data.iter().zip(want) {
        assert!((got - want).abs() < 0.05, "kernel {:?}", w[0].data);
    }
    assert!((w[1].data[0] - 1.0).abs() < 0.05, "bias {:?}", w[1].data);
}

#[test]
fn users_get_clear_errors() {
    let cfg = ModelConfig::sequential(&[3], vec![LayerKind::dense(2, "softmax").expect("dense")])
        .expect("config");
    let w = initial_weights(&cfg.plan().expect("plan"), 1);
    let mut r = Replica::new(&cfg, &w, Box::new(CpuDevice::new(0))).expect("replica");
    let x = vec![0.5f32; 6];
    let y = vec![0.0f32, 1.0];
    let err = fit(
        &mut r,
        Data { x: &x, y: &y },
        None,
        &FitOptions::default(),
        &mut [],
        None,
    );
    assert!(matches!(err, Err(KerasError::NotCompiled(_))));
    let compile =
        CompileConfig::from_names("adam", "sparse_categorical_crossentropy", &[]).expect("c");
    r.compile(&compile).expect("compile");
    let bad = vec![0.0f32, 2.0];
    let err = fit(
        &mut r,
        Data { x: &x, y: &bad },
        None,
        &FitOptions::default(),
        &mut [],
        None,
    )
    .expect_err("label 2 of 2 classes");
    assert_eq!(err.py_exception(), "InvalidArgumentError");
    assert!(err.to_string().contains("[0, 2)"), "{err}");
    let err = fit(
        &mut r,
        Data { x: &x[..5], y: &y },
        None,
        &FitOptions::default(),
        &mut [],
        None,
    )
    .expect_err("ragged x");
    assert!(matches!(err, KerasError::Shape { .. }), "{err}");
    let err = CompileConfig::from_names("adamm", "mse", &[]).expect_err("typo");
    assert!(err.to_string().contains("adam, adamw"), "{err}");
    let err = LayerKind::dense(2, "relux").expect_err("typo");
    assert!(err.to_string().contains("relu"), "{err}");
    let err = ModelConfig::sequential(&[4], vec![LayerKind::conv2d(2, (3, 3), "relu").expect("c")])
        .expect_err("conv on vectors");
    assert!(err.to_string().contains("(None, 4)"), "{err}");
}

#[test]
fn an_interrupt_stops_fit_between_steps_and_keeps_the_weights() {
    let cfg = ModelConfig::sequential(&[8], vec![LayerKind::dense(4, "softmax").expect("d")])
        .expect("config");
    let compile =
        CompileConfig::from_names("sgd", "sparse_categorical_crossentropy", &[]).expect("c");
    let mut r = replica(&cfg, &compile);
    let before = r.get_weights().expect("w");
    let (x, y) = blobs(64, 1);
    let flag = std::sync::atomic::AtomicBool::new(true);
    let err = fit(
        &mut r,
        Data { x: &x, y: &y },
        None,
        &FitOptions::default(),
        &mut [],
        Some(&flag),
    )
    .expect_err("interrupted");
    assert_eq!(err.py_exception(), "KeyboardInterrupt");
    assert_eq!(r.get_weights().expect("w"), before);
    assert_eq!(r.iterations(), 0);
}

#[test]
fn a_model_that_is_only_a_softmax_still_evaluates() {
    let cfg = ModelConfig::sequential(&[3], vec![LayerKind::Softmax]).expect("config");
    let compile =
        CompileConfig::from_names("sgd", "sparse_categorical_crossentropy", &["accuracy"])
            .expect("c");
    let mut r = replica(&cfg, &compile);
    let x = [0.0f32, 1.0, 2.0, 2.0, 1.0, 0.0];
    let y = [2.0f32, 1.0];
    let stats = r.train_step(&x, &y, 2, 2, None).expect("step");
    // -log softmax([0,1,2])[2] and -log softmax([2,1,0])[1].
    let a = (1.0f64 + (-1.0f64).exp() + (-2.0f64).exp()).ln();
    let want = a + (1.0 + a);
    assert!(
        (stats.loss_sum - want).abs() < 1e-5,
        "{} vs {want}",
        stats.loss_sum
    );
    assert_eq!(stats.metric_sums, [1.0]);
}
