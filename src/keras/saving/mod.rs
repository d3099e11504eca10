//! Saving and loading models and weights.
//!
//! A `.keras` file is, as in Keras 3, a zip archive holding `config.json` (the model and
//! compile settings, Keras-like JSON), `metadata.json` (`keras_version`, `date_saved`) and
//! the weights. Keras stores weights as HDF5 (`model.weights.h5`); we store them as
//! safetensors (`model.weights.safetensors`): a simple, safe, well-kept format (a JSON
//! header and raw little-endian arrays, no code execution, a small maintained crate),
//! where HDF5 would pull in a large C library. The optimizer state goes in the same file
//! under `optimizer/...` names when the model was compiled.
//!
//! `save_weights`/`load_weights` write `.weights.h5` files, as Keras names them; to be
//! honest about it, their content is the same safetensors encoding, not HDF5, so real
//! Keras cannot read them (and we cannot read Keras's).
//!
//! Every write goes to a temporary file in the same directory and is renamed into place,
//! so a crash never leaves half a file under the real name. Missing, truncated or corrupt
//! files become errors naming the path, never a panic. This module never touches a device.

pub mod bundle;
mod json;
mod tensors;

pub use json::{compile_from_json, init_json, model_from_json, model_json, optimizer_json};

use super::compile::CompileConfig;
use super::config::ModelConfig;
use super::error::{KResult, KerasError};
use super::init::HostArray;
use super::replica::OptimizerState;
use super::trainer::Trainer;
use std::io::{Read, Write};
use std::path::Path;

/// The Keras version written into `metadata.json`: the API this engine follows.
pub const KERAS_VERSION: &str = "3.6.0";
const WEIGHTS_ENTRY: &str = "model.weights.safetensors";

/// Everything a `.keras` file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedModel {
    pub config: ModelConfig,
    pub compile: Option<CompileConfig>,
    pub weights: Vec<HostArray>,
    pub optimizer: Option<OptimizerState>,
}

impl SavedModel {
    /// Snapshots a trainer (one replica or a mirrored set).
    pub fn from_trainer(t: &dyn Trainer) -> KResult<SavedModel> {
        let compile = t.compiled().cloned();
        let optimizer = match compile {
            Some(_) => Some(t.optimizer_state()?),
            None => None,
        };
        Ok(SavedModel {
            config: t.config().clone(),
            compile,
            weights: t.get_weights()?,
            optimizer,
        })
    }
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// Keras's check in `model.save`: the path must end in `.keras` (or `.h5`, the legacy
/// format, which this engine does not write).
pub fn check_model_path(path: &Path) -> KResult<()> {
    let s = shown(path);
    if s.ends_with(".keras") {
        Ok(())
    } else if s.ends_with(".h5") || s.ends_with(".hdf5") {
        Err(KerasError::Path(format!(
            "Saving to the legacy HDF5 format is not supported by this kernel. Use a `.keras` extension instead. Received: filepath={s}"
        )))
    } else {
        Err(KerasError::Path(format!(
            "Invalid filepath extension for saving. Please add either a `.keras` extension for the native Keras format (recommended) or a `.h5` extension. Use `model.export(filepath)` if you want to export a SavedModel for use with TFLite/TFServing/etc. Received: filepath={s}."
        )))
    }
}

/// Keras's check in `save_weights`/`load_weights`.
pub fn check_weights_path(path: &Path) -> KResult<()> {
    let s = shown(path);
    if s.ends_with(".weights.h5") {
        Ok(())
    } else {
        Err(KerasError::Path(format!(
            "The filename must end in `.weights.h5`. Received: filepath={s}"
        )))
    }
}

/// Writes `bytes` to a temporary sibling of `path`, then renames it into place.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> KResult<()> {
    let io = |e: std::io::Error| KerasError::Io {
        path: shown(path),
        detail: e.to_string(),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

fn read_file(path: &Path) -> KResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => KerasError::NotFound(shown(path)),
        _ => KerasError::Io {
            path: shown(path),
            detail: e.to_string(),
        },
    })
}

fn corrupt(path: &Path, detail: impl std::fmt::Display) -> KerasError {
    KerasError::Corrupt {
        path: shown(path),
        detail: detail.to_string(),
    }
}

/// `model.save("name.keras")`.
pub fn save_model(path: &Path, m: &SavedModel) -> KResult<()> {
    check_model_path(path)?;
    let config = serde_json::to_vec(&model_json(&m.config, m.compile.as_ref())?)
        .map_err(|e| corrupt(path, e))?;
    let date = chrono::Utc::now().format("%Y-%m-%d@%H:%M:%S").to_string();
    let meta = serde_json::json!({"keras_version": KERAS_VERSION, "date_saved": date}).to_string();
    let weights = tensors::encode(&m.config, &m.weights, m.optimizer.as_ref())?;
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        let entries: [(&str, &[u8]); 3] = [
            ("metadata.json", meta.as_bytes()),
            ("config.json", &config),
            (WEIGHTS_ENTRY, &weights),
        ];
        for (name, bytes) in entries {
            zip.start_file(name, opts).map_err(|e| corrupt(path, e))?;
            zip.write_all(bytes).map_err(|e| corrupt(path, e))?;
        }
        zip.finish().map_err(|e| corrupt(path, e))?;
    }
    write_atomic(path, &buf.into_inner())
}

fn zip_entry(
    zip: &mut zip::ZipArchive<std::io::Cursor<Vec<u8>>>,
    path: &Path,
    name: &str,
) -> KResult<Vec<u8>> {
    let mut f = zip
        .by_name(name)
        .map_err(|_| corrupt(path, format!("the archive has no {name}")))?;
    let mut out = Vec::new();
    f.read_to_end(&mut out)
        .map_err(|e| corrupt(path, format!("{name}: {e}")))?;
    Ok(out)
}

/// `keras.models.load_model("name.keras")`.
pub fn load_model(path: &Path) -> KResult<SavedModel> {
    let s = shown(path);
    if !s.ends_with(".keras") {
        return Err(KerasError::Path(format!(
            "File format not supported: filepath={s}. Keras 3 only supports V3 `.keras` files and legacy H5 format files (`.h5` extension). Note that the legacy SavedModel format is not supported by `load_model()` in Keras 3."
        )));
    }
    let bytes = read_file(path)?;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| corrupt(path, format!("not a valid .keras archive ({e})")))?;
    let config: serde_json::Value =
        serde_json::from_slice(&zip_entry(&mut zip, path, "config.json")?)
            .map_err(|e| corrupt(path, format!("config.json: {e}")))?;
    let (config, compile) = model_from_json(&config)?;
    let weights = zip_entry(&mut zip, path, WEIGHTS_ENTRY)?;
    let (weights, optimizer) = tensors::decode(path, &config, &weights, compile.as_ref())?;
    Ok(SavedModel {
        config,
        compile,
        weights,
        optimizer,
    })
}

/// `model.save_weights("name.weights.h5")` (safetensors inside; see the module notes).
pub fn save_weights(path: &Path, config: &ModelConfig, weights: &[HostArray]) -> KResult<()> {
    check_weights_path(path)?;
    write_atomic(path, &tensors::encode(config, weights, None)?)
}

/// `model.load_weights("name.weights.h5")`: weights in Keras order, checked against the
/// model's variables.
pub fn load_weights(path: &Path, config: &ModelConfig) -> KResult<Vec<HostArray>> {
    check_weights_path(path)?;
    let bytes = read_file(path)?;
    Ok(tensors::decode(path, config, &bytes, None)?.0)
}
