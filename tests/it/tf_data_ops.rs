//! Scalar conversions of tensors and arrays (`float`, `int`, `bool`), `model.loss`, and the
//! tf.data stages `Dataset.range`, `from_tensors`, `zip`, `filter` and `unbatch`, checked
//! against TensorFlow itself: the kernel runs tests/fixtures/engine/make_data_ops_reference.py
//! and must print what that script printed under TensorFlow 2.21 (data_ops_reference.txt),
//! values, reprs, element specs, lengths and error messages alike.

use crate::common::cells as tf_common;

use mirror_kernel::session::Session;
use std::path::Path;
use tf_common::run;

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/engine")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn conversions_and_dataset_stages_print_what_tensorflow_printed() {
    let script = fixture("make_data_ops_reference.py");
    let want = fixture("data_ops_reference.txt");
    let s = Session::start().expect("session");
    let r = run(&s, &script);
    assert_eq!(r.error, None, "stdout so far:\n{}", r.stdout);
    let got: Vec<&str> = r.stdout.lines().collect();
    let want: Vec<&str> = want.lines().collect();
    assert_eq!(got.len(), want.len(), "got:\n{}", r.stdout);
    for (g, w) in got.iter().zip(&want) {
        if w.starts_with("rangezero -> ") {
            // TF wraps kernel errors in its op-wrapper text; the class and sentence must match.
            assert!(
                g.starts_with("rangezero -> EXC InvalidArgumentError: "),
                "{g}"
            );
            assert!(g.contains("step must be a non-zero integer."), "{g}");
            continue;
        }
        assert_eq!(g, w);
    }
}
