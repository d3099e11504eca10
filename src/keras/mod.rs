//! Keras models, layers, activations, losses, optimizers, metrics, callbacks and saving,
//! as a plain Rust library. Backend-agnostic: it computes through the [`Device`] trait and
//! never imports the language, the bindings or the protocol.
//!
//! The pieces: [`config`] describes a model (plain, cloneable, `Send` data), [`compile`]
//! the loss, optimizer and metrics, [`replica`] holds one device's copy of the variables
//! and runs a training step with an all-reduce hook, `layers` does each layer's arithmetic,
//! [`trainer`] is the seam the epoch loop in [`fit`] drives (one replica, or N mirrored
//! replicas from the distribute part), [`callbacks`] hook into that loop, [`saving`]
//! reads and writes `.keras` and `.weights.h5` files, [`datasets`] reads Keras's dataset
//! cache (with [`cifar`] for CIFAR-10's pickled batches, decoded by the non-executing
//! [`pickle`] reader), [`summary`] computes what `model.summary()` shows, and [`bench`]
//! measures training throughput against the machine's GEMM peak.
//!
//! A single-device training run, in order: `ModelConfig::sequential(input_shape, layers)`
//! (or `ModelConfig::named` with a session's `NameScope`), `initial_weights(&plan, seed)`
//! (or weights from the caller), `Replica::new(&config, &weights, Box::new(device))`,
//! `replica.compile(&CompileConfig::from_names("adam", "mse", &["mae"])?)`, then
//! `fit(&mut replica, Data { x, y }, validation, &FitOptions { .. }, &mut callbacks,
//! interrupt)`, which returns the `History`.
//!
//! [`Device`]: crate::device::Device

pub mod activations;
pub mod bench;
pub mod bidirectional;
pub mod callbacks;
pub mod cifar;
pub mod compile;
pub mod config;
pub mod confusion;
pub mod conv1d;
pub mod datasets;
pub mod error;
pub mod fit;
pub mod init;
mod layers;
pub mod losses;
pub mod merge;
pub mod metrics;
pub mod norm;
pub mod optimizer;
pub mod pickle;
pub mod recurrent;
pub mod replica;
pub mod sample_weight;
pub mod saving;
pub mod scores;
pub mod stateless;
pub mod summary;
pub mod trainer;
pub mod validate;

pub use callbacks::{Callback, TrainInfo};
pub use compile::{CompileConfig, Head, Metric, MetricSpec, OptKind, OptimizerConfig};
pub use config::{
    Act, Init, LayerKind, LayerSpec, MergeOp, ModelConfig, NameScope, Padding, Plan, Stateless,
    VarSpec,
};
pub use error::{KResult, KerasError};
pub use fit::{evaluate, fit, predict, train_on_batch, Data, FitOptions, History, Logs, OnNaN};
pub use init::{initial_weights, HostArray};
pub use replica::{GradSync, OptimizerState, Replica, StepStats};
pub use saving::{load_model, load_weights, save_model, save_weights, SavedModel};
pub use trainer::{Rows, Trainer};
