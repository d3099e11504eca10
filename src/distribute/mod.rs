//! Data parallelism: replicas (one per device, each on its own thread with its own copy of
//! every variable), global-batch splitting, and the choice of an all-reduce (the algorithms
//! themselves live beside their devices, behind `device::collective::AllReduce`).
//! A plain Rust library: it never imports the language, the bindings or the protocol.
//!
//! - [`cluster`]: the cluster `TF_CONFIG` describes (jobs, this task, worker ranks).
//! - [`pool`]: persistent replica threads and cheap dispatch.
//! - [`split`]: TensorFlow's global-batch split.
//! - [`strategy`]: device lists, logical CPU devices and the `MirroredStrategy` core.
//! - [`model`]: the contract a replica's copy of a model fulfils ([`ReplicaModel`]).
//! - [`train`]: distributed fit/evaluate/predict over any [`ReplicaModel`].
//! - [`keras_model`]: the Keras engine's replica on this contract, and [`MirroredTrainer`],
//!   the engine's `Trainer` seam over N replicas.
//! - [`workers`]: `MultiWorkerMirroredStrategy` across processes: the local replicas' ring,
//!   then one rank per worker through the cross-process collective (`collective`).
//! - [`stats`]: per-fit timings for the teaching view.
//! - [`bench`]: the multi-replica figures of `bench train`.
//!
//! # Using it
//!
//! ```no_run
//! use std::sync::Arc;
//! use mirror_kernel::distribute::strategy::{cpu_factory, default_logical_cpus, logical_cpu_devices};
//! use mirror_kernel::distribute::{MirroredStrategy, MirroredTrainer};
//! use mirror_kernel::keras::{fit, initial_weights, CompileConfig, Data, FitOptions, LayerKind, ModelConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // `tf.distribute.MirroredStrategy()` on the logical CPUs (MIRROR_LOGICAL_CPUS, else 1).
//! let devices = logical_cpu_devices(default_logical_cpus());
//! let strategy = Arc::new(MirroredStrategy::new(devices, cpu_factory())?);
//! // A model built under `strategy.scope()`: one copy per replica, same initial weights.
//! let config = ModelConfig::sequential(&[4], vec![LayerKind::dense(3, "softmax")?])?;
//! let weights = initial_weights(&config.plan()?, 0);
//! let compile = CompileConfig::from_names("adam", "sparse_categorical_crossentropy", &["accuracy"])?;
//! let mut model = MirroredTrainer::new(strategy.clone(), &config, &weights, Some(&compile), 0)?;
//! // `model.fit`: the engine's loop, callbacks and interrupt flag, on every replica.
//! let (x, y) = (vec![0.5f32; 8 * 4], vec![1.0f32; 8]);
//! model.begin_fit(4);
//! let history = fit(&mut model, Data { x: &x, y: &y }, None, &FitOptions::default(), &mut [], None)?;
//! println!("{history:?}\n{}", strategy.last_fit_stats().unwrap_or_default());
//! # Ok(())
//! # }
//! ```

pub mod bench;
pub mod cluster;
pub mod keras_model;
pub mod model;
pub mod pool;
pub mod split;
pub mod stats;
pub mod strategy;
pub mod train;
pub mod workers;

pub use keras_model::MirroredTrainer;
pub use model::{
    BatchSums, BoxError, Dataset, FitControl, FitObserver, History, NoObserver, ReduceHook,
    ReplicaModel,
};
pub use pool::ReplicaPool;
pub use split::{epoch_batches, split_batch, split_sizes};
pub use stats::FitStats;
pub use strategy::{DeviceFactory, MirroredStrategy, ModelId, Replica};
pub use train::FitOptions;

use thiserror::Error;

/// Everything that can go wrong in distribution. The bindings map these to Python errors:
/// `Interrupted` to `KeyboardInterrupt`, the others to `RuntimeError`/`ValueError`.
#[derive(Debug, Error)]
pub enum DistributeError {
    #[error("a strategy needs at least one replica")]
    NoReplicas,
    #[error("could not start a replica thread: {0}")]
    Spawn(String),
    #[error("replica {rank} could not be created: {source}")]
    ReplicaInit {
        rank: usize,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("replica {rank} panicked: {message}")]
    ReplicaPanicked { rank: usize, message: String },
    #[error("replica {rank}: {source}")]
    Model {
        rank: usize,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("replica {rank}: {source}")]
    Device {
        rank: usize,
        source: crate::device::DeviceError,
    },
    #[error("no model with id {0} in this strategy (was it built under another strategy?)")]
    UnknownModel(u64),
    #[error("{0}")]
    InvalidInput(String),
    #[error("a replica asked the strategy to run on every replica; that must be done from outside the replicas")]
    Reentrant,
    #[error("training was interrupted")]
    Interrupted,
    /// Joining or running the collective across worker processes failed (a worker that did
    /// not arrive, one that died, a build without the collective).
    #[error("{0}")]
    Cluster(String),
}

pub type Result<T> = std::result::Result<T, DistributeError>;
