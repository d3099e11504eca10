//! Host arrays for weights and the seedable initializers that fill them, with Keras's
//! formulas: variance scaling over fan-in/fan-out, the normal variants truncated at two
//! standard deviations with the same correction factor Keras uses. The generator is a
//! seeded ChaCha stream, so a seed gives the same weights on every machine.

use super::config::Plan;
use super::error::{KResult, KerasError};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A host f32 array with its shape: what `get_weights` returns and `set_weights` takes.
#[derive(Debug, Clone, PartialEq)]
pub struct HostArray {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

impl HostArray {
    pub fn new(shape: Vec<usize>, data: Vec<f32>) -> Self {
        HostArray { shape, data }
    }
    pub fn zeros(shape: &[usize]) -> Self {
        HostArray {
            shape: shape.to_vec(),
            data: vec![0.0; shape.iter().product()],
        }
    }
}

/// Weight initializers, with Keras's names and defaults.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    GlorotUniform,
    GlorotNormal,
    HeNormal,
    HeUniform,
    LecunNormal,
    LecunUniform,
    Zeros,
    Ones,
    RandomNormal {
        mean: f32,
        stddev: f32,
    },
    RandomUniform {
        minval: f32,
        maxval: f32,
    },
    Constant(f32),
    /// A random orthogonal matrix (over the last axis against the rest), times `gain`:
    /// Keras's default for a recurrent kernel.
    Orthogonal {
        gain: f32,
    },
    /// An LSTM bias with `unit_forget_bias`: the inner initializer for the gates i, c and
    /// o, ones for the forget gate f (the second of four blocks).
    ForgetGateOnes(Box<Init>),
}

const INIT_NAMES: &[&str] = &[
    "glorot_uniform",
    "glorot_normal",
    "he_normal",
    "he_uniform",
    "lecun_normal",
    "lecun_uniform",
    "zeros",
    "ones",
    "random_normal",
    "random_uniform",
    "orthogonal",
];

impl Init {
    pub fn parse(name: &str) -> KResult<Init> {
        Ok(match name {
            "glorot_uniform" => Init::GlorotUniform,
            "glorot_normal" => Init::GlorotNormal,
            "he_normal" => Init::HeNormal,
            "he_uniform" => Init::HeUniform,
            "lecun_normal" => Init::LecunNormal,
            "lecun_uniform" => Init::LecunUniform,
            "zeros" => Init::Zeros,
            "ones" => Init::Ones,
            "random_normal" => Init::RandomNormal {
                mean: 0.0,
                stddev: 0.05,
            },
            // Keras's `uniform` is `RandomUniform()` with its defaults.
            "random_uniform" | "uniform" => Init::RandomUniform {
                minval: -0.05,
                maxval: 0.05,
            },
            "orthogonal" => Init::Orthogonal { gain: 1.0 },
            other => return Err(KerasError::unknown("initializer", other, INIT_NAMES)),
        })
    }

    pub fn keras_name(&self) -> &'static str {
        match self {
            Init::GlorotUniform => "GlorotUniform",
            Init::GlorotNormal => "GlorotNormal",
            Init::HeNormal => "HeNormal",
            Init::HeUniform => "HeUniform",
            Init::LecunNormal => "LecunNormal",
            Init::LecunUniform => "LecunUniform",
            Init::Zeros => "Zeros",
            Init::Ones => "Ones",
            Init::RandomNormal { .. } => "RandomNormal",
            Init::RandomUniform { .. } => "RandomUniform",
            Init::Constant(_) => "Constant",
            Init::Orthogonal { .. } => "Orthogonal",
            Init::ForgetGateOnes(inner) => inner.keras_name(),
        }
    }
}

/// Keras divides the truncated normal's stddev by this so that, after truncation at two
/// standard deviations, the variance is the one asked for.
const TRUNC_CORRECTION: f64 = 0.879_625_661_034_239_8;

fn normal(rng: &mut StdRng) -> f64 {
    // Box-Muller; one draw per call keeps the stream simple to reason about.
    let u1: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn truncated(rng: &mut StdRng) -> f64 {
    loop {
        let z = normal(rng);
        if z.abs() <= 2.0 {
            return z;
        }
    }
}

/// Fills one variable.
pub fn fill(init: &Init, shape: &[usize], fans: (usize, usize), rng: &mut StdRng) -> HostArray {
    let n: usize = shape.iter().product();
    let (fan_in, fan_out) = (fans.0.max(1) as f64, fans.1.max(1) as f64);
    let uniform = |rng: &mut StdRng, limit: f64| {
        (0..n)
            .map(|_| rng.gen_range(-limit..limit) as f32)
            .collect::<Vec<_>>()
    };
    let trunc = |rng: &mut StdRng, std: f64| {
        (0..n)
            .map(|_| (truncated(rng) * std / TRUNC_CORRECTION) as f32)
            .collect::<Vec<_>>()
    };
    let data = match init {
        Init::GlorotUniform => uniform(rng, (6.0 / (fan_in + fan_out)).sqrt()),
        Init::GlorotNormal => trunc(rng, (2.0 / (fan_in + fan_out)).sqrt()),
        Init::HeNormal => trunc(rng, (2.0 / fan_in).sqrt()),
        Init::HeUniform => uniform(rng, (6.0 / fan_in).sqrt()),
        Init::LecunNormal => trunc(rng, (1.0 / fan_in).sqrt()),
        Init::LecunUniform => uniform(rng, (3.0 / fan_in).sqrt()),
        Init::Zeros => vec![0.0; n],
        Init::Ones => vec![1.0; n],
        Init::Constant(c) => vec![*c; n],
        Init::RandomNormal { mean, stddev } => (0..n)
            .map(|_| (f64::from(*mean) + normal(rng) * f64::from(*stddev)) as f32)
            .collect(),
        Init::RandomUniform { minval, maxval } => (0..n)
            .map(|_| {
                let u: f32 = rng.gen();
                minval + u * (maxval - minval)
            })
            .collect(),
        Init::Orthogonal { gain } => orthogonal(shape, f64::from(*gain), rng),
        Init::ForgetGateOnes(inner) => {
            let units = n / 4;
            let part = |k: usize, rng: &mut StdRng| fill(inner, &[k], fans, rng).data;
            let mut v = part(units, rng);
            v.extend(vec![1.0; units]);
            v.extend(part(n - 2 * units, rng));
            v
        }
    };
    HostArray {
        shape: shape.to_vec(),
        data,
    }
}

/// A random matrix with orthonormal rows or columns as Keras's `Orthogonal` makes one: a
/// normal sample of (the larger side, the smaller side), its columns made orthonormal
/// (Gram-Schmidt: the Q of its QR with R's diagonal positive), transposed when the
/// variable has fewer rows than columns, times `gain`.
fn orthogonal(shape: &[usize], gain: f64, rng: &mut StdRng) -> Vec<f32> {
    let cols = shape.last().copied().unwrap_or(1).max(1);
    let n: usize = shape.iter().product();
    let rows = n / cols;
    let (tall, wide) = (rows.max(cols), rows.min(cols));
    // Column-major: column j is q[j * tall..(j + 1) * tall].
    let mut q: Vec<f64> = (0..tall * wide).map(|_| normal(rng)).collect();
    for j in 0..wide {
        for k in 0..j {
            let dot: f64 = (0..tall).map(|i| q[j * tall + i] * q[k * tall + i]).sum();
            for i in 0..tall {
                q[j * tall + i] -= dot * q[k * tall + i];
            }
        }
        let norm = (0..tall)
            .map(|i| q[j * tall + i].powi(2))
            .sum::<f64>()
            .sqrt();
        for i in 0..tall {
            q[j * tall + i] /= norm.max(f64::MIN_POSITIVE);
        }
    }
    (0..rows)
        .flat_map(|r| (0..cols).map(move |c| (r, c)))
        .map(|(r, c)| {
            // Row r, column c of Q (tall) or of its transpose (wide).
            let v = if rows >= cols {
                q[c * tall + r]
            } else {
                q[r * tall + c]
            };
            (v * gain) as f32
        })
        .collect()
}

/// Initial weights for every variable of `plan`, in Keras order, from `seed`.
pub fn initial_weights(plan: &Plan, seed: u64) -> Vec<HostArray> {
    let mut rng = StdRng::seed_from_u64(seed);
    plan.vars
        .iter()
        .map(|v| fill(&v.init, &v.shape, v.fans, &mut rng))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orthogonal_has_orthonormal_rows_or_columns() {
        for shape in [[3usize, 3], [5, 2], [2, 6]] {
            let mut rng = StdRng::seed_from_u64(7);
            let a = fill(&Init::Orthogonal { gain: 1.0 }, &shape, (1, 1), &mut rng).data;
            let [r, c] = shape;
            // The smaller side's vectors are orthonormal.
            let (k, m) = if r >= c { (c, r) } else { (r, c) };
            // Element i of vector v on the smaller side (a column when tall, a row when wide).
            let at =
                |v: usize, i: usize| f64::from(if r >= c { a[i * c + v] } else { a[v * c + i] });
            for u in 0..k {
                for v in 0..k {
                    let dot: f64 = (0..m).map(|i| at(u, i) * at(v, i)).sum();
                    let want = if u == v { 1.0 } else { 0.0 };
                    assert!((dot - want).abs() < 1e-5, "{shape:?}: <{u},{v}> = {dot}");
                }
            }
        }
    }

    #[test]
    fn glorot_uniform_stays_in_its_limit_and_has_its_variance() {
        let mut rng = StdRng::seed_from_u64(1);
        let a = fill(&Init::GlorotUniform, &[200, 100], (200, 100), &mut rng);
        let limit = (6.0f32 / 300.0).sqrt();
        assert!(a.data.iter().all(|v| v.abs() <= limit));
        let var: f32 = a.data.iter().map(|v| v * v).sum::<f32>() / a.data.len() as f32;
        assert!((var - limit * limit / 3.0).abs() < 0.05 * limit * limit / 3.0);
    }

    #[test]
    fn he_normal_has_variance_two_over_fan_in() {
        let mut rng = StdRng::seed_from_u64(2);
        let a = fill(&Init::HeNormal, &[400, 100], (400, 100), &mut rng);
        let var: f64 = a.data.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>() / 40_000.0;
        assert!(
            (var - 2.0 / 400.0).abs() < 0.05 * 2.0 / 400.0,
            "variance {var}"
        );
    }
}
