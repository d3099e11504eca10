//! A CPU device splits its work over threads by outputs, never inside a sum, so the thread
//! count must not change a single bit of training: the same CNN trained on a device with
//! one thread and on devices with two and five ends with identical weights, losses and
//! predictions.

use mirror_kernel::device::cpu::CpuDevice;
use mirror_kernel::keras::{
    initial_weights, CompileConfig, HostArray, LayerKind, ModelConfig, Replica,
};

fn train(threads: usize) -> (Vec<HostArray>, Vec<f64>, Vec<f32>) {
    let cfg = ModelConfig::sequential(
        &[12, 12, 2],
        vec![
            LayerKind::conv2d(8, (3, 3), "relu").expect("conv"),
            LayerKind::max_pool((2, 2)),
            LayerKind::conv2d(16, (3, 3), "tanh").expect("conv"),
            LayerKind::Flatten,
            LayerKind::Dropout {
                rate: 0.25,
                seed: Some(3),
            },
            LayerKind::dense(5, "softmax").expect("dense"),
        ],
    )
    .expect("config");
    let w = initial_weights(&cfg.plan().expect("plan"), 11);
    let dev = CpuDevice::with_threads(0, threads);
    let mut r = Replica::new(&cfg, &w, Box::new(dev)).expect("replica");
    r.compile(
        &CompileConfig::from_names("adam", "sparse_categorical_crossentropy", &[])
            .expect("compile"),
    )
    .expect("compile");
    let batch = 40;
    let x: Vec<f32> = (0..batch * 288)
        .map(|i| ((i * 37 % 101) as f32 / 50.0 - 1.0) * 0.7)
        .collect();
    let y: Vec<f32> = (0..batch).map(|i| (i % 5) as f32).collect();
    let mut losses = vec![];
    for _ in 0..4 {
        let s = r.train_step(&x, &y, batch, batch, None).expect("step");
        losses.push(s.loss_sum);
    }
    let out = r.forward(&x, batch, false).expect("predict");
    (r.get_weights().expect("weights"), losses, out)
}

#[test]
fn the_thread_count_does_not_change_training() {
    let one = train(1);
    for threads in [2, 5] {
        let many = train(threads);
        assert_eq!(one.1, many.1, "losses with {threads} threads");
        assert_eq!(one.2, many.2, "predictions with {threads} threads");
        for (a, b) in one.0.iter().zip(&many.0) {
            assert_eq!(a.data, b.data, "weights with {threads} threads");
        }
    }
}
