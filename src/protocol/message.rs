//! Typed Jupyter messages. A reply or an iopub message is always built from the request it
//! answers ([`Parent::child`]), so its parent header and routing identities cannot be left
//! out by mistake.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The protocol version this kernel speaks.
pub const PROTOCOL_VERSION: &str = "5.3";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub msg_id: String,
    #[serde(default)]
    pub session: String,
    #[serde(default)]
    pub username: String,
    #[serde(default)]
    pub date: String,
    pub msg_type: String,
    #[serde(default)]
    pub version: String,
}

impl Header {
    pub fn new(session: &str, msg_type: &str) -> Header {
        Header {
            msg_id: uuid::Uuid::new_v4().to_string(),
            session: session.to_string(),
            username: "kernel".into(),
            date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            msg_type: msg_type.to_string(),
            version: PROTOCOL_VERSION.into(),
        }
    }
}

/// One message as it travels: routing identities, the four JSON parts, binary buffers.
/// The parent header is kept as raw JSON so fields this kernel does not know survive the
/// round trip to the client.
#[derive(Debug, Clone)]
pub struct Message {
    pub identities: Vec<Vec<u8>>,
    pub header: Header,
    pub parent_header: Value,
    pub metadata: Map<String, Value>,
    pub content: Value,
    pub buffers: Vec<Vec<u8>>,
}

impl Message {
    pub fn msg_type(&self) -> &str {
        &self.header.msg_type
    }

    /// A reference to this message for building what answers it.
    pub fn parent(&self) -> Parent {
        Parent {
            identities: self.identities.clone(),
            header: serde_json::to_value(&self.header).unwrap_or(Value::Null),
            session: self.header.session.clone(),
        }
    }

    /// Reads the content as a typed request body; missing optional fields take defaults.
    pub fn content_as<T: for<'de> Deserialize<'de>>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_value(self.content.clone())
    }
}

/// The request a message answers: its routing identities and its header.
#[derive(Debug, Clone)]
pub struct Parent {
    pub identities: Vec<Vec<u8>>,
    pub header: Value,
    /// The client's session id, kept for logging.
    pub session: String,
}

impl Parent {
    /// A parent for messages that answer nothing (the kernel's first `starting` status).
    pub fn none() -> Parent {
        Parent {
            identities: vec![],
            header: Value::Object(Map::new()),
            session: String::new(),
        }
    }

    /// A message of `msg_type` from this kernel session answering this parent, routed to
    /// the same client (identities) on shell, control and stdin.
    pub fn child(&self, kernel_session: &str, msg_type: &str, content: Value) -> Message {
        Message {
            identities: self.identities.clone(),
            header: Header::new(kernel_session, msg_type),
            parent_header: self.header.clone(),
            metadata: Map::new(),
            content,
            buffers: vec![],
        }
    }

    /// The same, addressed to iopub: the identity frame is the topic, as ipykernel names it.
    pub fn broadcast(&self, kernel_session: &str, msg_type: &str, content: Value) -> Message {
        let mut m = self.child(kernel_session, msg_type, content);
        m.identities = vec![format!("kernel.{kernel_session}.{msg_type}").into_bytes()];
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_carries_its_parent_header_and_route() {
        let req = Message {
            identities: vec![b"client-1".to_vec()],
            header: Header::new("client-session", "execute_request"),
            parent_header: Value::Object(Map::new()),
            metadata: Map::new(),
            content: serde_json::json!({"code": "1"}),
            buffers: vec![],
        };
        let reply = req
            .parent()
            .child("k", "execute_reply", serde_json::json!({}));
        assert_eq!(reply.identities, req.identities);
        assert_eq!(reply.parent_header["msg_id"], req.header.msg_id.as_str());
        assert_eq!(reply.header.msg_type, "execute_reply");
        assert_eq!(reply.header.session, "k");
        assert_ne!(reply.header.msg_id, req.header.msg_id);
    }
}
