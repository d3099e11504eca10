//! `keras.datasets.cifar10.load_data()` from Keras's cache, without a network. Keras 3
//! extracts `cifar-10-python.tar.gz` into `datasets/cifar-10-batches-py-target/` (older
//! Keras into `datasets/`), giving a `cifar-10-batches-py` folder of pickled batches
//! (`data_batch_1` to `data_batch_5`, `test_batch`), each a dict whose `data` is an
//! (n, 3072) uint8 array of channels-first rows and whose `labels` is a list of ints.
//! When only the downloaded archive is there, the batches are read straight out of it.
//!
//! The result is what Keras returns: images (n, 32, 32, 3) uint8, channels last, and labels
//! (n, 1) uint8. The pickles are decoded by [`super::pickle`], which executes nothing.

use super::datasets::{cache_dir, Array, ArrayData, Split};
use super::error::{KResult, KerasError};
use super::pickle::{self, Obj};
use std::io::Read;
use std::path::{Path, PathBuf};

const FOLDER: &str = "cifar-10-batches-py";
const PIXELS: usize = 32 * 32;
const ROW: usize = 3 * PIXELS;
/// The largest member read from an archive: a real batch is about 31 MB.
const MEMBER_LIMIT: u64 = 256 << 20;
const BATCHES: [&str; 6] = [
    "data_batch_1",
    "data_batch_2",
    "data_batch_3",
    "data_batch_4",
    "data_batch_5",
    "test_batch",
];

fn corrupt(path: &Path, detail: impl std::fmt::Display) -> KerasError {
    KerasError::Corrupt {
        path: path.display().to_string(),
        detail: detail.to_string(),
    }
}

/// `keras.datasets.cifar10.load_data()`, from `$KERAS_HOME/datasets` or `~/.keras/datasets`.
pub fn cifar10() -> KResult<Split> {
    cifar10_in(&cache_dir())
}

/// The same, from the given `datasets` folder: the extracted batches if they are there,
/// else the downloaded archive, else a `FileNotFoundError` saying what to put where.
pub fn cifar10_in(datasets: &Path) -> KResult<Split> {
    let folders = [
        datasets.join("cifar-10-batches-py-target").join(FOLDER),
        datasets.join(FOLDER),
    ];
    if let Some(dir) = folders.iter().find(|d| d.is_dir()) {
        let mut batches = Vec::new();
        for name in BATCHES {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => KerasError::NotFound(format!(
                    "{} (the CIFAR-10 folder is incomplete: extract cifar-10-python.tar.gz again)",
                    path.display()
                )),
                _ => KerasError::Io {
                    path: path.display().to_string(),
                    detail: e.to_string(),
                },
            })?;
            batches.push(parse_batch(&path, &bytes)?);
        }
        return assemble(batches);
    }
    let archives = [
        datasets.join("cifar-10-batches-py-target_archive"),
        datasets.join("cifar-10-python.tar.gz"),
        datasets.join("cifar-10-batches-py.tar.gz"),
    ];
    if let Some(archive) = archives.iter().find(|a| a.is_file()) {
        return from_archive(archive);
    }
    Err(KerasError::NotFound(format!(
        "{} (the CIFAR-10 dataset is read from the Keras cache; this kernel has no network: \
         download cifar-10-python.tar.gz from https://www.cs.toronto.edu/~kriz/cifar.html \
         and put it, or the {FOLDER} folder extracted from it, in {}; or set KERAS_HOME)",
        folders[0].display(),
        datasets.display()
    )))
}

/// One batch: (number of images, channels-first pixel rows, labels).
struct Batch {
    rows: usize,
    data: Vec<u8>,
    labels: Vec<u8>,
}

/// Reads one pickled batch as Keras's `load_batch` does, checking every shape.
fn parse_batch(path: &Path, bytes: &[u8]) -> KResult<Batch> {
    let d = pickle::load(bytes).map_err(|e| corrupt(path, e))?;
    let bad = |what: &str| corrupt(path, format!("not a CIFAR-10 batch: {what}"));
    let (rows, data) = match d.get("data") {
        Some(Obj::Array { dtype, shape, data }) if dtype == "u1" => match shape.as_slice() {
            [n, w] if *w == ROW && data.len() == n * ROW => (*n, data.to_vec()),
            _ => return Err(bad(&format!("'data' has shape {shape:?}, not (n, {ROW})"))),
        },
        Some(Obj::Array { dtype, .. }) => {
            return Err(bad(&format!("'data' has dtype {dtype}, not uint8")))
        }
        _ => return Err(bad("no 'data' array")),
    };
    let Some(Obj::List(items)) = d.get("labels") else {
        return Err(bad("no 'labels' list"));
    };
    let labels = items
        .iter()
        .map(|l| match l {
            Obj::Int(v) => u8::try_from(*v).map_err(|_| bad(&format!("label {v} is not a uint8"))),
            _ => Err(bad("a label that is not an int")),
        })
        .collect::<KResult<Vec<u8>>>()?;
    if labels.len() != rows {
        return Err(bad(&format!("{} labels for {rows} images", labels.len())));
    }
    Ok(Batch { rows, data, labels })
}

/// Joins batches into Keras's arrays: channels-first rows become (n, 32, 32, 3) images.
fn images(batches: &[Batch]) -> (Array, Array) {
    let n: usize = batches.iter().map(|b| b.rows).sum();
    let mut x = Vec::with_capacity(n * ROW);
    let mut y = Vec::with_capacity(n);
    for b in batches {
        for row in b.data.chunks_exact(ROW) {
            for p in 0..PIXELS {
                x.extend([row[p], row[PIXELS + p], row[2 * PIXELS + p]]);
            }
        }
        y.extend(&b.labels);
    }
    (
        Array {
            shape: vec![n, 32, 32, 3],
            data: ArrayData::U8(x),
        },
        Array {
            shape: vec![n, 1],
            data: ArrayData::U8(y),
        },
    )
}

fn assemble(mut batches: Vec<Batch>) -> KResult<Split> {
    let test = batches.split_off(5);
    let (x_train, y_train) = images(&batches);
    let (x_test, y_test) = images(&test);
    Ok(Split {
        x_train,
        y_train,
        x_test,
        y_test,
    })
}

/// Reads the six batches out of the gzip-compressed tar archive Keras downloads.
fn from_archive(path: &Path) -> KResult<Split> {
    let file = std::fs::File::open(path).map_err(|e| KerasError::Io {
        path: path.display().to_string(),
        detail: e.to_string(),
    })?;
    let mut tar = flate2::read::GzDecoder::new(std::io::BufReader::new(file));
    let mut found: Vec<Option<Batch>> = BATCHES.iter().map(|_| None).collect();
    let io = |e: std::io::Error| corrupt(path, format!("not a valid .tar.gz archive ({e})"));
    let mut long_name: Option<String> = None;
    loop {
        let mut header = [0u8; 512];
        if tar.read_exact(&mut header).is_err() || header.iter().all(|b| *b == 0) {
            break;
        }
        if &header[257..262] != b"ustar" {
            return Err(corrupt(path, "not a tar archive (no ustar header)"));
        }
        let field = |r: std::ops::Range<usize>| {
            let f = &header[r];
            let end = f.iter().position(|b| *b == 0).unwrap_or(f.len());
            String::from_utf8_lossy(&f[..end]).into_owned()
        };
        let size_txt = field(124..136);
        let size = u64::from_str_radix(size_txt.trim(), 8)
            .map_err(|_| corrupt(path, format!("bad tar size field '{size_txt}'")))?;
        // Only POSIX ustar headers hold a name prefix; GNU headers keep times there.
        let prefix = if &header[257..263] == b"ustar\0" {
            field(345..500)
        } else {
            String::new()
        };
        let name = match long_name.take() {
            Some(n) => n,
            None if prefix.is_empty() => field(0..100),
            None => format!("{prefix}/{}", field(0..100)),
        };
        let kind = header[156];
        let padded = size.div_ceil(512) * 512;
        let mut member = (&mut tar).take(padded);
        let wanted = match name.trim_end_matches('/').rsplit_once('/') {
            Some((dir, file)) if dir.ends_with(FOLDER) && matches!(kind, b'0' | 0) => {
                BATCHES.iter().position(|b| *b == file)
            }
            _ => None,
        };
        if kind == b'L' || wanted.is_some() {
            if size > MEMBER_LIMIT {
                return Err(corrupt(path, format!("member {name} is {size} bytes")));
            }
            let mut buf = Vec::new();
            member.read_to_end(&mut buf).map_err(io)?;
            buf.truncate(size as usize);
            if kind == b'L' {
                let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
                long_name = Some(String::from_utf8_lossy(&buf[..end]).into_owned());
            } else if let Some(i) = wanted {
                let at = PathBuf::from(format!("{}:{name}", path.display()));
                found[i] = Some(parse_batch(&at, &buf)?);
            }
        } else {
            std::io::copy(&mut member, &mut std::io::sink()).map_err(io)?;
        }
    }
    let mut batches = Vec::new();
    for (name, b) in BATCHES.iter().zip(found) {
        batches
            .push(b.ok_or_else(|| corrupt(path, format!("the archive has no {FOLDER}/{name}")))?);
    }
    assemble(batches)
}
