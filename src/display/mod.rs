//! What the user sees beyond plain text: MIME bundles, Keras-style progress bars, summary
//! tables, and plots rendered to PNG and SVG (TensorBoard's scalars among them). Pure formatting: it computes nothing and
//! knows neither the protocol nor the language.

pub mod plot;
pub mod progress;
pub mod summary;
pub mod tensorboard;

pub use plot::{Figure, PlotError};
pub use progress::{epoch_header, Mode, ProgressBar, Rendered};
pub use summary::{Summary, SummaryRow};

/// A MIME bundle, as `display_data` carries it: `{"text/plain": "...", "image/png": "..."}`.
pub type MimeBundle = serde_json::Map<String, serde_json::Value>;

/// A bundle holding only `text/plain`.
pub fn plain(text: impl Into<String>) -> MimeBundle {
    let mut b = MimeBundle::new();
    b.insert("text/plain".into(), serde_json::Value::String(text.into()));
    b
}

/// Escapes text for inclusion in HTML element content or a quoted attribute.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}
