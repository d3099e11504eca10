//! [`Recorder`]: builds a [`Graph`] by watching an execution context while a function runs
//! once on concrete inputs. It is the context's [`Observer`]: every op becomes a step whose
//! inputs are the slots of the tensors it consumed; a tensor no step produced and no
//! placeholder names is a captured constant; variable reads and assignments become steps
//! on captured variables. Alongside, it keeps what a tracing front end asks about a
//! tensor: its graph name (`add:0`, as TF names graph tensors), its static shape (with the
//! unknown dimensions of a relaxed input signature), and whether its value depends on the
//! inputs, the variables or a random draw (is *dynamic*), which a value read during the
//! trace must not bake in.
//!
//! The recorder refuses a custom op whose forward keeps state for its backward
//! (`Outputs::saved`): a gradient computed during the trace from that state would replay
//! as the trace's constants. Custom ops that are to be traced pass such state as extra
//! outputs, which the graph then recomputes on every replay.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::{stages, Graph, PrintSpec, Slot, Step};
use crate::ops::eager::{Assign, Observer};
use crate::ops::elementwise::Binary;
use crate::ops::error::{ErrorClass, OpError, OpResult};
use crate::ops::op::{Op, Saved};
use crate::ops::random::RandomOp;
use crate::ops::tensor::{Tensor, TensorId};
use crate::ops::variable::Variable;
use crate::tensor::NdArray;

/// A static shape as a traced graph knows it: `None` for an unknown rank, `None` entries
/// for unknown dimensions.
pub type StaticShape = Option<Vec<Option<usize>>>;

/// Something a graph captured from outside the trace.
#[derive(Debug, Clone)]
pub enum Capture {
    Tensor(Tensor),
    Variable(Variable),
}

#[derive(Debug)]
struct SlotInfo {
    name: String,
    shape: StaticShape,
    dynamic: bool,
}

#[derive(Default)]
struct Recording {
    slot_of: HashMap<TensorId, Slot>,
    info: Vec<SlotInfo>,
    steps: Vec<Step>,
    /// The replica of a traced `strategy.run` that recorded each step, if any.
    tags: Vec<Option<usize>>,
    /// The replica whose function runs now (see [`Recorder::set_replica`]).
    replica: Option<usize>,
    inputs: Vec<(Slot, Tensor)>,
    constants: Vec<(Slot, Tensor)>,
    /// Tensors with this id or a later one were made during the recording: a constant
    /// among them is the traced code's own (`tf.constant` in the body), which TF shows as
    /// a graph constant rather than a capture.
    start: Option<TensorId>,
    variables: Vec<Variable>,
    var_index: HashMap<TensorId, usize>,
    /// Each assigned variable with the value it held before the trace first assigned it.
    assigned: Vec<(Variable, Arc<NdArray>)>,
    /// How many nodes of each name the graph has, to make names unique as TF does.
    names: HashMap<String, usize>,
    error: Option<OpError>,
}

/// A graph being recorded; clones share the recording.
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<Recording>>);

/// TF's default node name for an op made by the Python API: the lower-case names of the
/// operator overloads for arithmetic, the op type for the rest.
fn node_name(op: &Op) -> &str {
    match op {
        Op::Binary(Binary::Add) => "add",
        Op::Binary(Binary::Sub) => "sub",
        Op::Binary(Binary::Mul) => "mul",
        Op::Binary(Binary::Div) => "truediv",
        Op::Binary(Binary::FloorDiv) => "floordiv",
        Op::Binary(Binary::FloorMod) => "mod",
        Op::Binary(Binary::Pow) => "pow",
        other => other.name(),
    }
}

impl Recording {
    fn unique(&mut self, base: &str) -> String {
        let n = self.names.entry(base.to_string()).or_insert(0);
        let name = if *n == 0 {
            base.to_string()
        } else {
            format!("{base}_{n}")
        };
        *n += 1;
        name
    }

    fn new_slot(&mut self, id: TensorId, name: String, shape: StaticShape, dynamic: bool) -> Slot {
        let slot = self.info.len();
        self.info.push(SlotInfo {
            name,
            shape,
            dynamic,
        });
        self.slot_of.insert(id, slot);
        slot
    }

    /// The slot of a tensor an op consumes: known, or a new captured constant.
    fn slot_for(&mut self, t: &Tensor) -> Slot {
        if let Some(s) = self.slot_of.get(&t.id()) {
            return *s;
        }
        let base = if self.made_inside(t.id()) {
            "Const"
        } else {
            "capture"
        };
        let name = format!("{}:0", self.unique(base));
        let shape = Some(t.shape().iter().map(|d| Some(*d)).collect());
        let slot = self.new_slot(t.id(), name, shape, false);
        self.constants.push((slot, t.clone()));
        slot
    }

    fn var_slot(&mut self, var: &Variable) -> usize {
        if let Some(i) = self.var_index.get(&var.handle()) {
            return *i;
        }
        self.variables.push(var.clone());
        self.var_index
            .insert(var.handle(), self.variables.len() - 1);
        self.variables.len() - 1
    }

    /// TF's static shape of an op's output, estimated from its inputs: a dimension is
    /// unknown where an input with an unknown dimension of the same size lines up with it
    /// (aligned from the right, as broadcasting and batched ops align them).
    fn output_shape(&self, inputs: &[Slot], inputs_t: &[Tensor], out: &Tensor) -> StaticShape {
        let concrete = out.shape();
        let mut dims: Vec<Option<usize>> = concrete.iter().map(|d| Some(*d)).collect();
        for (slot, t) in inputs.iter().zip(inputs_t) {
            match &self.info[*slot].shape {
                None if t.shape() == concrete => return None,
                None => {}
                Some(sd) => {
                    for (k, d) in sd.iter().rev().enumerate() {
                        if d.is_some() || k >= concrete.len() {
                            continue;
                        }
                        let at = concrete.len() - 1 - k;
                        let theirs = t.shape().get(t.ndim() - 1 - k).copied();
                        if theirs == Some(concrete[at]) {
                            dims[at] = None;
                        }
                    }
                }
            }
        }
        Some(dims)
    }

    fn push(&mut self, step: Step) {
        self.steps.push(step);
        self.tags.push(self.replica);
    }

    fn made_inside(&self, id: TensorId) -> bool {
        self.start.is_some_and(|s| id >= s)
    }

    fn fail(&mut self, e: OpError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }
}

impl Recorder {
    pub fn new() -> Recorder {
        let r = Recorder::default();
        r.lock().start = Some(TensorId::fresh());
        r
    }

    /// The first tensor id of the recording: tensors from then on were made inside it.
    pub fn start(&self) -> TensorId {
        let mut r = self.lock();
        *r.start.get_or_insert_with(TensorId::fresh)
    }

    fn lock(&self) -> MutexGuard<'_, Recording> {
        match self.0.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The recorder as an observer to attach to a context.
    pub fn observer(&self) -> Box<dyn Observer> {
        Box::new(self.clone())
    }

    /// Declares `t` the next input of the function, named `name` (TF names it `name:0`),
    /// with the static shape the trace signature gives it.
    pub fn placeholder(&self, t: &Tensor, name: &str, shape: StaticShape) {
        let mut r = self.lock();
        let node = r.unique(name);
        let slot = r.new_slot(t.id(), format!("{node}:0"), shape, true);
        r.inputs.push((slot, t.clone()));
    }

    /// Makes `alias` stand for the same graph value as `of` (a nested function's fresh
    /// placeholder for a tensor of the outer trace).
    pub fn alias(&self, alias: &Tensor, of: &Tensor) {
        let mut r = self.lock();
        let slot = r.slot_for(of);
        r.slot_of.insert(alias.id(), slot);
    }

    /// Makes `t` known to the graph: a captured constant unless it already is known
    /// (named `Const` when the traced code made it).
    pub fn capture(&self, t: &Tensor) {
        self.lock().slot_for(t);
    }

    /// Whether `id` is known to the graph (an input, a step's output or a capture).
    pub fn knows(&self, id: TensorId) -> bool {
        self.lock().slot_of.contains_key(&id)
    }

    /// Whether the value of `id` changes between replays (it depends on an input, a
    /// variable or a random draw).
    pub fn is_dynamic(&self, id: TensorId) -> bool {
        let r = self.lock();
        r.slot_of.get(&id).is_some_and(|s| r.info[*s].dynamic)
    }

    /// The graph name of `id` (`x:0`, `add_1:0`), for symbolic printing; constants the
    /// traced code made are named on first sight.
    pub fn name(&self, id: TensorId) -> Option<String> {
        let r = self.lock();
        r.slot_of.get(&id).map(|s| r.info[*s].name.clone())
    }

    /// The static shape of `id` as the graph knows it.
    pub fn static_shape(&self, id: TensorId) -> Option<StaticShape> {
        let r = self.lock();
        r.slot_of.get(&id).map(|s| r.info[*s].shape.clone())
    }

    /// Tags the steps recorded from now on with the replica of `strategy.run` whose
    /// function runs (`None`: the cross-replica context); returns the previous tag.
    pub fn set_replica(&self, replica: Option<usize>) -> Option<usize> {
        std::mem::replace(&mut self.lock().replica, replica)
    }

    /// Records a `tf.print` of `tensors` with `spec`.
    pub fn print(&self, spec: PrintSpec, tensors: &[Tensor]) {
        let mut r = self.lock();
        let inputs = tensors.iter().map(|t| r.slot_for(t)).collect();
        r.push(Step::Print {
            spec: Arc::new(spec),
            inputs,
        });
    }

    /// Every variable the trace assigned, with the value it held before: to undo a trace
    /// that is thrown away (TF runs no step of a function while it traces it).
    pub fn assigned(&self) -> Vec<(Variable, Arc<NdArray>)> {
        self.lock().assigned.clone()
    }

    /// The variables and outside tensors the graph captured, in the order it met them.
    pub fn captures(&self) -> Vec<Capture> {
        let r = self.lock();
        let mut out: Vec<(Slot, Capture)> = r
            .constants
            .iter()
            .filter(|(_, t)| !r.made_inside(t.id()))
            .map(|(s, t)| (*s, Capture::Tensor(t.clone())))
            .collect();
        for (i, v) in r.variables.iter().enumerate() {
            // A variable is met at its first read or assignment (`v.assign_add(1.0)`
            // before any read captures `v` there, as TF lists it).
            let first = r
                .steps
                .iter()
                .find_map(|s| match s {
                    Step::Read { var, out } if *var == i => Some(*out),
                    Step::Assign { var, value, .. } if *var == i => Some(*value),
                    _ => None,
                })
                .unwrap_or(0);
            out.push((first, Capture::Variable(v.clone())));
        }
        out.sort_by_key(|(s, _)| *s);
        out.into_iter().map(|(_, c)| c).collect()
    }

    /// The graph returning `outputs`, after the first error the recording met (a refused
    /// op). Steps whose results nothing uses are dropped, as TF prunes them; assignments
    /// and prints always stay.
    pub fn finish(&self, outputs: &[Tensor]) -> OpResult<Graph> {
        let mut r = self.lock();
        if let Some(e) = r.error.clone() {
            return Err(e);
        }
        let outs: Vec<Slot> = outputs.iter().map(|t| r.slot_for(t)).collect();
        let mut live = vec![false; r.info.len()];
        for s in &outs {
            live[*s] = true;
        }
        let mut keep = vec![false; r.steps.len()];
        for (i, step) in r.steps.iter().enumerate().rev() {
            let needed = match step {
                Step::Op { outputs, .. } => outputs.iter().any(|s| live[*s]),
                Step::Read { out, .. } => live[*out],
                Step::Assign { .. } | Step::Print { .. } => true,
            };
            if !needed {
                continue;
            }
            keep[i] = true;
            match step {
                Step::Op { inputs, .. } | Step::Print { inputs, .. } => {
                    for s in inputs {
                        live[*s] = true;
                    }
                }
                Step::Assign { value, .. } => live[*value] = true,
                Step::Read { .. } => {}
            }
        }
        let steps: Vec<Step> = r
            .steps
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(s, _)| s.clone())
            .collect();
        let tags: Vec<Option<usize>> = r
            .tags
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(t, _)| *t)
            .collect();
        let mut last: Vec<Option<usize>> = vec![None; r.info.len()];
        for (i, step) in steps.iter().enumerate() {
            let used: &[Slot] = match step {
                Step::Op { inputs, .. } | Step::Print { inputs, .. } => inputs,
                Step::Assign { value, .. } => std::slice::from_ref(value),
                Step::Read { .. } => &[],
            };
            for s in used {
                last[*s] = Some(i);
            }
        }
        let mut frees: Vec<Vec<Slot>> = vec![Vec::new(); steps.len()];
        for (slot, at) in last.iter().enumerate() {
            if let Some(i) = at {
                if !outs.contains(&slot) {
                    frees[*i].push(slot);
                }
            }
        }
        let widest = steps
            .iter()
            .map(|s| match s {
                Step::Op { inputs, .. } | Step::Print { inputs, .. } => inputs.len(),
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        let constants = r
            .constants
            .iter()
            .filter(|(s, _)| live[*s])
            .cloned()
            .collect();
        Ok(Graph {
            frees,
            slots: r.info.len(),
            inputs: r.inputs.iter().map(|(s, _)| *s).collect(),
            input_types: r
                .inputs
                .iter()
                .map(|(_, t)| (t.dtype(), t.shape().to_vec()))
                .collect(),
            constants,
            variables: r.variables.clone(),
            outputs: outs,
            widest,
            any_shapes: false,
            stages: stages::plan(&steps, &tags),
            steps,
        })
    }
}

impl Observer for Recorder {
    fn op(&mut self, op: &Op, inputs: &[Tensor], outputs: &[Tensor], saved: Option<&Saved>) {
        let mut r = self.lock();
        if saved.is_some() {
            r.fail(OpError::new(
                ErrorClass::Runtime,
                format!(
                    "op {} keeps state for its gradient outside its outputs, which a traced \
                     function cannot replay; a custom op that is to be traced must return \
                     that state as extra outputs",
                    op.name()
                ),
            ));
            return;
        }
        let slots: Vec<Slot> = inputs.iter().map(|t| r.slot_for(t)).collect();
        let stateful = matches!(op, Op::Random(RandomOp::NextSeed(_)));
        let dynamic = stateful || slots.iter().any(|s| r.info[*s].dynamic);
        let node = r.unique(node_name(op));
        let mut outs = Vec::with_capacity(outputs.len());
        for (k, t) in outputs.iter().enumerate() {
            let shape = r.output_shape(&slots, inputs, t);
            outs.push(r.new_slot(t.id(), format!("{node}:{k}"), shape, dynamic));
        }
        r.push(Step::Op {
            op: op.clone(),
            inputs: slots,
            outputs: outs,
        });
    }

    fn read_variable(&mut self, var: &Variable, value: &Tensor) {
        let mut r = self.lock();
        let i = r.var_slot(var);
        let name = format!("{}:0", r.unique("ReadVariableOp"));
        let shape = Some(value.shape().iter().map(|d| Some(*d)).collect());
        let out = r.new_slot(value.id(), name, shape, true);
        r.push(Step::Read { var: i, out });
    }

    fn assign_variable(
        &mut self,
        var: &Variable,
        how: Assign,
        value: &Tensor,
        previous: &Arc<NdArray>,
    ) {
        let mut r = self.lock();
        let i = r.var_slot(var);
        let value = r.slot_for(value);
        if !r.assigned.iter().any(|(v, _)| v.same(var)) {
            r.assigned.push((var.clone(), previous.clone()));
        }
        r.push(Step::Assign { var: i, how, value });
    }
}
