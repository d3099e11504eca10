//! TensorBoard's event files, written and read: TFRecord framing (length, masked CRC32C of
//! the length, the record, masked CRC32C of the record) around `tensorflow.Event`
//! protobufs, encoded by hand for the few fields used. Scalars are written as TensorFlow 2
//! writes `tf.summary.scalar` (a float32 scalar `tensor` with `tensor_content`, tagged with
//! the `scalars` plugin) so TensorBoard reads them as its own; the reader accepts that form
//! and the older `simple_value`. This file owns the byte format only: which scalars to log
//! and where is the TensorBoard callback's business.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TFRecord files.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0x82F6_3B78 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

pub fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc = CRC_TABLE[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// TFRecord's masking of a CRC, so a CRC of bytes holding CRCs stays well distributed.
pub fn masked_crc(data: &[u8]) -> u32 {
    let c = crc32c(data);
    (c.rotate_right(15)).wrapping_add(0xa282_ead8)
}

/// One TFRecord: the framing around `data`.
pub fn record(data: &[u8]) -> Vec<u8> {
    let len = (data.len() as u64).to_le_bytes();
    let mut out = Vec::with_capacity(data.len() + 16);
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc(&len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc(data).to_le_bytes());
    out
}

/// The records of a TFRecord file; a record whose length or CRC does not check ends the
/// list (a file still being written ends mid-record).
pub fn records(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = vec![];
    let mut at = 0;
    while let Some(head) = bytes.get(at..at + 12) {
        let (len_bytes, crc) = head.split_at(8);
        let mut l = [0u8; 8];
        l.copy_from_slice(len_bytes);
        let mut c = [0u8; 4];
        c.copy_from_slice(crc);
        if masked_crc(&l) != u32::from_le_bytes(c) {
            break;
        }
        let Ok(len) = usize::try_from(u64::from_le_bytes(l)) else {
            break;
        };
        let start = at + 12;
        let (Some(data), Some(crc)) = (
            bytes.get(start..start + len),
            bytes.get(start + len..start + len + 4),
        ) else {
            break;
        };
        let mut c = [0u8; 4];
        c.copy_from_slice(crc);
        if masked_crc(data) != u32::from_le_bytes(c) {
            break;
        }
        out.push(data);
        at = start + len + 4;
    }
    out
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field) << 3 | u64::from(wire));
}

fn bytes_field(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    key(out, field, 2);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// A `tensorflow.Event` at `wall_time` and `step` holding `summary` (already encoded) or,
/// for the first record of a file, `file_version`.
fn event(wall_time: f64, step: i64, body: EventBody) -> Vec<u8> {
    let mut out = vec![];
    key(&mut out, 1, 1);
    out.extend_from_slice(&wall_time.to_le_bytes());
    if step != 0 {
        key(&mut out, 2, 0);
        varint(&mut out, step as u64);
    }
    match body {
        EventBody::FileVersion => {
            bytes_field(&mut out, 3, b"brain.Event:2");
            let mut source = vec![];
            bytes_field(&mut source, 1, b"tensorflow.core.util.events_writer");
            bytes_field(&mut out, 10, &source);
        }
        EventBody::Summary(s) => bytes_field(&mut out, 5, &s),
    }
    out
}

enum EventBody {
    FileVersion,
    Summary(Vec<u8>),
}

/// A `Summary` with one scalar as `tf.summary.scalar` writes it in TensorFlow 2.
fn scalar_summary(tag: &str, value: f32) -> Vec<u8> {
    let mut tensor = vec![];
    key(&mut tensor, 1, 0);
    varint(&mut tensor, 1); // DT_FLOAT
    bytes_field(&mut tensor, 2, &[]); // a scalar's empty TensorShapeProto
    bytes_field(&mut tensor, 4, &value.to_le_bytes());
    let mut plugin = vec![];
    bytes_field(&mut plugin, 1, b"scalars");
    let mut metadata = vec![];
    bytes_field(&mut metadata, 1, &plugin);
    let mut v = vec![];
    bytes_field(&mut v, 1, tag.as_bytes());
    bytes_field(&mut v, 8, &tensor);
    bytes_field(&mut v, 9, &metadata);
    let mut summary = vec![];
    bytes_field(&mut summary, 1, &v);
    summary
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// An open event file in one run folder (`logs/train`), named as TensorFlow names them:
/// `events.out.tfevents.<seconds>.<host>.<pid>.<counter>.v2`.
pub struct EventWriter {
    pub path: PathBuf,
    file: BufWriter<File>,
}

impl EventWriter {
    /// Makes `dir` as needed and starts a file there with its version record.
    pub fn create(dir: &Path, counter: usize) -> std::io::Result<EventWriter> {
        std::fs::create_dir_all(dir)?;
        let wall = now();
        let host = hostname();
        let name = format!(
            "events.out.tfevents.{}.{host}.{}.{counter}.v2",
            wall.floor() as u64,
            std::process::id()
        );
        let path = dir.join(name);
        let mut w = EventWriter {
            file: BufWriter::new(File::create(&path)?),
            path,
        };
        w.write(&event(wall.floor(), 0, EventBody::FileVersion))?;
        Ok(w)
    }

    fn write(&mut self, event: &[u8]) -> std::io::Result<()> {
        self.file.write_all(&record(event))
    }

    pub fn scalar(&mut self, tag: &str, value: f64, step: i64) -> std::io::Result<()> {
        let summary = scalar_summary(tag, value as f32);
        self.write(&event(now(), step, EventBody::Summary(summary)))
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// The machine's name as TensorFlow puts it in event file names.
fn hostname() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_default();
    let name = name.trim();
    if name.is_empty() {
        "localhost".into()
    } else {
        name.into()
    }
}

/// One logged scalar read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    pub tag: String,
    pub step: i64,
    pub value: f64,
}

/// A protobuf field: number, and its varint, fixed or length-delimited payload.
enum Field<'a> {
    Varint(u64),
    Fixed64([u8; 8]),
    Fixed32([u8; 4]),
    Bytes(&'a [u8]),
}

fn read_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn fields(b: &[u8]) -> Vec<(u64, Field<'_>)> {
    let mut out = vec![];
    let mut at = 0;
    while at < b.len() {
        let Some(k) = read_varint(b, &mut at) else {
            break;
        };
        let f = match k & 7 {
            0 => match read_varint(b, &mut at) {
                Some(v) => Field::Varint(v),
                None => break,
            },
            1 => match b.get(at..at + 8) {
                Some(s) => {
                    at += 8;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(s);
                    Field::Fixed64(a)
                }
                None => break,
            },
            2 => {
                let Some(len) = read_varint(b, &mut at).and_then(|l| usize::try_from(l).ok())
                else {
                    break;
                };
                match b.get(at..at + len) {
                    Some(s) => {
                        at += len;
                        Field::Bytes(s)
                    }
                    None => break,
                }
            }
            5 => match b.get(at..at + 4) {
                Some(s) => {
                    at += 4;
                    let mut a = [0u8; 4];
                    a.copy_from_slice(s);
                    Field::Fixed32(a)
                }
                None => break,
            },
            _ => break,
        };
        out.push((k >> 3, f));
    }
    out
}

/// The value of a scalar tensor (float32 or float64, in `tensor_content` or the repeated
/// value field).
fn tensor_value(t: &[u8]) -> Option<f64> {
    let mut dtype = 0;
    let mut content = None;
    let mut float_val = None;
    let mut double_val = None;
    for (n, f) in fields(t) {
        match (n, f) {
            (1, Field::Varint(d)) => dtype = d,
            (4, Field::Bytes(c)) => content = Some(c),
            (5, Field::Bytes(p)) if p.len() >= 4 => {
                float_val = Some(f64::from(f32::from_le_bytes([p[0], p[1], p[2], p[3]])))
            }
            (5, Field::Fixed32(a)) => float_val = Some(f64::from(f32::from_le_bytes(a))),
            (6, Field::Bytes(p)) if p.len() >= 8 => {
                let mut a = [0u8; 8];
                a.copy_from_slice(&p[..8]);
                double_val = Some(f64::from_le_bytes(a));
            }
            (6, Field::Fixed64(a)) => double_val = Some(f64::from_le_bytes(a)),
            _ => {}
        }
    }
    match (dtype, content) {
        (1, Some(c)) if c.len() == 4 => {
            Some(f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        }
        (2, Some(c)) if c.len() == 8 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            Some(f64::from_le_bytes(a))
        }
        _ => float_val.or(double_val),
    }
}

/// Every scalar in an event file's bytes, in the order written.
pub fn read_scalars(bytes: &[u8]) -> Vec<Scalar> {
    let mut out = vec![];
    for rec in records(bytes) {
        let mut step = 0i64;
        let mut summary = None;
        for (n, f) in fields(rec) {
            match (n, f) {
                (2, Field::Varint(s)) => step = s as i64,
                (5, Field::Bytes(s)) => summary = Some(s),
                _ => {}
            }
        }
        let Some(summary) = summary else { continue };
        for (n, f) in fields(summary) {
            let (1, Field::Bytes(v)) = (n, f) else {
                continue;
            };
            let mut tag = String::new();
            let mut value = None;
            for (n, f) in fields(v) {
                match (n, f) {
                    (1, Field::Bytes(t)) => tag = String::from_utf8_lossy(t).into_owned(),
                    (2, Field::Fixed32(a)) => value = Some(f64::from(f32::from_le_bytes(a))),
                    (8, Field::Bytes(t)) => value = value.or(tensor_value(t)),
                    _ => {}
                }
            }
            if let Some(value) = value {
                out.push(Scalar { tag, step, value });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_the_standard_check_value() {
        // The check value of CRC-32C (RFC 3720, iSCSI) for "123456789".
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
    }

    #[test]
    fn a_scalar_event_is_encoded_as_tensorflow_encodes_it() {
        // The bytes TensorFlow 2.21 wrote for `tf.summary.scalar("epoch_loss", v, step=1)`
        // (Keras's TensorBoard callback), after the 8-byte wall time.
        let tf = "10012a270a250a0a65706f63685f6c6f7373420a080112002204\
                  4de5933e4a0b0a090a077363616c617273";
        let value = f32::from_le_bytes([0x4d, 0xe5, 0x93, 0x3e]);
        let ours = event(
            1.5,
            1,
            EventBody::Summary(scalar_summary("epoch_loss", f64::from(value) as f32)),
        );
        let hex: String = ours[9..].iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, tf);
        let back = read_scalars(&record(&ours));
        assert_eq!(
            back,
            vec![Scalar {
                tag: "epoch_loss".into(),
                step: 1,
                value: f64::from(value)
            }]
        );
    }

    #[test]
    fn a_damaged_record_ends_the_reading() {
        let mut bytes = record(&event(1.0, 2, EventBody::Summary(scalar_summary("a", 1.0))));
        bytes.extend(record(&event(
            1.0,
            3,
            EventBody::Summary(scalar_summary("b", 2.0)),
        )));
        assert_eq!(read_scalars(&bytes).len(), 2);
        let last = bytes.len() - 6;
        bytes[last] ^= 1;
        assert_eq!(read_scalars(&bytes).len(), 1);
    }
}
