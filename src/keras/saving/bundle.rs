//! Checkpoint bundles: the files `tf.train.Checkpoint` writes for one checkpoint prefix,
//! under TensorFlow's names (`PREFIX.index` and `PREFIX.data-00000-of-00001`), holding
//! named tensors of any dtype. The contents are this engine's own format, not TF's
//! SSTable-and-protobuf bundle, so TensorFlow cannot read them (nor can we read TF's):
//!
//! - the data file is every tensor's little-endian bytes, one after another (floats as
//!   float64, integers and booleans as int64, so every dtype converts back exactly);
//! - the index file is a magic line (`mirror-kernel tensor bundle 1`) and a JSON object
//!   listing, per tensor, its key, the variable's name (what TF's object graph calls its
//!   `full_name`), dtype, shape, offset, length and an FNV-1a checksum of its bytes, so a
//!   damaged data file is found, never half-restored.
//!
//! Both files are written to a temporary sibling and renamed into place (data first, then
//! the index), so a reader sees a whole checkpoint or none. Missing files are
//! [`KerasError::NotFound`] with the prefix, damaged ones [`KerasError::Corrupt`] naming
//! the file; the caller words them as TensorFlow does. This module knows no object graph:
//! keys are the caller's.

use super::write_atomic;
use crate::keras::error::{KResult, KerasError};
use crate::tensor::{DType, NdArray};
use std::path::Path;

const MAGIC: &str = "mirror-kernel tensor bundle 1";

/// One saved tensor.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The checkpoint key (`model/_weights/0/.ATTRIBUTES/VARIABLE_VALUE`).
    pub key: String,
    /// The variable's own name (`dense/kernel`), for messages.
    pub name: String,
    pub value: NdArray,
}

/// The first bytes of a file too short to hold an index, as TensorFlow counts an SSTable's
/// footer.
const SHORTEST_INDEX: usize = 48;

/// What `corrupt` detail says when the index is too short to be one (TF's words).
pub const TOO_SHORT: &str = "file is too short to be an sstable";

/// What `corrupt` detail says when the data file is shorter than the index says (TF's words).
pub const SHORT_DATA: &str = "Read less bytes than requested";

/// The suffix of the one data shard, as TensorFlow names it.
pub const DATA_SUFFIX: &str = ".data-00000-of-00001";
pub const INDEX_SUFFIX: &str = ".index";

/// What `corrupt` detail says when the index is not one of ours (TF's words, which the
/// caller shows).
pub const NOT_A_BUNDLE: &str = "not an sstable (bad magic number)";

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn is_float(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F64)
}

fn dtype_named(name: &str) -> Option<DType> {
    Some(match name {
        "bool" => DType::Bool,
        "uint8" => DType::U8,
        "int32" => DType::I32,
        "int64" => DType::I64,
        "float32" => DType::F32,
        "float64" => DType::F64,
        _ => return None,
    })
}

fn encode(a: &NdArray) -> Vec<u8> {
    if is_float(a.dtype()) {
        a.to_f64_vec()
            .1
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    } else {
        a.astype(DType::I64)
            .to_i64_vec()
            .1
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    }
}

/// Writes `entries` as the bundle at `prefix`.
pub fn write_bundle(prefix: &str, entries: &[Entry]) -> KResult<()> {
    let mut data = Vec::new();
    let mut listed = Vec::with_capacity(entries.len());
    for Entry {
        key,
        name,
        value: a,
    } in entries
    {
        let bytes = encode(a);
        listed.push(serde_json::json!({
            "key": key,
            "name": name,
            "dtype": a.dtype().name(),
            "shape": a.shape(),
            "offset": data.len(),
            "length": bytes.len(),
            "fnv1a": format!("{:016x}", fnv1a(&bytes)),
        }));
        data.extend_from_slice(&bytes);
    }
    let index = format!(
        "{MAGIC}\n{}\n",
        serde_json::json!({ "tensors": listed, "data_length": data.len() })
    );
    if let Some(dir) = Path::new(prefix)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir).map_err(|e| KerasError::Io {
            path: dir.display().to_string(),
            detail: e.to_string(),
        })?;
    }
    write_atomic(Path::new(&format!("{prefix}{DATA_SUFFIX}")), &data)?;
    write_atomic(
        Path::new(&format!("{prefix}{INDEX_SUFFIX}")),
        index.as_bytes(),
    )
}

/// Whether a bundle's index exists at `prefix`.
pub fn bundle_exists(prefix: &str) -> bool {
    Path::new(&format!("{prefix}{INDEX_SUFFIX}")).is_file()
}

/// Removes the bundle's files (a checkpoint manager dropping an old checkpoint); files
/// already gone are no error.
pub fn remove_bundle(prefix: &str) {
    for suffix in [INDEX_SUFFIX, DATA_SUFFIX] {
        let _ = std::fs::remove_file(format!("{prefix}{suffix}"));
    }
}

fn corrupt(path: &str, detail: impl Into<String>) -> KerasError {
    KerasError::Corrupt {
        path: path.to_string(),
        detail: detail.into(),
    }
}

/// Reads every tensor of the bundle at `prefix`, in the order written.
pub fn read_bundle(prefix: &str) -> KResult<Vec<Entry>> {
    let index_path = format!("{prefix}{INDEX_SUFFIX}");
    let index = match std::fs::read(&index_path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(KerasError::NotFound(prefix.to_string()))
        }
        Err(e) => {
            return Err(KerasError::Io {
                path: index_path,
                detail: e.to_string(),
            })
        }
    };
    if index.len() < SHORTEST_INDEX {
        return Err(corrupt(&index_path, TOO_SHORT));
    }
    let text = String::from_utf8_lossy(&index);
    let body = text
        .strip_prefix(MAGIC)
        .and_then(|rest| rest.strip_prefix('\n'))
        .ok_or_else(|| corrupt(&index_path, NOT_A_BUNDLE))?;
    let json: serde_json::Value =
        serde_json::from_str(body).map_err(|_| corrupt(&index_path, NOT_A_BUNDLE))?;
    let data_path = format!("{prefix}{DATA_SUFFIX}");
    let data = std::fs::read(&data_path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => KerasError::NotFound(data_path.clone()),
        _ => KerasError::Io {
            path: data_path.clone(),
            detail: e.to_string(),
        },
    })?;
    let want_len = json["data_length"].as_u64().unwrap_or(u64::MAX);
    if data.len() as u64 != want_len {
        return Err(corrupt(&data_path, SHORT_DATA));
    }
    let tensors = json["tensors"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::with_capacity(tensors.len());
    for t in &tensors {
        let bad = || corrupt(&index_path, NOT_A_BUNDLE);
        let key = t["key"].as_str().ok_or_else(bad)?.to_string();
        let name = t["name"].as_str().unwrap_or_default().to_string();
        let dtype = t["dtype"].as_str().and_then(dtype_named).ok_or_else(bad)?;
        let shape: Vec<usize> = t["shape"]
            .as_array()
            .ok_or_else(bad)?
            .iter()
            .map(|d| d.as_u64().map(|d| d as usize))
            .collect::<Option<_>>()
            .ok_or_else(bad)?;
        let offset = t["offset"].as_u64().ok_or_else(bad)? as usize;
        let length = t["length"].as_u64().ok_or_else(bad)? as usize;
        let count: usize = shape.iter().product();
        let bytes = offset
            .checked_add(length)
            .and_then(|end| data.get(offset..end))
            .filter(|b| b.len() == count * 8)
            .ok_or_else(bad)?;
        let stored = t["fnv1a"]
            .as_str()
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .ok_or_else(bad)?;
        let calculated = fnv1a(bytes);
        if stored != calculated {
            return Err(corrupt(
                &data_path,
                format!("Checksum does not match: stored {stored} vs. calculated on the restored bytes {calculated}"),
            ));
        }
        let words = bytes.chunks_exact(8).map(|w| {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            b
        });
        let a = if is_float(dtype) {
            NdArray::from_f64(&shape, words.map(f64::from_le_bytes).collect())
        } else {
            NdArray::from_i64(&shape, words.map(i64::from_le_bytes).collect())
        }
        .map_err(|e| corrupt(&data_path, e.to_string()))?;
        out.push(Entry {
            key,
            name,
            value: a.astype(dtype),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> String {
        let d = std::env::temp_dir().join(format!("mk-bundle-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d.display().to_string()
    }

    #[test]
    fn every_dtype_round_trips_exactly() {
        let prefix = format!("{}/ckpt-1", dir("trip"));
        let f = NdArray::from_f32(&[2, 2], vec![0.1, -2.5, 3.0e-8, 7.0]).expect("f32");
        let i = NdArray::from_i64(&[], vec![-9]).expect("i64");
        let b = NdArray::from_bool(&[3], vec![true, false, true]).expect("bool");
        let entry = |key: &str, value: NdArray| Entry {
            key: key.into(),
            name: format!("{key}_var"),
            value,
        };
        let entries = vec![entry("a", f), entry("b", i), entry("c", b)];
        write_bundle(&prefix, &entries).expect("write");
        assert!(bundle_exists(&prefix));
        let back = read_bundle(&prefix).expect("read");
        assert_eq!(back.len(), 3);
        for (e1, e2) in entries.iter().zip(&back) {
            assert_eq!((&e1.key, &e1.name), (&e2.key, &e2.name));
            assert_eq!(e1.value.dtype(), e2.value.dtype());
            assert_eq!(e1.value.shape(), e2.value.shape());
            assert_eq!(e1.value.to_f64_vec(), e2.value.to_f64_vec());
        }
        remove_bundle(&prefix);
        assert!(!bundle_exists(&prefix));
    }

    #[test]
    fn damage_is_an_error_not_a_panic() {
        let prefix = format!("{}/ckpt-1", dir("damage"));
        assert!(matches!(read_bundle(&prefix), Err(KerasError::NotFound(_))));
        let f = NdArray::from_f32(&[2], vec![1.0, 2.0]).expect("f32");
        let e = Entry {
            key: "a".into(),
            name: "a".into(),
            value: f,
        };
        write_bundle(&prefix, &[e]).expect("write");
        let data = format!("{prefix}{DATA_SUFFIX}");
        std::fs::write(&data, [0u8; 16]).expect("overwrite");
        assert!(matches!(
            read_bundle(&prefix),
            Err(KerasError::Corrupt { .. })
        ));
        std::fs::write(&data, [0u8; 3]).expect("truncate");
        assert!(matches!(
            read_bundle(&prefix),
            Err(KerasError::Corrupt { .. })
        ));
        let index = format!("{prefix}{INDEX_SUFFIX}");
        std::fs::write(&index, "garbage").expect("index");
        match read_bundle(&prefix) {
            Err(KerasError::Corrupt { detail, .. }) => assert_eq!(detail, TOO_SHORT),
            other => panic!("{other:?}"),
        }
        std::fs::write(&index, "x".repeat(200)).expect("index");
        match read_bundle(&prefix) {
            Err(KerasError::Corrupt { detail, .. }) => assert_eq!(detail, NOT_A_BUNDLE),
            other => panic!("{other:?}"),
        }
    }
}
