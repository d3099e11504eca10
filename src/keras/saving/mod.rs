//! Saving and loading models and weights in the files Keras 3 writes.
//!
//! A `.keras` file is, as in Keras 3, a zip archive holding `config.json` (the model and
//! compile settings, Keras-like JSON), `metadata.json` (`keras_version`, `date_saved`) and
//! `model.weights.h5`, the weights and the optimizer's state in Keras 3's HDF5 layout
//! (`hdf5/keras3.rs`). `save_weights`/`load_weights` write and read `.weights.h5` files in
//! the same layout, and `model.save('m.h5')` / `load_model('m.h5')` the legacy full-model
//! HDF5 format (`hdf5/legacy.rs`). Files from real Keras load here and files from here
//! load in real Keras.
//!
//! Earlier versions of this kernel stored the weights as safetensors
//! (`model.weights.safetensors` inside archives, and bare safetensors under `.weights.h5`
//! names); `tensors.rs` still reads them, and loading such an archive says so in a note.
//!
//! Every write goes to a temporary file in the same directory and is renamed into place,
//! so a crash never leaves half a file under the real name. Missing, truncated or corrupt
//! files become errors naming the path, never a panic. This module never touches a device.

pub mod bundle;
pub mod graph;
pub mod hdf5;
mod json;
pub mod naming;
mod tensors;

pub use json::{
    builtin_layer_from, builtin_layer_json, compile_from_json, compile_json, init_json,
    input_layer_json, kind_config, model_from_json, model_json, optimizer_from_json,
    optimizer_json, sequential_json,
};

use super::compile::CompileConfig;
use super::config::{ModelConfig, VarSpec};
use super::error::{KResult, KerasError};
use super::init::HostArray;
use super::replica::OptimizerState;
use super::trainer::Trainer;
use std::io::{Read, Write};
use std::path::Path;

/// The Keras version written into `metadata.json`: the API this engine follows.
pub const KERAS_VERSION: &str = "3.6.0";
/// The weights inside a `.keras` archive, as Keras 3 names them.
const WEIGHTS_ENTRY: &str = "model.weights.h5";
/// Where earlier versions of this kernel put them (safetensors).
const OLD_WEIGHTS_ENTRY: &str = "model.weights.safetensors";
/// The note shown when such an archive is loaded.
pub const OLD_ARCHIVE_NOTE: &str = "this archive was written by an earlier version of this kernel (safetensors weights); save it again to get a file real Keras can read.";

/// Everything a `.keras` file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedModel {
    pub config: ModelConfig,
    pub compile: Option<CompileConfig>,
    pub weights: Vec<HostArray>,
    pub optimizer: Option<OptimizerState>,
    /// Something the reader should be told about the file (an old format), if any.
    pub note: Option<String>,
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
            note: None,
        })
    }
}

/// The variables an optimizer keeps slots for, in Keras order: the trainable ones (a batch
/// normalization's moving statistics have none, in the file as in the optimizer).
pub(crate) fn optimized(vars: &[VarSpec]) -> impl Iterator<Item = &VarSpec> {
    vars.iter().filter(|v| v.trainable)
}

/// An optimizer's state read from a file: `read(i, var, k)` gives the `k`-th of `slots`
/// slots of the `i`-th variable the optimizer updates, in the variable's shape.
pub(crate) fn read_optimizer_state(
    vars: &[VarSpec],
    slots: usize,
    iterations: i64,
    mut read: impl FnMut(usize, &VarSpec, usize) -> KResult<Vec<f32>>,
) -> KResult<OptimizerState> {
    let mut all = Vec::with_capacity(vars.len());
    for (i, v) in optimized(vars).enumerate() {
        let mut s = Vec::with_capacity(slots);
        for k in 0..slots {
            s.push(HostArray::new(v.shape.clone(), read(i, v, k)?));
        }
        all.push(s);
    }
    Ok(OptimizerState {
        iterations: iterations.max(0) as u64,
        slots: all,
    })
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

fn is_legacy(path: &Path) -> bool {
    let s = shown(path);
    s.ends_with(".h5") || s.ends_with(".hdf5")
}

/// Keras's check in `model.save`: the path must end in `.keras` or `.h5` (the legacy
/// format).
pub fn check_model_path(path: &Path) -> KResult<()> {
    let s = shown(path);
    if s.ends_with(".keras") || is_legacy(path) {
        Ok(())
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

/// The optimizer state with the learning rate Keras stores beside it, when compiled.
fn optimizer_of(m: &SavedModel) -> Option<(&OptimizerState, f32)> {
    match (&m.optimizer, &m.compile) {
        (Some(o), Some(c)) => Some((o, c.optimizer.learning_rate)),
        _ => None,
    }
}

/// `model.save("name.keras")`, or `model.save("name.h5")` in the legacy format.
pub fn save_model(path: &Path, m: &SavedModel) -> KResult<()> {
    check_model_path(path)?;
    if is_legacy(path) {
        return write_atomic(path, &hdf5::legacy::encode(path, m)?);
    }
    let config = serde_json::to_vec(&model_json(&m.config, m.compile.as_ref())?)
        .map_err(|e| corrupt(path, e))?;
    let weights = hdf5::keras3::encode(path, &m.config, &m.weights, optimizer_of(m))?;
    write_archive(path, &config, &weights)
}

/// A `.keras` file read into memory as a zip archive.
type Archive = zip::ZipArchive<std::io::Cursor<Vec<u8>>>;

fn zip_entry(zip: &mut Archive, path: &Path, name: &str) -> KResult<Vec<u8>> {
    let mut f = zip
        .by_name(name)
        .map_err(|_| corrupt(path, format!("the archive has no {name}")))?;
    let mut out = Vec::new();
    f.read_to_end(&mut out)
        .map_err(|e| corrupt(path, format!("{name}: {e}")))?;
    Ok(out)
}

/// A `.keras` archive of a functional graph that is not a chain: its graph, its
/// `compile_config` as written (the bindings read it, since a model of several outputs
/// compiles per output), and the bytes of `model.weights.h5`, whose objects the bindings
/// read at the paths of the model they rebuild (`hdf5::keras3::decode_layers`).
#[derive(Debug, Clone)]
pub struct SavedGraph {
    pub graph: graph::GraphConfig,
    pub compile: Option<serde_json::Value>,
    /// `model.weights.h5` of an archive, or the whole legacy `.h5` file.
    pub weights: Vec<u8>,
    /// Whether the file is the legacy `.h5` format (layers matched by position, the
    /// optimizer's variables by name, `hdf5::legacy`) rather than an archive.
    pub legacy: bool,
}

/// What `load_model` finds in a file: a model the engine describes, or a graph.
#[derive(Debug)]
pub enum Loaded {
    Model(SavedModel),
    Graph(SavedGraph),
}

/// `model.save("name.keras")` of a functional graph that is not a chain: `config.json`
/// with the graph and `compile_config`, and `model.weights.h5` with each object's
/// variables at its path and the optimizer's state (with its learning rate).
pub fn save_graph_model(
    path: &Path,
    graph: &graph::GraphConfig,
    compile: Option<&CompileConfig>,
    layers: &[hdf5::keras3::LayerWeights],
    optimizer: Option<(&OptimizerState, f32)>,
) -> KResult<()> {
    check_model_path(path)?;
    if is_legacy(path) {
        return Err(KerasError::Value(format!(
            "The functional model '{}' is saved in the legacy .h5 format with its layers' weights by name (`save_graph_legacy`).",
            graph.name
        )));
    }
    let mut config = graph.to_json();
    if let (Some(c), Some(o)) = (compile, config.as_object_mut()) {
        o.insert("compile_config".into(), compile_json(c));
    }
    save_objects(path, &config, &graph.name, layers, optimizer)
}

/// Whether an entry of `config.json` is a user's object rather than one of Keras's: Keras
/// writes `module` as `keras` or `keras.*` for its own classes and as None (a class
/// defined in a notebook) or the user's module for others. An entry without `module`
/// (files of Keras 2) is Keras's.
pub fn is_custom(entry: &serde_json::Value) -> bool {
    match entry.get("module") {
        None => false,
        Some(m) => !m
            .as_str()
            .is_some_and(|m| m == "keras" || m.starts_with("keras.")),
    }
}

/// Whether a model's entry of `config.json` is a user's model or holds a user's layer
/// among its `layers`: such a model is made by the bindings, which know the user's
/// classes.
pub fn holds_custom(config: &serde_json::Value) -> bool {
    is_custom(config)
        || config
            .get("config")
            .and_then(|c| c.get("layers"))
            .and_then(serde_json::Value::as_array)
            .is_some_and(|ls| ls.iter().any(is_custom))
}

/// `config.json` and the bytes of `model.weights.h5` of a `.keras` archive, unread.
pub fn read_archive(path: &Path) -> KResult<(serde_json::Value, Vec<u8>)> {
    let (mut zip, config) = open_archive(path)?;
    let weights = zip_entry(&mut zip, path, WEIGHTS_ENTRY)?;
    Ok((config, weights))
}

/// A `.keras` archive, open, with its `config.json` parsed; Keras's words for an archive
/// that is not there.
fn open_archive(path: &Path) -> KResult<(Archive, serde_json::Value)> {
    let s = shown(path);
    let bytes = read_file(path).map_err(|e| match e {
        KerasError::NotFound(_) => KerasError::Value(format!(
            "File not found: filepath={s}. Please ensure the file is an accessible `.keras` zip file."
        )),
        e => e,
    })?;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| corrupt(path, format!("not a valid .keras archive ({e})")))?;
    let config: serde_json::Value =
        serde_json::from_slice(&zip_entry(&mut zip, path, "config.json")?)
            .map_err(|e| corrupt(path, format!("config.json: {e}")))?;
    Ok((zip, config))
}

/// `model.save("name.keras")` of a model described by its objects (a functional graph
/// that is not a chain, a subclassed model, a model holding a user's layers): the given
/// `config.json` entry (with its `compile_config`), and `model.weights.h5` with each
/// object's variables at its path and the optimizer's state (with its learning rate).
pub fn save_objects(
    path: &Path,
    config: &serde_json::Value,
    model: &str,
    layers: &[hdf5::keras3::LayerWeights],
    optimizer: Option<(&OptimizerState, f32)>,
) -> KResult<()> {
    if !shown(path).ends_with(".keras") {
        return Err(KerasError::Value(format!(
            "The model '{model}' holds objects of the user's classes; save it as a `.keras` archive (the legacy .h5 format is not written for them here)."
        )));
    }
    let config = serde_json::to_vec(config).map_err(|e| corrupt(path, e))?;
    let weights = hdf5::keras3::encode_objects(path, model, layers, optimizer)?;
    write_archive(path, &config, &weights)
}

/// `model.save("name.h5")` of a functional graph that is not a chain, in the legacy format.
pub fn save_graph_legacy(
    path: &Path,
    graph: &graph::GraphConfig,
    compile: Option<&CompileConfig>,
    layers: &[hdf5::legacy::NamedWeights],
    optimizer: Option<&OptimizerState>,
) -> KResult<()> {
    check_model_path(path)?;
    write_atomic(
        path,
        &hdf5::legacy::encode_graph(path, graph, compile, layers, optimizer)?,
    )
}

/// The zip archive Keras 3 writes, stored without compression as Keras stores it.
fn write_archive(path: &Path, config: &[u8], weights: &[u8]) -> KResult<()> {
    let date = chrono::Utc::now().format("%Y-%m-%d@%H:%M:%S").to_string();
    let meta = serde_json::json!({"keras_version": KERAS_VERSION, "date_saved": date}).to_string();
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        let entries: [(&str, &[u8]); 3] = [
            ("metadata.json", meta.as_bytes()),
            ("config.json", config),
            (WEIGHTS_ENTRY, weights),
        ];
        for (name, bytes) in entries {
            zip.start_file(name, opts).map_err(|e| corrupt(path, e))?;
            zip.write_all(bytes).map_err(|e| corrupt(path, e))?;
        }
        zip.finish().map_err(|e| corrupt(path, e))?;
    }
    write_atomic(path, &buf.into_inner())
}

/// `keras.models.load_model("name.keras")` (or a legacy `name.h5`) of a model the engine
/// describes; a graph that is not a chain is [`load_any`]'s.
pub fn load_model(path: &Path) -> KResult<SavedModel> {
    match load_any(path)? {
        Loaded::Model(m) => Ok(m),
        Loaded::Graph(g) => Err(KerasError::Value(format!(
            "The model '{}' in {} is a functional graph; load it with keras.models.load_model.",
            g.graph.name,
            shown(path)
        ))),
    }
}

/// `keras.models.load_model("name.keras")` (or a legacy `name.h5`).
pub fn load_any(path: &Path) -> KResult<Loaded> {
    let s = shown(path);
    if is_legacy(path) {
        let bytes = read_file(path)?;
        if let Some((graph, compile)) = hdf5::legacy::graph_of(path, &bytes)? {
            return Ok(Loaded::Graph(SavedGraph {
                graph,
                compile,
                weights: bytes,
                legacy: true,
            }));
        }
        return hdf5::legacy::decode(path, bytes).map(Loaded::Model);
    }
    if !s.ends_with(".keras") {
        return Err(KerasError::Path(format!(
            "File format not supported: filepath={s}. Keras 3 only supports V3 `.keras` files and legacy H5 format files (`.h5` extension). Note that the legacy SavedModel format is not supported by `load_model()` in Keras 3."
        )));
    }
    let (mut zip, config) = open_archive(path)?;
    if config.get("class_name").and_then(serde_json::Value::as_str) == Some("Functional") {
        let g = graph::GraphConfig::from_json(&config)?;
        if !g.is_chain() {
            let compile = config
                .get("compile_config")
                .filter(|c| c.as_object().is_some_and(|o| !o.is_empty()))
                .cloned();
            let weights = zip_entry(&mut zip, path, WEIGHTS_ENTRY)?;
            return Ok(Loaded::Graph(SavedGraph {
                graph: g,
                compile,
                weights,
                legacy: false,
            }));
        }
    }
    let (config, compile) = model_from_json(&config)?;
    let old = zip.index_for_name(WEIGHTS_ENTRY).is_none()
        && zip.index_for_name(OLD_WEIGHTS_ENTRY).is_some();
    let (weights, optimizer) = if old {
        let bytes = zip_entry(&mut zip, path, OLD_WEIGHTS_ENTRY)?;
        tensors::decode(path, &config, &bytes, compile.as_ref())?
    } else {
        let bytes = zip_entry(&mut zip, path, WEIGHTS_ENTRY)?;
        hdf5::keras3::decode(path, &config, bytes, compile.as_ref())?
    };
    Ok(Loaded::Model(SavedModel {
        config,
        compile,
        weights,
        optimizer,
        note: old.then(|| OLD_ARCHIVE_NOTE.to_string()),
    }))
}

/// `model.save_weights("name.weights.h5")`: the weights and, for a compiled model, the
/// optimizer's state with its learning rate, as Keras 3 writes both into the one file.
pub fn save_weights(
    path: &Path,
    config: &ModelConfig,
    weights: &[HostArray],
    optimizer: Option<(&OptimizerState, f32)>,
) -> KResult<()> {
    check_weights_path(path)?;
    write_atomic(
        path,
        &hdf5::keras3::encode(path, config, weights, optimizer)?,
    )
}

/// What a weights file holds for a model: its weights in Keras order, checked against the
/// model's variables, and (for a compiled model, when the file has them) the number of
/// optimizer variables it holds with the optimizer's state, or why that state does not fit
/// this model's optimizer (Keras's warning, which skips it).
#[derive(Debug)]
pub struct WeightsFile {
    pub weights: Vec<HostArray>,
    pub optimizer: hdf5::keras3::FoundOptimizer,
}

/// `model.load_weights("name.weights.h5")`.
pub fn load_weights(
    path: &Path,
    config: &ModelConfig,
    compile: Option<&CompileConfig>,
) -> KResult<WeightsFile> {
    check_weights_path(path)?;
    let bytes = read_file(path)?;
    if !hdf5::is_hdf5(&bytes) && bytes.get(8) == Some(&b'{') {
        // A safetensors file (an eight-byte header length, then JSON) from an earlier
        // version of this kernel, which kept weights only.
        let weights = tensors::decode(path, config, &bytes, None)?.0;
        return Ok(WeightsFile {
            weights,
            optimizer: None,
        });
    }
    let (weights, optimizer) = hdf5::keras3::decode_weights_file(path, config, bytes, compile)?;
    Ok(WeightsFile { weights, optimizer })
}

/// `model.save_weights("name.weights.h5")` of a model described by its objects alone (a
/// functional graph, a subclass, a model holding a user's layers): each object at its path,
/// as Keras's attribute walk places it.
pub fn save_layer_weights(
    path: &Path,
    model: &str,
    layers: &[hdf5::keras3::LayerWeights],
) -> KResult<()> {
    check_weights_path(path)?;
    write_atomic(path, &hdf5::keras3::encode_layers(path, model, layers)?)
}

/// `model.load_weights("name.weights.h5")` for a model described by its objects alone:
/// each object's variables, read at its path with the shapes given.
pub fn load_layer_weights(
    path: &Path,
    wanted: &[(String, Vec<Vec<usize>>)],
) -> KResult<Vec<hdf5::keras3::Loaded>> {
    check_weights_path(path)?;
    hdf5::keras3::decode_layers(path, read_file(path)?, wanted)
}
