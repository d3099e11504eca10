//! Graph tests: a recorded function replayed on new inputs gives what running it eagerly
//! gives; reads and assignments act on the captured variables (or on a replica's own
//! copies); random steps draw afresh; a tape around a replay differentiates it; a custom
//! op that keeps state for its gradient is refused.

use std::sync::Arc;

use super::*;
use crate::device::Device;
use crate::ops::{
    self, Activation, CustomOp, Outputs, RandomOp, SeedStream, Source, Tape, Unconnected,
};
use crate::tensor::NdArray;

fn t(shape: &[usize], v: Vec<f64>) -> Tensor {
    Tensor::new(NdArray::from_f64(shape, v).unwrap_or_else(|e| panic!("{e}")))
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.value().to_f64_vec().1
}

fn ok<T>(r: OpResult<T>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// `relu(x @ w + b) * 2`, with `w` a captured variable, `b` a captured constant.
fn body(e: &mut Eager, x: &Tensor, w: &Variable, b: &Tensor) -> OpResult<Tensor> {
    let wv = e.read(w);
    let h = ops::matmul(e, x, &wv, false, false)?;
    let h = ops::add(e, &h, b)?;
    let h = ops::activate(e, Activation::Relu, &h)?;
    ops::mul(e, &h, &Tensor::scalar(2.0, h.dtype()))
}

fn record(
    e: &mut Eager,
    inputs: &[Tensor],
    f: impl FnOnce(&mut Eager, &[Tensor]) -> OpResult<Vec<Tensor>>,
) -> (Graph, Recorder, Vec<Tensor>) {
    let rec = Recorder::new();
    let fresh: Vec<Tensor> = inputs
        .iter()
        .map(|t| Tensor::from_arc(t.array().clone()))
        .collect();
    for (i, p) in fresh.iter().enumerate() {
        rec.placeholder(p, &format!("x{i}"), None);
    }
    let id = e.attach(rec.observer());
    let outs = f(e, &fresh);
    e.detach(id);
    let outs = ok(outs);
    (ok(rec.finish(&outs)), rec, outs)
}

#[test]
fn a_replay_computes_what_the_function_computes() {
    let mut e = Eager::default();
    let w = Variable::new(
        t(&[2, 2], vec![1.0, -1.0, 0.5, 2.0]).value().clone(),
        "w",
        true,
    );
    let b = t(&[2], vec![0.1, -0.2]);
    let x0 = t(&[1, 2], vec![1.0, 2.0]);
    let (g, rec, outs) = record(&mut e, &[x0], |e, xs| Ok(vec![body(e, &xs[0], &w, &b)?]));
    assert_eq!(rec.name(outs[0].id()).as_deref(), Some("mul:0"));
    let x1 = t(&[1, 2], vec![-3.0, 0.5]);
    let want = ok(body(&mut e, &x1, &w, &b));
    let got = ok(g.run(&mut e, &[x1], &mut Silent));
    assert_eq!(vals(&got[0]), vals(&want));
    assert_eq!(g.variables().len(), 1);
    // A replay with the shapes it was not traced for is refused.
    let err = g.run(&mut e, &[t(&[2, 2], vec![0.0; 4])], &mut Silent);
    assert!(err.is_err());
}

#[test]
fn assignments_replay_and_can_be_undone() {
    let mut e = Eager::default();
    let v = Variable::new(t(&[], vec![1.0]).value().clone(), "v", true);
    let (g, rec, _) = record(&mut e, &[t(&[], vec![2.0])], |e, xs| {
        e.assign(&v, Assign::Add, &xs[0])?;
        Ok(vec![e.read(&v)])
    });
    assert_eq!(vals(&Tensor::from_arc(v.snapshot())), vec![3.0]);
    let undo = rec.assigned();
    assert_eq!(undo.len(), 1);
    assert_eq!(undo[0].1.to_f64_vec().1, vec![1.0]);
    let out = ok(g.run(&mut e, &[t(&[], vec![5.0])], &mut Silent));
    assert_eq!(vals(&out[0]), vec![8.0]);
    // A replica's own copy stands for the captured variable.
    let mine = Variable::new(t(&[], vec![100.0]).value().clone(), "v", true);
    let mut other = Eager::default();
    let out = ok(g.run_with(
        &mut other,
        &[t(&[], vec![1.0])],
        std::slice::from_ref(&mine),
        &mut Silent,
    ));
    assert_eq!(vals(&out[0]), vec![101.0]);
    assert_eq!(v.snapshot().to_f64_vec().1, vec![8.0]);
}

#[test]
fn random_steps_draw_fresh_values_on_every_replay() {
    let mut e = Eager::default();
    let seeds = SeedStream::new(7);
    let (g, _, _) = record(&mut e, &[t(&[8], vec![1.0; 8])], |e, xs| {
        let noise = ops::sample(
            e,
            RandomOp::Uniform {
                shape: vec![8],
                dtype: crate::tensor::DType::F64,
                minval: 0.0,
                maxval: 1.0,
            },
            &seeds,
        )?;
        Ok(vec![ops::add(e, &xs[0], &noise)?])
    });
    let x = t(&[8], vec![1.0; 8]);
    let a = ok(g.run(&mut e, std::slice::from_ref(&x), &mut Silent));
    let b = ok(g.run(&mut e, &[x], &mut Silent));
    assert_ne!(vals(&a[0]), vals(&b[0]));
}

#[test]
fn a_tape_around_a_replay_differentiates_it() {
    let mut e = Eager::default();
    let w = Variable::new(t(&[2, 1], vec![0.5, -1.5]).value().clone(), "w", true);
    let b = t(&[1], vec![3.0]);
    let (g, _, _) = record(&mut e, &[t(&[1, 2], vec![1.0, 1.0])], |e, xs| {
        let y = body(e, &xs[0], &w, &b)?;
        Ok(vec![ops::reduce_sum(e, &y, None, false)?])
    });
    let x = t(&[1, 2], vec![2.0, 0.5]);
    let grads = |e: &mut Eager, replay: bool| {
        let tape = Tape::new(false, true).shared();
        e.push_tape(tape.clone());
        ops::lock(&tape).watch(&x);
        let y = if replay {
            ok(g.run(e, std::slice::from_ref(&x), &mut Silent)).remove(0)
        } else {
            let y = ok(body(e, &x, &w, &b));
            ok(ops::reduce_sum(e, &y, None, false))
        };
        e.pop_tape(&tape);
        let srcs = [Source::Tensor(x.clone()), Source::Variable(w.clone())];
        ok(e.gradient(&tape, &[y], &srcs, None, Unconnected::None))
    };
    let want = grads(&mut e, false);
    let got = grads(&mut e, true);
    for (a, b) in want.iter().zip(&got) {
        let (a, b) = (a.as_ref().map(vals), b.as_ref().map(vals));
        assert!(a.is_some());
        assert_eq!(a, b);
    }
}

#[test]
fn prints_are_steps_and_unused_steps_are_pruned() {
    struct Log(Vec<String>);
    impl Printer for Log {
        fn print(&mut self, spec: &PrintSpec, inputs: &[Tensor]) {
            let arrays: Vec<&NdArray> = inputs.iter().map(Tensor::value).collect();
            self.0.push(spec.render(&arrays));
        }
    }
    let mut e = Eager::default();
    let rec = Recorder::new();
    let x = t(&[2], vec![1.0, 2.0]);
    rec.placeholder(&x, "x", None);
    let id = e.attach(rec.observer());
    let unused = ok(ops::neg(&mut e, &x));
    let y = ok(ops::add(&mut e, &x, &x));
    e.detach(id);
    let spec = PrintSpec {
        parts: vec![
            PrintPart::Text("y:".into()),
            PrintPart::Text(" ".into()),
            PrintPart::Tensor(0),
        ],
        end: "\n".into(),
        stream: PrintStream::Stderr,
        summarize: 3,
    };
    rec.print(spec, std::slice::from_ref(&y));
    let g = ok(rec.finish(std::slice::from_ref(&x)));
    assert!(rec.is_dynamic(unused.id()));
    assert_eq!(g.steps().len(), 2, "the unused Neg is pruned");
    let mut log = Log(Vec::new());
    ok(g.run(&mut e, &[t(&[2], vec![3.0, 4.5])], &mut log));
    assert_eq!(log.0, vec!["y: [6 9]\n".to_string()]);
}

#[derive(Debug)]
struct Stateful;

impl CustomOp for Stateful {
    fn name(&self) -> &str {
        "Stateful"
    }
    fn forward(&self, _dev: &dyn Device, inputs: &[&NdArray]) -> OpResult<Outputs> {
        let x = inputs
            .first()
            .ok_or_else(|| OpError::internal("no input"))?;
        Ok(Outputs {
            values: vec![(*x).clone()],
            saved: Some(Arc::new(1u8)),
        })
    }
}

#[test]
fn a_custom_op_that_keeps_state_is_refused() {
    let mut e = Eager::default();
    let rec = Recorder::new();
    let x = t(&[1], vec![1.0]);
    rec.placeholder(&x, "x", None);
    let id = e.attach(rec.observer());
    let y = ok(e.execute1(Op::Custom(Arc::new(Stateful)), std::slice::from_ref(&x)));
    e.detach(id);
    let err = rec
        .finish(&[y])
        .err()
        .map(|e| e.message)
        .unwrap_or_default();
    assert!(err.contains("extra outputs"), "{err}");
}

#[test]
fn graphs_cross_threads() {
    fn sync<T: Send + Sync>() {}
    sync::<Graph>();
    sync::<Recorder>();
    // A replica thread replays a graph traced on the primary copies with its own copies
    // of the variables, on its own context; the primary copies stay as they were.
    let mut e = Eager::default();
    let w = Variable::new(t(&[], vec![2.0]).value().clone(), "w", true);
    let (g, _, _) = record(&mut e, &[t(&[], vec![1.0])], |e, xs| {
        let wv = e.read(&w);
        let y = ops::mul(e, &xs[0], &wv)?;
        e.assign(&w, Assign::Add, &y)?;
        Ok(vec![y])
    });
    let after_trace = w.snapshot().to_f64_vec().1;
    let graph = Arc::new(g);
    let replicas: Vec<std::thread::JoinHandle<(Vec<f64>, Vec<f64>)>> = [10.0, 20.0]
        .into_iter()
        .map(|start| {
            let graph = graph.clone();
            std::thread::spawn(move || {
                let mut own = Eager::default();
                let mine = Variable::new(t(&[], vec![start]).value().clone(), "w", true);
                let vars: Vec<Variable> = vec![mine.clone()];
                let out = ok(graph.run_with(&mut own, &[t(&[], vec![3.0])], &vars, &mut Silent));
                (vals(&out[0]), mine.snapshot().to_f64_vec().1)
            })
        })
        .collect();
    let got: Vec<(Vec<f64>, Vec<f64>)> = replicas
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|_| panic!("a replica thread panicked"))
        })
        .collect();
    assert_eq!(got[0], (vec![30.0], vec![40.0]));
    assert_eq!(got[1], (vec![60.0], vec![80.0]));
    assert_eq!(w.snapshot().to_f64_vec().1, after_trace);
}

/// Workers that count the stages they run (on scoped threads).
#[derive(Default)]
struct Counted(std::sync::atomic::AtomicUsize);

impl Workers for Counted {
    fn each(&self, n: usize, job: &(dyn Fn(usize) + Sync)) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        ScopedThreads.each(n, job)
    }
}

/// Two replicas as a traced `strategy.run` records them: replica `r` computes
/// `relu(x_r @ w_r + b) * 2` on its own copy `w_r` (with `cross` deciding whether replica
/// 1 also reads replica 0's result); the cross-replica context sums the results and adds
/// the sum to both copies.
fn replicated(
    e: &mut Eager,
    rec: &Recorder,
    xs: &[Tensor],
    copies: &[Variable],
    b: &Tensor,
    cross: bool,
) -> OpResult<Vec<Tensor>> {
    let mut parts = Vec::new();
    for (r, (x, w)) in xs.iter().zip(copies).enumerate() {
        rec.set_replica(Some(r));
        let mut y = body(e, x, w, b)?;
        if cross && r == 1 {
            y = ops::add(e, &y, &parts[0])?;
        }
        parts.push(ops::reduce_sum(e, &y, None, false)?);
    }
    rec.set_replica(None);
    let total = ops::add_n(e, &parts)?;
    for w in copies {
        e.assign(w, Assign::Add, &total)?;
    }
    Ok(vec![total])
}

fn replica_setup() -> (Vec<Variable>, Tensor, Vec<Tensor>) {
    let w = t(&[2, 2], vec![1.0, -1.0, 0.5, 2.0]);
    let copies = (0..2)
        .map(|r| Variable::new(w.value().clone(), &format!("w/replica_{r}"), true))
        .collect();
    let b = t(&[2], vec![0.1, -0.2]);
    let xs = vec![
        t(&[3, 2], vec![1.0, 2.0, -1.0, 0.5, 0.25, 3.0]),
        t(&[2, 2], vec![-3.0, 0.5, 2.0, 1.0]),
    ];
    (copies, b, xs)
}

#[test]
fn replicas_of_a_replay_run_at_once_and_compute_what_they_compute_in_turn() {
    for cross in [false, true] {
        // The same trace replayed serially and replicated, each on its own variables.
        let mut e = Eager::default();
        let (serial_vars, b, xs) = replica_setup();
        let rec = Recorder::new();
        let fresh: Vec<Tensor> = xs
            .iter()
            .map(|x| Tensor::from_arc(x.array().clone()))
            .collect();
        for (i, p) in fresh.iter().enumerate() {
            rec.placeholder(p, &format!("x{i}"), None);
        }
        let id = e.attach(rec.observer());
        let traced = replicated(&mut e, &rec, &fresh, &serial_vars, &b, cross);
        e.detach(id);
        let g = ok(rec.finish(&ok(traced)));
        // A replica that reads another's value cannot run beside it.
        assert_eq!(g.has_replica_stages(), !cross, "cross {cross}");
        let (parallel_vars, _, _) = replica_setup();
        for v in serial_vars.iter().chain(&parallel_vars) {
            let w = t(&[2, 2], vec![1.0, -1.0, 0.5, 2.0]);
            ok(e.assign(v, Assign::Set, &w));
        }
        let workers = Counted::default();
        for step in 0..3 {
            let x2: Vec<Tensor> = xs
                .iter()
                .map(|x| {
                    ok(ops::mul(
                        &mut e,
                        x,
                        &Tensor::scalar(step as f64 + 1.0, x.dtype()),
                    ))
                })
                .collect();
            let one = ok(g.run_with(&mut e, &x2, &serial_vars, &mut Silent));
            let many = ok(g.run_replicated(&mut e, &x2, &parallel_vars, &mut Silent, &workers));
            assert_eq!(vals(&one[0]), vals(&many[0]));
            for (a, b) in serial_vars.iter().zip(&parallel_vars) {
                assert_eq!(vals(&e.read(a)), vals(&e.read(b)));
            }
        }
        let stages = workers.0.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(stages, if cross { 0 } else { 3 });
        // Under a tape the replay stays serial, so the tape sees every op.
        let tape = Tape::new(false, true).shared();
        e.push_tape(tape.clone());
        let x2 = xs.clone();
        ok(g.run_replicated(&mut e, &x2, &parallel_vars, &mut Silent, &workers));
        e.pop_tape(&tape);
        assert_eq!(workers.0.load(std::sync::atomic::Ordering::SeqCst), stages);
    }
}
