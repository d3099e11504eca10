//! How many threads one CPU device may use, and the split of its work over them. A device
//! owns a budget of threads (all the cores for a lone device; the cores left to each replica
//! when a strategy runs several, so that replicas never oversubscribe the machine) and runs
//! its matrix products and element-wise loops in that many parts on rayon's one global pool.
//! Parts are contiguous ranges of independent outputs: no reduction is ever split across
//! threads, so a result never depends on the thread count, and replicas that run the same
//! code get the same bits.

use std::cell::Cell;
use std::ops::Range;

/// The cores this process may run on (read once).
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

thread_local! {
    /// The budget of devices made on this thread, once [`set_thread_budget`] has set one.
    static BUDGET: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Gives every [`CpuDevice`](super::CpuDevice) made later on this thread at most `threads`
/// threads: a strategy calls it on each replica's thread with that replica's share of the
/// cores.
pub fn set_thread_budget(threads: usize) {
    BUDGET.with(|b| b.set(Some(threads.max(1))));
}

/// The budget of a device made now on this thread: the one [`set_thread_budget`] set, else
/// every core.
pub fn current_budget() -> usize {
    BUDGET.with(|b| b.get()).unwrap_or_else(cores)
}

/// The threads each of `replicas` replicas on this machine's CPU gets: the cores shared out,
/// at least one.
pub fn share_of_cores(replicas: usize) -> usize {
    (cores() / replicas.max(1)).max(1)
}

/// Below this many elements an element-wise loop runs on the calling thread: handing work
/// to another thread costs a few microseconds, as long as a few ten thousand additions.
pub const MIN_PARALLEL_ELEMS: usize = 1 << 15;

/// Splits `0..units` into at most `threads` contiguous ranges of at least `min_units` units
/// and runs `f` on each, in parallel when there is more than one. `f` must only write
/// outputs of its own range.
pub fn for_ranges(threads: usize, units: usize, min_units: usize, f: impl Fn(Range<usize>) + Sync) {
    let parts = parts(threads, units, min_units);
    if parts <= 1 {
        f(0..units);
        return;
    }
    let per = units.div_ceil(parts);
    rayon::scope(|s| {
        let f = &f;
        for p in 1..parts {
            let r = (p * per).min(units)..((p + 1) * per).min(units);
            s.spawn(move |_| f(r));
        }
        f(0..per.min(units));
    });
}

/// [`for_ranges`] over a mutable slice cut into chunks of `unit` elements: `f` gets the first
/// unit's index and its own part of `data`.
pub fn for_chunks<T: Send>(
    threads: usize,
    data: &mut [T],
    unit: usize,
    min_units: usize,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let unit = unit.max(1);
    let units = data.len() / unit;
    let parts = parts(threads, units, min_units);
    if parts <= 1 {
        f(0, data);
        return;
    }
    let per = units.div_ceil(parts);
    rayon::scope(|s| {
        let f = &f;
        let mut rest = data;
        let mut first = 0;
        let mut mine = None;
        while !rest.is_empty() {
            let take = (per * unit).min(rest.len());
            let (head, tail) = rest.split_at_mut(take);
            rest = tail;
            if first == 0 {
                mine = Some(head);
            } else {
                let at = first;
                s.spawn(move |_| f(at, head));
            }
            first += per;
        }
        if let Some(head) = mine {
            f(0, head);
        }
    });
}

/// [`for_chunks`] for element-wise work on flat buffers: parts of at least
/// [`MIN_PARALLEL_ELEMS`] elements, `f` given the offset of its part.
pub fn for_elems<T: Send>(threads: usize, data: &mut [T], f: impl Fn(usize, &mut [T]) + Sync) {
    for_chunks(threads, data, 1, MIN_PARALLEL_ELEMS, f)
}

fn parts(threads: usize, units: usize, min_units: usize) -> usize {
    threads.max(1).min(units / min_units.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_element_once_whatever_the_thread_count() {
        for threads in [1, 2, 3, 8] {
            let mut v = vec![0u32; 100_003];
            for_chunks(threads, &mut v, 7, 1000, |first, part| {
                for (i, x) in part.iter_mut().enumerate() {
                    *x += (first * 7 + i) as u32 + 1;
                }
            });
            assert!(v.iter().enumerate().all(|(i, x)| *x == i as u32 + 1));
        }
    }

    #[test]
    fn ranges_cover_every_unit_once() {
        for threads in [1, 2, 5] {
            let hits: Vec<std::sync::atomic::AtomicUsize> =
                (0..1000).map(|_| Default::default()).collect();
            for_ranges(threads, 1000, 10, |r| {
                for i in r {
                    hits[i].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
            assert!(hits
                .iter()
                .all(|h| h.load(std::sync::atomic::Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn a_budget_applies_only_to_its_thread() {
        let inside = std::thread::spawn(|| {
            set_thread_budget(1);
            (current_budget(), super::super::CpuDevice::new(0).threads())
        })
        .join()
        .unwrap();
        assert_eq!(inside, (1, 1));
        assert_eq!(current_budget(), cores());
        assert_eq!(share_of_cores(usize::MAX), 1);
        assert_eq!(share_of_cores(1), cores());
    }
}
