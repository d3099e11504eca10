//! `MultiWorkerMirroredStrategy` across worker processes. Each worker runs the same program
//! with its own `TF_CONFIG`; its local replicas first sum their gradients through the local
//! all-reduce (the CPU ring), then local replica 0 of every worker sums those partial sums
//! across processes through an existing collective library (Gloo, `crate::collective`), and
//! hands the total back to its local replicas ([`AcrossWorkers`], hierarchical). Every replica
//! of every worker therefore holds the same bits. Each global batch is split over all
//! replicas of all workers in rank order (the chief's first), and each worker computes only
//! its own replicas' shares ([`Placement`]). Joining needs the `gloo` cargo feature; without
//! it, a cluster of several workers is a clear error naming the feature.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::cluster::TfConfig;
use super::strategy::MirroredStrategy;
use super::{DistributeError, Result};
use crate::device::{AllReduce, DResult, DTensor, Device, DeviceError, DeviceKind, DeviceSpec};

/// How long a worker waits for the others (to join, or at any collective) before failing,
/// unless `CommunicationOptions(timeout_seconds=...)` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The collective among one rank per worker process.
pub trait CrossWorker: Send + Sync {
    /// This worker's rank (the chief is 0).
    fn rank(&self) -> usize;
    /// How many workers take part.
    fn size(&self) -> usize;
    /// Sums `data` across the workers in place; every worker gets the same bits.
    fn all_reduce_sum(&self, data: &mut [f32]) -> std::result::Result<(), String>;
}

#[cfg(feature = "gloo")]
impl CrossWorker for crate::collective::gloo::GlooContext {
    fn rank(&self) -> usize {
        crate::collective::gloo::GlooContext::rank(self)
    }
    fn size(&self) -> usize {
        crate::collective::gloo::GlooContext::size(self)
    }
    fn all_reduce_sum(&self, data: &mut [f32]) -> std::result::Result<(), String> {
        crate::collective::gloo::GlooContext::all_reduce_sum(self, data)
    }
}

/// Where this worker's replicas stand among all the replicas of the cluster.
#[derive(Clone)]
pub struct Placement {
    /// The global index of this worker's first replica.
    pub first_replica: usize,
    /// Every worker's replicas together (`num_replicas_in_sync` in TF).
    pub total_replicas: usize,
    pub cross: Arc<dyn CrossWorker>,
}

/// What local replica 0 hands to the others after the cross-process step.
struct Handoff {
    round: u64,
    result: std::result::Result<Arc<Vec<f32>>, String>,
}

/// The hierarchical all-reduce: the local ring, then one rank per worker across processes.
pub struct AcrossWorkers {
    local: Arc<dyn AllReduce>,
    cross: Arc<dyn CrossWorker>,
    handoff: Mutex<Handoff>,
    ready: Condvar,
    /// How many reductions each local replica has finished (they advance together).
    rounds: Vec<AtomicU64>,
}

impl AcrossWorkers {
    pub fn new(local: Arc<dyn AllReduce>, cross: Arc<dyn CrossWorker>) -> AcrossWorkers {
        let n = local.replicas();
        AcrossWorkers {
            local,
            cross,
            handoff: Mutex::new(Handoff {
                round: 0,
                result: Ok(Arc::new(Vec::new())),
            }),
            ready: Condvar::new(),
            rounds: (0..n).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

fn collective_error(text: String) -> DeviceError {
    DeviceError::Collective(format!(
        "the all-reduce across workers failed: {text}\nA worker stopped or could not be \
         reached; every worker must run the same steps."
    ))
}

impl AllReduce for AcrossWorkers {
    fn replicas(&self) -> usize {
        self.local.replicas()
    }

    fn all_reduce_sum(&self, rank: usize, buf: &mut DTensor, device: &dyn Device) -> DResult<()> {
        self.local.all_reduce_sum(rank, buf, device)?;
        let round = self
            .rounds
            .get(rank)
            .map_or(0, |r| r.fetch_add(1, Ordering::AcqRel) + 1);
        if rank == 0 {
            let mut host = device.download(buf)?;
            let result = self
                .cross
                .all_reduce_sum(&mut host)
                .map(|()| Arc::new(host));
            let mut h = self.handoff.lock().unwrap_or_else(|e| e.into_inner());
            h.round = round;
            h.result = result;
            self.ready.notify_all();
        }
        let total = {
            let mut h = self.handoff.lock().unwrap_or_else(|e| e.into_inner());
            while h.round < round {
                h = self.ready.wait(h).unwrap_or_else(|e| e.into_inner());
            }
            h.result.clone()
        };
        let total = total.map_err(collective_error)?;
        device.write(&total, buf)
    }

    fn name(&self) -> &'static str {
        "ring+gloo"
    }

    fn abort(&self) {
        self.local.abort();
    }

    fn reset(&self) {
        self.local.reset();
    }
}

/// The host part of a `host:port` address (brackets of an IPv6 address removed).
#[cfg(any(feature = "gloo", test))]
fn host_of(address: &str) -> &str {
    let host = address.rsplit_once(':').map_or(address, |(h, _)| h);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// Joins the cluster `config` describes: the local replicas on `devices`, the collective
/// across workers, and this worker's place among all replicas. Every worker must call it;
/// it returns once all have joined, or fails after `timeout`.
pub fn join(
    devices: Vec<DeviceSpec>,
    config: &TfConfig,
    timeout: Option<Duration>,
) -> Result<MirroredStrategy> {
    let workers = config.cluster.num_workers();
    let Some(rank) = config.worker_rank() else {
        return Err(DistributeError::Cluster(format!(
            "this task ({:?} {:?}) is not one of the cluster's {workers} chief and worker tasks",
            config.task_type, config.task_id
        )));
    };
    if devices.iter().any(|d| d.kind == DeviceKind::Gpu) {
        return Err(DistributeError::Cluster(
            "MultiWorkerMirroredStrategy across GPU workers needs NCCL's bootstrap across \
             processes, which this kernel does not have yet.\nHint: train the workers on their \
             CPUs (start them with CUDA_VISIBLE_DEVICES= set to nothing), or use \
             tf.distribute.MirroredStrategy() on the GPUs of one machine."
                .into(),
        ));
    }
    let addresses = config.cluster.worker_addresses();
    let cross = connect(rank, &addresses, timeout.unwrap_or(DEFAULT_TIMEOUT))?;
    // Every worker learns every worker's replica count, and so where its own replicas start.
    let mut counts = vec![0f32; workers];
    if let Some(c) = counts.get_mut(rank) {
        *c = devices.len() as f32;
    }
    cross
        .all_reduce_sum(&mut counts)
        .map_err(|e| DistributeError::Cluster(format!("the workers could not agree: {e}")))?;
    let counts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
    let first_replica = counts.iter().take(rank).sum();
    let total_replicas = counts.iter().sum();
    let (local, _) = super::strategy::all_reduce_for(&devices)?;
    let reducer = Arc::new(AcrossWorkers::new(local, cross.clone()));
    let mut strategy =
        MirroredStrategy::with_all_reduce(devices, super::strategy::device_factory(), reducer)?;
    strategy.place(Placement {
        first_replica,
        total_replicas,
        cross,
    });
    Ok(strategy)
}

/// The collective across workers: the chief serves the rendezvous on its `TF_CONFIG` address,
/// every worker joins Gloo through it, its transport bound to its own address's host.
#[cfg(feature = "gloo")]
fn connect(rank: usize, addresses: &[String], timeout: Duration) -> Result<Arc<dyn CrossWorker>> {
    use crate::collective::gloo::GlooContext;
    use crate::collective::rendezvous::{Store, StoreServer, TcpStore};
    let cluster = |e: String| DistributeError::Cluster(e);
    let chief = addresses
        .first()
        .ok_or_else(|| cluster("the cluster has no workers".into()))?;
    let own = addresses
        .get(rank)
        .ok_or_else(|| cluster(format!("no address for worker {rank}")))?;
    let _server = if rank == 0 {
        Some(StoreServer::start(chief).map_err(|e| cluster(e.to_string()))?)
    } else {
        None
    };
    let store: Arc<dyn Store> =
        Arc::new(TcpStore::connect(chief, timeout).map_err(|e| cluster(e.to_string()))?);
    let context =
        GlooContext::join(rank, addresses.len(), store, host_of(own), timeout).map_err(|e| {
            cluster(format!(
                "worker {rank} could not join the other {} workers within {} s: {e}",
                addresses.len() - 1,
                timeout.as_secs()
            ))
        })?;
    Ok(Arc::new(context))
}

#[cfg(not(feature = "gloo"))]
fn connect(_rank: usize, addresses: &[String], _timeout: Duration) -> Result<Arc<dyn CrossWorker>> {
    Err(DistributeError::Cluster(format!(
        "TF_CONFIG describes a cluster of {} workers, but this build of the kernel has no \
         collective across processes.\nHint: rebuild it with the `gloo` cargo feature \
         (`cargo build --release --features gloo`, which needs the libgloo-dev package), or \
         unset TF_CONFIG to train as one local worker.",
        addresses.len()
    )))
}

#[cfg(test)]
mod tests {
    use super::host_of;

    #[test]
    fn the_host_of_an_address_drops_the_port_and_brackets() {
        assert_eq!(host_of("127.0.0.1:2222"), "127.0.0.1");
        assert_eq!(host_of("[::1]:2222"), "::1");
        assert_eq!(host_of("worker-0.example:80"), "worker-0.example");
    }
}
