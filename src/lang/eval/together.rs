//! Calls that run together and meet: `n` calls of Python code made as stackful coroutines
//! on the interpreter's own thread, each of which may stop at a meeting point ([`meet`])
//! until every call has reached one; then one merge function runs once with what every
//! call offered, and each call resumes with its own share of the answer. This is the shape
//! of TensorFlow's eager `strategy.run`, whose replica threads take turns and switch at
//! `merge_call`; here the turns are coroutines (`corosensei`), since values are `Rc` and
//! never leave the thread.
//!
//! This module owns the coroutines, their stacks, the order of turns (round-robin from the
//! first call, each running until it meets or ends, as TF's threads do) and the
//! interpreter state each call keeps as a thread of its own ([`ThreadState`]: recursion
//! depth, exceptions being handled, the stack bound). It knows nothing of what the calls
//! compute or what a meeting means: the caller's [`Turns`] switches its own per-call state
//! in and out, and words the error when some calls end while others wait.
//!
//! Ending early: when a call raises, is interrupted or panics, or the calls disagree, the
//! calls still waiting are resumed once with a `GeneratorExit` from their meeting point, so
//! their frames unwind as Python code expects (`finally` blocks run); a call that catches
//! it and meets again is dropped, and dropping a suspended coroutine unwinds its stack.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::recursion::{recursion_error, SEGMENT};
use crate::lang::values::exc::{PyErr, PyResult};
use crate::lang::values::object::{Ctx, ThreadState};
use crate::lang::values::value::Value;

/// What a call brings to a meeting: its argument, and the merge function that runs once
/// every call has met. The first call's merge function is the one that runs (TF runs the
/// first replica thread's `merge_fn`), with every call's argument in call order, in the
/// context of the caller of [`run_together`]; it answers each call.
pub struct Offer {
    pub arg: Box<dyn Any>,
    pub merge: Merge,
}

/// A merge function: every call's argument in, one answer per call out.
pub type Merge = Box<dyn FnOnce(&mut dyn Ctx, Vec<Box<dyn Any>>) -> PyResult<Vec<Box<dyn Any>>>>;

/// The caller's side of the turns: its per-call state, switched in before a call runs and
/// out after it stops, and the error for calls that disagree.
pub trait Turns {
    fn enter(&mut self, ctx: &mut dyn Ctx, call: usize);
    fn leave(&mut self, ctx: &mut dyn Ctx, call: usize);
    /// The error when some calls ended while the others wait at a meeting.
    fn unmatched(&self) -> PyErr;
}

/// The context pointer handed across a switch. Its lifetime is erased: every coroutine
/// that holds it is finished or dropped before [`run_together`] returns.
type CtxPtr = *mut (dyn Ctx + 'static);

/// What a coroutine is resumed with.
enum Resume {
    /// Run on (with the meeting's answer, after a meeting).
    Go(CtxPtr, Option<Box<dyn Any>>),
    /// Leave: the run is ending early.
    Stop,
}

type Replica = Coroutine<Resume, Offer, PyResult<Value>, DefaultStack>;

/// The running coroutine's yielder, for [`meet`]: kept in the session state, set by a
/// coroutine whenever it runs and cleared by the driver whenever control is back with it.
#[derive(Default)]
struct Current(Option<*const Yielder<Resume, Offer>>);

/// The stack a call's coroutine starts with, as large as a segment the recursion bound
/// adds, so that a call's own checks (see `recursion`) find the room they expect. It is
/// address space: pages are used as the call touches them.
const STACK: usize = SEGMENT;

/// Room kept free below a stack's recorded bound, for the frames between two checks of it.
const GUARD_SLACK: usize = 64 << 10;

/// Erases the lifetime of a context pointer (see [`CtxPtr`]).
fn erase(ctx: &mut dyn Ctx) -> CtxPtr {
    let p: *mut (dyn Ctx + '_) = ctx;
    // SAFETY: only the pointer's lifetime bound changes; it is dereferenced only while the
    // context it came from is alive (inside `run_together`).
    unsafe { std::mem::transmute::<*mut (dyn Ctx + '_), CtxPtr>(p) }
}

/// Stops the running call at a meeting point with `offer`, until every call of the
/// enclosing [`run_together`] has met; returns this call's answer. `None` when no call of
/// [`run_together`] is running (the caller then acts alone). `Err` when the run is ending
/// early (a `GeneratorExit`) or a merge failed.
///
/// The interpreter passes `ctx: &mut dyn Ctx` down the Rust stack, so the frames of a call
/// suspended here hold that reference while other calls (and the driver) use the same
/// context. That is sound in practice because the context is only reached through
/// pointers at every switch: the reference goes into `black_box` before the switch and the
/// switch itself is an opaque call, so no frame can keep a value of the context in a
/// register across it, exactly as across a call to unknown code that is handed the pointer.
pub fn meet(ctx: &mut dyn Ctx, offer: Offer) -> Option<PyResult<Box<dyn Any>>> {
    let yielder = ctx.state().get::<Current>().0?;
    let ctx = std::hint::black_box(ctx);
    // SAFETY: the pointer was set by the coroutine running now, whose yielder lives on its
    // own stack for as long as it runs.
    let back = unsafe { &*yielder }.suspend(offer);
    let ctx = std::hint::black_box(ctx);
    ctx.state().get::<Current>().0 = Some(yielder);
    Some(match back {
        Resume::Go(_, Some(answer)) => Ok(answer),
        Resume::Go(_, None) => Err(PyErr::new(
            "SystemError",
            "a call resumed from a meeting without an answer",
        )),
        Resume::Stop => Err(stopped()),
    })
}

/// Whether a call of [`run_together`] is running now (a meeting point would suspend).
pub fn in_call(ctx: &mut dyn Ctx) -> bool {
    ctx.state().get::<Current>().0.is_some()
}

/// The running call's meeting point, set aside while a generator's body runs on a stack
/// of its own: a meeting there would switch the generator's stack rather than the call's,
/// so inside a generator `meet` finds no call and the caller acts alone.
pub(super) struct Aside(Option<*const Yielder<Resume, Offer>>);

pub(super) fn set_aside(ctx: &mut dyn Ctx) -> Aside {
    Aside(ctx.state().get::<Current>().0.take())
}

pub(super) fn put_back(ctx: &mut dyn Ctx, aside: Aside) {
    ctx.state().get::<Current>().0 = aside.0;
}

fn stopped() -> PyErr {
    PyErr::new("GeneratorExit", "")
}

/// How one coroutine stopped its turn.
enum Stopped {
    Met(Offer),
    Ended(PyResult<Value>),
}

/// One call: its coroutine, what it keeps as a thread of its own, how its last turn
/// ended, and the answer it resumes with.
struct Call {
    co: Replica,
    thread: ThreadState,
    offer: Option<Offer>,
    result: Option<PyResult<Value>>,
    answer: Option<Box<dyn Any>>,
}

/// Runs `body(ctx, i)` for `i` in `0..n` as calls that can [`meet`], and returns their
/// results in order; the first error (in the order the calls raised it) ends the run.
pub fn run_together(
    ctx: &mut dyn Ctx,
    n: usize,
    body: &dyn Fn(&mut dyn Ctx, usize) -> PyResult<Value>,
    turns: &mut dyn Turns,
) -> PyResult<Vec<Value>> {
    let mut calls = Vec::with_capacity(n);
    for i in 0..n {
        let stack = DefaultStack::new(STACK)
            .map_err(|_| PyErr::new("MemoryError", "no memory for the stack of a call"))?;
        let limit = stack.limit().get() + GUARD_SLACK;
        let depth = ctx_depth(ctx);
        // SAFETY: `body` outlives every coroutine: they are all finished or dropped
        // before this function returns (the calls are dropped at its end at the latest).
        let co: Replica = unsafe {
            Coroutine::with_stack_unchecked(stack, move |y: &Yielder<Resume, Offer>, first| {
                let ctx = match first {
                    Resume::Go(p, _) => p,
                    Resume::Stop => return Err(stopped()),
                };
                // SAFETY: the driver resumes with its own live context (see `meet`).
                let ctx: &mut dyn Ctx = &mut *ctx;
                ctx.state().get::<Current>().0 = Some(y as *const _);
                body(ctx, i)
            })
        };
        calls.push(Call {
            co,
            thread: ThreadState::new(depth, limit),
            offer: None,
            result: None,
            answer: None,
        });
    }
    let outer = ctx.state().get::<Current>().0.take();
    let out = drive(ctx, &mut calls, turns);
    finish(ctx, &mut calls, turns);
    drop(calls);
    ctx.state().get::<Current>().0 = outer;
    match out {
        Ok(out) => out,
        // A panic inside a call goes on once every call is ended, so the session's own
        // guard reports it with the interpreter state as it was before the run.
        Err(panic) => resume_unwind(panic),
    }
}

/// The outcome of the rounds: the calls' results, or a call's panic to resume.
type Outcome = Result<PyResult<Vec<Value>>, Box<dyn Any + Send>>;

/// The recursion depth of the running thread, which a call starts from (its frames are
/// counted on top of the caller's, as when the calls ran one after another).
fn ctx_depth(ctx: &mut dyn Ctx) -> usize {
    let mut probe = ThreadState::default();
    ctx.switch_thread(&mut probe);
    let depth = probe.depth();
    ctx.switch_thread(&mut probe);
    depth
}

/// Gives call `i` its turn with `input`; returns how it stopped. A panic inside the call
/// comes back as `Err` with its payload.
fn turn(
    ctx: &mut dyn Ctx,
    calls: &mut [Call],
    i: usize,
    input: Resume,
    turns: &mut dyn Turns,
) -> Result<Stopped, Box<dyn Any + Send>> {
    let call = &mut calls[i];
    turns.enter(ctx, i);
    ctx.switch_thread(&mut call.thread);
    let ctx = std::hint::black_box(ctx);
    let r = catch_unwind(AssertUnwindSafe(|| call.co.resume(input)));
    let ctx = std::hint::black_box(ctx);
    ctx.state().get::<Current>().0 = None;
    ctx.switch_thread(&mut call.thread);
    turns.leave(ctx, i);
    r.map(|r| match r {
        CoroutineResult::Yield(offer) => Stopped::Met(offer),
        CoroutineResult::Return(v) => Stopped::Ended(v),
    })
}

/// The rounds: every call runs until it meets or ends; a round where all met runs the
/// merge; the run ends when all ended, or at the first error.
fn drive(ctx: &mut dyn Ctx, calls: &mut [Call], turns: &mut dyn Turns) -> Outcome {
    let n = calls.len();
    loop {
        for i in 0..n {
            if calls[i].result.is_some() {
                continue;
            }
            if let Err(e) = ctx.check_interrupt() {
                return Ok(Err(e));
            }
            let input = Resume::Go(erase(ctx), calls[i].answer.take());
            match turn(ctx, calls, i, input, turns)? {
                Stopped::Met(offer) => calls[i].offer = Some(offer),
                Stopped::Ended(Err(e)) => {
                    calls[i].result = Some(Ok(Value::None));
                    return Ok(Err(e));
                }
                Stopped::Ended(Ok(v)) => calls[i].result = Some(Ok(v)),
            }
        }
        let met = calls.iter().filter(|c| c.offer.is_some()).count();
        if met == 0 {
            return Ok(Ok(calls
                .iter_mut()
                .map(|c| c.result.take().and_then(Result::ok).unwrap_or(Value::None))
                .collect()));
        }
        if met < n {
            return Ok(Err(turns.unmatched()));
        }
        let mut offers: Vec<Offer> = calls.iter_mut().filter_map(|c| c.offer.take()).collect();
        let args: Vec<Box<dyn Any>> = offers
            .iter_mut()
            .map(|o| std::mem::replace(&mut o.arg, Box::new(())))
            .collect();
        let merge = offers.swap_remove(0).merge;
        drop(offers);
        let answers = match merge(ctx, args) {
            Ok(a) if a.len() == n => a,
            Ok(_) => {
                return Ok(Err(PyErr::new(
                    "SystemError",
                    "a merge function answered a different number of calls than met",
                )))
            }
            Err(e) => return Ok(Err(e)),
        };
        for (c, a) in calls.iter_mut().zip(answers) {
            c.answer = Some(a);
        }
    }
}

/// Ends the calls still waiting at a meeting: each is resumed once with a stop (its
/// meeting point raises `GeneratorExit`); one that meets again is dropped, which unwinds
/// its stack. Calls never started are dropped as they are.
fn finish(ctx: &mut dyn Ctx, calls: &mut [Call], turns: &mut dyn Turns) {
    for i in 0..calls.len() {
        if calls[i].result.is_some() || !calls[i].co.started() || calls[i].co.done() {
            continue;
        }
        calls[i].offer = None;
        let input = Resume::Stop;
        let again = turn(ctx, calls, i, input, turns);
        calls[i].result = Some(Ok(Value::None));
        if matches!(again, Ok(Stopped::Met(_))) {
            // The call caught the stop and met again: its stack is unwound here, with its
            // own interpreter state in place for the destructors that run.
            turns.enter(ctx, i);
            ctx.switch_thread(&mut calls[i].thread);
            let _ = catch_unwind(AssertUnwindSafe(|| calls[i].co.force_unwind()));
            ctx.state().get::<Current>().0 = None;
            ctx.switch_thread(&mut calls[i].thread);
            turns.leave(ctx, i);
        }
    }
}

/// How many bytes the running stack has left below the current frame, given `limit`, the
/// lowest address it may reach.
pub(super) fn stack_left(limit: usize) -> usize {
    let here = 0u8;
    let sp = std::hint::black_box(&here) as *const u8 as usize;
    sp.saturating_sub(limit)
}

/// Runs `f` on a new stack segment whose bound `f` is handed (for the thread state), when
/// a call's own stack runs short; `RecursionError` when no segment can be had.
pub(super) fn on_new_segment<T>(f: impl FnOnce(usize) -> PyResult<T>) -> PyResult<T> {
    let stack = DefaultStack::new(SEGMENT).map_err(|_| recursion_error(""))?;
    let limit = stack.limit().get() + GUARD_SLACK;
    corosensei::on_stack(stack, move || f(limit))
}
