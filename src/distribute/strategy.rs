//! The core of `tf.distribute.MirroredStrategy`: the device list (TensorFlow's full device
//! names), one persistent replica thread per device holding that device and its copies of
//! every model built under the strategy, the all-reduce that keeps the copies in sync, and the
//! statistics of the last fit. Logical devices follow `tf.config.set_logical_device_configuration`:
//! one physical CPU may be split into N logical CPU devices, and `MIRROR_LOGICAL_CPUS` sets
//! the default for a classroom. Devices are made by a [`DeviceFactory`], so CPU replicas and
//! GPU replicas (from `device::cuda`) plug in the same way; [`MirroredStrategy::for_devices`]
//! picks the factory and the all-reduce from the devices' kind, asking `device::cuda` for
//! GPU replicas through its small seam (no cudarc type is named here). The training loop itself is in
//! `train.rs`; this file never imports the language, the bindings or the protocol.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::model::{BoxError, ReplicaModel};
use super::pool::ReplicaPool;
use super::stats::FitStats;
use super::workers::Placement;
use super::{DistributeError, Result};
use crate::device::cpu::RingAllReduce;
use crate::device::{AllReduce, DResult, Device, DeviceKind, DeviceSpec};

/// The environment variable that sets how many logical CPU devices the kernel shows.
pub const LOGICAL_CPUS_ENV: &str = "MIRROR_LOGICAL_CPUS";

/// `n` logical CPU devices carved from the one physical CPU.
pub fn logical_cpu_devices(n: usize) -> Vec<DeviceSpec> {
    (0..n.max(1)).map(DeviceSpec::cpu).collect()
}

/// Logical devices carved from GPUs: `split[g]` logical devices on physical GPU `g`, numbered
/// in order as TensorFlow numbers them.
pub fn logical_gpu_devices(split: &[usize]) -> Vec<DeviceSpec> {
    let mut out = Vec::new();
    for (physical, &count) in split.iter().enumerate() {
        for _ in 0..count {
            out.push(DeviceSpec::gpu(out.len(), physical));
        }
    }
    out
}

/// Parses a logical CPU count as the environment variable holds it.
pub fn parse_logical_cpus(text: &str) -> std::result::Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=256).contains(&n) => Ok(n),
        _ => Err(format!(
            "{LOGICAL_CPUS_ENV} must be a whole number from 1 to 256, not {text:?}"
        )),
    }
}

/// The default number of logical CPU devices: `MIRROR_LOGICAL_CPUS` when it is set and valid,
/// else 1 (as TensorFlow shows one CPU device).
pub fn default_logical_cpus() -> usize {
    std::env::var(LOGICAL_CPUS_ENV)
        .ok()
        .and_then(|v| parse_logical_cpus(&v).ok())
        .unwrap_or(1)
}

/// The devices `MirroredStrategy()` takes when given none: every GPU, else every logical CPU.
pub fn default_devices(gpus: &[DeviceSpec], logical_cpus: usize) -> Vec<DeviceSpec> {
    if gpus.is_empty() {
        logical_cpu_devices(logical_cpus)
    } else {
        gpus.to_vec()
    }
}

/// Makes the device of one replica, on that replica's own thread.
pub type DeviceFactory = Arc<dyn Fn(&DeviceSpec) -> DResult<Box<dyn Device>> + Send + Sync>;

/// The factory of CPU replicas: one `CpuDevice` per logical CPU device.
pub fn cpu_factory() -> DeviceFactory {
    Arc::new(|spec: &DeviceSpec| {
        Ok(Box::new(crate::device::cpu::CpuDevice::new(spec.index)) as Box<dyn Device>)
    })
}

/// The factory `MirroredStrategy` uses: a `CpuDevice` for a CPU spec, a CUDA device (logical
/// GPU `index` on physical GPU `physical`) for a GPU spec. It runs on the replica's own
/// thread, so a GPU replica's context, stream and cuBLAS handle belong to that thread.
pub fn device_factory() -> DeviceFactory {
    Arc::new(|spec: &DeviceSpec| match spec.kind {
        DeviceKind::Cpu => {
            Ok(Box::new(crate::device::cpu::CpuDevice::new(spec.index)) as Box<dyn Device>)
        }
        DeviceKind::Gpu => crate::device::cuda::replica_device(spec),
    })
}

/// Refuses a device list that mixes CPUs and GPUs: their arithmetic differs in the last
/// bits, so the mirrored copies could not stay bit-identical after an update.
pub fn check_one_kind(devices: &[DeviceSpec]) -> Result<()> {
    let Some(first) = devices.first() else {
        return Err(DistributeError::NoReplicas);
    };
    match devices.iter().find(|d| d.kind != first.kind) {
        None => Ok(()),
        Some(other) => Err(DistributeError::InvalidInput(format!(
            "MirroredStrategy cannot mix CPU and GPU devices ({} and {}): every replica must \
             compute the same way so that the mirrored copies stay identical. Use only GPUs \
             or only CPUs",
            first.short_name(),
            other.short_name()
        ))),
    }
}

/// The all-reduce that fits a device list, with a one-line note for the user when it is a
/// slower fallback: the CPU ring for CPU replicas; for GPU replicas the choice of
/// `device::cuda` (NCCL with one replica per GPU, the own reduce kernel for logical GPUs on
/// one GPU, host staging when NCCL is missing). A mixed list is refused.
pub fn all_reduce_for(devices: &[DeviceSpec]) -> Result<(Arc<dyn AllReduce>, Option<String>)> {
    check_one_kind(devices)?;
    if devices.iter().all(|d| d.kind == DeviceKind::Cpu) {
        return Ok((Arc::new(RingAllReduce::new(devices.len())), None));
    }
    let choice = crate::device::cuda::gpu_all_reduce_for(devices)
        .map_err(|source| DistributeError::Device { rank: 0, source })?;
    Ok((choice.reducer, choice.note))
}

/// Gives every worker the chief's values: the others contribute zeros to one sum across
/// workers, so the chief's bits arrive unchanged.
fn broadcast_from_chief(p: &Placement, values: &mut [Vec<f32>]) -> Result<()> {
    let mut flat: Vec<f32> = values.iter().flatten().copied().collect();
    if p.cross.rank() != 0 {
        flat.iter_mut().for_each(|v| *v = 0.0);
    }
    p.cross.all_reduce_sum(&mut flat).map_err(|e| {
        DistributeError::Cluster(format!("could not share the chief's initial weights: {e}"))
    })?;
    let mut rest = flat.as_slice();
    for v in values.iter_mut() {
        let (head, tail) = rest.split_at(v.len().min(rest.len()));
        v.copy_from_slice(head);
        rest = tail;
    }
    Ok(())
}

/// Identifies a model built under a strategy (its copies live on every replica).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModelId(pub u64);

/// What one replica thread owns: its device and its copy of every model.
pub struct Replica {
    pub rank: usize,
    pub spec: DeviceSpec,
    pub device: Box<dyn Device>,
    pub(crate) models: HashMap<u64, Box<dyn ReplicaModel>>,
    /// This replica's share of a shuffled batch, gathered on its own thread (reused).
    pub(crate) scratch: (Vec<f32>, Vec<f32>),
}

impl Replica {
    /// This replica's copy of a model, with the device it lives on.
    pub fn model(&mut self, id: ModelId) -> Result<(&mut dyn ReplicaModel, &dyn Device)> {
        match self.models.get_mut(&id.0) {
            Some(m) => Ok((m.as_mut(), self.device.as_ref())),
            None => Err(DistributeError::UnknownModel(id.0)),
        }
    }
}

/// The strategy: replicas, all-reduce, and the last fit's statistics.
pub struct MirroredStrategy {
    devices: Vec<DeviceSpec>,
    pub(crate) pool: ReplicaPool<Replica>,
    pub(crate) reducer: Arc<dyn AllReduce>,
    /// Kept so that models can make further devices on their replica's thread.
    factory: DeviceFactory,
    /// Why the all-reduce is a slower fallback, when it is one (shown once to the user).
    note: Option<String>,
    next_model: AtomicU64,
    pub(crate) last_stats: Mutex<Option<FitStats>>,
    /// This worker's place in a cluster of workers (`MultiWorkerMirroredStrategy`).
    placement: Option<Placement>,
}

impl MirroredStrategy {
    /// `MirroredStrategy(devices)`: each replica's device made by [`device_factory`] on its
    /// own thread, and the all-reduce chosen by [`all_reduce_for`]. CPU and GPU devices may
    /// not be mixed.
    pub fn for_devices(devices: Vec<DeviceSpec>) -> Result<Self> {
        let (reducer, note) = all_reduce_for(&devices)?;
        let mut strategy = Self::with_all_reduce(devices, device_factory(), reducer)?;
        strategy.note = note;
        Ok(strategy)
    }

    /// A strategy over `devices` with the CPU ring all-reduce.
    pub fn new(devices: Vec<DeviceSpec>, factory: DeviceFactory) -> Result<Self> {
        let ring: Arc<dyn AllReduce> = Arc::new(RingAllReduce::new(devices.len()));
        Self::with_all_reduce(devices, factory, ring)
    }

    /// A strategy with a given all-reduce (NCCL for GPUs), which must span `devices.len()`.
    pub fn with_all_reduce(
        devices: Vec<DeviceSpec>,
        factory: DeviceFactory,
        reducer: Arc<dyn AllReduce>,
    ) -> Result<Self> {
        if devices.is_empty() {
            return Err(DistributeError::NoReplicas);
        }
        if reducer.replicas() != devices.len() {
            return Err(DistributeError::InvalidInput(format!(
                "the {} all-reduce spans {} replicas but the strategy has {} devices",
                reducer.name(),
                reducer.replicas(),
                devices.len()
            )));
        }
        let specs = devices.clone();
        let make = factory.clone();
        // Each replica's CPU work splits over its share of the cores: one replica (or a
        // few) uses them all, and replicas that fill the cores run one thread each.
        let threads = crate::device::cpu::par::share_of_cores(devices.len());
        let pool = ReplicaPool::new(devices.len(), move |rank| {
            crate::device::cpu::par::set_thread_budget(threads);
            let spec = specs.get(rank).cloned().ok_or_else(|| {
                DistributeError::InvalidInput(format!("no device for replica {rank}"))
            })?;
            let device = make(&spec).map_err(|source| DistributeError::Device { rank, source })?;
            Ok::<_, DistributeError>(Replica {
                rank,
                spec,
                device,
                models: HashMap::new(),
                scratch: (Vec::new(), Vec::new()),
            })
        })?;
        Ok(MirroredStrategy {
            devices,
            pool,
            reducer,
            factory,
            note: None,
            next_model: AtomicU64::new(1),
            last_stats: Mutex::new(None),
            placement: None,
        })
    }

    /// Makes this strategy one worker of a cluster: its replicas take their shares of each
    /// global batch at `placement.first_replica` among all the cluster's replicas.
    pub fn place(&mut self, placement: Placement) {
        self.placement = Some(placement);
    }

    /// This worker's place in its cluster, if it is one worker of several.
    pub fn placement(&self) -> Option<&Placement> {
        self.placement.as_ref()
    }

    /// The rows of a global batch of `global` examples that each local replica trains on:
    /// the batch split over every replica of the cluster, this worker's shares.
    pub fn train_ranges(&self, global: usize) -> Vec<std::ops::Range<usize>> {
        match &self.placement {
            None => crate::distribute::split_batch(global, self.devices.len()),
            Some(p) => crate::distribute::split_batch(global, p.total_replicas)
                .into_iter()
                .skip(p.first_replica)
                .take(self.devices.len())
                .collect(),
        }
    }

    /// `strategy.num_replicas_in_sync`.
    pub fn num_replicas_in_sync(&self) -> usize {
        self.devices.len()
    }

    pub fn devices(&self) -> &[DeviceSpec] {
        &self.devices
    }

    /// The factory that made the replicas' devices; a model that owns its device (the Keras
    /// engine's replica does) calls it on its replica's thread, from `build_model`'s builder.
    pub fn device_factory(&self) -> DeviceFactory {
        self.factory.clone()
    }

    /// Why the all-reduce is a slower fallback (NCCL missing, GPUs shared unevenly), if so.
    pub fn all_reduce_note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// The all-reduce's short name (`ring`, `nccl`, `gpu-reduce`, `host-staged`, `none`).
    pub fn all_reduce_name(&self) -> &'static str {
        self.reducer.name()
    }

    /// Runs `f` on every replica at once (TensorFlow's `strategy.run`), results in rank order.
    pub fn run<R: Send, F: Fn(&mut Replica) -> R + Sync>(&self, f: F) -> Vec<Result<R>> {
        self.pool.run(|_, replica| f(replica))
    }

    /// Builds one copy of a model on every replica (each on its own thread and device), then
    /// copies replica 0's initial values to the others, as TensorFlow initialises mirrored
    /// variables from the primary replica. Every copy starts bit-identical.
    pub fn build_model<B>(&self, build: B) -> Result<ModelId>
    where
        B: Fn(usize, &dyn Device) -> std::result::Result<Box<dyn ReplicaModel>, BoxError> + Sync,
    {
        let id = self.next_model.fetch_add(1, Ordering::Relaxed);
        let built = self.pool.run_fallible(|rank, replica| {
            let model = build(rank, replica.device.as_ref())
                .map_err(|source| DistributeError::Model { rank, source })?;
            replica.models.insert(id, model);
            Ok(())
        });
        if let Err(e) = first_error(built) {
            self.drop_model(ModelId(id));
            return Err(e);
        }
        let id = ModelId(id);
        if self.devices.len() > 1 || self.placement.is_some() {
            let mut initial = self.primary_variables(id)?;
            if let Some(p) = &self.placement {
                broadcast_from_chief(p, &mut initial)?;
            }
            self.set_variables(id, &initial)?;
        }
        Ok(id)
    }

    /// Forgets a model's copies on every replica.
    pub fn drop_model(&self, id: ModelId) {
        let _ = self.pool.run(|_, replica| {
            replica.models.remove(&id.0);
        });
    }

    /// Replica 0's values of every variable of a model, in the model's order.
    pub fn primary_variables(&self, id: ModelId) -> Result<Vec<Vec<f32>>> {
        let mut all = self.replica_variables(id)?;
        if all.is_empty() {
            return Err(DistributeError::NoReplicas);
        }
        Ok(all.swap_remove(0))
    }

    /// Every replica's values of every variable (`[replica][variable][element]`): the test
    /// hook for the mirror invariant and the source of the teaching view's per-replica table.
    pub fn replica_variables(&self, id: ModelId) -> Result<Vec<Vec<Vec<f32>>>> {
        let got = self.pool.run_fallible(|rank, replica| {
            let (model, device) = replica.model(id)?;
            model
                .variables(device)
                .map_err(|source| DistributeError::Model { rank, source })
        });
        got.into_iter().collect()
    }

    /// Overwrites every replica's copy of a model's variables (loading weights, or the
    /// initial broadcast).
    pub fn set_variables(&self, id: ModelId, values: &[Vec<f32>]) -> Result<()> {
        let done = self.pool.run_fallible(|rank, replica| {
            let (model, device) = replica.model(id)?;
            model
                .set_variables(device, values)
                .map_err(|source| DistributeError::Model { rank, source })
        });
        first_error(done)
    }

    /// Records the statistics of the fit in progress (callers driving their own loop).
    pub fn publish_stats(&self, stats: FitStats) {
        *self.last_stats.lock().unwrap_or_else(|e| e.into_inner()) = Some(stats);
    }

    /// The statistics of the last `fit` on this strategy.
    pub fn last_fit_stats(&self) -> Option<FitStats> {
        self.last_stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// The first error of a per-replica result list, preferring a replica's own failure over
/// the "another replica failed" errors it caused in the others.
pub(crate) fn first_error<T>(results: Vec<Result<T>>) -> Result<()> {
    let mut secondary = None;
    for r in results {
        match r {
            Ok(_) => {}
            Err(DistributeError::Device {
                source: crate::device::DeviceError::Unavailable(ref what),
                ..
            }) if what.starts_with("the all-reduce") => {
                if secondary.is_none() {
                    secondary = r.err();
                }
            }
            Err(e) => return Err(e),
        }
    }
    match secondary {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_follow_tensorflow() {
        let cpus = logical_cpu_devices(2);
        assert_eq!(
            cpus[1].full_name(),
            "/job:localhost/replica:0/task:0/device:CPU:1"
        );
        assert_eq!(cpus[0].short_name(), "CPU:0");
        let gpus = logical_gpu_devices(&[2, 1]);
        assert_eq!(
            gpus.iter()
                .map(|d| (d.short_name(), d.physical))
                .collect::<Vec<_>>(),
            vec![
                ("GPU:0".to_string(), 0),
                ("GPU:1".to_string(), 0),
                ("GPU:2".to_string(), 1)
            ]
        );
        assert_eq!(default_devices(&[], 3).len(), 3);
        assert_eq!(default_devices(&gpus, 3), gpus);
    }

    #[test]
    fn logical_cpu_counts_are_validated() {
        assert_eq!(parse_logical_cpus(" 4 "), Ok(4));
        assert!(parse_logical_cpus("0").is_err());
        assert!(parse_logical_cpus("two").is_err());
    }
}
