//! TensorFlow's random numbers and Python's `random` module seen from a notebook. Against
//! real CPython 3.11 / TensorFlow 2.21: every cell of
//! tests/fixtures/tf/surface_reference.json (CPython's Mersenne Twister streams through
//! every sampler of `random` and their errors; `tf.random.set_seed` with the op seeds TF
//! derives, uniform floats and ints, normal and truncated normal samples, op seeds with
//! and without a global seed, the stateless ops, `tf.random.Generator`, and the str and
//! repr of dtypes; `tf.size`, `tf.tile`, `tf.linspace`, `tf.cumsum`, `tf.sort`/`tf.argsort`
//! with their errors; `tf.boolean_mask`, `tf.unique`/`unique_with_counts`,
//! `tf.math.top_k` and `tf.gather_nd` with theirs) runs in a fresh session and must print
//! what the reference printed:
//! Python's floats exactly, float32 samples within float32 rounding, other text exactly.
//! The fixture is written by tests/fixtures/tf/make_surface_reference.py. Against the
//! kernel itself: a random op inside `tf.function` draws fresh numbers on every call;
//! tile, cumsum, sort and the selection ops differentiate as finite differences say and
//! follow each call's input inside `tf.function`.

use crate::common::cells::{self, every_cell_matches, Fixture};

use mirror_kernel::session::Session;

#[test]
fn every_cell_matches_the_reference() {
    every_cell_matches(&Fixture {
        file: "tests/fixtures/tf/surface_reference.json",
        tol: 1e-6,
        warnings: "UserWarning:",
        printed: cells::stdout,
    });
}

#[test]
fn random_ops_in_a_tf_function_draw_fresh_numbers_on_every_call() {
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let out = cells::ok(
        &session,
        r#"import tensorflow as tf
tf.random.set_seed(3)

@tf.function
def f():
    return tf.random.uniform([4]), tf.random.normal([4], seed=2)

a = [t.numpy().tolist() for t in f()]
b = [t.numpy().tolist() for t in f()]
c = [t.numpy().tolist() for t in f()]
print(a[0] != b[0], b[0] != c[0], a[1] != b[1], b[1] != c[1])
print(all(0.0 <= v < 1.0 for v in a[0] + b[0] + c[0]))
"#,
    );
    assert_eq!(out, "True True True True\nTrue\n");
}

/// The largest gap between the tape's gradient of `sum(f(x))` and central differences in
/// float64 of the kernel's own forward values, over every `f` of `fns` (a Python list of
/// functions of a 2x3 float64 tensor, written after `prelude`), printed with True when
/// below 1e-6 and the gradient's dtype.
fn finite_differences(prelude: &str, fns: &str) -> String {
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let code = format!(
        r#"import tensorflow as tf
import numpy as np
x0 = np.array([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]])
{prelude}worst = 0.0
for f in [{fns}]:
    x = tf.constant(x0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(f(x))
    g = tape.gradient(y, x).numpy()
    h = 1e-6
    for i in range(2):
        for j in range(3):
            up = x0.copy()
            up[i, j] += h
            down = x0.copy()
            down[i, j] -= h
            fd = (float(tf.reduce_sum(f(tf.constant(up)))) - float(tf.reduce_sum(f(tf.constant(down))))) / (2 * h)
            worst = max(worst, abs(fd - float(g[i, j])))
print(worst < 1e-6, g.dtype)
"#
    );
    cells::ok(&session, &code)
}

#[test]
fn composed_op_gradients_match_finite_differences() {
    // reduce_variance, reduce_std, tile and sort are composed of op-library ops; cumsum
    // is the scan op with its reversed-scan gradient.
    let fns = r#"lambda t: tf.math.reduce_std(t),
          lambda t: tf.math.reduce_variance(t, axis=1),
          lambda t: tf.math.reduce_std(t, axis=0, keepdims=True),
          lambda t: tf.reduce_sum(tf.math.reduce_variance(t, axis=[0, 1]) * 3.0),
          lambda t: tf.tile(t, [2, 3]) ** 2 * tf.reshape(tf.range(36, dtype=tf.float64), [4, 9]),
          lambda t: tf.cumsum(t, axis=1) ** 2,
          lambda t: tf.cumsum(t, axis=0, exclusive=True, reverse=True) ** 3,
          lambda t: tf.sort(t, direction="DESCENDING") * tf.constant([1.0, 2.0, 3.0], tf.float64),
          lambda t: tf.sort(t, axis=0) * tf.constant([[1.0], [5.0]], tf.float64)"#;
    assert_eq!(finite_differences("", fns), "True float64\n");
}

#[test]
fn tile_cumsum_and_sort_in_a_tf_function_follow_each_call_s_input() {
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let out = cells::ok(
        &session,
        r#"import tensorflow as tf

@tf.function
def f(x):
    return tf.tile(x, [2]), tf.cumsum(x, reverse=True), tf.sort(x), tf.size(x)

for v in [[1.0, 3.0, 2.0], [6.0, 4.0, 5.0]]:
    print([t.numpy().tolist() for t in f(tf.constant(v))])
"#,
    );
    assert!(
        out.ends_with(
            "[[1.0, 3.0, 2.0, 1.0, 3.0, 2.0], [6.0, 5.0, 2.0], [1.0, 2.0, 3.0], 3]\n\
             [[6.0, 4.0, 5.0, 6.0, 4.0, 5.0], [15.0, 9.0, 5.0], [4.0, 5.0, 6.0], 3]\n"
        ),
        "{out}"
    );
}

#[test]
fn image_op_gradients_match_finite_differences() {
    // Flips and rot90 are reversing strided slices and transposes of the op library; each
    // output position weighs differently, so a wrong source position shows.
    let fns = r#"lambda t: tf.image.flip_left_right(tf.reshape(t, [2, 3, 1])) * w,
          lambda t: tf.image.flip_up_down(tf.reshape(t, [1, 2, 3, 1])) ** 2 * w4,
          lambda t: tf.image.rot90(tf.reshape(t, [2, 3, 1])) ** 2 * tf.reshape(w, [3, 2, 1]),
          lambda t: tf.image.rot90(tf.reshape(t, [1, 2, 3, 1]), k=3) ** 3 * tf.reshape(w, [1, 3, 2, 1]),
          lambda t: tf.image.rot90(tf.reshape(t, [2, 3, 1]), k=2) * w,
          lambda t: tf.image.convert_image_dtype(tf.reshape(t, [2, 3, 1]), tf.float64) * w"#;
    let prelude = "w = tf.reshape(tf.range(1.0, 7.0, dtype=tf.float64), [2, 3, 1])\nw4 = tf.reshape(w, [1, 2, 3, 1])\n";
    assert_eq!(finite_differences(prelude, fns), "True float64\n");
}

#[test]
fn map_fn_gradients_match_finite_differences() {
    // map_fn unstacks, calls the function per row and stacks: the tape sees each step.
    let fns = r#"lambda t: tf.map_fn(lambda r: r ** 2 * tf.constant([1.0, 2.0, 3.0], tf.float64), t),
          lambda t: tf.map_fn(lambda r: tf.reduce_sum(r ** 3), t) * tf.constant([1.0, 5.0], tf.float64),
          lambda t: tf.map_fn(lambda p: p[0] * p[1], (t, t * t), fn_output_signature=tf.float64)"#;
    assert_eq!(finite_differences("", fns), "True float64\n");
}

#[test]
fn scatter_gradients_match_finite_differences() {
    // The scatters run the op library's scatter-add, whose gradient is the gather: each
    // update row gets the output gradient at its position, repeated positions summed;
    // an update overwrites, so `tensor` gets no gradient where it was written.
    let fns = r#"lambda t: tf.scatter_nd([[2], [0]], t, [4, 3]) ** 2 * w43,
          lambda t: tf.scatter_nd([[1, 1], [0, 2], [1, 1]], tf.reshape(t, [6])[:3], [2, 3]) ** 3 * w,
          lambda t: tf.tensor_scatter_nd_add(t ** 2, [[0, 1], [1, 0], [0, 1]], tf.constant([1.0, 2.0, 3.0], tf.float64)) * w,
          lambda t: tf.tensor_scatter_nd_add(tf.ones([4, 3], tf.float64), [[3], [1]], t ** 2) * w43,
          lambda t: tf.tensor_scatter_nd_update(t * t, [[1, 2], [0, 0]], tf.constant([4.0, 5.0], tf.float64)) * w,
          lambda t: tf.tensor_scatter_nd_update(tf.ones([4, 3], tf.float64), [[3], [0]], t ** 3) * w43"#;
    let prelude = "w = tf.reshape(tf.range(1.0, 7.0, dtype=tf.float64), [2, 3])\nw43 = tf.reshape(tf.range(1.0, 13.0, dtype=tf.float64), [4, 3])\n";
    assert_eq!(finite_differences(prelude, fns), "True float64\n");
}

#[test]
fn selection_gradients_match_finite_differences() {
    // top_k (the TopKV2 op, whose gradient scatters back to the chosen positions),
    // boolean_mask with an axis, a mask index, gather_nd and an exclusive scan.
    let fns = r#"lambda t: tf.math.top_k(t, k=2).values * w,
          lambda t: tf.nn.top_k(tf.transpose(t), k=1).values ** 2,
          lambda t: tf.boolean_mask(t, [True, False, True], axis=1) ** 2 * w,
          lambda t: t[t > 0.0] ** 3,
          lambda t: tf.gather_nd(t, [[1, 2], [0, 0], [1, 2]]) ** 2,
          lambda t: tf.gather_nd(t, [[1], [1]]) * tf.constant([[1.0, 2.0, 3.0]], tf.float64),
          lambda t: tf.cumsum(t * t, axis=1, exclusive=True) * tf.constant([1.0, 2.0, 3.0], tf.float64)"#;
    let prelude = "w = tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64)\n";
    assert_eq!(finite_differences(prelude, fns), "True float64\n");
}

#[test]
fn selection_ops_in_a_tf_function_follow_each_call_s_input() {
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let out = cells::ok(
        &session,
        r#"import tensorflow as tf

@tf.function
def f(x):
    top = tf.math.top_k(x, k=2)
    u = tf.unique(x)
    return top.values, top.indices, u.y, u.idx

for v in [[1.0, 3.0, 1.0], [6.0, 4.0, 5.0]]:
    print([t.numpy().tolist() for t in f(tf.constant(v))])
"#,
    );
    assert!(
        out.ends_with(
            "[[3.0, 1.0], [1, 0], [1.0, 3.0], [0, 1, 0]]\n\
             [[6.0, 5.0], [0, 2], [6.0, 4.0, 5.0], [0, 1, 2]]\n"
        ),
        "{out}"
    );
}
