//! The recurrent family: a whole sequence through a simple RNN, LSTM or GRU cell, as Keras
//! 3.15's cells compute one step (`SimpleRNNCell`, `LSTMCell` with its gates in the order
//! i, f, c, o, `GRUCell` with z, r, h and either placement of the reset gate), unrolled
//! over time. Each step is a composition of the matmul, element-wise, activation, slice and
//! select ops, so its gradient through time is those ops' vector-Jacobian products, and a
//! tape, a traced `tf.function` and `fit` all see the same ops. The input projection of
//! every step is one matmul over the whole sequence, as it does not depend on the state.
//! Nothing here knows about layers or variables: the weights come in as tensors and the
//! activations as functions (the Keras layer passes its own).

use super::eager::Eager;
use super::elementwise::{add, mul, select, sub, zeros_like};
use super::error::{OpError, OpResult};
use super::index::slice;
use super::linalg::matmul;
use super::shape::{reshape, split, stack, unstack, SplitSizes};
use super::tensor::Tensor;

/// An activation applied inside a cell (`tanh`, `sigmoid`, or whatever the layer was given).
pub type Gate<'a> = &'a dyn Fn(&mut Eager, &Tensor) -> OpResult<Tensor>;

/// Which cell runs at each step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// `h = activation(x K + h R + b)`.
    Simple,
    /// Gates i, f, c, o in the kernel's columns; states (h, c).
    Lstm,
    /// Gates z, r, h in the kernel's columns; `reset_after` applies the reset gate after
    /// the recurrent matmul (Keras's default, with a bias of shape `(2, 3 * units)`).
    Gru { reset_after: bool },
}

impl Cell {
    /// How many blocks of `units` columns the kernels hold.
    pub fn gates(self) -> usize {
        match self {
            Cell::Simple => 1,
            Cell::Lstm => 4,
            Cell::Gru { .. } => 3,
        }
    }

    /// How many state tensors the cell carries (h, and an LSTM's c).
    pub fn states(self) -> usize {
        match self {
            Cell::Lstm => 2,
            _ => 1,
        }
    }
}

/// One run of a recurrent layer over a sequence.
pub struct Recurrence<'a> {
    pub cell: Cell,
    pub activation: Gate<'a>,
    pub recurrent_activation: Gate<'a>,
    /// Runs the steps from the last to the first (the outputs stay in the order they were
    /// made, as Keras returns them).
    pub go_backwards: bool,
    /// The output at every step `(batch, time, units)` rather than the last `(batch, units)`.
    pub return_sequences: bool,
    /// A masked step outputs zeros rather than repeating the output before it (Keras's
    /// `zero_output_for_mask`, which `Bidirectional` turns on for sequences).
    pub zero_output_for_mask: bool,
}

/// The weights of one cell: `kernel (features, gates * units)`, `recurrent_kernel (units,
/// gates * units)`, and the bias (`(gates * units,)`, or `(2, 3 * units)` for a GRU that
/// resets after).
pub struct CellWeights<'a> {
    pub kernel: &'a Tensor,
    pub recurrent_kernel: &'a Tensor,
    pub bias: Option<&'a Tensor>,
}

fn bad(message: String) -> OpError {
    OpError::new(super::ErrorClass::InvalidArgument, message)
}

/// Runs `r` over `x (batch, time, features)`; `initial` holds the starting states (zeros
/// when empty) and `mask (batch, time)` of bools keeps the states of a masked step as they
/// were, while its output repeats the output before it (zeros before the first step), or
/// is zeros with `zero_output_for_mask`, as Keras's TensorFlow backend computes them.
/// Returns the output (the last step's output, or every step's) and the final states.
pub fn recurrence(
    e: &mut Eager,
    r: &Recurrence,
    x: &Tensor,
    w: &CellWeights,
    initial: &[Tensor],
    mask: Option<&Tensor>,
) -> OpResult<(Tensor, Vec<Tensor>)> {
    let [_, time, features] = match *x.shape() {
        [b, t, f] => [b, t, f],
        _ => {
            return Err(bad(format!(
            "a recurrent layer expects inputs of rank 3 (batch, time, features), got shape {:?}",
            x.shape()
        )))
        }
    };
    let gates = r.cell.gates();
    let units = w.recurrent_kernel.shape().first().copied().unwrap_or(0);
    let cols = gates * units;
    if w.kernel.shape() != [features, cols] || w.recurrent_kernel.shape() != [units, cols] {
        return Err(bad(format!(
            "recurrent weights of shapes {:?} and {:?} do not fit inputs with {features} features",
            w.kernel.shape(),
            w.recurrent_kernel.shape()
        )));
    }
    if time == 0 {
        return Err(bad(
            "a recurrent layer needs at least one time step".to_string()
        ));
    }
    // The bias added to the input projection, and a reset-after GRU's recurrent bias.
    let (input_bias, recurrent_bias) = match (r.cell, w.bias) {
        (Cell::Gru { reset_after: true }, Some(b)) => {
            let rows = unstack(e, b, 0)?;
            match rows.as_slice() {
                [i, h] => (Some(i.clone()), Some(h.clone())),
                _ => return Err(bad(format!("a GRU bias of shape {:?}", b.shape()))),
            }
        }
        (_, b) => (b.cloned(), None),
    };
    // Every step's input projection at once: (batch * time, features) x kernel.
    // Sizes are -1 where the batch goes, so a traced graph serves any batch size.
    let flat = reshape(e, x, &[-1, features as i64])?;
    let mut proj = matmul(e, &flat, w.kernel, false, false)?;
    if let Some(b) = &input_bias {
        proj = add(e, &proj, b)?;
    }
    let proj = reshape(e, &proj, &[-1, time as i64, cols as i64])?;
    let mut inputs = unstack(e, &proj, 1)?;
    let mut masks = match mask {
        Some(m) => {
            let m = reshape(e, m, &[-1, time as i64, 1])?;
            unstack(e, &m, 1)?.into_iter().map(Some).collect()
        }
        None => vec![None; time],
    };
    if r.go_backwards {
        inputs.reverse();
        masks.reverse();
    }
    let mut states: Vec<Tensor> = if initial.is_empty() {
        // Zeros of (batch, units), made from the first step so they follow its batch.
        let first = inputs.first().ok_or_else(|| OpError::internal("no step"))?;
        let cut = slice(e, first, &[0, 0], &[-1, units as i64])?;
        let zero = zeros_like(e, &cut)?;
        vec![zero; r.cell.states()]
    } else {
        initial.to_vec()
    };
    if states.len() != r.cell.states() {
        return Err(bad(format!(
            "the cell carries {} states, {} were given",
            r.cell.states(),
            states.len()
        )));
    }
    // A GRU that resets before the matmul splits its recurrent kernel once: z and r read
    // h, the candidate reads r * h.
    let split_kernel = match r.cell {
        Cell::Gru { reset_after: false } => {
            let zr = slice(
                e,
                w.recurrent_kernel,
                &[0, 0],
                &[units as i64, 2 * units as i64],
            )?;
            let h = slice(
                e,
                w.recurrent_kernel,
                &[0, 2 * units as i64],
                &[units as i64, units as i64],
            )?;
            Some((zr, h))
        }
        _ => None,
    };
    let mut outputs = Vec::with_capacity(time);
    // The output before the step, which a masked step repeats; Keras starts it at zeros.
    let mut last: Option<Tensor> = None;
    for (xp, m) in inputs.iter().zip(&masks) {
        let new = step(
            e,
            r,
            xp,
            &states,
            w.recurrent_kernel,
            recurrent_bias.as_ref(),
            split_kernel.as_ref(),
        )?;
        let out = match m {
            Some(m) => {
                let held = match (&last, r.zero_output_for_mask) {
                    (Some(prev), false) => prev.clone(),
                    _ => zeros_like(e, &new[0])?,
                };
                let out = select(e, m, &new[0], &held)?;
                states = new
                    .iter()
                    .zip(&states)
                    .map(|(n, old)| select(e, m, n, old))
                    .collect::<OpResult<_>>()?;
                out
            }
            None => {
                states = new;
                states[0].clone()
            }
        };
        if r.return_sequences {
            outputs.push(out.clone());
        }
        last = Some(out);
    }
    let out = match (r.return_sequences, last) {
        (true, _) => stack(e, &outputs, 1)?,
        (false, Some(l)) => l,
        (false, None) => states[0].clone(),
    };
    Ok((out, states))
}

/// One step of the cell: the new states from the step's input projection `xp`.
fn step(
    e: &mut Eager,
    r: &Recurrence,
    xp: &Tensor,
    states: &[Tensor],
    recurrent_kernel: &Tensor,
    recurrent_bias: Option<&Tensor>,
    split_kernel: Option<&(Tensor, Tensor)>,
) -> OpResult<Vec<Tensor>> {
    let act = r.activation;
    let ract = r.recurrent_activation;
    let h = &states[0];
    match r.cell {
        Cell::Simple => {
            let hr = matmul(e, h, recurrent_kernel, false, false)?;
            let z = add(e, xp, &hr)?;
            Ok(vec![act(e, &z)?])
        }
        Cell::Lstm => {
            let hr = matmul(e, h, recurrent_kernel, false, false)?;
            let z = add(e, xp, &hr)?;
            let parts = split(e, &z, 1, SplitSizes::Even(4))?;
            let [zi, zf, zc, zo] = parts.as_slice() else {
                return Err(OpError::internal("an LSTM step splits into four gates"));
            };
            let i = ract(e, zi)?;
            let f = ract(e, zf)?;
            let fc = mul(e, &f, &states[1])?;
            let cand = act(e, zc)?;
            let ic = mul(e, &i, &cand)?;
            let c = add(e, &fc, &ic)?;
            let o = ract(e, zo)?;
            let ac = act(e, &c)?;
            let h = mul(e, &o, &ac)?;
            Ok(vec![h, c])
        }
        Cell::Gru { reset_after } => {
            let xs = split(e, xp, 1, SplitSizes::Even(3))?;
            let [xz, xr, xh] = xs.as_slice() else {
                return Err(OpError::internal("a GRU step splits into three gates"));
            };
            // The update and reset gates from their input and recurrent parts.
            let gates = |e: &mut Eager, rz: &Tensor, rr: &Tensor| -> OpResult<(Tensor, Tensor)> {
                let z = add(e, xz, rz)?;
                let rg = add(e, xr, rr)?;
                Ok((ract(e, &z)?, ract(e, &rg)?))
            };
            let (z, rh) = match split_kernel {
                Some((zr, kh)) if !reset_after => {
                    let inner = matmul(e, h, zr, false, false)?;
                    let parts = split(e, &inner, 1, SplitSizes::Even(2))?;
                    let [rz, rr] = parts.as_slice() else {
                        return Err(OpError::internal("a GRU step splits into two gates"));
                    };
                    let (z, rg) = gates(e, rz, rr)?;
                    let rhh = mul(e, &rg, h)?;
                    let rh = matmul(e, &rhh, kh, false, false)?;
                    (z, rh)
                }
                _ => {
                    let mut inner = matmul(e, h, recurrent_kernel, false, false)?;
                    if let Some(b) = recurrent_bias {
                        inner = add(e, &inner, b)?;
                    }
                    let parts = split(e, &inner, 1, SplitSizes::Even(3))?;
                    let [rz, rr, rh] = parts.as_slice() else {
                        return Err(OpError::internal("a GRU step splits into three gates"));
                    };
                    let (z, rg) = gates(e, rz, rr)?;
                    let rh = mul(e, &rg, rh)?;
                    (z, rh)
                }
            };
            let hh = add(e, xh, &rh)?;
            let hh = act(e, &hh)?;
            // h = z * h_prev + (1 - z) * hh, as Keras writes it.
            let one = Tensor::scalar(1.0, z.dtype());
            let zh = mul(e, &z, h)?;
            let keep = sub(e, &one, &z)?;
            let nh = mul(e, &keep, &hh)?;
            Ok(vec![add(e, &zh, &nh)?])
        }
    }
}
