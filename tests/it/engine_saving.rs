//! Saving, loading and the callbacks that use them: `.keras` archives and `.weights.h5`
//! files round-trip exactly (weights, config, compile settings, optimizer state, so that
//! training resumes bit-identically), bad paths get Keras's messages, damaged files get
//! clear errors, and a callback can change the learning rate, save the weights, stop
//! training and restore the best weights through the epoch loop's seam.

use mirror_kernel::device::cpu::CpuDevice;
use mirror_kernel::keras::callbacks::Callback;
use mirror_kernel::keras::saving::SavedModel;
use mirror_kernel::keras::{
    fit, initial_weights, load_model, load_weights, save_model, save_weights, CompileConfig, Data,
    FitOptions, HostArray, KResult, KerasError, LayerKind, Logs, ModelConfig, Replica, Trainer,
};

use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("engine-saving-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn model() -> (ModelConfig, Replica) {
    let cfg = ModelConfig::sequential(
        &[4, 4, 1],
        vec![
            LayerKind::conv2d(2, (2, 2), "relu").expect("conv"),
            LayerKind::Flatten,
            LayerKind::Dropout {
                rate: 0.2,
                seed: None,
            },
            LayerKind::dense(3, "softmax").expect("dense"),
        ],
    )
    .expect("config");
    let w = initial_weights(&cfg.plan().expect("plan"), 9);
    let mut r = Replica::new(&cfg, &w, Box::new(CpuDevice::new(0))).expect("replica");
    let c = CompileConfig::from_names("adam", "sparse_categorical_crossentropy", &["accuracy"])
        .expect("compile");
    r.compile(&c).expect("compile");
    (cfg, r)
}

fn data() -> (Vec<f32>, Vec<f32>) {
    let x: Vec<f32> = (0..16 * 24)
        .map(|i| ((i * 37) % 11) as f32 / 11.0)
        .collect();
    let y: Vec<f32> = (0..24).map(|i| (i % 3) as f32).collect();
    (x, y)
}

fn restore(saved: &SavedModel) -> Replica {
    let mut r =
        Replica::new(&saved.config, &saved.weights, Box::new(CpuDevice::new(0))).expect("replica");
    if let Some(c) = &saved.compile {
        r.compile(c).expect("compile");
    }
    if let Some(o) = &saved.optimizer {
        r.set_optimizer_state(o).expect("optimizer state");
    }
    r
}

#[test]
fn a_keras_archive_round_trips_and_training_resumes_identically() {
    let dir = scratch("roundtrip");
    let (_, mut r) = model();
    let (x, y) = data();
    let opts = FitOptions {
        epochs: 2,
        batch_size: 8,
        shuffle: false,
        ..FitOptions::default()
    };
    fit(&mut r, Data { x: &x, y: &y }, None, &opts, &mut [], None).expect("fit");
    let path = dir.join("model.keras");
    let before = SavedModel::from_trainer(&r).expect("snapshot");
    save_model(&path, &before).expect("save");
    let after = load_model(&path).expect("load");
    assert_eq!(before, after);
    assert_eq!(after.optimizer.as_ref().map(|o| o.iterations), Some(6));
    let mut r2 = restore(&after);
    r2.set_rank(0, 0x5EED);
    r.train_step(&x[..16 * 8], &y[..8], 8, 8, None)
        .expect("step");
    r2.train_step(&x[..16 * 8], &y[..8], 8, 8, None)
        .expect("step");
    assert_eq!(r.get_weights().expect("w"), r2.get_weights().expect("w"));
    let files: Vec<_> = std::fs::read_dir(&dir).expect("dir").collect();
    assert_eq!(files.len(), 1, "a temporary file was left behind");
}

#[test]
fn weights_files_round_trip_by_position() {
    let dir = scratch("weights");
    let (cfg, r) = model();
    let path = dir.join("w.weights.h5");
    let w = r.get_weights().expect("w");
    save_weights(&path, &cfg, &w, None).expect("save");
    // A model built later has other layer names; Keras matches weights by position.
    let mut names = mirror_kernel::keras::NameScope::default();
    names.unique("conv2d");
    names.unique("dense");
    let other = ModelConfig::named(
        &mut names,
        false,
        &cfg.input_shape,
        cfg.layers.iter().map(|l| l.kind.clone()).collect(),
    )
    .expect("cfg");
    assert_ne!(other.layers[0].name, cfg.layers[0].name);
    assert_eq!(load_weights(&path, &other, None).expect("load").weights, w);
    let small =
        ModelConfig::sequential(&[3], vec![LayerKind::dense(2, "relu").expect("d")]).expect("cfg");
    let err = load_weights(&path, &small, None).expect_err("wrong model");
    assert_eq!(err.py_exception(), "ValueError");
}

#[test]
fn bad_paths_get_keras_messages() {
    let (cfg, r) = model();
    let snap = SavedModel::from_trainer(&r).expect("snapshot");
    let err = save_model(std::path::Path::new("model"), &snap).expect_err("no extension");
    assert_eq!(
        err.to_string(),
        "Invalid filepath extension for saving. Please add either a `.keras` extension for the native Keras format (recommended) or a `.h5` extension. Use `model.export(filepath)` if you want to export a SavedModel for use with TFLite/TFServing/etc. Received: filepath=model."
    );
    assert_eq!(err.py_exception(), "ValueError");
    let err =
        save_weights(std::path::Path::new("w.h5"), &cfg, &snap.weights, None).expect_err("ext");
    assert_eq!(
        err.to_string(),
        "The filename must end in `.weights.h5`. Received: filepath=w.h5"
    );
    let missing = scratch("missing").join("nothing.keras");
    let err = load_model(&missing).expect_err("missing");
    // Keras 3.15 says `File not found: filepath=...` as a ValueError.
    assert_eq!(err.py_exception(), "ValueError");
    assert!(err.to_string().contains("nothing.keras"));
}

#[test]
fn damaged_files_give_errors_not_panics() {
    let dir = scratch("damaged");
    let (cfg, r) = model();
    let path = dir.join("m.keras");
    save_model(&path, &SavedModel::from_trainer(&r).expect("snap")).expect("save");
    let bytes = std::fs::read(&path).expect("read");
    for cut in [0, 10, bytes.len() / 2, bytes.len() - 30] {
        let p = dir.join(format!("cut{cut}.keras"));
        std::fs::write(&p, &bytes[..cut]).expect("write");
        let err = load_model(&p).expect_err("truncated");
        assert!(
            matches!(err, KerasError::Corrupt { .. }),
            "cut {cut}: {err}"
        );
    }
    let mut flipped = bytes.clone();
    for b in flipped.iter_mut().skip(200).step_by(97) {
        *b ^= 0x5A;
    }
    let p = dir.join("flipped.keras");
    std::fs::write(&p, &flipped).expect("write");
    assert!(load_model(&p).is_err());
    let wp = dir.join("w.weights.h5");
    save_weights(&wp, &cfg, &r.get_weights().expect("w"), None).expect("save");
    let wb = std::fs::read(&wp).expect("read");
    std::fs::write(&wp, &wb[..wb.len() - 5]).expect("write");
    let err = load_weights(&wp, &cfg, None).expect_err("truncated weights");
    assert!(
        matches!(err, KerasError::Corrupt { .. } | KerasError::Io { .. }),
        "{err}"
    );
}

/// A callback that uses every seam of the epoch loop at once: from epoch 2 it sets an
/// absurd learning rate, it saves the weights whenever the loss improves, logs the rate,
/// and stops (restoring the best weights) once the loss gets worse.
struct Guard {
    dir: PathBuf,
    best: f64,
    best_weights: Option<Vec<HostArray>>,
    saved: Vec<(usize, PathBuf)>,
    stopped_at: Option<usize>,
}

impl Callback for Guard {
    fn on_epoch_begin(&mut self, epoch: usize, model: &mut dyn Trainer) -> KResult<()> {
        if epoch >= 2 {
            model.set_learning_rate(50.0);
        }
        Ok(())
    }
    fn on_epoch_end(
        &mut self,
        epoch: usize,
        logs: &mut Logs,
        model: &mut dyn Trainer,
    ) -> KResult<bool> {
        logs.insert("learning_rate".into(), f64::from(model.learning_rate()));
        let loss = logs["loss"];
        if loss < self.best {
            self.best = loss;
            let weights = model.get_weights()?;
            let path = self.dir.join(format!("best-{epoch}.weights.h5"));
            save_weights(&path, model.config(), &weights, None)?;
            self.saved.push((epoch, path));
            self.best_weights = Some(weights);
            return Ok(false);
        }
        if let Some(w) = &self.best_weights {
            model.set_weights(w)?;
        }
        self.stopped_at = Some(epoch);
        Ok(true)
    }
}

#[test]
fn a_callback_steers_training_through_the_epoch_loop() {
    let dir = scratch("callbacks");
    let (_, mut r) = model();
    let (x, y) = data();
    let mut guard = Guard {
        dir: dir.clone(),
        best: f64::INFINITY,
        best_weights: None,
        saved: vec![],
        stopped_at: None,
    };
    let opts = FitOptions {
        epochs: 10,
        batch_size: 8,
        shuffle: false,
        on_nan: mirror_kernel::keras::OnNaN::Continue,
        ..FitOptions::default()
    };
    let mut cbs: Vec<&mut dyn Callback> = vec![&mut guard];
    let h = fit(&mut r, Data { x: &x, y: &y }, None, &opts, &mut cbs, None).expect("fit");
    // What the callback logged is in the History, epoch by epoch.
    let lr = f64::from(0.001f32);
    assert_eq!(h.history["learning_rate"][..2], [lr, lr]);
    assert_eq!(h.history["learning_rate"][2], 50.0);
    // The absurd rate made the loss worse, so training stopped early, at that epoch.
    let stopped = guard.stopped_at.expect("training did not stop");
    assert!(h.epoch.len() < 10, "did not stop: {:?}", h.history["loss"]);
    assert_eq!(h.epoch.len(), stopped + 1);
    // The model holds the best weights again, the same as the last file saved.
    let (_, best) = guard.saved.last().expect("a saved file").clone();
    let cfg = r.config().clone();
    assert_eq!(
        load_weights(&best, &cfg, None).expect("load").weights,
        r.get_weights().expect("w")
    );
}
