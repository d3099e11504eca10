//! The Jupyter wire protocol (5.3): connection files, multipart frames, HMAC-SHA256
//! signing, typed messages, and the shell, control, stdin, iopub and heartbeat sockets.
//! The only module that knows ZeroMQ or message JSON; it drives a [`Session`] and never
//! imports the language or the engine.
//!
//! Files: [`connection`] reads the connection file, [`sign`] signs and verifies, [`wire`]
//! turns frames into a [`Message`] and back, [`message`] builds replies from their request,
//! [`content`] types every body the kernel reads or writes, [`sockets`] owns the ZeroMQ
//! tasks, [`dispatch`] routes requests by message type to their handlers, [`execute`] runs
//! cells in order, [`history`] answers history requests, [`sink`] turns cell output into
//! iopub messages, [`kernelspec`] installs the kernel for Jupyter, [`parent`]
//! ends the kernel when the process that launched it dies.
//!
//! [`Session`]: crate::session::Session

pub mod connection;
pub mod content;
pub mod dispatch;
pub mod execute;
pub mod history;
pub mod kernelspec;
pub mod message;
pub mod parent;
pub mod sign;
pub mod sink;
pub mod sockets;
pub mod wire;

pub use connection::{ConnectionInfo, Transport};
pub use message::{Header, Message, Parent};
pub use sign::Signer;
pub use sockets::run_kernel;

/// Logs to stderr, where Jupyter shows kernel logs; never to a cell. A line names what a
/// client sent (a message type, a parse error), so it is cut short: a client must not be
/// able to fill the log with megabytes per message.
pub fn log(what: impl std::fmt::Display) {
    const MAX_CHARS: usize = 300;
    let text = what.to_string();
    match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => eprintln!("[mirror-kernel] {}... ({} bytes)", &text[..cut], text.len()),
        None => eprintln!("[mirror-kernel] {text}"),
    }
}

/// Everything that can go wrong while speaking the protocol. None of these reaches a user
/// cell: a bad message is logged and dropped, a bad connection file stops the kernel.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("connection file: {0}")]
    Connection(String),
    #[error("message signature is missing or wrong")]
    BadSignature,
    #[error("malformed message: {0}")]
    Frames(String),
    #[error("ZeroMQ: {0}")]
    Zmq(#[from] zeromq::ZmqError),
    #[error("kernelspec: {0}")]
    Kernelspec(String),
}
