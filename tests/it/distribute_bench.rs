//! The benchmark's model must learn on two replicas (a short run on fewer samples); the
//! benchmark itself runs as an ignored test that prints its report:
//! `cargo test --release --test distribute_bench -- --ignored --nocapture`.

use mirror_kernel::distribute::bench::{run_train_bench, train_epoch};
use mirror_kernel::distribute::strategy::cpu_factory;
use mirror_kernel::keras::bench::synthetic_data;

#[test]
fn the_bench_model_learns_on_two_replicas() {
    let (x, y) = synthetic_data(4096, 1);
    let row = train_epoch(2, &cpu_factory(), &x, &y, 64).unwrap();
    // Ten classes start near ln(10) = 2.30.
    assert!(row.final_loss < 2.25, "loss {}", row.final_loss);
    assert!(row.samples_per_second > 0.0);
}

#[test]
#[ignore = "benchmark: run with --release --ignored --nocapture"]
fn bench_train() {
    println!("{}", run_train_bench(cpu_factory(), 60_000).unwrap());
}
