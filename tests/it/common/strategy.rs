//! Shared by the strategy tests on CPU and on GPU replicas: a small Keras model trained by
//! `keras::fit` on `MirroredStrategy::for_devices` (the kind-dispatching factory and the
//! all-reduce chosen by kind, as a notebook's strategy gets them), with the mirror invariant
//! (every replica's copy bit-identical) checked after every batch, and the comparison of the
//! trained weights and losses against another device list. The same code runs on CPU here
//! and on GPUs in `cuda_strategy.rs`, so the GPU tests' logic is exercised on every machine.

use std::sync::Arc;

use mirror_kernel::device::DeviceSpec;
use mirror_kernel::distribute::{MirroredStrategy, MirroredTrainer, ModelId};
use mirror_kernel::keras::{
    fit, initial_weights, Callback, CompileConfig, Data, FitOptions, HostArray, KResult, LayerKind,
    Logs, ModelConfig, Trainer,
};

pub const INPUT: usize = 5;
pub const SAMPLES: usize = 48;
pub const BATCH: usize = 12;
pub const EPOCHS: usize = 3;

pub fn config() -> ModelConfig {
    ModelConfig::sequential(
        &[INPUT],
        vec![
            LayerKind::dense(16, "relu").unwrap(),
            LayerKind::dense(3, "softmax").unwrap(),
        ],
    )
    .unwrap()
}

/// Deterministic data with a learnable label (a function of the features).
pub fn data() -> (Vec<f32>, Vec<f32>) {
    data_of(SAMPLES)
}

/// `samples` rows of the same data (an odd count gives uneven and empty local batches).
pub fn data_of(samples: usize) -> (Vec<f32>, Vec<f32>) {
    let mut x = Vec::new();
    let mut y = Vec::new();
    for r in 0..samples {
        let row: Vec<f32> = (0..INPUT)
            .map(|i| (((r * 31 + i * 17) % 23) as f32 / 11.0) - 1.0)
            .collect();
        let s: f32 = row
            .iter()
            .enumerate()
            .map(|(i, v)| v * (i as f32 - 1.5))
            .sum();
        y.push(((s.abs() * 3.0) as usize % 3) as f32);
        x.extend(row);
    }
    (x, y)
}

/// Compares every replica's variables bit for bit after each batch.
pub struct MirrorCheck {
    pub strategy: Arc<MirroredStrategy>,
    pub id: ModelId,
    pub batches: usize,
}

impl Callback for MirrorCheck {
    fn on_batch_end(&mut self, _: usize, _: &Logs, _: &mut dyn Trainer) -> KResult<bool> {
        let copies = self.strategy.replica_variables(self.id).unwrap();
        for (r, c) in copies.iter().enumerate().skip(1) {
            for (v, (a, b)) in c.iter().zip(&copies[0]).enumerate() {
                let a: Vec<u32> = a.iter().map(|x| x.to_bits()).collect();
                let b: Vec<u32> = b.iter().map(|x| x.to_bits()).collect();
                assert_eq!(a, b, "variable {v}: replica {r} differs from replica 0");
            }
        }
        self.batches += 1;
        Ok(false)
    }
}

/// What one training run produced.
pub struct Trained {
    pub weights: Vec<HostArray>,
    pub losses: Vec<f64>,
    pub all_reduce: &'static str,
}

/// Trains the model for `EPOCHS` epochs at global batch `BATCH` on a strategy over
/// `devices`, checking the mirror invariant after every batch.
pub fn train_on(devices: Vec<DeviceSpec>, optimizer: &str) -> Trained {
    let cfg = config();
    let weights = initial_weights(&cfg.plan().unwrap(), 42);
    let mut compile =
        CompileConfig::from_names(optimizer, "sparse_categorical_crossentropy", &["accuracy"])
            .unwrap();
    compile.optimizer.learning_rate = 0.01;
    let strategy = Arc::new(MirroredStrategy::for_devices(devices).unwrap());
    let mut t = MirroredTrainer::new(strategy.clone(), &cfg, &weights, Some(&compile), 0).unwrap();
    let mut check = MirrorCheck {
        strategy: strategy.clone(),
        id: t.model_id(),
        batches: 0,
    };
    let (x, y) = data();
    let opts = FitOptions {
        epochs: EPOCHS,
        batch_size: BATCH,
        shuffle: false,
        ..FitOptions::default()
    };
    t.begin_fit(BATCH);
    let h = fit(
        &mut t,
        Data { x: &x, y: &y },
        None,
        &opts,
        &mut [&mut check],
        None,
    )
    .unwrap();
    assert_eq!(check.batches, EPOCHS * SAMPLES.div_ceil(BATCH));
    Trained {
        weights: t.get_weights().unwrap(),
        losses: h.history["loss"].clone(),
        all_reduce: strategy.all_reduce_name(),
    }
}

/// Asserts two runs trained the same weights and losses, within `rel` relative (plus a
/// small absolute floor for values near zero).
pub fn assert_same_training(a: &Trained, b: &Trained, rel: f32, what: &str) {
    assert_eq!(a.weights.len(), b.weights.len(), "{what}");
    for (wa, wb) in a.weights.iter().zip(&b.weights) {
        assert_eq!(wa.shape, wb.shape, "{what}");
        for (u, v) in wa.data.iter().zip(&wb.data) {
            assert!(
                (u - v).abs() <= rel * u.abs().max(v.abs()) + 1e-6,
                "{what}: weight {u} vs {v}"
            );
        }
    }
    for (u, v) in a.losses.iter().zip(&b.losses) {
        assert!(
            (u - v).abs() <= f64::from(rel) * u.abs().max(v.abs()) + 1e-6,
            "{what}: loss {u} vs {v}"
        );
    }
    let first = a.losses.first().copied().unwrap_or(0.0);
    let last = a.losses.last().copied().unwrap_or(0.0);
    assert!(
        last < first,
        "{what}: the loss did not fall: {:?}",
        a.losses
    );
}
