//! HDF5 files as Keras 3 writes and reads them, through the pure-Rust `hdf5-pure` crate (no
//! C library; ARCHITECTURE.md, "HDF5", records why). Two layouts live here, one file each:
//! Keras 3's weights layout (`layers/<name>/vars/<i>`, `optimizer/vars/<i>`), used by
//! `model.weights.h5` inside `.keras` archives and by `.weights.h5` files, and the legacy
//! full-model `.h5` format (`model_config`, `model_weights`, `optimizer_weights`). This
//! folder owns the HDF5 encoding of weights only; the model's JSON config belongs to
//! `saving/json.rs` and the archive and file checks to `saving/mod.rs`.
//!
//! A file that is not HDF5, truncated or damaged becomes an `OSError` worded as h5py words
//! it (`Unable to synchronously open file (file signature not found)`), never a panic.

pub mod keras3;
pub mod legacy;

use crate::keras::error::{KResult, KerasError};
use hdf5_pure::{Dataset, File, Group};
use std::path::Path;

/// The eight bytes every HDF5 superblock starts with.
const SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// True when `bytes` start as an HDF5 file does (so a kernel's older safetensors file can
/// be told apart).
pub fn is_hdf5(bytes: &[u8]) -> bool {
    bytes.starts_with(SIGNATURE)
}

fn os_error(path: &Path, detail: impl std::fmt::Display) -> KerasError {
    KerasError::Io {
        path: path.display().to_string(),
        detail: detail.to_string(),
    }
}

/// Opens `bytes` (the whole file) as HDF5, with h5py's words for the usual failures.
pub fn open(path: &Path, bytes: Vec<u8>) -> KResult<File> {
    if !is_hdf5(&bytes) {
        return Err(os_error(
            path,
            "Unable to synchronously open file (file signature not found)",
        ));
    }
    let len = bytes.len() as u64;
    let file = File::from_bytes(bytes).map_err(|e| {
        os_error(
            path,
            format!("Unable to synchronously open file (damaged file: eof = {len}; {e})"),
        )
    })?;
    // The superblock records where the file ends; a shorter file was cut (the HDF5 library
    // refuses it the same way, and reading on would find zeros or garbage, not an error).
    let sb = file.superblock();
    let (base, stored) = (sb.base_address.get(), sb.eof_address);
    if base.saturating_add(stored) > len {
        return Err(os_error(
            path,
            format!("Unable to synchronously open file (truncated file: eof = {len}, sblock->base_addr = {base}, stored_eof = {stored})"),
        ));
    }
    Ok(file)
}

/// A member of a group that is missing or unreadable: h5py's `KeyError` for a missing
/// object becomes a damaged-file error naming the object.
fn missing(path: &Path, object: &str, e: impl std::fmt::Display) -> KerasError {
    KerasError::Corrupt {
        path: path.display().to_string(),
        detail: format!("Unable to synchronously open object '{object}' ({e})"),
    }
}

pub(crate) fn group(path: &Path, parent: &Group, name: &str) -> KResult<Group> {
    parent.group(name).map_err(|e| missing(path, name, e))
}

pub(crate) fn dataset(path: &Path, parent: &Group, name: &str) -> KResult<Dataset> {
    parent.dataset(name).map_err(|e| missing(path, name, e))
}

/// Reads a float dataset that must have `shape` (the model's variable `what`).
pub(crate) fn read_f32(path: &Path, d: &Dataset, what: &str, shape: &[usize]) -> KResult<Vec<f32>> {
    let got: Vec<usize> = d
        .shape()
        .map_err(|e| missing(path, what, e))?
        .into_iter()
        .map(|x| x as usize)
        .collect();
    if got != shape {
        return Err(KerasError::shape(
            format!("The shape of the saved variable '{what}' does not match the model's"),
            shape,
            &got,
        ));
    }
    let data = d.read_f32().map_err(|e| missing(path, what, e))?;
    if data.len() != shape.iter().product::<usize>() {
        return Err(missing(path, what, "the data does not fill its shape"));
    }
    Ok(data)
}

/// Reads a scalar integer dataset (an optimizer's step counter).
pub(crate) fn read_scalar_i64(path: &Path, d: &Dataset, what: &str) -> KResult<i64> {
    match d.read_i64().map_err(|e| missing(path, what, e))?.as_slice() {
        [v] => Ok(*v),
        _ => Err(missing(path, what, "not a scalar")),
    }
}
