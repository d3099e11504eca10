//! Multipart wire frames: `[identities..., "<IDS|MSG>", signature, header, parent_header,
//! metadata, content, buffers...]`. Parsing checks the signature before reading any JSON,
//! so an unsigned or forged message is never interpreted.

use serde_json::{Map, Value};

use super::message::{Header, Message};
use super::sign::Signer;
use super::ProtocolError;

pub const DELIMITER: &[u8] = b"<IDS|MSG>";

/// Parses the frames of one received message, checking its signature.
pub fn parse(frames: Vec<Vec<u8>>, signer: &Signer) -> Result<Message, ProtocolError> {
    let split = frames
        .iter()
        .position(|f| f.as_slice() == DELIMITER)
        .ok_or_else(|| ProtocolError::Frames("no <IDS|MSG> delimiter".into()))?;
    let mut rest = frames.into_iter();
    let identities: Vec<Vec<u8>> = rest.by_ref().take(split).collect();
    rest.next(); // the delimiter itself
    let mut next = |what: &str| {
        rest.next()
            .ok_or_else(|| ProtocolError::Frames(format!("missing {what} frame")))
    };
    let signature = next("signature")?;
    let header = next("header")?;
    let parent = next("parent_header")?;
    let metadata = next("metadata")?;
    let content = next("content")?;
    if !signer.verify(&signature, &[&header, &parent, &metadata, &content]) {
        return Err(ProtocolError::BadSignature);
    }
    let header: Header = serde_json::from_slice(&header)?;
    let parent_header: Value = serde_json::from_slice(&parent)?;
    let metadata: Map<String, Value> = match serde_json::from_slice(&metadata)? {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let content: Value = serde_json::from_slice(&content)?;
    Ok(Message {
        identities,
        header,
        parent_header,
        metadata,
        content,
        buffers: rest.collect(),
    })
}

/// Serializes and signs a message into its frames.
pub fn serialize(msg: &Message, signer: &Signer) -> Result<Vec<Vec<u8>>, ProtocolError> {
    let header = serde_json::to_vec(&msg.header)?;
    let parent = serde_json::to_vec(&msg.parent_header)?;
    let metadata = serde_json::to_vec(&msg.metadata)?;
    let content = serde_json::to_vec(&msg.content)?;
    let signature = signer.sign(&[&header, &parent, &metadata, &content]);
    let mut frames = Vec::with_capacity(msg.identities.len() + 6 + msg.buffers.len());
    frames.extend(msg.identities.iter().cloned());
    frames.push(DELIMITER.to_vec());
    frames.push(signature.into_bytes());
    frames.extend([header, parent, metadata, content]);
    frames.extend(msg.buffers.iter().cloned());
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::message::Parent;

    fn sample() -> Message {
        let mut m = Parent::none().child("s", "kernel_info_request", serde_json::json!({}));
        m.identities = vec![b"id-a".to_vec(), b"id-b".to_vec()];
        m.buffers = vec![b"\x00\x01".to_vec()];
        m
    }

    #[test]
    fn frames_round_trip_with_identities_and_buffers() {
        let signer = Signer::new("secret");
        let frames = serialize(&sample(), &signer).unwrap();
        assert_eq!(frames[2], DELIMITER);
        assert_eq!(frames[3].len(), 64);
        let back = parse(frames, &signer).unwrap();
        assert_eq!(back.identities, vec![b"id-a".to_vec(), b"id-b".to_vec()]);
        assert_eq!(back.msg_type(), "kernel_info_request");
        assert_eq!(back.buffers, vec![b"\x00\x01".to_vec()]);
    }

    #[test]
    fn tampered_or_unsigned_messages_are_refused() {
        let signer = Signer::new("secret");
        let mut frames = serialize(&sample(), &signer).unwrap();
        let content = frames.len() - 2;
        frames[content] = br#"{"code": "evil"}"#.to_vec();
        assert!(matches!(
            parse(frames, &signer),
            Err(ProtocolError::BadSignature)
        ));
        let unsigned = serialize(&sample(), &Signer::new("")).unwrap();
        assert!(matches!(
            parse(unsigned, &signer),
            Err(ProtocolError::BadSignature)
        ));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let signer = Signer::new("");
        assert!(parse(vec![b"junk".to_vec()], &signer).is_err());
        assert!(parse(vec![DELIMITER.to_vec(), b"".to_vec()], &signer).is_err());
        let frames = vec![
            DELIMITER.to_vec(),
            vec![],
            b"{".to_vec(),
            b"{}".to_vec(),
            b"{}".to_vec(),
            b"{}".to_vec(),
        ];
        assert!(parse(frames, &signer).is_err());
    }
}
