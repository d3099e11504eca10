//! All-reduce for GPU replicas behind the [`AllReduce`] seam:
//! - [`NcclAllReduce`]: one replica per GPU, one NCCL communicator per replica (created
//!   together by `ncclCommInitAll`); each replica thread enqueues its own in-place sum on its
//!   own stream, so nothing waits on the host.
//! - [`LocalGpuReduce`]: several replicas (logical GPUs) on one GPU, which NCCL refuses. The
//!   replicas meet at a barrier, rank 0 launches one kernel that sums every buffer and writes
//!   the sum back to all of them, ordered against the other streams by CUDA events.
//! - [`HostStagedReduce`] (in `hostreduce.rs`): the fallback when NCCL is missing or replicas share GPUs
//!   unevenly: download, sum on the host in rank order, upload. Slow, but correct anywhere.
//!
//! Every variant sums in rank order with the same arithmetic for all ranks, so mirrored
//! copies stay bit-identical. A replica that fails still passes the barriers, so the others
//! get the error instead of waiting forever.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaEvent, CudaStream, DevicePtr, DeviceRepr, PushKernelArg};

use super::device::{flat, CudaDevice};
use super::gate::Gate;
use super::hostreduce::HostStagedReduce;
use super::load::{Kernels, K, MAX_LOCAL_REPLICAS};
use super::nccl::{self, RawComm};
use super::CudaBuffer;
use crate::device::collective::AllReduce;
use crate::device::{Buffer, DResult, DTensor, Device, DeviceError};

fn cuda_buf(buf: &DTensor) -> Result<&CudaBuffer, String> {
    match &buf.buf {
        Buffer::Cuda(b) if b.len == buf.len() => Ok(b),
        Buffer::Cuda(_) => Err("a GPU buffer's length disagrees with its shape".into()),
        Buffer::Host(_) => Err("a host tensor was handed to a GPU all-reduce".into()),
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic on another replica thread must not turn into a second panic here.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn aborted() -> DeviceError {
    DeviceError::Unavailable("the all-reduce (another replica failed before reaching it)".into())
}

pub(crate) fn check_rank(rank: usize, n: usize) -> DResult<()> {
    if rank < n {
        Ok(())
    } else {
        Err(DeviceError::Cuda(format!(
            "replica {rank} is outside 0..{n}"
        )))
    }
}

/// Picks the all-reduce for these replica devices (in rank order): NCCL when each is on its
/// own GPU and NCCL loads, the reduce kernel when all share one GPU, else host staging. Each
/// fallback says so in one line on stderr.
pub fn gpu_all_reduce(devices: &[&CudaDevice]) -> DResult<Box<dyn AllReduce>> {
    let Some(first) = devices.first() else {
        return Err(DeviceError::Unavailable(
            "an all-reduce over zero GPUs".into(),
        ));
    };
    let ordinals: Vec<usize> = devices.iter().map(|d| d.ordinal).collect();
    if ordinals.iter().all(|o| *o == first.ordinal) && devices.len() <= MAX_LOCAL_REPLICAS {
        return Ok(Box::new(LocalGpuReduce::new(first, devices.len())?));
    }
    let mut distinct = ordinals.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() == ordinals.len() {
        match NcclAllReduce::new(&ordinals) {
            Ok(r) => return Ok(Box::new(r)),
            Err(e) => eprintln!("note: {e}; GPUs reduce through host memory instead (slower)"),
        }
    } else {
        eprintln!(
            "note: replicas share GPUs unevenly ({ordinals:?}); they reduce through host memory"
        );
    }
    Ok(Box::new(HostStagedReduce::new(devices.len())))
}

/// NCCL across GPUs, one communicator per replica.
pub struct NcclAllReduce {
    api: &'static nccl::Api,
    comms: Vec<Mutex<Option<RawComm>>>,
    ordinals: Vec<usize>,
    /// Set for communicators this process made alone (`new`), which `reset` can remake;
    /// a multi-worker communicator (`from_ranks`) needs every worker and is not remade.
    remakeable: bool,
}

impl NcclAllReduce {
    /// Communicators for one replica on each listed GPU ordinal (distinct ordinals).
    pub fn new(ordinals: &[usize]) -> Result<NcclAllReduce, String> {
        let api = nccl::api().ok_or_else(|| {
            "NCCL (libnccl.so.2) was not found; install the NCCL runtime or `pip install \
             nvidia-nccl-cu12`, or point MIRROR_NCCL_LIBRARY at the library"
                .to_string()
        })?;
        let ids: Vec<i32> = ordinals
            .iter()
            .map(|o| i32::try_from(*o).map_err(|_| format!("GPU ordinal {o} is out of range")))
            .collect::<Result<_, _>>()?;
        let comms = api.init_all(&ids)?;
        Ok(NcclAllReduce {
            api,
            comms: comms.into_iter().map(|c| Mutex::new(Some(c))).collect(),
            ordinals: ordinals.to_vec(),
            remakeable: true,
        })
    }
}

impl NcclAllReduce {
    /// Joins a communicator that spans processes (MultiWorkerMirroredStrategy): this
    /// process's replicas run on GPUs `ordinals` and take global ranks `first_rank..` of
    /// `world`; `id` is the chief's [`nccl_unique_id`], shared through the cluster spec.
    /// Blocks until every rank of every worker has joined.
    pub fn from_ranks(
        ordinals: &[usize],
        first_rank: usize,
        world: usize,
        id: [u8; 128],
    ) -> Result<NcclAllReduce, String> {
        let api = nccl::api().ok_or_else(|| "NCCL (libnccl.so.2) was not found".to_string())?;
        let uid = nccl::UniqueId {
            internal: id.map(|b| b as std::ffi::c_char),
        };
        // NCCL takes the device from the thread's current context, so each GPU's primary
        // context is made current before its rank joins; the group lets one thread join
        // several ranks without deadlocking on the first.
        let ctxs = ordinals
            .iter()
            .map(|o| CudaContext::new(*o).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        api.group_start()?;
        let mut comms = Vec::new();
        let mut failed = None;
        for (i, ctx) in ctxs.iter().enumerate() {
            let joined = ctx
                .bind_to_thread()
                .map_err(|e| e.to_string())
                .and_then(|_| api.init_rank(world, uid, first_rank + i));
            match joined {
                Ok(c) => comms.push(Mutex::new(Some(c))),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let ended = api.group_end();
        if let Some(e) = failed {
            return Err(e);
        }
        ended?;
        Ok(NcclAllReduce {
            api,
            comms,
            ordinals: ordinals.to_vec(),
            remakeable: false,
        })
    }
}

/// A fresh NCCL unique id: the 128 bytes the chief of a multi-worker run creates and every
/// worker passes to [`NcclAllReduce::from_ranks`].
pub fn nccl_unique_id() -> Result<[u8; 128], String> {
    let api = nccl::api().ok_or_else(|| "NCCL (libnccl.so.2) was not found".to_string())?;
    let id = api.unique_id()?;
    Ok(id.internal.map(|c| c as u8))
}

/// NCCL's version (e.g. 22105 for 2.21.5), when NCCL can be loaded.
pub fn nccl_version() -> Option<i32> {
    nccl::api().and_then(|a| a.version())
}

impl AllReduce for NcclAllReduce {
    fn replicas(&self) -> usize {
        self.comms.len()
    }

    fn all_reduce_sum(&self, rank: usize, buf: &mut DTensor, device: &dyn Device) -> DResult<()> {
        self.all_reduce_sum_many(rank, std::slice::from_mut(buf), device)
    }

    /// Every gradient tensor is reduced in place by its own NCCL call, and the calls are
    /// grouped so that NCCL runs them as one operation (no packing into one buffer).
    fn all_reduce_sum_many(
        &self,
        rank: usize,
        bufs: &mut [DTensor],
        _device: &dyn Device,
    ) -> DResult<()> {
        check_rank(rank, self.comms.len())?;
        let mut parts = Vec::with_capacity(bufs.len());
        for buf in bufs.iter() {
            let b = cuda_buf(buf).map_err(DeviceError::Cuda)?;
            if b.slice.ordinal() != self.ordinals[rank] {
                return Err(DeviceError::WrongDevice(
                    "a buffer on another GPU than its replica's",
                ));
            }
            if b.len > 0 {
                parts.push(b);
            }
        }
        let Some(first) = parts.first() else {
            return Ok(());
        };
        let stream: &Arc<CudaStream> = first.slice.stream();
        stream
            .context()
            .bind_to_thread()
            .map_err(|e| DeviceError::Cuda(e.to_string()))?;
        let guard = lock(&self.comms[rank]);
        let Some(comm) = guard.as_ref() else {
            return Err(aborted());
        };
        self.api.group_start().map_err(DeviceError::Cuda)?;
        let mut outcome = Ok(());
        // The guards record each buffer's use when dropped: keep them until the group has
        // been launched at `group_end`.
        let mut guards = Vec::with_capacity(parts.len());
        for b in &parts {
            let (ptr, sync) = b.slice.device_ptr(b.slice.stream());
            guards.push(sync);
            // SAFETY: `ptr` addresses `b.len` f32 on this rank's GPU, owned by a tensor the
            // caller keeps alive; the operation is ordered on the buffer's own stream, which
            // frees memory only in stream order.
            let r = unsafe {
                self.api.all_reduce_in_place(
                    comm,
                    ptr,
                    b.len,
                    b.slice.stream().cu_stream() as *mut _,
                )
            };
            if let Err(e) = r {
                outcome = Err(DeviceError::Cuda(e));
                break;
            }
        }
        // The group is always closed, even after a failed call, so NCCL's per-thread group
        // state stays balanced.
        let closed = self.api.group_end().map_err(DeviceError::Cuda);
        drop(guards);
        outcome.and(closed)
    }

    fn name(&self) -> &'static str {
        "nccl"
    }

    /// The replicas already in this step have enqueued NCCL kernels that wait for the missing
    /// one; aborting the communicators ends those kernels, so their streams do not hang.
    fn abort(&self) {
        for c in &self.comms {
            if let Some(comm) = lock(c).take() {
                self.api.abort(comm);
            }
        }
    }

    /// Communicators cannot be revived after an abort, so new ones are made for all ranks
    /// (between steps, when no replica is inside the reduction). A failure leaves them
    /// missing, and the next reduction reports it.
    fn reset(&self) {
        if self.comms.iter().all(|c| lock(c).is_some()) || !self.remakeable {
            return;
        }
        for c in &self.comms {
            if let Some(comm) = lock(c).take() {
                self.api.destroy(comm);
            }
        }
        let ids: Vec<i32> = self.ordinals.iter().map(|o| *o as i32).collect();
        if let Ok(fresh) = self.api.init_all(&ids) {
            for (slot, comm) in self.comms.iter().zip(fresh) {
                *lock(slot) = Some(comm);
            }
        }
    }
}

impl Drop for NcclAllReduce {
    fn drop(&mut self) {
        for c in &self.comms {
            if let Some(comm) = lock(c).take() {
                self.api.destroy(comm);
            }
        }
    }
}

/// The device pointers the reduce kernel sums (`struct PtrTable` in kernels.rs).
#[repr(C)]
#[derive(Clone, Copy)]
struct PtrTable([u64; MAX_LOCAL_REPLICAS]);

// SAFETY: a plain array of 64-bit device addresses, laid out as the kernel's struct.
unsafe impl DeviceRepr for PtrTable {}

struct Slot {
    ptr: u64,
    len: usize,
    ready: CudaEvent,
    stream: Arc<CudaStream>,
}

#[derive(Default)]
struct Round {
    slots: Vec<Option<Result<Slot, String>>>,
    done: Option<Arc<CudaEvent>>,
    error: Option<String>,
}

/// Several replicas on one GPU, summed by one kernel.
pub struct LocalGpuReduce {
    n: usize,
    ordinal: usize,
    k: Arc<Kernels>,
    round: Mutex<Round>,
    gate: Gate,
}

impl LocalGpuReduce {
    /// For `n` replicas on `device`'s GPU (any one of them may be passed).
    pub fn new(device: &CudaDevice, n: usize) -> DResult<LocalGpuReduce> {
        if n == 0 || n > MAX_LOCAL_REPLICAS {
            return Err(DeviceError::Unavailable(format!(
                "{n} replicas on one GPU (1 to {MAX_LOCAL_REPLICAS} are supported)"
            )));
        }
        Ok(LocalGpuReduce {
            n,
            ordinal: device.ordinal,
            k: device.k.clone(),
            round: Mutex::new(Round {
                slots: (0..n).map(|_| None).collect(),
                ..Round::default()
            }),
            gate: Gate::new(n),
        })
    }

    fn prepare(&self, buf: &DTensor) -> Result<Slot, String> {
        let b = cuda_buf(buf)?;
        if b.slice.ordinal() != self.ordinal {
            return Err("a buffer on another GPU than the reduction's".into());
        }
        let stream = b.slice.stream().clone();
        let ready = stream.record_event(None).map_err(|e| e.to_string())?;
        let ptr = {
            let (ptr, _guard) = b.slice.device_ptr(&stream);
            ptr
        };
        Ok(Slot {
            ptr,
            len: b.len,
            ready,
            stream,
        })
    }

    /// Rank 0's part: wait for every replica's buffer, sum them all, record completion.
    fn lead(&self, round: &mut Round) -> Result<Arc<CudaEvent>, String> {
        let slots: Vec<Slot> = round
            .slots
            .iter_mut()
            .map(|s| {
                s.take()
                    .unwrap_or_else(|| Err("a replica did not arrive".into()))
            })
            .collect::<Result<_, _>>()?;
        let len = slots.first().map(|s| s.len).unwrap_or(0);
        if slots.iter().any(|s| s.len != len) {
            return Err("replicas passed buffers of different lengths".into());
        }
        let stream = slots[0].stream.clone();
        let mut table = PtrTable([0; MAX_LOCAL_REPLICAS]);
        for (t, s) in table.0.iter_mut().zip(&slots) {
            *t = s.ptr;
            stream.wait(&s.ready).map_err(|e| e.to_string())?;
        }
        if len > 0 {
            let count = self.n as i32;
            let n = len as i64;
            let mut l = stream.launch_builder(self.k.get(K::LocalReduce));
            l.arg(&table).arg(&count).arg(&n);
            // SAFETY: the table holds `count` live buffers of `n` f32 each on this GPU's
            // context; every owner waits for `done` before touching or freeing its buffer.
            unsafe { l.launch(flat(len)) }.map_err(|e| e.to_string())?;
        }
        let done = stream.record_event(None).map_err(|e| e.to_string())?;
        Ok(Arc::new(done))
    }
}

impl AllReduce for LocalGpuReduce {
    fn replicas(&self) -> usize {
        self.n
    }

    fn all_reduce_sum(&self, rank: usize, buf: &mut DTensor, _device: &dyn Device) -> DResult<()> {
        check_rank(rank, self.n)?;
        let slot = self.prepare(buf);
        let own_stream = slot.as_ref().ok().map(|s| s.stream.clone());
        lock(&self.round).slots[rank] = Some(slot);
        if !self.gate.wait(true) {
            return Err(aborted());
        }
        if rank == 0 {
            let mut round = lock(&self.round);
            match self.lead(&mut round) {
                Ok(done) => {
                    round.done = Some(done);
                    round.error = None;
                }
                Err(e) => {
                    round.done = None;
                    round.error = Some(e);
                }
            }
        }
        self.gate.wait(false);
        let (done, error) = {
            let round = lock(&self.round);
            (round.done.clone(), round.error.clone())
        };
        if let Some(e) = error {
            return Err(DeviceError::Cuda(format!("GPU all-reduce: {e}")));
        }
        match (done, own_stream) {
            (Some(done), Some(stream)) => stream
                .wait(&done)
                .map_err(|e| DeviceError::Cuda(e.to_string())),
            _ => Err(DeviceError::Cuda(
                "GPU all-reduce: the round did not complete".into(),
            )),
        }
    }

    fn name(&self) -> &'static str {
        "gpu-reduce"
    }

    fn abort(&self) {
        self.gate.abort();
    }

    fn reset(&self) {
        self.gate.reset();
    }
}
