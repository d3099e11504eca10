//! Keras models, layers, activations, losses, optimizers, metrics, callbacks and saving,
//! as a plain Rust library. Backend-agnostic: it computes through the [`Device`] trait and
//! never imports the language, the bindings or the protocol.
//!
//! The pieces: [`config`] describes a model (plain, cloneable data), [`compile`] the loss,
//! optimizer and metrics, [`replica`] holds one device's copy of the variables and runs a
//! training step with an all-reduce hook, [`layers`] does each layer's arithmetic.
//!
//! [`Device`]: crate::device::Device

pub mod activations;
pub mod bench;
pub mod callbacks;
pub mod checkpoint;
pub mod compile;
pub mod config;
pub mod datasets;
pub mod error;
pub mod fit;
pub mod init;
mod layers;
pub mod replica;
pub mod saving;
pub mod trainer;
pub mod validate;

pub use callbacks::{Callback, EarlyStopping, LearningRateScheduler, TrainInfo};
pub use checkpoint::ModelCheckpoint;
pub use compile::{CompileConfig, Metric, OptKind, OptimizerConfig};
pub use config::{Act, Init, LayerKind, LayerSpec, ModelConfig, NameScope, Padding, Plan, VarSpec};
pub use error::{KResult, KerasError};
pub use fit::{evaluate, fit, predict, Data, FitOptions, History, Logs};
pub use init::{initial_weights, HostArray};
pub use replica::{GradSync, OptimizerState, Replica, StepStats};
pub use saving::{load_model, load_weights, save_model, save_weights, SavedModel};
pub use trainer::Trainer;
