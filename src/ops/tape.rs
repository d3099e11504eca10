//! [`Tape`]: reverse-mode differentiation as TensorFlow's `GradientTape` does it. A tape
//! tracks the ids of the tensors it watches and of everything computed from them; an op
//! is recorded (as a [`Node`]: the op, its input and output tensors) only when one of its
//! floating-point inputs is tracked. [`backward`] walks the recorded nodes in reverse,
//! asks each op for its vector-Jacobian product, and sums the gradients of a tensor used
//! several times. The gradient ops themselves run through the execution context, so an
//! outer tape that is recording sees them: nested tapes give higher derivatives.
//!
//! A tape is shared between the Python object that owns it and the context's stack of
//! active tapes, hence [`TapeRef`] (`Arc<Mutex<..>>`: replica threads may run tapes too).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use super::eager::Eager;
use super::elementwise::Binary;
use super::error::{ErrorClass, OpError, OpResult};
use super::op::{Op, Saved};
use super::shape::ShapeOp;
use super::tensor::{Tensor, TensorId};
use super::variable::Variable;
use crate::tensor::{DType, NdArray};

/// One recorded operation: what ran, on which tensors, producing which tensors.
#[derive(Debug)]
pub struct Node {
    pub op: Op,
    pub inputs: Vec<Tensor>,
    pub outputs: Vec<Tensor>,
    /// What a custom op's forward kept for its backward.
    pub saved: Option<Saved>,
}

/// A gradient tape's record.
#[derive(Debug)]
pub struct Tape {
    persistent: bool,
    watch_accessed_variables: bool,
    /// Watched tensors and variable handles, and every output of a recorded node.
    tracked: HashSet<TensorId>,
    watched_variables: Vec<Variable>,
    nodes: Vec<Arc<Node>>,
    /// A non-persistent tape answers one gradient (or jacobian) call.
    used: bool,
}

/// A tape shared by its owner and the execution context's stack of active tapes.
pub type TapeRef = Arc<Mutex<Tape>>;

/// Locks a tape. A panic while a tape was locked cannot leave it half-written in a way
/// that matters (nodes are pushed whole), so a poisoned lock is simply taken over.
pub fn lock(tape: &TapeRef) -> MutexGuard<'_, Tape> {
    match tape.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// What `tape.gradient` returns for a source the targets do not depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unconnected {
    None,
    Zero,
}

/// A gradient source: a tensor, or a variable (whose reads the tape recorded).
#[derive(Debug, Clone)]
pub enum Source {
    Tensor(Tensor),
    Variable(Variable),
}

impl Source {
    pub fn id(&self) -> TensorId {
        match self {
            Source::Tensor(t) => t.id(),
            Source::Variable(v) => v.handle(),
        }
    }

    pub fn dtype(&self) -> DType {
        match self {
            Source::Tensor(t) => t.dtype(),
            Source::Variable(v) => v.dtype(),
        }
    }

    pub fn shape(&self) -> Vec<usize> {
        match self {
            Source::Tensor(t) => t.shape().to_vec(),
            Source::Variable(v) => v.shape().to_vec(),
        }
    }
}

impl Tape {
    pub fn new(persistent: bool, watch_accessed_variables: bool) -> Tape {
        Tape {
            persistent,
            watch_accessed_variables,
            tracked: HashSet::new(),
            watched_variables: Vec::new(),
            nodes: Vec::new(),
            used: false,
        }
    }

    /// The tape behind a shared handle.
    pub fn shared(self) -> TapeRef {
        Arc::new(Mutex::new(self))
    }

    pub fn persistent(&self) -> bool {
        self.persistent
    }

    pub fn watch_accessed_variables(&self) -> bool {
        self.watch_accessed_variables
    }

    /// Starts tracking `t`. Tensors of integer or bool dtype cannot carry gradients and are
    /// not watched; the caller warns as TF does (`false`).
    pub fn watch(&mut self, t: &Tensor) -> bool {
        if !t.is_float() {
            return false;
        }
        self.tracked.insert(t.id());
        true
    }

    /// Starts tracking reads of `v` (explicitly, or because a trainable variable was read
    /// while watching accessed variables). `false` for a non-float variable.
    pub fn watch_variable(&mut self, v: &Variable) -> bool {
        if !v.dtype().is_float() {
            return false;
        }
        if self.tracked.insert(v.handle()) {
            self.watched_variables.push(v.clone());
        }
        true
    }

    /// The variables this tape watches, in the order it started watching them.
    pub fn watched_variables(&self) -> &[Variable] {
        &self.watched_variables
    }

    pub fn is_tracked(&self, id: TensorId) -> bool {
        self.tracked.contains(&id)
    }

    /// Forgets everything recorded and watched, as a fresh tape (`tape.reset()`).
    pub fn reset(&mut self) {
        self.tracked.clear();
        self.watched_variables.clear();
        self.nodes.clear();
        self.used = false;
    }

    /// TF's error for a second gradient call on a non-persistent tape, checked before
    /// anything else of the call.
    pub fn ensure_usable(&self) -> OpResult<()> {
        if self.used {
            return Err(OpError::new(
                ErrorClass::Runtime,
                "A non-persistent GradientTape can only be used to compute one set of \
                 gradients (or jacobians)",
            ));
        }
        Ok(())
    }

    /// The recorded nodes, in execution order.
    pub fn nodes(&self) -> &[Arc<Node>] {
        &self.nodes
    }

    /// TF records an op when one of its inputs is tracked and has a trainable dtype.
    pub(crate) fn should_record(&self, inputs: &[Tensor]) -> bool {
        inputs
            .iter()
            .any(|t| t.is_float() && self.tracked.contains(&t.id()))
    }

    pub(crate) fn record(&mut self, node: Arc<Node>) {
        for o in &node.outputs {
            self.tracked.insert(o.id());
        }
        self.nodes.push(node);
    }

    /// Takes the nodes for a gradient call, enforcing the one-call rule of a
    /// non-persistent tape. `finish` marks the call done once it succeeded.
    pub(crate) fn begin_gradient(&self) -> OpResult<Vec<Arc<Node>>> {
        self.ensure_usable()?;
        Ok(self.nodes.clone())
    }

    pub(crate) fn finish_gradient(&mut self) {
        if !self.persistent {
            self.used = true;
            self.nodes.clear();
        }
    }
}

fn constant(shape: &[usize], v: f64, dtype: DType) -> OpResult<Tensor> {
    Tensor::full(shape, v, dtype)
}

/// The gradients of the sum of `targets` (weighted by `output_gradients`, ones where not
/// given) with respect to each source, from the recorded `nodes`. As in TF, a source gets
/// a gradient only when the tape tracks it (`tracked[i]`: watched, or computed by a
/// recorded op) or it is itself a target; a source the targets do not reach gets `None`,
/// or zeros with [`Unconnected::Zero`]; a source of integer dtype always gets `None`.
pub fn backward(
    e: &mut Eager,
    nodes: &[Arc<Node>],
    targets: &[Tensor],
    sources: &[Source],
    tracked: &[bool],
    output_gradients: Option<&[Tensor]>,
    unconnected: Unconnected,
) -> OpResult<Vec<Option<Tensor>>> {
    // Forward reachability from the sources: only nodes on a path from a source matter.
    let mut reached: HashSet<TensorId> = sources.iter().map(Source::id).collect();
    for n in nodes {
        if n.inputs.iter().any(|t| reached.contains(&t.id())) {
            reached.extend(n.outputs.iter().map(Tensor::id));
        }
    }
    let mut grads: HashMap<TensorId, Tensor> = HashMap::new();
    for (i, t) in targets.iter().enumerate() {
        let g = match output_gradients.and_then(|og| og.get(i)) {
            Some(g) => g.clone(),
            None => constant(t.shape(), 1.0, t.dtype())?,
        };
        accumulate(e, &mut grads, t.id(), g)?;
    }
    for n in nodes.iter().rev() {
        if !n.inputs.iter().any(|t| reached.contains(&t.id())) {
            continue;
        }
        let have: Vec<Option<Tensor>> = n
            .outputs
            .iter()
            .map(|o| grads.get(&o.id()).cloned())
            .collect();
        if have.iter().all(Option::is_none) {
            continue;
        }
        let mut dys = Vec::with_capacity(have.len());
        for (o, g) in n.outputs.iter().zip(have) {
            dys.push(match g {
                Some(g) => g,
                None => constant(o.shape(), 0.0, o.dtype())?,
            });
        }
        let dxs = n.op.vjp(e, n, &dys)?;
        for (x, dx) in n.inputs.iter().zip(dxs) {
            if let Some(dx) = dx {
                if x.is_float() && reached.contains(&x.id()) {
                    accumulate(e, &mut grads, x.id(), dx)?;
                }
            }
        }
    }
    sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if !s.dtype().is_float() {
                return Ok(None);
            }
            let is_target = targets.iter().any(|t| t.id() == s.id());
            let found = if tracked.get(i).copied().unwrap_or(false) || is_target {
                grads.get(&s.id())
            } else {
                None
            };
            match (found, unconnected) {
                (Some(g), _) => Ok(Some(g.clone())),
                (None, Unconnected::None) => Ok(None),
                (None, Unconnected::Zero) => constant(&s.shape(), 0.0, s.dtype()).map(Some),
            }
        })
        .collect()
}

/// Adds `g` to the gradient of `id`, through the context so that outer tapes see the sum.
fn accumulate(
    e: &mut Eager,
    grads: &mut HashMap<TensorId, Tensor>,
    id: TensorId,
    g: Tensor,
) -> OpResult<()> {
    let total = match grads.remove(&id) {
        Some(prev) => e.execute1(Op::Binary(Binary::Add), &[prev, g])?,
        None => g,
    };
    grads.insert(id, total);
    Ok(())
}

/// The Jacobian of `target` with respect to each source: for every element of the target,
/// one backward pass with a one-hot output gradient; the rows are stacked into shape
/// `target.shape + source.shape`. With `batch`, the first axis of target and sources is a
/// batch of independent examples and the result is `[batch] + target.shape[1:] +
/// source.shape[1:]` (`batch_jacobian`).
pub fn jacobian(
    e: &mut Eager,
    nodes: &[Arc<Node>],
    target: &Tensor,
    sources: &[Source],
    tracked: &[bool],
    unconnected: Unconnected,
    batch: bool,
) -> OpResult<Vec<Option<Tensor>>> {
    let tshape = target.shape().to_vec();
    let (b, rows) = if batch {
        let b = tshape.first().copied().unwrap_or(0);
        for s in sources {
            if s.shape().first() != Some(&b) {
                return Err(OpError::new(
                    ErrorClass::Value,
                    format!(
                        "Need first dimension of target shape {} and source shape {} to match.",
                        crate::tensor::shape_str(&tshape),
                        crate::tensor::shape_str(&s.shape())
                    ),
                ));
            }
        }
        (b, tshape.iter().skip(1).product::<usize>())
    } else {
        (1, target.size())
    };
    let mut per_source: Vec<Vec<Tensor>> = vec![Vec::with_capacity(rows); sources.len()];
    let connected: Vec<bool> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.id() == target.id()
                || (tracked.get(i).copied().unwrap_or(false) && reaches(nodes, target, s))
        })
        .collect();
    for j in 0..rows {
        let mut seed = vec![0.0; target.size()];
        for k in 0..b {
            if let Some(x) = seed.get_mut(k * rows + j) {
                *x = 1.0;
            }
        }
        let og = NdArray::from_f64(&tshape, seed)
            .map_err(|e| OpError::from_tensor("Fill", "CPU:0", e))?
            .astype(target.dtype());
        let og = [Tensor::new(og)];
        let gs = backward(
            e,
            nodes,
            std::slice::from_ref(target),
            sources,
            tracked,
            Some(&og),
            Unconnected::Zero,
        )?;
        for (i, (g, s)) in gs.into_iter().zip(sources).enumerate() {
            let g = match g {
                Some(g) => g,
                None => constant(&s.shape(), 0.0, s.dtype())?,
            };
            per_source[i].push(g);
        }
    }
    let mut out = Vec::with_capacity(sources.len());
    for (i, s) in sources.iter().enumerate() {
        if !s.dtype().is_float() || (!connected[i] && unconnected == Unconnected::None) {
            out.push(None);
            continue;
        }
        let sshape = s.shape();
        let mut shape: Vec<i64> = tshape.iter().map(|&d| d as i64).collect();
        if batch {
            shape.extend(sshape.iter().skip(1).map(|&d| d as i64));
        } else {
            shape.extend(sshape.iter().map(|&d| d as i64));
        }
        let rows_i = std::mem::take(&mut per_source[i]);
        let stacked = if rows_i.is_empty() {
            let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
            constant(&dims, 0.0, s.dtype())?
        } else {
            // Rows are [source] (or [batch, source...]); stack along the target axis.
            let axis = if batch { 1 } else { 0 };
            e.execute1(Op::Shape(ShapeOp::Pack { axis }), &rows_i)?
        };
        out.push(Some(
            e.execute1(Op::Shape(ShapeOp::Reshape { shape }), &[stacked])?,
        ));
    }
    Ok(out)
}

/// Whether `target` was computed from `source` on this record (or is it).
fn reaches(nodes: &[Arc<Node>], target: &Tensor, source: &Source) -> bool {
    let mut reached: HashSet<TensorId> = HashSet::from([source.id()]);
    for n in nodes {
        if n.inputs.iter().any(|t| reached.contains(&t.id())) {
            reached.extend(n.outputs.iter().map(Tensor::id));
        }
    }
    reached.contains(&target.id())
}
