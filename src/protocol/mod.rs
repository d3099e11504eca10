//! The Jupyter wire protocol (5.3): connection files, multipart frames, HMAC-SHA256
//! signing, typed messages, and the shell, control, stdin, iopub and heartbeat sockets.
//! The only module that knows ZeroMQ or message JSON; it drives a [`Session`] and never
//! imports the language or the engine.
//!
//! [`Session`]: crate::session::Session
