//! Distributed training seen from outside: the same model, initial weights and unshuffled
//! data trained on 1, 2, 3 and 4 CPU replicas must land on the same weights and history
//! (even and uneven splits, empty local batches, SGD with momentum and Adam); after every
//! step every replica's copy must be bit-identical; interrupts and replica failures must
//! leave a usable strategy with equal copies.

use crate::common::host_mlp as support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mirror_kernel::device::Device;
use mirror_kernel::distribute::strategy::logical_cpu_devices;
use mirror_kernel::distribute::{
    Dataset, DeviceFactory, DistributeError, FitControl, FitObserver, FitOptions, History,
    MirroredStrategy, ModelId, ReplicaModel,
};
use support::{dataset, HostMlp, HostOnly, Opt};

const INPUT: usize = 5;
const HIDDEN: usize = 8;
const CLASSES: usize = 3;
const SAMPLES: usize = 37;

fn strategy(n: usize) -> MirroredStrategy {
    let factory: DeviceFactory =
        Arc::new(|spec| Ok(Box::new(HostOnly(spec.index)) as Box<dyn Device>));
    MirroredStrategy::new(logical_cpu_devices(n), factory).unwrap()
}

/// Each replica initialises differently on purpose: the strategy must copy replica 0's values.
fn build(s: &MirroredStrategy, opt: Opt) -> ModelId {
    s.build_model(move |rank, _| {
        Ok(
            Box::new(HostMlp::new(INPUT, HIDDEN, CLASSES, opt, 11 + rank as u64))
                as Box<dyn ReplicaModel>,
        )
    })
    .unwrap()
}

/// Checks after every batch that all replicas hold bit-identical variables.
struct MirrorCheck<'a> {
    strategy: &'a MirroredStrategy,
    id: ModelId,
    checked: usize,
}

impl FitObserver for MirrorCheck<'_> {
    fn on_batch_end(&mut self, _: usize, _: usize, _: &[(String, f64)]) -> FitControl {
        let copies = self.strategy.replica_variables(self.id).unwrap();
        for (r, copy) in copies.iter().enumerate().skip(1) {
            for (a, b) in copy.iter().zip(&copies[0]) {
                let (a, b): (Vec<u32>, Vec<u32>) = (
                    a.iter().map(|v| v.to_bits()).collect(),
                    b.iter().map(|v| v.to_bits()).collect(),
                );
                assert_eq!(a, b, "replica {r} differs from replica 0");
            }
        }
        self.checked += 1;
        FitControl::Continue
    }
}

/// What one training run produced: final weights, history, evaluation, predictions.
type Run = (Vec<Vec<f32>>, History, Vec<(String, f64)>, Vec<f32>);

fn train(n: usize, opt: Opt, batch: usize) -> Run {
    let s = strategy(n);
    let id = build(&s, opt);
    let (x, y) = dataset(SAMPLES, INPUT, CLASSES);
    let data = Dataset {
        x: &x,
        x_width: INPUT,
        y: &y,
        y_width: 1,
    };
    let opts = FitOptions {
        epochs: 3,
        batch_size: batch,
        ..FitOptions::default()
    };
    let mut check = MirrorCheck {
        strategy: &s,
        id,
        checked: 0,
    };
    let history = s.fit(id, data, Some(data), &opts, &mut check).unwrap();
    assert_eq!(check.checked, 3 * SAMPLES.div_ceil(batch));
    let eval = s.evaluate(id, data, 7, None).unwrap();
    let pred = s.predict(id, &x, INPUT, 6, None).unwrap();
    let weights = s.primary_variables(id).unwrap();
    let stats = s.last_fit_stats().unwrap();
    assert_eq!(stats.replicas, n);
    assert_eq!(
        stats.local_batch,
        mirror_kernel::distribute::split_sizes(batch, n)
    );
    assert_eq!(
        stats.gradient_len,
        INPUT * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES
    );
    assert_eq!(stats.steps, 3 * SAMPLES.div_ceil(batch));
    assert_eq!(stats.samples, 3 * SAMPLES);
    (weights, history, eval, pred)
}

fn close(a: &[f32], b: &[f32], tol: f32, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= tol, "{what}[{i}]: {x} vs {y}");
    }
}

fn n_versus_one(opt: Opt, batch: usize) {
    let (w1, h1, e1, p1) = train(1, opt, batch);
    // The model must actually learn, or equality would prove little.
    let losses = h1.get("loss").unwrap();
    assert!(losses[2] < losses[0], "loss did not fall: {losses:?}");
    for n in 2..=4 {
        let (wn, hn, en, pn) = train(n, opt, batch);
        for (v, (a, b)) in w1.iter().zip(&wn).enumerate() {
            close(a, b, 1e-5, &format!("n={n} batch={batch} variable {v}"));
        }
        assert_eq!(h1.epochs, hn.epochs);
        for ((name1, v1), (name_n, vn)) in h1.values.iter().zip(&hn.values) {
            assert_eq!(name1, name_n);
            for (a, b) in v1.iter().zip(vn) {
                assert!((a - b).abs() < 1e-5, "n={n} {name1}: {a} vs {b}");
            }
        }
        for ((na, a), (nb, b)) in e1.iter().zip(&en) {
            assert_eq!(na, nb);
            assert!((a - b).abs() < 1e-5, "evaluate {na}: {a} vs {b}");
        }
        close(&p1, &pn, 1e-5, "predict");
    }
}

#[test]
fn sgd_with_momentum_even_and_uneven_batches() {
    // 12 splits evenly over 2, 3 and 4; 37 samples leave a last batch of 1 (empty replicas).
    n_versus_one(
        Opt::Sgd {
            lr: 0.1,
            momentum: 0.5,
        },
        12,
    );
    // 5 splits unevenly everywhere (3+2, 2+2+1, 2+2+1+0).
    n_versus_one(
        Opt::Sgd {
            lr: 0.1,
            momentum: 0.0,
        },
        5,
    );
}

#[test]
fn adam_even_and_uneven_batches() {
    n_versus_one(Opt::Adam { lr: 0.01 }, 12);
    n_versus_one(Opt::Adam { lr: 0.01 }, 5);
}

#[test]
fn history_names_and_validation_entries() {
    let (_, h, e, p) = train(2, Opt::Adam { lr: 0.01 }, 8);
    let names: Vec<&str> = h.values.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["loss", "accuracy", "val_loss", "val_accuracy"]);
    assert_eq!(h.epochs, vec![0, 1, 2]);
    assert_eq!(e.len(), 2);
    assert_eq!(p.len(), SAMPLES * CLASSES);
}

struct StopAfter {
    flag: Arc<AtomicBool>,
    steps: usize,
}

impl FitObserver for StopAfter {
    fn on_batch_end(&mut self, _: usize, step: usize, _: &[(String, f64)]) -> FitControl {
        if step + 1 == self.steps {
            self.flag.store(true, Ordering::Relaxed);
        }
        FitControl::Continue
    }
}

fn assert_mirrored(s: &MirroredStrategy, id: ModelId) {
    let copies = s.replica_variables(id).unwrap();
    for c in &copies[1..] {
        assert_eq!(c, &copies[0]);
    }
}

#[test]
fn interrupt_stops_between_steps_and_keeps_copies_equal() {
    let s = strategy(3);
    let id = build(&s, Opt::Adam { lr: 0.01 });
    let (x, y) = dataset(SAMPLES, INPUT, CLASSES);
    let data = Dataset {
        x: &x,
        x_width: INPUT,
        y: &y,
        y_width: 1,
    };
    let flag = Arc::new(AtomicBool::new(false));
    let opts = FitOptions {
        epochs: 5,
        batch_size: 4,
        interrupt: Some(flag.clone()),
        ..FitOptions::default()
    };
    let err = s
        .fit(
            id,
            data,
            None,
            &opts,
            &mut StopAfter {
                flag: flag.clone(),
                steps: 3,
            },
        )
        .unwrap_err();
    assert!(matches!(err, DistributeError::Interrupted));
    assert_eq!(s.last_fit_stats().unwrap().steps, 3);
    assert_mirrored(&s, id);
    // The session lives on: clear the flag and train again.
    flag.store(false, Ordering::Relaxed);
    let h = s
        .fit(id, data, None, &opts, &mut support_observer())
        .unwrap();
    assert_eq!(h.epochs.len(), 5);
    assert_mirrored(&s, id);
}

fn support_observer() -> mirror_kernel::distribute::NoObserver {
    mirror_kernel::distribute::NoObserver
}

#[test]
fn a_failing_replica_is_an_error_and_the_strategy_recovers() {
    let s = strategy(3);
    let id = s
        .build_model(|rank, _| {
            let mut m = HostMlp::new(
                INPUT,
                HIDDEN,
                CLASSES,
                Opt::Sgd {
                    lr: 0.1,
                    momentum: 0.0,
                },
                3,
            );
            if rank == 1 {
                m.fail_at = Some(2);
            }
            Ok(Box::new(m) as Box<dyn ReplicaModel>)
        })
        .unwrap();
    let (x, y) = dataset(SAMPLES, INPUT, CLASSES);
    let data = Dataset {
        x: &x,
        x_width: INPUT,
        y: &y,
        y_width: 1,
    };
    let opts = FitOptions {
        epochs: 1,
        batch_size: 6,
        ..FitOptions::default()
    };
    match s.fit(id, data, None, &opts, &mut support_observer()) {
        Err(DistributeError::Model { rank: 1, source }) => {
            assert!(source.to_string().contains("told to fail"))
        }
        other => panic!("unexpected {other:?}"),
    }
    // No replica applied the failed step, so the copies are still equal, and training goes on.
    assert_mirrored(&s, id);
    s.fit(id, data, None, &opts, &mut support_observer())
        .unwrap();
    assert_mirrored(&s, id);
}

#[test]
fn bad_shapes_are_errors_not_panics() {
    let s = strategy(2);
    let id = build(
        &s,
        Opt::Sgd {
            lr: 0.1,
            momentum: 0.0,
        },
    );
    let x = vec![0.0f32; 11];
    let y = vec![0.0f32; 2];
    let bad = Dataset {
        x: &x,
        x_width: INPUT,
        y: &y,
        y_width: 1,
    };
    let opts = FitOptions {
        epochs: 1,
        batch_size: 4,
        ..FitOptions::default()
    };
    assert!(matches!(
        s.fit(id, bad, None, &opts, &mut support_observer()),
        Err(DistributeError::InvalidInput(_))
    ));
    assert!(matches!(
        s.fit(ModelId(999), bad, None, &opts, &mut support_observer()),
        Err(DistributeError::InvalidInput(_))
    ));
    let x = vec![0.0f32; 10];
    let ok_x = Dataset {
        x: &x,
        x_width: INPUT,
        y: &y,
        y_width: 1,
    };
    assert!(matches!(
        s.fit(ModelId(999), ok_x, None, &opts, &mut support_observer()),
        Err(DistributeError::UnknownModel(999))
    ));
}

#[test]
fn a_panicking_replica_is_an_error_and_the_strategy_recovers() {
    let s = strategy(2);
    let id = s
        .build_model(|rank, _| {
            let mut m = HostMlp::new(INPUT, HIDDEN, CLASSES, Opt::Adam { lr: 0.01 }, 3);
            if rank == 0 {
                m.panic_at = Some(3);
            }
            Ok(Box::new(m) as Box<dyn ReplicaModel>)
        })
        .unwrap();
    let (x, y) = dataset(SAMPLES, INPUT, CLASSES);
    let data = Dataset {
        x: &x,
        x_width: INPUT,
        y: &y,
        y_width: 1,
    };
    let opts = FitOptions {
        epochs: 1,
        batch_size: 6,
        ..FitOptions::default()
    };
    match s.fit(id, data, None, &opts, &mut support_observer()) {
        Err(DistributeError::ReplicaPanicked { rank: 0, message }) => {
            assert!(message.contains("told to panic"))
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_mirrored(&s, id);
    s.fit(id, data, None, &opts, &mut support_observer())
        .unwrap();
    assert_mirrored(&s, id);
}
