//! The rendezvous of worker processes: a tiny key-value store that Gloo's context uses once,
//! at start-up, to exchange its ranks' transport addresses (Gloo's `rendezvous::Store`). The
//! chief serves it on the `host:port` `TF_CONFIG` gives it ([`StoreServer`]); every worker,
//! the chief included, talks to it as a [`TcpStore`] client. Requests are one line each, keys
//! and values in hex: `S key value` stores, `G key` answers `+value` or `-` when it is not
//! set yet. The all-reduce itself never passes through here.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What Gloo's rendezvous needs from a store.
pub trait Store: Send + Sync {
    fn set(&self, key: &str, value: &[u8]) -> io::Result<()>;
    /// The value of `key`, or `None` while no rank has set it.
    fn get(&self, key: &str) -> io::Result<Option<Vec<u8>>>;
    /// Returns once every key is set, or `TimedOut` after `timeout`.
    fn wait(&self, keys: &[String], timeout: Duration) -> io::Result<()> {
        let deadline = Instant::now() + timeout;
        for key in keys {
            while self.get(key)?.is_none() {
                if Instant::now() >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no worker set {key:?} within {} s", timeout.as_secs()),
                    ));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        Ok(())
    }
}

/// A store in this process's memory: for ranks that are threads of one process (tests).
#[derive(Default)]
pub struct LocalStore(Mutex<HashMap<String, Vec<u8>>>);

impl Store for LocalStore {
    fn set(&self, key: &str, value: &[u8]) -> io::Result<()> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.insert(key.to_string(), value.to_vec());
        Ok(())
    }
    fn get(&self, key: &str) -> io::Result<Option<Vec<u8>>> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        Ok(map.get(key).cloned())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> io::Result<Vec<u8>> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "rendezvous: malformed hex");
    if !text.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            text.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(bad)
        })
        .collect()
}

/// The chief's store: a listener on its own address, one thread per connected worker.
pub struct StoreServer {
    address: String,
}

impl StoreServer {
    /// Listens on `address` (the chief's `host:port`) and serves until the process ends.
    pub fn start(address: &str) -> io::Result<StoreServer> {
        let listener = TcpListener::bind(address).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("the chief could not listen on {address}: {e}"),
            )
        })?;
        let map: Arc<Mutex<HashMap<String, Vec<u8>>>> = Arc::default();
        std::thread::Builder::new()
            .name("rendezvous".into())
            .spawn(move || {
                for conn in listener.incoming().flatten() {
                    let map = map.clone();
                    let _ = std::thread::Builder::new()
                        .name("rendezvous-peer".into())
                        .spawn(move || serve(conn, &map));
                }
            })?;
        Ok(StoreServer {
            address: address.to_string(),
        })
    }

    pub fn address(&self) -> &str {
        &self.address
    }
}

/// Answers one connection's requests until it closes or sends a malformed line.
fn serve(conn: TcpStream, map: &Mutex<HashMap<String, Vec<u8>>>) {
    let Ok(write_half) = conn.try_clone() else {
        return;
    };
    let mut out = write_half;
    for line in BufReader::new(conn).lines() {
        let Ok(line) = line else { return };
        let mut parts = line.split(' ');
        let reply = match (parts.next(), parts.next(), parts.next()) {
            (Some("S"), Some(k), Some(v)) => match (unhex(k), unhex(v)) {
                (Ok(k), Ok(v)) => {
                    let key = String::from_utf8_lossy(&k).into_owned();
                    map.lock().unwrap_or_else(|e| e.into_inner()).insert(key, v);
                    "+".to_string()
                }
                _ => return,
            },
            (Some("G"), Some(k), None) => match unhex(k) {
                Ok(k) => {
                    let key = String::from_utf8_lossy(&k).into_owned();
                    match map.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
                        Some(v) => format!("+{}", hex(v)),
                        None => "-".to_string(),
                    }
                }
                Err(_) => return,
            },
            _ => return,
        };
        if writeln!(out, "{reply}").is_err() {
            return;
        }
    }
}

/// A worker's connection to the chief's store.
pub struct TcpStore {
    conn: Mutex<(BufReader<TcpStream>, TcpStream)>,
}

impl TcpStore {
    /// Connects to the chief's store at `address`, retrying until `timeout` passes (the
    /// chief may start after the others); then `TimedOut` naming the address.
    pub fn connect(address: &str, timeout: Duration) -> io::Result<TcpStore> {
        let deadline = Instant::now() + timeout;
        loop {
            let attempt = address
                .to_socket_addrs()
                .and_then(|mut addrs| {
                    addrs.next().ok_or_else(|| {
                        io::Error::new(io::ErrorKind::NotFound, "the address resolves to nothing")
                    })
                })
                .and_then(|a| TcpStream::connect_timeout(&a, Duration::from_secs(2)));
            match attempt {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    stream.set_read_timeout(Some(timeout))?;
                    let reader = BufReader::new(stream.try_clone()?);
                    return Ok(TcpStore {
                        conn: Mutex::new((reader, stream)),
                    });
                }
                Err(e) if Instant::now() >= deadline => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "the chief at {address} did not answer within {} s ({e})",
                            timeout.as_secs()
                        ),
                    ))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    fn request(&self, line: &str) -> io::Result<String> {
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        writeln!(conn.1, "{line}")?;
        let mut reply = String::new();
        if conn.0.read_line(&mut reply)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the chief's rendezvous closed the connection",
            ));
        }
        Ok(reply.trim_end().to_string())
    }
}

impl Store for TcpStore {
    fn set(&self, key: &str, value: &[u8]) -> io::Result<()> {
        match self
            .request(&format!("S {} {}", hex(key.as_bytes()), hex(value)))?
            .as_str()
        {
            "+" => Ok(()),
            other => Err(io::Error::other(format!(
                "rendezvous: unexpected reply {other:?}"
            ))),
        }
    }
    fn get(&self, key: &str) -> io::Result<Option<Vec<u8>>> {
        let reply = self.request(&format!("G {}", hex(key.as_bytes())))?;
        match reply.strip_prefix('+') {
            Some(v) => unhex(v).map(Some),
            None if reply == "-" => Ok(None),
            None => Err(io::Error::other(format!(
                "rendezvous: unexpected reply {reply:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_see_what_each_other_set_through_the_chief() {
        let listener = TcpListener::bind("127.0.0.1:0").map(|l| l.local_addr());
        let Ok(Ok(addr)) = listener else {
            return;
        };
        let address = addr.to_string();
        let Ok(_server) = StoreServer::start(&address) else {
            return;
        };
        let a = TcpStore::connect(&address, Duration::from_secs(5));
        let b = TcpStore::connect(&address, Duration::from_secs(5));
        let (Ok(a), Ok(b)) = (a, b) else {
            panic!("could not connect to the store at {address}");
        };
        assert_eq!(b.get("rank0").ok(), Some(None));
        a.set("rank0", &[0, 1, 255, b' ']).ok();
        assert_eq!(b.get("rank0").ok(), Some(Some(vec![0, 1, 255, b' '])));
        let missing = b.wait(&["rank1".to_string()], Duration::from_millis(50));
        assert_eq!(missing.map_err(|e| e.kind()), Err(io::ErrorKind::TimedOut));
    }
}
