//! The sink for `mirror-kernel exec`: stream text goes straight to stdout and stderr, a
//! display that is later updated in place (a training progress bar) is redrawn on one line
//! with `\r`, rich values print their `text/plain`, and images, which a terminal cannot
//! show, are replaced by a one-line note.

use std::io::Write;
use std::sync::Mutex;

use crate::display::MimeBundle;
use crate::session::{Output, Sink, StreamName};

#[derive(Default)]
struct Live {
    /// Printed width of the line being redrawn, when one is open.
    open: Option<usize>,
}

/// Writes a running script's output to the terminal.
#[derive(Default)]
pub struct TerminalSink {
    live: Mutex<Live>,
}

fn plain_text(data: &MimeBundle) -> Option<String> {
    data.get("text/plain")
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

fn has_image(data: &MimeBundle) -> bool {
    data.keys().any(|k| k.starts_with("image/"))
}

impl TerminalSink {
    fn out(&self, s: &str) {
        let mut o = std::io::stdout().lock();
        // A closed stdout (a pipe to `head`) must not kill the script.
        let _ = o.write_all(s.as_bytes());
        let _ = o.flush();
    }

    fn err(&self, s: &str) {
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(s.as_bytes());
        let _ = e.flush();
    }

    /// Ends a line left open by an in-place display before anything else prints.
    fn close_live(&self, live: &mut Live) {
        if live.open.take().is_some() {
            self.out("\n");
        }
    }

    fn show(&self, data: &MimeBundle, live: &mut Live) {
        self.close_live(live);
        let text = plain_text(data).unwrap_or_default();
        if has_image(data) {
            let what = if text.is_empty() {
                "an image"
            } else {
                text.as_str()
            };
            self.err(&format!(
                "[{what} is not shown in a terminal; save it with plt.savefig('plot.png')]\n"
            ));
        } else if !text.is_empty() {
            self.out(&format!("{text}\n"));
        }
    }

    /// Ends the last open line; call when the script is done.
    pub fn finish(&self) {
        if let Ok(mut live) = self.live.lock() {
            self.close_live(&mut live);
        }
    }
}

impl Sink for TerminalSink {
    fn emit(&self, output: Output) {
        let Ok(mut live) = self.live.lock() else {
            return;
        };
        match output {
            Output::Stream { name, text } => {
                self.close_live(&mut live);
                match name {
                    StreamName::Stdout => self.out(&text),
                    StreamName::Stderr => self.err(&text),
                }
            }
            Output::DisplayData {
                data,
                display_id: Some(_),
                ..
            } if !has_image(&data) => {
                self.close_live(&mut live);
                let text = plain_text(&data).unwrap_or_default();
                if text.contains('\n') {
                    self.out(&format!("{text}\n"));
                } else {
                    self.out(&text);
                    live.open = Some(text.chars().count());
                }
            }
            Output::UpdateDisplayData { data, .. } if !has_image(&data) => {
                let text = plain_text(&data).unwrap_or_default();
                match live.open {
                    Some(prev) if !text.contains('\n') => {
                        let width = text.chars().count();
                        let pad = " ".repeat(prev.saturating_sub(width));
                        self.out(&format!("\r{text}{pad}"));
                        live.open = Some(width);
                    }
                    _ => self.show(&data, &mut live),
                }
            }
            Output::DisplayData { data, .. } | Output::UpdateDisplayData { data, .. } => {
                self.show(&data, &mut live)
            }
            // A script, unlike a cell, never prints the value of its last expression.
            Output::ExecuteResult { .. } | Output::ClearOutput { .. } => {}
            Output::Error(e) => {
                self.close_live(&mut live);
                self.err(&format!("{}\n", e.traceback.join("\n")));
            }
        }
    }

    fn input(&self, prompt: &str, _password: bool) -> Option<String> {
        if let Ok(mut live) = self.live.lock() {
            self.close_live(&mut live);
        }
        self.out(prompt);
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
        }
    }
}
