//! Per-fit statistics for the teaching view: how many replicas, what each one's local batch
//! was, and where the step time went (compute, all-reduce, optimizer update). Times are
//! measured on the replica threads and summed over the fit; "all-reduce" includes waiting
//! for the slowest replica to arrive, which is what a student sees as synchronisation cost.

use std::fmt;
use std::time::Duration;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FitStats {
    pub replicas: usize,
    /// The all-reduce's name (`ring`, `nccl`).
    pub all_reduce: &'static str,
    pub global_batch: usize,
    /// The local batch of each replica for a full global batch.
    pub local_batch: Vec<usize>,
    /// Length of the flat gradient each replica all-reduces.
    pub gradient_len: usize,
    pub steps: usize,
    pub samples: usize,
    /// Wall time of all training steps together (not evaluation or callbacks).
    pub step_time: Duration,
    /// Per replica: forward and backward.
    pub compute: Vec<Duration>,
    /// Per replica: inside the all-reduce, including waiting for the others.
    pub all_reduce_time: Vec<Duration>,
    /// Per replica: the optimizer update.
    pub update: Vec<Duration>,
}

impl FitStats {
    pub fn new(
        replicas: usize,
        all_reduce: &'static str,
        global_batch: usize,
        local_batch: Vec<usize>,
    ) -> Self {
        FitStats {
            replicas,
            all_reduce,
            global_batch,
            local_batch,
            compute: vec![Duration::ZERO; replicas],
            all_reduce_time: vec![Duration::ZERO; replicas],
            update: vec![Duration::ZERO; replicas],
            ..FitStats::default()
        }
    }

    /// Adds one step's per-replica times.
    pub fn add_step(&mut self, wall: Duration, samples: usize, per_replica: &[[Duration; 3]]) {
        self.steps += 1;
        self.samples += samples;
        self.step_time += wall;
        for (r, t) in per_replica.iter().enumerate() {
            if let (Some(c), Some(a), Some(u)) = (
                self.compute.get_mut(r),
                self.all_reduce_time.get_mut(r),
                self.update.get_mut(r),
            ) {
                *c += t[0];
                *a += t[1];
                *u += t[2];
            }
        }
    }

    fn mean_share(&self, part: &[Duration]) -> f64 {
        let wall = self.step_time.as_secs_f64();
        if wall <= 0.0 || part.is_empty() {
            return 0.0;
        }
        let mean = part.iter().map(Duration::as_secs_f64).sum::<f64>() / part.len() as f64;
        (mean / wall).min(1.0)
    }

    /// Share of step time spent computing forward/backward (mean over replicas).
    pub fn compute_share(&self) -> f64 {
        self.mean_share(&self.compute)
    }

    /// Share of step time spent in the all-reduce (mean over replicas).
    pub fn all_reduce_share(&self) -> f64 {
        self.mean_share(&self.all_reduce_time)
    }

    /// Share of step time spent in the optimizer update (mean over replicas).
    pub fn update_share(&self) -> f64 {
        self.mean_share(&self.update)
    }

    /// Training throughput over the steps alone.
    pub fn samples_per_second(&self) -> f64 {
        let wall = self.step_time.as_secs_f64();
        if wall <= 0.0 {
            0.0
        } else {
            self.samples as f64 / wall
        }
    }
}

impl fmt::Display for FitStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} replica(s), {} all-reduce of {} values; global batch {} -> local {:?}",
            self.replicas, self.all_reduce, self.gradient_len, self.global_batch, self.local_batch
        )?;
        write!(
            f,
            "{} steps, {:.0} samples/s; step time: compute {:.1}%, all-reduce {:.1}%, update {:.1}%",
            self.steps,
            self.samples_per_second(),
            100.0 * self.compute_share(),
            100.0 * self.all_reduce_share(),
            100.0 * self.update_share()
        )
    }
}
