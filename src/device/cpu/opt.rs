//! Optimizer update rules on the host, exactly as Keras 3 writes them (its `update_step`
//! methods), so one CPU replica reproduces single-device Keras. Slot order per rule:
//! SGD `[momentum]`; Adam/AdamW `[m, v]`; RMSprop `[velocity, momentum?, average_grad?]`;
//! Adagrad `[accumulator]` (which Keras starts at `initial_accumulator_value`, the caller's
//! job).
//!
//! Every rule is written as zipped iterators so the compiler vectorizes it, and the same
//! code is compiled again for AVX2 and AVX-512 and chosen at run time ([`vectorized`]): the
//! update runs on every replica after every step, so its speed bounds how well replicas
//! scale. Every version uses only correctly rounded operations (no fused multiply-add), so
//! they give bit-identical results and a replica's result never depends on the CPU it runs
//! on.

use super::simd::vectorized;
use crate::device::OptStep;

/// Applies one optimizer step to `p` given the gradient `g` and the rule's slots, compiled
/// for the widest vectors the CPU has.
pub fn step(opt: &OptStep, p: &mut [f32], g: &[f32], slots: &mut [&mut [f32]]) {
    vectorized(
        #[inline(always)]
        || step_portable(opt, p, g, slots),
    )
}

#[inline(always)]
fn step_portable(opt: &OptStep, p: &mut [f32], g: &[f32], slots: &mut [&mut [f32]]) {
    match *opt {
        OptStep::Sgd {
            lr,
            momentum,
            nesterov,
        } => {
            if let [m] = slots {
                let it = p.iter_mut().zip(g).zip(m.iter_mut());
                if nesterov {
                    for ((p, g), m) in it {
                        *m = momentum * *m - lr * *g;
                        *p += momentum * *m - lr * *g;
                    }
                } else {
                    for ((p, g), m) in it {
                        *m = momentum * *m - lr * *g;
                        *p += *m;
                    }
                }
            } else {
                p.iter_mut().zip(g).for_each(|(p, g)| *p -= lr * *g);
            }
        }
        OptStep::Adam {
            lr,
            beta_1,
            beta_2,
            epsilon,
            step,
        } => adam(p, g, slots, lr, beta_1, beta_2, epsilon, step),
        OptStep::AdamW {
            lr,
            beta_1,
            beta_2,
            epsilon,
            weight_decay,
            step,
        } => {
            // Keras applies decoupled weight decay before the Adam update: p -= p * wd * lr.
            let decay = weight_decay * lr;
            p.iter_mut().for_each(|p| *p -= *p * decay);
            adam(p, g, slots, lr, beta_1, beta_2, epsilon, step);
        }
        OptStep::RmsProp {
            lr,
            rho,
            momentum,
            epsilon,
            centered,
        } => {
            let (vel, rest) = match slots.split_first_mut() {
                Some(x) => x,
                None => return,
            };
            let (mom, rest) = if momentum != 0.0 {
                match rest.split_first_mut() {
                    Some((m, r)) => (Some(m), r),
                    None => return,
                }
            } else {
                (None, rest)
            };
            let mut avg = if centered { rest.first_mut() } else { None };
            let mut mom = mom;
            for i in 0..p.len() {
                vel[i] = rho * vel[i] + (1.0 - rho) * g[i] * g[i];
                let denom = match avg.as_deref_mut() {
                    Some(a) => {
                        a[i] = rho * a[i] + (1.0 - rho) * g[i];
                        vel[i] - a[i] * a[i] + epsilon
                    }
                    None => vel[i] + epsilon,
                };
                let inc = lr * g[i] / denom.sqrt();
                match mom.as_deref_mut() {
                    Some(m) => {
                        m[i] = momentum * m[i] + inc;
                        p[i] -= m[i];
                    }
                    None => p[i] -= inc,
                }
            }
        }
        OptStep::Adagrad { lr, epsilon } => {
            if let [acc] = slots {
                for ((p, g), a) in p.iter_mut().zip(g).zip(acc.iter_mut()) {
                    *a += *g * *g;
                    *p -= lr * *g / (*a + epsilon).sqrt();
                }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn adam(
    p: &mut [f32],
    g: &[f32],
    slots: &mut [&mut [f32]],
    lr: f32,
    b1: f32,
    b2: f32,
    eps: f32,
    step: u64,
) {
    let [m, v] = slots else { return };
    // Keras folds both bias corrections into the learning rate and adds epsilon to sqrt(v).
    let t = step.max(1) as i32;
    let lr_t = lr * (1.0 - b2.powi(t)).sqrt() / (1.0 - b1.powi(t));
    let (c1, c2) = (1.0 - b1, 1.0 - b2);
    let it = p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut());
    for (((p, g), m), v) in it {
        *m += (*g - *m) * c1;
        *v += (*g * *g - *v) * c2;
        *p -= lr_t * *m / (v.sqrt() + eps);
    }
}
