//! `keras.datasets` loaders that read the files Keras itself caches, without a network:
//! `mnist.npz` (a zip of `.npy` arrays) and Fashion-MNIST's gzip-compressed IDX files,
//! under `$KERAS_HOME/datasets` (default `~/.keras/datasets`), as Keras looks for them.
//! Arrays keep their numpy dtype (`uint8` images and labels), so `x / 255.0` behaves as
//! in numpy. A missing file is an error naming the path and how to get it.

use super::error::{KResult, KerasError};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Element data of a loaded array, in its stored dtype.
#[derive(Debug, Clone, PartialEq)]
pub enum ArrayData {
    U8(Vec<u8>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// A loaded n-dimensional array (row-major).
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub shape: Vec<usize>,
    pub data: ArrayData,
}

impl Array {
    /// numpy's dtype name (`uint8`, `float32`, ...).
    pub fn dtype(&self) -> &'static str {
        match self.data {
            ArrayData::U8(_) => "uint8",
            ArrayData::I32(_) => "int32",
            ArrayData::I64(_) => "int64",
            ArrayData::F32(_) => "float32",
            ArrayData::F64(_) => "float64",
        }
    }
    /// The array as a numpy-style host array of the same dtype.
    pub fn into_ndarray(self) -> crate::tensor::TResult<crate::tensor::NdArray> {
        use crate::tensor::NdArray;
        let shape = self.shape;
        match self.data {
            ArrayData::U8(v) => NdArray::from_u8(&shape, v),
            ArrayData::I32(v) => NdArray::from_i32(&shape, v),
            ArrayData::I64(v) => NdArray::from_i64(&shape, v),
            ArrayData::F32(v) => NdArray::from_f32(&shape, v),
            ArrayData::F64(v) => NdArray::from_f64(&shape, v),
        }
    }
    /// The values as f32, for feeding the engine.
    pub fn to_f32(&self) -> Vec<f32> {
        match &self.data {
            ArrayData::U8(v) => v.iter().map(|x| f32::from(*x)).collect(),
            ArrayData::I32(v) => v.iter().map(|x| *x as f32).collect(),
            ArrayData::I64(v) => v.iter().map(|x| *x as f32).collect(),
            ArrayData::F32(v) => v.clone(),
            ArrayData::F64(v) => v.iter().map(|x| *x as f32).collect(),
        }
    }
}

/// `((x_train, y_train), (x_test, y_test))`, as `load_data()` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    pub x_train: Array,
    pub y_train: Array,
    pub x_test: Array,
    pub y_test: Array,
}

/// Where Keras caches datasets: `$KERAS_HOME/datasets`, else `~/.keras/datasets`.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os("KERAS_HOME") {
        Some(h) if !h.is_empty() => PathBuf::from(h).join("datasets"),
        _ => {
            let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
            home.join(".keras").join("datasets")
        }
    }
}

fn corrupt(path: &Path, detail: impl std::fmt::Display) -> KerasError {
    KerasError::Corrupt {
        path: path.display().to_string(),
        detail: detail.to_string(),
    }
}

fn read(path: &Path, dataset: &str) -> KResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => KerasError::NotFound(format!(
            "{} (the {dataset} dataset is read from the Keras cache; this kernel has no network: copy the file there, or set KERAS_HOME)",
            path.display()
        )),
        _ => KerasError::Io {
            path: path.display().to_string(),
            detail: e.to_string(),
        },
    })
}

/// Parses one `.npy` file (format versions 1 to 3, little-endian, C order).
pub fn parse_npy(path: &Path, bytes: &[u8]) -> KResult<Array> {
    let bad = |d: &str| corrupt(path, format!("not a valid .npy array: {d}"));
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("missing the NUMPY magic"));
    }
    let (hlen, start) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(bad(&format!("unknown version {v}"))),
    };
    let header = bytes
        .get(start..start + hlen)
        .map(String::from_utf8_lossy)
        .ok_or_else(|| bad("truncated header"))?;
    let field = |key: &str| -> Option<String> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
        Some(rest.to_string())
    };
    let descr = field("descr")
        .and_then(|r| {
            r.strip_prefix('\'')
                .and_then(|r| r.split('\'').next())
                .map(str::to_string)
        })
        .ok_or_else(|| bad("no descr"))?;
    if field("fortran_order").is_some_and(|r| r.starts_with("True")) {
        return Err(bad("Fortran-ordered arrays are not supported"));
    }
    let shape_txt = field("shape")
        .and_then(|r| {
            r.strip_prefix('(')
                .and_then(|r| r.split(')').next())
                .map(str::to_string)
        })
        .ok_or_else(|| bad("no shape"))?;
    let shape = shape_txt
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|_| bad("bad shape")))
        .collect::<KResult<Vec<_>>>()?;
    let n: usize = shape.iter().product();
    let body = &bytes[start + hlen..];
    let need = |size: usize| -> KResult<&[u8]> {
        body.get(..n * size).ok_or_else(|| bad("truncated data"))
    };
    let data = match descr.as_str() {
        "|u1" | "<u1" | "|b1" => ArrayData::U8(need(1)?.to_vec()),
        "<i4" => ArrayData::I32(
            need(4)?
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        "<i8" => ArrayData::I64(
            need(8)?
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                .collect(),
        ),
        "<f4" => ArrayData::F32(
            need(4)?
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        "<f8" => ArrayData::F64(
            need(8)?
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                .collect(),
        ),
        other => return Err(bad(&format!("unsupported dtype {other}"))),
    };
    Ok(Array { shape, data })
}

/// Reads the named arrays of an `.npz` archive.
pub fn load_npz(path: &Path, names: &[&str], dataset: &str) -> KResult<Vec<Array>> {
    let bytes = read(path, dataset)?;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| corrupt(path, format!("not a valid .npz archive ({e})")))?;
    names
        .iter()
        .map(|name| {
            let mut f = zip
                .by_name(&format!("{name}.npy"))
                .map_err(|_| corrupt(path, format!("the archive has no {name}.npy")))?;
            let mut buf = Vec::new();
            f.read_to_end(&mut buf)
                .map_err(|e| corrupt(path, format!("{name}.npy: {e}")))?;
            parse_npy(path, &buf)
        })
        .collect()
}

/// `keras.datasets.mnist.load_data()`.
pub fn mnist() -> KResult<Split> {
    mnist_at(&cache_dir().join("mnist.npz"))
}

pub fn mnist_at(path: &Path) -> KResult<Split> {
    let mut a = load_npz(path, &["x_train", "y_train", "x_test", "y_test"], "MNIST")?;
    let (y_test, x_test) = (a.pop(), a.pop());
    let (y_train, x_train) = (a.pop(), a.pop());
    match (x_train, y_train, x_test, y_test) {
        (Some(x_train), Some(y_train), Some(x_test), Some(y_test)) => Ok(Split {
            x_train,
            y_train,
            x_test,
            y_test,
        }),
        _ => Err(corrupt(path, "missing arrays")),
    }
}

/// Parses a gzip-compressed IDX file (unsigned bytes), as Fashion-MNIST ships.
pub fn parse_idx_gz(path: &Path, dataset: &str) -> KResult<Array> {
    let gz = read(path, dataset)?;
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(gz.as_slice())
        .read_to_end(&mut bytes)
        .map_err(|e| corrupt(path, format!("not a valid gzip file ({e})")))?;
    let bad = |d: &str| corrupt(path, format!("not a valid IDX file: {d}"));
    if bytes.len() < 4 || bytes[0] != 0 || bytes[1] != 0 || bytes[2] != 0x08 {
        return Err(bad("expected unsigned-byte IDX magic"));
    }
    let dims = usize::from(bytes[3]);
    let head = 4 + 4 * dims;
    let shape: Vec<usize> = bytes
        .get(4..head)
        .ok_or_else(|| bad("truncated header"))?
        .chunks_exact(4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .collect();
    let n: usize = shape.iter().product();
    let data = bytes
        .get(head..head + n)
        .ok_or_else(|| bad("truncated data"))?
        .to_vec();
    Ok(Array {
        shape,
        data: ArrayData::U8(data),
    })
}

/// `keras.datasets.fashion_mnist.load_data()`.
pub fn fashion_mnist() -> KResult<Split> {
    fashion_mnist_at(&cache_dir().join("fashion-mnist"))
}

pub fn fashion_mnist_at(dir: &Path) -> KResult<Split> {
    let f = |name: &str| parse_idx_gz(&dir.join(name), "Fashion-MNIST");
    Ok(Split {
        y_train: f("train-labels-idx1-ubyte.gz")?,
        x_train: f("train-images-idx3-ubyte.gz")?,
        y_test: f("t10k-labels-idx1-ubyte.gz")?,
        x_test: f("t10k-images-idx3-ubyte.gz")?,
    })
}
