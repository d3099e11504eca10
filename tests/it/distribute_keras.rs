//! The Keras engine on a MirroredStrategy: `keras::fit` driven through `MirroredTrainer` on
//! 2, 3 and 4 CPU replicas must give the same weights and history as the engine on one plain
//! replica (even, uneven and empty local batches; SGD with momentum and Adam), and every
//! replica's copy of every variable must be bit-identical after every step.

use std::sync::Arc;

use mirror_kernel::device::cpu::CpuDevice;
use mirror_kernel::distribute::strategy::{cpu_factory, logical_cpu_devices};
use mirror_kernel::distribute::{MirroredStrategy, MirroredTrainer};
use mirror_kernel::keras::{
    evaluate, fit, initial_weights, predict, Callback, CompileConfig, Data, FitOptions, HostArray,
    KResult, Logs, OptKind, Replica, Trainer,
};

use crate::common::strategy as strategy_support;
use strategy_support::{config, data_of, MirrorCheck};

const SAMPLES: usize = 37;

fn data() -> (Vec<f32>, Vec<f32>) {
    data_of(SAMPLES)
}

struct Outcome {
    weights: Vec<HostArray>,
    history: std::collections::BTreeMap<String, Vec<f64>>,
    eval: Vec<(String, f64)>,
    pred: Vec<f32>,
}

fn run(t: &mut dyn Trainer, batch: usize, callbacks: &mut [&mut dyn Callback]) -> Outcome {
    let (x, y) = data();
    let opts = FitOptions {
        epochs: 3,
        batch_size: batch,
        shuffle: false,
        ..FitOptions::default()
    };
    let d = Data { x: &x, y: &y };
    let h = fit(t, d, Some(d), &opts, callbacks, None).unwrap();
    let eval = evaluate(t, d, 7, None).unwrap();
    let pred = predict(t, &x, 6, None).unwrap();
    Outcome {
        weights: t.get_weights().unwrap(),
        history: h.history,
        eval,
        pred,
    }
}

fn compile(opt: &str) -> CompileConfig {
    let mut c =
        CompileConfig::from_names(opt, "sparse_categorical_crossentropy", &["accuracy"]).unwrap();
    c.optimizer.learning_rate = if opt == "sgd" { 0.1 } else { 0.01 };
    if let OptKind::Sgd { momentum, .. } = &mut c.optimizer.kind {
        *momentum = 0.5;
    }
    c
}

fn compare(opt: &str, batch: usize) {
    let cfg = config();
    let weights = initial_weights(&cfg.plan().unwrap(), 42);
    let c = compile(opt);
    let mut single = Replica::new(&cfg, &weights, Box::new(CpuDevice::new(0))).unwrap();
    single.compile(&c).unwrap();
    let one = run(&mut single, batch, &mut []);
    let loss = &one.history["loss"];
    assert!(loss[2] < loss[0], "{opt}: loss did not fall: {loss:?}");
    for n in 2..=4 {
        let strategy =
            Arc::new(MirroredStrategy::new(logical_cpu_devices(n), cpu_factory()).unwrap());
        let mut t = MirroredTrainer::new(strategy.clone(), &cfg, &weights, Some(&c), 0).unwrap();
        let mut check = MirrorCheck {
            strategy: strategy.clone(),
            id: t.model_id(),
            batches: 0,
        };
        let got = run(&mut t, batch, &mut [&mut check]);
        assert_eq!(check.batches, 3 * SAMPLES.div_ceil(batch));
        for (a, b) in one.weights.iter().zip(&got.weights) {
            assert_eq!(a.shape, b.shape);
            for (u, v) in a.data.iter().zip(&b.data) {
                assert!(
                    (u - v).abs() <= 1e-5,
                    "{opt} batch {batch} n={n}: weight {u} vs {v}"
                );
            }
        }
        assert_eq!(
            one.history.keys().collect::<Vec<_>>(),
            got.history.keys().collect::<Vec<_>>()
        );
        for (k, v1) in &one.history {
            for (a, b) in v1.iter().zip(&got.history[k]) {
                assert!(
                    (a - b).abs() < 1e-5,
                    "{opt} batch {batch} n={n} {k}: {a} vs {b}"
                );
            }
        }
        for ((ka, a), (kb, b)) in one.eval.iter().zip(&got.eval) {
            assert_eq!(ka, kb);
            assert!((a - b).abs() < 1e-5, "evaluate {ka}: {a} vs {b}");
        }
        assert_eq!(one.pred.len(), got.pred.len());
        for (a, b) in one.pred.iter().zip(&got.pred) {
            assert!((a - b).abs() < 1e-5, "predict {a} vs {b}");
        }
        let stats = strategy.last_fit_stats().unwrap();
        assert_eq!(stats.replicas, n);
        assert_eq!(stats.steps, 3 * SAMPLES.div_ceil(batch));
    }
}

#[test]
fn sgd_on_n_replicas_matches_one() {
    compare("sgd", 12);
    compare("sgd", 5);
}

#[test]
fn adam_on_n_replicas_matches_one() {
    compare("adam", 12);
    compare("adam", 5);
}

/// Raises the interrupt flag after a number of batches, as a kernel interrupt would.
struct InterruptAfter {
    flag: Arc<std::sync::atomic::AtomicBool>,
    after: usize,
    seen: usize,
}

impl Callback for InterruptAfter {
    fn on_batch_end(&mut self, _: usize, _: &Logs, _: &mut dyn Trainer) -> KResult<bool> {
        self.seen += 1;
        if self.seen == self.after {
            self.flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(false)
    }
}

fn assert_mirrored(t: &MirroredTrainer) {
    let copies = t.replica_weights().unwrap();
    for c in &copies[1..] {
        assert_eq!(c, &copies[0]);
    }
}

#[test]
fn interrupt_leaves_equal_copies_and_training_resumes() {
    let cfg = config();
    let weights = initial_weights(&cfg.plan().unwrap(), 7);
    let strategy = Arc::new(MirroredStrategy::new(logical_cpu_devices(3), cpu_factory()).unwrap());
    let mut t = MirroredTrainer::new(strategy, &cfg, &weights, Some(&compile("adam")), 0).unwrap();
    let (x, y) = data();
    let d = Data { x: &x, y: &y };
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let opts = FitOptions {
        epochs: 4,
        batch_size: 4,
        ..FitOptions::default()
    };
    let mut stop = InterruptAfter {
        flag: flag.clone(),
        after: 3,
        seen: 0,
    };
    let err = fit(&mut t, d, None, &opts, &mut [&mut stop], Some(&flag)).unwrap_err();
    assert!(
        matches!(err, mirror_kernel::keras::KerasError::Interrupted),
        "{err:?}"
    );
    assert_eq!(stop.seen, 3);
    assert_mirrored(&t);
    flag.store(false, std::sync::atomic::Ordering::SeqCst);
    let h = fit(&mut t, d, None, &opts, &mut [], Some(&flag)).unwrap();
    assert_eq!(h.history["loss"].len(), 4);
    assert_mirrored(&t);
}

#[test]
fn weights_state_and_learning_rate_reach_every_replica() {
    let cfg = config();
    let plan = cfg.plan().unwrap();
    let strategy = Arc::new(MirroredStrategy::new(logical_cpu_devices(2), cpu_factory()).unwrap());
    let mut t = MirroredTrainer::new(
        strategy,
        &cfg,
        &initial_weights(&plan, 1),
        Some(&compile("sgd")),
        0,
    )
    .unwrap();
    let other = initial_weights(&plan, 2);
    t.set_weights(&other).unwrap();
    assert_eq!(t.get_weights().unwrap(), other);
    for copy in t.replica_weights().unwrap() {
        assert_eq!(copy, other);
    }
    t.set_learning_rate(0.05);
    assert_eq!(t.learning_rate(), 0.05);
    // With the same rate everywhere, a step keeps the copies equal and matches one replica.
    let (x, y) = data();
    let opts = FitOptions {
        epochs: 1,
        batch_size: 8,
        shuffle: false,
        ..FitOptions::default()
    };
    fit(&mut t, Data { x: &x, y: &y }, None, &opts, &mut [], None).unwrap();
    assert_mirrored(&t);
    let mut single = Replica::new(&cfg, &other, Box::new(CpuDevice::new(0))).unwrap();
    single.compile(&compile("sgd")).unwrap();
    single.set_learning_rate(0.05);
    fit(
        &mut single,
        Data { x: &x, y: &y },
        None,
        &opts,
        &mut [],
        None,
    )
    .unwrap();
    for (a, b) in single
        .get_weights()
        .unwrap()
        .iter()
        .zip(t.get_weights().unwrap())
    {
        for (u, v) in a.data.iter().zip(&b.data) {
            assert!((u - v).abs() <= 1e-5);
        }
    }
    let state = t.optimizer_state().unwrap();
    t.set_optimizer_state(&state).unwrap();
    assert_eq!(t.optimizer_state().unwrap(), state);
}
