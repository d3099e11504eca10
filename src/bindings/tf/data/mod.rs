//! `tf.data`: datasets as TensorFlow's input pipelines describe them. `dataset.rs` owns the
//! description a cell builds (the stages and their element specs, cardinality and reprs) and
//! the `tf.data` module; `stages.rs` the constructors and methods beyond slicing, mapping
//! and batching; `element.rs` one element as a nest of arrays; `iter.rs` runs a pipeline
//! (one fresh stream per iteration) and hands `model.fit` its arrays; `distribute.rs`
//! splits each global batch over a strategy's replicas. Nothing here trains or computes
//! tensors; arrays come from the tensor part.

pub mod dataset;
pub mod distribute;
pub mod element;
pub mod iter;
pub mod stages;

pub use dataset::module;
