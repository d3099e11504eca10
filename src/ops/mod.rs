//! The op library: every tensor operation of the engine defined once (TensorFlow's op type
//! name, dtype and shape checks with TF's errors, the forward computation, and the
//! vector-Jacobian product), reverse-mode differentiation on tapes, and the execution
//! context that runs ops, records them and lets a graph recorder watch. It sits above
//! [`tensor`](crate::tensor) (host arrays) and [`device`](crate::device) (the kernels the
//! compiled Keras models use, which float32 matmul, convolution, pooling, activations,
//! softmax and losses run on) and below `keras`; it must never import the language, the
//! bindings, the protocol, `keras` or `distribute`. Nothing here is `Rc` or `RefCell`: a
//! replica thread may run ops and tapes.
//!
//! # Layout
//!
//! - [`Tensor`] (`tensor.rs`): a value with an identity; [`Variable`] (`variable.rs`): a
//!   resource variable with shared storage.
//! - [`Op`] (`op.rs`): the ops as plain data, dispatching to their families:
//!   `elementwise.rs` (unary and binary math, comparisons, cast, select, AddN, identity,
//!   stop-gradient), `activation.rs` (activations and softmax), `linalg.rs` (matmul),
//!   `reduce.rs` (reductions), `scan.rs` (`Cumsum`, a running sum), `select.rs`
//!   (`Unique`, `TopKV2`: selection by value), `shape.rs` (reshape, transpose, concat,
//!   split, ...), `index.rs` (slices, gather, one-hot), `window.rs` (conv2d and pooling),
//!   `loss.rs` (Keras's losses and TF's cross-entropies), `normalization.rs` (moments and
//!   batch normalization, composed of the ops above), `variance.rs` (`reduce_variance` and
//!   `reduce_std`), `pooling.rs` (global and one-dimensional pooling), `conv1d.rs` (the
//!   one-dimensional convolution with causal padding and dilation), `rectifier.rs`
//!   (Keras's ReLU and ELU with their arguments), `recurrent.rs` (a sequence through a simple
//!   RNN, LSTM or GRU cell) and `resize.rs` (nearest upsampling and
//!   zero padding of images), composed likewise, `random.rs` (dropout, samples, seeds, TF's
//!   Philox ops),
//!   `optimizer.rs` (an optimizer's update of a variable and its slots, on the device's
//!   `optimizer_step`).
//!   Each family file also holds its builder functions (`add`, `matmul`, `reduce_sum`,
//!   ...), which run one op through a context.
//! - [`Eager`] (`eager.rs`): the execution context: device, active tapes, observers;
//!   `device_io.rs` moves arrays to and from the device for the float32 paths.
//! - [`Tape`] (`tape.rs`): recording and the backward pass ([`backward`], jacobians).
//! - [`Graph`] (`graph/`): a traced function as data (placeholders, captured constants and
//!   variables, steps, outputs), the [`Recorder`] that builds one by observing a context,
//!   and its replay without the interpreter (`tf.function`, and replica threads).
//!
//! # Using it
//!
//! ```
//! use mirror_kernel::ops::{self, Eager, Source, Tape, Tensor, Unconnected};
//! use mirror_kernel::tensor::NdArray;
//!
//! let mut e = Eager::default();
//! let x = Tensor::new(NdArray::from_f64(&[2], vec![1.0, 2.0]).unwrap());
//! let tape = Tape::new(false, true).shared();
//! e.push_tape(tape.clone());
//! ops::lock(&tape).watch(&x);
//! let y = ops::mul(&mut e, &x, &x).unwrap();
//! let loss = ops::reduce_sum(&mut e, &y, None, false).unwrap();
//! e.pop_tape(&tape);
//! let g = e
//!     .gradient(&tape, &[loss], &[Source::Tensor(x)], None, Unconnected::None)
//!     .unwrap();
//! let (_, dx) = g[0].as_ref().unwrap().value().to_f64_vec();
//! assert_eq!(dx, vec![2.0, 4.0]);
//! ```

mod activation;
mod conv1d;
mod device_io;
mod eager;
mod elementwise;
mod error;
mod graph;
mod index;
mod linalg;
mod loss;
mod mask;
mod normalization;
mod op;
mod optimizer;
mod pooling;
mod random;
mod rectifier;
mod recurrent;
mod reduce;
mod resize;
mod scan;
mod select;
mod shape;
mod tape;
mod tensor;
mod variable;
mod variance;
mod window;

#[cfg(test)]
mod tests;

pub use activation::{activate, softmax, Activation, Softmax};
pub use conv1d::{conv1d, Conv1dPadding};
pub use eager::{Assign, Eager, Observer, ObserverId, TapeState};
pub use elementwise::{
    add, add_n, binary, cast, clip_by_value, div, identity, mul, neg, ones_like, scale, select,
    square, stop_gradient, sub, unary, zeros_like, Binary, Pointwise, Unary,
};
pub use error::{dims, kernel_dtype_name, ErrorClass, OpError, OpResult};
pub use graph::{
    format_g, format_tensor, Capture, Graph, PrintPart, PrintSpec, PrintStream, Printer, Recorder,
    ScopedThreads, Silent, Slot, StaticShape, Step, Workers,
};
pub use index::{gather, one_hot, slice, strided_slice, IndexOp, SliceItem};
pub use linalg::{matmul, MatMul};
pub use loss::{loss, Loss};
pub use mask::{masked_mean_steps, masking, nonzero_mask};
pub use normalization::{batch_normalization, moments};
pub use op::{CustomOp, Op, Outputs, Saved};
pub use optimizer::{apply_update, ApplyUpdate};
pub use pooling::{global_pool, pool1d};
pub use random::{dropout, sample, RandomOp, SeedStream};
pub use rectifier::{keras_elu, keras_relu};
pub use recurrent::{recurrence, Cell, CellWeights, Gate, Recurrence};
pub use reduce::{
    reduce, reduce_mean, reduce_sum, sum_to, ArgReduce, ProdGrad, Reduce, ReduceKind,
};
pub use resize::{resize_images, upsample_nearest, zero_pad2d, Interpolation};
pub use scan::{cumsum, Scan};
pub use select::{top_k, unique, SelectOp};
pub use shape::{
    broadcast_to, concat, expand_dims, reshape, split, squeeze, stack, tile, transpose, unstack,
    ShapeOp, SplitSizes,
};
pub use tape::{backward, jacobian, lock, Node, Source, Tape, TapeRef, Unconnected};
pub use tensor::{Tensor, TensorId};
pub use variable::Variable;
pub use variance::{reduce_std, reduce_variance};
pub use window::{conv2d_op as conv2d, pool, Conv, Padding, Pool, WindowOp};
