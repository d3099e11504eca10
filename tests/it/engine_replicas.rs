//! The replica design for data parallelism: two replicas on two threads, each with half of
//! every global batch and a summing all-reduce hook, must end bit-identical to each other
//! and equal (to f32 rounding) to one replica trained on the whole batch.

use mirror_kernel::device::cpu::CpuDevice;
use mirror_kernel::device::{DResult, DTensor, Device};
use mirror_kernel::keras::{
    initial_weights, CompileConfig, LayerKind, ModelConfig, Replica, StepStats,
};
use std::sync::{Arc, Barrier, Mutex};

/// A deliberately plain all-reduce for the test: add into a shared vector, then copy out.
struct SumAll {
    acc: Mutex<Vec<f32>>,
    barrier: Barrier,
}

impl SumAll {
    fn reduce(&self, buf: &mut DTensor, dev: &dyn Device) -> DResult<()> {
        let mine = dev.download(buf)?;
        {
            let mut acc = self.acc.lock().unwrap_or_else(|e| e.into_inner());
            if acc.len() != mine.len() {
                *acc = vec![0.0; mine.len()];
            }
            acc.iter_mut().zip(&mine).for_each(|(a, b)| *a += *b);
        }
        self.barrier.wait();
        let sum = self.acc.lock().unwrap_or_else(|e| e.into_inner()).clone();
        dev.write(&sum, buf)?;
        if self.barrier.wait().is_leader() {
            self.acc.lock().unwrap_or_else(|e| e.into_inner()).fill(0.0);
        }
        self.barrier.wait();
        Ok(())
    }
}

fn assert_send<T: Send>() {}

#[test]
fn two_replicas_match_one_replica_on_the_same_global_batch() {
    assert_send::<Replica>();
    assert_send::<ModelConfig>();
    let cfg = ModelConfig::sequential(
        &[6, 6, 1],
        vec![
            LayerKind::conv2d(3, (3, 3), "relu").expect("conv"),
            LayerKind::max_pool((2, 2)),
            LayerKind::Flatten,
            LayerKind::dense(8, "tanh").expect("dense"),
            LayerKind::dense(3, "softmax").expect("dense"),
        ],
    )
    .expect("config");
    let w = initial_weights(&cfg.plan().expect("plan"), 5);
    let compile =
        CompileConfig::from_names("adam", "sparse_categorical_crossentropy", &["accuracy"])
            .expect("compile");
    let (global, per, steps) = (16, 36, 4);
    let x: Vec<f32> = (0..global * per * steps)
        .map(|i| ((i * 7919) % 101) as f32 / 101.0)
        .collect();
    let y: Vec<f32> = (0..global * steps).map(|i| (i % 3) as f32).collect();

    let mut single = Replica::new(&cfg, &w, Box::new(CpuDevice::new(0))).expect("replica");
    single.compile(&compile).expect("compile");
    let mut single_stats = StepStats::default();
    for s in 0..steps {
        let xs = &x[s * global * per..(s + 1) * global * per];
        let ys = &y[s * global..(s + 1) * global];
        single_stats.add(
            &single
                .train_step(xs, ys, global, global, None)
                .expect("step"),
        );
    }

    let reducer = Arc::new(SumAll {
        acc: Mutex::new(vec![]),
        barrier: Barrier::new(2),
    });
    let (x, y) = (Arc::new(x), Arc::new(y));
    let handles: Vec<_> = (0..2)
        .map(|rank| {
            let (cfg, w, compile) = (cfg.clone(), w.clone(), compile.clone());
            let (reducer, x, y) = (reducer.clone(), x.clone(), y.clone());
            std::thread::spawn(move || {
                let mut r =
                    Replica::new(&cfg, &w, Box::new(CpuDevice::new(rank))).expect("replica");
                r.compile(&compile).expect("compile");
                r.set_rank(rank, 1);
                let half = global / 2;
                let mut stats = StepStats::default();
                let sync = |bufs: &mut [DTensor], dev: &dyn Device| {
                    bufs.iter_mut().try_for_each(|b| reducer.reduce(b, dev))
                };
                for s in 0..steps {
                    let start = s * global + rank * half;
                    let xs = &x[start * per..(start + half) * per];
                    let ys = &y[start..start + half];
                    let st = r
                        .train_step(xs, ys, half, global, Some(&sync))
                        .expect("step");
                    stats.add(&st);
                }
                (r.get_weights().expect("weights"), stats)
            })
        })
        .collect();
    let results: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    assert_eq!(results[0].0, results[1].0, "replicas drifted apart");
    let mut both = results[0].1.clone();
    both.add(&results[1].1);
    assert_eq!(both.count, single_stats.count);
    assert!((both.loss_sum - single_stats.loss_sum).abs() < 1e-4 * single_stats.loss_sum);
    assert_eq!(both.metric_sums, single_stats.metric_sums);
    for (a, b) in results[0].0.iter().zip(single.get_weights().expect("w")) {
        for (p, q) in a.data.iter().zip(&b.data) {
            assert!((p - q).abs() <= 1e-5 * (1.0 + q.abs()), "{p} vs {q}");
        }
    }
}
