//! Keras's layers without variables that only the op library runs: global and average
//! pooling (`GlobalAveragePooling1D/2D`, `GlobalMaxPooling1D/2D`, `AveragePooling1D/2D`,
//! `MaxPooling1D`),
//! the rectifier layers (`ReLU`, `LeakyReLU`, `ELU`), `Rescaling`, and the rearranging
//! layers (`RepeatVector`, `Permute`, `UpSampling2D`, `ZeroPadding2D`), and `Masking` (its
//! mask is the bindings' concern): their arguments, their shape rule (shapes here never
//! include the batch axis) and the layer-specific part of their `get_config()`. The
//! arithmetic is the op library's (`ops::global_pool`, `ops::pool1d`, `ops::keras_relu`,
//! `ops::keras_elu`, `ops::upsample_nearest`, `ops::zero_pad2d`); the compiled engine does not run these layers.

use super::config::Padding;
use super::error::{fmt_batch_shape, KResult, KerasError};
use serde_json::json;

/// Which layer, with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Stateless {
    /// The mean (or maximum) over every axis but the batch and the channels of an input of
    /// `rank` spatial axes (1 or 2).
    GlobalPool {
        max: bool,
        rank: usize,
        keepdims: bool,
    },
    /// `AveragePooling1D/2D`, or with `max` `MaxPooling1D` (rank 1: only the first of
    /// each pair counts; `MaxPooling2D` is a layer of the compiled engine).
    Pool {
        max: bool,
        rank: usize,
        pool_size: (usize, usize),
        strides: (usize, usize),
        padding: Padding,
    },
    ReLU {
        max_value: Option<f64>,
        negative_slope: f64,
        threshold: f64,
    },
    LeakyReLU {
        negative_slope: f64,
    },
    ELU {
        alpha: f64,
    },
    Rescaling {
        scale: f64,
        offset: f64,
    },
    RepeatVector {
        n: usize,
    },
    /// The new order of the axes after the batch axis, counted from 1.
    Permute {
        dims: Vec<usize>,
    },
    /// Nearest-neighbour upsampling by `(rows, cols)`.
    UpSampling2D {
        size: (usize, usize),
    },
    /// `((top, bottom), (left, right))` rows and columns of zeros.
    ZeroPadding2D {
        padding: ((usize, usize), (usize, usize)),
    },
    /// Zeros every step whose features all equal `mask_value`, and masks it.
    Masking {
        mask_value: f64,
    },
}

impl Stateless {
    pub fn class_name(&self) -> &'static str {
        match self {
            Stateless::GlobalPool {
                max: false,
                rank: 1,
                ..
            } => "GlobalAveragePooling1D",
            Stateless::GlobalPool { max: false, .. } => "GlobalAveragePooling2D",
            Stateless::GlobalPool { rank: 1, .. } => "GlobalMaxPooling1D",
            Stateless::GlobalPool { .. } => "GlobalMaxPooling2D",
            Stateless::Pool {
                max: true, rank: 1, ..
            } => "MaxPooling1D",
            Stateless::Pool { max: true, .. } => "MaxPooling2D",
            Stateless::Pool { rank: 1, .. } => "AveragePooling1D",
            Stateless::Pool { .. } => "AveragePooling2D",
            Stateless::ReLU { .. } => "ReLU",
            Stateless::LeakyReLU { .. } => "LeakyReLU",
            Stateless::ELU { .. } => "ELU",
            Stateless::Rescaling { .. } => "Rescaling",
            Stateless::RepeatVector { .. } => "RepeatVector",
            Stateless::Permute { .. } => "Permute",
            Stateless::UpSampling2D { .. } => "UpSampling2D",
            Stateless::ZeroPadding2D { .. } => "ZeroPadding2D",
            Stateless::Masking { .. } => "Masking",
        }
    }

    pub fn base_name(&self) -> &'static str {
        match self {
            Stateless::GlobalPool {
                max: false,
                rank: 1,
                ..
            } => "global_average_pooling1d",
            Stateless::GlobalPool { max: false, .. } => "global_average_pooling2d",
            Stateless::GlobalPool { rank: 1, .. } => "global_max_pooling1d",
            Stateless::GlobalPool { .. } => "global_max_pooling2d",
            Stateless::Pool {
                max: true, rank: 1, ..
            } => "max_pooling1d",
            Stateless::Pool { max: true, .. } => "max_pooling2d",
            Stateless::Pool { rank: 1, .. } => "average_pooling1d",
            Stateless::Pool { .. } => "average_pooling2d",
            Stateless::ReLU { .. } => "re_lu",
            Stateless::LeakyReLU { .. } => "leaky_re_lu",
            Stateless::ELU { .. } => "elu",
            Stateless::Rescaling { .. } => "rescaling",
            Stateless::RepeatVector { .. } => "repeat_vector",
            Stateless::Permute { .. } => "permute",
            Stateless::UpSampling2D { .. } => "up_sampling2d",
            Stateless::ZeroPadding2D { .. } => "zero_padding2d",
            Stateless::Masking { .. } => "masking",
        }
    }

    /// The compiled engine's refusal: models holding one train on the op library.
    pub fn not_on_engine(&self) -> KerasError {
        KerasError::Value(format!("{} runs on the op library", self.class_name()))
    }

    /// The rank (with the batch axis) Keras's input spec asks for, if it fixes one.
    pub fn input_ndim(&self) -> Option<usize> {
        match self {
            Stateless::GlobalPool { rank, .. } | Stateless::Pool { rank, .. } => Some(rank + 2),
            Stateless::RepeatVector { .. } => Some(2),
            Stateless::UpSampling2D { .. } | Stateless::ZeroPadding2D { .. } => Some(4),
            Stateless::Permute { dims } => Some(dims.len() + 1),
            _ => None,
        }
    }

    /// The output shape for inputs of `shape` (both without the batch axis).
    pub fn out_shape(&self, layer: &str, shape: &[usize]) -> KResult<Vec<usize>> {
        if let Some(nd) = self.input_ndim() {
            if shape.len() + 1 != nd {
                return Err(KerasError::Value(format!(
                    "Input 0 of layer \"{layer}\" is incompatible with the layer: expected ndim={nd}, found ndim={}. Full shape received: {}",
                    shape.len() + 1,
                    fmt_batch_shape(shape)
                )));
            }
        }
        Ok(match self {
            Stateless::GlobalPool { keepdims, .. } => {
                let c = shape.last().copied().unwrap_or(1);
                if *keepdims {
                    let mut out = vec![1; shape.len().saturating_sub(1)];
                    out.push(c);
                    out
                } else {
                    vec![c]
                }
            }
            Stateless::Pool {
                rank,
                pool_size,
                strides,
                padding,
                ..
            } => {
                let windows = [(pool_size.0, strides.0), (pool_size.1, strides.1)];
                let mut out = vec![];
                for (i, (k, s)) in windows.iter().take(*rank).enumerate() {
                    let size = shape.get(i).copied().unwrap_or(1);
                    match padding.out_and_pad(size, *k, *s) {
                        Some((o, _)) if o > 0 => out.push(o),
                        _ => {
                            return Err(KerasError::Value(format!(
                                "Computed output size would be negative. Received `inputs shape={}`, `pool_size={k}`, `strides={s}`.",
                                fmt_batch_shape(shape)
                            )))
                        }
                    }
                }
                out.extend(shape.get(*rank..).unwrap_or(&[]));
                out
            }
            Stateless::ReLU { .. }
            | Stateless::LeakyReLU { .. }
            | Stateless::ELU { .. }
            | Stateless::Rescaling { .. }
            | Stateless::Masking { .. } => shape.to_vec(),
            Stateless::RepeatVector { n } => {
                vec![*n, shape.first().copied().unwrap_or(1)]
            }
            Stateless::Permute { dims } => dims
                .iter()
                .map(|d| shape.get(d.saturating_sub(1)).copied().unwrap_or(1))
                .collect(),
            Stateless::UpSampling2D { size } => match shape {
                [h, w, c] => vec![h.saturating_mul(size.0), w.saturating_mul(size.1), *c],
                _ => shape.to_vec(),
            },
            Stateless::ZeroPadding2D {
                padding: ((t, b), (l, r)),
            } => match shape {
                [h, w, c] => vec![h + t + b, w + l + r, *c],
                _ => shape.to_vec(),
            },
        })
    }
}

/// `(a, b)` of a 2D layer, `(a,)` of a 1D one, as Keras keeps them.
fn sizes(rank: usize, p: (usize, usize)) -> serde_json::Value {
    if rank == 1 {
        json!([p.0])
    } else {
        json!([p.0, p.1])
    }
}

/// The layer-specific part of `get_config()`, as Keras 3.15 writes it.
pub fn config_json(s: &Stateless) -> serde_json::Value {
    match s {
        Stateless::GlobalPool { keepdims, .. } => {
            json!({"data_format": "channels_last", "keepdims": keepdims})
        }
        Stateless::Pool {
            rank,
            pool_size,
            strides,
            padding,
            ..
        } => json!({"pool_size": sizes(*rank, *pool_size), "padding": padding.keras_name(),
            "strides": sizes(*rank, *strides), "data_format": "channels_last"}),
        Stateless::ReLU {
            max_value,
            negative_slope,
            threshold,
        } => json!({"max_value": max_value, "negative_slope": negative_slope,
            "threshold": threshold}),
        Stateless::LeakyReLU { negative_slope } => json!({ "negative_slope": negative_slope }),
        Stateless::ELU { alpha } => json!({ "alpha": alpha }),
        Stateless::Rescaling { scale, offset } => json!({"scale": scale, "offset": offset}),
        Stateless::RepeatVector { n } => json!({ "n": n }),
        Stateless::Permute { dims } => json!({ "dims": dims }),
        Stateless::UpSampling2D { size } => json!({"size": [size.0, size.1],
            "data_format": "channels_last", "interpolation": "nearest"}),
        Stateless::ZeroPadding2D {
            padding: ((t, b), (l, r)),
        } => json!({"padding": [[t, b], [l, r]], "data_format": "channels_last"}),
        Stateless::Masking { mask_value } => json!({ "mask_value": mask_value }),
    }
}

/// The layer a saved config of class `class` describes (`None` for another class): the
/// inverse of [`config_json`], Keras's defaults for what it leaves out.
pub fn from_config(class: &str, c: &serde_json::Value) -> Option<KResult<Stateless>> {
    let f = |k: &str, d: f64| c.get(k).and_then(serde_json::Value::as_f64).unwrap_or(d);
    let sizes = |k: &str| -> Vec<usize> {
        match c.get(k) {
            Some(serde_json::Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_u64().map(|v| v as usize))
                .collect(),
            Some(v) => v.as_u64().map(|v| vec![v as usize]).unwrap_or_default(),
            None => vec![],
        }
    };
    let pair = |v: &[usize], d: (usize, usize)| match v {
        [a] => (*a, *a),
        [a, b, ..] => (*a, *b),
        [] => d,
    };
    let keepdims = c
        .get("keepdims")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let global = |max, rank| Stateless::GlobalPool {
        max,
        rank,
        keepdims,
    };
    let window = |max: bool, rank: usize| -> KResult<Stateless> {
        let pool = pair(&sizes("pool_size"), (2, 2));
        let pool = if rank == 1 { (pool.0, 1) } else { pool };
        let strides = match sizes("strides").as_slice() {
            [] => pool,
            s => pair(s, pool),
        };
        let strides = if rank == 1 { (strides.0, 1) } else { strides };
        let padding = c
            .get("padding")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("valid");
        Ok(Stateless::Pool {
            max,
            rank,
            pool_size: pool,
            strides,
            padding: Padding::parse(padding)?,
        })
    };
    Some(Ok(match class {
        "GlobalAveragePooling1D" => global(false, 1),
        "GlobalAveragePooling2D" => global(false, 2),
        "GlobalMaxPooling1D" => global(true, 1),
        "GlobalMaxPooling2D" => global(true, 2),
        "MaxPooling1D" => return Some(window(true, 1)),
        "AveragePooling1D" => return Some(window(false, 1)),
        "AveragePooling2D" => return Some(window(false, 2)),
        "ReLU" => Stateless::ReLU {
            max_value: c.get("max_value").and_then(serde_json::Value::as_f64),
            negative_slope: f("negative_slope", 0.0),
            threshold: f("threshold", 0.0),
        },
        "LeakyReLU" => Stateless::LeakyReLU {
            negative_slope: f("negative_slope", 0.3),
        },
        "ELU" => Stateless::ELU {
            alpha: f("alpha", 1.0),
        },
        "Rescaling" => Stateless::Rescaling {
            scale: f("scale", 1.0),
            offset: f("offset", 0.0),
        },
        "RepeatVector" => Stateless::RepeatVector {
            n: sizes("n").first().copied().unwrap_or(1),
        },
        "Permute" => Stateless::Permute {
            dims: sizes("dims"),
        },
        "UpSampling2D" => Stateless::UpSampling2D {
            size: pair(&sizes("size"), (2, 2)),
        },
        "Masking" => Stateless::Masking {
            mask_value: f("mask_value", 0.0),
        },
        "ZeroPadding2D" => {
            let rows: Vec<Vec<usize>> = c
                .get("padding")
                .and_then(serde_json::Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|p| match p {
                            serde_json::Value::Array(q) => q
                                .iter()
                                .filter_map(|v| v.as_u64().map(|v| v as usize))
                                .collect(),
                            v => v.as_u64().map(|v| vec![v as usize; 2]).unwrap_or_default(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let side = |i: usize| pair(rows.get(i).map_or(&[][..], |r| r.as_slice()), (1, 1));
            Stateless::ZeroPadding2D {
                padding: (side(0), side(1)),
            }
        }
        _ => return None,
    }))
}

/// The class names [`from_config`] reads.
pub const CLASSES: &[&str] = &[
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "MaxPooling1D",
    "AveragePooling1D",
    "AveragePooling2D",
    "ReLU",
    "LeakyReLU",
    "ELU",
    "Rescaling",
    "RepeatVector",
    "Permute",
    "UpSampling2D",
    "ZeroPadding2D",
    "Masking",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn every_kind() -> Vec<Stateless> {
        let mut out = vec![];
        for (max, rank, keepdims) in [(false, 1, false), (true, 2, true), (true, 1, true)] {
            out.push(Stateless::GlobalPool {
                max,
                rank,
                keepdims,
            });
        }
        for (max, rank, pool_size, strides, padding) in [
            (false, 1, (3, 1), (2, 1), Padding::Same),
            (true, 1, (2, 1), (1, 1), Padding::Valid),
            (false, 2, (2, 3), (1, 2), Padding::Valid),
        ] {
            out.push(Stateless::Pool {
                max,
                rank,
                pool_size,
                strides,
                padding,
            });
        }
        out.extend([
            Stateless::ReLU {
                max_value: Some(6.0),
                negative_slope: 0.1,
                threshold: 0.5,
            },
            Stateless::ReLU {
                max_value: None,
                negative_slope: 0.0,
                threshold: 0.0,
            },
            Stateless::LeakyReLU {
                negative_slope: 0.2,
            },
            Stateless::ELU { alpha: 0.5 },
            Stateless::Rescaling {
                scale: 1.0 / 255.0,
                offset: -1.0,
            },
            Stateless::RepeatVector { n: 4 },
            Stateless::Permute {
                dims: vec![2, 3, 1],
            },
            Stateless::UpSampling2D { size: (1, 3) },
            Stateless::ZeroPadding2D {
                padding: ((1, 0), (0, 2)),
            },
            Stateless::Masking { mask_value: 1.5 },
        ]);
        out
    }

    #[test]
    fn a_saved_config_reads_back_as_the_same_layer() {
        for s in every_kind() {
            let back = from_config(s.class_name(), &config_json(&s));
            assert_eq!(back.and_then(Result::ok), Some(s.clone()), "{s:?}");
            assert!(CLASSES.contains(&s.class_name()));
        }
        assert!(from_config("Dense", &json!({})).is_none());
    }

    #[test]
    fn shapes_follow_keras() {
        let gap = Stateless::GlobalPool {
            max: false,
            rank: 2,
            keepdims: true,
        };
        assert_eq!(gap.out_shape("g", &[5, 6, 3]).ok(), Some(vec![1, 1, 3]));
        let avg = Stateless::Pool {
            max: false,
            rank: 1,
            pool_size: (3, 1),
            strides: (2, 1),
            padding: Padding::Same,
        };
        assert_eq!(avg.out_shape("a", &[7, 3]).ok(), Some(vec![4, 3]));
        let p = Stateless::Permute { dims: vec![2, 1] };
        assert_eq!(p.out_shape("p", &[3, 5]).ok(), Some(vec![5, 3]));
        let e = Stateless::RepeatVector { n: 2 }.out_shape("repeat_vector", &[3, 4]);
        assert_eq!(
            e.map_err(|e| e.to_string()).err().as_deref(),
            Some(
                "Input 0 of layer \"repeat_vector\" is incompatible with the layer: expected \
                 ndim=2, found ndim=3. Full shape received: (None, 3, 4)"
            )
        );
    }
}
