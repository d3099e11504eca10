//! `keras.datasets` loaders against files in Keras's cache formats: `.npz` archives written
//! by numpy itself (tests/fixtures/engine/make_dataset_fixtures.py), gzip IDX files built
//! here byte by byte, the KERAS_HOME lookup, and clear errors for missing or damaged files.

use mirror_kernel::keras::datasets::{cache_dir, fashion_mnist_at, mnist, mnist_at, ArrayData};
use mirror_kernel::keras::KerasError;
use std::io::Write;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/engine")
        .join(name)
}

#[test]
fn mnist_npz_files_from_numpy_load_with_their_dtype() {
    for name in ["mnist_tiny.npz", "mnist_tiny_compressed.npz"] {
        let s = mnist_at(&fixture(name)).expect(name);
        assert_eq!(s.x_train.shape, [3, 4, 4]);
        assert_eq!(s.x_train.dtype(), "uint8");
        let want: Vec<u8> = (0..48u8).collect();
        assert_eq!(s.x_train.data, ArrayData::U8(want));
        assert_eq!(s.y_train.data, ArrayData::U8(vec![5, 0, 4]));
        assert_eq!(s.x_test.shape, [2, 4, 4]);
        assert_eq!(s.y_test.to_f32(), [7.0, 2.0]);
    }
}

fn idx_gz(path: &Path, shape: &[u32], data: &[u8]) {
    let mut raw = vec![0u8, 0, 8, shape.len() as u8];
    for d in shape {
        raw.extend(d.to_be_bytes());
    }
    raw.extend(data);
    let f = std::fs::File::create(path).expect("create");
    let mut enc = flate2::write::GzEncoder::new(f, flate2::Compression::default());
    enc.write_all(&raw).expect("write");
    enc.finish().expect("finish");
}

#[test]
fn fashion_mnist_idx_files_and_keras_home() {
    let home = std::env::temp_dir().join(format!("engine-datasets-{}", std::process::id()));
    let dir = home.join("datasets").join("fashion-mnist");
    std::fs::create_dir_all(&dir).expect("dir");
    idx_gz(
        &dir.join("train-images-idx3-ubyte.gz"),
        &[2, 2, 3],
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    );
    idx_gz(&dir.join("train-labels-idx1-ubyte.gz"), &[2], &[9, 1]);
    idx_gz(
        &dir.join("t10k-images-idx3-ubyte.gz"),
        &[1, 2, 3],
        &[6, 5, 4, 3, 2, 1],
    );
    idx_gz(&dir.join("t10k-labels-idx1-ubyte.gz"), &[1], &[3]);
    let s = fashion_mnist_at(&dir).expect("load");
    assert_eq!(s.x_train.shape, [2, 2, 3]);
    assert_eq!(s.y_train.data, ArrayData::U8(vec![9, 1]));
    assert_eq!(s.x_test.to_f32(), [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
    // Truncated data is an error, not a panic.
    idx_gz(&dir.join("t10k-labels-idx1-ubyte.gz"), &[5], &[3]);
    let err = fashion_mnist_at(&dir).expect_err("truncated");
    assert!(matches!(err, KerasError::Corrupt { .. }), "{err}");
    std::fs::write(dir.join("t10k-labels-idx1-ubyte.gz"), b"not gzip").expect("write");
    assert!(fashion_mnist_at(&dir).is_err());

    // KERAS_HOME decides where the cache is, and a missing file names its path.
    let _env = crate::common::env_lock();
    std::env::set_var("KERAS_HOME", &home);
    assert_eq!(cache_dir(), home.join("datasets"));
    let err = mnist().expect_err("no mnist.npz there");
    assert_eq!(err.py_exception(), "FileNotFoundError");
    assert!(err.to_string().contains(
        &home
            .join("datasets")
            .join("mnist.npz")
            .display()
            .to_string()
    ));
    std::env::remove_var("KERAS_HOME");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn damaged_npz_files_are_errors() {
    let bytes = std::fs::read(fixture("mnist_tiny.npz")).expect("read");
    let dir = std::env::temp_dir().join(format!("engine-npz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    for cut in [5, bytes.len() / 2, bytes.len() - 10] {
        let p = dir.join(format!("cut{cut}.npz"));
        std::fs::write(&p, &bytes[..cut]).expect("write");
        let err = mnist_at(&p).expect_err("truncated");
        assert!(matches!(err, KerasError::Corrupt { .. }), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
