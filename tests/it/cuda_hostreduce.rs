//! The host-staged all-reduce (the GPU fallback when NCCL is missing) only uses the `Device`
//! trait, so it is checked here on CPU devices, on any machine: sums in rank order with
//! bit-identical results on every replica, and an aborted round releases the waiting
//! replicas with an error instead of hanging; after `reset` it works again.

use mirror_kernel::device::cpu::CpuDevice;
use mirror_kernel::device::cuda::HostStagedReduce;
use mirror_kernel::device::AllReduce;
use mirror_kernel::device::Device;

#[test]
fn sums_across_replicas() {
    let n = 3;
    let ar = HostStagedReduce::new(n);
    let devs: Vec<CpuDevice> = (0..n).map(CpuDevice::new).collect();
    let data: Vec<Vec<f32>> = (0..n)
        .map(|r| (0..1000).map(|i| (i * (r + 1)) as f32 * 0.001).collect())
        .collect();
    let results: Vec<Vec<f32>> = std::thread::scope(|s| {
        let hs: Vec<_> = devs
            .iter()
            .zip(&data)
            .enumerate()
            .map(|(rank, (d, v))| {
                let ar = &ar;
                s.spawn(move || {
                    let mut t = d.upload(v, &[v.len()]).unwrap();
                    ar.all_reduce_sum(rank, &mut t, d).unwrap();
                    d.download(&t).unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for i in 0..1000 {
        let want = (data[0][i] + data[1][i]) + data[2][i];
        assert_eq!(results[0][i], want, "element {i}");
    }
    assert!(results.iter().all(|r| r == &results[0]), "replicas differ");
}

#[test]
fn abort_releases_waiting_replicas() {
    let ar = HostStagedReduce::new(2);
    let d = CpuDevice::new(0);
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            let mut t = d.upload(&[1.0, 2.0], &[2]).unwrap();
            ar.all_reduce_sum(0, &mut t, &d)
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        // Replica 1 failed before reaching the reduction.
        ar.abort();
        assert!(
            h.join().unwrap().is_err(),
            "the waiting replica gets an error"
        );
    });
    ar.reset();
    let d1 = CpuDevice::new(1);
    std::thread::scope(|s| {
        let h0 = s.spawn(|| {
            let mut t = d.upload(&[1.0, 2.0], &[2]).unwrap();
            ar.all_reduce_sum(0, &mut t, &d).unwrap();
            d.download(&t).unwrap()
        });
        let mut t = d1.upload(&[10.0, 20.0], &[2]).unwrap();
        ar.all_reduce_sum(1, &mut t, &d1).unwrap();
        assert_eq!(d1.download(&t).unwrap(), vec![11.0, 22.0]);
        assert_eq!(h0.join().unwrap(), vec![11.0, 22.0]);
    });
}
