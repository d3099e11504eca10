//! [`Op`]: every operation of the library as plain data (an enum of the op families, each
//! with its attributes), so that a recorded graph of ops can be built, inspected, cloned
//! and sent to a replica thread. Each family lives in its own file under `ops/`, which
//! holds everything about its ops: TensorFlow's op type name, the dtype and shape checks
//! with TF's errors, the forward computation and the vector-Jacobian product. This file
//! only dispatches. [`CustomOp`] is the escape hatch for an operation defined outside the
//! library (a fused model forward whose backward is the engine's layer backward).

use std::any::Any;
use std::sync::Arc;

use super::activation::{Activation, Softmax};
use super::eager::Eager;
use super::elementwise::{Binary, Pointwise, Unary};
use super::error::{ErrorClass, OpError, OpResult};
use super::index::IndexOp;
use super::linalg::MatMul;
use super::loss::Loss;
use super::optimizer::ApplyUpdate;
use super::random::RandomOp;
use super::reduce::{ArgReduce, ProdGrad, Reduce};
use super::scan::Scan;
use super::select::SelectOp;
use super::shape::ShapeOp;
use super::tape::Node;
use super::tensor::Tensor;
use super::window::WindowOp;
use crate::device::Device;
use crate::tensor::NdArray;

/// State a custom op's forward keeps for its backward (a fused model's activations).
pub type Saved = Arc<dyn Any + Send + Sync>;

/// What a forward pass produced.
pub struct Outputs {
    pub values: Vec<NdArray>,
    /// Kept on the tape node with the outputs and handed to [`CustomOp::vjp`].
    pub saved: Option<Saved>,
}

/// An operation defined outside the library. `forward` computes on the execution
/// context's device; `vjp` maps output gradients to input gradients by running ops through
/// the context (so an outer tape records them and higher derivatives work), or by running
/// the engine directly when only first derivatives are needed.
pub trait CustomOp: Send + Sync + std::fmt::Debug {
    /// The op type name, shown in errors and graphs.
    fn name(&self) -> &str;
    fn forward(&self, dev: &dyn Device, inputs: &[&NdArray]) -> OpResult<Outputs>;
    /// Input gradients (`None` where an input gets none) from the output gradients
    /// (`grads[i]` for output i; zeros where the target did not depend on an output).
    fn vjp(&self, e: &mut Eager, node: &Node, grads: &[Tensor]) -> OpResult<Vec<Option<Tensor>>> {
        let _ = (e, node, grads);
        Err(OpError::no_gradient(self.name()))
    }
}

/// One operation with its attributes. Inputs are tensors passed at execution; attributes
/// (axes, strides, dtypes) are part of the op.
#[derive(Debug, Clone)]
pub enum Op {
    Unary(Unary),
    Binary(Binary),
    Pointwise(Pointwise),
    Activation(Activation),
    /// Inputs `[x, y, dy]` with `y = act(x)`: `dy * act'(x)`.
    ActivationGrad(Activation),
    Softmax(Softmax),
    /// Inputs `[y, dy]` with `y = softmax(x)` (or log-softmax).
    SoftmaxGrad(Softmax),
    MatMul(MatMul),
    Reduce(Reduce),
    ArgReduce(ArgReduce),
    /// The products of the other elements of each reduced lane: `Prod`'s gradient.
    ProdGrad(ProdGrad),
    /// A running sum along an axis (`Cumsum`).
    Scan(Scan),
    /// Selection by value (`Unique`, `TopKV2`).
    Select(SelectOp),
    Shape(ShapeOp),
    Index(IndexOp),
    Window(WindowOp),
    Loss(Loss),
    Random(RandomOp),
    /// An optimizer's update of one variable and its slots (not differentiable).
    Update(ApplyUpdate),
    Custom(Arc<dyn CustomOp>),
}

impl Op {
    /// TensorFlow's op type name (`MatMul`, `AddV2`, `Sum`, ...).
    pub fn name(&self) -> &str {
        match self {
            Op::Unary(u) => u.name(),
            Op::Binary(b) => b.name(),
            Op::Pointwise(p) => p.name(),
            Op::Activation(a) => a.name(),
            Op::ActivationGrad(a) => a.grad_name(),
            Op::Softmax(s) => s.name(),
            Op::SoftmaxGrad(s) => s.grad_name(),
            Op::MatMul(m) => m.name(),
            Op::Reduce(r) => r.name(),
            Op::ArgReduce(r) => r.name(),
            Op::ProdGrad(p) => p.name(),
            Op::Scan(s) => s.name(),
            Op::Select(s) => s.name(),
            Op::Shape(s) => s.name(),
            Op::Index(i) => i.name(),
            Op::Window(w) => w.name(),
            Op::Loss(l) => l.name(),
            Op::Random(r) => r.name(),
            Op::Update(u) => u.name(),
            Op::Custom(c) => c.name(),
        }
    }

    /// Computes the outputs from the input values on `dev`. Pure: no tape, no recorder.
    /// A graph runner calls this directly.
    pub fn forward(&self, dev: &dyn Device, inputs: &[&NdArray]) -> OpResult<Outputs> {
        let values = match self {
            Op::Unary(u) => u.forward(dev, inputs),
            Op::Binary(b) => b.forward(dev, inputs),
            Op::Pointwise(p) => p.forward(dev, inputs),
            Op::Activation(a) => a.forward(dev, inputs),
            Op::ActivationGrad(a) => a.grad_forward(dev, inputs),
            Op::Softmax(s) => s.forward(dev, inputs),
            Op::SoftmaxGrad(s) => s.grad_forward(dev, inputs),
            Op::MatMul(m) => m.forward(dev, inputs),
            Op::Reduce(r) => r.forward(dev, inputs),
            Op::ArgReduce(r) => r.forward(dev, inputs),
            Op::ProdGrad(p) => p.forward(dev, inputs),
            Op::Scan(s) => s.forward(dev, inputs),
            Op::Select(s) => s.forward(dev, inputs),
            Op::Shape(s) => s.forward(dev, inputs),
            Op::Index(i) => i.forward(dev, inputs),
            Op::Window(w) => w.forward(dev, inputs),
            Op::Loss(l) => l.forward(dev, inputs),
            Op::Random(r) => r.forward(dev, inputs),
            Op::Update(u) => u.forward(dev, inputs),
            Op::Custom(c) => return c.forward(dev, inputs),
        }?;
        Ok(Outputs {
            values,
            saved: None,
        })
    }

    /// The vector-Jacobian product of a recorded node: one entry per input, `None` where
    /// the input gets no gradient. Computed with ops run through `e`, so that an outer
    /// tape records the gradient computation itself.
    pub fn vjp(
        &self,
        e: &mut Eager,
        node: &Node,
        grads: &[Tensor],
    ) -> OpResult<Vec<Option<Tensor>>> {
        match self {
            Op::Unary(u) => u.vjp(e, node, grads),
            Op::Binary(b) => b.vjp(e, node, grads),
            Op::Pointwise(p) => p.vjp(e, node, grads),
            Op::Activation(a) => a.vjp(e, node, grads),
            Op::ActivationGrad(a) => a.grad_vjp(e, node, grads),
            Op::Softmax(s) => s.vjp(e, node, grads),
            Op::SoftmaxGrad(s) => s.grad_vjp(e, node, grads),
            Op::MatMul(m) => m.vjp(e, node, grads),
            Op::Reduce(r) => r.vjp(e, node, grads),
            Op::ArgReduce(_) => Ok(vec![None; node.inputs.len()]),
            Op::ProdGrad(p) => Err(OpError::no_gradient(p.name())),
            Op::Scan(s) => s.vjp(e, node, grads),
            Op::Select(s) => s.vjp(e, node, grads),
            Op::Shape(s) => s.vjp(e, node, grads),
            Op::Index(i) => i.vjp(e, node, grads),
            Op::Window(w) => w.vjp(e, node, grads),
            Op::Loss(l) => l.vjp(e, node, grads),
            Op::Random(r) => r.vjp(e, node, grads),
            Op::Update(u) => Err(OpError::no_gradient(u.name())),
            Op::Custom(c) => c.vjp(e, node, grads),
        }
    }
}

/// The `N` inputs of an op, or TF's error for a wrong count (a graph built by hand can
/// get this wrong; the builders never do).
pub(crate) fn inputs<'a, const N: usize>(
    op: &str,
    given: &[&'a NdArray],
) -> OpResult<[&'a NdArray; N]> {
    <[&NdArray; N]>::try_from(given).map_err(|_| {
        OpError::new(
            ErrorClass::InvalidArgument,
            format!(
                "{op} expects {N} input{}, got {}",
                if N == 1 { "" } else { "s" },
                given.len()
            ),
        )
    })
}

/// The `N` recorded inputs of a node, for its VJP.
pub(crate) fn node_inputs<const N: usize>(node: &Node) -> OpResult<[&Tensor; N]> {
    let refs: Vec<&Tensor> = node.inputs.iter().collect();
    <[&Tensor; N]>::try_from(refs.as_slice()).map_err(|_| {
        OpError::internal(format!(
            "{} node holds {} inputs, expected {N}",
            node.op.name(),
            node.inputs.len()
        ))
    })
}

/// The first output of a node and the gradient flowing into it.
pub(crate) fn first<'a>(node: &'a Node, grads: &'a [Tensor]) -> OpResult<(&'a Tensor, &'a Tensor)> {
    match (node.outputs.first(), grads.first()) {
        (Some(y), Some(dy)) => Ok((y, dy)),
        _ => Err(OpError::internal(format!(
            "{} node has no output gradient",
            node.op.name()
        ))),
    }
}
