//! numpy's `.npy` format, written: version 1.0, little-endian, C order, the header padded
//! so the data start on a 64-byte boundary, as `np.save` writes it. (Reading is
//! `keras::datasets::parse_npy`, which the Keras dataset loaders share.)

use super::{DType, NdArray};

/// The `descr` numpy writes for a dtype.
fn descr(dt: DType) -> &'static str {
    match dt {
        DType::Bool => "|b1",
        DType::U8 => "|u1",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
    }
}

/// The bytes of `np.save(file, a)`.
pub fn to_npy(a: &NdArray) -> Vec<u8> {
    let shape = match a.shape() {
        [d] => format!("({d},)"),
        s => format!(
            "({})",
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        descr(a.dtype())
    );
    // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
    let used = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - used % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + a.size() * a.dtype().itemsize());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for s in a.scalars() {
        use super::Scalar::*;
        match s {
            Bool(b) => out.push(b as u8),
            U8(v) => out.push(v),
            I32(v) => out.extend_from_slice(&v.to_le_bytes()),
            I64(v) => out.extend_from_slice(&v.to_le_bytes()),
            F32(v) => out.extend_from_slice(&v.to_le_bytes()),
            F64(v) => out.extend_from_slice(&v.to_le_bytes()),
        }
    }
    out
}
