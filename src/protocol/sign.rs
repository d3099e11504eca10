//! HMAC-SHA256 message signing. The signature covers the four JSON frames (header,
//! parent header, metadata, content) in order, hex-encoded; an empty key turns signing off.
//! Verification compares the exact lower-case hex text, as ipykernel does, in constant time
//! so a client cannot learn the digest byte by byte.

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Signs and verifies with the connection file's key.
#[derive(Clone)]
pub struct Signer {
    key: Option<Vec<u8>>,
}

impl Signer {
    pub fn new(key: &str) -> Signer {
        Signer {
            key: (!key.is_empty()).then(|| key.as_bytes().to_vec()),
        }
    }

    fn mac(&self, parts: &[&[u8]]) -> Option<HmacSha256> {
        let key = self.key.as_ref()?;
        // HMAC accepts keys of any length, so this cannot fail.
        let mut mac = HmacSha256::new_from_slice(key).ok()?;
        for p in parts {
            mac.update(p);
        }
        Some(mac)
    }

    /// The hex signature of the parts, or "" when signing is off.
    pub fn sign(&self, parts: &[&[u8]]) -> String {
        match self.mac(parts) {
            Some(mac) => hex(&mac.finalize().into_bytes()),
            None => String::new(),
        }
    }

    /// Whether `signature` is exactly the lower-case hex digest of `parts`, as ipykernel
    /// compares it; always true without a key. The comparison takes the same time wherever
    /// the first difference is, so a client cannot find the digest a byte at a time.
    pub fn verify(&self, signature: &[u8], parts: &[&[u8]]) -> bool {
        let Some(mac) = self.mac(parts) else {
            return true;
        };
        let expected = hex(&mac.finalize().into_bytes());
        same_bytes(expected.as_bytes(), signature)
    }
}

/// Constant-time equality: every byte is compared whatever the earlier ones were. The
/// length is not secret (a digest is always 64 hex digits).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_rfc_4231_vector() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let s = Signer::new("Jefe");
        let sig = s.sign(&[b"what do ya want ", b"for nothing?"]);
        assert_eq!(
            sig,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(s.verify(sig.as_bytes(), &[b"what do ya want for nothing?"]));
        assert!(!s.verify(sig.as_bytes(), &[b"what do ya want for nothing!"]));
        assert!(!s.verify(b"zz", &[b"what do ya want for nothing?"]));
        assert!(!s.verify(b"", &[b"what do ya want for nothing?"]));
    }

    #[test]
    fn only_the_exact_lower_case_digest_is_accepted() {
        let s = Signer::new("Jefe");
        let parts: [&[u8]; 1] = [b"what do ya want for nothing?"];
        let sig = s.sign(&parts);
        assert!(s.verify(sig.as_bytes(), &parts));
        // ipykernel compares the hex text itself: upper case, spaces or a prefix fail.
        assert!(!s.verify(sig.to_uppercase().as_bytes(), &parts));
        assert!(!s.verify(format!("{sig} ").as_bytes(), &parts));
        assert!(!s.verify(&sig.as_bytes()[..63], &parts));
        let mut flipped = sig.clone().into_bytes();
        flipped[63] = if flipped[63] == b'0' { b'1' } else { b'0' };
        assert!(!s.verify(&flipped, &parts));
    }

    #[test]
    fn empty_key_signs_nothing_and_accepts_all() {
        let s = Signer::new("");
        assert_eq!(s.sign(&[b"x"]), "");
        assert!(s.verify(b"anything", &[b"x"]));
    }
}
