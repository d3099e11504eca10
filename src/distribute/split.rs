//! Splitting a global batch across replicas the way TensorFlow's MirroredStrategy does with a
//! distributed dataset: each replica in turn takes `ceil(b / N)` examples, in order, until the
//! batch runs out, so the last replicas may get fewer examples or none at all
//! (b=5, N=4 gives 2, 2, 1, 0). An empty local batch is normal and never an error.

use std::ops::Range;

/// The example range of each replica for a global batch of `global` examples over `replicas`
/// replicas, in rank order. Ranges are contiguous and cover `0..global` exactly.
pub fn split_batch(global: usize, replicas: usize) -> Vec<Range<usize>> {
    let n = replicas.max(1);
    let per = global.div_ceil(n);
    (0..n)
        .map(|r| {
            let lo = (r * per).min(global);
            let hi = ((r + 1) * per).min(global);
            lo..hi
        })
        .collect()
}

/// The sizes of the ranges `split_batch` returns.
pub fn split_sizes(global: usize, replicas: usize) -> Vec<usize> {
    split_batch(global, replicas)
        .iter()
        .map(|r| r.len())
        .collect()
}

/// The global batches of one epoch over `samples` examples: `batch` at a time, in order, the
/// last one possibly smaller (Keras's `steps_per_epoch = ceil(samples / batch)`).
pub fn epoch_batches(samples: usize, batch: usize) -> Vec<Range<usize>> {
    let b = batch.max(1);
    (0..samples.div_ceil(b))
        .map(|i| i * b..((i + 1) * b).min(samples))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_tensorflow_observed_splits() {
        assert_eq!(split_sizes(4, 2), vec![2, 2]);
        assert_eq!(split_sizes(2, 2), vec![1, 1]);
        assert_eq!(split_sizes(5, 4), vec![2, 2, 1, 0]);
        assert_eq!(split_sizes(1, 2), vec![1, 0]);
        assert_eq!(split_sizes(0, 3), vec![0, 0, 0]);
        assert_eq!(split_sizes(7, 1), vec![7]);
        assert_eq!(split_sizes(128, 3), vec![43, 43, 42]);
        assert_eq!(split_sizes(10, 4), vec![3, 3, 3, 1]);
    }

    #[test]
    fn ranges_are_contiguous_and_cover_the_batch() {
        for global in 0..40 {
            for n in 1..6 {
                let ranges = split_batch(global, n);
                assert_eq!(ranges.len(), n);
                let mut next = 0;
                for r in &ranges {
                    assert_eq!(r.start, next);
                    next = r.end;
                }
                assert_eq!(next, global);
            }
        }
    }

    #[test]
    fn epoch_batches_keep_a_short_last_batch() {
        assert_eq!(epoch_batches(10, 4), vec![0..4, 4..8, 8..10]);
        assert_eq!(epoch_batches(8, 4), vec![0..4, 4..8]);
        assert!(epoch_batches(0, 4).is_empty());
    }
}
