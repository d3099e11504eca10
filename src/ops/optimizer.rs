//! Optimizer updates as ops: one [`ApplyUpdate`] takes a variable's value, its gradient,
//! the learning rate, the step counter and the rule's slots, and returns the new value and
//! the new slots, computed by the device's `optimizer_step` (the same code `fit` runs, so
//! a hand-written loop and `fit` make the same update bit for bit). The op is pure, as
//! every op here is: [`apply_update`] reads the variables through the execution context,
//! runs the op, and writes the results back with [`Eager::assign`], so a graph recorder
//! sees the reads, the op and the assignments, and a replayed graph repeats the update.
//! The learning rate and the step are inputs rather than attributes so that a replay reads
//! the current rate (or the schedule's value) and the current step. Not differentiable:
//! TensorFlow records nothing for an optimizer's update, and neither does a tape here.

use super::device_io::{download_as, upload};
use super::eager::{Assign, Eager};
use super::error::{dims, ErrorClass, OpError, OpResult};
use super::op::Op;
use super::tensor::Tensor;
use super::variable::Variable;
use crate::device::{Device, OptStep};
use crate::tensor::NdArray;

/// One optimizer update. The rule's `lr` and `step` fields are placeholders: the op takes
/// the rate from its third input and the step (the count of updates already applied, plus
/// one) from its fourth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ApplyUpdate {
    pub rule: OptStep,
}

impl ApplyUpdate {
    /// TensorFlow's name of the (non-resource) kernel doing this update; AdamW, which TF
    /// writes as weight decay before Adam, has its own.
    pub fn name(&self) -> &'static str {
        match self.rule {
            OptStep::Sgd { momentum: 0.0, .. } => "ApplyGradientDescent",
            OptStep::Sgd { .. } => "ApplyMomentum",
            OptStep::Adam { .. } => "ApplyAdam",
            OptStep::AdamW { .. } => "ApplyAdamW",
            OptStep::RmsProp {
                centered: false, ..
            } => "ApplyRMSProp",
            OptStep::RmsProp { centered: true, .. } => "ApplyCenteredRMSProp",
            OptStep::Adagrad { .. } => "ApplyAdagradV2",
        }
    }

    /// The rule at learning rate `lr` for update number `step` (counting from 1).
    fn at(&self, lr: f32, step: u64) -> OptStep {
        let mut rule = self.rule;
        match &mut rule {
            OptStep::Sgd { lr: l, .. }
            | OptStep::RmsProp { lr: l, .. }
            | OptStep::Adagrad { lr: l, .. } => *l = lr,
            OptStep::Adam { lr: l, step: s, .. } | OptStep::AdamW { lr: l, step: s, .. } => {
                *l = lr;
                *s = step;
            }
        }
        rule
    }

    /// Inputs `[param, grad, learning_rate, iterations, slots...]`; outputs `[param,
    /// slots...]`, in the parameter's dtype. The arithmetic is float32 on the device.
    pub(crate) fn forward(&self, dev: &dyn Device, given: &[&NdArray]) -> OpResult<Vec<NdArray>> {
        let op = self.name();
        let n = self.rule.slots();
        let [param, grad, lr, iterations] = match given.get(..4) {
            Some(&[p, g, l, i]) if given.len() == 4 + n => [p, g, l, i],
            _ => {
                return Err(OpError::new(
                    ErrorClass::InvalidArgument,
                    format!("{op} expects {} inputs, got {}", 4 + n, given.len()),
                ))
            }
        };
        let slots = &given[4..];
        let shape = param.shape();
        for (what, t) in
            std::iter::once(("gradient", grad)).chain(slots.iter().map(|s| ("slot", *s)))
        {
            if t.shape() != shape {
                return Err(OpError::kernel(
                    op,
                    &dev.name(),
                    &format!(
                        "var and {what} do not have the same shape{} {}",
                        dims(shape),
                        dims(t.shape())
                    ),
                ));
            }
        }
        let scalar = |t: &NdArray, what: &str| -> OpResult<f64> {
            match t.to_f64_vec().1.as_slice() {
                [v] => Ok(*v),
                _ => Err(OpError::kernel(
                    op,
                    &dev.name(),
                    &format!("{what} is not a scalar: {}", dims(t.shape())),
                )),
            }
        };
        let lr = scalar(lr, "lr")? as f32;
        let done = scalar(iterations, "iterations")?.max(0.0) as u64;
        let rule = self.at(lr, done + 1);
        let mut p = upload(dev, param, shape)?;
        let g = upload(dev, grad, shape)?;
        let mut s = slots
            .iter()
            .map(|t| upload(dev, t, shape))
            .collect::<OpResult<Vec<_>>>()?;
        dev.optimizer_step(&rule, &mut p, &g, &mut s)?;
        let dtype = param.dtype();
        let mut out = Vec::with_capacity(1 + n);
        // `astype` copies even to its own dtype; a float32 parameter needs no cast.
        let cast = |a: NdArray| {
            if a.dtype() == dtype {
                a
            } else {
                a.astype(dtype)
            }
        };
        out.push(cast(download_as(dev, p, shape, op)?));
        for t in s {
            out.push(cast(download_as(dev, t, shape, op)?));
        }
        Ok(out)
    }
}

/// Applies `rule` to `var` with `grad` (already of the variable's dtype and shape) at
/// learning rate `lr` (a scalar) after `iterations` updates (a scalar), reading and
/// writing `slots` (`rule.slots()` variables of the variable's shape). No tape records it.
pub fn apply_update(
    e: &mut Eager,
    rule: OptStep,
    var: &Variable,
    grad: &Tensor,
    lr: &Tensor,
    iterations: &Tensor,
    slots: &[Variable],
) -> OpResult<()> {
    e.pause();
    let done = (|| {
        let mut inputs = vec![e.read(var), grad.clone(), lr.clone(), iterations.clone()];
        inputs.extend(slots.iter().map(|s| e.read(s)));
        let outs = e.execute(Op::Update(ApplyUpdate { rule }), &inputs)?;
        let mut outs = outs.iter();
        for target in std::iter::once(var).chain(slots) {
            let v = outs
                .next()
                .ok_or_else(|| OpError::internal("an optimizer update lost an output"))?;
            e.assign(target, Assign::Set, v)?;
        }
        Ok(())
    })();
    e.resume();
    done
}
