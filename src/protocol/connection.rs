//! The connection file Jupyter writes for a kernel: transport, address, the five ports,
//! the signing key and scheme. Parsing only; the sockets are bound in `sockets`.

use serde::Deserialize;

use super::ProtocolError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Tcp,
    Ipc,
}

/// The fields of a connection file that the kernel uses; others (kernel_name) are ignored.
#[derive(Debug, Clone, Deserialize)]
pub struct ConnectionInfo {
    #[serde(default = "default_transport")]
    pub transport: Transport,
    #[serde(default = "default_ip")]
    pub ip: String,
    pub shell_port: u16,
    pub iopub_port: u16,
    pub stdin_port: u16,
    pub control_port: u16,
    pub hb_port: u16,
    #[serde(default)]
    pub key: String,
    #[serde(default = "default_scheme")]
    pub signature_scheme: String,
}

fn default_transport() -> Transport {
    Transport::Tcp
}

fn default_ip() -> String {
    "127.0.0.1".into()
}

fn default_scheme() -> String {
    "hmac-sha256".into()
}

impl ConnectionInfo {
    /// Parses a connection file's text and checks that the kernel can honour it.
    pub fn parse(text: &str) -> Result<ConnectionInfo, ProtocolError> {
        let info: ConnectionInfo = serde_json::from_str(text)?;
        // An empty key means "do not sign", whatever scheme is named.
        if !info.key.is_empty() && info.signature_scheme != "hmac-sha256" {
            return Err(ProtocolError::Connection(format!(
                "unsupported signature_scheme {:?}; this kernel signs with hmac-sha256",
                info.signature_scheme
            )));
        }
        Ok(info)
    }

    pub fn read(path: &std::path::Path) -> Result<ConnectionInfo, ProtocolError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ProtocolError::Connection(format!("cannot read {}: {e}", path.display()))
        })?;
        Self::parse(&text)
    }

    /// The ZeroMQ endpoint for one of the ports, as Jupyter names it for each transport:
    /// `tcp://IP:PORT`, or `ipc://IP-PORT` where `ip` is a path prefix.
    pub fn endpoint(&self, port: u16) -> String {
        match self.transport {
            Transport::Tcp => {
                // "*" and "0.0.0.0" both mean every interface; IPv6 needs brackets.
                let ip = if self.ip.contains(':') && !self.ip.starts_with('[') {
                    format!("[{}]", self.ip)
                } else if self.ip == "*" {
                    "0.0.0.0".to_string()
                } else {
                    self.ip.clone()
                };
                format!("tcp://{ip}:{port}")
            }
            Transport::Ipc => format!("ipc://{}-{port}", self.ip),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{"shell_port": 5001, "iopub_port": 5002, "stdin_port": 5003,
        "control_port": 5004, "hb_port": 5005, "ip": "127.0.0.1", "key": "abc",
        "transport": "tcp", "signature_scheme": "hmac-sha256", "kernel_name": "mirror"}"#;

    #[test]
    fn parses_a_jupyter_connection_file() {
        let info = ConnectionInfo::parse(SAMPLE).unwrap();
        assert_eq!(info.transport, Transport::Tcp);
        assert_eq!(info.shell_port, 5001);
        assert_eq!(info.hb_port, 5005);
        assert_eq!(info.key, "abc");
        assert_eq!(info.endpoint(info.iopub_port), "tcp://127.0.0.1:5002");
    }

    #[test]
    fn ipc_endpoints_join_path_and_port() {
        let text = SAMPLE
            .replace("\"tcp\"", "\"ipc\"")
            .replace("127.0.0.1", "/tmp/kernel-x");
        let info = ConnectionInfo::parse(&text).unwrap();
        assert_eq!(info.endpoint(5003), "ipc:///tmp/kernel-x-5003");
    }

    #[test]
    fn rejects_other_schemes_and_missing_ports() {
        let text = SAMPLE.replace("hmac-sha256", "hmac-md5");
        assert!(ConnectionInfo::parse(&text).is_err());
        assert!(ConnectionInfo::parse(r#"{"ip": "127.0.0.1"}"#).is_err());
    }
}
