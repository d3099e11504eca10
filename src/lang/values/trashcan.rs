//! Dropping deeply nested values without deep recursion, as CPython's "trashcan" does.
//! Dropping a list drops its items, which drops their items, and so on: a list nested ten
//! million deep (`a = [a]` in a loop), a long chain of instances linked by an attribute,
//! or a tuple of a tuple of ... would take ten million Rust frames and overflow the
//! interpreter's stack. Containers (lists, tuples, dicts, sets, instances) hand their
//! contents here when their last reference goes: up to [`MAX_DEPTH`] nested drops run at
//! once; deeper ones are set aside and dropped by the outermost drop, one at a time, after
//! it returns to the top. Only the interpreter's own thread drops values.

use std::any::Any;
use std::cell::{Cell, RefCell};

use super::value::Value;

/// Nested drops deeper than this are deferred to the outermost one.
const MAX_DEPTH: usize = 1000;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    static PENDING: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// Drops `contents` (a container's items, moved out of it) one level deeper, or sets it
/// aside when the drops in progress already nest [`MAX_DEPTH`] deep.
pub fn release<T: 'static>(contents: T) {
    let depth = DEPTH.get();
    if depth >= MAX_DEPTH {
        let rest: Box<dyn Any> = Box::new(contents);
        // During the thread's own teardown the list is gone; the piece is dropped here then.
        let _ = PENDING.try_with(|p| p.borrow_mut().push(rest));
        return;
    }
    DEPTH.set(depth + 1);
    drop(contents);
    if depth == 0 {
        drain();
    }
    DEPTH.set(depth);
}

/// The same for items that cannot be moved out as one piece (a tuple's slice): each is
/// replaced by `None` and dropped.
pub fn release_each(items: &mut [Value]) {
    let depth = DEPTH.get();
    if depth >= MAX_DEPTH {
        let moved: Vec<Value> = items
            .iter_mut()
            .map(|v| std::mem::replace(v, Value::None))
            .collect();
        release(moved);
        return;
    }
    DEPTH.set(depth + 1);
    for v in items.iter_mut() {
        drop(std::mem::replace(v, Value::None));
    }
    if depth == 0 {
        drain();
    }
    DEPTH.set(depth);
}

/// Drops what deeper drops set aside, one piece at a time (each may set aside more).
fn drain() {
    loop {
        let next = PENDING.try_with(|p| p.borrow_mut().pop()).ok().flatten();
        match next {
            Some(piece) => drop(piece),
            None => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millions_of_nested_containers_drop_on_a_small_stack() {
        let done = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| {
                let mut a = Value::list(vec![]);
                let mut t = Value::tuple(vec![]);
                for _ in 0..2_000_000 {
                    a = Value::list(vec![a]);
                    t = Value::tuple(vec![t]);
                }
                let mut d = Value::dict_from(vec![]);
                for _ in 0..1_000_000 {
                    d = Value::dict_from(vec![("d", d)]);
                }
                drop((a, t, d));
                DEPTH.get() == 0 && PENDING.with(|p| p.borrow().is_empty())
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(done);
    }
}
