//! The sink for `mirror-kernel exec`: stream text goes straight to stdout and stderr, a
//! display that is later updated in place (a training progress bar) is redrawn on one line
//! with `\r`, rich values print their `text/plain`, and images, which a terminal cannot
//! show, are replaced by a one-line note. Colour (the ANSI codes IPython puts in
//! tracebacks) reaches a stream only when it is a terminal and `NO_COLOR` is unset, so a
//! script's output redirected to a file or a pipe is plain text.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use crate::cell::{Output, Sink, StreamName};
use crate::display::MimeBundle;

#[derive(Default)]
struct Live {
    /// Printed width of the line being redrawn, when one is open.
    open: Option<usize>,
}

type Writer = Box<dyn Write + Send>;

/// Writes a running script's output to the terminal.
pub struct TerminalSink {
    live: Mutex<Live>,
    stdout: Mutex<Writer>,
    stderr: Mutex<Writer>,
    /// Whether ANSI colour codes are kept on stdout and on stderr.
    colour: (bool, bool),
}

impl Default for TerminalSink {
    fn default() -> TerminalSink {
        let colour = (
            colour_wanted(std::io::stdout().is_terminal()),
            colour_wanted(std::io::stderr().is_terminal()),
        );
        TerminalSink::new(Box::new(std::io::stdout()), Box::new(std::io::stderr()))
            .with_colour(colour.0, colour.1)
    }
}

/// Colour for a stream: only on a terminal, and never when `NO_COLOR` is set to anything
/// but the empty string (the convention of no-color.org).
pub fn colour_wanted(is_terminal: bool) -> bool {
    is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// `text` without its ANSI escape sequences (CSI `ESC [ … final`, and two-byte `ESC x`).
pub fn strip_ansi(text: &str) -> String {
    if !text.contains('\x1b') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        // A control sequence runs to its final byte, in '@'..='~'; any other escape is
        // two characters.
        if chars.next() == Some('[') {
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out
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
    /// A sink writing to the given streams (the process's own by default).
    pub fn new(stdout: Writer, stderr: Writer) -> TerminalSink {
        TerminalSink {
            live: Mutex::new(Live::default()),
            stdout: Mutex::new(stdout),
            stderr: Mutex::new(stderr),
            colour: (false, false),
        }
    }

    /// Keeps (or drops) colour codes on stdout and stderr; a new sink drops them.
    pub fn with_colour(mut self, stdout: bool, stderr: bool) -> TerminalSink {
        self.colour = (stdout, stderr);
        self
    }

    fn write(w: &Mutex<Writer>, colour: bool, s: &str) {
        let plain;
        let s = if colour {
            s
        } else {
            plain = strip_ansi(s);
            &plain
        };
        if let Ok(mut w) = w.lock() {
            // A closed stdout (a pipe to `head`) must not kill the script.
            let _ = w.write_all(s.as_bytes());
            let _ = w.flush();
        }
    }

    fn out(&self, s: &str) {
        Self::write(&self.stdout, self.colour.0, s);
    }

    fn err(&self, s: &str) {
        Self::write(&self.stderr, self.colour.1, s);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::plain;
    use std::sync::Arc;

    /// A writer whose bytes the test reads back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::ErrorKind::Other)?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().map(|v| v.clone()).unwrap_or_default())
                .unwrap_or_default()
        }
    }

    #[test]
    fn updated_displays_redraw_one_line_and_images_become_notes() {
        let (out, err) = (Shared::default(), Shared::default());
        let sink = TerminalSink::new(Box::new(out.clone()), Box::new(err.clone()));
        let id = "bar".to_string();
        sink.emit(Output::DisplayData {
            data: plain("1/3 ━━━"),
            metadata: Default::default(),
            display_id: Some(id.clone()),
        });
        sink.emit(Output::UpdateDisplayData {
            data: plain("2/3 ━"),
            metadata: Default::default(),
            display_id: id.clone(),
        });
        sink.emit(Output::UpdateDisplayData {
            data: plain("3/3 done"),
            metadata: Default::default(),
            display_id: id,
        });
        sink.emit(Output::Stream {
            name: StreamName::Stdout,
            text: "next\n".into(),
        });
        let mut fig = plain("<Figure size 640x480 with 1 Axes>");
        fig.insert(
            "image/png".into(),
            serde_json::Value::String("iVBOR".into()),
        );
        sink.emit(Output::DisplayData {
            data: fig,
            metadata: Default::default(),
            display_id: None,
        });
        sink.emit(Output::ExecuteResult {
            execution_count: 1,
            data: plain("42"),
            metadata: Default::default(),
        });
        sink.finish();
        // The shorter second frame is padded over the first; the line ends before `next`.
        assert_eq!(out.text(), "1/3 ━━━\r2/3 ━  \r3/3 done\nnext\n");
        assert!(err
            .text()
            .contains("<Figure size 640x480 with 1 Axes> is not shown in a terminal"));
    }

    #[test]
    fn colour_codes_reach_a_stream_only_when_asked() {
        let error = || {
            Output::Error(crate::cell::ErrorInfo {
                ename: "ValueError".into(),
                evalue: "bad".into(),
                traceback: vec!["\x1b[0;31mValueError\x1b[0m: bad".into()],
            })
        };
        let err = Shared::default();
        let sink = TerminalSink::new(Box::new(Shared::default()), Box::new(err.clone()));
        sink.emit(error());
        assert_eq!(err.text(), "ValueError: bad\n");
        let err = Shared::default();
        let sink = TerminalSink::new(Box::new(Shared::default()), Box::new(err.clone()))
            .with_colour(false, true);
        sink.emit(error());
        assert_eq!(err.text(), "\x1b[0;31mValueError\x1b[0m: bad\n");
        assert_eq!(strip_ansi("a\x1b[1;32mb\x1b[0mc\x1b7d"), "abcd");
        assert!(!colour_wanted(false));
    }
}
