//! The benchmark's host MLP must compute true gradients (checked against central finite
//! differences) and learn; the benchmark itself runs as an ignored test that prints its
//! report: `cargo test --release --test distribute_bench -- --ignored --nocapture`.

mod support;

use std::sync::Arc;

use mirror_kernel::device::{Buffer, Device};
use mirror_kernel::distribute::bench::{run_train_bench, synthetic_mnist, train_epoch, HostMlp};
use mirror_kernel::distribute::{DeviceFactory, ReplicaModel};
use support::HostOnly;

fn factory() -> DeviceFactory {
    Arc::new(|spec| Ok(Box::new(HostOnly(spec.index)) as Box<dyn Device>))
}

#[test]
fn host_mlp_gradient_matches_finite_differences() {
    let dev = HostOnly(0);
    let (inp, hid, cls, rows) = (6, 5, 4, 3);
    let mut model = HostMlp::new(inp, hid, cls, 1e-3, 3);
    let x: Vec<f32> = (0..rows * inp)
        .map(|i| ((i * 37 % 11) as f32 / 5.0) - 1.0)
        .collect();
    let y = vec![1.0f32, 3.0, 0.0];
    // Global batch 6 > local 3: the gradient is of sum(loss)/6.
    let global = 6;
    model.compute_gradients(&x, &y, rows, global).unwrap();
    let Buffer::Host(grad) = &model.gradient().buf else {
        panic!("host gradient expected")
    };
    let grad = grad.clone();
    let base = model.variables(&dev).unwrap();
    let flat: Vec<f64> = base.iter().flatten().map(|v| f64::from(*v)).collect();
    let loss_at = |m: &mut HostMlp, values: &[f64]| -> f64 {
        let mut vars = Vec::new();
        let mut at = 0;
        for v in &base {
            vars.push(
                values[at..at + v.len()]
                    .iter()
                    .map(|x| *x as f32)
                    .collect::<Vec<f32>>(),
            );
            at += v.len();
        }
        m.set_variables(&dev, &vars).unwrap();
        m.evaluate_batch(&dev, &x, &y, rows).unwrap().values[0] / global as f64
    };
    let h = 1e-2;
    for i in (0..flat.len()).step_by(3) {
        let mut plus = flat.clone();
        plus[i] += h;
        let mut minus = flat.clone();
        minus[i] -= h;
        let numeric = (loss_at(&mut model, &plus) - loss_at(&mut model, &minus)) / (2.0 * h);
        let analytic = f64::from(grad[i]);
        assert!(
            (numeric - analytic).abs() < 2e-3,
            "parameter {i}: numeric {numeric} vs analytic {analytic}"
        );
    }
}

#[test]
fn host_mlp_learns_on_two_replicas() {
    let (x, y) = synthetic_mnist(2048, 1);
    let build = HostMlp::builder(784, 32, 10);
    let row = train_epoch(2, &factory(), &build, &x, &y, 64).unwrap();
    // Ten balanced-ish classes start near ln(10) = 2.30.
    assert!(row.final_loss < 2.2, "loss {}", row.final_loss);
}

#[test]
#[ignore = "benchmark: run with --release --ignored --nocapture"]
fn bench_train() {
    println!("{}", run_train_bench(factory(), None, 60_000).unwrap());
}
