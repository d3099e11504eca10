//! `tf.train`: training checkpoints. `Checkpoint` (`checkpoint.rs`) groups trackable
//! objects and saves every variable they reach (`graph.rs` names them by TensorFlow's
//! object-graph paths) as a bundle under TensorFlow's file names (the format itself is the
//! engine's, `keras::saving::bundle`); `restore` puts values back, deferring those whose
//! variables are made later (`restore.rs`); `CheckpointManager` and `latest_checkpoint`
//! (`manager.rs`) keep a run's newest checkpoints and find them through the `checkpoint`
//! state file (`state_file.rs`); `list_variables` and `load_variable` (`reader.rs`) read
//! one without restoring it. A mirrored variable is saved once (its first replica)
//! and restored into every replica, so a checkpoint moves between numbers of replicas.
//! This module never touches a device and holds no numerics.

pub mod checkpoint;
pub mod graph;
pub mod manager;
pub mod reader;
pub mod restore;
pub mod state_file;

use super::func;
use crate::lang::{NativeModule, Value};

pub use restore::{keras_variable_made, optimizer_built};

/// The `tf.train` module.
pub fn module() -> Value {
    let m = NativeModule::new("tensorflow.train", "Training checkpoints.")
        .with("Checkpoint", checkpoint::class())
        .with("CheckpointManager", manager::class())
        .with(
            "latest_checkpoint",
            func(
                "latest_checkpoint",
                "latest_checkpoint(checkpoint_dir, latest_filename=None)",
                |args, ctx| {
                    let s = args.bind(
                        "latest_checkpoint",
                        &["checkpoint_dir", "latest_filename"],
                        1,
                    )?;
                    let dir = checkpoint::path_arg(s[0].as_ref().unwrap_or(&Value::None), ctx)?;
                    Ok(manager::latest_checkpoint(&dir).map_or(Value::None, Value::from))
                },
            ),
        );
    for (name, f) in reader::functions() {
        m.set(name, f);
    }
    m.into_value()
}
