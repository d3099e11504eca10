//! `np.einsum` for explicit and implicit subscripts over letters (no ellipsis): every
//! output element sums the product of the operands over the letters the output drops.
//! The loop is the plain definition, which is what notebooks need for traces, transposes,
//! batched products and outer products; speed is the matmul kernels' job.

use std::collections::BTreeMap;

use super::{DType, NdArray, TResult, TensorError};

fn value_err(m: impl Into<String>) -> TensorError {
    TensorError::Value(m.into())
}

/// The input subscripts and the output letters, the output made implicit (the letters
/// used once, alphabetically) when the expression has no `->`.
fn parse(spec: &str, n: usize) -> TResult<(Vec<Vec<char>>, Vec<char>)> {
    let spec: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, out) = match spec.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (spec.clone(), None),
    };
    let ins: Vec<Vec<char>> = lhs.split(',').map(|s| s.chars().collect()).collect();
    let used = lhs.chars().filter(|&c| c != ',');
    if let Some(c) = used
        .chain(out.iter().flat_map(|o| o.chars()))
        .find(|c| !c.is_ascii_alphabetic())
    {
        return Err(value_err(format!(
            "invalid subscript '{c}' in einstein sum subscripts string, subscripts must be letters"
        )));
    }
    if ins.len() != n {
        return Err(value_err(
            "more operands provided to einstein sum function than specified in the subscripts string",
        ));
    }
    let out = match out {
        Some(o) => o.chars().collect(),
        None => {
            let mut count: BTreeMap<char, usize> = BTreeMap::new();
            for &c in ins.iter().flatten() {
                *count.entry(c).or_default() += 1;
            }
            count
                .into_iter()
                .filter(|&(_, k)| k == 1)
                .map(|(c, _)| c)
                .collect()
        }
    };
    Ok((ins, out))
}

/// `np.einsum(spec, *operands)`.
pub fn einsum(spec: &str, ops: &[NdArray]) -> TResult<NdArray> {
    let (ins, out) = parse(spec, ops.len())?;
    let mut size: BTreeMap<char, usize> = BTreeMap::new();
    for (i, (sub, a)) in ins.iter().zip(ops).enumerate() {
        if sub.len() != a.ndim() {
            return Err(value_err(
                "operand has more dimensions than subscripts given in einstein sum, but no '...' ellipsis provided to broadcast the extra dimensions.",
            ));
        }
        for (&c, &d) in sub.iter().zip(a.shape()) {
            match size.get(&c) {
                Some(&e) if e != d && e != 1 && d != 1 => {
                    return Err(value_err(format!(
                        "size of label '{c}' for operand {i} ({d}) does not match previous terms ({e})."
                    )))
                }
                Some(&e) if e >= d => {}
                _ => {
                    size.insert(c, d);
                }
            }
        }
    }
    for c in &out {
        if !size.contains_key(c) {
            return Err(value_err(format!(
                "einstein sum subscripts string included output subscript '{c}' which never appeared in an input"
            )));
        }
    }
    let letters: Vec<char> = size.keys().copied().collect();
    let pos = |c: char| letters.iter().position(|&l| l == c).unwrap_or(0);
    let dims: Vec<usize> = letters.iter().map(|c| size[c]).collect();
    let float = ops.iter().any(|a| a.dtype().is_float());
    let dt = ops
        .iter()
        .map(|a| a.dtype())
        .reduce(DType::promote)
        .unwrap_or(DType::F64);
    let data: Vec<Vec<f64>> = ops
        .iter()
        .map(|a| a.to_f64_array().iter().copied().collect())
        .collect();
    let strides: Vec<Vec<(usize, usize)>> = ins
        .iter()
        .zip(ops)
        .map(|(sub, a)| {
            let mut st = vec![0usize; sub.len()];
            let mut acc = 1;
            for d in (0..sub.len()).rev() {
                // A length-1 axis broadcasts: it never moves.
                st[d] = if a.shape()[d] == 1 { 0 } else { acc };
                acc *= a.shape()[d];
            }
            sub.iter().zip(st).map(|(&c, s)| (pos(c), s)).collect()
        })
        .collect();
    let out_shape: Vec<usize> = out.iter().map(|c| size[c]).collect();
    let out_pos: Vec<usize> = out.iter().map(|&c| pos(c)).collect();
    let total: usize = dims.iter().product();
    let n_out: usize = out_shape.iter().product();
    let mut acc = vec![0f64; n_out];
    let mut idx = vec![0usize; dims.len()];
    for flat in 0..total {
        let mut r = flat;
        for d in (0..dims.len()).rev() {
            idx[d] = r % dims[d];
            r /= dims[d];
        }
        let mut prod = 1.0;
        for (vals, st) in data.iter().zip(&strides) {
            let p: usize = st.iter().map(|&(l, s)| idx[l] * s).sum();
            prod *= vals.get(p).copied().unwrap_or(0.0);
        }
        let o = out_pos
            .iter()
            .zip(&out_shape)
            .fold(0usize, |a, (&l, &n)| a * n + idx[l]);
        if let Some(slot) = acc.get_mut(o) {
            *slot += prod;
        }
    }
    let r = NdArray::from_f64(&out_shape, acc)?;
    Ok(if float {
        r.astype(dt)
    } else {
        r.astype(DType::I64)
    })
}
