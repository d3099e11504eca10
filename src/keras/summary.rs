//! The facts `model.summary()` shows, as data: one row per layer (`dense (Dense)`, output
//! shape `(None, 128)`, parameter count) and the totals. Drawing the table is the display
//! part's job; this file only computes what goes in it, as Keras 3 computes it.

use super::compile::OptimizerConfig;
use super::config::ModelConfig;
use super::error::{fmt_batch_shape, KResult};

#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// `dense (Dense)`, as the "Layer (type)" column reads.
    pub layer: String,
    pub name: String,
    pub class_name: String,
    /// `(None, 128)`.
    pub output_shape: String,
    pub params: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// `Model: "sequential"`'s name.
    pub model_name: String,
    pub rows: Vec<SummaryRow>,
    pub total_params: usize,
    pub trainable_params: usize,
    pub non_trainable_params: usize,
}

/// Rows for every layer. Keras lists the InputLayer only for functional models.
pub fn summary(config: &ModelConfig) -> KResult<Summary> {
    let plan = config.plan()?;
    let mut rows = vec![];
    if config.functional {
        rows.push(SummaryRow {
            layer: format!("{} (InputLayer)", config.input_name),
            name: config.input_name.clone(),
            class_name: "InputLayer".into(),
            output_shape: fmt_batch_shape(&config.input_shape),
            params: 0,
        });
    }
    for (i, l) in config.layers.iter().enumerate() {
        rows.push(SummaryRow {
            layer: format!("{} ({})", l.name, l.kind.class_name()),
            name: l.name.clone(),
            class_name: l.kind.class_name().into(),
            output_shape: fmt_batch_shape(&plan.out_shapes[i]),
            params: plan.layer_params(i),
        });
    }
    let total = plan.param_count();
    Ok(Summary {
        model_name: config.name.clone(),
        rows,
        total_params: total,
        trainable_params: total,
        non_trainable_params: 0,
    })
}

/// Keras's "Optimizer params" line: every slot, plus the optimizer's own scalars (the
/// step counter and the learning rate).
pub fn optimizer_param_count(opt: &OptimizerConfig, model_params: usize) -> usize {
    let slots = opt.step(opt.learning_rate, 1).slots();
    let scalars = 2;
    slots * model_params + scalars
}

/// Keras's byte formatting in the summary: `397.54 KB`, `0.00 B` (4 bytes per float32).
pub fn format_bytes(params: usize) -> String {
    let bytes = params as f64 * 4.0;
    let units = ["B", "KB", "MB", "GB", "TB"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.2} {}", units[u])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keras::config::LayerKind;

    #[test]
    fn the_mnist_mlp_summary_matches_keras() {
        let cfg = ModelConfig::sequential(
            &[784],
            vec![
                LayerKind::dense(128, "relu").expect("d"),
                LayerKind::Dropout {
                    rate: 0.2,
                    seed: None,
                },
                LayerKind::dense(10, "softmax").expect("d"),
            ],
        )
        .expect("cfg");
        let s = summary(&cfg).expect("summary");
        let rows: Vec<(&str, &str, usize)> = s
            .rows
            .iter()
            .map(|r| (r.layer.as_str(), r.output_shape.as_str(), r.params))
            .collect();
        assert_eq!(
            rows,
            [
                ("dense (Dense)", "(None, 128)", 100_480),
                ("dropout (Dropout)", "(None, 128)", 0),
                ("dense_1 (Dense)", "(None, 10)", 1_290),
            ]
        );
        assert_eq!(s.total_params, 101_770);
        assert_eq!(format_bytes(101_770), "397.54 KB");
        assert_eq!(format_bytes(0), "0.00 B");
        let adam = OptimizerConfig::parse("adam").expect("adam");
        assert_eq!(optimizer_param_count(&adam, 101_770), 203_542);
    }
}
