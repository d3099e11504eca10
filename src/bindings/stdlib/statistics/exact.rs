//! Exact arithmetic for `statistics`: non-negative integers of any size ([`Nat`]), the
//! few operations CPython's exact sums need (add, subtract, multiply, shift, divide,
//! integer square root), and the correctly rounded conversions of a ratio and of a
//! ratio's square root to `f64`, as CPython's `int / int` and `_float_sqrt_of_frac` give.

use std::cmp::Ordering;

use crate::lang::{PyErr, PyResult};

/// A non-negative integer: 64-bit limbs, least significant first, no zero limb on top.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nat(Vec<u64>);

impl Nat {
    pub fn zero() -> Nat {
        Nat(vec![])
    }

    pub fn from_u128(x: u128) -> Nat {
        Nat(vec![x as u64, (x >> 64) as u64]).trimmed()
    }

    fn trimmed(mut self) -> Nat {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    pub fn bit_length(&self) -> u64 {
        match self.0.last() {
            Some(top) => (self.0.len() as u64 - 1) * 64 + (64 - top.leading_zeros() as u64),
            None => 0,
        }
    }

    /// The value, when it fits in 128 bits.
    pub fn to_u128(&self) -> Option<u128> {
        match self.0.as_slice() {
            [] => Some(0),
            [a] => Some(*a as u128),
            [a, b] => Some(*a as u128 | (*b as u128) << 64),
            _ => None,
        }
    }

    pub fn add(&self, o: &Nat) -> Nat {
        let mut out = Vec::with_capacity(self.0.len().max(o.0.len()) + 1);
        let mut carry = 0u128;
        for i in 0..self.0.len().max(o.0.len()) {
            let s =
                carry + *self.0.get(i).unwrap_or(&0) as u128 + *o.0.get(i).unwrap_or(&0) as u128;
            out.push(s as u64);
            carry = s >> 64;
        }
        out.push(carry as u64);
        Nat(out).trimmed()
    }

    /// `self - o`; the caller makes sure that `o <= self`.
    pub fn sub(&self, o: &Nat) -> Nat {
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i128;
        for (i, &x) in self.0.iter().enumerate() {
            let mut d = x as i128 - *o.0.get(i).unwrap_or(&0) as i128 - borrow;
            borrow = 0;
            if d < 0 {
                d += 1 << 64;
                borrow = 1;
            }
            out.push(d as u64);
        }
        Nat(out).trimmed()
    }

    pub fn mul(&self, o: &Nat) -> Nat {
        let mut out = vec![0u64; self.0.len() + o.0.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in o.0.iter().enumerate() {
                let t = out[i + j] as u128 + a as u128 * b as u128 + carry;
                out[i + j] = t as u64;
                carry = t >> 64;
            }
            out[i + o.0.len()] = carry as u64;
        }
        Nat(out).trimmed()
    }

    pub fn shl(&self, bits: u64) -> Nat {
        if self.is_zero() {
            return Nat::zero();
        }
        let (limbs, rest) = ((bits / 64) as usize, bits % 64);
        let mut out = vec![0u64; limbs];
        let mut carry = 0u64;
        for &x in &self.0 {
            out.push(if rest == 0 { x } else { x << rest | carry });
            carry = if rest == 0 { 0 } else { x >> (64 - rest) };
        }
        out.push(carry);
        Nat(out).trimmed()
    }

    fn set_bit(&mut self, bit: u64) {
        let limb = (bit / 64) as usize;
        if self.0.len() <= limb {
            self.0.resize(limb + 1, 0);
        }
        self.0[limb] |= 1 << (bit % 64);
    }

    /// `(self // d, self % d)` by binary long division (the numbers here are a few
    /// hundred bits); `d` is not zero.
    pub fn div_rem(&self, d: &Nat) -> (Nat, Nat) {
        if self.cmp(d) == Ordering::Less {
            return (Nat::zero(), self.clone());
        }
        let mut q = Nat::zero();
        let mut r = self.clone();
        for i in (0..=self.bit_length() - d.bit_length()).rev() {
            let t = d.shl(i);
            if r.cmp(&t) != Ordering::Less {
                r = r.sub(&t);
                q.set_bit(i);
            }
        }
        (q, r)
    }
}

impl PartialOrd for Nat {
    fn partial_cmp(&self, o: &Nat) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Nat {
    fn cmp(&self, o: &Nat) -> Ordering {
        self.0
            .len()
            .cmp(&o.0.len())
            .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }
}

/// `2 ** e` for any exponent a float's bits allow, without overflowing on the way.
fn ldexp(mut x: f64, mut e: i64) -> f64 {
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e as i32)
}

/// `n / d` as CPython's true division of two ints gives it: correctly rounded (half to
/// even), OverflowError past the largest float. `d` is not zero.
pub fn ratio_to_f64(n: &Nat, d: &Nat) -> PyResult<f64> {
    if n.is_zero() {
        return Ok(0.0);
    }
    // A quotient of 55 or 56 bits, the rest of the ratio kept as a sticky bit.
    let s = n.bit_length() as i64 - d.bit_length() as i64 - 55;
    let (a, b) = if s >= 0 {
        (n.clone(), d.shl(s as u64))
    } else {
        (n.shl((-s) as u64), d.clone())
    };
    let (q, r) = a.div_rem(&b);
    let q = q.to_u128().unwrap_or(0);
    let qbits = 128 - q.leading_zeros() as i64;
    // Drop to 53 bits, or fewer where the result is subnormal (lowest bit 2**-1074).
    let mut drop = qbits - 53;
    if s + drop < -1074 {
        drop = -1074 - s;
    }
    if drop >= 128 {
        return Ok(0.0);
    }
    let mut mant = q >> drop;
    let low = q & ((1u128 << drop) - 1);
    let half = 1u128 << (drop - 1).max(0) as u32;
    if drop > 0 && (low > half || (low == half && (!r.is_zero() || mant & 1 == 1))) {
        mant += 1;
    }
    let x = ldexp(mant as f64, s + drop);
    if x.is_infinite() {
        return Err(PyErr::new(
            "OverflowError",
            "integer division result too large for a float",
        ));
    }
    Ok(x)
}

fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    let mut x = (n as f64).sqrt() as u128;
    while x * x > n {
        x -= 1;
    }
    while (x + 1).checked_mul(x + 1).is_some_and(|s| s <= n) {
        x += 1;
    }
    x
}

/// The square root of `n / m` rounded to an integer with round-to-odd (CPython's
/// `_integer_sqrt_of_frac_rto`); the quotient fits 128 bits where it is called.
fn sqrt_rto(n: &Nat, m: &Nat) -> Nat {
    let (q, _) = n.div_rem(m);
    let a = Nat::from_u128(isqrt(q.to_u128().unwrap_or(u128::MAX)));
    let exact = a.mul(&a).mul(m) == *n;
    if exact || a.0.first().is_some_and(|low| low & 1 == 1) {
        a
    } else {
        a.add(&Nat::from_u128(1))
    }
}

/// `sqrt(n / m)` correctly rounded: CPython's `_float_sqrt_of_frac`.
pub fn sqrt_ratio_to_f64(n: &Nat, m: &Nat) -> PyResult<f64> {
    const WIDTH: i64 = 2 * 53 + 3;
    let q = (n.bit_length() as i64 - m.bit_length() as i64 - WIDTH).div_euclid(2);
    if q >= 0 {
        let root = sqrt_rto(n, &m.shl(2 * q as u64)).shl(q as u64);
        ratio_to_f64(&root, &Nat::from_u128(1))
    } else {
        let root = sqrt_rto(&n.shl((-2 * q) as u64), m);
        ratio_to_f64(&root, &Nat::from_u128(1).shl((-q) as u64))
    }
}
