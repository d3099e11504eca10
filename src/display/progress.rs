//! Keras 3's training progress bar as text: the `Epoch 1/5` header, the per-step line with
//! its 20-cell bar, ETA or elapsed time, time per step and metric averages, and the
//! one-line-per-epoch form of `verbose=2`. [`ProgressBar`] is a small state machine fed
//! with the step, the logs and the elapsed time (passed in, so tests are deterministic);
//! it throttles redraws and renders for a notebook (a MIME bundle to display and update in
//! place) or for a terminal (`\r` redraws with Keras's colours). It computes no metric and
//! knows neither the protocol nor the language: the caller emits what it returns.

use std::time::Duration;

use super::{html_escape, MimeBundle};

/// Cells in the bar, as Keras draws it.
const BAR_WIDTH: usize = 20;

/// Where the bar is drawn, which decides the throttle and the escape codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Jupyter: a display that is updated in place; plain text carries no escape codes.
    Notebook,
    /// A terminal (`mirror-kernel exec`): `\r` redraws with ANSI styles, as Keras prints.
    Terminal,
}

/// One frame of the bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The line as Keras prints it, without escape codes or redraw characters.
    pub plain: String,
    /// What to write to a terminal: `\r`, the styled line, padding over a longer previous
    /// line, and a newline when the bar is finished.
    pub terminal: String,
    /// A small HTML rendering with a drawn bar, for front ends that show `text/html`.
    pub html: String,
    /// True for the last frame of the epoch.
    pub finished: bool,
}

impl Rendered {
    /// The bundle a notebook displays (`text/plain` and `text/html`).
    pub fn bundle(&self) -> MimeBundle {
        let mut b = super::plain(self.plain.clone());
        b.insert(
            "text/html".into(),
            serde_json::Value::String(self.html.clone()),
        );
        b
    }
}

/// Keras prints `Epoch 3/10` before each epoch, but only when there is more than one.
pub fn epoch_header(epoch: usize, epochs: usize) -> Option<String> {
    (epochs > 1).then(|| format!("Epoch {}/{}", epoch + 1, epochs))
}

/// The order Keras shows metrics in: training logs sorted by name (Keras sorts them when it
/// collects the metric results), then validation logs, also sorted, appended at epoch end.
pub fn keras_order(logs: &[(String, f64)]) -> Vec<(String, f64)> {
    let mut train: Vec<_> = logs
        .iter()
        .filter(|(k, _)| !k.starts_with("val_"))
        .cloned()
        .collect();
    let mut val: Vec<_> = logs
        .iter()
        .filter(|(k, _)| k.starts_with("val_"))
        .cloned()
        .collect();
    train.sort_by(|a, b| a.0.cmp(&b.0));
    val.sort_by(|a, b| a.0.cmp(&b.0));
    train.extend(val);
    train
}

/// A metric value as Keras formats it: four decimals, or scientific notation for values
/// at or below 1e-3 in magnitude.
pub fn format_metric(v: f64) -> String {
    if v.abs() > 1e-3 {
        format!("{v:.4}")
    } else {
        python_exp(v)
    }
}

/// Python's `%.4e`: a mantissa with four decimals and an exponent of at least two digits.
fn python_exp(v: f64) -> String {
    let s = format!("{v:.4e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// Time per step as Keras prints it: whole seconds, milliseconds or microseconds.
pub fn format_step_time(seconds: f64, unit: &str) -> String {
    if seconds >= 1.0 || seconds == 0.0 {
        format!("{}s/{unit}", py_round(seconds))
    } else if seconds >= 1e-3 {
        format!("{}ms/{unit}", py_round(seconds * 1e3))
    } else {
        format!("{}us/{unit}", py_round(seconds * 1e6))
    }
}

/// The remaining time as Keras shows it while an epoch runs: `7s`, `1:05`, `1:02:03`.
pub fn format_eta(eta: f64) -> String {
    let whole = eta.max(0.0).floor() as u64;
    if eta > 3600.0 {
        format!(
            "{}:{:02}:{:02}",
            whole / 3600,
            (whole % 3600) / 60,
            whole % 60
        )
    } else if eta > 60.0 {
        format!("{}:{:02}", whole / 60, whole % 60)
    } else {
        format!("{whole}s")
    }
}

/// `%.0f` rounds half to even, as Python does.
fn py_round(x: f64) -> String {
    format!("{:.0}", x.round_ties_even())
}

/// The state of one epoch's bar.
#[derive(Debug, Clone)]
pub struct ProgressBar {
    total: Option<usize>,
    verbose: u8,
    mode: Mode,
    unit: String,
    /// Metric names in first-seen order, with their latest values.
    values: Vec<(String, f64)>,
    /// Elapsed time when step 1 finished: later step times leave out the first step,
    /// which carries compilation and warm-up, as Keras does.
    time_after_first_step: Option<f64>,
    last_update: Option<f64>,
    /// Printed width of the previous terminal line, padded over when the next is shorter.
    prev_width: usize,
    /// Shortest interval between two redraws, in seconds.
    interval: f64,
}

impl ProgressBar {
    /// A bar for `total` steps (`None` when the dataset has no known length); `verbose` is
    /// Keras's argument (0 silent, 1 a live bar, 2 one line per epoch).
    pub fn new(total: Option<usize>, verbose: u8, mode: Mode) -> ProgressBar {
        ProgressBar {
            total: total.filter(|t| *t > 0),
            verbose,
            mode,
            unit: "step".into(),
            values: vec![],
            time_after_first_step: None,
            last_update: None,
            prev_width: 0,
            // Keras redraws a terminal at most every 0.05 s; a notebook display is updated
            // over the network, so at most ten times a second.
            interval: match mode {
                Mode::Notebook => 0.1,
                Mode::Terminal => 0.05,
            },
        }
    }

    /// The unit shown in the time per unit (`step` in `fit`, `sample` elsewhere).
    pub fn with_unit(mut self, unit: &str) -> ProgressBar {
        self.unit = unit.to_string();
        self
    }

    /// Steps done so far with the running logs (`step` counts from 1). Returns the frame
    /// to show, or `None` when throttled or when `verbose` shows nothing mid-epoch.
    pub fn update(
        &mut self,
        step: usize,
        logs: &[(String, f64)],
        elapsed: Duration,
    ) -> Option<Rendered> {
        // Keras never finishes the bar on a step update, even on the last step: the epoch's
        // end (with validation logs) does, through `finish`.
        self.render(step, logs, elapsed, false)
    }

    /// The epoch's last frame, with the final logs (validation metrics included). Never
    /// throttled; `None` only for `verbose=0`.
    pub fn finish(
        &mut self,
        step: usize,
        logs: &[(String, f64)],
        elapsed: Duration,
    ) -> Option<Rendered> {
        if self.total.is_none() {
            self.total = Some(step.max(1));
        }
        self.render(step, logs, elapsed, true)
    }

    fn render(
        &mut self,
        step: usize,
        logs: &[(String, f64)],
        elapsed: Duration,
        finalize: bool,
    ) -> Option<Rendered> {
        for (k, v) in logs {
            match self.values.iter_mut().find(|(name, _)| name == k) {
                Some(slot) => slot.1 = *v,
                None => self.values.push((k.clone(), *v)),
            }
        }
        let now = elapsed.as_secs_f64();
        let per_step = self.step_duration(step, now);
        match self.verbose {
            1 => {
                let throttled = self
                    .last_update
                    .is_some_and(|last| now - last < self.interval);
                if throttled && !finalize {
                    return None;
                }
                self.last_update = Some(now);
                Some(self.live_line(step, now, per_step, finalize))
            }
            2 if finalize && self.total.is_some() => {
                self.last_update = Some(now);
                Some(self.epoch_line(step, now, per_step))
            }
            _ => None,
        }
    }

    fn step_duration(&mut self, step: usize, now: f64) -> f64 {
        if step == 0 {
            return 0.0;
        }
        let per = match self.time_after_first_step {
            Some(t) if step > 1 => (now - t) / (step - 1) as f64,
            _ => now / step as f64,
        };
        if step == 1 {
            self.time_after_first_step = Some(now);
        }
        per
    }

    fn counter(&self, step: usize) -> String {
        match self.total {
            Some(t) => {
                let digits = t.to_string().len();
                format!("{step:>digits$}/{t}")
            }
            None => format!("{step:>7}/Unknown"),
        }
    }

    /// ` - name: value` for every metric. Keras's one-line-per-epoch form tests the value
    /// itself rather than its magnitude, so negative values print in scientific notation
    /// there; `signed_threshold` reproduces that.
    fn metrics_text(&self, signed_threshold: bool) -> String {
        let mut s = String::new();
        for (k, v) in &self.values {
            let text = if signed_threshold && *v <= 1e-3 {
                python_exp(*v)
            } else {
                format_metric(*v)
            };
            s.push_str(&format!(" - {k}: {text}"));
        }
        s
    }

    fn live_line(&mut self, step: usize, now: f64, per_step: f64, finalize: bool) -> Rendered {
        let counter = self.counter(step);
        let done = self
            .total
            // Keras computes the filled cells in floating point; doing the same keeps the
            // rounding identical at every step.
            .map(|t| ((BAR_WIDTH as f64 * (step.min(t) as f64 / t as f64)) as usize).min(BAR_WIDTH))
            .unwrap_or(0);
        let time = match self.total {
            Some(t) if !finalize => format_eta(per_step * t.saturating_sub(step) as f64),
            _ => format!("{}s", py_round(now)),
        };
        let tail = format!(
            " {}{}",
            format_step_time(per_step, &self.unit),
            self.metrics_text(false)
        );
        let (plain, styled) = match self.total {
            Some(_) => {
                let bar_done = "━".repeat(done);
                let bar_rest = "━".repeat(BAR_WIDTH - done);
                let plain = format!("{counter} {bar_done}{bar_rest} {time}{tail}");
                let mut styled = format!("\x1b[1m{counter}\x1b[0m ");
                if done > 0 {
                    styled.push_str(&format!("\x1b[32m{bar_done}\x1b[0m"));
                }
                styled.push_str(&format!("\x1b[37m{bar_rest}\x1b[0m"));
                styled.push_str(&format!(" \x1b[1m{time}\x1b[0m{tail}"));
                (plain, styled)
            }
            None => {
                let plain = format!("{counter} {time}{tail}");
                let styled = format!("{counter} \x1b[1m{time}\x1b[0m{tail}");
                (plain, styled)
            }
        };
        let width = plain.chars().count();
        // Keras backs over the previous line, then returns to its start.
        let mut terminal = "\u{8}".repeat(self.prev_width);
        terminal.push('\r');
        terminal.push_str(&styled);
        if self.prev_width > width {
            terminal.push_str(&" ".repeat(self.prev_width - width));
        }
        if finalize {
            terminal.push('\n');
        }
        self.prev_width = width;
        let html = bar_html(&counter, done, &format!(" {time}{tail}"));
        Rendered {
            plain,
            terminal,
            html,
            finished: finalize,
        }
    }

    fn epoch_line(&self, step: usize, now: f64, per_step: f64) -> Rendered {
        let plain = format!(
            "{} - {}s - {}{}",
            self.counter(step),
            py_round(now),
            format_step_time(per_step, &self.unit),
            self.metrics_text(true)
        );
        Rendered {
            terminal: format!("{plain}\n"),
            html: format!("<pre>{}</pre>", html_escape(&plain)),
            plain,
            finished: true,
        }
    }

    /// The mode this bar was made for.
    pub fn mode(&self) -> Mode {
        self.mode
    }
}

fn bar_html(counter: &str, done: usize, rest: &str) -> String {
    let pct = done * 100 / BAR_WIDTH;
    format!(
        "<div style=\"font-family: monospace; white-space: pre\">{} \
         <span style=\"display: inline-block; width: 12em; height: 0.8em; \
         background: #d0d0d0; vertical-align: middle\"><span style=\"display: block; \
         width: {pct}%; height: 100%; background: #2ca02c\"></span></span>{}</div>",
        html_escape(counter),
        html_escape(rest)
    )
}
