//! [`HostStagedReduce`]: the all-reduce that works for any devices: every replica downloads
//! its buffer, rank 0 sums the copies on the host in rank order, every replica uploads the
//! sum. The fallback for GPUs without NCCL or replicas spread unevenly over GPUs; slow, but
//! correct anywhere and deterministic, so mirrored copies stay bit-identical.

use std::sync::{Arc, Mutex};

use super::allreduce::{aborted, check_rank, lock};
use super::gate::Gate;
use crate::device::collective::AllReduce;
use crate::device::{DResult, DTensor, Device, DeviceError};

#[derive(Default)]
struct HostRound {
    parts: Vec<Option<Result<Vec<f32>, String>>>,
    sum: Option<Result<Arc<Vec<f32>>, String>>,
}

/// Download, sum on the host in rank order, upload: works for any devices.
pub struct HostStagedReduce {
    n: usize,
    round: Mutex<HostRound>,
    gate: Gate,
}

impl HostStagedReduce {
    pub fn new(n: usize) -> HostStagedReduce {
        HostStagedReduce {
            n,
            round: Mutex::new(HostRound {
                parts: (0..n).map(|_| None).collect(),
                sum: None,
            }),
            gate: Gate::new(n),
        }
    }
}

fn host_sum(parts: &mut [Option<Result<Vec<f32>, String>>]) -> Result<Arc<Vec<f32>>, String> {
    let mut total: Option<Vec<f32>> = None;
    for p in parts.iter_mut() {
        let v = p
            .take()
            .unwrap_or_else(|| Err("a replica did not arrive".into()))?;
        match total.as_mut() {
            None => total = Some(v),
            Some(t) if t.len() == v.len() => t.iter_mut().zip(&v).for_each(|(a, b)| *a += *b),
            Some(_) => return Err("replicas passed buffers of different lengths".into()),
        }
    }
    Ok(Arc::new(total.unwrap_or_default()))
}

impl AllReduce for HostStagedReduce {
    fn replicas(&self) -> usize {
        self.n
    }

    fn all_reduce_sum(&self, rank: usize, buf: &mut DTensor, device: &dyn Device) -> DResult<()> {
        check_rank(rank, self.n)?;
        let part = device.download(buf).map_err(|e| e.to_string());
        lock(&self.round).parts[rank] = Some(part);
        if !self.gate.wait(true) {
            return Err(aborted());
        }
        if rank == 0 {
            let mut round = lock(&self.round);
            let sum = host_sum(&mut round.parts);
            round.sum = Some(sum);
        }
        self.gate.wait(false);
        let sum = lock(&self.round).sum.clone();
        match sum {
            Some(Ok(s)) => device.write(&s, buf),
            Some(Err(e)) => Err(DeviceError::Cuda(format!("host-staged all-reduce: {e}"))),
            None => Err(DeviceError::Cuda(
                "host-staged all-reduce did not complete".into(),
            )),
        }
    }

    fn name(&self) -> &'static str {
        "host-staged"
    }

    fn abort(&self) {
        self.gate.abort();
    }

    fn reset(&self) {
        self.gate.reset();
    }
}
