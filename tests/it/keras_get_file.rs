//! `tf.keras.utils.get_file` with no network, against what Keras 3.15's `get_file` does
//! with the same arguments: a `file://` origin is copied into `cache_dir/cache_subdir`
//! (announced by "Downloading data from ..."), a cached file is returned without a copy,
//! `extract=True` unpacks zip and gzipped tar archives into the folders Keras names (the
//! origin's file name, the download kept as `<name>_archive`; with an `fname` that has a
//! dot, `<stem>_extracted`), and failed fetches and bad arguments raise Keras's exception
//! types and texts (an origin that needs the network fails as urllib's failed name lookup
//! makes Keras fail).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::common::cells;

use mirror_kernel::session::Session;

/// A fresh folder for one test under the system's temporary folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("get_file_{name}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cache")).unwrap_or_else(|e| panic!("mkdir: {e}"));
    dir
}

fn write_zip(path: &Path, name: &str, body: &[u8]) {
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("create: {e}"));
    let mut z = zip::ZipWriter::new(file);
    z.start_file(name, zip::write::SimpleFileOptions::default())
        .unwrap_or_else(|e| panic!("zip: {e}"));
    z.write_all(body).unwrap_or_else(|e| panic!("zip: {e}"));
    z.finish().unwrap_or_else(|e| panic!("zip: {e}"));
}

/// A gzipped ustar archive of one file in one folder, as `tar czf` writes it.
fn write_tar_gz(path: &Path, name: &str, body: &[u8]) {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..107].copy_from_slice(b"0000644");
    h[108..115].copy_from_slice(b"0000000");
    h[116..123].copy_from_slice(b"0000000");
    h[124..135].copy_from_slice(format!("{:011o}", body.len()).as_bytes());
    h[136..147].copy_from_slice(b"00000000000");
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    let mut tar = h.to_vec();
    tar.extend_from_slice(body);
    tar.resize(512 + body.len().div_ceil(512) * 512 + 1024, 0);
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("create: {e}"));
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    gz.write_all(&tar).unwrap_or_else(|e| panic!("gzip: {e}"));
    gz.finish().unwrap_or_else(|e| panic!("gzip: {e}"));
}

#[test]
fn a_file_origin_is_copied_once_into_the_cache() {
    let dir = scratch("copy");
    std::fs::write(dir.join("a.txt"), "hello\nworld\n").unwrap_or_else(|e| panic!("{e}"));
    let d = dir.display();
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let out = cells::ok(
        &session,
        &format!(
            r#"import os
import tensorflow as tf
base = "{d}/cache"
p = tf.keras.utils.get_file("a.txt", origin="file://{d}/a.txt", cache_dir=base)
print(p == os.path.join(base, "datasets", "a.txt"), repr(open(p).read()))
os.remove("{d}/a.txt")
q = tf.keras.utils.get_file("a.txt", "file://{d}/a.txt", cache_dir=base)
print(q == p)
"#
        ),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&format!("Downloading data from file://{d}/a.txt").as_str()),
        "{out}"
    );
    assert!(
        lines.get(1).is_some_and(|l| l.starts_with("12/12 ")),
        "{out}"
    );
    assert_eq!(lines.get(2), Some(&"True 'hello\\nworld\\n'"), "{out}");
    assert_eq!(lines.get(3), Some(&"True"), "{out}");
    // The third call needs a copy the origin no longer has: urllib's error through Keras.
    let shown = cells::run(
        &session,
        &format!(
            r#"tf.keras.utils.get_file(origin="file://{d}/a.txt", cache_dir=base, cache_subdir="other")"#
        ),
    );
    assert_eq!(
        shown.error,
        Some((
            "Exception".to_string(),
            format!(
                "URL fetch failure on file://{d}/a.txt: None -- [Errno 2] No such file or \
                 directory: '{d}/a.txt'"
            )
        ))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn archives_are_extracted_into_the_folders_keras_names() {
    let dir = scratch("extract");
    write_zip(&dir.join("a.zip"), "a.txt", b"zipped\n");
    write_tar_gz(&dir.join("b.tar.gz"), "inner/b.txt", b"tarred\n");
    let d = dir.display();
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    let out = cells::ok(
        &session,
        &format!(
            r#"import os
import tensorflow as tf
base = "{d}/cache"
data = os.path.join(base, "datasets")
p = tf.keras.utils.get_file(origin="file://{d}/a.zip", extract=True, cache_dir=base)
print(p[len(data) + 1:], sorted(os.listdir(p)), open(os.path.join(p, "a.txt")).read().strip())
print(sorted(os.listdir(data)))
p = tf.keras.utils.get_file("flowers.tar.gz", origin="file://{d}/b.tar.gz", extract=True, cache_dir=base)
print(p[len(data) + 1:], open(os.path.join(p, "inner", "b.txt")).read().strip())
p = tf.keras.utils.get_file("photos", origin="file://{d}/b.tar.gz", untar=True, cache_dir=base)
print(p[len(data) + 1:], sorted(os.listdir(p)))
print(sorted(os.listdir(data)))
"#
        ),
    );
    let kept: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("Downloading") && !l.contains('━'))
        .collect();
    assert_eq!(
        kept,
        [
            "a.zip ['a.txt'] zipped",
            "['a.zip', 'a.zip_archive']",
            "flowers_extracted tarred",
            "photos ['inner']",
            "['a.zip', 'a.zip_archive', 'flowers.tar.gz', 'flowers_extracted', 'photos', 'photos_archive']",
        ],
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_network_and_bad_arguments_raise_keras_s_errors() {
    let dir = scratch("errors");
    let d = dir.display();
    let session = Session::start().unwrap_or_else(|e| panic!("session did not start: {e}"));
    cells::ok(
        &session,
        &format!("import tensorflow as tf\nbase = \"{d}/cache\"\n"),
    );
    let cases = [
        (
            r#"tf.keras.utils.get_file("x.txt", origin="https://example.com/x.txt", cache_dir=base)"#,
            "Exception",
            "URL fetch failure on https://example.com/x.txt: None -- [Errno -3] Temporary failure in name resolution",
        ),
        (
            r#"tf.keras.utils.get_file("x.txt", cache_dir=base)"#,
            "ValueError",
            "Please specify the \"origin\" argument (URL of the file to download).",
        ),
        (
            r#"tf.keras.utils.get_file("sub/x.txt", origin="https://example.com/x.txt", cache_dir=base)"#,
            "ValueError",
            "Paths are no longer accepted as the `fname` argument. To specify the file's parent directory, use the `cache_dir` argument. Received: fname=sub/x.txt",
        ),
        (
            r#"tf.keras.utils.get_file(origin="https://example.com/", cache_dir=base)"#,
            "ValueError",
            "Can't parse the file name from the origin provided: 'https://example.com/'.Please specify the `fname` argument.",
        ),
    ];
    for (code, class, text) in cases {
        let shown = cells::run(&session, code);
        assert_eq!(
            shown.error,
            Some((class.to_string(), text.to_string())),
            "{code}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
