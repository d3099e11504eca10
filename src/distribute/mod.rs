//! Data parallelism: replicas (one per device, each on its own thread with its own copy of
//! every variable), global-batch splitting, and all-reduce algorithms behind one trait.
//! A plain Rust library: it never imports the language, the bindings or the protocol.
//!
//! - [`pool`]: persistent replica threads and cheap dispatch.
//! - [`ring`]: the CPU ring all-reduce behind the fixed [`AllReduce`] seam.
//! - [`split`]: TensorFlow's global-batch split.
//! - [`strategy`]: device lists, logical CPU devices and the `MirroredStrategy` core.
//! - [`train`]: the replica model contract and distributed fit/evaluate/predict.
//! - [`keras_model`]: the Keras engine's replica on this contract, and `MirroredTrainer`,
//!   the engine's `Trainer` seam over N replicas.
//! - [`stats`]: per-fit timings for the teaching view.

pub mod allreduce;
pub mod bench;
pub mod keras_model;
pub mod model;
pub mod pool;
pub mod ring;
mod spin;
pub mod split;
pub mod stats;
pub mod strategy;
pub mod train;

pub use allreduce::AllReduce;
pub use keras_model::MirroredTrainer;
pub use model::{
    BatchSums, BoxError, Dataset, FitControl, FitObserver, History, NoObserver, ReduceHook,
    ReplicaModel,
};
pub use pool::ReplicaPool;
pub use ring::RingAllReduce;
pub use split::{epoch_batches, split_batch, split_sizes};
pub use stats::FitStats;
pub use strategy::{DeviceFactory, DeviceKind, DeviceSpec, MirroredStrategy, ModelId, Replica};
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
}

pub type Result<T> = std::result::Result<T, DistributeError>;
