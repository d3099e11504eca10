//! [`Eager`]: the execution context. It owns the device ops compute on, the stack of
//! active tapes and the attached observers (graph recorders). Every op a program runs goes
//! through [`Eager::execute`]: forward on the device, then a record on every active tape
//! that tracks one of the inputs, then a notice to every observer. Variable reads and
//! assignments go through it too, so tapes watch trainable variables as they are read and
//! a recorder sees which variables a computation touches.
//!
//! One context serves one thread of computation: the notebook session keeps one, and a
//! replica thread that runs a traced graph makes its own (everything here is `Send`).

use std::borrow::Cow;
use std::sync::Arc;

use super::elementwise::{Binary, Pointwise};
use super::error::OpResult;
use super::op::{Op, Saved};
use super::tape::{self, lock, Node, Source, TapeRef, Unconnected};
use super::tensor::Tensor;
use super::variable::Variable;
use crate::device::cpu::CpuDevice;
use crate::device::Device;
use crate::tensor::NdArray;

/// How an assignment combines the variable's value with the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assign {
    Set,
    Add,
    Sub,
}

/// Sees every op, variable read and assignment a context executes, with the tensors'
/// identities: the seam a graph recorder (`tf.function` tracing) attaches to. An input
/// whose id no earlier `op` produced is a capture (a constant, an argument, or a variable
/// read reported by `read_variable`). `saved` is the state a custom op's forward kept for
/// its backward, which a recorder must refuse (a replay would differentiate with the
/// trace's state); `previous` is the value an assignment replaced, so a recorder can undo
/// the assignments of a trace it throws away.
pub trait Observer: Send {
    fn op(&mut self, op: &Op, inputs: &[Tensor], outputs: &[Tensor], saved: Option<&Saved>);
    fn read_variable(&mut self, var: &Variable, value: &Tensor) {
        let _ = (var, value);
    }
    fn assign_variable(
        &mut self,
        var: &Variable,
        how: Assign,
        value: &Tensor,
        previous: &Arc<NdArray>,
    ) {
        let _ = (var, how, value, previous);
    }
}

/// Names an attached observer, to detach it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObserverId(u64);

/// The active tapes of one thread of computation (see [`Eager::switch_tapes`]).
#[derive(Default)]
pub struct TapeState {
    tapes: Vec<TapeRef>,
    paused: usize,
}

/// The execution context.
pub struct Eager {
    device: Box<dyn Device>,
    /// Active tapes, innermost last.
    tapes: Vec<TapeRef>,
    /// Depth of `stop_recording` blocks: while positive, no tape records.
    paused: usize,
    observers: Vec<(ObserverId, Box<dyn Observer>)>,
    next_observer: u64,
}

impl Default for Eager {
    fn default() -> Self {
        Eager::new(Box::new(CpuDevice::new(0)))
    }
}

impl Eager {
    pub fn new(device: Box<dyn Device>) -> Eager {
        Eager {
            device,
            tapes: Vec::new(),
            paused: 0,
            observers: Vec::new(),
            next_observer: 0,
        }
    }

    pub fn device(&self) -> &dyn Device {
        self.device.as_ref()
    }

    /// Runs `op` on `inputs`, records it on every active tape that tracks an input, and
    /// tells the observers. Returns the outputs, each a new tensor.
    pub fn execute(&mut self, op: Op, inputs: &[Tensor]) -> OpResult<Vec<Tensor>> {
        self.execute_cow(Cow::Owned(op), inputs)
    }

    /// [`execute`](Self::execute) for a borrowed op (a graph's step): the op is cloned only
    /// when a tape records it, so a replay with no tape active copies no op.
    pub fn execute_ref(&mut self, op: &Op, inputs: &[Tensor]) -> OpResult<Vec<Tensor>> {
        self.execute_cow(Cow::Borrowed(op), inputs)
    }

    fn execute_cow(&mut self, op: Cow<'_, Op>, inputs: &[Tensor]) -> OpResult<Vec<Tensor>> {
        // Most ops take up to three inputs: their arrays are gathered on the stack, so a
        // replayed graph allocates nothing per op beyond the outputs.
        let dev = self.device.as_ref();
        let out = match inputs {
            [] => op.forward(dev, &[])?,
            [a] => op.forward(dev, &[a.value()])?,
            [a, b] => op.forward(dev, &[a.value(), b.value()])?,
            [a, b, c] => op.forward(dev, &[a.value(), b.value(), c.value()])?,
            many => {
                let arrays: Vec<&NdArray> = many.iter().map(Tensor::value).collect();
                op.forward(dev, &arrays)?
            }
        };
        let outputs: Vec<Tensor> = out.values.into_iter().map(Tensor::new).collect();
        for (_, o) in &mut self.observers {
            o.op(&op, inputs, &outputs, out.saved.as_ref());
        }
        if self.recording() {
            let mut op = Some(op);
            let mut node: Option<Arc<Node>> = None;
            for t in &self.tapes {
                let mut tape = lock(t);
                if !tape.should_record(inputs) {
                    continue;
                }
                let n = match (&node, op.take()) {
                    (Some(n), _) => n.clone(),
                    (None, Some(op)) => {
                        let n = Arc::new(Node {
                            op: op.into_owned(),
                            inputs: inputs.to_vec(),
                            outputs: outputs.clone(),
                            saved: out.saved.clone(),
                        });
                        node = Some(n.clone());
                        n
                    }
                    (None, None) => continue,
                };
                tape.record(n);
            }
        }
        Ok(outputs)
    }

    /// [`execute`](Self::execute) for an op with one output.
    pub fn execute1(&mut self, op: Op, inputs: &[Tensor]) -> OpResult<Tensor> {
        let name = op.name().to_string();
        self.execute(op, inputs)?
            .into_iter()
            .next()
            .ok_or_else(|| super::error::OpError::internal(format!("{name} produced no output")))
    }

    fn recording(&self) -> bool {
        self.paused == 0 && !self.tapes.is_empty()
    }

    /// Reads a variable: a new tensor holding its current value. Active tapes that watch
    /// accessed variables start watching it if it is trainable; tapes that watch it record
    /// the read, so gradients reach the variable.
    pub fn read(&mut self, var: &Variable) -> Tensor {
        let t = Tensor::from_arc(var.snapshot());
        for (_, o) in &mut self.observers {
            o.read_variable(var, &t);
        }
        if self.recording() {
            let mut node: Option<Arc<Node>> = None;
            for tape in &self.tapes {
                let mut tape = lock(tape);
                if tape.watch_accessed_variables() && var.trainable() {
                    tape.watch_variable(var);
                }
                if !tape.is_tracked(var.handle()) {
                    continue;
                }
                let n = node.get_or_insert_with(|| {
                    Arc::new(Node {
                        op: Op::Pointwise(Pointwise::ReadVariable),
                        inputs: vec![var.handle_tensor()],
                        outputs: vec![t.clone()],
                        saved: None,
                    })
                });
                tape.record(n.clone());
            }
        }
        t
    }

    /// `var.assign(value)`, `assign_add`, `assign_sub`. Not differentiable (TF records
    /// nothing for assignments); observers see it. `value` must have the variable's dtype.
    pub fn assign(&mut self, var: &Variable, how: Assign, value: &Tensor) -> OpResult<()> {
        let previous = var.snapshot();
        let new = match how {
            Assign::Set => value.array().clone(),
            Assign::Add | Assign::Sub => {
                let op = if how == Assign::Add {
                    Binary::Add
                } else {
                    Binary::Sub
                };
                let mut out = Op::Binary(op)
                    .forward(self.device.as_ref(), &[&previous, value.value()])?
                    .values;
                Arc::new(out.pop().ok_or_else(|| {
                    super::error::OpError::internal("assignment produced no value")
                })?)
            }
        };
        var.store_arc(new)?;
        for (_, o) in &mut self.observers {
            o.assign_variable(var, how, value, &previous);
        }
        Ok(())
    }

    /// Exchanges the active tapes and the `stop_recording` depth with `other`: a caller
    /// that runs several threads of computation on this one context in turns (the replicas
    /// of an eager `strategy.run`) keeps each one's tapes apart, as TF keeps tapes per
    /// thread. Calling it twice with the same `other` puts everything back.
    pub fn switch_tapes(&mut self, other: &mut TapeState) {
        std::mem::swap(&mut self.tapes, &mut other.tapes);
        std::mem::swap(&mut self.paused, &mut other.paused);
    }

    /// The tapes active now, as the state a new thread of computation starts from (the
    /// tapes that were recording when it began go on recording it).
    pub fn tape_state(&self) -> TapeState {
        TapeState {
            tapes: self.tapes.clone(),
            paused: self.paused,
        }
    }

    /// Makes `tape` active (innermost).
    pub fn push_tape(&mut self, tape: TapeRef) {
        self.tapes.push(tape);
    }

    /// Stops `tape` recording; `false` when it was not active.
    pub fn pop_tape(&mut self, tape: &TapeRef) -> bool {
        match self.tapes.iter().rposition(|t| Arc::ptr_eq(t, tape)) {
            Some(i) => {
                self.tapes.remove(i);
                true
            }
            None => false,
        }
    }

    pub fn is_active(&self, tape: &TapeRef) -> bool {
        self.tapes.iter().any(|t| Arc::ptr_eq(t, tape))
    }

    /// The active tapes, innermost last.
    /// Whether a tape records or an observer watches what this context runs.
    pub fn observed(&self) -> bool {
        self.recording() || !self.observers.is_empty()
    }

    pub fn active_tapes(&self) -> &[TapeRef] {
        &self.tapes
    }

    /// Enters a `stop_recording` block: no tape records until the matching `resume`.
    pub fn pause(&mut self) {
        self.paused += 1;
    }

    pub fn resume(&mut self) {
        self.paused = self.paused.saturating_sub(1);
    }

    /// `tape.gradient(targets, sources, output_gradients, unconnected_gradients)`. A
    /// non-persistent tape stops recording and answers only once; a persistent tape that
    /// is still active records the gradient computation on itself, as TF's does.
    pub fn gradient(
        &mut self,
        tape: &TapeRef,
        targets: &[Tensor],
        sources: &[Source],
        output_gradients: Option<&[Tensor]>,
        unconnected: Unconnected,
    ) -> OpResult<Vec<Option<Tensor>>> {
        let (nodes, tracked, persistent) = Eager::begin(tape, sources)?;
        if !persistent {
            self.pop_tape(tape);
        }
        let out = tape::backward(
            self,
            &nodes,
            targets,
            sources,
            &tracked,
            output_gradients,
            unconnected,
        )?;
        lock(tape).finish_gradient();
        Ok(out)
    }

    /// `tape.jacobian(target, sources)` (or `batch_jacobian` with `batch`).
    pub fn jacobian(
        &mut self,
        tape: &TapeRef,
        target: &Tensor,
        sources: &[Source],
        unconnected: Unconnected,
        batch: bool,
    ) -> OpResult<Vec<Option<Tensor>>> {
        let (nodes, tracked, persistent) = Eager::begin(tape, sources)?;
        if !persistent {
            self.pop_tape(tape);
        }
        let out = tape::jacobian(self, &nodes, target, sources, &tracked, unconnected, batch)?;
        lock(tape).finish_gradient();
        Ok(out)
    }

    /// What a gradient call needs from the tape: its nodes, which sources it tracks, and
    /// whether it is persistent (after the one-call check of a non-persistent tape).
    fn begin(tape: &TapeRef, sources: &[Source]) -> OpResult<(Vec<Arc<Node>>, Vec<bool>, bool)> {
        let t = lock(tape);
        let nodes = t.begin_gradient()?;
        let tracked = sources.iter().map(|s| t.is_tracked(s.id())).collect();
        Ok((nodes, tracked, t.persistent()))
    }

    /// Attaches an observer; it sees everything executed from now on.
    pub fn attach(&mut self, observer: Box<dyn Observer>) -> ObserverId {
        let id = ObserverId(self.next_observer);
        self.next_observer += 1;
        self.observers.push((id, observer));
        id
    }

    /// Detaches an observer and hands it back.
    pub fn detach(&mut self, id: ObserverId) -> Option<Box<dyn Observer>> {
        let i = self.observers.iter().position(|(k, _)| *k == id)?;
        Some(self.observers.remove(i).1)
    }
}
