//! Per-example weights in `fit`, `evaluate` and the `*_on_batch` calls (Keras's
//! `sample_weight`, and `class_weight` turned into one). While a trainer is told that its
//! targets are weighted, each example's weight travels as the last value of its target row,
//! so shuffling, the validation split, batching and the split across replicas carry it with
//! no path of their own; a step splits it off again before the loss. This file owns that
//! layout and Keras's conversion of class weights; it must not touch the language or the
//! bindings.

use super::error::{KResult, KerasError};

/// Splits `batch` target rows that end in their example's weight into the targets and the
/// weights.
pub fn split(y: &[f32], batch: usize) -> KResult<(Vec<f32>, Vec<f32>)> {
    if batch == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let per = y.len() / batch;
    if per == 0 || per * batch != y.len() {
        return Err(KerasError::Value(format!(
            "Data cardinality is ambiguous: {} target values with their weights for {batch} \
             examples",
            y.len()
        )));
    }
    let mut targets = Vec::with_capacity(batch * (per - 1));
    let mut weights = Vec::with_capacity(batch);
    for row in y.chunks_exact(per) {
        let (t, w) = row.split_at(per - 1);
        targets.extend_from_slice(t);
        weights.extend_from_slice(w);
    }
    Ok((targets, weights))
}

/// Target rows with each example's weight appended (`weights` holds one per example).
pub fn join(y: &[f32], weights: &[f32]) -> Vec<f32> {
    let per = y.len().checked_div(weights.len()).unwrap_or(0);
    let mut out = Vec::with_capacity(y.len() + weights.len());
    for (i, w) in weights.iter().enumerate() {
        out.extend_from_slice(y.get(i * per..(i + 1) * per).unwrap_or(&[]));
        out.push(*w);
    }
    out
}

/// Keras's `class_weight_to_sample_weights`: each of the `n` examples weighs what its class
/// weighs (1 for a class not listed). The class is the argmax of a one-hot (or
/// probability) row, else the label rounded half to even, as numpy rounds.
pub fn from_class_weight(y: &[f32], n: usize, class_weight: &[(i64, f32)]) -> Vec<f32> {
    let per = y.len().checked_div(n).unwrap_or(0).max(1);
    y.chunks(per)
        .take(n)
        .map(|row| {
            let class = if per > 1 {
                let mut best = 0;
                for (i, v) in row.iter().enumerate() {
                    if *v > row[best] {
                        best = i;
                    }
                }
                best as i64
            } else {
                row.first().map_or(0, |v| v.round_ties_even() as i64)
            };
            class_weight
                .iter()
                .find(|(c, _)| *c == class)
                .map_or(1.0, |(_, w)| *w)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_travel_with_their_rows() {
        let y = [1.0, 2.0, 3.0, 4.0];
        let joined = join(&y, &[0.5, 2.0]);
        assert_eq!(joined, vec![1.0, 2.0, 0.5, 3.0, 4.0, 2.0]);
        let (t, w) = split(&joined, 2).expect("splits");
        assert_eq!((t.as_slice(), w.as_slice()), (&y[..], &[0.5, 2.0][..]));
        assert!(split(&joined, 4).is_err());
    }

    #[test]
    fn class_weights_follow_numpy() {
        // Labels round half to even (2.5 is class 2); one-hot rows take their argmax.
        let cw = [(0, 0.5), (2, 3.0)];
        assert_eq!(
            from_class_weight(&[0.0, 2.5, 1.0], 3, &cw),
            vec![0.5, 3.0, 1.0]
        );
        assert_eq!(
            from_class_weight(&[0.0, 0.0, 1.0, 1.0, 0.0, 0.0], 2, &cw),
            vec![3.0, 0.5]
        );
    }
}
