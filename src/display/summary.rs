//! `model.summary()` as Keras 3 prints it: the `Model: "name"` title, a box-drawn table
//! (`Layer (type)`, `Output Shape`, `Param #`, and `Connected to` for branching models)
//! laid out the way Keras sizes it through `rich`, then the parameter totals with their
//! memory sizes. Also a `text/html` table. The caller supplies plain rows; nothing here
//! knows what a layer is.

use super::{html_escape, MimeBundle};

/// The console width a Jupyter kernel reports to Keras; Keras keeps 4 columns spare, so
/// notebooks get a 76-column table.
pub const NOTEBOOK_COLUMNS: usize = 80;

/// One layer's line in the table.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub name: String,
    /// The layer's class name, e.g. `Dense`.
    pub type_name: String,
    /// The output shape as Keras writes it, e.g. `(None, 10)`, or `?` before building.
    pub output_shape: String,
    /// The parameter count; `None` for a layer that is not built yet.
    pub params: Option<u64>,
    /// `Connected to` for models that are not a plain stack (`None` for sequential ones).
    pub connected_to: Option<String>,
}

/// A parameter count and the bytes it occupies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ParamCount {
    pub count: u64,
    pub bytes: u64,
}

impl ParamCount {
    /// Float32 parameters: four bytes each.
    pub fn f32(count: u64) -> ParamCount {
        ParamCount {
            count,
            bytes: count * 4,
        }
    }
}

/// Everything `model.summary()` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub model_name: String,
    pub rows: Vec<SummaryRow>,
    pub trainable: ParamCount,
    pub non_trainable: ParamCount,
    /// Present once the model is compiled and its optimizer has built its variables.
    pub optimizer: Option<ParamCount>,
}

/// `1234567` as `1,234,567`, as Python's `{:,}` writes it.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes as Keras writes them: `268.00 B`, `397.54 KB`, `1.16 MB`.
pub fn readable_size(bytes: u64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut size = bytes as f64;
    for unit in units {
        if size / 1024.0 < 1.0 {
            return format!("{size:.2} {unit}");
        }
        size /= 1024.0;
    }
    format!("{size:.2} PB")
}

#[derive(Clone, Copy, PartialEq)]
enum Justify {
    Left,
    Right,
}

impl Summary {
    fn sequential_like(&self) -> bool {
        self.rows.iter().all(|r| r.connected_to.is_none())
    }

    fn total(&self) -> ParamCount {
        let opt = self.optimizer.unwrap_or_default();
        ParamCount {
            count: self.trainable.count + self.non_trainable.count + opt.count,
            bytes: self.trainable.bytes + self.non_trainable.bytes + opt.bytes,
        }
    }

    fn cells(&self) -> (Vec<&'static str>, Vec<Justify>, Vec<Vec<String>>) {
        let mut header = vec!["Layer (type)", "Output Shape", "Param #"];
        let mut justify = vec![Justify::Left, Justify::Left, Justify::Right];
        let seq = self.sequential_like();
        if !seq {
            header.push("Connected to");
            justify.push(Justify::Left);
        }
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let params = match r.params {
                    Some(n) => thousands(n),
                    None => "0 (unbuilt)".to_string(),
                };
                let mut cells = vec![
                    format!("{} ({})", r.name, r.type_name),
                    r.output_shape.clone(),
                    params,
                ];
                if !seq {
                    cells.push(r.connected_to.clone().unwrap_or_else(|| "-".into()));
                }
                cells
            })
            .collect();
        (header, justify, rows)
    }

    /// The text Keras prints in a notebook (an 80-column console).
    pub fn text(&self) -> String {
        self.text_for_console(NOTEBOOK_COLUMNS)
    }

    /// The text Keras prints on a console `columns` wide.
    pub fn text_for_console(&self, columns: usize) -> String {
        let (default_len, positions): (usize, &[f64]) = if self.sequential_like() {
            (88, &[0.45, 0.80, 1.0])
        } else {
            (108, &[0.3, 0.56, 0.74, 1.0])
        };
        let line_length = default_len.min(columns.saturating_sub(4)).max(20);
        let (header, justify, rows) = self.cells();
        let widths = column_widths(line_length, positions);
        let mut out = format!("Model: \"{}\"\n", self.model_name);
        out.push_str(&draw_table(&header, &justify, &rows, &widths));
        let line = |label: &str, p: ParamCount| {
            format!(
                " {label}: {} ({})\n",
                thousands(p.count),
                readable_size(p.bytes)
            )
        };
        out.push_str(&line("Total params", self.total()));
        out.push_str(&line("Trainable params", self.trainable));
        out.push_str(&line("Non-trainable params", self.non_trainable));
        if let Some(o) = self.optimizer {
            out.push_str(&line("Optimizer params", o));
        }
        out
    }

    /// An HTML table with the same content.
    pub fn html(&self) -> String {
        let (header, justify, rows) = self.cells();
        let align = |j: Justify| match j {
            Justify::Left => "left",
            Justify::Right => "right",
        };
        let mut h = format!(
            "<div><b>Model: \"{}\"</b>\n<table style=\"border-collapse: collapse\">\n<thead><tr>",
            html_escape(&self.model_name)
        );
        for (name, j) in header.iter().zip(&justify) {
            h.push_str(&format!(
                "<th style=\"text-align: {}\">{}</th>",
                align(*j),
                html_escape(name)
            ));
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for row in rows {
            h.push_str("<tr>");
            for (cell, j) in row.iter().zip(&justify) {
                h.push_str(&format!(
                    "<td style=\"text-align: {}; font-family: monospace\">{}</td>",
                    align(*j),
                    html_escape(cell)
                ));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody></table>\n");
        let mut line = |label: &str, p: ParamCount| {
            h.push_str(&format!(
                "<div><b>{label}:</b> {} ({})</div>\n",
                thousands(p.count),
                readable_size(p.bytes)
            ))
        };
        line("Total params", self.total());
        line("Trainable params", self.trainable);
        line("Non-trainable params", self.non_trainable);
        if let Some(o) = self.optimizer {
            line("Optimizer params", o);
        }
        h.push_str("</div>");
        h
    }

    /// `text/plain` and `text/html`.
    pub fn bundle(&self) -> MimeBundle {
        let mut b = super::plain(self.text());
        b.insert("text/html".into(), serde_json::Value::String(self.html()));
        b
    }
}

/// Content widths of the columns: Keras cuts the line at the given fractions, and `rich`
/// then shrinks the columns (each padded by one space a side, with a border between) to
/// fit the line, taking the excess from every column in turn with Python's rounding.
fn column_widths(line_length: usize, positions: &[f64]) -> Vec<usize> {
    let mut widths = vec![];
    let mut current = 0usize;
    for p in positions {
        let edge = (p * line_length as f64) as usize;
        widths.push(edge.saturating_sub(current).max(1) + 2);
        current = edge.max(current);
    }
    let available = line_length.saturating_sub(widths.len() + 1);
    let total: usize = widths.iter().sum();
    if total > available {
        let mut remaining = (total - available) as f64;
        let mut ratio = widths.len() as f64;
        for w in widths.iter_mut() {
            let cut = ((remaining / ratio).round_ties_even() as usize).min(*w);
            *w -= cut;
            remaining -= cut as f64;
            ratio -= 1.0;
        }
    }
    widths
        .into_iter()
        .map(|w| w.saturating_sub(2).max(1))
        .collect()
}

/// Word-wraps `text` to `width` columns as `rich` does: break at spaces, and fold words
/// longer than a line.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let mut word: Vec<char> = word.chars().collect();
        let needed = if line.is_empty() {
            word.len()
        } else {
            line.chars().count() + 1 + word.len()
        };
        if needed <= width {
            if !line.is_empty() {
                line.push(' ');
            }
            line.extend(word);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > width {
            lines.push(word.drain(..width).collect());
        }
        line = word.into_iter().collect();
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

fn rule(widths: &[usize], left: &str, fill: &str, mid: &str, right: &str) -> String {
    let parts: Vec<String> = widths.iter().map(|w| fill.repeat(w + 2)).collect();
    format!("{left}{}{right}\n", parts.join(mid))
}

fn draw_row(cells: &[String], justify: &[Justify], widths: &[usize], bar: &str) -> String {
    let wrapped: Vec<Vec<String>> = cells.iter().zip(widths).map(|(c, w)| wrap(c, *w)).collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
    let mut out = String::new();
    for i in 0..height {
        out.push_str(bar);
        for ((lines, w), j) in wrapped.iter().zip(widths).zip(justify) {
            let text = lines.get(i).map(String::as_str).unwrap_or("");
            let w = *w;
            match j {
                Justify::Left => out.push_str(&format!(" {text:<w$} ")),
                Justify::Right => out.push_str(&format!(" {text:>w$} ")),
            }
            out.push_str(bar);
        }
        out.push('\n');
    }
    out
}

fn draw_table(
    header: &[&str],
    justify: &[Justify],
    rows: &[Vec<String>],
    widths: &[usize],
) -> String {
    let mut out = rule(widths, "┏", "━", "┳", "┓");
    let head: Vec<String> = header.iter().map(|s| s.to_string()).collect();
    out.push_str(&draw_row(&head, justify, widths, "┃"));
    if rows.is_empty() {
        out.push_str(&rule(widths, "┗", "━", "┻", "┛"));
        return out;
    }
    out.push_str(&rule(widths, "┡", "━", "╇", "┩"));
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push_str(&rule(widths, "├", "─", "┼", "┤"));
        }
        out.push_str(&draw_row(row, justify, widths, "│"));
    }
    out.push_str(&rule(widths, "└", "─", "┴", "┘"));
    out
}
