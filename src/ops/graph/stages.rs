//! The replica stages of a graph: how a replay runs the parts that `strategy.run` traced for
//! different replicas at the same time. A trace of `strategy.run` calls the replica
//! function once per replica, one after another, and the recorder tags each step with the
//! replica that ran it (steps of the cross-replica context, such as the all-reduce and the
//! optimizer update it completes, have no tag). A maximal run of tagged steps is one
//! parallel stage: each replica's steps go to that replica's worker, which runs them on
//! its own execution context while the others run theirs. A cross-replica `AddN` that sums
//! one value of every replica, in replica order (the all-reduce of `apply_gradients`, the
//! SUM of `strategy.reduce`), becomes the stage's collective: every replica hands its
//! values to the CPU ring all-reduce (the one `fit` uses), all of them laid end to end as
//! one buffer, so the stage ends in a real collective between the replica threads. A run
//! whose replicas depend on each other (one reads a value or a variable another writes,
//! or prints) stays serial, so a stage never changes what a replay computes, only when and
//! where; a collective the ring cannot take (not float32) is summed by its `AddN` after the
//! stage.
//!
//! This file plans and runs stages; it knows nothing about strategies or thread pools
//! beyond the [`Workers`] seam the caller passes.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Mutex;

use super::{run_steps, take, Silent, Slot, Step, Values};
use crate::device::cpu::RingAllReduce;
use crate::device::AllReduce as _;
use crate::ops::eager::Eager;
use crate::ops::elementwise::Pointwise;
use crate::ops::error::{OpError, OpResult};
use crate::ops::op::Op;
use crate::ops::tensor::Tensor;
use crate::ops::variable::Variable;
use crate::tensor::{DType, NdArray};

/// Runs one job per replica at the same time (a strategy's replica threads, or scoped
/// threads), returning when every job has finished.
pub trait Workers: Sync {
    fn each(&self, n: usize, job: &(dyn Fn(usize) + Sync));
}

/// Workers made for one stage with `std::thread::scope` (a replay with no strategy's
/// threads at hand).
pub struct ScopedThreads;

impl Workers for ScopedThreads {
    fn each(&self, n: usize, job: &(dyn Fn(usize) + Sync)) {
        std::thread::scope(|s| {
            for r in 1..n {
                s.spawn(move || job(r));
            }
            if n > 0 {
                job(0);
            }
        });
    }
}

/// A cross-replica `AddN` of one value per replica, run as the ring all-reduce.
#[derive(Debug, Clone)]
pub struct Collective {
    /// The `AddN` step.
    pub step: usize,
    /// Replica `r`'s value.
    pub parts: Vec<Slot>,
    pub out: Slot,
}

/// A part of a graph's steps, in replay order.
#[derive(Debug, Clone)]
pub enum Stage {
    /// These steps, one after another on the caller's context.
    Serial(Vec<usize>),
    /// The steps each replica runs, all replicas at once, then the collectives; `span`
    /// holds every step of the stage but the collectives.
    Parallel {
        replicas: Vec<Vec<usize>>,
        span: Range<usize>,
        collectives: Vec<Collective>,
    },
}

/// Splits steps tagged by replica into stages (see the module docs).
pub fn plan(steps: &[Step], tags: &[Option<usize>]) -> Vec<Stage> {
    let tag = |i: usize| tags.get(i).copied().flatten();
    let mut stages = Vec::new();
    let mut pulled: HashSet<usize> = HashSet::new();
    let mut i = 0;
    while i < steps.len() {
        let start = i;
        if tag(i).is_none() {
            while i < steps.len() && tag(i).is_none() {
                i += 1;
            }
            let serial: Vec<usize> = (start..i).filter(|s| !pulled.contains(s)).collect();
            push_serial(&mut stages, serial);
            continue;
        }
        while i < steps.len() && tag(i).is_some() {
            i += 1;
        }
        match parallel(steps, tags, start..i) {
            Some((replicas, writer)) => {
                let mut end = i;
                while end < steps.len() && tag(end).is_none() {
                    end += 1;
                }
                let collectives = collectives(steps, i..end, &writer, replicas.len());
                pulled.extend(collectives.iter().map(|c| c.step));
                stages.push(Stage::Parallel {
                    replicas,
                    span: start..i,
                    collectives,
                });
            }
            None => push_serial(&mut stages, (start..i).collect()),
        }
    }
    stages
}

fn push_serial(stages: &mut Vec<Stage>, steps: Vec<usize>) {
    if steps.is_empty() {
        return;
    }
    if let Some(Stage::Serial(last)) = stages.last_mut() {
        last.extend(steps);
        return;
    }
    stages.push(Stage::Serial(steps));
}

/// The step indices of each replica of a stage.
type Groups = Vec<Vec<usize>>;

/// The steps of `span` grouped by replica, with the replica that wrote each slot, when the
/// replicas' groups are independent.
fn parallel(
    steps: &[Step],
    tags: &[Option<usize>],
    span: Range<usize>,
) -> Option<(Groups, HashMap<Slot, usize>)> {
    let n = span.clone().filter_map(|i| tags[i]).max()? + 1;
    if n < 2 {
        return None;
    }
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut writer: HashMap<Slot, usize> = HashMap::new();
    let mut assigned: Vec<HashSet<usize>> = vec![HashSet::new(); n];
    let mut touched: Vec<HashSet<usize>> = vec![HashSet::new(); n];
    for i in span {
        let r = tags[i]?;
        groups[r].push(i);
        match &steps[i] {
            Step::Op {
                inputs, outputs, ..
            } => {
                if inputs
                    .iter()
                    .any(|s| writer.get(s).is_some_and(|w| *w != r))
                {
                    return None;
                }
                for s in outputs {
                    writer.insert(*s, r);
                }
            }
            Step::Read { var, out } => {
                touched[r].insert(*var);
                writer.insert(*out, r);
            }
            Step::Assign { var, value, .. } => {
                if writer.get(value).is_some_and(|w| *w != r) {
                    return None;
                }
                touched[r].insert(*var);
                assigned[r].insert(*var);
            }
            // A print's order across replicas is the trace's; keep it.
            Step::Print { .. } => return None,
        }
    }
    for (a, mine) in assigned.iter().enumerate() {
        for (b, theirs) in touched.iter().enumerate() {
            if a != b && mine.iter().any(|v| theirs.contains(v)) {
                return None;
            }
        }
    }
    Some((groups, writer))
}

/// The `AddN` steps among the cross-replica steps `after` that sum one value written by
/// each replica of the stage, in replica order.
fn collectives(
    steps: &[Step],
    after: Range<usize>,
    writer: &HashMap<Slot, usize>,
    n: usize,
) -> Vec<Collective> {
    let mut out = Vec::new();
    for i in after {
        if let Step::Op {
            op: Op::Pointwise(Pointwise::AddN),
            inputs,
            outputs,
        } = &steps[i]
        {
            let in_order = inputs.len() == n
                && inputs
                    .iter()
                    .enumerate()
                    .all(|(r, s)| writer.get(s) == Some(&r));
            if let (true, [o]) = (in_order, outputs.as_slice()) {
                out.push(Collective {
                    step: i,
                    parts: inputs.clone(),
                    out: *o,
                });
            }
        }
    }
    out
}

/// What one replica of a parallel stage produced: the slots it set.
type Produced = OpResult<Vec<(Slot, Tensor)>>;

/// Runs one parallel stage: every replica's steps on its own context, reading `vals` as
/// the stage found it, then the collectives on the ring; the values they made are put in
/// `vals`. Returns the collectives the ring could not take, for the caller to run.
pub(super) fn run_parallel(
    steps: &[Step],
    frees: &[Vec<Slot>],
    replicas: &[Vec<usize>],
    collectives: &[Collective],
    vals: &mut [Option<Tensor>],
    variables: &[Variable],
    workers: &dyn Workers,
) -> OpResult<Vec<usize>> {
    let n = replicas.len();
    let results: Vec<Mutex<Option<Produced>>> = replicas.iter().map(|_| Mutex::new(None)).collect();
    let ring = RingAllReduce::new(n);
    // The same on every replica (the same steps on the same dtypes), so every replica
    // takes the same decision about entering the ring.
    let on_ring = Mutex::new(None::<bool>);
    {
        let shared: &[Option<Tensor>] = vals;
        let job = |r: usize| {
            let Some(group) = replicas.get(r) else {
                return;
            };
            let out = run_group(steps, frees, group, shared, variables).and_then(|local| {
                reduce(r, &local, collectives, &ring, &on_ring).map(|sums| {
                    let mut made = local.made();
                    made.extend(sums);
                    made
                })
            });
            if out.is_err() {
                // The others must not wait for this replica in the ring.
                ring.abort();
            }
            if let Some(slot) = results.get(r) {
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(out);
            }
        };
        workers.each(n, &job);
    }
    for cell in results {
        let made = cell
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(|| Err(OpError::internal("a replica of a graph stage did not run")))?;
        for (s, t) in made {
            vals[s] = Some(t);
        }
    }
    Ok(collectives
        .iter()
        .filter(|c| vals.get(c.out).is_none_or(Option::is_none))
        .map(|c| c.step)
        .collect())
}

/// One replica's values of a stage, over the table the stage shares.
struct Local<'a> {
    shared: &'a [Option<Tensor>],
    vals: Vec<Option<Tensor>>,
    made: Vec<Slot>,
}

impl Values for Local<'_> {
    fn get(&self, s: Slot) -> OpResult<Tensor> {
        match self.vals.get(s).and_then(Clone::clone) {
            Some(t) => Ok(t),
            None => take(self.shared, s),
        }
    }
    fn set(&mut self, s: Slot, t: Tensor) {
        if let Some(v) = self.vals.get_mut(s) {
            *v = Some(t);
            self.made.push(s);
        }
    }
    /// Values the replica makes and frees never leave it; the shared table stays as the
    /// stage found it.
    fn free(&mut self, s: Slot) {
        if let Some(v) = self.vals.get_mut(s) {
            *v = None;
        }
    }
}

impl Local<'_> {
    /// The values the replica made and did not free, for the steps after the stage.
    fn made(&self) -> Vec<(Slot, Tensor)> {
        self.made
            .iter()
            .filter_map(|s| self.vals.get(*s).cloned().flatten().map(|t| (*s, t)))
            .collect()
    }
}

/// One replica's steps of a stage, on a context of its own (a stage holds no prints).
fn run_group<'a>(
    steps: &[Step],
    frees: &[Vec<Slot>],
    group: &[usize],
    shared: &'a [Option<Tensor>],
    variables: &[Variable],
) -> OpResult<Local<'a>> {
    let mut e = Eager::default();
    let mut local = Local {
        shared,
        vals: vec![None; shared.len()],
        made: Vec::new(),
    };
    let mut args: Vec<Tensor> = Vec::new();
    run_steps(
        steps,
        frees,
        group,
        &mut e,
        &mut local,
        &mut args,
        variables,
        &mut Silent,
    )?;
    Ok(local)
}

/// Replica `r`'s part of the stage's collectives: its values laid end to end, summed
/// across the replicas by the ring; replica 0 returns the sums (every replica holds the
/// same bits, one copy is enough). Nothing when the values are not all float32.
fn reduce(
    r: usize,
    local: &Local,
    collectives: &[Collective],
    ring: &RingAllReduce,
    on_ring: &Mutex<Option<bool>>,
) -> OpResult<Vec<(Slot, Tensor)>> {
    if collectives.is_empty() {
        return Ok(Vec::new());
    }
    let mut parts = Vec::with_capacity(collectives.len());
    for c in collectives {
        let slot = c.parts.get(r).copied().unwrap_or(usize::MAX);
        parts.push(local.get(slot)?);
    }
    let fits = parts.iter().all(|t| t.dtype() == DType::F32);
    {
        let mut decided = on_ring.lock().unwrap_or_else(|p| p.into_inner());
        if *decided.get_or_insert(fits) != fits {
            return Err(OpError::internal(
                "the replicas of a graph stage disagree about their collective",
            ));
        }
    }
    if !fits {
        return Ok(Vec::new());
    }
    let mut flat: Vec<f32> = Vec::with_capacity(parts.iter().map(|t| t.value().size()).sum());
    for t in &parts {
        match t.value().as_f32_slice() {
            Some(v) => flat.extend_from_slice(v),
            None => flat.extend(t.value().to_f32_vec().1),
        }
    }
    if ring.all_reduce_host(r, &mut flat).is_err() {
        // Values of different sizes (or a replica that failed, whose error the stage
        // reports): the stage's `AddN` runs after it, as in the trace.
        return Ok(Vec::new());
    }
    if r != 0 {
        return Ok(Vec::new());
    }
    let mut sums = Vec::with_capacity(collectives.len());
    let mut at = 0;
    for (c, t) in collectives.iter().zip(&parts) {
        let len = t.value().size();
        let values = flat
            .get(at..at + len)
            .map(<[f32]>::to_vec)
            .unwrap_or_default();
        at += len;
        let a = NdArray::from_f32(t.shape(), values).map_err(OpError::internal)?;
        sums.push((c.out, Tensor::new(a)));
    }
    Ok(sums)
}
