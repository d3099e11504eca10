//! What the user sees beyond plain text: MIME bundles, Keras-style progress bars, summary
//! tables, and plots rendered to PNG and SVG. Pure formatting: it computes nothing and
//! knows neither the protocol nor the language.

/// A MIME bundle, as `display_data` carries it: `{"text/plain": "...", "image/png": "..."}`.
pub type MimeBundle = serde_json::Map<String, serde_json::Value>;

/// A bundle holding only `text/plain`.
pub fn plain(text: impl Into<String>) -> MimeBundle {
    let mut b = MimeBundle::new();
    b.insert("text/plain".into(), serde_json::Value::String(text.into()));
    b
}
