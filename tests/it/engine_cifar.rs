//! `keras.datasets.cifar10` against a tiny cache written in Keras's format by
//! tests/fixtures/engine/make_cifar_fixtures.py (Python 2-style protocol 2 pickles, as the
//! real download holds, and the same files as a .tar.gz), compared with what Keras 3's own
//! `load_batch` and `load_data` steps made of those files (reference.npz). Also: the
//! Keras 3 and older cache layouts, KERAS_HOME, and clear errors for missing, damaged or
//! tampered files.

use mirror_kernel::keras::cifar::{cifar10, cifar10_in};
use mirror_kernel::keras::datasets::{load_npz, Split};
use mirror_kernel::keras::KerasError;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/engine/cifar")
        .join(rel)
}

fn assert_matches_keras(s: &Split) {
    let want = load_npz(
        &fixture("reference.npz"),
        &["x_train", "y_train", "x_test", "y_test"],
        "reference",
    )
    .expect("reference.npz");
    let got = [&s.x_train, &s.y_train, &s.x_test, &s.y_test];
    for (name, (g, w)) in ["x_train", "y_train", "x_test", "y_test"]
        .iter()
        .zip(got.into_iter().zip(&want))
    {
        assert_eq!(g.shape, w.shape, "{name} shape");
        assert_eq!(g.dtype(), "uint8", "{name} dtype");
        assert_eq!(w.dtype(), "uint8", "{name} reference dtype");
        assert_eq!(g.data, w.data, "{name} values");
    }
    assert_eq!(s.x_train.shape, [6, 32, 32, 3]);
    assert_eq!(s.y_train.shape, [6, 1]);
    assert_eq!(s.x_test.shape, [2, 32, 32, 3]);
}

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("engine-cifar-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn copy_batches(to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    let from = fixture("extracted/cifar-10-batches-py");
    for e in std::fs::read_dir(from).expect("fixture dir") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
}

#[test]
fn extracted_batches_load_as_keras_loads_them() {
    assert_matches_keras(&cifar10_in(&fixture("extracted")).expect("load"));
}

#[test]
fn the_downloaded_archive_is_read_when_not_extracted() {
    assert_matches_keras(&cifar10_in(&fixture("archive")).expect("load from .tar.gz"));
    // A damaged archive is a clear error.
    let dir = temp("badtar");
    let bytes = std::fs::read(fixture("archive/cifar-10-python.tar.gz")).expect("read");
    std::fs::write(
        dir.join("cifar-10-python.tar.gz"),
        &bytes[..bytes.len() / 2],
    )
    .expect("w");
    let err = cifar10_in(&dir).expect_err("truncated archive");
    assert!(matches!(err, KerasError::Corrupt { .. }), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn keras3_layout_under_keras_home_and_missing_files() {
    let home = temp("home");
    let datasets = home.join("datasets");
    std::fs::create_dir_all(&datasets).expect("dir");
    let _env = crate::common::env_lock();
    std::env::set_var("KERAS_HOME", &home);
    let err = cifar10().expect_err("empty cache");
    assert_eq!(err.py_exception(), "FileNotFoundError");
    let msg = err.to_string();
    assert!(msg.contains("cifar-10-python.tar.gz"), "{msg}");
    assert!(msg.contains(&datasets.display().to_string()), "{msg}");
    copy_batches(&datasets.join("cifar-10-batches-py-target/cifar-10-batches-py"));
    let loaded = cifar10();
    std::env::remove_var("KERAS_HOME");
    assert_matches_keras(&loaded.expect("Keras 3 layout"));

    // A folder missing one batch names the file.
    let dir = datasets.join("cifar-10-batches-py-target/cifar-10-batches-py");
    std::fs::remove_file(dir.join("data_batch_3")).expect("rm");
    let err = cifar10_in(&datasets).expect_err("incomplete");
    assert_eq!(err.py_exception(), "FileNotFoundError");
    assert!(err.to_string().contains("data_batch_3"), "{err}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn damaged_or_tampered_batches_are_refused() {
    let good = std::fs::read(fixture("extracted/cifar-10-batches-py/test_batch")).expect("read");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..good.len() - 100].to_vec(), "truncated"),
        ("cut header", good[..40].to_vec(), "truncated"),
        // A pickle that would run a shell command if it were executed.
        (
            "os.system",
            b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85R.".to_vec(),
            "Refusing to deserialize `os.system`",
        ),
        // Python 3's protocol 2 spells bytes through `_codecs.encode`, which Keras's
        // restricted unpickler refuses as well.
        (
            "codecs",
            b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00aX\x06\x00\x00\x00latin1\x86R.".to_vec(),
            "Refusing to deserialize `_codecs.encode`",
        ),
        ("not a dict", b"\x80\x02K\x05.".to_vec(), "no 'data' array"),
        ("unknown opcode", b"\x80\x02}\xff.".to_vec(), "opcode 0xff"),
    ];
    for (what, bytes, needle) in cases {
        let dir = temp("bad");
        copy_batches(&dir.join("cifar-10-batches-py"));
        std::fs::write(dir.join("cifar-10-batches-py/test_batch"), &bytes).expect("write");
        let err = cifar10_in(&dir).expect_err(what);
        assert_eq!(err.py_exception(), "ValueError", "{what}: {err}");
        assert!(err.to_string().contains(needle), "{what}: {err}");
        assert!(err.to_string().contains("test_batch"), "{what}: {err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
