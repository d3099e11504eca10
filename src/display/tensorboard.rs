//! The figure `%tensorboard` shows in place of TensorBoard's Scalars tab: one subplot per
//! logged tag (`epoch_loss`, `batch_mae`, ...), in tag order, two to a row, with one line
//! per run (`train`, `validation`) in the default colour cycle and a legend. It draws what
//! it is given; reading event files is the caller's.

use super::plot::{Axes, Figure, LineStyle, Series};

/// One run's scalars: `(tag, step, value)` in the order they were logged.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub name: String,
    pub scalars: Vec<(String, i64, f64)>,
}

/// The grid of plots; a tag logged twice at one step keeps its last value, as TensorBoard
/// shows the latest write.
pub fn scalar_figure(runs: &[Run]) -> Figure {
    let mut tags: Vec<&str> = runs
        .iter()
        .flat_map(|r| r.scalars.iter().map(|(t, _, _)| t.as_str()))
        .collect();
    tags.sort_unstable();
    tags.dedup();
    let ncols = tags.len().clamp(1, 2);
    let nrows = tags.len().div_ceil(2).max(1);
    let mut fig = Figure::grid(
        (6.0 * ncols as f64, 3.6 * nrows as f64),
        100.0,
        nrows,
        ncols,
    );
    for (ax, tag) in fig.axes.iter_mut().zip(&tags) {
        *ax = tag_axes(tag, runs);
    }
    fig
}

fn tag_axes(tag: &str, runs: &[Run]) -> Axes {
    let mut ax = Axes {
        title: tag.to_string(),
        xlabel: "step".into(),
        grid: true,
        ..Axes::default()
    };
    for run in runs {
        let mut points: Vec<(i64, f64)> = vec![];
        for (t, step, v) in &run.scalars {
            if t != tag {
                continue;
            }
            match points.iter_mut().find(|(s, _)| s == step) {
                Some(p) => p.1 = *v,
                None => points.push((*step, *v)),
            }
        }
        // Every run takes its colour from the cycle, drawn or not, so a run keeps its
        // colour in every subplot.
        let color = ax.cycle_color();
        if points.is_empty() {
            continue;
        }
        points.sort_by_key(|(s, _)| *s);
        ax.series.push(Series::Line {
            x: points.iter().map(|(s, _)| *s as f64).collect(),
            y: points.iter().map(|(_, v)| *v).collect(),
            color,
            style: LineStyle::Solid,
            marker: None,
            width: 1.5,
            label: Some(run.name.clone()),
        });
    }
    ax.legend = true;
    ax
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, scalars: &[(&str, i64, f64)]) -> Run {
        Run {
            name: name.into(),
            scalars: scalars
                .iter()
                .map(|(t, s, v)| (t.to_string(), *s, *v))
                .collect(),
        }
    }

    #[test]
    fn one_subplot_per_tag_and_one_line_per_run() {
        let train = run(
            "train",
            &[
                ("epoch_loss", 1, 0.5),
                ("epoch_loss", 0, 0.9),
                ("epoch_mae", 0, 0.7),
            ],
        );
        let val = run(
            "validation",
            &[("epoch_loss", 0, 1.0), ("epoch_loss", 0, 0.8)],
        );
        let fig = scalar_figure(&[train, val]);
        assert_eq!((fig.nrows, fig.ncols), (1, 2));
        let titles: Vec<&str> = fig.axes.iter().map(|a| a.title.as_str()).collect();
        assert_eq!(titles, ["epoch_loss", "epoch_mae"]);
        let Series::Line { x, y, label, .. } = &fig.axes[0].series[0] else {
            panic!("a line")
        };
        assert_eq!(
            (x.as_slice(), y.as_slice()),
            (&[0.0, 1.0][..], &[0.9, 0.5][..])
        );
        assert_eq!(label.as_deref(), Some("train"));
        let Series::Line { y, .. } = &fig.axes[0].series[1] else {
            panic!("a line")
        };
        assert_eq!(y, &[0.8]);
        assert_eq!(fig.axes[1].series.len(), 1);
    }
}
