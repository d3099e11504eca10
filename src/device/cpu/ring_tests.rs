//! Tests of the ring all-reduce: bit-exact sums on every rank against a serial sum in the
//! ring's own order, gradients made of several tensors, layout errors, repeatability, and
//! abort/reset, each rank on a thread of its own as replicas are.

use super::*;
use rand::{Rng, SeedableRng};

/// Runs `f(rank)` on `n` threads at once and returns the results in rank order.
fn on_threads<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = (0..n).map(|rank| s.spawn(move || f(rank))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a rank's thread panicked"))
            .collect()
    })
}

/// Runs the ring over `inputs` (one buffer per replica), each rank on its own thread.
fn reduce(inputs: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let n = inputs.len();
    let ring = RingAllReduce::new(n);
    on_threads(n, |rank| {
        let mut buf = inputs[rank].clone();
        ring.all_reduce_host(rank, &mut buf).unwrap();
        buf
    })
}

#[test]
fn equals_a_serial_sum_and_is_bit_identical_on_every_rank() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for n in 1..=4 {
        for len in [0usize, 1, 2, 3, 5, 7, 64, 101, 1023] {
            let inputs: Vec<Vec<f32>> = (0..n)
                .map(|_| (0..len).map(|_| rng.gen_range(-10.0f32..10.0)).collect())
                .collect();
            let out = reduce(&inputs);
            let exact = ring_order_sum(&inputs);
            for (rank, got) in out.iter().enumerate() {
                // Bit-identical to the ring-order serial sum, hence on every rank.
                let bits: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
                let want: Vec<u32> = exact.iter().map(|v| v.to_bits()).collect();
                assert_eq!(bits, want, "n={n} len={len} rank={rank}");
                // And close to the sum in f64, whatever the order.
                for i in 0..len {
                    let s: f64 = inputs.iter().map(|v| v[i] as f64).sum();
                    assert!((got[i] as f64 - s).abs() < 1e-4, "n={n} len={len} i={i}");
                }
            }
        }
    }
}

#[test]
fn a_gradient_of_several_tensors_reduces_as_one_buffer_laid_end_to_end() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for n in 2..=4 {
        // Segment lengths chosen so that chunk edges fall inside, at and across segments.
        let lens = [3usize, 0, 17, 1, 40, 6];
        let total: usize = lens.iter().sum();
        let inputs: Vec<Vec<f32>> = (0..n)
            .map(|_| (0..total).map(|_| rng.gen_range(-5.0f32..5.0)).collect())
            .collect();
        let ring = RingAllReduce::new(n);
        let out = on_threads(n, |rank| {
            let mut parts: Vec<Vec<f32>> = Vec::new();
            let mut off = 0;
            for l in lens {
                parts.push(inputs[rank][off..off + l].to_vec());
                off += l;
            }
            let mut slices: Vec<&mut [f32]> = parts.iter_mut().map(|p| p.as_mut_slice()).collect();
            ring.ring_host(rank, &mut slices).unwrap();
            parts.concat()
        });
        let want: Vec<u32> = ring_order_sum(&inputs)
            .iter()
            .map(|v| v.to_bits())
            .collect();
        for got in out {
            let bits: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
            assert_eq!(bits, want, "n={n}");
        }
    }
}

#[test]
fn different_tensor_layouts_are_an_error_on_every_rank() {
    let ring = RingAllReduce::new(2);
    // Equal totals (4) but split differently: not the same gradient.
    let out = on_threads(2, |rank| {
        let (mut a, mut b) = (vec![1.0f32; 1 + rank], vec![1.0f32; 3 - rank]);
        let mut slices: Vec<&mut [f32]> = vec![a.as_mut_slice(), b.as_mut_slice()];
        ring.ring_host(rank, &mut slices).is_err()
    });
    assert!(out.into_iter().all(|failed| failed));
}

#[test]
fn is_repeatable_across_many_reductions() {
    let inputs: Vec<Vec<f32>> = (0..3)
        .map(|r| (0..50).map(|i| (i * 7 + r) as f32 * 0.1).collect())
        .collect();
    let ring = RingAllReduce::new(3);
    let first = on_threads(3, |rank| {
        let mut b = inputs[rank].clone();
        ring.all_reduce_host(rank, &mut b).unwrap();
        b
    });
    for _ in 0..200 {
        let again = on_threads(3, |rank| {
            let mut b = inputs[rank].clone();
            ring.all_reduce_host(rank, &mut b).unwrap();
            b
        });
        for (a, b) in first.iter().zip(&again) {
            assert_eq!(a, b);
        }
    }
}

#[test]
fn unequal_lengths_are_an_error_on_every_rank() {
    let ring = RingAllReduce::new(2);
    let out = on_threads(2, |rank| {
        let mut b = vec![1.0f32; 3 + rank];
        ring.all_reduce_host(rank, &mut b).is_err()
    });
    assert!(out.into_iter().all(|failed| failed));
}

#[test]
fn abort_releases_waiting_replicas_and_reset_recovers() {
    let ring = RingAllReduce::new(3);
    let out = on_threads(3, |rank| {
        if rank == 1 {
            ring.abort();
            return false;
        }
        let mut b = vec![1.0f32; 4];
        ring.all_reduce_host(rank, &mut b).is_err()
    });
    assert_eq!(out, vec![true, false, true]);
    ring.reset();
    let out = on_threads(3, |rank| {
        let mut b = vec![rank as f32; 4];
        ring.all_reduce_host(rank, &mut b).unwrap();
        b
    });
    for r in out {
        assert_eq!(r, vec![3.0; 4]);
    }
}
