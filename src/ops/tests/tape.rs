//! What a tape records and answers, as TensorFlow's GradientTape does: watching, variables
//! watched on access, unconnected sources, the one-call rule of a non-persistent tape,
//! stop-recording, output gradients, jacobians, custom ops, observers, and TF's errors.

use std::sync::{Arc, Mutex};

use super::{ints, uniform, values};
use crate::device::Device;
use crate::ops::*;
use crate::tensor::{DType, NdArray};

fn scalar(v: f64) -> Tensor {
    Tensor::scalar(v, DType::F32)
}

fn grad(e: &mut Eager, tape: &TapeRef, y: &Tensor, xs: &[Source]) -> OpResult<Vec<Option<Tensor>>> {
    e.gradient(tape, std::slice::from_ref(y), xs, None, Unconnected::None)
}

fn started(e: &mut Eager, persistent: bool) -> TapeRef {
    let t = Tape::new(persistent, true).shared();
    e.push_tape(t.clone());
    t
}

#[test]
fn unconnected_sources_are_none_or_zero_and_integers_are_not_watched() {
    let mut e = Eager::default();
    let (a, b) = (scalar(1.0), scalar(2.0));
    let t = started(&mut e, true);
    lock(&t).watch(&a);
    lock(&t).watch(&b);
    let y = scale(&mut e, &a, 3.0).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let g = grad(
        &mut e,
        &t,
        &y,
        &[Source::Tensor(a.clone()), Source::Tensor(b.clone())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g[0].as_ref().map(values), Some(vec![3.0]));
    assert!(g[1].is_none());
    let g = e
        .gradient(&t, &[y], &[Source::Tensor(b)], None, Unconnected::Zero)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g[0].as_ref().map(values), Some(vec![0.0]));
    let i = Tensor::new(ints(&[2], vec![1, 2]));
    assert!(!lock(&t).watch(&i), "an int32 tensor is not watched");
}

#[test]
fn a_non_persistent_tape_answers_once() {
    let mut e = Eager::default();
    let x = scalar(3.0);
    let t = started(&mut e, false);
    lock(&t).watch(&x);
    let y = mul(&mut e, &x, &x).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let g = grad(&mut e, &t, &y, &[Source::Tensor(x.clone())]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g[0].as_ref().map(values), Some(vec![6.0]));
    let err = grad(&mut e, &t, &y, &[Source::Tensor(x)]).err();
    assert_eq!(
        err.map(|e| (e.class.py_name(), e.message)),
        Some((
            "RuntimeError",
            "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)".to_string()
        ))
    );
}

#[test]
fn a_persistent_tape_inside_its_context_records_its_own_gradient() {
    let mut e = Eager::default();
    let x = scalar(2.0);
    let t = started(&mut e, true);
    lock(&t).watch(&x);
    let x2 = mul(&mut e, &x, &x).unwrap_or_else(|e| panic!("{e}"));
    let y = mul(&mut e, &x2, &x).unwrap_or_else(|e| panic!("{e}"));
    let g = grad(&mut e, &t, &y, &[Source::Tensor(x.clone())]).unwrap_or_else(|e| panic!("{e}"));
    let g = g[0]
        .clone()
        .unwrap_or_else(|| panic!("no first derivative"));
    let h = grad(&mut e, &t, &g, &[Source::Tensor(x)]).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    assert_eq!(values(&g), vec![12.0]);
    assert_eq!(h[0].as_ref().map(values), Some(vec![12.0]));
}

#[test]
fn trainable_variables_are_watched_when_read() {
    let mut e = Eager::default();
    let v = Variable::new(
        NdArray::from_f64(&[], vec![2.0]).unwrap_or_else(|e| panic!("{e}")),
        "v",
        true,
    );
    let w = Variable::new(
        NdArray::from_f64(&[], vec![3.0]).unwrap_or_else(|e| panic!("{e}")),
        "w",
        false,
    );
    let t = started(&mut e, true);
    let (rv, rw) = (e.read(&v), e.read(&w));
    let y = mul(&mut e, &rv, &rw).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let watched: Vec<String> = lock(&t)
        .watched_variables()
        .iter()
        .map(|v| v.name().to_string())
        .collect();
    assert_eq!(watched, vec!["v"]);
    let g = grad(
        &mut e,
        &t,
        &y,
        &[Source::Variable(v.clone()), Source::Variable(w.clone())],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g[0].as_ref().map(values), Some(vec![3.0]));
    assert!(
        g[1].is_none(),
        "a non-trainable variable is not watched on access"
    );
    // Without watching accessed variables, only an explicit watch counts.
    let t = Tape::new(true, false).shared();
    e.push_tape(t.clone());
    lock(&t).watch_variable(&w);
    let (rv, rw) = (e.read(&v), e.read(&w));
    let y = mul(&mut e, &rv, &rw).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let g = grad(&mut e, &t, &y, &[Source::Variable(v), Source::Variable(w)])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(g[0].is_none());
    assert_eq!(g[1].as_ref().map(values), Some(vec![2.0]));
}

#[test]
fn assignments_are_not_differentiable_but_reads_after_them_are() {
    let mut e = Eager::default();
    let v = Variable::new(
        NdArray::from_f64(&[2], vec![1.0, 2.0]).unwrap_or_else(|e| panic!("{e}")),
        "v",
        true,
    );
    let t = started(&mut e, false);
    let before = e.read(&v);
    let delta =
        Tensor::new(NdArray::from_f64(&[2], vec![10.0, 10.0]).unwrap_or_else(|e| panic!("{e}")));
    e.assign(&v, Assign::Add, &delta)
        .unwrap_or_else(|e| panic!("{e}"));
    let after = e.read(&v);
    let p = mul(&mut e, &before, &after).unwrap_or_else(|e| panic!("{e}"));
    let y = reduce_sum(&mut e, &p, None, false).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    assert_eq!(
        values(&before),
        vec![1.0, 2.0],
        "a read keeps its value after an assignment"
    );
    let g = grad(&mut e, &t, &y, &[Source::Variable(v.clone())]).unwrap_or_else(|e| panic!("{e}"));
    // d/dv (v_before * v_after) with both reads of v: v_after + v_before.
    assert_eq!(g[0].as_ref().map(values), Some(vec![12.0, 14.0]));
    let bad = Tensor::new(NdArray::from_f64(&[3], vec![0.0; 3]).unwrap_or_else(|e| panic!("{e}")));
    let err = e.assign(&v, Assign::Set, &bad).err();
    assert_eq!(err.map(|e| e.class), Some(ErrorClass::Value));
}

#[test]
fn stop_recording_and_stop_gradient() {
    let mut e = Eager::default();
    let x = scalar(3.0);
    let t = started(&mut e, true);
    lock(&t).watch(&x);
    e.pause();
    let hidden = mul(&mut e, &x, &x).unwrap_or_else(|e| panic!("{e}"));
    e.resume();
    let s = stop_gradient(&mut e, &x).unwrap_or_else(|e| panic!("{e}"));
    let y = mul(&mut e, &s, &x).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let g =
        grad(&mut e, &t, &hidden, &[Source::Tensor(x.clone())]).unwrap_or_else(|e| panic!("{e}"));
    assert!(g[0].is_none(), "nothing was recorded while stopped");
    let g = grad(&mut e, &t, &y, &[Source::Tensor(x.clone())]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g[0].as_ref().map(values), Some(vec![3.0]));
    // A target that is its own source has gradient one, watched or not.
    let g = grad(&mut e, &t, &x, &[Source::Tensor(x.clone())]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g[0].as_ref().map(values), Some(vec![1.0]));
}

#[test]
fn casts_pass_gradients_between_floats_only() {
    let mut e = Eager::default();
    let x = Tensor::new(NdArray::from_f64(&[2], vec![1.5, -2.5]).unwrap_or_else(|e| panic!("{e}")));
    let t = started(&mut e, true);
    lock(&t).watch(&x);
    let f = cast(&mut e, &x, DType::F32).unwrap_or_else(|e| panic!("{e}"));
    let y = scale(&mut e, &f, 3.0).unwrap_or_else(|e| panic!("{e}"));
    let i = cast(&mut e, &x, DType::I32).unwrap_or_else(|e| panic!("{e}"));
    let back = cast(&mut e, &i, DType::F64).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let g = grad(&mut e, &t, &y, &[Source::Tensor(x.clone())]).unwrap_or_else(|e| panic!("{e}"));
    let g = g[0]
        .clone()
        .unwrap_or_else(|| panic!("no gradient through a float cast"));
    assert_eq!((g.dtype(), values(&g)), (DType::F64, vec![3.0, 3.0]));
    let g = grad(&mut e, &t, &back, &[Source::Tensor(x)]).unwrap_or_else(|e| panic!("{e}"));
    assert!(g[0].is_none(), "no gradient through an integer cast");
}

#[test]
fn ops_on_unwatched_tensors_are_not_recorded() {
    let mut e = Eager::default();
    let (a, b) = (scalar(1.0), scalar(2.0));
    let nodes = super::recorded(&mut e, std::slice::from_ref(&a), &|e, x| {
        let c = mul(e, &b, &b)?; // constants only: not recorded
        let d = add(e, &x[0], &c)?;
        Ok(vec![d])
    });
    let names: Vec<&str> = nodes.iter().map(|n| n.op.name()).collect();
    assert_eq!(names, vec!["AddV2"]);
}

#[test]
fn output_gradients_and_several_targets() {
    let mut e = Eager::default();
    let x =
        Tensor::new(NdArray::from_f64(&[3], vec![1.0, 2.0, 3.0]).unwrap_or_else(|e| panic!("{e}")));
    let t = started(&mut e, true);
    lock(&t).watch(&x);
    let y = mul(&mut e, &x, &x).unwrap_or_else(|e| panic!("{e}"));
    let z = scale(&mut e, &x, 2.0).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let og =
        Tensor::new(NdArray::from_f64(&[3], vec![1.0, 0.0, 2.0]).unwrap_or_else(|e| panic!("{e}")));
    let g = e
        .gradient(
            &t,
            std::slice::from_ref(&y),
            &[Source::Tensor(x.clone())],
            Some(&[og]),
            Unconnected::None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g[0].as_ref().map(values), Some(vec![2.0, 0.0, 12.0]));
    let g = e
        .gradient(&t, &[y, z], &[Source::Tensor(x)], None, Unconnected::None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g[0].as_ref().map(values), Some(vec![4.0, 6.0, 8.0]));
}

#[test]
fn jacobians() {
    let mut e = Eager::default();
    let x = Tensor::new(uniform(&[3], 1, -1.0, 1.0));
    let w = Tensor::new(uniform(&[3, 2], 2, -1.0, 1.0));
    let t = started(&mut e, false);
    lock(&t).watch(&x);
    let xr = reshape(&mut e, &x, &[1, 3]).unwrap_or_else(|e| panic!("{e}"));
    let y = matmul(&mut e, &xr, &w, false, false).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let j = e
        .jacobian(
            &t,
            &y,
            &[Source::Tensor(x.clone()), Source::Tensor(w.clone())],
            Unconnected::None,
            false,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    // d y[0, k] / d x[i] = w[i, k], so the jacobian is w transposed, shaped [1, 2, 3].
    let jx = j[0].clone().unwrap_or_else(|| panic!("no jacobian"));
    assert_eq!(jx.shape(), &[1, 2, 3]);
    let wv = values(&w);
    let want: Vec<f64> = (0..2)
        .flat_map(|k| (0..3).map(move |i| (i, k)))
        .map(|(i, k)| wv[i * 2 + k])
        .collect();
    assert_eq!(values(&jx), want);
    assert!(j[1].is_none(), "w was not watched");
    // batch_jacobian: independent rows.
    let xb = Tensor::new(uniform(&[4, 3], 3, -1.0, 1.0));
    let t = started(&mut e, false);
    lock(&t).watch(&xb);
    let y = mul(&mut e, &xb, &xb).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let j = e
        .jacobian(
            &t,
            &y,
            &[Source::Tensor(xb.clone())],
            Unconnected::None,
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let j = j[0].clone().unwrap_or_else(|| panic!("no batch jacobian"));
    assert_eq!(j.shape(), &[4, 3, 3]);
    let xv = values(&xb);
    let jv = values(&j);
    for b in 0..4 {
        for r in 0..3 {
            for c in 0..3 {
                let want = if r == c { 2.0 * xv[b * 3 + r] } else { 0.0 };
                assert!((jv[(b * 3 + r) * 3 + c] - want).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn tf_errors() {
    let mut e = Eager::default();
    let x = scalar(1.0);
    let t = started(&mut e, false);
    lock(&t).watch(&x);
    let y = binary(&mut e, Binary::TruncateMod, &x, &scalar(2.0)).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let err = grad(&mut e, &t, &y, &[Source::Tensor(x)]).err();
    assert_eq!(
        err.map(|e| (e.class.py_name(), e.message)),
        Some((
            "LookupError",
            "gradient registry has no entry for: TruncateMod".to_string()
        ))
    );
    let a = Tensor::new(uniform(&[2, 3], 1, 0.0, 1.0).astype(DType::F32));
    let err = matmul(&mut e, &a, &a, false, false).err();
    assert_eq!(
        err.map(|e| (e.class.py_name(), e.message)),
        Some((
            "InvalidArgumentError",
            "{{function_node __wrapped__MatMul_device_/job:localhost/replica:0/task:0/device:CPU:0}} \
             Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3] [Op:MatMul] name: "
                .to_string()
        ))
    );
    let b = Tensor::new(uniform(&[3, 2], 1, 0.0, 1.0));
    let err = matmul(&mut e, &a, &b, false, false).err();
    assert_eq!(
        err.map(|e| e.message),
        Some("cannot compute MatMul as input #1(zero-based) was expected to be a float tensor but is a double tensor [Op:MatMul] name: ".to_string())
    );
    let err = add(
        &mut e,
        &a,
        &Tensor::new(uniform(&[3, 2], 1, 0.0, 1.0).astype(DType::F32)),
    )
    .err();
    assert_eq!(
        err.map(|e| e.message),
        Some("{{function_node __wrapped__AddV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} Incompatible shapes: [2,3] vs. [3,2] [Op:AddV2] name: ".to_string())
    );
}

#[test]
fn sizes_a_user_asks_for_are_errors_never_panics() {
    let mut e = Eager::default();
    let x = Tensor::new(uniform(&[2, 3], 1, 0.0, 1.0));
    let huge = 1i64 << 40;
    let err = reshape(&mut e, &x, &[huge, huge]).err();
    assert_eq!(err.map(|e| e.class), Some(ErrorClass::InvalidArgument));
    let idx = Tensor::new(ints(&[2], vec![0, 1]));
    let err = one_hot(&mut e, &idx, 1 << 60, 1.0, 0.0, -1, DType::F32).err();
    assert_eq!(err.map(|e| e.class), Some(ErrorClass::Memory));
    let err = broadcast_to(&mut e, &x, &[1 << 40, 1 << 40, 3]).err();
    assert_eq!(err.map(|e| e.class), Some(ErrorClass::Memory));
}

/// y = 2x, with its input's value kept for the backward pass.
#[derive(Debug)]
struct Doubler;

impl CustomOp for Doubler {
    fn name(&self) -> &str {
        "Doubler"
    }
    fn forward(&self, _dev: &dyn Device, inputs: &[&NdArray]) -> OpResult<Outputs> {
        let x = inputs
            .first()
            .ok_or_else(|| OpError::internal("no input"))?;
        let (shape, v) = x.to_f64_vec();
        let y = NdArray::from_f64(&shape, v.iter().map(|v| 2.0 * v).collect())
            .map_err(OpError::internal)?;
        Ok(Outputs {
            values: vec![y],
            saved: Some(Arc::new(v.len())),
        })
    }
    fn vjp(&self, e: &mut Eager, node: &Node, grads: &[Tensor]) -> OpResult<Vec<Option<Tensor>>> {
        let n = node
            .saved
            .as_ref()
            .and_then(|s| s.downcast_ref::<usize>())
            .copied();
        assert_eq!(
            n,
            Some(node.inputs[0].size()),
            "the forward's saved state reaches the backward"
        );
        Ok(vec![Some(scale(e, &grads[0], 2.0)?)])
    }
}

#[test]
fn a_custom_op_records_and_differentiates_like_any_other() {
    let mut e = Eager::default();
    let x = Tensor::new(uniform(&[3], 1, -1.0, 1.0));
    let t = started(&mut e, false);
    lock(&t).watch(&x);
    let y = e
        .execute1(Op::Custom(Arc::new(Doubler)), std::slice::from_ref(&x))
        .unwrap_or_else(|e| panic!("{e}"));
    let z = mul(&mut e, &y, &x).unwrap_or_else(|e| panic!("{e}"));
    e.pop_tape(&t);
    let g = grad(&mut e, &t, &z, &[Source::Tensor(x.clone())]).unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<f64> = values(&x).iter().map(|v| 4.0 * v).collect();
    assert_eq!(g[0].as_ref().map(values), Some(want));
}

/// Records what it sees: op names with input and output ids, reads and assignments.
struct Log(Arc<Mutex<Vec<String>>>);

impl Observer for Log {
    fn op(&mut self, op: &Op, inputs: &[Tensor], outputs: &[Tensor], _saved: Option<&Saved>) {
        let ids = |ts: &[Tensor]| {
            ts.iter()
                .map(|t| t.id().raw().to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let line = format!("{}({})->({})", op.name(), ids(inputs), ids(outputs));
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(line);
    }
    fn read_variable(&mut self, var: &Variable, value: &Tensor) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(format!("read {}->{}", var.name(), value.id().raw()));
    }
    fn assign_variable(
        &mut self,
        var: &Variable,
        how: Assign,
        _value: &Tensor,
        _previous: &Arc<NdArray>,
    ) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(format!("assign {} {how:?}", var.name()));
    }
}

#[test]
fn an_observer_sees_every_op_with_tensor_ids() {
    let mut e = Eager::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let id = e.attach(Box::new(Log(seen.clone())));
    let v = Variable::new(
        NdArray::from_f64(&[], vec![1.0]).unwrap_or_else(|e| panic!("{e}")),
        "v",
        true,
    );
    let x = scalar(2.0).value().astype(DType::F64);
    let x = Tensor::new(x);
    let r = e.read(&v);
    let y = mul(&mut e, &r, &x).unwrap_or_else(|e| panic!("{e}"));
    e.assign(&v, Assign::Sub, &y)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(e.detach(id).is_some());
    let _ = add(&mut e, &x, &x);
    let lines = seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert_eq!(
        lines,
        vec![
            format!("read v->{}", r.id().raw()),
            format!("Mul({},{})->({})", r.id().raw(), x.id().raw(), y.id().raw()),
            "assign v Sub".to_string(),
        ]
    );
    assert_eq!(v.snapshot().to_f64_vec().1, vec![-1.0]);
}

#[test]
fn everything_crosses_threads() {
    fn send<T: Send>() {}
    fn sync<T: Send + Sync>() {}
    send::<Eager>();
    sync::<Tensor>();
    sync::<Variable>();
    sync::<Op>();
    sync::<TapeRef>();
    sync::<Node>();
}
