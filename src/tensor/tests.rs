//! Unit tests of the array library against values real numpy 2 printed (see
//! tests/fixtures/numpy/ for the generator and the numpy version).

use super::build::{arange, from_nested, linspace, Nested};
use super::dtype::WeakScalar;
use super::ops::{binary, BinaryOp, Operand};
use super::*;

fn f64s(shape: &[usize], v: &[f64]) -> NdArray {
    NdArray::from_f64(shape, v.to_vec()).unwrap()
}

#[test]
fn mt19937_matches_numpy_random() {
    let mut r = RandomState::new(0);
    let v: Vec<f64> = (0..3).map(|_| r.next_f64()).collect();
    assert_eq!(
        str_array(&f64s(&[3], &v)),
        "[0.5488135  0.71518937 0.60276338]"
    );
}

#[test]
fn repr_basic_shapes() {
    let a = f64s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(repr_array(&a), "array([[1., 2.],\n       [3., 4.]])");
    assert_eq!(str_array(&a), "[[1. 2.]\n [3. 4.]]");
    let b = a.astype(DType::F32);
    assert_eq!(
        repr_array(&b),
        "array([[1., 2.],\n       [3., 4.]], dtype=float32)"
    );
    let e = NdArray::zeros(&[0], DType::F64).unwrap();
    assert_eq!(repr_array(&e), "array([], dtype=float64)");
    let e = NdArray::zeros(&[0, 3], DType::F64).unwrap();
    assert_eq!(repr_array(&e), "array([], shape=(0, 3), dtype=float64)");
}

#[test]
fn promotion_weak_scalars() {
    let u = NdArray::from_u8(&[2], vec![0, 255]).unwrap();
    let r = binary(
        Operand::Arr(&u),
        Operand::Weak(WeakScalar::Float(255.0)),
        BinaryOp::Div,
    )
    .unwrap();
    assert_eq!(r.dtype(), DType::F64);
    let f = NdArray::from_f32(&[1], vec![1.5]).unwrap();
    let r = binary(
        Operand::Arr(&f),
        Operand::Weak(WeakScalar::Float(2.0)),
        BinaryOp::Mul,
    )
    .unwrap();
    assert_eq!(r.dtype(), DType::F32);
    let i = NdArray::from_i32(&[1], vec![1]).unwrap();
    assert_eq!(DType::promote(i.dtype(), DType::F32), DType::F64);
}

#[test]
fn broadcast_error_message() {
    let a = NdArray::zeros(&[2, 3], DType::F64).unwrap();
    let b = NdArray::zeros(&[4], DType::F64).unwrap();
    let e = binary(Operand::Arr(&a), Operand::Arr(&b), BinaryOp::Add).unwrap_err();
    assert_eq!(
        e.to_string(),
        "operands could not be broadcast together with shapes (2,3) (4,) "
    );
}

#[test]
fn nested_and_ranges() {
    let n = Nested::List(vec![
        Nested::Py(WeakScalar::Int(1)),
        Nested::Py(WeakScalar::Float(2.5)),
    ]);
    let a = from_nested(&n, None).unwrap();
    assert_eq!(repr_array(&a), "array([1. , 2.5])");
    assert_eq!(
        repr_array(&arange(0.0, 5.0, 1.0, DType::I64).unwrap()),
        "array([0, 1, 2, 3, 4])"
    );
    assert_eq!(
        repr_array(&linspace(0.0, 1.0, 5, true).unwrap()),
        "array([0.  , 0.25, 0.5 , 0.75, 1.  ])"
    );
}
