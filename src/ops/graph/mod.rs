//! [`Graph`]: a traced function as data, and its replay. A graph holds placeholders for
//! the function's tensor inputs, the constants it captured, the variables it captured (by
//! handle), and its steps in the order they ran: ops with their input and output slots,
//! variable reads and assignments, and `tf.print`s; then the slots of its outputs. Random
//! ops keep their seed stream inside their `NextSeed` step, so every replay draws fresh
//! values. [`Recorder`] (`record.rs`) builds a graph by watching an [`Eager`] context
//! while a function runs once on concrete inputs; `print.rs` is what a print step shows.
//!
//! A graph is specialised to the input dtypes and shapes it was traced with (gradients
//! computed during the trace bake shapes into their ops), and [`Graph::run`] checks them.
//! Replay runs every op through [`Eager::execute_ref`], so a tape active around the call
//! records the ops (gradients through a replayed function work) and no op is copied when
//! none is. Everything here is `Send + Sync`: a replica thread may replay a graph on its
//! own context with its own copies of the variables ([`Graph::run_with`]). This module
//! must not touch the language or the bindings; where a print goes is the caller's
//! [`Printer`].

mod print;
mod record;
mod stages;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use super::eager::{Assign, Eager};
use super::error::{ErrorClass, OpError, OpResult};
use super::op::Op;
use super::tensor::Tensor;
use super::variable::Variable;
use crate::tensor::{shape_str, DType};

pub use print::{format_g, format_tensor, PrintPart, PrintSpec, PrintStream};
pub use record::{Capture, Recorder, StaticShape};
pub use stages::{ScopedThreads, Workers};

use stages::Stage;

/// A value's place in a replay's table of tensors.
pub type Slot = usize;

/// One step of a graph, in the order the traced function ran it.
#[derive(Debug, Clone)]
pub enum Step {
    Op {
        op: Op,
        inputs: Vec<Slot>,
        outputs: Vec<Slot>,
    },
    /// Reads captured variable `var` into `out` (a tape watching the variable records it).
    Read { var: usize, out: Slot },
    /// Assigns `value` to captured variable `var`.
    Assign {
        var: usize,
        how: Assign,
        value: Slot,
    },
    /// A `tf.print` of the tensors in `inputs`.
    Print {
        spec: Arc<PrintSpec>,
        inputs: Vec<Slot>,
    },
}

/// Where the `tf.print` steps of a replay go (the notebook's cell output, a replica's
/// log).
pub trait Printer {
    fn print(&mut self, spec: &PrintSpec, inputs: &[Tensor]);
}

/// A printer that drops everything (benchmarks, replicas that print nothing).
pub struct Silent;

impl Printer for Silent {
    fn print(&mut self, _spec: &PrintSpec, _inputs: &[Tensor]) {}
}

/// A traced function, ready to replay.
#[derive(Debug, Clone)]
pub struct Graph {
    steps: Vec<Step>,
    /// After step `i`, the slots used for the last time there: intermediates are released
    /// as soon as nothing needs them.
    frees: Vec<Vec<Slot>>,
    slots: usize,
    inputs: Vec<Slot>,
    /// The dtype and shape of each input the graph was traced with.
    input_types: Vec<(DType, Vec<usize>)>,
    constants: Vec<(Slot, Tensor)>,
    variables: Vec<Variable>,
    outputs: Vec<Slot>,
    /// The most inputs any op step takes (the size of the replay's argument buffer).
    widest: usize,
    /// Whether a replay may take inputs of other shapes (of the same ranks).
    any_shapes: bool,
    /// The steps split into serial runs and the parallel stages of `strategy.run`'s
    /// replicas (`stages.rs`).
    stages: Vec<Stage>,
}

impl Graph {
    /// Replays the graph on `e` with the variables it captured.
    pub fn run(
        &self,
        e: &mut Eager,
        inputs: &[Tensor],
        printer: &mut dyn Printer,
    ) -> OpResult<Vec<Tensor>> {
        self.run_with(e, inputs, &self.variables, printer)
    }

    /// Replays the graph with `variables[i]` standing for captured variable `i` (see
    /// [`variables`](Self::variables)): how a replica thread runs a function traced on the
    /// primary copies with its own copies, on its own context.
    pub fn run_with(
        &self,
        e: &mut Eager,
        inputs: &[Tensor],
        variables: &[Variable],
        printer: &mut dyn Printer,
    ) -> OpResult<Vec<Tensor>> {
        self.replay(e, inputs, variables, printer, None)
    }

    /// Whether the graph has steps that replicas of a `strategy.run` may run at once.
    pub fn has_replica_stages(&self) -> bool {
        self.stages
            .iter()
            .any(|s| matches!(s, Stage::Parallel { .. }))
    }

    /// [`run_with`](Self::run_with), with the steps of each replica of a traced
    /// `strategy.run` run by `workers`, all replicas at once. A context that a tape or a
    /// recorder watches replays serially, so that they see every op.
    pub fn run_replicated(
        &self,
        e: &mut Eager,
        inputs: &[Tensor],
        variables: &[Variable],
        printer: &mut dyn Printer,
        workers: &dyn Workers,
    ) -> OpResult<Vec<Tensor>> {
        let workers = (!e.observed()).then_some(workers);
        self.replay(e, inputs, variables, printer, workers)
    }

    fn replay(
        &self,
        e: &mut Eager,
        inputs: &[Tensor],
        variables: &[Variable],
        printer: &mut dyn Printer,
        workers: Option<&dyn Workers>,
    ) -> OpResult<Vec<Tensor>> {
        self.check(inputs, variables)?;
        let mut vals: Vec<Option<Tensor>> = vec![None; self.slots];
        for (slot, t) in &self.constants {
            vals[*slot] = Some(t.clone());
        }
        for (slot, t) in self.inputs.iter().zip(inputs) {
            vals[*slot] = Some(t.clone());
        }
        let mut args: Vec<Tensor> = Vec::with_capacity(self.widest);
        for stage in &self.stages {
            match (stage, workers) {
                (
                    Stage::Parallel {
                        replicas,
                        span,
                        collectives,
                    },
                    Some(w),
                ) => {
                    let left = stages::run_parallel(
                        &self.steps,
                        &self.frees,
                        replicas,
                        collectives,
                        &mut vals,
                        variables,
                        w,
                    )?;
                    // The stage's values that nothing after it reads are released, and
                    // the collectives the ring did not take run here.
                    for frees in &self.frees[span.clone()] {
                        for s in frees {
                            vals[*s] = None;
                        }
                    }
                    self.run_serial(e, &left, &mut vals, &mut args, variables, printer)?;
                    for c in collectives {
                        for s in &self.frees[c.step] {
                            vals[*s] = None;
                        }
                    }
                }
                (
                    Stage::Parallel {
                        span, collectives, ..
                    },
                    None,
                ) => {
                    // The collectives read only the stage's values, so they may follow it.
                    let steps: Vec<usize> = span
                        .clone()
                        .chain(collectives.iter().map(|c| c.step))
                        .collect();
                    self.run_serial(e, &steps, &mut vals, &mut args, variables, printer)?;
                }
                (Stage::Serial(steps), _) => {
                    self.run_serial(e, steps, &mut vals, &mut args, variables, printer)?
                }
            }
        }
        args.clear();
        self.outputs.iter().map(|s| take(&vals, *s)).collect()
    }

    /// `steps`, one after another on `e`.
    fn run_serial(
        &self,
        e: &mut Eager,
        steps: &[usize],
        vals: &mut [Option<Tensor>],
        args: &mut Vec<Tensor>,
        variables: &[Variable],
        printer: &mut dyn Printer,
    ) -> OpResult<()> {
        run_steps(
            &self.steps,
            &self.frees,
            steps,
            e,
            &mut Table(vals),
            args,
            variables,
            printer,
        )
    }

    fn check(&self, inputs: &[Tensor], variables: &[Variable]) -> OpResult<()> {
        if inputs.len() != self.inputs.len() {
            return Err(OpError::new(
                ErrorClass::InvalidArgument,
                format!(
                    "the graph takes {} input tensors, got {}",
                    self.inputs.len(),
                    inputs.len()
                ),
            ));
        }
        for (i, (t, (dtype, shape))) in inputs.iter().zip(&self.input_types).enumerate() {
            let fits = if self.any_shapes {
                t.ndim() == shape.len()
            } else {
                t.shape() == shape.as_slice()
            };
            if t.dtype() != *dtype || !fits {
                return Err(OpError::new(
                    ErrorClass::InvalidArgument,
                    format!(
                        "input {i} of the graph was traced as {} {}, got {} {}",
                        dtype.name(),
                        shape_str(shape),
                        t.dtype().name(),
                        shape_str(t.shape())
                    ),
                ));
            }
        }
        if variables.len() != self.variables.len() {
            return Err(OpError::new(
                ErrorClass::InvalidArgument,
                format!(
                    "the graph captures {} variables, got {}",
                    self.variables.len(),
                    variables.len()
                ),
            ));
        }
        for (mine, theirs) in self.variables.iter().zip(variables) {
            if mine.dtype() != theirs.dtype() || mine.shape() != theirs.shape() {
                return Err(OpError::new(
                    ErrorClass::InvalidArgument,
                    format!(
                        "variable '{}' ({} {}) cannot stand for '{}' ({} {})",
                        theirs.name(),
                        theirs.dtype().name(),
                        shape_str(theirs.shape()),
                        mine.name(),
                        mine.dtype().name(),
                        shape_str(mine.shape())
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The graph, allowed to replay on inputs of other shapes with the same ranks: for a
    /// caller that knows nothing recorded depends on the traced shapes (no gradient, no
    /// shape read into an attribute).
    pub fn any_shapes(mut self) -> Graph {
        self.any_shapes = true;
        self
    }

    /// The variables the graph reads or assigns, in the order it first touched them.
    pub fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// The dtype and shape of each input, as traced.
    pub fn input_types(&self) -> &[(DType, Vec<usize>)] {
        &self.input_types
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// How many tensors a replay returns.
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }
}

/// Where a step runner keeps the values of a replay: the replay's table of slots, or a
/// replica's own values over the table a parallel stage shares (`stages.rs`).
trait Values {
    fn get(&self, s: Slot) -> OpResult<Tensor>;
    fn set(&mut self, s: Slot, t: Tensor);
    /// `s` is read no more after this step.
    fn free(&mut self, s: Slot);
}

/// The replay's own table.
struct Table<'a>(&'a mut [Option<Tensor>]);

impl Values for Table<'_> {
    fn get(&self, s: Slot) -> OpResult<Tensor> {
        take(self.0, s)
    }
    fn set(&mut self, s: Slot, t: Tensor) {
        if let Some(v) = self.0.get_mut(s) {
            *v = Some(t);
        }
    }
    fn free(&mut self, s: Slot) {
        if let Some(v) = self.0.get_mut(s) {
            *v = None;
        }
    }
}

/// Runs `which` of `steps`, one after another on `e`: the one step loop of every replay,
/// serial or a replica's part of a parallel stage. `args` is the reused argument buffer.
#[allow(clippy::too_many_arguments)]
fn run_steps(
    steps: &[Step],
    frees: &[Vec<Slot>],
    which: &[usize],
    e: &mut Eager,
    vals: &mut dyn Values,
    args: &mut Vec<Tensor>,
    variables: &[Variable],
    printer: &mut dyn Printer,
) -> OpResult<()> {
    for &i in which {
        let (Some(step), Some(frees)) = (steps.get(i), frees.get(i)) else {
            continue;
        };
        match step {
            Step::Op {
                op,
                inputs,
                outputs,
            } => {
                args.clear();
                for s in inputs {
                    args.push(vals.get(*s)?);
                }
                let outs = e.execute_ref(op, args)?;
                for (slot, t) in outputs.iter().zip(outs) {
                    vals.set(*slot, t);
                }
            }
            Step::Read { var, out } => {
                let var = variables
                    .get(*var)
                    .ok_or_else(|| OpError::internal(format!("graph variable {var} is missing")))?;
                vals.set(*out, e.read(var));
            }
            Step::Assign { var, how, value } => {
                let v = vals.get(*value)?;
                let var = variables
                    .get(*var)
                    .ok_or_else(|| OpError::internal(format!("graph variable {var} is missing")))?;
                e.assign(var, *how, &v)?;
            }
            Step::Print { spec, inputs } => {
                args.clear();
                for s in inputs {
                    args.push(vals.get(*s)?);
                }
                printer.print(spec, args);
            }
        }
        for s in frees {
            vals.free(*s);
        }
    }
    Ok(())
}

fn take(vals: &[Option<Tensor>], s: Slot) -> OpResult<Tensor> {
    vals.get(s)
        .and_then(Clone::clone)
        .ok_or_else(|| OpError::internal(format!("graph slot {s} is read before it is set")))
}
