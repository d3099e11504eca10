//! What `mirror-kernel run NB` shows on the terminal while a notebook runs, as a person
//! running a notebook from a shell wants to see it: each code cell's number and first line
//! as it starts, then its time, the last line of a training progress bar it drew, and any
//! error with its traceback. The notebook's outputs themselves go to the written notebook,
//! not here.

use std::io::Write;
use std::time::Duration;

use super::terminal::strip_ansi;
use crate::cell::{ErrorInfo, Output};

/// One step of a notebook run, reported as it happens.
#[derive(Debug, Clone, Copy)]
pub enum CellEvent<'a> {
    /// A code cell is about to run: its 1-based number among the code cells, their count,
    /// and its source.
    Started {
        number: usize,
        total: usize,
        source: &'a str,
    },
    /// The cell ended: how long it took, what it emitted, and its error if it raised.
    Finished {
        elapsed: Duration,
        outputs: &'a [Output],
        error: Option<&'a ErrorInfo>,
    },
}

/// The widest first line shown for a cell.
const LINE_WIDTH: usize = 60;

/// The first line of code of a cell (or, in a cell of comments only, its first comment),
/// cut to [`LINE_WIDTH`] characters.
fn first_line(source: &str) -> String {
    let mut lines = source
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty());
    let first = lines.clone().next().unwrap_or("");
    let line = lines
        .find(|l| !l.trim_start().starts_with('#'))
        .unwrap_or(first);
    if line.chars().count() > LINE_WIDTH {
        let cut: String = line.chars().take(LINE_WIDTH - 1).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// The last line of the last display that was updated in place (a `fit` progress bar)
/// among a cell's outputs.
fn last_progress_line(outputs: &[Output]) -> Option<String> {
    outputs.iter().rev().find_map(|o| {
        let data = match o {
            Output::DisplayData {
                data,
                display_id: Some(_),
                ..
            }
            | Output::UpdateDisplayData { data, .. } => data,
            _ => return None,
        };
        let text = data.get("text/plain")?.as_str()?;
        text.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| strip_ansi(l).trim_end().to_string())
    })
}

/// Writes [`CellEvent`]s as lines of text.
pub struct RunProgress<W: Write> {
    out: W,
    /// Keep the ANSI colour of tracebacks (on a terminal without `NO_COLOR`).
    colour: bool,
    /// Width of the `[n/total]` tag, so later lines indent under the cell's text.
    indent: usize,
}

impl<W: Write> RunProgress<W> {
    pub fn new(out: W, colour: bool) -> Self {
        RunProgress {
            out,
            colour,
            indent: 0,
        }
    }

    /// Shows one event; a closed stream (a pipe to `head`) is ignored.
    pub fn show(&mut self, event: CellEvent<'_>) {
        let text = match event {
            CellEvent::Started {
                number,
                total,
                source,
            } => {
                let tag = format!("[{number}/{total}]");
                self.indent = tag.chars().count() + 1;
                format!("{tag} {}", first_line(source))
            }
            CellEvent::Finished {
                elapsed,
                outputs,
                error,
            } => {
                let pad = " ".repeat(self.indent);
                let mut text = format!("  ({:.1} s)\n", elapsed.as_secs_f64());
                if let Some(line) = last_progress_line(outputs) {
                    text.push_str(&format!("{pad}{line}\n"));
                }
                if let Some(e) = error {
                    let traceback = e.traceback.join("\n");
                    let traceback = if self.colour {
                        traceback
                    } else {
                        strip_ansi(&traceback)
                    };
                    text.push_str(&format!("{traceback}\n"));
                }
                text
            }
        };
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::plain;

    fn shown(events: &[CellEvent<'_>]) -> String {
        let mut buf = Vec::new();
        let mut p = RunProgress::new(&mut buf, false);
        for e in events {
            p.show(*e);
        }
        String::from_utf8(buf).unwrap_or_default()
    }

    #[test]
    fn a_cell_shows_its_first_line_time_last_bar_and_plain_traceback() {
        let bar = vec![
            Output::DisplayData {
                data: plain("Epoch 1/2\n1/4 ━━"),
                metadata: Default::default(),
                display_id: Some("p".into()),
            },
            Output::UpdateDisplayData {
                data: plain("Epoch 2/2\n4/4 ━━━━ 0s 2ms/step - loss: 0.5000\n"),
                metadata: Default::default(),
                display_id: "p".into(),
            },
            Output::Stream {
                name: crate::cell::StreamName::Stdout,
                text: "after\n".into(),
            },
        ];
        let err = ErrorInfo {
            ename: "ValueError".into(),
            evalue: "bad".into(),
            traceback: vec!["\x1b[0;31mValueError\x1b[0m: bad".into()],
        };
        let text = shown(&[
            CellEvent::Started {
                number: 2,
                total: 10,
                source: "\n# train\nhistory = model.fit(x, y, epochs=2)\n",
            },
            CellEvent::Finished {
                elapsed: Duration::from_millis(1300),
                outputs: &bar,
                error: None,
            },
            CellEvent::Started {
                number: 3,
                total: 10,
                source: "raise ValueError('bad')",
            },
            CellEvent::Finished {
                elapsed: Duration::from_millis(40),
                outputs: &[],
                error: Some(&err),
            },
        ]);
        assert_eq!(
            text,
            "[2/10] history = model.fit(x, y, epochs=2)  (1.3 s)\n       4/4 ━━━━ 0s 2ms/step - loss: 0.5000\n\
             [3/10] raise ValueError('bad')  (0.0 s)\nValueError: bad\n"
        );
    }

    #[test]
    fn long_first_lines_are_cut() {
        let long = "x = ".to_string() + &"1 + ".repeat(30);
        assert_eq!(first_line(&long).chars().count(), LINE_WIDTH);
        assert!(first_line(&long).ends_with('…'));
    }
}
